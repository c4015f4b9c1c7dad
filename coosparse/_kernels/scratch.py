"""Host scratch memory reused across calls, for a call's large temporaries (never for results).

Two kinds of call use it: coalesce's bucketed route (two temporaries as large as its
input: the scattered values and the packed words) and ``sampled_matmul`` (the
unit-stride copy of a dense factor it walks with a stride: ``Y`` given K x N
row-major, 64 x 131072 float64, is 67 MB). Memory freed at the end of a call is
fresh again at the next one: every page faults, and NumPy advises arrays of 4 MB and
more to use 2 MB huge pages, whose first touch can wait for the kernel to compact
memory (on a virtual machine that reports freed memory to its host, 100-700 ms for
the host to back the page again). Whether a temporary is fresh memory also depends on
the malloc history of the whole process (glibc's mmap threshold rises to the largest
block freed, up to 32 MiB). So buffers given back stay here, their pages backed, for
the next call: from :data:`MIN_BYTES` up to :data:`KEEP_BYTES` in all, for the life
of the process (:func:`clear` frees them).

Every buffer starts on a cache line (:data:`ALIGN`): the dense transpose then streams
its stores. Thread-safe: a buffer is lent to one caller at a time (callers running
at once get buffers of their own); a forked child starts with an empty pool.
"""
from __future__ import annotations

import os
import threading
import weakref

import numpy as np

MIN_BYTES = 1 << 20
"""Smaller temporaries come from NumPy: malloc reuses its small blocks by itself."""

KEEP_BYTES = 128 << 20
"""At most this many bytes of given-back buffers are kept (a larger buffer is freed at once)."""

ALIGN = 64
"""Bytes: every pooled array starts on a cache line."""

_lock = threading.Lock()
_free = []  # uint8 buffers not lent out, smallest first
_ours = weakref.WeakValueDictionary()  # id -> every pooled buffer alive: give() takes back only these


def _forget_in_child():
    # a forked child: another thread may have held the lock at the fork; start afresh
    global _lock, _free, _ours
    _lock, _free, _ours = threading.Lock(), [], weakref.WeakValueDictionary()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def take(shape, dtype):
    """An uninitialised C-contiguous host array of ``shape`` and ``dtype``; give it back with
    :func:`give` once nothing reads it (one not given back is freed by the garbage collector)."""
    dtype = np.dtype(dtype)
    count = 1
    for s in (shape if isinstance(shape, tuple) else (shape,)):
        count *= int(s)
    nbytes = count * dtype.itemsize
    if nbytes < MIN_BYTES:
        return np.empty(shape, dtype=dtype)
    need = nbytes + ALIGN
    buf = None
    if need <= KEEP_BYTES:
        with _lock:
            for i, b in enumerate(_free):
                if b.nbytes >= need:
                    if b.nbytes <= 2 * need:  # a much larger one is left for a larger request
                        buf = _free.pop(i)
                    break
    if buf is None:
        buf = np.empty(need, dtype=np.uint8)
        if need <= KEEP_BYTES:
            with _lock:
                _ours[id(buf)] = buf
    start = -buf.ctypes.data % ALIGN
    return buf[start:start + nbytes].view(dtype).reshape(shape)


def give(*arrays):
    """Hand back arrays from :func:`take` (others are ignored); the largest are kept, up to
    :data:`KEEP_BYTES` in all."""
    for a in arrays:
        buf = a
        while isinstance(buf.base, np.ndarray):
            buf = buf.base
        with _lock:
            if _ours.get(id(buf)) is not buf or any(b is buf for b in _free):
                continue
            _free.append(buf)
            _free.sort(key=lambda b: b.nbytes)
            while sum(b.nbytes for b in _free) > KEEP_BYTES:
                _free.pop(0)


def clear():
    """Free every kept buffer."""
    with _lock:
        _free.clear()


def kept_bytes():
    """Bytes held by kept buffers."""
    with _lock:
        return sum(b.nbytes for b in _free)
