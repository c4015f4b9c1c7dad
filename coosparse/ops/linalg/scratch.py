"""Host scratch memory reused across calls: the unit-stride copy of a dense factor of ``sampled_matmul``.

SDDMM copies a factor whose rows or columns it walks with a stride (``Y`` given K x N row-major:
64 x 131072 float64 is 67 MB) into a transposed scratch array, read by the kernel and dropped
when the call returns. Fresh NumPy memory of 4 MB and more is advised to use 2 MB huge pages, and
on a virtual machine that hands freed memory back to its host (free page reporting) the first
touch of a fresh huge page sometimes waits 100-700 ms for the host; the kernel's random row reads
want those huge pages (4 KB pages measured no faster: TLB misses). So a scratch buffer that a call
gives back stays here, its pages backed, for the next call: at most ``KEEP`` idle buffers of at
most ``KEEP_MAX_BYTES`` each (one 67 MB buffer for the benchmark's SDDMM), held for the life of
the process (:func:`clear` drops them).

Thread-safe without a lock: a buffer in use is out of the pool (``list.pop`` and ``list.append``
are atomic under the GIL), so two calls at once never share one; the second allocates its own.
Below ``POOL_FROM`` bytes NumPy's allocation is kept (no huge-page advice, malloc reuses it).
"""
from __future__ import annotations

import numpy as np

POOL_FROM = 1 << 22  # NumPy's huge-page advice starts at 4 MB
KEEP = 2  # both factors of one call
KEEP_MAX_BYTES = 1 << 28  # a larger buffer is freed with its call, not held
ALIGN = 64  # bytes: every array taken starts on a cache line

_idle = []  # idle uint8 buffers


def take(shape, dtype):
    """An uninitialised C-contiguous host array of ``shape`` and ``dtype`` (give it back with :func:`give`)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    buf = None
    if POOL_FROM <= nbytes <= KEEP_MAX_BYTES:
        try:
            buf = _idle.pop()
        except IndexError:
            pass
        if buf is not None and buf.nbytes < nbytes + ALIGN:
            buf = None  # too small: freed; the larger one replaces it when given back
    if buf is None:
        buf = np.empty(nbytes + ALIGN, dtype=np.uint8)
    start = -buf.ctypes.data % ALIGN  # cache-line aligned: the transpose then streams its stores
    return buf[start:start + nbytes].view(dtype).reshape(shape)


def give(arr):
    """Hand back an array from :func:`take` once nothing reads it any more."""
    buf = arr.base if isinstance(arr.base, np.ndarray) else arr
    while isinstance(buf.base, np.ndarray):
        buf = buf.base
    if not POOL_FROM <= buf.nbytes - ALIGN <= KEEP_MAX_BYTES or buf.dtype != np.uint8:
        return
    if len(_idle) < KEEP:
        _idle.append(buf)
    else:  # keep the larger ones
        try:
            small = min(range(len(_idle)), key=lambda i: _idle[i].nbytes)
            if _idle[small].nbytes < buf.nbytes:
                _idle[small] = buf
        except (ValueError, IndexError):  # another thread took them meanwhile
            pass


def held_bytes():
    """Bytes held by idle scratch buffers."""
    return sum(b.nbytes for b in list(_idle))


def clear():
    """Free the idle scratch buffers."""
    _idle.clear()
