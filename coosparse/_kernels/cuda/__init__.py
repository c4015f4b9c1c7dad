"""The CUDA kernel layer, written once against an array namespace and a launcher.

- :mod:`.layer`: :class:`~.layer.CudaLayer`, the kernel API
  (``coosparse/_kernels/api.py``) over ``xp`` and ``launch(kernel, nthreads,
  args)``: one mixin of rows per family (``<family>.py``, launching the
  kernels of ``cuda_kernels/<family>.cu``) over :mod:`.base` (the helpers,
  and the conventions for new rows at its top).
- :mod:`.backend`: ``xp = cupy``, kernels compiled by NVRTC with our options and
  loaded by CuPy, one module per file and device.
- :mod:`.emulated`: the same ``.cu`` files compiled for the host by g++ through a
  shim header and called with ctypes, every launch checked against the
  kernel's C signature (CI's view of the GPU path), on the emulated device
  (:mod:`coosparse.testing.device`: ``xp`` and arrays with CuPy's API only,
  transfers counted); :mod:`.emulated_host`: the emulated layer over NumPy arrays.
- :mod:`.errors`: the kernels' per-device error word and ``check_device_errors``.
- :mod:`.sources`: the loader's program text, options and cache keys (shared
  with :mod:`.compile_check`, the NVRTC build that needs no GPU).
"""
