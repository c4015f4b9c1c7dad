"""SpGEMM (COO x COO) on the CPU: row-wise Gustavson (the spgemm family).

For each output row, the products of A's row entries (grouped order) with B's
row entries (grouped order); an output element is its first product plus the
next ones in that order, and each row is written by exactly one part, so
results never depend on the thread schedule and are bit-identical to the CUDA
layer (expand, stable sort by (row, column), ordered sums). A row of at most
``SMALL_ROW`` products is summed in its own output slots and sorted by
insertion; a longer one in a dense accumulator per part (``ncols`` words) when
``ncols <= SPA_MAX_COLS``, its columns read in order from a bitmap and its
summary; beyond, a stable per-row sort of the products. Each row's products
are counted first (``_row_flops``, parallel parts; NumPy passes for a small
A): few products in all (``_one_pass``) are written in one pass into room for
all of them and packed; more take two passes (``_spgemm_count_part``, then
the fill), like scipy's.

Bad input: A's entries are checked in the pass that counts the products
(``_row_flops``), B's columns in one pass of their own; flags as in
``linalg.py`` (column 0: indices out of bounds, column 1: row keys that do not
increase), raised by ``on_flags`` before any product is formed.
"""
import ctypes

import numba as nb
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros  # an LLVM cttz; used by Numba's own code

from .linalg import NUMPY_BELOW, _u, balanced_bounds, fresh
from .parts import nparts_for, prefetch
from .threads import run_parts

# largest column count for the dense accumulator of spgemm (8 + 8 bytes per column per part, and 2
# for the count pass's marks)
SPA_MAX_COLS = 1 << 22
# up to this many products (or twice the operands' entries), one pass writes them (see spgemm)
ONE_PASS_PRODUCTS = 1 << 21

# A's entries are walked in order, each reading B's row pointer at a random place: fetched this
# many entries ahead
SPGEMM_PREFETCH = 16
# the fill's short rows prefetch B's rows this many A entries ahead (4-16 measured level)
FILL_PREFETCH = 8


@nb.njit(cache=True, nogil=True)
def _row_flops_part(t, nparts, bounds, a_offsets, a_rows, has_a_rows, row_bound, a_perm, has_a_perm, a_cols,
                    b_offsets, flags, out):
    """Products of each output row of part t: out[r + 1] (a running total after a cumsum).

    The pass that reads every A entry checks it: A's column (B's row) outside
    [0, K) and A's row keys outside [0, row_bound) count in flags[t, 0] (such a
    column contributes nothing); row keys that do not increase (a sorted flag
    that lies) in flags[t, 1].
    """
    r0 = bounds[t]
    r1 = bounds[t + 1]
    kb = _u(b_offsets.shape[0] - 1)
    pend = a_offsets[r1]
    bad = 0
    down = 0
    for r in range(r0, r1):
        if has_a_rows:
            if _u(a_rows[r]) >= row_bound:
                bad += 1
            if r and a_rows[r] <= a_rows[r - 1]:
                down += 1
        f = 0
        for p in range(a_offsets[r], a_offsets[r + 1]):
            if p + SPGEMM_PREFETCH < pend:  # B's row pointer at a later entry: a random read
                prefetch(b_offsets, _u(a_cols[_u(a_perm[p + SPGEMM_PREFETCH]) if has_a_perm
                                              else _u(p + SPGEMM_PREFETCH)]))
            e = a_perm[p] if has_a_perm else p
            k = a_cols[e]
            if _u(k) >= kb:
                bad += 1
                continue
            f += b_offsets[k + 1] - b_offsets[k]
        out[r + 1] = f
    flags[t, 0] = bad
    flags[t, 1] = down


def _row_flops_numpy(a_offsets, a_rows, has_a_rows, row_bound, a_perm, has_a_perm, a_cols, b_offsets):
    """:func:`_row_flops` of a small A in NumPy passes: the same checks, and the same totals when
    they find nothing (otherwise the totals are not used: ``spgemm`` raises first)."""
    nrows = a_offsets.shape[0] - 1
    flags = np.zeros((1, 2), dtype=np.int64)
    out = np.zeros(nrows + 1, dtype=np.int64)
    if has_a_rows:
        flags[0, 0] = np.count_nonzero(a_rows.view(np.uint64) >= np.uint64(row_bound))
        flags[0, 1] = np.count_nonzero(a_rows[1:] <= a_rows[:-1])
    p0, p1 = int(a_offsets[0]), int(a_offsets[-1])
    k = a_cols[a_perm[p0:p1]] if has_a_perm else a_cols[p0:p1]
    kb = b_offsets.shape[0] - 1
    flags[0, 0] += np.count_nonzero(k.view(np.uint64) >= np.uint64(kb))
    if flags.any():
        return out, flags
    per_entry = np.empty(p1 - p0 + 1, dtype=np.int64)  # running total of B's row lengths, from 0
    per_entry[0] = 0
    np.cumsum(b_offsets[k + 1] - b_offsets[k], out=per_entry[1:])
    np.take(per_entry, a_offsets - p0, out=out)
    return out, flags


