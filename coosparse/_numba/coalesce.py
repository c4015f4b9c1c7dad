"""Fused coalesce for narrow shapes: linear index -> packed sort -> ordered sums.

Thread mapping: the pack and MSD-scatter phases split the entries into one
contiguous chunk per thread (per-chunk histograms keep the scatter stable);
the later phases split the MSD buckets into contiguous ranges of about equal
size, one per thread. Equal keys never straddle two buckets, and each run of
equal keys is summed sequentially in original order, so nothing depends on
scheduling: results are bit-identical from run to run.
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


@nb.njit(cache=True, parallel=True, nogil=True)
def _scatter_with_values(src, dst, values, vdst, offsets, top_shift):
    # thread t moves chunk t in order, word and value row to the same slot: stable
    n = src.shape[0]
    k = values.shape[1]
    nchunks = offsets.shape[0]
    chunk = (n + nchunks - 1) // nchunks
    for t in nb.prange(nchunks):
        lo = t * chunk
        hi = min(n, lo + chunk)
        off = offsets[t]
        for i in range(lo, hi):
            w = src[i]
            b = w >> top_shift
            j = off[b]
            off[b] = j + 1
            dst[j] = w
            for c in range(k):
                vdst[j, c] = values[i, c]


@nb.njit(cache=True, nogil=True)
def _reduce_bucket(words, scratch, vals, lo, hi, ib, nbits, hist, sums):
    """Sort bucket [lo, hi) and compact it: returns u, with the u distinct keys in
    words[lo:lo+u] and their ordered sums in vals[lo:lo+u]."""
    pmask = (np.int64(1) << ib) - 1
    # slots replace positions: the stable MSD pass left the bucket in position order
    for j in range(lo, hi):
        words[j] = ((words[j] >> ib) << ib) | (j - lo)
    _sort.sort_bucket(words, scratch, lo, hi, ib, nbits, hist)
    k = vals.shape[1]
    u = 0
    j = lo
    while j < hi:
        key = words[j] >> ib
        slot = lo + (words[j] & pmask)
        for c in range(k):
            sums[u, c] = vals[slot, c]
        j += 1
        while j < hi and (words[j] >> ib) == key:
            slot = lo + (words[j] & pmask)
            for c in range(k):
                sums[u, c] += vals[slot, c]
            j += 1
        words[lo + u] = key
        u += 1
    for q in range(u):
        for c in range(k):
            vals[lo + q, c] = sums[q, c]
    return u


@nb.njit(cache=True, parallel=True, nogil=True)
def _reduce_buckets(words, scratch, vals, bucket_starts, thread_buckets, ib, nbits, ucount):
    nthreads = thread_buckets.shape[0] - 1
    for t in nb.prange(nthreads):
        b0 = thread_buckets[t]
        b1 = thread_buckets[t + 1]
        biggest = 0
        for b in range(b0, b1):
            biggest = max(biggest, bucket_starts[b + 1] - bucket_starts[b])
        hist = np.empty(256, dtype=np.int64)
        sums = np.empty((biggest, vals.shape[1]), dtype=vals.dtype)
        for b in range(b0, b1):
            ucount[b] = _reduce_bucket(words, scratch, vals, bucket_starts[b], bucket_starts[b + 1],
                                       ib, nbits, hist, sums)


@nb.njit(cache=True, parallel=True, nogil=True)
def _gather_buckets(words, vals, bucket_starts, out_starts, thread_buckets, strides, shifts,
                    out_idx, out_val):
    nthreads = thread_buckets.shape[0] - 1
    ndim = strides.shape[0]
    k = vals.shape[1]
    for t in nb.prange(nthreads):
        for b in range(thread_buckets[t], thread_buckets[t + 1]):
            lo = bucket_starts[b]
            o = out_starts[b]
            for q in range(out_starts[b + 1] - o):
                r = words[lo + q]
                for d in range(ndim):
                    sh = shifts[d]
                    if sh >= 0:
                        x = r >> sh
                        r -= x << sh
                    else:
                        x = r // strides[d]
                        r -= x * strides[d]
                    out_idx[d, o + q] = x
                for c in range(k):
                    out_val[o + q, c] = vals[lo + q, c]


@nb.njit(cache=True, nogil=True)
def coalesce_packed(indices, strides, bound, values, nchunks):
    """The packed route: values travel with their words, so no random gathers.

    1. pack ``key << ib | i`` and histogram the top digit (one pass over indices);
    2. MSD scatter, moving each value row to its word's slot (stable);
    3. per bucket, in cache: positions become bucket slots, sort, sum each run
       of equal keys in slot (= original) order, compact;
    4. copy the compacted buckets to the output, unravelling the keys.
    Keys never straddle buckets, so every phase splits by buckets or chunks.
    """
    n = indices.shape[1]
    ib, kb, d1 = _sort.packed_plan(bound, n)
    top_shift = ib + kb - d1
    words, hist = _sort.pack_indices(indices, strides, ib, top_shift, np.int64(1) << d1, nchunks)
    _sort.check_hist(hist, n)
    offsets, bucket_starts = _sort.bucket_offsets(hist)
    sorted_words = np.empty(n, dtype=np.int64)
    vals = np.empty((n, values.shape[1]), dtype=values.dtype)
    _scatter_with_values(words, sorted_words, values, vals, offsets, top_shift)
    nbuckets = bucket_starts.shape[0] - 1
    thread_buckets = _sort.split_buckets(bucket_starts, nchunks)
    ucount = np.zeros(nbuckets, dtype=np.int64)
    _reduce_buckets(sorted_words, words, vals, bucket_starts, thread_buckets, ib, kb - d1, ucount)
    out_starts = np.zeros(nbuckets + 1, dtype=np.int64)
    for b in range(nbuckets):
        out_starts[b + 1] = out_starts[b] + ucount[b]
    m = out_starts[nbuckets]
    out_idx = np.empty((strides.shape[0], m), dtype=np.int64)
    out_val = np.empty((m, values.shape[1]), dtype=values.dtype)
    _gather_buckets(sorted_words, vals, bucket_starts, out_starts, thread_buckets, strides,
                    stride_shifts(strides), out_idx, out_val)
    return out_idx, out_val


@nb.njit(cache=True, nogil=True)
def coalesce_linear(indices, strides, bound, values, nchunks):
    """(indices, values) sorted by linear index with duplicates summed in original order.

    ``values`` is 2-D (n, k) in its accumulation dtype; ``bound`` the exclusive
    bound of the linear index.
    """
    n = indices.shape[1]
    if n > 1 and _sort.packed_fits(bound, n):
        return coalesce_packed(indices, strides, bound, values, nchunks)
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
