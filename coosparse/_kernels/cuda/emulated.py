"""The CUDA kernel layer emulated on the CPU: ``xp = numpy`` + the ``.cu`` files built by g++.

Every ``.cu`` file of ``cuda_kernels/`` is compiled for the host, unchanged,
through ``include/coo_host_shim.cuh`` (``COOSPARSE_HOST_EMULATION``), which
maps ``threadIdx``/``blockIdx``/``blockDim``/``gridDim`` onto thread-local
variables and a launch onto two loops (blocks, then threads, in order). A
generated translation unit adds one ``extern "C"`` launch wrapper per entry of
``cuda_kernels.KERNELS`` (the same table as the GPU's name expressions), which
takes CUDA's ``void** kernelParams`` convention; ctypes calls it.

Kernels whose threads cooperate (``__syncthreads``, ``COO_SHARED`` arrays,
warp shuffles) are listed in ``cuda_kernels.COOPERATIVE`` and launched by the
shim's fiber scheduler instead: every thread of a block has a stack of its
own and runs until it finishes or waits at a barrier; a barrier completes
when all the threads it names wait at it (docs/cuda.md, "Emulation"). A
barrier met in a plain launch, or one that can never complete, fails the
launch with :class:`EmulationError`.

The shared library is cached under ``$COOSPARSE_CACHE_DIR`` (default
``~/.cache/coosparse``), keyed by a hash of the sources, the table, the
compiler and its flags, and rebuilt only when one of them changes.

Strictness (what a GPU would refuse, refused here too):

- The array namespace is the emulated device (:mod:`coosparse.testing.device`): CuPy's API
  surface only, transfers counted, sync-free regions checked.
- Every launch is checked against the kernel's C signature, which the host
  library describes (``coo_params_<i>``): a device array for each pointer
  parameter (C-contiguous, element size and kind matching the pointee), a
  ``numpy.int64`` for each ``long long``, a size-1 NumPy array of the struct's
  size for each struct passed by value, ``None`` (a null pointer) only where a
  pointer is allowed. A host NumPy array where a pointer is expected fails
  here as it would crash (size 1: silently passed by value) under CuPy.
- The kernels are memory-safe by themselves (out-of-range input is zeroed or
  skipped and reported through the error word), as on a GPU. Host-side bound
  checks before each launch (``validate``) are off by default, so the
  emulation behaves as the GPU does; ``COOSPARSE_EMULATION_VALIDATE=1`` turns
  them on (a bad index then raises ``IndexError`` before the launch).
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

from ..api import KERNEL_API
from ...testing import device
from . import sources
from .layer import CudaLayer

BLOCK = 256
CXX_FLAGS = ["-O2", "-std=c++17", "-shared", "-fPIC", "-ffp-contract=off", "-fno-fast-math",
             "-fwrapv", "-DCOOSPARSE_HOST_EMULATION"]
if os.environ.get("COOSPARSE_EMULATION_SANITIZE"):
    # e.g. 'address': every kernel access checked by AddressSanitizer (run Python with
    # LD_PRELOAD=$(g++ -print-file-name=libasan.so); tests/kernels/test_cuda_strict.py does)
    CXX_FLAGS += [f"-fsanitize={os.environ['COOSPARSE_EMULATION_SANITIZE']}", "-fno-omit-frame-pointer", "-g"]

_lock = threading.Lock()
_lib = None
_entry = {}  # name expression -> ctypes function
_signature = {}  # name expression -> tuple of (size, is_pointer, pointee size, kind, const) per parameter
_build_error = None
MAX_PARAMS = 32


def compiler():
    """The host C++ compiler used (``$CXX``, else g++), or None when there is none."""
    return shutil.which(os.environ.get("CXX", "g++"))


cache_dir = sources.cache_dir


def translation_unit():
    """The generated host source: every kernel file, then one launch wrapper per table entry."""
    lines = ['#include "coo_common.cuh"']
    for fname in sources.KERNELS:
        lines.append(f'#include "{sources.source_path(fname)}"')
    lines.append("")
    lines.append('extern "C" const char* coo_host_error() { return coo_host::last_error.c_str(); }')
    for idx, (fname, expr) in enumerate(sources.all_name_expressions()):
        how = "launch_cooperative" if expr in sources.COOPERATIVE else "launch"
        lines.append(f"// {fname}: {expr}")
        lines.append(
            f'extern "C" int coo_launch_{idx}(unsigned int grid, unsigned int block, void** args) '
            f"{{ coo_host::last_error.clear(); coo_host::{how}(&{expr}, grid, block, args); "
            f"return coo_host::last_error.empty() ? 0 : 1; }}"
        )
        lines.append(
            f'extern "C" int coo_params_{idx}(long long* out) {{ return coo_host::describe(&{expr}, out); }}'
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
        (sources.sources_digest(tu) + " ".join(CXX_FLAGS) + _compiler_id(cxx or "")).encode()
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
        cmd = [cxx, *CXX_FLAGS, f"-I{sources.INCLUDE_DIR}", src, "-o", out]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"host build of the CUDA kernels failed:\n{' '.join(cmd)}\n{r.stderr}")
        os.replace(out, path)  # atomic: concurrent builders agree
    return path


def _load():
    global _lib, _build_error
    with _lock:
        if _lib is None:
            lib = ctypes.CDLL(build())
            buf = (ctypes.c_longlong * (5 * MAX_PARAMS))()
            for idx, (_, expr) in enumerate(sources.all_name_expressions()):
                fn = getattr(lib, f"coo_launch_{idx}")
                fn.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p)]
                fn.restype = ctypes.c_int
                _entry[expr] = fn
                desc = getattr(lib, f"coo_params_{idx}")
                desc.restype = ctypes.c_int
                nparams = desc(buf)
                if nparams > MAX_PARAMS:
                    raise RuntimeError(f"{expr} has {nparams} parameters; raise emulated.MAX_PARAMS")
                _signature[expr] = tuple(tuple(buf[5 * p: 5 * p + 5]) for p in range(nparams))
            lib.coo_host_error.restype = ctypes.c_char_p
            _lib = lib
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


_KINDS = {ord("f"): "f", ord("i"): "iub", ord("u"): "iub", ord("s"): "c"}


def _arg(kernel, p, a, spec, keep):
    """ctypes storage for kernel argument ``p`` checked against its C parameter ``spec``; a void* to it."""
    size, is_pointer, pointee, kind, _const = spec
    where = f"{kernel}: argument {p}"
    if is_pointer:
        if a is None:  # CuPy passes None as a null pointer
            c = ctypes.c_void_p(0)
        elif isinstance(a, device.DeviceArray):
            arr = device.host_view(a)
            if not arr.flags.c_contiguous:
                raise TypeError(f"{where}: a non-contiguous device array (a raw kernel ignores strides)")
            if arr.dtype.itemsize != pointee or arr.dtype.kind not in _KINDS[kind]:
                raise TypeError(f"{where}: a device array of dtype {arr.dtype} for a pointer to a "
                                f"{pointee}-byte {'struct' if kind == ord('s') else chr(kind)} type")
            c = ctypes.c_void_p(arr.ctypes.data)
        elif isinstance(a, np.ndarray):
            raise TypeError(
                f"{where}: a host NumPy array where the kernel takes a device pointer (CuPy would pass "
                f"{'it by value, silently' if a.size == 1 else 'nothing: TypeError'}); upload it or pass a device array"
            )
        else:
            raise TypeError(f"{where}: {type(a).__name__} where the kernel takes a device pointer")
    elif kind == ord("s"):  # a struct by value: a size-1 NumPy array of its bytes (CuPy's convention)
        if not (isinstance(a, np.ndarray) and a.size == 1 and a.dtype.itemsize == size):
            raise TypeError(f"{where}: the kernel takes a {size}-byte struct by value; pass a size-1 NumPy "
                            f"array of that size (CudaLayer.dims), not {type(a).__name__}")
        c = (ctypes.c_char * size).from_buffer_copy(np.ascontiguousarray(a).tobytes())
    else:
        if not isinstance(a, np.int64) or size != 8:
            raise TypeError(f"{where}: the kernel takes a {size}-byte {chr(kind)} scalar; pass numpy.int64 "
                            f"(got {type(a).__name__})")
        c = ctypes.c_longlong(int(a))
    keep.append(c)
    return ctypes.cast(ctypes.pointer(c), ctypes.c_void_p)


def launch(kernel, nthreads, args):
    """Run ``kernel`` (a KERNELS name expression) on ceil(nthreads / 256) blocks of 256, in order.

    Every argument is checked against the kernel's C signature first (module docstring).
    """
    _load()
    fn = _entry[kernel]
    sig = _signature[kernel]
    if len(args) != len(sig):
        raise TypeError(f"{kernel} takes {len(sig)} arguments; {len(args)} given")
    keep = []
    argv = (ctypes.c_void_p * max(len(args), 1))(*[_arg(kernel, p, a, s, keep)
                                                      for p, (a, s) in enumerate(zip(args, sig))])
    grid = (nthreads + BLOCK - 1) // BLOCK
    if grid > 2**31 - 1:
        raise ValueError(f"{kernel}: {nthreads} threads exceed CUDA's grid limit")
    if fn(grid, BLOCK, argv):
        raise EmulationError(f"{kernel}: {_lib.coo_host_error().decode()}")


class EmulationError(RuntimeError):
    """A launch the emulated device refuses: barriers that cannot complete, or cooperation in a plain launch."""


def _stable_argsort(keys):
    # the emulated cupy.argsort: NumPy's stable sort (CuPy's argsort is thrust's stable sort)
    return device.DeviceArray(np.argsort(device.host_view(keys), kind="stable"))


_layer = CudaLayer("cuda-emulated", device.xp, launch, _stable_argsort,
                   validate=os.environ.get("COOSPARSE_EMULATION_VALIDATE", "") not in ("", "0"),
                   peek=device.host_view)
_layer.bind(globals(), KERNEL_API)
