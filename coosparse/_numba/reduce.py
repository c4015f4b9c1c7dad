"""Ordered segment reductions for the reductions (SPEC 9): products, min/max, arg-min/max.

Each (segment, column) is reduced by one loop that visits the segment's
entries in ``perm`` order (the stable sort's order, i.e. stored order), so a
result never depends on scheduling and equals the CUDA kernels' (one thread
per (segment, column) running the same loop) bit for bit.

Thread mapping: the segments are split into ``nparts`` fixed ranges holding
about equal numbers of entries (``_part_segments``), run by
``threads.run_parts``; small inputs run as one part on the calling thread.

NaN rule of min/max (NumPy's): the first NaN met in a segment is the result.
Arg-min/max visit a segment in ascending ``sub`` order and keep the first
occurrence of the extreme value (the first NaN wins), as ``numpy.argmax``.
"""
import numba as nb
import numpy as np

from .threads import run_parts

_SERIAL_BELOW = 1 << 15  # fewer entries: one part on the calling thread
_PARTS_PER_THREAD = 4


@nb.njit(cache=True, nogil=True)
def _part_segments(t, nparts, starts):
    """Segments [s0, s1) of part t: cut where the entry count reaches t/nparts of the total."""
    nseg = starts.shape[0] - 1
    n = starts[nseg]
    lo = (t * n + nparts - 1) // nparts
    hi = ((t + 1) * n + nparts - 1) // nparts
    s0 = np.searchsorted(starts[:nseg], lo)
    s1 = nseg if t == nparts - 1 else np.searchsorted(starts[:nseg], hi)
    return s0, s1


@nb.njit(cache=True, nogil=True)
def _prod_part(t, nparts, values, perm, has_perm, starts, out):
    s0, s1 = _part_segments(t, nparts, starts)
    k = values.shape[1]
    for s in range(s0, s1):
        lo = starts[s]
        hi = starts[s + 1]
        for c in range(k):
            acc = values[perm[lo] if has_perm else lo, c]
            for j in range(lo + 1, hi):
                acc = acc * values[perm[j] if has_perm else j, c]
            out[s, c] = acc


@nb.njit(cache=True, nogil=True)
def _minmax_part(t, nparts, values, perm, has_perm, starts, is_max, out):
    s0, s1 = _part_segments(t, nparts, starts)
    k = values.shape[1]
    for s in range(s0, s1):
        lo = starts[s]
        hi = starts[s + 1]
        for c in range(k):
            acc = values[perm[lo] if has_perm else lo, c]
            if acc == acc:  # not NaN
                for j in range(lo + 1, hi):
                    v = values[perm[j] if has_perm else j, c]
                    if v != v:
                        acc = v
                        break
                    if (v > acc) if is_max else (v < acc):
                        acc = v
            out[s, c] = acc


@nb.njit(cache=True, nogil=True)
def _arg_part(t, nparts, values, perm, has_perm, starts, sub, is_max, best, pos, gap):
    s0, s1 = _part_segments(t, nparts, starts)
    k = values.shape[1]
    for s in range(s0, s1):
        lo = starts[s]
        hi = starts[s + 1]
        # the smallest non-negative sub missing from the (ascending, distinct) subs
        g = 0
        for j in range(lo, hi):
            if sub[perm[j] if has_perm else j] != g:
                break
            g += 1
        gap[s] = g
        for c in range(k):
            r = perm[lo] if has_perm else lo
            acc = values[r, c]
            at = sub[r]
            if acc == acc:
                for j in range(lo + 1, hi):
                    r = perm[j] if has_perm else j
                    v = values[r, c]
                    if v != v or ((v > acc) if is_max else (v < acc)):
                        acc = v
                        at = sub[r]
                        if v != v:
                            break
            best[s, c] = acc
            pos[s, c] = at


def _nparts(n, nthreads):
    return 1 if n < _SERIAL_BELOW else _PARTS_PER_THREAD * nthreads


def segment_prod(values, perm, has_perm, starts, nthreads):
    """out[s, c] = product of values[perm[j], c] over segment s, sequentially in j order."""
    out = np.empty((starts.shape[0] - 1, values.shape[1]), values.dtype)
    if out.size:
        run_parts(_prod_part, _nparts(values.shape[0], nthreads), nthreads, values, perm, has_perm, starts, out)
    return out


def segment_minmax(values, perm, has_perm, starts, is_max, nthreads):
    """out[s, c] = max (``is_max``) or min of segment s, column c; NaN if the segment holds one."""
    out = np.empty((starts.shape[0] - 1, values.shape[1]), values.dtype)
    if out.size:
        run_parts(_minmax_part, _nparts(values.shape[0], nthreads), nthreads, values, perm, has_perm, starts,
                  bool(is_max), out)
    return out


def segment_arg(values, perm, has_perm, starts, sub, is_max, nthreads):
    """(best, pos, gap) of each segment: extreme value, its first sub, first missing sub."""
    nseg = starts.shape[0] - 1
    k = values.shape[1]
    best = np.empty((nseg, k), values.dtype)
    pos = np.empty((nseg, k), np.int64)
    gap = np.zeros(nseg, np.int64)  # with no columns nobody needs the gap (the CUDA layer's rule too)
    if nseg and k:
        run_parts(_arg_part, _nparts(values.shape[0], nthreads), nthreads, values, perm, has_perm, starts, sub,
                  bool(is_max), best, pos, gap)
    return best, pos, gap
