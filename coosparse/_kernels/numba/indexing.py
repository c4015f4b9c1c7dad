"""Indexing kernels: gather by mask, binary-search row ranges, expansion of ranges.

The passes of ``a[key]`` (``coosparse/ops/indexing.py``) that are not plain
array arithmetic:

- ``mask_positions``: the ascending positions of the True entries of a mask
  (which stored entries a basic key keeps): per part a count, an exclusive
  scan of the counts, per part a branch-free write.
- ``search_ranges``: for query ranges ``[lo, hi)`` of key values, the range of
  positions they occupy in a sorted key array (a sorted array's rows, for
  ``a[rows]``). Random binary searches into megabytes of keys miss the cache
  on most steps, so the queries are visited in sorted order and each search
  starts at a guess (the previous answer plus the key distance times the
  keys' average density) and gallops from there: a few cache lines per query.
- ``expand_ranges``: ``(start, count)`` pairs to the concatenated positions
  ``start[i] .. start[i] + count[i] - 1`` and their owner ``i``; the output is
  split in equal parts, each finding its first owner by binary search in the
  offsets, so one huge range does not serialise the work.

Every kernel is a plain ``nogil`` function of one fixed part ``t`` of
``nparts`` (run by ``threads.run_parts``; inputs below a few hundred
thousand elements run as one part on the calling thread). Indexing answers
are often small: a ``parallel=True`` region costs a thread wake-up per call,
which on a loaded machine was measured at 20-30 ms (a scheduler time slice)
against microseconds of work. Each output element is written by one part;
no result depends on the schedule.
"""
import numba as nb
import numpy as np

from .intersect import _lower_bound
from .parts import copy_items, prefetch


# the kernels' bounds are conditional expressions, not min(): Numba compiles its min() as a
# function of its own (a cold-cache cost for every process)
@nb.njit(cache=True, nogil=True)
def mask_count(t, nparts, mask, counts):
    """counts[t + 1] = number of True entries in part t."""
    n = mask.shape[0]
    chunk = (n + nparts - 1) // nparts
    c = 0
    for i in range(t * chunk, n if n < (t + 1) * chunk else (t + 1) * chunk):
        c += np.int64(mask[i])
    counts[t + 1] = c


@nb.njit(cache=True, nogil=True)
def mask_write(t, nparts, mask, offsets, out):
    """Write part t's True positions from offsets[t] on (branch-free up to the part's last True)."""
    n = mask.shape[0]
    chunk = (n + nparts - 1) // nparts
    lo = t * chunk
    last = (n if n < lo + chunk else lo + chunk) - 1
    while last >= lo and not mask[last]:  # stop at the last True: the writes never reach
        last -= 1                         # the next part's slots
    j = offsets[t]
    for i in range(lo, last + 1):
        out[j] = i
        j += np.int64(mask[i])


@nb.njit(cache=True, nogil=True, inline="always")
def _gallop_lower_bound(keys, pos, n, k):
    """First position p with keys[p] >= k (keys sorted), searching outward from pos."""
    if pos >= n or keys[pos] >= k:
        hi = pos  # the answer lies at or before pos: gallop backwards
        step = 1
        lo = pos - step
        while lo > 0 and keys[lo] >= k:
            hi = lo
            step <<= 1
            lo = pos - step
        if lo < 0:
            lo = 0
    else:
        lo = pos + 1
        step = 1
        hi = pos + step
        while hi < n and keys[hi] < k:
            lo = hi + 1
            step <<= 1
            hi = pos + step
        if hi > n:
            hi = n
    return _lower_bound(keys, lo, hi, k)


