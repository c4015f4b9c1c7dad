"""Reused scratch memory for a kernel driver's large temporaries (never for results).

A multi-pass kernel (coalesce's bucketed route) needs temporaries as large as
its input, freed when the call returns. Memory that glibc hands back to the
system is fresh again at the next call: every page faults, and NumPy's
huge-page advice for arrays of 4 MiB and more can make a fault wait for the
kernel to compact memory (on a virtual machine, for its host to back the page
again). Whether a temporary's pages are fresh depends on the malloc history of
the whole process (glibc's dynamic mmap threshold rises to the largest block
freed, up to 32 MiB, and an allocation of at least the threshold is a fresh
mapping). So up to :data:`KEEP_BYTES` of freed temporaries stay here, their
pages mapped, for the next call. Thread-safe: a buffer is lent to one caller
at a time; callers running at once get buffers of their own.
"""
import os
import threading

import numpy as np

KEEP_BYTES = 64 << 20
"""At most this many bytes of returned buffers are kept (larger ones are freed at once)."""

MIN_BYTES = 1 << 20
"""Smaller temporaries come from NumPy: malloc reuses its small blocks by itself."""

_lock = threading.Lock()
_free = []  # uint8 buffers not lent out, smallest first


def _forget_in_child():
    # a forked child: another thread may have held the lock at the fork; start afresh
    global _lock, _free
    _lock, _free = threading.Lock(), []


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def take(shape, dtype):
    """An uninitialised C-contiguous array of ``shape`` and ``dtype``; give its buffer back with
    :func:`give` when done (a buffer not given back is only freed by the garbage collector)."""
    dtype = np.dtype(dtype)
    count = 1
    for s in (shape if isinstance(shape, tuple) else (shape,)):
        count *= int(s)
    nbytes = count * dtype.itemsize
    if nbytes < MIN_BYTES or nbytes > KEEP_BYTES:
        return np.empty(shape, dtype=dtype)
    buf = None
    with _lock:
        for i, b in enumerate(_free):
            if b.nbytes >= nbytes:
                # the smallest that fits; a much larger one is left for a larger request
                if b.nbytes <= 2 * nbytes:
                    buf = _free.pop(i)
                break
    if buf is None:
        buf = np.empty(nbytes, dtype=np.uint8)
    return buf[:nbytes].view(dtype).reshape(shape)


def give(*arrays):
    """Return the buffers of arrays from :func:`take` (others are ignored); keep the largest
    ones up to :data:`KEEP_BYTES` in all."""
    for a in arrays:
        buf = a.base if a.base is not None else a
        while buf.base is not None and isinstance(buf.base, np.ndarray):
            buf = buf.base
        if buf.dtype != np.uint8 or buf.ndim != 1 or not MIN_BYTES <= buf.nbytes <= KEEP_BYTES:
            continue
        with _lock:
            if any(b is buf for b in _free):
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
