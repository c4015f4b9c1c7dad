"""Ordered segment reductions for the reductions (SPEC 9): products, min/max, arg-min/max.

Each (segment, column) is reduced over the segment's entries in ``perm``
order (the stable sort's order, i.e. stored order). ``segment_prod``,
``segment_minmax`` and ``segment_arg`` visit them left to right, as the CUDA
kernels' threads do. The reductions' own row, ``segment_reduce`` (and the
fused ``reduce_sorted``/``reduce_by_key``), follows the blocked order: a
segment of at most ``TREE_LEAF`` entries left to right, a longer one as a
fixed tree (pieces of ``TREE_LEAF`` entries, then groups of ``TREE_FAN``
values, each left to right: :func:`_tree_arith`), which the CUDA layer
computes with many threads (cuda_kernels/reduce.cu: ``coo_reduce_tree``).
Integer sums and products and min/max come out the same in any grouping, so
only float and complex sums and products take the tree. A result never
depends on scheduling and equals the CUDA layer's bit for bit.

Thread mapping: the segments are split into ``nparts`` fixed ranges holding
about equal numbers of entries (``_part_segments``), run by
``threads.run_parts``; small inputs run as one part on the calling thread.

NaN rule of min/max (NumPy's): the first NaN met in a segment is the result.
Arg-min/max visit a segment in ascending ``sub`` order and keep the first
occurrence of the extreme value (the first NaN wins), as ``numpy.argmax``.
"""
import numba as nb
import numpy as np

from .parts import lower_bound, part_range, prefetch
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
    s0 = lower_bound(starts, 0, nseg, lo)
    s1 = nseg if t == nparts - 1 else lower_bound(starts, 0, nseg, hi)
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


# ---------------------------------------------------------------- the blocked order
TREE_LEAF = 256
"""Entries of a piece; a segment of at most this many is reduced left to right (``COO_TREE_LEAF``)."""
TREE_FAN = 32
"""Values per group at each level above the pieces (``COO_TREE_FAN`` in cuda_kernels/reduce.cu)."""
PREFETCH_AHEAD = 512  # values ahead of a row's start that _reduce_part_1d prefetches (4 KB of float64)


@nb.njit(cache=True, nogil=True, inline="always")
def _arith(is_prod, a, b):
    return a * b if is_prod else a + b


# inlined into its callers (each operation compiles one of them): compiled as a function of
# its own it costs a compilation more, and its code is generated again inside the caller
@nb.njit(cache=True, nogil=True, inline="always")
def _tree_arith(values, perm, has_perm, lo, hi, c, is_prod, scratch):
    """Column c of segment [lo, hi) summed (multiplied) in the blocked order.

    Pieces of TREE_LEAF entries each left to right; then the piece results, in
    order, in groups of TREE_FAN, each left to right; and so on until one value
    remains (``scratch`` holds a value per piece; each level is written over
    the one below: group j is written at j after its members j*FAN.. are read).
    A segment of at most TREE_LEAF entries is one piece: left to right.
    """
    m = 0
    for a in range(lo, hi, TREE_LEAF):
        b = a + TREE_LEAF if a + TREE_LEAF < hi else hi  # not min(): compiled as a function of its own
        acc = values[perm[a] if has_perm else a, c]
        for j in range(a + 1, b):
            acc = _arith(is_prod, acc, values[perm[j] if has_perm else j, c])
        scratch[m] = acc
        m += 1
    return _tree_levels(scratch, m, is_prod)


@nb.njit(cache=True, nogil=True, inline="always")
def _tree_levels(scratch, m, is_prod):
    """The levels above the pieces: scratch[:m] (the pieces' results, in order) in groups of
    TREE_FAN, each left to right, level by level (each written over the one below) until one
    value remains; returns it."""
    while m > 1:
        up = 0
        for a in range(0, m, TREE_FAN):
            acc = scratch[a]
            for q in range(a + 1, a + TREE_FAN if a + TREE_FAN < m else m):
                acc = _arith(is_prod, acc, scratch[q])
            scratch[up] = acc
            up += 1
        m = up
    return scratch[0]


