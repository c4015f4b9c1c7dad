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

from .intersect import _key, _lower_bound, _lower_bound_idx
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


# Past its end a side's key reads as _PAST, above every key (keys of indices inside the limits
# are below a size of at most 2**63 - 1), so each step takes the smaller key without asking
# which side is done. The part kernels hold their merge loops written out, with no helper:
# Numba copies an inlined helper's whole IR into each call site, which cost more compile time
# than the rest of the kernel.
_PAST = np.int64(2**63 - 1)
_LOW = np.int64(-2**63)


@nb.njit(cache=True, nogil=True)
def _union_size_idx_part(t, nparts, a_idx, b_idx, strides, limits, blo, chunk, sizes, flags):
    """sizes[t + 1]: the size of chunk t's union (a[t*chunk:(t+1)*chunk] with b[blo[t]:blo[t+1]]);
    flags[t]: (an index outside the limits, keys not strictly increasing), found on every column
    the chunk owns in the loop that computes its key (one read of each column)."""
    d = a_idx.shape[0]
    n = a_idx.shape[1]
    i, ie = chunk_bounds(t, chunk, n)
    j = blo[t]
    je = blo[t + 1]
    bad = down = c = np.int64(0)
    ka = kb = _LOW
    ta = tb = True
    while True:
        if ta:
            prev = ka
            ka = _PAST
            if i < ie:
                ka = np.int64(0)
                for x in range(d):
                    v = a_idx[x, i]
                    bad |= np.int64(np.uint64(v) >= limits[x])
                    ka += v * strides[x]
                down |= np.int64(ka <= prev)
        if tb:
            prev = kb
            kb = _PAST
            if j < je:
                kb = np.int64(0)
                for x in range(d):
                    v = b_idx[x, j]
                    bad |= np.int64(np.uint64(v) >= limits[x])
                    kb += v * strides[x]
                down |= np.int64(kb <= prev)
        if i >= ie and j >= je:
            break
        ta = ka <= kb
        tb = kb <= ka
        c += 1
        i += ta
        j += tb
    sizes[t + 1] = c
    flags[t, 0] = bad
    flags[t, 1] = down


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
    """Chunk t's union into out[sizes[t]:]: a's value, b's (negated with ``negate``), or their sum
    (difference) where both hold the key. The count pass checked every index and the order."""
    d = a_idx.shape[0]
    n = a_idx.shape[1]
    k = a_values.shape[1]
    i, ie = chunk_bounds(t, chunk, n)
    j = blo[t]
    je = blo[t + 1]
    u = sizes[t]
    ka = kb = _PAST
    ta = tb = True
    while True:
        if ta:
            ka = _PAST
            if i < ie:
                ka = np.int64(0)
                for x in range(d):
                    ka += a_idx[x, i] * strides[x]
        if tb:
            kb = _PAST
            if j < je:
                kb = np.int64(0)
                for x in range(d):
                    kb += b_idx[x, j] * strides[x]
        if i >= ie and j >= je:
            break
        ta = ka <= kb
        tb = kb <= ka
        p = i if ta else j
        for x in range(d):
            out_idx[x, u] = a_idx[x, p] if ta else b_idx[x, p]
        for c in range(k):
            # one side alone keeps its value as it is (a -0.0 stays -0.0)
            if ta and tb:
                v = a_values[i, c] - b_values[j, c] if negate else a_values[i, c] + b_values[j, c]
            elif ta:
                v = a_values[i, c]
            else:
                v = -b_values[j, c] if negate else b_values[j, c]
            out_val[u, c] = v
        i += ta
        j += tb
        u += 1


def merge_add_idx_write(a_idx, b_idx, strides, sizes, blo, chunk, a_values, b_values, negate, out_idx, out_val,
                        nthreads):
    run_parts(_merge_add_idx_part, sizes.shape[0] - 1, nthreads, a_idx, b_idx, strides, sizes, blo, chunk,
              a_values, b_values, negate, out_idx, out_val)
