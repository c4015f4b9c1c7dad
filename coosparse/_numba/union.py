"""The sorted union of two coalesced key arrays, and gathers over it.

``merge_union`` is parallel over contiguous chunks of ``a``: chunk t owns
``a[lo:hi]`` and the part of ``b`` below ``a[hi]`` (found by one binary search),
so each chunk merges its slice independently. A first pass counts each chunk's
union size, a second writes at the prefix-summed offsets.
"""
import numba as nb
import numpy as np

from .intersect import _lower_bound


@nb.njit(cache=True, nogil=True)
def _b_splits(a_keys, b_keys, nchunks):
    n = a_keys.shape[0]
    m = b_keys.shape[0]
    chunk = (n + nchunks - 1) // nchunks if n else 0
    lo = np.empty(nchunks + 1, dtype=np.int64)
    lo[0] = 0
    for t in range(1, nchunks):
        s = t * chunk
        lo[t] = m if s >= n else _lower_bound(b_keys, lo[t - 1], m, a_keys[s])
    lo[nchunks] = m
    return lo, chunk


@nb.njit(cache=True, parallel=True, nogil=True)
def merge_union(a_keys, b_keys, nchunks):
    """(a_pos, b_pos) over the sorted union of two strictly increasing key arrays.

    Entry u of the union comes from ``a[a_pos[u]]`` and/or ``b[b_pos[u]]``;
    -1 marks the side that lacks the key.
    """
    n = a_keys.shape[0]
    if n == 0:
        nchunks = 1
    blo, chunk = _b_splits(a_keys, b_keys, nchunks)
    sizes = np.zeros(nchunks + 1, dtype=np.int64)
    for t in nb.prange(nchunks):
        i = t * chunk
        ie = min(n, i + chunk) if n else 0
        if i > ie:
            i = ie
        j = blo[t]
        je = blo[t + 1]
        c = 0
        while i < ie and j < je:
            ka = a_keys[i]
            kb = b_keys[j]
            if ka <= kb:
                i += 1
            if kb <= ka:
                j += 1
            c += 1
        sizes[t + 1] = c + (ie - i) + (je - j)
    for t in range(nchunks):
        sizes[t + 1] += sizes[t]
    total = sizes[nchunks]
    a_pos = np.empty(total, dtype=np.int64)
    b_pos = np.empty(total, dtype=np.int64)
    for t in nb.prange(nchunks):
        i = t * chunk
        ie = min(n, i + chunk) if n else 0
        if i > ie:
            i = ie
        j = blo[t]
        je = blo[t + 1]
        u = sizes[t]
        while i < ie or j < je:
            if j >= je or (i < ie and a_keys[i] < b_keys[j]):
                a_pos[u] = i
                b_pos[u] = -1
                i += 1
            elif i >= ie or b_keys[j] < a_keys[i]:
                a_pos[u] = -1
                b_pos[u] = j
                j += 1
            else:
                a_pos[u] = i
                b_pos[u] = j
                i += 1
                j += 1
            u += 1
    return a_pos, b_pos


@nb.njit(cache=True, parallel=True, nogil=True)
def union_columns(a_indices, b_indices, a_pos, b_pos):
    """Index columns of the union: from a where a_pos >= 0, else from b."""
    d = a_indices.shape[0]
    m = a_pos.shape[0]
    out = np.empty((d, m), dtype=np.int64)
    for u in nb.prange(m):
        p = a_pos[u]
        if p >= 0:
            for x in range(d):
                out[x, u] = a_indices[x, p]
        else:
            q = b_pos[u]
            for x in range(d):
                out[x, u] = b_indices[x, q]
    return out


@nb.njit(cache=True, parallel=True, nogil=True)
def gather_or_zero(values, rows):
    """out[i] = values[rows[i]], or zeros where rows[i] < 0 (2-D values)."""
    m = rows.shape[0]
    k = values.shape[1]
    out = np.empty((m, k), dtype=values.dtype)
    for i in nb.prange(m):
        r = rows[i]
        if r >= 0:
            for c in range(k):
                out[i, c] = values[r, c]
        else:
            for c in range(k):
                out[i, c] = 0
    return out


@nb.njit(cache=True, parallel=True, nogil=True)
def union_values(a_values, b_values, a_pos, b_pos, negate):
    """out[u] = (a[a_pos[u]] or 0) + / - (b[b_pos[u]] or 0); one arithmetic dtype."""
    m = a_pos.shape[0]
    k = a_values.shape[1]
    out = np.empty((m, k), dtype=a_values.dtype)
    for u in nb.prange(m):
        p = a_pos[u]
        q = b_pos[u]
        for c in range(k):
            if p >= 0:
                if q >= 0:
                    out[u, c] = a_values[p, c] - b_values[q, c] if negate else a_values[p, c] + b_values[q, c]
                else:
                    out[u, c] = a_values[p, c]
            else:
                out[u, c] = -b_values[q, c] if negate else b_values[q, c]
    return out
