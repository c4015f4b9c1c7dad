"""Sparse x dense products on the CPU: SpMV/SpMM, dense x COO and SDDMM (the linalg family).

Every output element is a sum taken in a defined order, and each one is
written by exactly one part, so results never depend on the thread schedule
(no atomics) and are bit-identical to the CUDA layer, which sums each element
in one thread in the same order:

- ``spmm`` / ``spmm_unsorted`` (COO x dense): ``out[r, j]`` starts at 0 and
  adds ``values[e] * dense[row_e, j]`` for the entries of row ``r`` in their
  grouped (``spmm``: offsets, then perm) or stored (``spmm_unsorted``) order.
  Parts are row ranges balanced by entries. The unsorted kernel is an
  *ownership scan*: part ``t`` owns a range of output rows and walks all
  entries, applying only its own; with the two to four threads of a
  workstation that costs a few extra reads of the row indices and no sort.
- ``dense_spmm`` (dense x COO): ``out[m, c]`` starts at 0 and adds
  ``dense[m, k_e] * values[e]`` for the entries of column ``c`` in stored
  order. Parts own output rows (or, when there are fewer rows than parts,
  column ranges, each part walking all entries and skipping the others).
- ``sddmm`` (``sddmm.py``): ``out[e]`` adds ``x[r_e, j] * y[j, c_e]`` in eight
  interleaved partial sums combined in a fixed order; parts are ranges of entries.

SpGEMM (COO x COO) is the next family, ``spgemm.py``.

Bad input: every index a kernel reads through is checked against the
bound it is given, in the pass that reads it (one unsigned compare per index;
``uint64(i) >= bound`` is "negative or too large"), and counted per part in a
``flags`` array (column 0: indices out of bounds, column 1: order that sorted
flags promised and that does not hold). An entry that fails is not read
through; the wrappers in ``backend.py`` raise IndexError / ValueError from the
flags before any result is returned.

Accumulation types are the caller's (int64, float32, float64, complex64,
complex128): the wrappers in ``backend.py`` allocate outputs with NumPy and
pass them in.
"""
import math
import mmap

import numba as nb
import numpy as np

from .parts import lower_bound, nparts_for, prefetch_lines
from .sddmm import sddmm  # noqa: F401 (the linalg family's rows)
from .transpose import dense_transpose, number_columns, sampled_transpose  # noqa: F401 (the linalg family's rows)
from .threads import SERIAL_BELOW, run_parts

# up to this many threads, unsorted SpMM scans all row indices once per thread (no sort); beyond,
# the backend groups rows by a stable sort first
OWNERSHIP_MAX_THREADS = 4


# a product's output from this many bytes is mapped on its own, without NumPy's huge-page advice
# (see fresh)
OWN_PAGES_FROM = 1 << 25
_OWN_MAPPING = hasattr(mmap, "MAP_PRIVATE") and hasattr(mmap, "MAP_ANONYMOUS")  # not on Windows

# SpMM fetches the dense row this many entries ahead
SPMM_PREFETCH = 4



# ---------------------------------------------------------------------------- row offsets
@nb.njit(cache=True, nogil=True)
def _row_offsets_part(t, nparts, rows, nrows, out, flags):
    """out[r] = first position i with rows[i] >= r: entries of part t set the r they start.

    Counts rows outside [0, nrows) (flags[t, 0]) and steps down (flags[t, 1]) in the
    same pass; every write stays inside ``out`` whatever the rows are.
    """
    n = rows.shape[0]
    lo = n * t // nparts
    hi = n * (t + 1) // nparts
    lim = _u(nrows)
    bad = 0
    down = 0
    if t == 0:
        first = rows[0] if n else nrows
        # conditional expressions, not min()/max(): Numba compiles those as functions of their own
        for r in range(0, (first if first < nrows else nrows) + 1):
            out[r] = 0
        if n and _u(first) >= lim:
            bad += 1
    for i in range(lo if lo > 1 else 1, hi):
        a = rows[i - 1]
        b = rows[i]
        if _u(b) >= lim or b < a:  # one predictable test on the hot path; counted off it
            bad += _u(b) >= lim
            down += b < a
        for r in range(a + 1 if a + 1 > 0 else 0, (b if b < nrows else nrows) + 1):
            out[r] = i
    if t == nparts - 1 and n:
        last = rows[n - 1] + 1
        for r in range(last if last > 0 else 0, nrows + 1):
            out[r] = n
    flags[t, 0] = bad
    flags[t, 1] = down


