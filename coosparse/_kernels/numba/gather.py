"""Gathers: rows of values, columns of indices, strided elements, rows or zeros.

Parallel kernels (``prange``) for large gathers and serial ones
(``take_rows`` / ``take_columns``) that the layer uses below a size where
waking threads costs more than the copy. Each output element is written by
one iteration; no result depends on the schedule.
"""
import numba as nb
import numpy as np


@nb.njit(cache=True, parallel=True, nogil=True)
def gather_rows(values, rows):
    """values[rows] for 2-D values, in parallel."""
    n = rows.shape[0]
    k = values.shape[1]
    out = np.empty((n, k), dtype=values.dtype)
    for i in nb.prange(n):
        r = rows[i]
        for c in range(k):
            out[i, c] = values[r, c]
    return out


@nb.njit(cache=True, nogil=True)
def take_rows(values, rows, out):
    """out[i, :] = values[rows[i], :] (serial)."""
    k = values.shape[1]
    for i in range(rows.shape[0]):
        r = rows[i]
        for c in range(k):
            out[i, c] = values[r, c]
    return out


@nb.njit(cache=True, nogil=True)
def take_columns(indices, rows, out):
    """out[:, i] = indices[:, rows[i]] (serial)."""
    for d in range(indices.shape[0]):
        src = indices[d]
        dst = out[d]
        for i in range(rows.shape[0]):
            dst[i] = src[rows[i]]
    return out


@nb.njit(cache=True, parallel=True, nogil=True)
def gather_columns(indices, rows, out):
    """out[:, i] = indices[:, rows[i]] (out C-contiguous (d, m))."""
    d = indices.shape[0]
    m = rows.shape[0]
    for i in nb.prange(m):
        r = rows[i]
        for a in range(d):
            out[a, i] = indices[a, r]
    return out


@nb.njit(cache=True, parallel=True, nogil=True)
def gather_strided(source, addresses, inner, out):
    """out[i, c] = source[addresses[i] + inner[c]] (the gather twin of scatter_set)."""
    n = addresses.shape[0]
    k = inner.shape[0]
    for i in nb.prange(n):
        a = addresses[i]
        for c in range(k):
            out[i, c] = source[a + inner[c]]
    return out


@nb.njit(cache=True, parallel=True, nogil=True)
def gather_or_zero(values, rows, out):
    """out[i] = values[rows[i]], or zeros where rows[i] < 0 (2-D values)."""
    m = rows.shape[0]
    k = values.shape[1]
    for i in nb.prange(m):
        r = rows[i]
        if r >= 0:
            for c in range(k):
                out[i, c] = values[r, c]
        else:
            for c in range(k):
                out[i, c] = 0
    return out
