"""Merging sorted runs: the order of a concatenation whose pieces are each sorted.

``merge_runs(keys, offsets)`` returns the stable sort permutation of keys
made of ``r`` consecutive sorted runs (ties go to the earlier run, then the
earlier position: the permutation a stable sort would give). Concatenating
sorted arrays along a non-leading axis, ``roll`` and ``tile`` produce such
keys; a merge reads them sequentially instead of sorting.

Parallel split: ``nparts - 1`` splitter keys are taken from a sample of every
run; part ``p`` takes, from each run, the keys in ``[split[p-1], split[p])``
(found by binary search, ``lower_bound`` on both sides, so equal keys never
straddle parts), and merges them sequentially with an ``r``-way selection
(ties: lowest run). The output offset of a part is the number of keys before
its lower splitter in all runs together. Many runs (more than
``MAX_MERGE_RUNS``) are sorted instead (the wrapper decides); the result is
the same permutation.
"""
import numba as nb
import numpy as np

MAX_MERGE_RUNS = 16


@nb.njit(cache=True, nogil=True, inline="always")
def _lower_bound(a, lo, hi, k):
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < k:
            lo = mid + 1
        else:
            hi = mid
    return lo


@nb.njit(cache=True, parallel=True, nogil=True)
def merge_runs(keys, offsets, splitters, perm):
    """perm = stable order of ``keys`` made of sorted runs ``offsets`` (parts cut at ``splitters``)."""
    r = offsets.shape[0] - 1
    nparts = splitters.shape[0] + 1
    # cut[p, t]: first position of run t that belongs to part p (cut[nparts, t] = run end)
    cut = np.empty((nparts + 1, r), dtype=np.int64)
    for t in range(r):
        cut[0, t] = offsets[t]
        cut[nparts, t] = offsets[t + 1]
    for p in nb.prange(1, nparts):
        k = splitters[p - 1]
        for t in range(r):
            cut[p, t] = _lower_bound(keys, offsets[t], offsets[t + 1], k)
    out0 = np.zeros(nparts + 1, dtype=np.int64)
    for p in range(nparts):
        s = 0
        for t in range(r):
            s += cut[p + 1, t] - cut[p, t]
        out0[p + 1] = out0[p] + s
    for p in nb.prange(nparts):
        head = cut[p].copy()
        end = cut[p + 1]
        o = out0[p]
        stop = out0[p + 1]
        while o < stop:
            best = -1
            bk = 0
            for t in range(r):
                if head[t] < end[t]:
                    k = keys[head[t]]
                    if best < 0 or k < bk:
                        best = t
                        bk = k
            perm[o] = head[best]
            head[best] += 1
            o += 1
    return perm
