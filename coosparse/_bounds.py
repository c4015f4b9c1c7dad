"""Index bounds (issue 10): how kernels are told the shape, and the one IndexError message.

Arrays built with ``check=False`` may hold indices outside their shape. The
kernels that compute keys or addresses from indices check every index in the
same pass (``linear_index(indices, strides, sizes)``: one unsigned compare per
element, no extra pass over the data) and the public layer raises
:func:`raise_out_of_bounds` before anything is written. The limits travel as
host metadata: ``size_limits(sizes)`` is ``min(size, 2**63)`` per dimension as
uint64, so ``uint64(index) < limit`` is exactly ``0 <= index < size`` for every
int64 index (negative indices become huge unsigned values), dimensions of
2**63 elements or more included.
"""
from __future__ import annotations

import numpy as np

INDEX_LIMIT = 2**63  # indices are int64: no index reaches 2**63


def size_limits(sizes):
    """uint64 array of ``min(size, 2**63)``: ``uint64(i) < limit`` iff ``0 <= i < size``."""
    return np.array([min(int(s), INDEX_LIMIT) for s in sizes], dtype=np.uint64).reshape(len(sizes))


def first_out_of_bounds(indices, sizes):
    """(dimension, position, value) of the first index outside ``sizes``, or None (synchronises)."""
    if indices.shape[1] == 0:
        return None
    for d, s in enumerate(sizes):
        row = indices[d]
        bad = (row < 0) | (row >= s) if s < INDEX_LIMIT else row < 0
        if bool(bad.any()):  # synchronize! (error path only)
            pos = int(bad.argmax())
            return d, pos, int(row[pos])
    return None


def check_sorted_first_dim(a):
    """O(1) bounds check of dimension 0 for a COO claimed sorted (the fused merges' inputs).

    In row-major order the first index never decreases, so the last one is the
    largest; the merge kernels check every other dimension, and the sort
    order, in the pass they make anyway. Host arrays only (no synchronisation).
    """
    if a.nnz and a.sparse_ndim and isinstance(a.indices, np.ndarray) and (
            int(a.indices[0, -1]) >= a.shape[0] or int(a.indices[0, 0]) < 0):
        raise_out_of_bounds(a.indices, a.sparse_shape)


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
