"""The one dispatch point from arrays to a kernel layer (ARCHITECTURE.md).

``backend_for(*arrays)`` returns a module implementing the kernel API listed in
``coosparse/_kernels/api.py``: ``coosparse._kernels.numba.layer`` for NumPy
arrays, the CUDA layer for CuPy arrays, the emulated CUDA layer for arrays of
the emulated device (``coosparse.testing.device``: the test suite's stand-in GPU).
Tests can also route NumPy arrays through another backend (the CUDA path
compiled for the host) with :func:`use_cpu_backend`.
"""
from __future__ import annotations

import contextlib
import importlib
import sys

import numpy as np

# Kernel layers are imported by name when first asked for: importing Numba (or CuPy) is the
# slow part of a first call, and `import coosparse` must not pay it.
# name -> module path of a kernel layer serving NumPy arrays
_CPU_BACKENDS = {
    "numba": "coosparse._kernels.numba.layer",
    # NumPy arrays through the emulated CUDA layer (uploaded per call): see coosparse/_kernels/cuda/emulated_host.py
    "cuda-emulated": "coosparse._kernels.cuda.emulated_host",
}
_EMULATED_BACKEND = "coosparse._kernels.cuda.emulated"  # arrays on the emulated device (coosparse.testing.device)
_GPU_BACKEND = "coosparse._kernels.cuda.backend"
_cpu_backend_name = "numba"


_EMULATED_MODULE = "coosparse.testing.device"  # the module of the emulated device's arrays
EMULATED_DEVICE = "cuda-emulated"  # coosparse.testing.device.DEVICE: the test suite's stand-in GPU


def _is_emulated(a):
    return type(a).__module__ == _EMULATED_MODULE


def is_device_array(a):
    """True for arrays on a CUDA device: CuPy arrays, and the emulated device's (tests)."""
    return type(a).__module__.startswith("cupy") or _is_emulated(a)


def is_device_array_type(t):
    """:func:`is_device_array` for a type (NumPy's protocols hand over the operands' types)."""
    return t.__module__.startswith("cupy") or t.__module__ == _EMULATED_MODULE


def array_namespace(a):
    """The array module of ``a``: numpy, cupy, or the emulated device's stand-in for cupy."""
    module = type(a).__module__
    if module.startswith("cupy"):
        return sys.modules["cupy"]  # a CuPy array exists, so CuPy is imported
    if module == _EMULATED_MODULE:
        return sys.modules[module].xp  # likewise the emulated device
    return np


def device_of(a):
    """'cpu' for NumPy arrays, 'cuda:N' for CuPy arrays ('cuda-emulated' for the test device)."""
    if type(a).__module__.startswith("cupy"):
        return f"cuda:{a.device.id}"
    if _is_emulated(a):
        return EMULATED_DEVICE
    return "cpu"


def writeable(x):
    """``x``, or a writeable view of it when ``x`` is a read-only NumPy view of writeable memory.

    A COO's parts are read-only views (the array is immutable). Numba compiles a
    separate specialisation of a kernel for read-only arrays, and torch warns on
    them, so the kernel layer and the bridges take writeable views of the same
    memory. Memory that is read-only itself (``np.frombuffer`` of bytes) stays as it is.
    """
    if isinstance(x, np.ndarray) and not x.flags.writeable:
        v = x.view()
        try:
            v.flags.writeable = True
        except ValueError:
            return x
        return v
    return x


BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.complex128}
"""A same-size type per item width to move a dtype's bits with (one element per element)."""


def bits_view(a):
    """``a`` (any strides: a view of the same item width needs none) as the same-size type of its
    itemsize: a kernel that only moves items then compiles once per width, not once per dtype."""
    return a.view(BITS[a.dtype.itemsize])


def read_only(x):
    """A read-only view of the NumPy array ``x`` (``x`` itself when it is read-only already): for
    kernels compiled for read-only input, which must also take memory that is read-only itself."""
    if not x.flags.writeable:
        return x
    v = x.view()
    v.flags.writeable = False
    return v


def backend_for(*arrays):
    """Kernel layer for ``arrays``; raises ValueError when they live on different devices."""
    for a in arrays:
        if a is not None and type(a) is not np.ndarray:
            break
    else:  # host arrays alone (most calls): no device to compare (8x faster than the sets below)
        return _layer(_CPU_BACKENDS[_cpu_backend_name])
    devices = {device_of(a) for a in arrays if a is not None}
    if len(devices) > 1:
        raise ValueError(f"operands live on different devices: {sorted(devices)}; move them with .to()")
    device = next(iter(devices)) if devices else "cpu"
    if device == EMULATED_DEVICE:
        return _layer(_EMULATED_BACKEND)
    if device.startswith("cuda"):
        return _layer(_GPU_BACKEND)
    return _layer(_CPU_BACKENDS[_cpu_backend_name])


_layers = {}


def _layer(name):
    """The kernel layer module ``name``, imported at its first use (Numba and CuPy load only when a
    kernel runs, keeping ``import coosparse`` light), then looked up here: ``import_module`` on every
    call went through the import system's lock and lookups."""
    layer = _layers.get(name)
    if layer is None:
        layer = _layers[name] = importlib.import_module(name)
    return layer


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
