"""Array helpers every operation shares: 2-D rows, bit views, flat views of strided memory.

Kernels take C-contiguous arrays of a few types; these helpers bring values of
any dtype and layout into that form without arithmetic. A bit copy moves
values of every dtype with one kernel specialisation per item width.
"""
from __future__ import annotations

import numpy as np

from .._kernels.backend import BITS, array_namespace, bits_view  # noqa: F401 (the operations' bit views)

_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}


def rows2d(values):
    """``(n, k)`` C-contiguous view or copy of ``values`` (k: the elements of a dense block)."""
    k = 1
    for s in values.shape[1:]:
        k *= int(s)
    return array_namespace(values).ascontiguousarray(values.reshape(values.shape[0], k))


def as_words(v2):
    """A C-contiguous 2-D array viewed as unsigned words of its item width (16-byte items: two words).

    A bit copy moves it: one kernel specialisation per width serves every dtype.
    """
    return v2.view(_WORDS[v2.dtype.itemsize])


def unit_stride(v):
    """``v`` with a unit-stride last axis (a same-size ``view`` needs one)."""
    return v if v.flags.c_contiguous else array_namespace(v).ascontiguousarray(v)


def copy_kernel(kernel, values, *args):
    """Run a kernel that only moves ``values`` (no arithmetic) on any supported dtype.

    Numba has no float16 type: those values travel as their uint16 bits.
    """
    if values.dtype == np.float16:
        return kernel(values.view(np.uint16), *args).view(np.float16)
    return kernel(values, *args)


def flat_view(out):
    """(flat, base, elem_strides): a 1-D view of ``out``'s memory and how to address it.

    ``flat[base + sum(i_d * elem_strides[d])]`` is ``out[i]``, for any strides
    (negative ones included). Byte strides must be multiples of the itemsize.
    """
    xp = array_namespace(out)
    item = out.dtype.itemsize
    if any(s % item for s in out.strides):
        raise ValueError(f"target strides {out.strides} are not multiples of its itemsize {item}")
    es = [s // item for s in out.strides]
    if out.size == 0:
        return xp.empty(0, dtype=out.dtype), 0, es
    # lowest address: reversing the dims with negative strides points there
    if out.ndim == 0:
        lowest = out  # indexing a 0-d array with () would give a scalar, not a view
    else:
        lowest = out[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in es)]
    span = 1 + sum((n - 1) * abs(s) for n, s in zip(out.shape, es))
    flat = xp.lib.stride_tricks.as_strided(lowest, shape=(span,), strides=(item,))
    base = sum((n - 1) * -s for n, s in zip(out.shape, es) if s < 0)
    return flat, base, es


def dense_block_offsets(dense_shape, elem_strides):
    """Element offsets of a dense block (C order) from its element strides: a host int64 array.

    Host metadata for the kernels (``inner`` of scatter/gather rows): the CUDA
    layer passes it by value, so no host-to-device copy is made.
    """
    inner = np.zeros((), dtype=np.int64)
    for n, s in zip(dense_shape, elem_strides):
        inner = inner[..., None] + np.arange(n, dtype=np.int64) * s
    return inner.reshape(-1)
