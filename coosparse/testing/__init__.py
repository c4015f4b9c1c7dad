"""Test support shipped with the package: the emulated CUDA device (:mod:`.device`).

It stands for a GPU in the test suite and in ``scripts/gpu_check.sh --dry-run``:
arrays and a namespace with CuPy's API only, transfers counted. It knows
arrays, never a ``COO`` (it is the bottom layer with the kernels).
"""