def _row_flops(a_offsets, a_rows, has_a_rows, row_bound, a_perm, has_a_perm, a_cols, b_offsets, nthreads):
    """(products per output row as a running total int64[nrows + 1], flags int64[nparts, 2])."""
    nrows = a_offsets.shape[0] - 1
    if a_cols.shape[0] + nrows < NUMPY_BELOW:
        return _row_flops_numpy(a_offsets, a_rows, has_a_rows, row_bound, a_perm, has_a_perm, a_cols, b_offsets)
    out = np.empty(nrows + 1, dtype=np.int64)
    out[0] = 0
    nparts = nparts_for(a_cols.shape[0] + nrows, nthreads, 1) if nrows else 1
    bounds = balanced_bounds(a_offsets, nparts) if nrows else np.zeros(2, dtype=np.int64)
    flags = np.zeros((nparts, 2), dtype=np.int64)
    run_parts(_row_flops_part, nparts, nthreads, bounds, a_offsets, a_rows, has_a_rows, row_bound, a_perm, has_a_perm,
              a_cols, b_offsets, flags, out)
    np.cumsum(out, out=out)
    return out, flags


# A row of at most SMALL_ROW products is summed in its own output slots (each product finds its
# column by a search of the row's few columns) and then sorted by insertion: no random access to
# the accumulator, and a few compares where the row's columns may span a wide matrix. Longer rows
# use the dense accumulator, whose "touched" marks are a bitmap (one bit per column: 2 KB for
# 16384 columns, L1-resident) with a summary (one bit per bitmap word that has a mark). Their
# columns come out in order by walking the summary's set bits over the row's range, then each
# marked word's set bits (trailing-zero counts), clearing both as they go: the range / 4096 plus
# the marks, never a sort.
_ONE = np.uint64(1)
_SIX = np.uint64(6)
_63 = np.uint64(63)
_64 = np.uint64(64)
SMALL_ROW = 16


# The count pass marks each column it meets with the row's stamp (one 16-bit word per column, all
# cleared every 65535 rows): a compare and a store per product, no branch. The bitmap's
# test-and-set there mispredicted on about every other product (R-MAT: 150 -> 36 ms, one thread).
STAMP_ROWS = 65535


@nb.njit(cache=True, nogil=True)
def _spgemm_count_part(t, nparts, bounds, a_offsets, a_perm, has_a_perm, a_cols, b_offsets, b_perm, has_b_perm,
                       b_cols, marks, counts):
    """counts[r] = the distinct columns of each row of part t (the first of two passes: many
    products). ``marks[t]`` (``ncols`` uint16, all clear) is the part's scratch."""
    mk = marks[t]
    stamp = 0
    for r in range(bounds[t], bounds[t + 1]):
        if stamp == STAMP_ROWS:
            mk[:] = 0
            stamp = 0
        stamp += 1
        st = np.uint16(stamp)
        m = 0
        for p in range(a_offsets[r], a_offsets[r + 1]):
            k = a_cols[_u(a_perm[p]) if has_a_perm else _u(p)]
            for q in range(b_offsets[k], b_offsets[k + 1]):
                col = b_cols[_u(b_perm[q]) if has_b_perm else _u(q)]
                m += mk[col] != st
                mk[col] = st
        counts[r] = m


