"""The CUDA kernel layer on a GPU: ``xp = cupy`` + kernels compiled by NVRTC (``cupy.RawModule``).

Each ``.cu`` file becomes one ``cupy.RawModule`` on first use of one of its
kernels, compiled from ``#line 1 "<file>"`` + its source with the file's
template instantiations of ``cuda_kernels.KERNELS`` as ``name_expressions``
(so every instantiation is compiled and checked, and fetched by its C++ name).
CuPy caches the compiled binaries on disk. Launches are 1-D grids of 256
threads on the current stream; nothing here synchronises except the lines
marked ``# synchronize!`` in :mod:`._layer`.
"""
from __future__ import annotations

import threading

import cupy

from .._kernel_api import KERNEL_API
from ..cuda_kernels import kernel_file
from . import _sources
from ._layer import CudaLayer

BLOCK = 256

_lock = threading.Lock()
_modules = {}  # (device id, file) -> RawModule
_functions = {}  # (device id, name expression) -> RawKernel


def module(fname):
    """The compiled RawModule of kernel file ``fname`` on the current device."""
    dev = cupy.cuda.runtime.getDevice()
    key = (dev, fname)
    mod = _modules.get(key)
    if mod is None:
        with _lock:
            mod = _modules.get(key)
            if mod is None:
                mod = cupy.RawModule(
                    code=_sources.program_source(fname),
                    options=tuple(_sources.nvrtc_options()),
                    name_expressions=_sources.name_expressions(fname),
                )
                mod.compile()
                _modules[key] = mod
    return mod


def function(expr):
    dev = cupy.cuda.runtime.getDevice()
    fn = _functions.get((dev, expr))
    if fn is None:
        fn = module(kernel_file(expr)).get_function(expr)
        _functions[(dev, expr)] = fn
    return fn


def launch(kernel, nthreads, args):
    """Queue ``kernel`` on ceil(nthreads / 256) blocks of 256 threads (asynchronous)."""
    grid = (nthreads + BLOCK - 1) // BLOCK
    function(kernel)((grid,), (BLOCK,), args)


def _stable_argsort(keys):
    # cupy.argsort is stable (thrust stable sort by key); it accepts no other kind
    return cupy.argsort(keys)


_layer = CudaLayer("cuda", cupy, launch, _stable_argsort, validate=False)
_layer.bind(globals(), KERNEL_API)
