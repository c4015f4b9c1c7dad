"""Fused coalesce for narrow shapes: linear index -> packed sort -> ordered sums.

Thread mapping: every phase splits its array into one contiguous chunk per
thread. The output phase counts, per chunk, the segments that *start* in it,
and each chunk then writes exactly those segments, reading past its end when
its last segment continues into the next chunk. Sums run sequentially over a
segment in original order, so nothing depends on scheduling.
"""
import numba as nb
import numpy as np

from . import segment as _seg
from . import sort as _sort


@nb.njit(cache=True, nogil=True)
def stride_shifts(strides):
    """log2 of each stride that is a power of two, else -1 (shifts instead of divisions)."""
    out = np.empty(strides.shape[0], dtype=np.int64)
    for d in range(strides.shape[0]):
        s = strides[d]
        out[d] = -1
        if s > 0 and (s & (s - 1)) == 0:
            b = 0
            while (np.int64(1) << b) != s:
                b += 1
            out[d] = b
    return out


_BLOCK = 2048  # values gathered per block: independent loads first, then the sums


@nb.njit(cache=True, nogil=True)
def _emit_chunk(words, ib, strides, shifts, values, lo, hi, s, out_idx, out_val):
    # Segments starting in [lo, hi), written from slot s on; the last may run past hi.
    # Each block first gathers its values (independent random loads the CPU can
    # overlap) and then walks them in order (the dependent part).
    n = words.shape[0]
    k = values.shape[1]
    ndim = strides.shape[0]
    pmask = (np.int64(1) << ib) - 1
    j = lo
    if j > 0:
        prev = words[j - 1] >> ib
        while j < hi and (words[j] >> ib) == prev:
            j += 1  # continues a segment that an earlier chunk owns
    if j >= hi:
        return
    buf = np.empty((_BLOCK, k), dtype=values.dtype)
    prev = -1
    s -= 1
    done = False
    while j < n and not done:
        e = min(n, j + _BLOCK)
        for jj in range(j, e):
            i = words[jj] & pmask
            for c in range(k):
                buf[jj - j, c] = values[i, c]
        for jj in range(j, e):
            key = words[jj] >> ib
            if key != prev:
                if jj >= hi:
                    done = True
                    break
                s += 1
                prev = key
                r = key
                for d in range(ndim):
                    sh = shifts[d]
                    if sh >= 0:
                        q = r >> sh
                        r -= q << sh
                    else:
                        q = r // strides[d]
                        r -= q * strides[d]
                    out_idx[d, s] = q
                for c in range(k):
                    out_val[s, c] = buf[jj - j, c]
            else:
                for c in range(k):
                    out_val[s, c] += buf[jj - j, c]
        j = e


@nb.njit(cache=True, nogil=True)
def _count_chunk(words, ib, lo, hi):
    c = 0
    if lo < hi and (lo == 0 or (words[lo] >> ib) != (words[lo - 1] >> ib)):
        c = 1
    for j in range(lo + 1, hi):
        if (words[j] >> ib) != (words[j - 1] >> ib):
            c += 1
    return c


@nb.njit(cache=True, parallel=True, nogil=True)
def _count_starts(words, ib, nchunks):
    n = words.shape[0]
    chunk = (n + nchunks - 1) // nchunks
    counts = np.zeros(nchunks + 1, dtype=np.int64)
    for t in nb.prange(nchunks):
        lo = t * chunk
        counts[t + 1] = _count_chunk(words, ib, lo, min(n, lo + chunk))
    return counts


@nb.njit(cache=True, parallel=True, nogil=True)
def _emit_parallel(words, ib, strides, shifts, values, counts, out_idx, out_val):
    n = words.shape[0]
    nchunks = counts.shape[0] - 1
    chunk = (n + nchunks - 1) // nchunks
    for t in nb.prange(nchunks):
        lo = t * chunk
        _emit_chunk(words, ib, strides, shifts, values, lo, min(n, lo + chunk), counts[t], out_idx, out_val)


@nb.njit(cache=True, nogil=True)
def emit_segments(words, ib, strides, values, nchunks):
    """Unique keys of sorted packed words (unravelled by ``strides``) and ordered sums."""
    counts = _count_starts(words, ib, nchunks)
    for t in range(nchunks):
        counts[t + 1] += counts[t]
    m = counts[nchunks]
    out_idx = np.empty((strides.shape[0], m), dtype=np.int64)
    out_val = np.empty((m, values.shape[1]), dtype=values.dtype)
    _emit_parallel(words, ib, strides, stride_shifts(strides), values, counts, out_idx, out_val)
    return out_idx, out_val


@nb.njit(cache=True, nogil=True)
def coalesce_linear(indices, strides, bound, values, nchunks):
    """(indices, values) sorted by linear index with duplicates summed in original order.

    ``values`` is 2-D (n, k) in its accumulation dtype; ``bound`` the exclusive
    bound of the linear index.
    """
    n = indices.shape[1]
    if n > 1 and _sort.packed_fits(bound, n):
        ib, kb, d1 = _sort.packed_plan(bound, n)
        words, hist = _sort.pack_indices(indices, strides, ib, ib + kb - d1, np.int64(1) << d1, nchunks)
        _sort.check_hist(hist, n)
        words = _sort.sort_packed(words, hist, ib, kb, d1)
        return emit_segments(words, ib, strides, values, nchunks)
    # keys too wide to pack with their positions: key/permutation radix sort
    ndim = indices.shape[0]
    keys = np.zeros(n, dtype=np.int64)
    for i in range(n):
        for d in range(ndim):
            keys[i] += indices[d, i] * strides[d]
    sorted_keys, perm = _sort.sort_pairs_lsd(keys, bound, nchunks)
    starts = _seg.segment_starts(sorted_keys)
    nseg = starts.shape[0] - 1
    sums = _seg.segment_sum(values, perm, starts, True)
    out_idx = np.empty((ndim, nseg), dtype=np.int64)
    for s in range(nseg):
        r = sorted_keys[starts[s]]
        for d in range(ndim):
            q = r // strides[d]
            out_idx[d, s] = q
            r -= q * strides[d]
    return out_idx, sums