# Below this much work (entries + rows: the work a kernel would run as one part on the calling
# thread), a few NumPy passes build row pointers and SpGEMM's products per row about as fast:
# arrays this small then compile no kernel for them at their first use (each costs 0.3-0.5 s cold)
NUMPY_BELOW = SERIAL_BELOW


def _row_offsets_numpy(rows, nrows):
    """:func:`row_offsets` for a small array: the same pointer and flags (one part)."""
    flags = np.zeros((1, 2), dtype=np.int64)
    flags[0, 0] = np.count_nonzero(rows.view(np.uint64) >= np.uint64(nrows))
    flags[0, 1] = np.count_nonzero(rows[1:] < rows[:-1])
    out = np.zeros(nrows + 1, dtype=np.int64)
    if not flags.any():  # bincount needs the rows in [0, nrows)
        np.cumsum(np.bincount(rows, minlength=nrows), out=out[1:])
    return out, flags


def row_offsets(rows, nrows, nthreads):
    """(CSR row pointer int64[nrows + 1], flags) of ``rows``, which should be non-decreasing in [0, nrows).

    ``flags`` (int64[nparts, 2]): rows out of bounds, steps down. The pointer is
    meaningful only when both are zero.
    """
    if rows.shape[0] + nrows < NUMPY_BELOW:
        return _row_offsets_numpy(rows, nrows)
    out = np.empty(nrows + 1, dtype=np.int64)
    nparts = nparts_for(rows.shape[0], nthreads, 1)
    flags = np.zeros((nparts, 2), dtype=np.int64)
    run_parts(_row_offsets_part, nparts, nthreads, rows, nrows, out, flags)
    return out, flags


# ---------------------------------------------------------------------------- COO x dense
# Indices are converted to uint64 where arrays are read (``_u``): Numba then skips its
# negative-index wraparound test, which measured 1.5x on the SpMV loop. Every column
# index is compared (unsigned) with its bound before it is read through: one compare
# per entry in the loop that reads it; writes are bounded by the loops themselves.
_u = np.uint64


@nb.njit(cache=True, nogil=True, inline="always")
def _batch_at(r, rpb, base):
    """(end of the batch holding row r, that batch's first dense row)."""
    b = r // rpb
    return (b + 1) * rpb, base[b]


@nb.njit(cache=True, nogil=True)
def _spmv_part(t, nparts, bounds, offsets, perm, has_perm, cols, values, x, kb, rpb, base, zero, out, flags):
    """out[r] = the sum of row r's products in entry order, for the rows of part t; flags[t, 0] =
    1 when a column index lies outside [0, kb) (not read through; the part stops there).

    A predictable branch (never taken on valid input) keeps the load's address
    off the compare; a branch-free clamp measured slower. The permuted and the
    plain loop each have a row loop of their own: with the ``has_perm`` test
    inside the row, LLVM kept both inner loops in one body and the plain one ran
    1.5x slower (R-MAT graph, one thread: 6.2 vs 4.6 ms).
    """
    r0 = bounds[t]
    r1 = bounds[t + 1]
    if r0 >= r1:
        return
    z = zero[0]
    bend = r0
    db = 0
    if has_perm:
        for r in range(r0, r1):
            if r >= bend:  # the batch of row r (once per part, unbatched): one predictable test per row
                bend, db = _batch_at(r, rpb, base)
            acc = z
            p = offsets[r]
            pe = offsets[r + 1]
            while p < pe:
                e = _u(perm[_u(p)])
                c = cols[e]
                if _u(c) >= kb:
                    break
                acc += values[e] * x[_u(db + c)]
                p += 1
            if p < pe:  # a column outside: the call raises (see _spmv_rows_part)
                flags[t, 0] = 1
                return
            out[_u(r)] = acc
    else:
        for r in range(r0, r1):
            if r >= bend:
                bend, db = _batch_at(r, rpb, base)
            acc = z
            p = offsets[r]
            pe = offsets[r + 1]
            while p < pe:
                c = cols[_u(p)]
                if _u(c) >= kb:
                    break
                acc += values[_u(p)] * x[_u(db + c)]
                p += 1
            if p < pe:
                flags[t, 0] = 1
                return
            out[_u(r)] = acc


