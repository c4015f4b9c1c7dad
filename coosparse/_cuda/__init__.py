"""The CUDA kernel layer, written once against an array namespace and a launcher.

- :mod:`._layer`: the kernel API (``coosparse/_kernel_api.py``) over ``xp`` and
  ``launch(kernel, nthreads, args)``.
- :mod:`.backend`: ``xp = cupy``, kernels compiled by NVRTC (``cupy.RawModule``).
- :mod:`.emulated`: ``xp = numpy``, the same ``.cu`` files compiled for the host
  by g++ through a shim header and called with ctypes (CI's view of the GPU path).
- :mod:`._sources`: the loader shared by both (and by the compile test).
"""
