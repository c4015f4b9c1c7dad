"""Layer 0: the kernels, on plain arrays (they never see a ``COO``).

:mod:`.api` lists the kernel API by family; :mod:`.backend` maps arrays to the
layer that serves them (:mod:`.numba` on the CPU, :mod:`.cuda` on a GPU or on
the test suite's emulated device); :mod:`.bounds` is the contract on index
bounds and order flags that every layer keeps. Imports nothing of coosparse
above it; ``coosparse.cuda_kernels`` holds the CUDA sources and
``coosparse.testing`` the emulated device.
"""
