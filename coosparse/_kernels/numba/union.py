"""The sorted union of two coalesced key arrays, and gathers over it.

``merge_union`` is parallel over contiguous chunks of ``a``: chunk t owns
``a[lo:hi]`` and the part of ``b`` below ``a[hi]`` (found by one binary search),
so each chunk merges its slice independently. A first pass counts each chunk's
union size, a second writes at the prefix-summed offsets. Chunks are the parts
of ``threads.run_parts`` (one part on the calling thread for small inputs);
the per-chunk merge loops are inlined into the part kernels.
"""
import numba as nb
import numpy as np

from .intersect import _key, _lower_bound, _lower_bound_idx, _outside
from .parts import chunk_bounds, part_range
from .rowmerge import row_add, row_union_offsets  # noqa: F401 (the layer calls them here)
from .threads import plan, run_parts


def chunking(n, m, nthreads):
    """(nchunks, nthreads) for a merge of n and m entries."""
    return plan(n + m, nthreads)


def _splits(n, m, nchunks, kernel, *args):
    """(blo, chunk): chunk t is a[t*chunk:(t+1)*chunk] and b[blo[t]:blo[t+1]]; one chunk needs no search."""
    if nchunks == 1:
        return np.array([0, m], dtype=np.int64), n
    return kernel(*args, nchunks)


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


@nb.njit(cache=True, nogil=True, inline="always")
def _union_pos_chunk(a_keys, i, ie, b_keys, j, je, u, a_pos, b_pos):
    while i < ie or j < je:
        if j >= je:
            take_a = True
            take_b = False
        elif i >= ie:
            take_a = False
            take_b = True
        else:
            take_a = a_keys[i] <= b_keys[j]
            take_b = b_keys[j] <= a_keys[i]
        a_pos[u] = i if take_a else -1
        b_pos[u] = j if take_b else -1
        if take_a:
            i += 1
        if take_b:
            j += 1
        u += 1


@nb.njit(cache=True, nogil=True)
def _union_size_part(t, nparts, a_keys, b_keys, blo, chunk, sizes):
    n = a_keys.shape[0]
    i, hi = chunk_bounds(t, chunk, n)
    sizes[t + 1] = _union_size(a_keys, i, hi, b_keys, blo[t], blo[t + 1])


def union_offsets(a_keys, b_keys, nthreads):
    """(sizes, blo, chunk, nthreads): prefix-summed union sizes of each chunk of a (and its b range)."""
    nchunks, nthreads = chunking(a_keys.shape[0], b_keys.shape[0], nthreads)
    blo, chunk = _splits(a_keys.shape[0], b_keys.shape[0], nchunks, _b_splits, a_keys, b_keys)
    sizes = np.zeros(nchunks + 1, dtype=np.int64)
    run_parts(_union_size_part, nchunks, nthreads, a_keys, b_keys, blo, chunk, sizes)
    np.cumsum(sizes, out=sizes)
    return sizes, blo, chunk, nthreads


@nb.njit(cache=True, nogil=True)
def _union_positions_part(t, nparts, a_keys, b_keys, sizes, blo, chunk, a_pos, b_pos):
    n = a_keys.shape[0]
    i, hi = chunk_bounds(t, chunk, n)
    _union_pos_chunk(a_keys, i, hi, b_keys, blo[t], blo[t + 1], sizes[t], a_pos, b_pos)


def union_positions(a_keys, b_keys, sizes, blo, chunk, a_pos, b_pos, nthreads):
    run_parts(_union_positions_part, sizes.shape[0] - 1, nthreads, a_keys, b_keys, sizes, blo, chunk, a_pos, b_pos)


@nb.njit(cache=True, nogil=True)
def _union_columns_part(t, nparts, a_indices, b_indices, a_pos, b_pos, out):
    d = a_indices.shape[0]
    lo, hi = part_range(t, nparts, a_pos.shape[0])
    for u in range(lo, hi):
        p = a_pos[u]
        if p >= 0:
            for x in range(d):
                out[x, u] = a_indices[x, p]
        else:
            q = b_pos[u]
            for x in range(d):
                out[x, u] = b_indices[x, q]


def union_columns(a_indices, b_indices, a_pos, b_pos, out, nthreads):
    """Index columns of the union: from a where a_pos >= 0, else from b."""
    nparts, nthreads = plan(a_pos.shape[0] * max(a_indices.shape[0], 1), nthreads)
    run_parts(_union_columns_part, nparts, nthreads, a_indices, b_indices, a_pos, b_pos, out)
    return out


@nb.njit(cache=True, nogil=True, inline="always")
def _union_size(a_keys, i, ie, b_keys, j, je):
    c = 0
    while i < ie and j < je:
        ka = a_keys[i]
        kb = b_keys[j]
        if ka <= kb:
            i += 1
        if kb <= ka:
            j += 1
        c += 1
    return c + (ie - i) + (je - j)


# ---- fused coalesced union over index columns (keys computed on the fly) ------
@nb.njit(cache=True, nogil=True)
def _b_splits_idx(a_idx, b_idx, strides, nchunks):
    n = a_idx.shape[1]
    m = b_idx.shape[1]
    chunk = (n + nchunks - 1) // nchunks if n else 0
    lo = np.empty(nchunks + 1, dtype=np.int64)
    lo[0] = 0
    for t in range(1, nchunks):
        s = t * chunk
        lo[t] = m if s >= n else _lower_bound_idx(b_idx, strides, lo[t - 1], m, _key(a_idx, strides, s))
    lo[nchunks] = m
    return lo, chunk


