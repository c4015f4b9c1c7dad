"""Index bounds and order: how kernels are told the shape, and the errors they raise.

Arrays built with ``check=False`` may hold indices outside their shape. The
kernels that compute keys or addresses from indices check every index in the
same pass (``linear_index(indices, strides, sizes)``: one unsigned compare per
element, no extra pass over the data) and the public layer raises
:func:`raise_out_of_bounds` before anything is written. The limits travel as
host metadata: ``size_limits(sizes)`` is ``min(size, 2**63)`` per dimension as
uint64, so ``uint64(index) < limit`` is exactly ``0 <= index < size`` for every
int64 index (negative indices become huge unsigned values), dimensions of
2**63 elements or more included.

On a GPU a check would synchronise, so the CUDA kernels report instead
(docs/cuda.md, "Out-of-range input"): ``linear_index`` with ``sizes`` marks
the entry (its key becomes an address no kernel reads or writes) and sets the
INDEX bit of the device's error word, read at the next synchronising point or
by ``coosparse.check_device_errors()``. The public layer calls the same rows
on both layers; only when the error surfaces differs.
"""
from __future__ import annotations

import os

import numpy as np

from .backend import backend_for, is_device_array

INDEX_LIMIT = 2**63  # indices are int64: no index reaches 2**63


def size_limits(sizes):
    """uint64 array of ``min(size, 2**63)``: ``uint64(i) < limit`` iff ``0 <= i < size``."""
    return np.array([min(int(s), INDEX_LIMIT) for s in sizes], dtype=np.uint64).reshape(len(sizes))


def row_major_sizes(strides, bound=None):
    """The sparse shape behind row-major ``strides`` (host ints), for kernels given only strides.

    ``strides[k-1] = sizes[k] * strides[k]`` and ``bound = sizes[0] * strides[0]``.
    Without ``bound`` the first size is unknown: it is given as 2**63 (only
    negative first indices are then out of bounds).
    """
    st = [int(s) for s in strides]
    if not st:
        return ()
    first = (int(bound) // st[0] if st[0] else 0) if bound is not None else INDEX_LIMIT
    return tuple([first] + [st[k - 1] // st[k] if st[k] else 0 for k in range(1, len(st))])


def _outside_row(row, size):
    """Mask of the indices of one dimension outside ``[0, size)`` (array operations, no sync)."""
    return (row < 0) | (row >= size) if size < INDEX_LIMIT else row < 0


def outside(indices, sizes):
    """Mask over the entries (``ndim >= 1``): some index outside ``sizes``. Array operations, no sync."""
    mask = _outside_row(indices[0], sizes[0])
    for d in range(1, len(sizes)):
        mask |= _outside_row(indices[d], sizes[d])
    return mask


def check_indices(indices, sizes):
    """Bounds check alone, for paths that compute nothing from the indices (an empty target).

    Runs the checked ``linear_index`` row (zero strides, the keys are dropped):
    IndexError on the CPU, a report through the error word on a GPU, with no
    synchronisation either way.
    """
    if indices.shape[1] == 0:
        return
    backend_for(indices).linear_index(indices, np.zeros(len(sizes), dtype=np.int64), tuple(sizes))


def first_out_of_bounds(indices, sizes):
    """(dimension, position, value) of the first index outside ``sizes``, or None (synchronises)."""
    if indices.shape[1] == 0:
        return None
    for d, s in enumerate(sizes):
        row = indices[d]
        bad = _outside_row(row, s)
        if bool(bad.any()):  # synchronize! (error path only)
            pos = int(bad.argmax())
            return d, pos, int(row[pos])
    return None


def raise_out_of_bounds(indices, sizes, op=None):
    """Raise IndexError naming the first index outside ``sizes`` (dimension, position, value)."""
    found = first_out_of_bounds(indices, sizes)
    where = f"{op}: " if op else ""
    if found is None:  # the caller saw a bad key; keep the message honest
        raise IndexError(f"{where}an index lies outside the shape {tuple(sizes)}")
    d, pos, value = found
    raise IndexError(
        f"{where}index {value} at position {pos} is out of bounds for dimension {d} with size "
        f"{sizes[d]} (an array built with check=False holds indices outside its shape)"
    )


def run_offsets(offsets, keys, indices, values, op):
    """``offsets`` of sorted runs of ``keys`` as host int64 (0 .. n, non-decreasing), else
    ValueError/TypeError; ``indices`` (d, n) and ``values`` (n, k) must hold the same n entries.

    Run boundaries are host metadata (the CUDA layer passes them by value); a
    device array is refused, as for every small kernel parameter.
    """
    n = keys.shape[0]
    if indices.shape[1] != n or values.shape[0] != n:
        raise ValueError(f"{op}: indices {tuple(indices.shape)} and values {tuple(values.shape)} must hold "
                         f"the {n} entries of the keys")
    if is_device_array(offsets):
        raise TypeError(f"{op}: offsets (the run boundaries) are host metadata; pass host integers, not a "
                        "device array (reading one back would synchronise)")
    offsets = np.asarray(offsets, dtype=np.int64).reshape(-1)
    if offsets.shape[0] < 2 or offsets[0] != 0 or offsets[-1] != n or bool((offsets[1:] < offsets[:-1]).any()):
        raise ValueError(f"{op}: run offsets {offsets.tolist()} must rise from 0 to the {n} keys")
    return offsets


def lying_flag_error(operand=None, unique=False):
    """The ValueError for a True flag that a kernel's cheap check found false (``check=False`` input).

    One wording for the Numba layer's checks (O(1) ends, the fused merges'
    in-pass order count); the CUDA layer's ORDER report (``cuda/errors.py``)
    reads the same way.
    """
    who = f"the {operand} operand's" if operand else "an operand's"
    flag = "sorted=True is false (or unique=True)" if unique else "sorted=True is false"
    how = "out of order or repeat" if unique else "out of order"
    return ValueError(
        f"{who} flag {flag}: its indices are {how}; an array built with check=False carries a "
        "wrong flag; rebuild it with check=True, or without the flag"
    )


# ----------------------------------------------------------------------------- sizes memory cannot hold
def _gib(nbytes):
    return f"{nbytes / 2**30:.3g} GiB"


_MEMORY = []


def memory_bytes():
    """This machine's physical memory in bytes (None where the platform does not say)."""
    if not _MEMORY:
        try:
            _MEMORY.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
        except (AttributeError, ValueError, OSError):  # (not a POSIX system)
            _MEMORY.append(None)
    return _MEMORY[0]


def check_size(count, entry_bytes, op, what="entries"):
    """MemoryError naming ``op``, ``count`` and the bytes when ``count`` items of ``entry_bytes`` cannot be held.

    Refused: 2**63 items or more (no int64 position reaches them), or more
    bytes than this machine's physical memory. Used before an allocation
    whose size is known (and before work that would end in it), by the
    operations (``coosparse._core.shapes.check_entries``) and by kernel rows
    that size their own buffers (a GPU's SpGEMM expansion).
    """
    count = int(count)
    nbytes = count * int(entry_bytes)
    if count >= INDEX_LIMIT:
        raise MemoryError(f"{op}: the result would hold {count} {what} ({_gib(nbytes)}), more than 2**63")
    limit = memory_bytes()
    if limit is not None and nbytes > limit:
        raise MemoryError(f"{op}: the result would hold {count} {what} of {entry_bytes} bytes ({_gib(nbytes)}), "
                          f"more than this machine's memory ({_gib(limit)})")
