"""Segments of equal sorted keys, and deterministic segmented sums.

A segment's sum is taken sequentially in the order of ``perm`` (the stable
sort's order, i.e. original order), so results are bit-identical run to run
and match the CUDA kernels, which sum each segment in one thread.
"""
import numba as nb
import numpy as np

from .parts import part_range
from .threads import plan, run_parts


@nb.njit(cache=True, nogil=True)
def segment_starts(sorted_keys):
    """Positions where a new key begins, plus n at the end: int64[nseg + 1]."""
    n = sorted_keys.shape[0]
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    count = 1
    for i in range(1, n):
        if sorted_keys[i] != sorted_keys[i - 1]:
            count += 1
    starts = np.empty(count + 1, dtype=np.int64)
    starts[0] = 0
    j = 1
    for i in range(1, n):
        if sorted_keys[i] != sorted_keys[i - 1]:
            starts[j] = i
            j += 1
    starts[count] = n
    return starts


@nb.njit(cache=True, nogil=True)
def _segment_sum_part(t, nparts, values, perm, has_perm, starts, out):
    lo_s, hi_s = part_range(t, nparts, starts.shape[0] - 1)
    k = values.shape[1]
    for s in range(lo_s, hi_s):
        lo = starts[s]
        hi = starts[s + 1]
        for c in range(k):
            src = perm[lo] if has_perm else lo
            acc = values[src, c]
            for j in range(lo + 1, hi):
                src = perm[j] if has_perm else j
                acc += values[src, c]
            out[s, c] = acc


def segment_sum(values, perm, starts, has_perm, nthreads):
    """out[s, :] = sum of values[perm[j], :] for j in [starts[s], starts[s+1]), in order.

    ``values`` is 2-D (nnz, k) in its accumulation dtype; without ``has_perm``
    the values are already in sorted order. Parts are ranges of segments.
    """
    nseg = starts.shape[0] - 1
    out = np.empty((nseg, values.shape[1]), dtype=values.dtype)
    nparts, nthreads = plan(values.shape[0], nthreads)
    run_parts(_segment_sum_part, nparts, nthreads, values, perm, has_perm, starts, out)
    return out