@nb.njit(cache=True, nogil=True)
def search_part(t, nparts, sorted_keys, lo, hi, order, start, stop):
    """start[q] = lower_bound(lo[q]), stop[q] = lower_bound(hi[q]) (>= start[q]) for part t of ``order``."""
    n = sorted_keys.shape[0]
    m = lo.shape[0]
    chunk = (m + nparts - 1) // nparts
    if n == 0:
        for j in range(t * chunk, m if m < (t + 1) * chunk else (t + 1) * chunk):
            start[order[j]] = 0
            stop[order[j]] = 0
        return
    k0 = sorted_keys[0]
    # the span in floats (an int64 difference of keys outside the shape can wrap around), and
    # positive: keys out of order (a sorted flag that lies, with check=False) must not divide by
    # zero here; the searches below stay inside [0, n] whatever the keys' order
    span = float(sorted_keys[n - 1]) - float(k0) + 1.0
    density = n / span if span >= 1.0 else 0.0
    pos = 0
    prev = k0
    for j in range(t * chunk, m if m < (t + 1) * chunk else (t + 1) * chunk):
        q = order[j]
        k = lo[q]
        step = (float(k) - float(prev)) * density
        if step < 0.0:
            step = 0.0
        if step > n:
            step = float(n)
        guess = pos + np.int64(step)
        guess = guess if guess < n - 1 else n - 1
        pos = _gallop_lower_bound(sorted_keys, guess, n, k)
        prev = k
        e = pos
        kk = hi[q]
        if kk > k:
            c = 0
            while e < n and c < 16 and sorted_keys[e] < kk:  # rows are short: scan first
                e += 1
                c += 1
            if c == 16:
                e = _gallop_lower_bound(sorted_keys, e, n, kk)
        start[q] = pos
        stop[q] = e


@nb.njit(cache=True, nogil=True, inline="always")
def _range_part(t, nparts, ends, total):
    """(p0, p1, i): part t's output positions [p0, p1) and the range i holding p0 (first i with
    ends[i] > p0; ``ends`` is the inclusive scan of the range lengths)."""
    chunk = (total + nparts - 1) // nparts
    p0 = t * chunk
    p1 = total if total < p0 + chunk else p0 + chunk
    a = 0
    b = ends.shape[0]
    while a < b:
        mid = (a + b) >> 1
        if ends[mid] <= p0:
            a = mid + 1
        else:
            b = mid
    return p0, p1, a


@nb.njit(cache=True, nogil=True)
def expand_part(t, nparts, start, ends, total, rows, owner):
    """Output positions of part t: rows/owner of the concatenated ranges (``ends``: inclusive scan)."""
    p0, p1, i = _range_part(t, nparts, ends, total)
    p = p0
    while p < p1:
        begin = ends[i - 1] if i > 0 else 0
        stop = ends[i] if ends[i] < p1 else p1
        base = start[i] - begin
        for q in range(p, stop):
            rows[q] = base + q
            owner[q] = i
        p = stop
        i += 1


ROW_SPANS_PREFETCH = 16
"""The row spans pass hints the pointer's line of the row this many rows ahead."""


@nb.njit(cache=True, nogil=True)
def row_spans(ptr, rows, start, ends):
    """start[i] = ptr[rows[i]], ends = inclusive scan of the rows' lengths; returns the total, or
    -1 - i for the first row i outside the pointer (nothing is read for it).

    One pass with the pointer's lines prefetched ahead: random rows miss the cache on most
    lookups, and NumPy's ``ptr[rows]``, ``ptr[rows + 1] - start`` and ``cumsum`` take three
    passes (measured 2.5-3x this one's time on 10,000 rows of a 1 MB pointer, cache warm or cold).
    """
    m = rows.shape[0]
    nrows = ptr.shape[0] - 1
    total = 0
    for i in range(m):
        if i + ROW_SPANS_PREFETCH < m:
            prefetch(ptr, np.uint64(rows[i + ROW_SPANS_PREFETCH]))
        r = rows[i]
        if r < 0 or r >= nrows:
            return -1 - i
        s = ptr[r]
        start[i] = s
        total += ptr[r + 1] - s
        ends[i] = total
    return total


ROW_SPANS_KERNEL_MIN = 4096
"""Fewer rows take NumPy's passes: the one-pass kernel compiles only for long row lists."""


def spans_of_rows(ptr, rows):
    """(start, ends) of ``rows`` (a writeable int64 array) in row pointer ``ptr``: start[i] =
    ptr[rows[i]], ends the inclusive scan of the rows' lengths. IndexError for a row outside."""
    m, nrows = rows.shape[0], ptr.shape[0] - 1
    if m < ROW_SPANS_KERNEL_MIN:
        lo, hi = (int(rows.min()), int(rows.max())) if m else (0, -1)
        if lo < 0 or hi >= nrows:
            raise IndexError(f"row {lo if lo < 0 else hi} is outside the row pointer's {nrows} rows")
        start = ptr[rows]
        return start, np.cumsum(ptr[rows + 1] - start)
    start, ends = np.empty(m, np.int64), np.empty(m, np.int64)
    total = row_spans(ptr, rows, start, ends)
    if total < 0:
        raise IndexError(f"row {int(rows[-1 - total])} is outside the row pointer's {nrows} rows")
    return start, ends


