"""Merging sorted runs: the order of a concatenation whose pieces are each sorted.

``merge_runs(keys, offsets)`` is the stable sort permutation of keys made of
``r`` consecutive sorted runs (ties go to the earlier run, then the earlier
position). Concatenating sorted arrays along a non-leading axis and ``roll``
produce such keys; a merge reads them sequentially instead of sorting.

Parallel split: ``nparts - 1`` splitter keys are taken from a sample of every
run; part ``p`` takes, from each run, the keys in ``[split[p-1], split[p])``
(``lower_bound`` on both sides, so equal keys never straddle parts) and
merges them with an ``r``-way selection (ties: lowest run). A part's output
offset is the number of keys below its lower splitter in all runs. Parts run
through ``threads.run_parts`` (see ``indexing.py`` for why not ``prange``).
More than ``MAX_MERGE_RUNS`` runs are sorted instead (the wrapper decides);
the permutation is the same.
"""
import numba as nb
import numpy as np

from .intersect import _lower_bound

MAX_MERGE_RUNS = 16


@nb.njit(cache=True, nogil=True)
def merge_cuts(keys, offsets, splitters):
    """(cut, out0): cut[p, t] = first position of run t in part p; out0[p] = part p's output offset."""
    r = offsets.shape[0] - 1
    nparts = splitters.shape[0] + 1
    cut = np.empty((nparts + 1, r), dtype=np.int64)
    for t in range(r):
        cut[0, t] = offsets[t]
        cut[nparts, t] = offsets[t + 1]
    for p in range(1, nparts):
        k = splitters[p - 1]
        for t in range(r):
            cut[p, t] = _lower_bound(keys, offsets[t], offsets[t + 1], k)
    out0 = np.zeros(nparts + 1, dtype=np.int64)
    for p in range(nparts):
        s = 0
        for t in range(r):
            s += cut[p + 1, t] - cut[p, t]
        out0[p + 1] = out0[p] + s
    return cut, out0


@nb.njit(cache=True, nogil=True)
def merge_part(p, nparts, keys, cut, out0, perm):
    """r-way merge of part p (ties: lowest run) into perm[out0[p]:out0[p + 1]]."""
    r = cut.shape[1]
    head = cut[p].copy()
    end = cut[p + 1]
    for o in range(out0[p], out0[p + 1]):
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
