"""The CUDA kernel layer on a GPU: ``xp = cupy`` + kernels compiled by NVRTC here, loaded by CuPy.

Each ``.cu`` file is compiled once per (device architecture, sources), on
first use of one of its kernels, by CuPy's own NVRTC binding with the one
option list of :func:`.sources.nvrtc_options` (IEEE float semantics:
``-ftz=false -fmad=false ...``), with the file's template instantiations of
``cuda_kernels.KERNELS`` as name expressions. Not through ``cupy.RawModule``,
which appends ``-ftz=true`` (float32 subnormals flushed: no bit-identity with
the CPU) and keys its cache on the program text only (a header edit would
reuse stale binaries). The binary (a cubin for the device's ``sm_XX``, PTX
where NVRTC does not know the architecture) and its lowered names are cached
under ``$COOSPARSE_CACHE_DIR/cuda`` by :func:`.sources.cache_key`, which
covers every source, header and the table, and loaded with
``cupy.cuda.function.Module``.

Launches are 1-D grids of 256 threads on the current stream of the device
that holds the arrays: every kernel-API function runs under
``cupy.cuda.Device(<its arrays' device>)`` (:func:`device_guard`), so outputs
are allocated and kernels queued where the inputs live. Nothing here
synchronises except the lines marked ``# synchronize!`` in :mod:`.base` and the family modules.
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading

import cupy

from ..api import KERNEL_API
from ...cuda_kernels import kernel_file
from . import sources
from .compile_check import CupyNVRTC, compile_file
from .layer import CudaLayer

BLOCK = 256

_lock = threading.Lock()
_modules = {}  # (device id, file) -> (cupy.cuda.function.Module, {name expression: lowered name})
_functions = {}  # (device id, name expression) -> cupy.cuda.function.Function
_compiler = None


def compiler():
    """CuPy's NVRTC behind the :mod:`.compile_check` interface (created once)."""
    global _compiler
    if _compiler is None:
        _compiler = CupyNVRTC()
    return _compiler


def target_arch(device_id, nvrtc=None):
    """``sm_XX`` of the device when NVRTC can build a cubin for it, else ``compute_XX`` (PTX, JIT by the driver)."""
    cc = cupy.cuda.Device(device_id).compute_capability  # e.g. '90'
    nvrtc = nvrtc or compiler()
    archs = nvrtc.supported_archs()
    return f"sm_{cc}" if archs is None or int(cc) in archs else f"compute_{cc}"


def build(fname, arch, nvrtc=None):
    """(binary, {name expression: lowered name}) of ``fname`` for ``arch``, from the disk cache or NVRTC."""
    nvrtc = nvrtc or compiler()
    key = sources.cache_key(fname, arch, nvrtc.version)
    root = os.path.join(sources.cache_dir(), "cuda")
    os.makedirs(root, exist_ok=True)
    path = os.path.join(root, f"{os.path.splitext(fname)[0]}-{arch}-{key}")
    try:
        with open(path + ".json", encoding="utf-8") as f:
            lowered = json.load(f)
        with open(path + ".bin", "rb") as f:
            binary = f.read()
        if set(lowered) == set(sources.name_expressions(fname)):
            return binary, lowered
    except (OSError, ValueError):
        pass
    binary, lowered = compile_file(nvrtc, fname, arch)
    for ext, data in ((".bin", binary), (".json", json.dumps(lowered).encode())):
        fd, tmp = tempfile.mkstemp(dir=root)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path + ext)  # atomic: concurrent builders agree
    return binary, lowered


def module(fname, device_id=None):
    """(loaded module, lowered names) of kernel file ``fname`` on ``device_id`` (default: the current device)."""
    dev = cupy.cuda.runtime.getDevice() if device_id is None else device_id
    key = (dev, fname)
    entry = _modules.get(key)
    if entry is None:
        with _lock:
            entry = _modules.get(key)
            if entry is None:
                binary, lowered = build(fname, target_arch(dev))
                with cupy.cuda.Device(dev):
                    mod = cupy.cuda.function.Module()
                    mod.load(binary)
                entry = _modules[key] = (mod, dict(lowered))
    return entry


def function(expr, device_id=None):
    """The loaded kernel ``expr`` (a KERNELS name expression) on ``device_id`` (default: current)."""
    dev = cupy.cuda.runtime.getDevice() if device_id is None else device_id
    fn = _functions.get((dev, expr))
    if fn is None:
        mod, lowered = module(kernel_file(expr), dev)
        fn = mod.get_function(lowered[expr])
        _functions[(dev, expr)] = fn
    return fn


def launch(kernel, nthreads, args):
    """Queue ``kernel`` on ceil(nthreads / 256) blocks of 256 threads of the current device (asynchronous)."""
    grid = (nthreads + BLOCK - 1) // BLOCK
    if grid > 2**31 - 1:
        raise ValueError(f"{kernel}: {nthreads} threads exceed CUDA's grid limit")
    function(kernel)((grid,), (BLOCK,), args)


def _array_device(args):
    """Device id of the first CuPy array among ``args`` (lists and tuples searched), or None."""
    for a in args:
        if isinstance(a, cupy.ndarray):
            return a.device.id
        if isinstance(a, (list, tuple)):
            d = _array_device(a)
            if d is not None:
                return d
    return None


def device_guard(args):
    """Context that makes the device of the array arguments current (a no-op when it is already)."""
    dev = _array_device(args)
    if dev is None or dev == cupy.cuda.runtime.getDevice():
        return contextlib.nullcontext()
    return cupy.cuda.Device(dev)


def _stable_argsort(keys):
    # cupy.argsort is stable (thrust stable sort by key); it accepts no other kind
    return cupy.argsort(keys)


_layer = CudaLayer("cuda", cupy, launch, _stable_argsort, validate=False)
_layer.bind(globals(), KERNEL_API, guard=device_guard)