@nb.njit(cache=True, nogil=True)
def _spmv_rows_part(t, nparts, bounds, offsets, out_rows, nout, cols, values, x, kb, zero, out, flags):
    """SpMV over listed rows: out[out_rows[i]] = row i of ``offsets`` summed in entry order, for
    the rows i of part t, whose output range (from its first listed row to the next part's, the
    first part from row 0) it zeroes first. flags[t, 0]: 1 when a column index lies outside
    [0, kb) (not read through; the part stops there, the caller raises); flags[t, 1]: rows out of
    order or outside [0, nout) (then nothing is summed: the caller raises for them first).

    The R-MAT graph has 54,000 empty rows of 131,072: _spmv_part spent a mispredicted branch on
    many of them; the non-empty rows listed (the row reductions' ``row_segments`` companion) and
    the range zeroed in one plain loop measured 2.74 -> 2.33 ms (kernel alone, one thread).
    A bad column ends the part's loop instead of being counted: a count carried through the inner
    loop cost it 11% (kernel alone, one thread, same process: 2.40 -> 2.13 ms; the same sums).

    The part's rows are cut in two streams of about equal entries, and one loop advances both, an
    entry of each per step: two runs of memory reads and two chains of adds in flight, and each
    row still sums in entry order (the same bits). R-MAT SpMV, kernel alone, old and new
    alternating in one process, medians of 61, a ``gc.collect()`` before each call (the
    benchmark's regime): two threads 2.10-2.17 -> 1.89-2.00 ms, one thread 3.55 -> 3.25 ms; with
    warm caches level (1.30-1.34 ms; one thread 2.27 / 2.28), so the gain is the memory reads,
    not the adder. Three or four streams measured slower than one; the uniform matrix (no empty
    row) through this kernel 7-11% slower than ``_spmv_part``, which it keeps. The kernel's first
    compile costs ~0.15 s more (a graph's first SpMV, fresh caches: 0.47 -> 0.62 s CPU).
    """
    i0 = bounds[t]
    i1 = bounds[t + 1]
    m = offsets.shape[0] - 1
    lo = 0 if t == 0 else (nout if i0 >= m else out_rows[i0])
    hi = nout if i1 >= m else out_rows[i1]
    lo = 0 if lo < 0 else (nout if lo > nout else lo)
    hi = lo if hi < lo else (nout if hi > nout else hi)
    z = zero[0]
    for q in range(lo, hi):
        out[_u(q)] = z
    bad_rows = 0
    prev = lo
    for i in range(i0, i1):
        r = out_rows[i]
        if r < prev or r >= hi:  # (increasing rows inside the part's range: the zeroed one)
            bad_rows += 1
        else:
            prev = r + 1
    if bad_rows or i0 >= i1:
        flags[t, 1] = bad_rows
        return
    # stream a: rows i0 .. mid - 1; stream b: rows mid .. i1 - 1 (mid: the first row whose
    # entries start at or past the part's middle entry)
    target = (offsets[i0] + offsets[i1]) // 2
    mid = lower_bound(offsets, i0, i1, target)
    ia = i0
    ib = mid
    pa = offsets[ia]
    ea = offsets[ia + 1]
    pb = offsets[ib]
    eb = offsets[ib + 1] if ib < i1 else pb
    acca = z
    accb = z
    # the two streams' steps written out side by side: one loop body holds both runs' loads
    while ia < mid and ib < i1:
        if pa < ea:
            c = cols[_u(pa)]
            if _u(c) >= kb:
                flags[t, 0] = 1
                return
            acca += values[_u(pa)] * x[_u(c)]
            pa += 1
        else:
            out[_u(out_rows[ia])] = acca
            acca = z
            ia += 1
            ea = offsets[ia + 1]  # (ia <= mid <= i1 - 1 here: in the pointer)
        if pb < eb:
            c = cols[_u(pb)]
            if _u(c) >= kb:
                flags[t, 0] = 1
                return
            accb += values[_u(pb)] * x[_u(c)]
            pb += 1
        else:
            out[_u(out_rows[ib])] = accb
            accb = z
            ib += 1
            if ib < i1:
                eb = offsets[ib + 1]
    for s in range(2):  # the rest of each stream, one row after another
        i, iend, p, e, acc = (ia, mid, pa, ea, acca) if s == 0 else (ib, i1, pb, eb, accb)
        while i < iend:
            while p < e:
                c = cols[_u(p)]
                if _u(c) >= kb:
                    flags[t, 0] = 1
                    return
                acc += values[_u(p)] * x[_u(c)]
                p += 1
            out[_u(out_rows[i])] = acc
            acc = z
            i += 1
            if i < iend:
                e = offsets[i + 1]


