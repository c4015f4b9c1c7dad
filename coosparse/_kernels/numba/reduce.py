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

from .parts import part_range
from .threads import run_parts

_SERIAL_BELOW = 1 << 15  # fewer entries: one part on the calling thread
_PARTS_PER_THREAD = 4


@nb.njit(cache=True, nogil=True, inline="always")
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


# ---------------------------------------------------------------- fused: runs of sorted keys
# Part t owns the runs that START in its chunk of entries (a run may extend into
# the next chunk, whose part skips it), so every run is reduced sequentially by
# one thread, in stored order. A run is reduced in the same loop that finds its
# end (each entry read once: measured 5-10x faster than finding the run, then
# reducing it). ``by_key``: the result of the run of key q goes to row q of a
# table and its length to dest[q] (reduce_by_key of sorted keys); otherwise to
# row j (the j-th run overall, from ``offsets``) with its start in dest[j]
# (reduce_sorted).
@nb.njit(cache=True, nogil=True)
def _heads_part(t, nparts, keys, counts):
    lo, hi = part_range(t, nparts, keys.shape[0])
    c = 0
    for i in range(lo, hi):
        if i == 0 or keys[i] != keys[i - 1]:
            c += 1
    counts[t] = c


@nb.njit(cache=True, nogil=True, inline="always")
def _first_head(keys, lo, hi):
    i = lo
    if i > 0:
        while i < hi and keys[i] == keys[i - 1]:
            i += 1
    return i


@nb.njit(cache=True, nogil=True, inline="always")
def _sorted_arith_1(keys, values, is_prod, by_key, lo, hi, j, dest, out):
    # one column: a single loop over the entries, the run's key compared and its
    # value accumulated in the same iteration (the fastest form measured)
    n = keys.shape[0]
    i = _first_head(keys, lo, hi)
    if i >= hi:
        return
    key = keys[i]
    acc = values[i, 0]
    s = i
    i += 1
    while i < n:
        kk = keys[i]
        if kk == key:
            acc = acc * values[i, 0] if is_prod else acc + values[i, 0]
        else:
            row = key if by_key else j
            dest[row] = i - s if by_key else s
            out[row, 0] = acc
            j += 1
            if i >= hi:  # the next run starts in the next part's chunk
                return
            key = kk
            acc = values[i, 0]
            s = i
        i += 1
    row = key if by_key else j
    dest[row] = i - s if by_key else s
    out[row, 0] = acc


@nb.njit(cache=True, nogil=True)
def _sorted_arith_part(t, nparts, keys, values, is_prod, by_key, offsets, dest, out, accs):
    n = keys.shape[0]
    k = values.shape[1]
    lo, hi = part_range(t, nparts, n)
    j = offsets[t]
    if k == 1:
        _sorted_arith_1(keys, values, is_prod, by_key, lo, hi, j, dest, out)
        return
    acc = accs[t]
    i = _first_head(keys, lo, hi)
    while i < hi:
        key = keys[i]
        s = i
        for c in range(k):
            acc[c] = values[i, c]
        i += 1
        while i < n and keys[i] == key:
            for c in range(k):
                acc[c] = acc[c] * values[i, c] if is_prod else acc[c] + values[i, c]
            i += 1
        row = key if by_key else j
        dest[row] = i - s if by_key else s
        for c in range(k):
            out[row, c] = acc[c]
        j += 1


@nb.njit(cache=True, nogil=True)
def _sorted_minmax_part(t, nparts, keys, values, is_max, by_key, offsets, dest, out, accs):
    n = keys.shape[0]
    k = values.shape[1]
    lo, hi = part_range(t, nparts, n)
    j = offsets[t]
    acc = accs[t]
    i = _first_head(keys, lo, hi)
    while i < hi:
        key = keys[i]
        s = i
        for c in range(k):
            acc[c] = values[i, c]
        i += 1
        while i < n and keys[i] == key:
            for c in range(k):
                a = acc[c]
                v = values[i, c]
                if a == a and (v != v or ((v > a) if is_max else (v < a))):
                    acc[c] = v
            i += 1
        row = key if by_key else j
        dest[row] = i - s if by_key else s
        for c in range(k):
            out[row, c] = acc[c]
        j += 1


