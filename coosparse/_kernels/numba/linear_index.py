"""Linear index ("hash") kernels: row-major key of each index column and its inverse."""
import numba as nb
import numpy as np


@nb.njit(cache=True, parallel=True, nogil=True)
def linear_index(indices, strides):
    """keys[i] = sum_d indices[d, i] * strides[d]  (caller guarantees no int64 overflow)."""
    ndim, n = indices.shape
    keys = np.empty(n, dtype=np.int64)
    for i in nb.prange(n):
        h = np.int64(0)
        for d in range(ndim):
            h += indices[d, i] * strides[d]
        keys[i] = h
    return keys


@nb.njit(cache=True, parallel=True, nogil=True)
def unravel_index(keys, strides):
    """Inverse of linear_index: (ndim, n) row-major indices of each key."""
    ndim = strides.shape[0]
    n = keys.shape[0]
    out = np.empty((ndim, n), dtype=np.int64)
    for i in nb.prange(n):
        r = keys[i]
        for d in range(ndim):
            s = strides[d]
            q = r // s
            out[d, i] = q
            r -= q * s
    return out


@nb.njit(cache=True, parallel=True, nogil=True)
def linear_index_checked(indices, strides, limits):
    """:func:`linear_index` that also counts indices outside the shape, in the same pass.

    ``limits[d]`` is ``min(size_d, 2**63)`` as uint64 (``coosparse/_kernels/bounds.py``):
    ``uint64(index) >= limit`` is "negative or too large". Returns
    ``(keys, number of bad indices)``; keys of bad entries are meaningless.
    """
    ndim, n = indices.shape
    keys = np.empty(n, dtype=np.int64)
    bad = 0
    for i in nb.prange(n):
        h = np.int64(0)
        o = np.int64(0)
        for d in range(ndim):
            v = indices[d, i]
            o |= np.int64(np.uint64(v) >= limits[d])  # no branch: the loop stays as fast as the unchecked one
            h += v * strides[d]
        keys[i] = h
        bad += o
    return keys, bad
