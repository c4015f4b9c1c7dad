"""Linear indices ("hash", SPEC 2): one int64 key per stored entry.

The key of an entry is its row-major position in the sparse shape,
``h = sum(indices[d] * stride[d])``. It is exact and order-preserving, so a
sorted array has sorted keys and equal keys mean equal indices.

When ``prod(sparse_shape) >= 2**63`` no int64 key exists. Those "wide" shapes
take a slower exact path: the index columns of every operand are ranked
jointly (lexicographic sort, i.e. row-major order) and the dense ranks serve as
keys. Ranks preserve order and equality, so every algorithm downstream runs
unchanged; only the key computation pays a sort.
"""
from __future__ import annotations

import numpy as np

from .._kernels.backend import array_namespace, backend_for
from .._kernels.bounds import outside, raise_out_of_bounds

INT64_LIMIT = 2**63


def strides_of(sparse_shape):
    """Row-major element strides of ``sparse_shape`` as Python ints (exact)."""
    strides = []
    acc = 1
    for n in reversed(sparse_shape):
        strides.append(acc)
        acc *= int(n)
    return tuple(reversed(strides)), acc


def is_wide(sparse_shape):
    """True when the sparse shape has 2**63 or more elements (no int64 key)."""
    return strides_of(sparse_shape)[1] >= INT64_LIMIT


def key_bound(sparse_shape):
    """Exclusive upper bound of the narrow keys of ``sparse_shape``."""
    return max(strides_of(sparse_shape)[1], 1)


def linear_keys(indices, sparse_shape):
    """int64 keys of one index array of a narrow shape, on its device.

    Every index is checked against ``sparse_shape`` in the same pass:
    ``IndexError`` for an array built with ``check=False`` that holds indices
    outside its shape (a key of such an index could alias another index).
    """
    strides, total = strides_of(sparse_shape)
    assert total < INT64_LIMIT
    be = backend_for(indices)
    # host strides and sizes: the CUDA layer passes them by value
    return be.linear_index(indices, np.array(strides, dtype=np.int64), tuple(sparse_shape))


def joint_keys(index_arrays, sparse_shape):
    """Keys of several index arrays over one sparse shape, comparable across arrays.

    Returns ``(keys_list, bound)``: narrow shapes give linear indices; wide
    shapes give dense joint ranks (same order and equality, exact). The wide
    path synchronises and sorts.
    """
    if not is_wide(sparse_shape):
        return [linear_keys(ix, sparse_shape) for ix in index_arrays], key_bound(sparse_shape)
    xp = array_namespace(index_arrays[0])
    allix = xp.concatenate(index_arrays, axis=1)
    n = allix.shape[1]
    if n and bool(outside(allix, sparse_shape).any()):  # synchronize! (the wide path synchronises anyway)
        raise_out_of_bounds(allix, sparse_shape)
    order = xp.lexsort(allix[::-1]) if n else xp.zeros(0, dtype=np.int64)
    s = allix[:, order]
    new_group = xp.empty(n, dtype=bool)
    if n:
        new_group[0] = False
        new_group[1:] = xp.any(s[:, 1:] != s[:, :-1], axis=0)
    ranks_sorted = xp.cumsum(new_group, dtype=np.int64)
    ranks = xp.empty(n, dtype=np.int64)
    ranks[order] = ranks_sorted
    out, start = [], 0
    for ix in index_arrays:
        out.append(ranks[start:start + ix.shape[1]])
        start += ix.shape[1]
    bound = int(ranks_sorted[-1]) + 1 if n else 1  # synchronize!
    return out, bound


def unravel_keys(keys, sparse_shape):
    """Inverse of :func:`linear_keys` for narrow shapes: (sparse_ndim, n) int64 indices."""
    strides, total = strides_of(sparse_shape)
    assert total < INT64_LIMIT
    be = backend_for(keys)
    return be.unravel_index(keys, np.array(strides, dtype=np.int64))