@nb.njit(cache=True, nogil=True)
def _spmm_part(t, nparts, bounds, offsets, perm, has_perm, cols, values, dense, kb, rpb, base, zero, out, flags):
    r0 = bounds[t]
    r1 = bounds[t + 1]
    if r0 >= r1:
        return
    bad = 0
    n = dense.shape[1]
    z = zero[0]
    flat = dense.reshape(-1)
    line = 64 // dense.itemsize if dense.itemsize <= 64 else 1  # not max(): a compiled function of its own
    pend = offsets[r1]
    bend, db = _batch_at(r0, rpb, base)
    for r in range(r0, r1):
        if r >= bend:
            bend, db = _batch_at(r, rpb, base)
        for j in range(n):  # each part zeroes its own rows (first touch in parallel)
            out[_u(r), _u(j)] = z
        for p in range(offsets[r], offsets[r + 1]):
            if n >= line and p + SPMM_PREFETCH < pend:
                # the dense row of a later entry (a random read): measured 1.5x with 64 columns
                g = p + SPMM_PREFETCH
                ahead = (db + cols[_u(perm[_u(g)]) if has_perm else _u(g)]) * n
                prefetch_lines(flat, ahead, n, line)
            e = _u(perm[_u(p)]) if has_perm else _u(p)
            k = cols[e]
            if _u(k) >= kb:
                bad += 1
                continue
            v = values[e]
            c = _u(db + k)
            for j in range(n):
                out[_u(r), _u(j)] += v * dense[c, _u(j)]
    flags[t, 0] = bad


@nb.njit(cache=True, nogil=True)
def _balanced_bounds(offsets, nparts):
    """Row bounds of ``nparts`` parts holding about equal numbers of entries + rows.

    Counting rows too keeps long runs of empty rows from landing in one part;
    ``offsets[r] + r`` increases with r, so each bound is one binary search.
    """
    nrows = offsets.shape[0] - 1
    total = offsets[nrows] + nrows
    b = np.empty(nparts + 1, dtype=np.int64)
    b[0] = 0
    b[nparts] = nrows
    for t in range(1, nparts):
        target = total * t // nparts
        lo = b[t - 1]
        hi = nrows
        while lo < hi:
            mid = (lo + hi) >> 1
            if offsets[mid] + mid < target:
                lo = mid + 1
            else:
                hi = mid
        b[t] = lo
    return b


def balanced_bounds(offsets, nparts):
    """:func:`_balanced_bounds`; one part needs no search (and no kernel compiled for it)."""
    if nparts == 1:
        return np.array([0, offsets.shape[0] - 1], dtype=np.int64)
    return _balanced_bounds(offsets, nparts)


_NO_FLAGS = np.zeros((1, 2), dtype=np.int64)


