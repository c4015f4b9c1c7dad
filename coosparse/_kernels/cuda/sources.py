"""Loader of the CUDA C sources in ``cuda_kernels/`` (package ``coosparse.cuda_kernels``).

Every program text starts with ``#line 1 "<path>"`` so compiler messages
name the real file and line. The instantiations compiled (NVRTC name
expressions, host launch wrappers) come from the one table
``coosparse.cuda_kernels.KERNELS``.

The GPU loader (:mod:`.backend`) compiles each file itself with NVRTC and
:func:`nvrtc_options`, instead of through ``cupy.RawModule``: CuPy appends
``-ftz=true`` to every option list, which would flush float32 subnormals to
zero and break bit-identity with the CPU. The compiled binaries are cached
under :func:`cache_key`, which covers every ``.cu`` file, every header of
``include/`` and the table (CuPy's key covers only the program text, so a
header-only edit would have reused stale binaries).
"""
from __future__ import annotations

import hashlib
import os

from ... import cuda_kernels

KERNEL_DIR = os.path.dirname(os.path.abspath(cuda_kernels.__file__))
INCLUDE_DIR = os.path.join(KERNEL_DIR, "include")
KERNELS = cuda_kernels.KERNELS
COOPERATIVE = cuda_kernels.COOPERATIVE

IEEE_OPTIONS = ("-ftz=false", "-prec-div=true", "-prec-sqrt=true", "-fmad=false")
"""Float semantics of the kernels: subnormals kept, no contraction into FMAs (Numba's, NumPy's)."""


def source_path(fname):
    return os.path.join(KERNEL_DIR, fname)


def program_source(fname):
    """Text of kernel file ``fname`` as compiled: ``#line 1 "<file>"`` + its source."""
    path = source_path(fname)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return f'#line 1 "{path}"\n' + text


def name_expressions(fname):
    """The template instantiations of ``fname`` (NVRTC name expressions), in table order."""
    return list(KERNELS[fname])


def all_name_expressions():
    return [(f, n) for f in KERNELS for n in KERNELS[f]]


def nvrtc_options(arch=None):
    """The one NVRTC option list (loader, compile test, ``compile_check``).

    The include dir, IEEE float semantics (:data:`IEEE_OPTIONS`), and the
    target when given: ``sm_XX`` (a cubin) or ``compute_XX`` (PTX). The
    language level is NVRTC's default (C++17 since CUDA 12).
    """
    opts = [f"--include-path={INCLUDE_DIR}", *IEEE_OPTIONS]
    if arch is not None:
        opts.append(f"--gpu-architecture={arch}")
    return opts


def sources_digest(extra=""):
    """Hash of every kernel file, header and the table: keys caches of compiled code."""
    h = hashlib.sha256(extra.encode())
    for root in (KERNEL_DIR, INCLUDE_DIR):
        for fname in sorted(os.listdir(root)):
            if fname.endswith((".cu", ".cuh", ".py")):
                h.update(fname.encode())
                with open(os.path.join(root, fname), "rb") as f:
                    h.update(f.read())
    h.update(repr(sorted(KERNELS.items())).encode())
    return h.hexdigest()[:20]


def cache_key(fname, arch, compiler_version):
    """Cache key of the binary of ``fname`` for ``arch``: sources + headers + table + options + compiler."""
    extra = "\0".join([fname, arch, str(compiler_version), *nvrtc_options(arch)])
    return sources_digest(extra)


def cache_dir():
    """``$COOSPARSE_CACHE_DIR`` (default ``~/.cache/coosparse``), created on demand."""
    root = os.environ.get("COOSPARSE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "coosparse"
    )
    os.makedirs(root, exist_ok=True)
    return root