def _sorted_runs(keys, values, op, by_key, offsets, dest, out, nparts, nthreads):
    accs = np.empty((nparts, values.shape[1]), values.dtype)  # each part's running row
    if op in ("sum", "prod"):
        run_parts(_sorted_arith_part, nparts, nthreads, keys, values, op == "prod", by_key, offsets, dest, out, accs)
    else:
        run_parts(_sorted_minmax_part, nparts, nthreads, keys, values, op == "max", by_key, offsets, dest, out, accs)


def reduce_sorted(keys, values, op, nthreads):
    """(starts, out): the runs of equal sorted keys and each run reduced in order by ``op``."""
    n = keys.shape[0]
    nparts = _nparts(n, nthreads)
    counts = np.zeros(nparts, np.int64)
    run_parts(_heads_part, nparts, nthreads, keys, counts)
    offsets = np.zeros(nparts + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    m = int(offsets[nparts])
    starts = np.empty(m + 1, np.int64)
    starts[m] = n
    out = np.zeros((m, values.shape[1]), values.dtype)
    _sorted_runs(keys, values, op, False, offsets, starts, out, nparts, nthreads)
    return starts, out


# ---------------------------------------------------------------- fused: dense accumulator by key
# reduce_by_key: one pass in stored order into an accumulator indexed by key
# (serial: each key's entries are combined in stored order, exactly the
# sequential segment reduction of a stable sort, without sorting).
@nb.njit(cache=True, nogil=True)
def _bykey_arith(keys, values, is_prod, counts, out):
    k = values.shape[1]
    for i in range(keys.shape[0]):
        key = keys[i]
        if counts[key] == 0:
            for c in range(k):
                out[key, c] = values[i, c]
        else:
            for c in range(k):
                out[key, c] = out[key, c] * values[i, c] if is_prod else out[key, c] + values[i, c]
        counts[key] += 1


@nb.njit(cache=True, nogil=True)
def _bykey_minmax(keys, values, is_max, counts, out):
    # ``out`` starts at the identity (-inf / +inf, or the integer extremes): the
    # first entry of a key always replaces it or equals it bit for bit
    k = values.shape[1]
    for i in range(keys.shape[0]):
        key = keys[i]
        counts[key] += 1
        for c in range(k):
            acc = out[key, c]
            v = values[i, c]
            if acc == acc and (v != v or ((v > acc) if is_max else (v < acc))):
                out[key, c] = v


def reduce_by_key(keys, values, bound, op, is_sorted, nthreads):
    """(counts[bound], out[bound, k]): entries of equal key reduced in stored order; 0 where none.

    Unsorted keys: one serial pass in stored order into the table. Sorted keys:
    the runs, split between threads as in :func:`reduce_sorted` (each run
    reduced by one thread), written straight into the table.
    """
    counts = np.zeros(bound, np.int64)
    if is_sorted:
        out = np.zeros((bound, values.shape[1]), values.dtype)
        nparts = _nparts(keys.shape[0], nthreads)
        _sorted_runs(keys, values, op, True, np.zeros(nparts + 1, np.int64), counts, out, nparts, nthreads)
        return counts, out
    if op in ("sum", "prod"):
        out = np.zeros((bound, values.shape[1]), values.dtype)
        _bykey_arith(keys, values, op == "prod", counts, out)
        return counts, out
    dt = values.dtype
    if dt.kind == "f":
        ident = -np.inf if op == "max" else np.inf
    else:
        ident = np.iinfo(dt).min if op == "max" else np.iinfo(dt).max
    out = np.full((bound, values.shape[1]), ident, dt)
    _bykey_minmax(keys, values, op == "max", counts, out)
    out[counts == 0] = 0
    return counts, out