def fresh(shape, dtype):
    """``np.empty(shape, dtype)`` for a product's output (SpMM's, SpGEMM's two-pass one); from
    ``OWN_PAGES_FROM`` bytes, in a private anonymous mapping of its own (freed with the array) that
    keeps the system's default pages.

    NumPy advises the kernel to back arrays of 4 MB and more with 2 MB huge pages. On a virtual
    machine that hands freed memory back to its host (free page reporting, as on the benchmark's
    machine), a fresh huge page can wait for the host to back it again, and a product's few hundred
    MB of output then took up to 10x as long on some calls. SpGEMM of the R-MAT graph (480 MB of
    output), ten calls each alternating in two processes at load 3-3.6: medians 2450 and 1586 ms
    (564-5202) with NumPy's allocation, 1386 and 1036 ms (721-1999) in its own mapping, GraphBLAS
    1516 and 1086 ms; the same calls writing into reused memory take about 0.9 s at that load. SpMM
    with 64 columns (67 MB): worst calls of twenty 316-474 ms before, 162-295 ms after, in four
    processes (medians 93-234 and 63-228 ms). Huge pages are faster when the host has them ready
    (the quickest calls above; 72 MB freed and allocated again at once: 12 against 43 ms), so small
    outputs keep NumPy's allocation; the peers' outputs (malloc) have no huge-page advice either.
    """
    dtype = np.dtype(dtype)
    # Python ints: np.prod of a shape wraps around at 2**63 and could pass for a smaller size
    nbytes = math.prod(int(s) for s in (shape if isinstance(shape, tuple) else (shape,))) * dtype.itemsize
    if not max(OWN_PAGES_FROM, 1) <= nbytes < 2**63 or not _OWN_MAPPING:  # (no mapping of 0 bytes)
        return np.empty(shape, dtype=dtype)  # (NumPy's own errors for a size it cannot hold)
    try:
        mem = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except OSError:
        # no memory for it (ENOMEM), or a limit: NumPy's allocation then raises the MemoryError a
        # caller expects of an output too large, rather than an OSError
        return np.empty(shape, dtype=dtype)
    return np.frombuffer(mem, dtype=dtype).reshape(shape)


def spmm(offsets, perm, cols, values, dense, rows_per_batch, batch_base, col_bound, nthreads):
    """(out, flags): flags[:, 0] non-zero for column indices outside [0, col_bound) (not read through;
    SpMV stops at the first, SpMM counts them)."""
    nrows = offsets.shape[0] - 1
    n = dense.shape[1]
    if nrows == 0 or n == 0:
        return np.zeros((nrows, n), dtype=values.dtype), _NO_FLAGS
    out = fresh((nrows, n), values.dtype)  # every row is written by its part
    nparts = nparts_for(int(offsets[-1]) * max(n, 1) + nrows, nthreads)
    bounds = balanced_bounds(offsets, nparts)
    has_perm = perm is not None
    args = (bounds, offsets, perm if has_perm else offsets[:0], has_perm, cols, values)
    zero = np.zeros(1, dtype=values.dtype)
    flags = np.zeros((nparts, 2), dtype=np.int64)
    kb = _u(col_bound)
    if n == 1:
        run_parts(_spmv_part, nparts, nthreads, *args, dense.reshape(-1), kb, max(int(rows_per_batch), 1),
                  batch_base, zero, out.reshape(-1), flags)
    else:
        run_parts(_spmm_part, nparts, nthreads, *args, dense, kb, max(int(rows_per_batch), 1), batch_base, zero,
                  out, flags)
    return out, flags


def spmv_rows(offsets, out_rows, nout, cols, values, x, col_bound, nthreads):
    """(out[nout], flags): SpMV of the rows of ``offsets`` into output rows ``out_rows``
    (increasing, in [0, nout)), zero elsewhere; flags[:, 0] columns outside [0, col_bound),
    flags[:, 1] rows out of order or bounds (see _spmv_rows_part)."""
    nrows = offsets.shape[0] - 1
    out = np.empty(nout, dtype=values.dtype)
    nparts = nparts_for(int(offsets[-1]) + nrows, nthreads) if nrows else 1
    bounds = balanced_bounds(offsets, nparts)
    flags = np.zeros((nparts, 2), dtype=np.int64)
    run_parts(_spmv_rows_part, nparts, nthreads, bounds, offsets, out_rows, nout, cols, values, x, _u(col_bound),
              np.zeros(1, dtype=values.dtype), out, flags)
    return out, flags


