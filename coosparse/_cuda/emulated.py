"""The CUDA kernel layer emulated on the CPU: ``xp = numpy`` + the ``.cu`` files built by g++.

Every ``.cu`` file of ``cuda_kernels/`` is compiled for the host, unchanged,
through ``include/coo_host_shim.cuh`` (``COOSPARSE_HOST_EMULATION``), which
maps ``threadIdx``/``blockIdx``/``blockDim``/``gridDim`` onto thread-local
variables and a launch onto two loops (blocks, then threads, in order). A
generated translation unit adds one ``extern "C"`` launch wrapper per entry of
``cuda_kernels.KERNELS`` (the same table as the GPU's name expressions), which
takes CUDA's ``void** kernelParams`` convention; ctypes calls it.

Kernels whose threads communicate (``__syncthreads``, shared memory, warp
intrinsics) are not valid under this sequential schedule; the shim leaves
those names undefined so such a kernel cannot be emulated by accident. No
kernel uses them today.

The shared library is cached under ``$COOSPARSE_CACHE_DIR`` (default
``~/.cache/coosparse``), keyed by a hash of the sources, the table, the
compiler and its flags, and rebuilt only when one of them changes.
Emulation validates every index bound on the host before a launch, so bad
input raises ``IndexError`` and never corrupts the interpreter.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading

import numpy as np

from .._kernel_api import KERNEL_API
from . import _sources
from ._layer import CudaLayer

BLOCK = 256
CXX_FLAGS = ["-O2", "-std=c++17", "-shared", "-fPIC", "-ffp-contract=off", "-fno-fast-math",
             "-fwrapv", "-DCOOSPARSE_HOST_EMULATION"]

_lock = threading.Lock()
_lib = None
_entry = {}  # name expression -> ctypes function
_build_error = None


def compiler():
    """The host C++ compiler used (``$CXX``, else g++), or None when there is none."""
    return shutil.which(os.environ.get("CXX", "g++"))


def cache_dir():
    root = os.environ.get("COOSPARSE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "coosparse"
    )
    os.makedirs(root, exist_ok=True)
    return root


def translation_unit():
    """The generated host source: every kernel file, then one launch wrapper per table entry."""
    lines = ['#include "coo_common.cuh"']
    for fname in _sources.KERNELS:
        lines.append(f'#include "{_sources.source_path(fname)}"')
    lines.append("")
    for idx, (fname, expr) in enumerate(_sources.all_name_expressions()):
        lines.append(f"// {fname}: {expr}")
        lines.append(
            f'extern "C" void coo_launch_{idx}(unsigned int grid, unsigned int block, void** args) '
            f"{{ coo_host::launch(&{expr}, grid, block, args); }}"
        )
    return "\n".join(lines) + "\n"


def _compiler_id(cxx):
    try:
        return subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return cxx


def library_path():
    """Path of the cached host library for the current sources (built or not)."""
    cxx = compiler()
    tu = translation_unit()
    key = hashlib.sha256(
        (_sources.sources_digest(tu) + " ".join(CXX_FLAGS) + _compiler_id(cxx or "")).encode()
    ).hexdigest()[:20]
    return os.path.join(cache_dir(), f"coosparse_cuda_emulated_{key}.so"), tu, cxx


def build():
    """Compile (or reuse) the host library; returns its path. Raises RuntimeError on failure."""
    path, tu, cxx = library_path()
    if os.path.exists(path):
        return path
    if cxx is None:
        raise RuntimeError("no host C++ compiler (g++ or $CXX) to build the emulated CUDA kernels")
    d = os.path.dirname(path)
    with tempfile.TemporaryDirectory(dir=d) as tmp:
        src = os.path.join(tmp, "coosparse_emulated.cpp")
        with open(src, "w") as f:
            f.write(tu)
        out = os.path.join(tmp, "lib.so")
        cmd = [cxx, *CXX_FLAGS, f"-I{_sources.INCLUDE_DIR}", src, "-o", out]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"host build of the CUDA kernels failed:\n{' '.join(cmd)}\n{r.stderr}")
        os.replace(out, path)  # atomic: concurrent builders agree
    return path


def _load():
    global _lib, _build_error
    with _lock:
        if _lib is None:
            _lib = ctypes.CDLL(build())
            for idx, (_, expr) in enumerate(_sources.all_name_expressions()):
                fn = getattr(_lib, f"coo_launch_{idx}")
                fn.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p)]
                fn.restype = None
                _entry[expr] = fn
    return _lib


def available():
    """True when the host library can be built (or is cached) and loaded."""
    global _build_error
    if _lib is not None:
        return True
    if _build_error is not None:
        return False
    try:
        _load()
        return True
    except (RuntimeError, OSError) as e:
        _build_error = e
        return False


def _arg(a, keep):
    """ctypes storage for one kernel argument; returns a void* to it (CUDA's kernelParams)."""
    if isinstance(a, np.ndarray):
        c = ctypes.c_void_p(a.ctypes.data)
    elif isinstance(a, np.int64):
        c = ctypes.c_longlong(int(a))
    else:
        raise TypeError(f"kernel arguments are arrays or numpy.int64; got {type(a).__name__}")
    keep.append(c)
    return ctypes.cast(ctypes.pointer(c), ctypes.c_void_p)


def launch(kernel, nthreads, args):
    """Run ``kernel`` (a KERNELS name expression) on ceil(nthreads / 256) blocks of 256, in order."""
    _load()
    fn = _entry[kernel]
    keep = []
    argv = (ctypes.c_void_p * max(len(args), 1))(*[_arg(a, keep) for a in args])
    grid = (nthreads + BLOCK - 1) // BLOCK
    fn(grid, BLOCK, argv)


def _stable_argsort(keys):
    return np.argsort(keys, kind="stable")


_layer = CudaLayer("cuda-emulated", np, launch, _stable_argsort, validate=True)
_layer.bind(globals(), KERNEL_API)