@nb.njit(cache=True, nogil=True)
def _reduce_part(t, nparts, values, values2, perm, has_perm, starts, is_prod, out, scratches):
    # values2: the values as 2-D (n, k), for the segments taken through perm or through the tree;
    # values: the same, or 1-D (one value per entry, out 1-D too: see segment_reduce).
    # scratches[t]: a value per piece of the longest segment, from the driver (a kernel
    # that allocates also compiles Numba's allocation routines)
    s0, s1 = _part_segments(t, nparts, starts)
    scratch = scratches[t]
    if values.ndim == 1:
        # the hot loop is then a plain chain of adds with nothing else in it: the loop nest over
        # 2-D values, or the tree's code inside the loop (even never run), measured 1.1-1.25x
        # slower on the row sums; the long and the gathered segments are a second loop's
        longs = 0
        if not has_perm:
            for s in range(s0, s1):
                ulo = np.uint64(starts[s])
                uhi = np.uint64(starts[s + 1])
                if uhi - ulo > TREE_LEAF:
                    longs += 1
                    continue
                # unsigned positions: a signed index is tested for wraparound at every read,
                # which measured 1.25x on the row sums (the loop is a chain of dependent adds)
                acc = values[ulo]
                for j in range(ulo + np.uint64(1), uhi):
                    acc = _arith(is_prod, acc, values[j])
                out[s] = acc
        if has_perm or longs:
            for s in range(s0, s1):
                lo = starts[s]
                hi = starts[s + 1]
                if has_perm or hi - lo > TREE_LEAF:  # (a short segment is one piece: left to right)
                    out[s] = _tree_arith(values2, perm, has_perm, lo, hi, 0, is_prod, scratch)
        return
    k = values.shape[1]
    for s in range(s0, s1):
        lo = starts[s]
        hi = starts[s + 1]
        if hi - lo > TREE_LEAF or has_perm:
            for c in range(k):
                out[s, c] = _tree_arith(values2, perm, has_perm, lo, hi, c, is_prod, scratch)
            continue
        ulo = np.uint64(lo)
        uhi = np.uint64(hi)
        for c in range(k):
            acc = values[ulo, c]
            for j in range(ulo + np.uint64(1), uhi):
                acc = _arith(is_prod, acc, values[j, c])
            out[s, c] = acc


@nb.njit(cache=True, nogil=True)
def _reduce_part_1d(t, nparts, values, starts, is_prod, out, scratches):
    """_reduce_part of 1-D values in stored order (no perm), for large inputs: the same loop over
    the short segments, and the long ones in the blocked order of :func:`_tree_arith` with their
    pieces four at a time.

    A piece is a chain of dependent operations, and the pieces of a segment are independent:
    four of them reduced side by side (each still left to right, so the same bits) keep four
    chains in flight with no branch between them. The rows of the 2M-entry R-MAT graph longer
    than 256 entries hold 35% of its entries; on one thread they took 0.66 -> 0.40 ms. A kernel of
    its own, compiled only when a large input is met: a first small row sum compiles _reduce_part
    alone, as before.
    """
    s0, s1 = _part_segments(t, nparts, starts)
    scratch = scratches[t]
    leaf = np.uint64(TREE_LEAF)
    one = np.uint64(1)
    ahead = np.uint64(PREFETCH_AHEAD)
    longs = 0
    for s in range(s0, s1):
        ulo = np.uint64(starts[s])
        uhi = np.uint64(starts[s + 1])
        # two lines of the values a few KB ahead (a row of the uniform matrix spans about two):
        # the hardware's stream prefetch alone left the chain waiting on lines from L3
        prefetch(values, ulo + ahead)
        prefetch(values, ulo + ahead + np.uint64(8))
        if uhi - ulo > leaf:
            longs += 1
            continue
        acc = values[ulo]
        for j in range(ulo + one, uhi):
            acc = _arith(is_prod, acc, values[j])
        out[s] = acc
    if longs == 0:
        return
    for s in range(s0, s1):
        lo = np.uint64(starts[s])
        hi = np.uint64(starts[s + 1])
        if hi - lo <= leaf:
            continue
        m = 0
        a = lo
        while a + np.uint64(4) * leaf <= hi:
            b = a + leaf
            c = b + leaf
            d = c + leaf
            acc0 = values[a]
            acc1 = values[b]
            acc2 = values[c]
            acc3 = values[d]
            for j in range(one, leaf):
                acc0 = _arith(is_prod, acc0, values[a + j])
                acc1 = _arith(is_prod, acc1, values[b + j])
                acc2 = _arith(is_prod, acc2, values[c + j])
                acc3 = _arith(is_prod, acc3, values[d + j])
            scratch[m] = acc0
            scratch[m + 1] = acc1
            scratch[m + 2] = acc2
            scratch[m + 3] = acc3
            m += 4
            a = d + leaf
        while a < hi:
            b = a + leaf if a + leaf < hi else hi
            acc = values[a]
            for j in range(a + one, b):
                acc = _arith(is_prod, acc, values[j])
            scratch[m] = acc
            m += 1
            a = b
        out[s] = _tree_levels(scratch, m, is_prod)