@nb.njit(cache=True, nogil=True)
def _spgemm_rows_part(t, nparts, bounds, a_offsets, a_rows, has_a_rows, a_perm, has_a_perm, a_cols, a_values,
                      b_offsets, b_perm, has_b_perm, b_cols, b_values, ncols, flops, starts, out_rc, out_values,
                      bitmaps, summaries, counts, totals, acc):
    """Gustavson over the rows of part t, written in order (one kernel: no counting branch, so the
    first use of a small product compiles only this).

    Rows are written one after another from ``starts[r0]`` (r0: the part's first row):
    ``starts`` holds the exact row starts after a counting pass, or ``flops`` (room for every
    product of each row) in a single pass, whose rows then lie packed at the front of the
    part's room. ``totals[t]`` = the entries the part wrote; ``counts[r]`` each row's.

    Every index it reads through was checked before (``spgemm``). ``bitmaps[t]`` and
    ``summaries[t]`` (all clear) are the part's scratch; they are left clear again. ``acc``
    (``ncols`` values, any content) is the part's own accumulator (see :func:`_rows_part`).
    """
    r0 = bounds[t]
    r1 = bounds[t + 1]
    if r0 >= r1:
        return
    bits = bitmaps[t]
    summ = summaries[t]
    pick = np.empty(2, dtype=acc.dtype)
    base = starts[r0]
    first = base
    pend = a_offsets[r1]
    for r in range(r0, r1):
        row = a_rows[r] if has_a_rows else r
        m = 0
        if flops[r + 1] - flops[r] <= SMALL_ROW:
            # few products: summed in the row's own output slots (a search of its few columns, no
            # random access to the accumulator), then sorted with their values
            for p in range(a_offsets[r], a_offsets[r + 1]):
                # B's rows at later entries, read at random: their pointer two steps ahead, their
                # columns and values one step ahead (uniform 200k: 8.7 -> 7.0 ms, one thread)
                if p + 2 * FILL_PREFETCH < pend:
                    prefetch(b_offsets, _u(a_cols[_u(a_perm[p + 2 * FILL_PREFETCH]) if has_a_perm
                                                  else _u(p + 2 * FILL_PREFETCH)]))
                if p + FILL_PREFETCH < pend:
                    q2 = _u(b_offsets[_u(a_cols[_u(a_perm[p + FILL_PREFETCH]) if has_a_perm
                                                else _u(p + FILL_PREFETCH)])])
                    if has_b_perm:
                        prefetch(b_perm, q2)
                    else:
                        prefetch(b_cols, q2)
                        prefetch(b_values, q2)
                e = _u(a_perm[p]) if has_a_perm else _u(p)
                k = a_cols[e]
                av = a_values[e]
                for q in range(b_offsets[k], b_offsets[k + 1]):
                    f = _u(b_perm[q]) if has_b_perm else _u(q)
                    col = b_cols[f]
                    i = base
                    while i < base + m and out_rc[1, i] != col:
                        i += 1
                    if i == base + m:
                        out_rc[1, i] = col
                        out_values[i] = av * b_values[f]
                        m += 1
                    else:
                        out_values[i] += av * b_values[f]
            for i in range(base + 1, base + m):  # distinct columns: one sorted order
                col = out_rc[1, i]
                v = out_values[i]
                j = i
                while j > base and col < out_rc[1, j - 1]:
                    out_rc[1, j] = out_rc[1, j - 1]
                    out_values[j] = out_values[j - 1]
                    j -= 1
                out_rc[1, j] = col
                out_values[j] = v
            for i in range(base, base + m):
                out_rc[0, i] = row
            counts[r] = m
            base += m
            continue
        lo = ncols
        hi = -1
        for p in range(a_offsets[r], a_offsets[r + 1]):
            e = _u(a_perm[p]) if has_a_perm else _u(p)
            k = a_cols[e]
            av = a_values[e]
            for q in range(b_offsets[k], b_offsets[k + 1]):
                f = _u(b_perm[q]) if has_b_perm else _u(q)
                col = b_cols[f]
                w = _u(col) >> _SIX
                b = _ONE << (_u(col) & _63)
                # no branch: whether the column is new is about as likely as not, and a
                # mispredicted test cost more than the stores (R-MAT fill 259 -> 169 ms). The
                # first product is stored as is, the next ones added in order: the same sums.
                # The value is picked by index ([sum, first]): a float select compiles to a
                # branch on x86 (rowmerge._row_add_part)
                word = bits[w]
                prod = av * b_values[f]
                pick[0] = acc[_u(col)] + prod
                pick[1] = prod
                acc[_u(col)] = pick[_u((word & b) == 0)]
                summ[w >> _SIX] |= _u(word == 0) << (w & _63)  # the word's first mark
                bits[w] = word | b
                m += (word & b) == 0
                lo = col if col < lo else lo
                hi = col if col > hi else hi
        counts[r] = m
        i = base
        for s in range(lo >> 12, (hi >> 12) + 1):
            sw = summ[s]
            summ[s] = 0
            while sw:
                w = _u(s) * _64 + trailing_zeros(sw)
                word = bits[w]
                bits[w] = 0
                while word:
                    col = w * _64 + trailing_zeros(word)
                    out_rc[0, i] = row
                    out_rc[1, i] = col
                    out_values[i] = acc[col]
                    i += 1
                    word &= word - _ONE
                sw &= sw - _ONE
        base += m
    totals[t] = base - first


