"""Strided scatter into a flat buffer: as_strided_scatter, to_dense and dense + COO.

Two families, both on flat 1-D buffers (the public layer builds them with
``coosparse._core.arrays.flat_view`` and views every dtype as a same-size unsigned
integer for the bit copies, so few specialisations are compiled):

* ``scatter_add`` / ``scatter_set`` (COO entries -> dense target):
  ``target[addresses[i] + inner[c]] op= values[i, c]``. Parallel by
  *destination range*: thread p owns the entries whose block starts in the
  p-th slice of the target and applies them in stored order. Entries with
  different addresses never share an element (the target does not overlap
  itself), so each element is updated by one thread, in stored order: sums and
  last-writer-wins are bit-identical to the serial loop, whatever the schedule.
* ``strided_scatter_sorted`` / ``strided_scatter_ordered`` (a strided view
  ``out[offset + i . strides] = src[src_base + i . src_strides]``):
  ``_sorted`` takes a view whose addresses strictly increase in C order of the
  view (the public layer permutes/flips dims to get there when the view does
  not overlap itself): each thread owns one output range, memcpys ``inp``
  into it and scatters the view elements that land there. (A single fused
  pass, writing each output element once, was measured slower on fresh pages
  than libc's streaming memcpy followed by the scatter; see
  docs/strided-scatter.md.) The CPU wrapper in ``backend.py`` runs the copy
  mode as one piece: memory-bound, and the thread pool's wake-up costs more
  than a second thread gains on a loaded machine. ``_ordered`` is the serial
  C-order loop for views that may overlap (last writer wins).

Threads: the parts run on the library's threads (``threads.run_parts``); each
``_..._part`` kernel does one destination range or one output piece.
"""
import numba as nb
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ..backend import bits_view
from .parts import prefetch_l2
from .threads import run_parts

# below this many entries the destination-partitioned loops run serially
PARALLEL_MIN = 1 << 15
# the loops fetch the target line of the entry this many ahead into L2 (when their part owns it): an
# entry's element is a random line of the target (to_dense of 2M entries into 4096^2 float64: 51 ->
# 44 ms, one process, medians of 15; 32-128 ahead alike)
SCATTER_PREFETCH = 64


# ---------------------------------------------------------------- COO -> dense
@nb.njit(cache=True, nogil=True, inline="always")
def _fetch_ahead(target, addresses, i, n, a0, a1):
    """Fetch into L2 the target line of the entry SCATTER_PREFETCH after i (the last entry near the
    end: a hint again, harmless) when this part, [a0, a1), owns it."""
    f = i + SCATTER_PREFETCH
    b = addresses[f if f < n else n - 1]
    if b >= a0 and b < a1:
        prefetch_l2(target, np.uint64(b))


# add and set stay two loops: one shared loop would test its op flag per element
@nb.njit(cache=True, nogil=True)
def _scatter_add_part(t, nparts, target, addresses, values, inner, lo, step, hi, ident, replace):
    a0 = lo + t * step
    a1 = lo + (t + 1) * step
    a1 = a1 if a1 < hi else hi  # not min(): Numba compiles min() on integers as a function of its own
    n = addresses.shape[0]
    k = inner.shape[0]
    if replace:  # the elements that receive entries start from the additive identity -0.0
        z = ident[0]
        for i in range(n):
            a = addresses[i]
            if a >= a0 and a < a1:
                for c in range(k):
                    target[a + inner[c]] = z
    for i in range(n):
        _fetch_ahead(target, addresses, i, n, a0, a1)
        a = addresses[i]
        if a >= a0 and a < a1:
            for c in range(k):
                target[a + inner[c]] += values[i, c]


@nb.njit(cache=True, nogil=True)
def _scatter_set_part(t, nparts, target, addresses, values, inner, lo, step, hi):
    a0 = lo + t * step
    a1 = lo + (t + 1) * step
    a1 = a1 if a1 < hi else hi  # not min(): Numba compiles min() on integers as a function of its own
    n = addresses.shape[0]
    k = inner.shape[0]
    for i in range(n):
        _fetch_ahead(target, addresses, i, n, a0, a1)
        a = addresses[i]
        if a >= a0 and a < a1:
            for c in range(k):
                target[a + inner[c]] = values[i, c]


def _valid_range(span, inner):
    """[lo, hi): the block addresses whose every element lies inside a buffer of ``span``.

    Entries outside it are skipped, so even a COO built with ``check=False``
    that breaks its contract cannot write outside the buffer.
    """
    imin = min(0, int(inner.min())) if inner.shape[0] else 0
    imax = max(0, int(inner.max())) if inner.shape[0] else 0
    return -imin, max(span - imax, -imin)


