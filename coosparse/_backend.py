"""The one dispatch point from arrays to a kernel layer (ARCHITECTURE.md).

``backend_for(*arrays)`` returns a module implementing the kernel API listed in
``coosparse/_kernel_api.py``: ``coosparse._numba.backend`` for NumPy arrays,
the CUDA layer for CuPy arrays. Tests can route NumPy arrays through another
backend (the CUDA path compiled for the host) with :func:`use_cpu_backend`.
"""
from __future__ import annotations

import contextlib
import importlib
import sys

# name -> module path of a kernel layer serving NumPy arrays
_CPU_BACKENDS = {
    "numba": "coosparse._numba.backend",
    "cuda-emulated": "coosparse._cuda.emulated",
}
_GPU_BACKEND = "coosparse._cuda.backend"
_cpu_backend_name = "numba"


def device_of(a):
    """'cpu' for NumPy arrays, 'cuda:N' for CuPy arrays."""
    if type(a).__module__.startswith("cupy"):
        return f"cuda:{a.device.id}"
    return "cpu"


def backend_for(*arrays):
    """Kernel layer for ``arrays``; raises ValueError when they live on different devices."""
    devices = {device_of(a) for a in arrays if a is not None}
    if len(devices) > 1:
        raise ValueError(f"operands live on different devices: {sorted(devices)}; move them with .to()")
    if devices and next(iter(devices)).startswith("cuda"):
        return importlib.import_module(_GPU_BACKEND)
    threads = sys.modules.get("coosparse._numba.threads")
    if threads is not None and threads.fork_unsafe_layer:
        raise RuntimeError(
            "this process was forked after Numba's GNU OpenMP threading layer started, and "
            "OpenMP cannot run in a forked child; install the 'tbb' package (coosparse then uses "
            "Numba's fork-safe TBB layer), set NUMBA_THREADING_LAYER=tbb or workqueue, or start "
            "workers with the 'spawn' or 'forkserver' method"
        )
    return importlib.import_module(_CPU_BACKENDS[_cpu_backend_name])


@contextlib.contextmanager
def use_cpu_backend(name):
    """Route NumPy arrays through kernel layer ``name`` ('numba' or 'cuda-emulated')."""
    global _cpu_backend_name
    if name not in _CPU_BACKENDS:
        raise ValueError(f"unknown CPU backend {name!r}; choose from {sorted(_CPU_BACKENDS)}")
    old, _cpu_backend_name = _cpu_backend_name, name
    try:
        yield
    finally:
        _cpu_backend_name = old