@nb.njit(cache=True, nogil=True)
def _spmm_owned_part(t, nparts, rows, cols, values, dense, kb, rpb, base, batched, out, flags):
    nrows = out.shape[0]
    n = dense.shape[1]
    r0 = nrows * t // nparts
    r1 = nrows * (t + 1) // nparts
    db = base[0]
    bad = 0
    for e in range(rows.shape[0]):
        r = rows[_u(e)]
        if r < r0 or r >= r1:
            if _u(r) >= _u(nrows):  # the test that skips other parts' rows catches bad ones too
                bad += 1
            continue
        k = cols[_u(e)]
        if _u(k) >= kb:
            bad += 1
            continue
        if batched:
            db = base[r // rpb]
        v = values[_u(e)]
        c = _u(db + k)
        for j in range(n):
            out[_u(r), _u(j)] += v * dense[c, _u(j)]
    flags[t, 0] = bad


def spmm_unsorted(rows, cols, values, dense, nrows, rows_per_batch, batch_base, col_bound, nthreads):
    """(out, flags): flags[:, 0] counts rows outside [0, nrows) and columns outside [0, col_bound)."""
    n = dense.shape[1]
    out = np.zeros((nrows, n), dtype=values.dtype)
    if nrows == 0 or n == 0 or rows.shape[0] == 0:
        # nothing is read through the indices; an empty result hides no bad one
        return out, _NO_FLAGS
    # each part scans every row index: one part per thread
    nparts = min(nparts_for(rows.shape[0] * max(n, 1), nthreads, 1), nrows)
    rpb = max(int(rows_per_batch), 1)
    flags = np.zeros((nparts, 2), dtype=np.int64)
    run_parts(_spmm_owned_part, nparts, nthreads, rows, cols, values, dense, _u(col_bound), rpb, batch_base,
              rpb < nrows, out, flags)
    return out, flags


# ---------------------------------------------------------------------------- dense x COO
@nb.njit(cache=True, nogil=True)
def _dense_spmm_part(t, nparts, by_rows, dense, base, rpb, boff, perm, has_perm, krow, cols, values, out, flags):
    nrows, n = out.shape
    kb = _u(dense.shape[1])
    bad = 0
    if by_rows:
        ra = nrows * t // nparts
        rb = nrows * (t + 1) // nparts
        ca = 0
        cb = n
    else:
        ra = 0
        rb = nrows
        ca = n * t // nparts
        cb = n * (t + 1) // nparts
    for rr in range(ra, rb):
        b = rr // rpb
        arow = _u(base[b] + rr - b * rpb)
        for p in range(boff[b], boff[b + 1]):
            e = _u(perm[_u(p)]) if has_perm else _u(p)
            c = cols[e]
            if c >= ca and c < cb:
                k = krow[e]
                if _u(k) >= kb:
                    bad += 1
                    continue
                out[_u(rr), _u(c)] += dense[arow, _u(k)] * values[e]
            elif _u(c) >= _u(n):  # the part's column test catches bad columns too
                bad += 1
    flags[t, 0] = bad


def dense_spmm(dense, batch_base, rows_per_batch, batch_offsets, perm, krow, cols, values, ncols, nthreads):
    nb_ = batch_offsets.shape[0] - 1
    rpb = int(rows_per_batch)
    nrows = nb_ * rpb
    out = np.zeros((nrows, int(ncols)), dtype=values.dtype)
    if nrows == 0 or ncols == 0 or krow.shape[0] == 0:
        return out, _NO_FLAGS
    work = krow.shape[0] * max(rpb, 1)
    nparts = nparts_for(work, nthreads)
    by_rows = nrows >= nparts
    if not by_rows:
        nparts = min(nthreads, int(ncols))  # each part walks every entry: one per thread
    has_perm = perm is not None
    flags = np.zeros((nparts, 2), dtype=np.int64)
    run_parts(_dense_spmm_part, nparts, nthreads, by_rows, dense, batch_base, max(rpb, 1), batch_offsets,
              perm if has_perm else batch_offsets[:0], has_perm, krow, cols, values, out, flags)
    return out, flags