def _destination_parts(target, addresses, inner, threads):
    """(lo, hi, parts, step): part p owns the block addresses [lo + p*step, min(lo + (p+1)*step, hi))."""
    lo, hi = _valid_range(target.shape[0], inner)
    parts = threads if addresses.shape[0] >= PARALLEL_MIN else 1
    step = (hi - lo) // parts + 1
    return lo, hi, parts, step


def scatter_add(target, addresses, values, inner, threads, ident, replace):
    """target[addresses[i] + inner[c]] += values[i, c]; each element summed in stored order.

    With ``replace``, each element that receives entries is first set to ``ident[0]``
    (-0.0: the sum then ignores the element's old value and keeps a -0.0 sum's sign).
    """
    lo, hi, parts, step = _destination_parts(target, addresses, inner, threads)
    run_parts(_scatter_add_part, parts, threads, target, addresses, values, inner, lo, step, hi, ident, replace)


def scatter_set(target, addresses, values, inner, threads):
    """target[addresses[i] + inner[c]] = values[i, c]; the last entry in stored order wins."""
    lo, hi, parts, step = _destination_parts(target, addresses, inner, threads)
    if values.dtype == target.dtype:  # a copy of bits: one kernel per item width serves every dtype
        target, values = bits_view(target), bits_view(values)
    run_parts(_scatter_set_part, parts, threads, target, addresses, values, inner, lo, step, hi)


# ---------------------------------------------------------------- strided views
@nb.njit(cache=True, nogil=True, inline="always")
def _address_of(e, offset, sizes, strides):
    """Output address of the e-th element (C order) of the view."""
    a = offset
    for k in range(sizes.shape[0] - 1, -1, -1):
        a += (e % sizes[k]) * strides[k]
        e //= sizes[k]
    return a


@nb.njit(cache=True, nogil=True, inline="always")
def _first_at_or_after(b, total, offset, sizes, strides):
    """Smallest e in [0, total] whose address is >= b (addresses increase with e)."""
    lo = 0
    hi = total
    while lo < hi:
        mid = (lo + hi) // 2
        if _address_of(mid, offset, sizes, strides) < b:
            lo = mid + 1
        else:
            hi = mid
    return lo


@intrinsic
def copy_range(typingctx, out, inp, lo, hi):
    """out[lo:hi] = inp[lo:hi] by ``llvm.memcpy`` (1-D unit-stride arrays, same dtype).

    A libc memcpy: for large ranges it streams with non-temporal stores, which
    on fresh (just faulted) pages is markedly faster than any Numba loop we
    measured. The caller guarantees 0 <= lo <= hi <= len of both arrays.
    """
    sig = types.void(out, inp, lo, hi)

    def codegen(context, builder, sig, args):
        oty, ity = sig.args[0], sig.args[1]
        o = context.make_array(oty)(context, builder, args[0])
        i = context.make_array(ity)(context, builder, args[1])
        po = cgutils.get_item_pointer(context, builder, oty, o, [args[2]], wraparound=False)
        pi = cgutils.get_item_pointer(context, builder, ity, i, [args[2]], wraparound=False)
        n = builder.sub(args[3], args[2])
        cgutils.raw_memcpy(builder, po, pi, n, context.get_abi_sizeof(context.get_data_type(oty.dtype)))
        return context.get_dummy_value()

    return sig, codegen


@nb.njit(cache=True, nogil=True, inline="always")
def _row(out, src, a0, s_in, sb, ss, m):
    """out[a0 + u*s_in] = src[sb + u*ss] for u < m (unsigned indices: no wraparound test)."""
    if s_in == 1 and ss == 1:
        out[a0:a0 + m] = src[sb:sb + m]
    elif ss == 1:
        for u in range(m):
            out[np.uint64(a0 + u * s_in)] = src[np.uint64(sb + u)]
    else:
        for u in range(m):
            out[np.uint64(a0 + u * s_in)] = src[np.uint64(sb + u * ss)]


@nb.njit(cache=True, nogil=True, inline="always")
def _row_bases(idx, offset, strides, src_base, src_strides):
    """Output and source addresses of the row at outer index idx[:-1] (its first element)."""
    rb = offset
    sb = src_base
    for k in range(idx.shape[0] - 1):
        rb += idx[k] * strides[k]
        sb += idx[k] * src_strides[k]
    return rb, sb