_LARGE_1D = 1 << 16  # entries: from here one value per entry in stored order takes _reduce_part_1d


def segment_reduce(values, perm, has_perm, starts, op, nthreads):
    """out[s, c] = segment s of column c reduced by ``op`` in the blocked order (module docstring)."""
    if op in ("max", "min"):  # the same in any grouping: the left-to-right loop
        return segment_minmax(values, perm, has_perm, starts, op == "max", nthreads)
    if op not in ("sum", "prod"):
        raise ValueError(f"unknown reduction {op!r}; expected 'sum', 'prod', 'max' or 'min'")
    nseg, k = starts.shape[0] - 1, values.shape[1]
    out = np.empty((nseg, k), values.dtype)
    if out.size:
        nparts = _nparts(values.shape[0], nthreads)
        # room for a segment of every entry: O(1) to size (a scan for the longest segment
        # costs about 5% of a row sum), and a value per TREE_LEAF entries is small
        longest = int(starts[-1] - starts[0])
        scratches = np.empty((nparts, (longest + TREE_LEAF - 1) // TREE_LEAF), values.dtype)
        # one value per entry travels 1-D (its own specialisation; k > 1 compiles the 2-D one);
        # the 2-D form beside it serves the tree and the gathered segments (a 2-D view made in
        # the kernel, or the tree on 1-D columns, measured 0.2-0.3 s more compilation)
        v, o = (values.reshape(-1), out.reshape(-1)) if k == 1 else (values, out)
        if k == 1 and not has_perm and values.shape[0] >= _LARGE_1D:
            run_parts(_reduce_part_1d, nparts, nthreads, v, starts, op == "prod", o, scratches)
        else:
            run_parts(_reduce_part, nparts, nthreads, v, values, perm, has_perm, starts, op == "prod", o, scratches)
    return out


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


@nb.njit(cache=True, nogil=True)
def _run_result(keys, values, is_prod, tree, s, i, c, acc, scratch):
    """The run [s, i)'s result: ``acc`` (left to right), or the blocked order's when the run is long.

    A long run of float or complex values is read again through the tree
    (``tree``); integer results are the same in any grouping.
    """
    if not tree or i - s <= TREE_LEAF:
        return acc, scratch
    m = (i - s + TREE_LEAF - 1) // TREE_LEAF
    if scratch.shape[0] < m:
        scratch = np.empty(m, values.dtype)
    return _tree_arith(values, keys[:0], False, s, i, c, is_prod, scratch), scratch


@nb.njit(cache=True, nogil=True)
def _sorted_arith_1(keys, values, is_prod, tree, by_key, lo, hi, j, dest, out):
    # one column: a single loop over the entries, the run's key compared and its
    # value accumulated in the same iteration (the fastest form measured)
    n = keys.shape[0]
    scratch = np.empty(0, values.dtype)
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
            out[row, 0], scratch = _run_result(keys, values, is_prod, tree, s, i, 0, acc, scratch)
            j += 1
            if i >= hi:  # the next run starts in the next part's chunk
                return
            key = kk
            acc = values[i, 0]
            s = i
        i += 1
    row = key if by_key else j
    dest[row] = i - s if by_key else s
    out[row, 0], scratch = _run_result(keys, values, is_prod, tree, s, i, 0, acc, scratch)


@nb.njit(cache=True, nogil=True)
def _sorted_arith_part(t, nparts, keys, values, is_prod, tree, by_key, offsets, dest, out, accs):
    n = keys.shape[0]
    k = values.shape[1]
    lo, hi = part_range(t, nparts, n)
    j = offsets[t]
    if k == 1:
        _sorted_arith_1(keys, values, is_prod, tree, by_key, lo, hi, j, dest, out)
        return
    scratch = np.empty(0, values.dtype)
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
            out[row, c], scratch = _run_result(keys, values, is_prod, tree, s, i, c, acc[c], scratch)
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
        run_parts(_sorted_arith_part, nparts, nthreads, keys, values, op == "prod", values.dtype.kind in "fc",
                  by_key, offsets, dest, out, accs)
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
def _bykey_minmax(keys, values, is_max, counts, out, two):
    # ``out`` starts at the identity (-inf / +inf, or the integer extremes): the
    # first entry of a key always replaces it or equals it bit for bit. The kept value is
    # picked by index from a two-slot scratch array, not by a branch: x86 has no conditional
    # move for float registers, and each mispredicted branch waited on the table's load (a
    # random line per entry): column maxima of the 2M uniform matrix 17.5 -> 9.2-10.2 ms (the
    # kernel alone, one thread, medians of 21). Two threads, each into a table of its own, gained
    # nothing on the pass here (9.6 -> 9.3 ms) and cost its tables and their fold. ``two`` (2 items
    # of the values' dtype) comes from the caller: an np.empty here compiled NumPy's allocation
    # into the kernel (0.14 s more at a first call)
    k = values.shape[1]
    if k == 1:  # (flat views: the loop over one column cost a third more)
        vf = values.reshape(-1)
        of = out.reshape(-1)
        for i in range(keys.shape[0]):
            key = np.uint64(keys[i])
            counts[key] += 1
            acc = of[key]
            v = vf[i]
            take = (acc == acc) & ((v != v) | ((v > acc) if is_max else (v < acc)))
            two[0] = acc
            two[1] = v
            of[key] = two[np.int64(take)]
        return
    for i in range(keys.shape[0]):
        key = np.uint64(keys[i])
        counts[key] += 1
        for c in range(k):
            acc = out[key, c]
            v = values[i, c]
            take = (acc == acc) & ((v != v) | ((v > acc) if is_max else (v < acc)))
            two[0] = acc
            two[1] = v
            out[key, c] = two[np.int64(take)]


@nb.njit(cache=True, nogil=True)
def _bykey_long(keys, values, counts, is_prod, out):
    """The keys with more than TREE_LEAF entries reduced again in the blocked order.

    Their entries are put in key order by a stable counting sort (stored order
    within a key), then each key's run goes through the tree.
    """
    bound = counts.shape[0]
    k = values.shape[1]
    start = np.zeros(bound + 1, np.int64)
    longest = 0
    for q in range(bound):
        c = counts[q] if counts[q] > TREE_LEAF else 0
        start[q + 1] = start[q] + c
        longest = max(longest, c)
    perm = np.empty(start[bound], np.int64)
    fill = start[:bound].copy()
    for i in range(keys.shape[0]):
        q = keys[i]
        if counts[q] > TREE_LEAF:
            perm[fill[q]] = i
            fill[q] += 1
    scratch = np.empty((longest + TREE_LEAF - 1) // TREE_LEAF, values.dtype)
    for q in range(bound):
        if counts[q] > TREE_LEAF:
            for c in range(k):
                out[q, c] = _tree_arith(values, perm, True, start[q], start[q + 1], c, is_prod, scratch)


def reduce_by_key(keys, values, bound, op, is_sorted, nthreads):
    """(counts[bound], out[bound, k]): entries of equal key reduced in the blocked order; 0 where none.

    Unsorted keys: one serial pass in stored order into the table (then the
    keys with more than TREE_LEAF float entries again, in the blocked order). Sorted keys:
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
        if values.dtype.kind in "fc" and bound and values.shape[1] and int(counts.max()) > TREE_LEAF:
            _bykey_long(keys, values, counts, op == "prod", out)
        return counts, out
    dt = values.dtype
    if dt.kind == "f":
        ident = -np.inf if op == "max" else np.inf
    else:
        ident = np.iinfo(dt).min if op == "max" else np.iinfo(dt).max
    out = np.full((bound, values.shape[1]), ident, dt)
    _bykey_minmax(keys, np.ascontiguousarray(values), op == "max", counts, out, np.empty(2, dt))
    out[counts == 0] = 0
    return counts, out
