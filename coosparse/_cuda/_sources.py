"""Loader of the CUDA C sources in ``cuda_kernels/`` (package ``coosparse.cuda_kernels``).

Every program text starts with ``#line 1 "<path>"`` so compiler messages
name the real file and line. The instantiations compiled (NVRTC name
expressions, host launch wrappers) come from the one table
``coosparse.cuda_kernels.KERNELS``.
"""
from __future__ import annotations

import hashlib
import os

from .. import cuda_kernels

KERNEL_DIR = os.path.dirname(os.path.abspath(cuda_kernels.__file__))
INCLUDE_DIR = os.path.join(KERNEL_DIR, "include")
KERNELS = cuda_kernels.KERNELS


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
    """NVRTC options: the include dir, and the target when given (CuPy adds its own).

    The language level is NVRTC's default (C++17 since CUDA 12); the kernels
    need only C++11, so CuPy's own ``-std`` choice cannot clash with ours.
    """
    opts = [f"--include-path={INCLUDE_DIR}"]
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