@nb.njit(cache=True, nogil=True, inline="always")
def _union_size_idx(a_idx, i, ie, b_idx, j, je, strides, limits, flags):
    # the size of this chunk's union; every column it owns is checked on the way
    # (flags[0]: outside the limits; flags[1]: keys not strictly increasing)
    c = 0
    for q in range(i, ie):
        flags[0] += _outside(a_idx, limits, q)
    for q in range(j, je):
        flags[0] += _outside(b_idx, limits, q)
    if i < ie and j < je:
        ka = _key(a_idx, strides, i)
        kb = _key(b_idx, strides, j)
        while True:
            c += 1
            adv_a = ka <= kb
            adv_b = kb <= ka
            if adv_a:
                i += 1
                if i >= ie:
                    if adv_b:
                        j += 1
                    break
                kn = _key(a_idx, strides, i)
                if kn <= ka:
                    flags[1] += 1
                ka = kn
            if adv_b:
                j += 1
                if j >= je:
                    break
                kn = _key(b_idx, strides, j)
                if kn <= kb:
                    flags[1] += 1
                kb = kn
    return c + (ie - i) + (je - j)


# the take_a/take_b choice repeats _union_pos_chunk's, but on keys cached across steps
# (computed from index columns); a shared helper would need both keys read every step
@nb.njit(cache=True, nogil=True, inline="always")
def _merge_add_idx_chunk(a_idx, i, ie, b_idx, j, je, strides, a_values, b_values, negate,
                         out_idx, out_val, u):
    d = a_idx.shape[0]
    k = a_values.shape[1]
    ka = _key(a_idx, strides, i) if i < ie else 0
    kb = _key(b_idx, strides, j) if j < je else 0
    while i < ie or j < je:
        if j >= je:
            take_a = True
            take_b = False
        elif i >= ie:
            take_a = False
            take_b = True
        else:
            take_a = ka <= kb
            take_b = kb <= ka
        if take_a:
            for x in range(d):
                out_idx[x, u] = a_idx[x, i]
            if take_b:
                if negate:
                    for c in range(k):
                        out_val[u, c] = a_values[i, c] - b_values[j, c]
                else:
                    for c in range(k):
                        out_val[u, c] = a_values[i, c] + b_values[j, c]
            else:
                for c in range(k):
                    out_val[u, c] = a_values[i, c]
        else:
            for x in range(d):
                out_idx[x, u] = b_idx[x, j]
            if negate:
                for c in range(k):
                    out_val[u, c] = -b_values[j, c]
            else:
                for c in range(k):
                    out_val[u, c] = b_values[j, c]
        if take_a:
            i += 1
            if i < ie:
                ka = _key(a_idx, strides, i)
        if take_b:
            j += 1
            if j < je:
                kb = _key(b_idx, strides, j)
        u += 1


@nb.njit(cache=True, nogil=True)
def _union_size_idx_part(t, nparts, a_idx, b_idx, strides, limits, blo, chunk, sizes, flags):
    n = a_idx.shape[1]
    i, hi = chunk_bounds(t, chunk, n)
    sizes[t + 1] = _union_size_idx(a_idx, i, hi, b_idx, blo[t], blo[t + 1], strides, limits,
                                   flags[t])


def union_offsets_idx(a_idx, b_idx, strides, limits, nthreads):
    """(sizes, blo, chunk, flags, nthreads): prefix-summed union sizes of each chunk, and what
    its pass counted (flags[t, 0]: indices outside the limits; flags[t, 1]: keys out of order)."""
    nchunks, nthreads = chunking(a_idx.shape[1], b_idx.shape[1], nthreads)
    blo, chunk = _splits(a_idx.shape[1], b_idx.shape[1], nchunks, _b_splits_idx, a_idx, b_idx, strides)
    sizes = np.zeros(nchunks + 1, dtype=np.int64)
    flags = np.zeros((nchunks, 2), dtype=np.int64)
    run_parts(_union_size_idx_part, nchunks, nthreads, a_idx, b_idx, strides, limits, blo, chunk, sizes, flags)
    np.cumsum(sizes, out=sizes)
    return sizes, blo, chunk, flags, nthreads


@nb.njit(cache=True, nogil=True)
def _merge_add_idx_part(t, nparts, a_idx, b_idx, strides, sizes, blo, chunk, a_values, b_values, negate,
                        out_idx, out_val):
    n = a_idx.shape[1]
    i, hi = chunk_bounds(t, chunk, n)
    _merge_add_idx_chunk(a_idx, i, hi, b_idx, blo[t], blo[t + 1], strides,
                         a_values, b_values, negate, out_idx, out_val, sizes[t])


def merge_add_idx_write(a_idx, b_idx, strides, sizes, blo, chunk, a_values, b_values, negate, out_idx, out_val,
                        nthreads):
    run_parts(_merge_add_idx_part, sizes.shape[0] - 1, nthreads, a_idx, b_idx, strides, sizes, blo, chunk,
              a_values, b_values, negate, out_idx, out_val)