# inlined into its one caller, _spgemm_sorted_part: no compilation of its own
@nb.njit(cache=True, nogil=True, inline="always")
def _row_products(r, a_offsets, a_perm, has_a_perm, a_cols, a_values, b_offsets, b_perm, has_b_perm, b_cols,
                  b_values, keys, prods):
    m = 0
    for p in range(a_offsets[r], a_offsets[r + 1]):
        e = a_perm[p] if has_a_perm else p
        k = a_cols[e]
        av = a_values[e]
        for q in range(b_offsets[k], b_offsets[k + 1]):
            f = b_perm[q] if has_b_perm else q
            keys[m] = b_cols[f]
            prods[m] = av * b_values[f]
            m += 1
    return m


@nb.njit(cache=True, nogil=True)
def _spgemm_sorted_part(t, nparts, bounds, flops, a_offsets, a_rows, has_a_rows, a_perm, has_a_perm, a_cols,
                        a_values, b_offsets, b_perm, has_b_perm, b_cols, b_values, counting, out_offsets, out_rc,
                        out_values, counts):
    """Wide column ranges: each row's products stably sorted by column, runs summed in order."""
    r0 = bounds[t]
    r1 = bounds[t + 1]
    if r0 >= r1:
        return
    longest = 0
    for r in range(r0, r1):
        longest = max(longest, flops[r + 1] - flops[r])
    keys = np.empty(longest, dtype=np.int64)
    prods = np.empty(longest, dtype=a_values.dtype)
    for r in range(r0, r1):
        m = _row_products(r, a_offsets, a_perm, has_a_perm, a_cols, a_values, b_offsets, b_perm, has_b_perm,
                          b_cols, b_values, keys, prods)
        order = np.argsort(keys[:m], kind="mergesort")
        if counting:
            c = 0
            for i in range(m):
                if i == 0 or keys[order[i]] != keys[order[i - 1]]:
                    c += 1
            counts[r] = c
            continue
        base = out_offsets[r] - 1
        row = a_rows[r] if has_a_rows else r
        for i in range(m):
            j = order[i]
            if i == 0 or keys[j] != keys[order[i - 1]]:
                base += 1
                out_rc[0, base] = row
                out_rc[1, base] = keys[j]
                out_values[base] = prods[j]
            else:
                out_values[base] += prods[j]


def _rows_parts(ncols, dtype):
    """:func:`_spgemm_rows_part` as ``fn(t, nparts, *args)`` for ``run_parts``, each part with a fresh
    accumulator of ``ncols`` values: allocated here, since an allocation inside the kernel compiles
    Numba's ``np.empty`` for its dtype (~0.15 s at first use); its pages are touched only where the
    part's rows write."""
    def part(t, nparts, *args):
        _spgemm_rows_part(t, nparts, *args, np.empty(ncols, dtype=dtype))
    return part


def _move(arr, dst, src, n):
    """arr[dst:dst + n] = arr[src:src + n] for a 1-D contiguous array, overlapping ranges included
    (memmove: no temporary copy, which NumPy makes for overlapping slices)."""
    item = arr.itemsize
    ctypes.memmove(arr.ctypes.data + dst * item, arr.ctypes.data + src * item, n * item)


def _one_pass(products, entries):
    """Whether spgemm writes the products in one pass, into room for all of them: few products
    (a second pass over B's rows would cost about as much as the first), at a memory cost of at
    most twice the operands' entries or ``ONE_PASS_PRODUCTS``."""
    return products <= max(ONE_PASS_PRODUCTS, 2 * entries)


def _rows_output(counts, dtype):
    """The second pass's output, from the first pass's entries per row: (row offsets, (2, m) row
    keys and columns, m values)."""
    out_offsets = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=out_offsets[1:])
    m = int(out_offsets[-1])
    return out_offsets, fresh((2, m), np.int64), fresh(m, dtype)