TAKE_PREFETCH = 8
"""The fused range gather hints the cache lines of the range this many ranges ahead ..."""
TAKE_PREFETCH_ITEMS = 32
"""... those of its first this many items (four lines of 8-byte items: longer rows stream)."""


@nb.njit(cache=True, nogil=True)
def take_ranges_part(t, nparts, indices, values, start, ends, total, out_idx, out_val):
    """Part t of the fused range gather: out_idx[0] = owner, out_idx[1:] = indices[:, rows],
    out_val = values[rows], rows the concatenated ranges (``ends``: inclusive scan of the counts)."""
    d = indices.shape[0]
    k = values.shape[1]
    p0, p1, i = _range_part(t, nparts, ends, total)
    if d == 1 and k == 1:
        # a matrix of scalars: per range the columns and the values copied by memcpy, the owner
        # filled, not the loop nests over index rows and value words below (twice the copy's
        # time), nor one loop writing all three (1.3-1.5x three loops: LLVM checks three outputs
        # against two inputs for overlap before each vectorised range, ~15 entries here). The
        # two copies as loops of their own measured 1.1-1.2x memcpy, and the owner's loop 1.15x
        # the fill of whole groups of eight (Xeon, kernel alone, one thread).
        # Positions are unsigned (np.uint64): with signed ones Numba tests every index for
        # wraparound, and LLVM vectorises the loop with scatter/gather instructions on that
        # account (3-8x slower than plain copies, measured on AVX-512 AMD Zen 4)
        col = indices[0]
        own = out_idx[0]
        out_col = out_idx[1]
        m = start.shape[0]
        lim = np.uint64(p1)
        p = p0
        while p < p1:
            if i + TAKE_PREFETCH < m:  # a later range's lines: random rows miss the cache
                ia = i + TAKE_PREFETCH
                ahead = np.uint64(start[ia])
                cnt = ends[ia] - ends[ia - 1]
                cnt = cnt if cnt < TAKE_PREFETCH_ITEMS else TAKE_PREFETCH_ITEMS
                if cnt > 0:
                    # every line the range's first items touch (it need not start a line)
                    last = ahead + np.uint64(cnt - 1)
                    q = ahead
                    while q < last:
                        prefetch(col, q)
                        prefetch(values, q)
                        q += np.uint64(8)
                    prefetch(col, last)
                    prefetch(values, last)
            begin = ends[i - 1] if i > 0 else 0
            stop = ends[i] if ends[i] < p1 else p1
            src = np.uint64(start[i] + (p - begin))
            dst = np.uint64(p)
            n = np.uint64(stop - p)
            copy_items(out_col, dst, col, src, n)
            copy_items(out_val, dst, values, src, n)
            q = dst
            end = dst + n
            if end + np.uint64(7) <= lim:
                # whole groups of eight: the last one runs into the next range's owners, which
                # that range writes next (never past the part's end: parts run in parallel)
                while q < end:
                    for j in range(8):
                        own[q + np.uint64(j)] = i
                    q += np.uint64(8)
            else:
                while q < end:
                    own[q] = i
                    q += np.uint64(1)
            p = stop
            i += 1
        return
    # (signed positions here: unsigned ones measured +0.1 s of compilation for this path, which
    # serves only hybrid values and arrays of more than two dimensions)
    p = p0
    while p < p1:
        begin = ends[i - 1] if i > 0 else 0
        stop = ends[i] if ends[i] < p1 else p1
        src = start[i] + (p - begin)
        n = stop - p
        for q in range(n):
            out_idx[0, p + q] = i
        for r in range(d):
            row = indices[r]
            dst = out_idx[r + 1]
            for q in range(n):
                dst[p + q] = row[src + q]
        for q in range(n):
            for c in range(k):
                out_val[p + q, c] = values[src + q, c]
        p = stop
        i += 1