@nb.njit(cache=True, nogil=True, inline="always")
def _next_row(idx, sizes):
    """Advance the outer index idx[:-1] to the next row in C order (an odometer)."""
    k = idx.shape[0] - 2
    while k >= 0:
        idx[k] += 1
        if idx[k] < sizes[k]:
            break
        idx[k] = 0
        k -= 1


@nb.njit(cache=True, nogil=True, inline="always")
def _sorted_piece(out, inp, copy, src, src_base, offset, sizes, strides, src_strides, start, stop, lo, hi):
    """View elements [start, stop) (C order), whose addresses lie in [lo, hi).

    With ``copy``, out[lo:hi] = inp[lo:hi] first (one memcpy, then the
    scatter): measured faster than a single fused pass on fresh pages.
    """
    if copy and hi > lo:
        copy_range(out, inp, lo, hi)
    if start >= stop:
        return
    d = sizes.shape[0]
    idx = np.empty(d, dtype=np.int64)
    r = start
    for k in range(d - 1, -1, -1):
        idx[k] = r % sizes[k]
        r //= sizes[k]
    n_in = sizes[d - 1]
    s_in = strides[d - 1]
    ss_in = src_strides[d - 1]
    e = start
    while e < stop:
        rb, sb = _row_bases(idx, offset, strides, src_base, src_strides)
        t0 = idx[d - 1]
        m = min(n_in - t0, stop - e)
        _row(out, src, rb + t0 * s_in, s_in, sb + t0 * ss_in, ss_in, m)
        e += m
        idx[d - 1] = 0
        _next_row(idx, sizes)


@nb.njit(cache=True, nogil=True)
def _piece_bounds(n_out, total, offset, sizes, strides, parts):
    """(bounds, starts) of the copy mode's pieces: equal output ranges and the view elements in each."""
    bounds = np.empty(parts + 1, dtype=np.int64)
    starts = np.empty(parts + 1, dtype=np.int64)
    for p in range(parts + 1):
        bounds[p] = n_out // parts * p + min(p, n_out % parts)
        starts[p] = _first_at_or_after(bounds[p], total, offset, sizes, strides)
    return bounds, starts


@nb.njit(cache=True, nogil=True)
def _sorted_piece_part(t, nparts, out, inp, copy, src, src_base, offset, sizes, strides, src_strides, starts,
                       bounds):
    _sorted_piece(out, inp, copy, src, src_base, offset, sizes, strides, src_strides, starts[t], starts[t + 1],
                  bounds[t], bounds[t + 1])


def strided_scatter_sorted(out, inp, src, src_base, offset, sizes, strides, src_strides, copy, threads):
    """Copy + scatter for a view with strictly increasing addresses (see module doc).

    With ``copy``: ``out[j] = inp[j]`` for every j not addressed by the view.
    Part p owns output range [p*N/P, (p+1)*N/P) and the view elements that
    land there (found by binary search: addresses increase in C order), so no
    element of ``out`` is touched by two threads. Without ``copy`` the pieces
    are equal counts of view elements and ``inp`` is not read.
    """
    total = 1
    for k in sizes:
        total *= int(k)
    n_out = out.shape[0]
    parts = threads  # one large memcpy per thread keeps libc on its streaming path
    if (n_out if copy else total) < PARALLEL_MIN:
        parts = 1
    if not copy:
        starts = np.array([total // parts * p + min(p, total % parts) for p in range(parts + 1)], dtype=np.int64)
        bounds = np.full(parts + 1, n_out, dtype=np.int64)
    elif parts == 1:  # the whole view lies in [0, n_out)
        starts = np.array([0, total], dtype=np.int64)
        bounds = np.array([0, n_out], dtype=np.int64)
    else:
        bounds, starts = _piece_bounds(n_out, total, offset, sizes, strides, parts)
    run_parts(_sorted_piece_part, parts, threads, out, inp, bool(copy), src, src_base, offset, sizes, strides,
              src_strides, starts, bounds)


@nb.njit(cache=True, nogil=True)
def strided_scatter_ordered(out, src, src_base, offset, sizes, strides, src_strides):
    """out[offset + i . strides] = src[src_base + i . src_strides] for i in C order (last wins)."""
    d = sizes.shape[0]
    total = 1
    for k in range(d):
        total *= sizes[k]
    if total == 0:
        return
    idx = np.zeros(d, dtype=np.int64)
    n_in = sizes[d - 1]
    s_in = strides[d - 1]
    ss_in = src_strides[d - 1]
    for _ in range(total // n_in):
        rb, sb = _row_bases(idx, offset, strides, src_base, src_strides)
        for u in range(n_in):
            out[rb + u * s_in] = src[sb + u * ss_in]
        _next_row(idx, sizes)