def spgemm(a_offsets, a_rows, a_perm, a_cols, a_values, b_offsets, b_perm, b_cols, b_values, ncols, a_row_bound,
           nthreads, on_flags):
    """The product (see the module docstring); ``on_flags(flags)`` raises for what the checks found.

    A's entries are checked in :func:`_row_flops` (the pass that reads them), B's
    columns in one pass of their own (O(nnz(B)), small beside the products), so
    a bad index of either operand is refused whichever entries the product reaches.
    """
    nrows = a_offsets.shape[0] - 1
    ncols = int(ncols)
    has_r, has_a, has_b = a_rows is not None, a_perm is not None, b_perm is not None
    ar = a_rows if has_r else a_offsets[:0]
    ap = a_perm if has_a else a_offsets[:0]
    bp = b_perm if has_b else b_offsets[:0]
    flops, flags = _row_flops(a_offsets, ar, has_r, _u(a_row_bound), ap, has_a, a_cols, b_offsets, nthreads)
    flags[0, 0] += np.count_nonzero(b_cols.view(np.uint64) >= np.uint64(ncols))  # outside [0, ncols)
    on_flags(flags)
    total = int(flops[-1])
    nparts = nparts_for(total + nrows, nthreads) if nrows else 1
    bounds = balanced_bounds(flops, nparts) if nrows else np.zeros(2, dtype=np.int64)
    counts = np.zeros(nrows, dtype=np.int64)
    if ncols > SPA_MAX_COLS:
        empty_rc = np.zeros((2, 0), dtype=np.int64)
        empty_v = np.zeros(0, dtype=a_values.dtype)
        run_parts(_spgemm_sorted_part, nparts, nthreads, bounds, flops, a_offsets, ar, has_r, ap, has_a, a_cols,
                  a_values, b_offsets, bp, has_b, b_cols, b_values, True, counts[:0], empty_rc, empty_v, counts)
        out_offsets, out_rc, out_values = _rows_output(counts, a_values.dtype)
        if out_values.shape[0]:
            run_parts(_spgemm_sorted_part, nparts, nthreads, bounds, flops, a_offsets, ar, has_r, ap, has_a,
                      a_cols, a_values, b_offsets, bp, has_b, b_cols, b_values, False, out_offsets, out_rc,
                      out_values, counts)
        return out_rc, out_values
    # each part's column bitmap (small) and count of entries written
    words = (ncols + 63) >> 6
    bitmaps = np.zeros((nparts, words), dtype=np.uint64)
    summaries = np.zeros((nparts, (words + 63) >> 6), dtype=np.uint64)
    totals = np.zeros(nparts, dtype=np.int64)
    rows = (a_offsets, ar, has_r, ap, has_a, a_cols, a_values, b_offsets, bp, has_b, b_cols, b_values, ncols)
    fill = _rows_parts(ncols, a_values.dtype)
    if _one_pass(total, a_cols.shape[0] + b_cols.shape[0]):
        # one pass into room for every product (few products: a second pass over them would cost
        # as much as the first), then the parts' packed blocks are joined
        buf = np.empty(2 * total, dtype=np.int64)  # row keys in [0, total), columns in [total, 2 total)
        out_values = np.empty(total, dtype=a_values.dtype)
        if total:
            run_parts(fill, nparts, nthreads, bounds, *rows, flops, flops, buf.reshape(2, total), out_values,
                      bitmaps, summaries, counts, totals)
        m = int(totals.sum())
        if m == total:
            return buf.reshape(2, total), out_values
        # each part's block moves left, after the blocks before it, then the columns after the rows:
        # in place (a copy into fresh arrays measured as long as a third of the product)
        pos = 0
        for t in range(nparts):
            c, src = int(totals[t]), int(flops[bounds[t]])
            if c and src != pos:
                for arr, off in ((buf, 0), (buf, total), (out_values, 0)):
                    _move(arr, off + pos, off + src, c)
            pos += c
        _move(buf, m, total, m)
        rc, values = buf[:2 * m].reshape(2, m), out_values[:m]
        if 8 * m < 7 * total:  # many products summed: do not keep the room for them alive
            rc, values = rc.copy(), values.copy()
        return rc, values
    marks = np.zeros((nparts, ncols), dtype=np.uint16)
    run_parts(_spgemm_count_part, nparts, nthreads, bounds, a_offsets, ap, has_a, a_cols, b_offsets, bp, has_b, b_cols,
              marks, counts)
    del marks
    out_offsets, out_rc, out_values = _rows_output(counts, a_values.dtype)
    if out_values.shape[0]:
        run_parts(fill, nparts, nthreads, bounds, *rows, flops, out_offsets, out_rc, out_values, bitmaps,
                  summaries, counts, totals)
    return out_rc, out_values
