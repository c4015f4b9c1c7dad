"""The Numba kernel layer: the CPU implementation of ``coosparse/_kernels/api.py``.

One function per row of the kernel API, grouped by family in the API's order.
Each validates and shapes its arguments, picks how many threads the kernel
runs on, allocates outputs with NumPy (transparent huge pages: Numba-allocated
arrays of tens of MB page-fault several times slower than the kernels run)
and calls the kernels of ``<family>.py``. The rows of the linalg and spgemm
families live in ``layer_linalg.py`` and are re-exported here.
"""
import contextvars
import functools
import math
import zlib

import numpy as np

from ..api import KERNEL_FAMILIES
from ..backend import read_only, writeable
from ..bounds import lying_flag_error, raise_out_of_bounds, run_offsets, size_limits
from .families import Family as _Family
from .layer_linalg import (dense_spmm, dense_transpose, number_columns, row_offsets, sampled_transpose,  # noqa: F401
                           sddmm, spgemm, spmm, spmm_unsorted)
from .threads import count as _nthreads
from .threads import run_parts as _run_parts

name = "numba"
xp = np


_co = _Family(globals(), "_co", "coalesce")
_ew = _Family(globals(), "_ew", "elementwise")
_files = _Family(globals(), "_files", "files")
_ga = _Family(globals(), "_ga", "gather")
_idx = _Family(globals(), "_idx", "indexing")
_ix = _Family(globals(), "_ix", "intersect")
_join = _Family(globals(), "_join", "join")
_li = _Family(globals(), "_li", "linear_index")
_red = _Family(globals(), "_red", "reduce")
_sc = _Family(globals(), "_sc", "scatter")
_seg = _Family(globals(), "_seg", "segment")
_sort = _Family(globals(), "_sort", "sort")
_un = _Family(globals(), "_un", "union")


# ---- threads: how many a row runs on -------------------------------------------------------------
# Every kernel is a plain nogil function of one part, run part by part on the library's threads
# (threads.run_parts), on the calling thread alone for small inputs (threads.plan): waking
# threads costs more than such work, and under load a part handed to another thread waits for
# it to be scheduled (sorting 6000 keys took 20-110 ms with two threads and 2-4 ms with one at
# load 9 on two cores). Results never depend on the number of parts or threads.

_i64 = np.int64

# The plain nogil kernels of one part run by threads.run_parts (indexing, join, reduce) run as
# one part on the calling thread below these sizes: waking the pool costs more.
_SERIAL_BELOW = 1 << 20  # elements
_SERIAL_QUERIES = 1 << 14  # binary searches


def _parts(n, serial_below=_SERIAL_BELOW):
    """(nparts, nthreads) for a pass over n elements."""
    if n < serial_below:
        return 1, 1
    nthreads = _nthreads()
    return 4 * nthreads, nthreads


# ---- linear_index --------------------------------------------------------------------------------
def unravel_index(keys, strides):
    """Inverse of :func:`linear_index`: int64[d, n]."""
    return _li.unravel_index(keys, strides, _nthreads())


def linear_index(indices, strides, sizes=None):
    """Row-major keys/addresses; with ``sizes`` every index is bounds-checked in the same pass."""
    if sizes is None:
        return _li.linear_index(indices, strides, _nthreads())
    keys, bad = _li.linear_index_checked(indices, strides, size_limits(sizes), _nthreads())
    if bad:
        raise_out_of_bounds(indices, sizes)
    return keys


# ---- sort ----------------------------------------------------------------------------------------
def sort_pairs(keys, bound):
    """Stable sort of int64 keys in [0, bound): (sorted_keys, perm)."""
    return _sort.sort_pairs(keys, int(bound), _nthreads())


def _segment_parts(offsets, n):
    """(nparts, nthreads, bounds): parts of about equal entries, whole segments each."""
    nseg = offsets.shape[0] - 1
    nparts, nthreads = _parts(n)
    nparts = min(nparts, max(nseg, 1))
    bounds = np.searchsorted(offsets, np.arange(nparts + 1, dtype=_i64) * n // nparts).astype(_i64)
    bounds[0], bounds[-1] = 0, nseg
    return nparts, nthreads, bounds


def sort_segments(values, offsets):
    """``values`` (1-D) with each segment ``offsets[s]:offsets[s + 1]`` sorted: stable, NaN last."""
    values = np.ascontiguousarray(values)
    offsets = np.ascontiguousarray(offsets, dtype=_i64)
    out = np.empty_like(values)
    nparts, nthreads, bounds = _segment_parts(offsets, values.shape[0])
    _run_parts(_sort.sort_segments_part, nparts, nthreads, bounds, offsets, values, out)
    return out


def sort_lanes(values, offsets, indices, fill, length):
    """A sort along the last axis of a coalesced array whose lanes are the segments of ``offsets``:
    (indices int64[d, m], values[m]) of the kept entries (values other than the fill), each lane's
    values in order (stable, NaN last) at their positions in the sorted dense lane of ``length``."""
    offsets = np.ascontiguousarray(offsets, dtype=_i64)
    return _sort.sort_lanes(np.ascontiguousarray(values), offsets, np.ascontiguousarray(indices, dtype=_i64), fill,
                            length, *_segment_parts(offsets, values.shape[0]))


def topk_lanes(values, offsets, fill, length, k, largest):
    """The positions (int64[m], increasing) of the entries that rank among the first ``k`` of their
    lane (the segments of ``offsets``; ``length`` elements, the unstored ones the fill's), other
    than those equal to the fill: a selection per lane (the k-th best value), no global sort."""
    offsets = np.ascontiguousarray(offsets, dtype=_i64)
    return _sort.topk_lanes(np.ascontiguousarray(values), offsets, fill, length, k, largest,
                            *_segment_parts(offsets, values.shape[0]))


# ---- segment -------------------------------------------------------------------------------------
def segment_starts(sorted_keys):
    """Where each run of equal sorted keys starts, plus n: int64[nseg + 1]."""
    return _seg.segment_starts(sorted_keys)


def segment_sum(values, perm, starts):
    """Ordered per-segment sums of 2-D ``values`` (perm None: already in order)."""
    if perm is None:
        return _seg.segment_sum(values, starts[:0], starts, False, _nthreads())
    return _seg.segment_sum(values, perm, starts, True, _nthreads())


# ---- gather --------------------------------------------------------------------------------------
def gather_rows(values, rows):
    """values[rows] (2-D values)."""
    return _ga.gather_rows(values, rows, _nthreads())


def gather_columns(indices, rows):
    """indices[:, rows], C-contiguous."""
    return _ga.gather_columns(indices, rows, _nthreads())


def gather_strided(source, addresses, inner):
    """out[i, c] = source[addresses[i] + inner[c]]."""
    return _ga.gather_strided(source, addresses, inner, _nthreads())


def gather_indexed(source, indices, strides, sizes, base, inner):
    """out[i, c] = source[base + sum_d indices[d, i] * strides[d] + inner[c]], bounds-checked in the same pass."""
    indices = np.ascontiguousarray(indices, dtype=np.int64)
    strides = np.ascontiguousarray(strides, dtype=np.int64)
    inner = np.ascontiguousarray(inner, dtype=np.int64)
    out, bad = _ga.gather_indexed(source, indices, strides, size_limits(sizes), int(base), inner, _nthreads())
    if bad:
        raise_out_of_bounds(indices, sizes)
    return out


def gather_or_zero(values, rows):
    """values[rows], zero rows where rows < 0."""
    return _ga.gather_or_zero(values, rows, _nthreads())


# ---- coalesce ------------------------------------------------------------------------------------
def coalesce_linear(indices, strides, bound, values):
    """Fused coalesce of a narrow shape: (unique indices, ordered sums) by linear index."""
    return _co.coalesce_linear(indices, strides, int(bound), values, _nthreads())


# ---- scatter -------------------------------------------------------------------------------------
def scatter_add(target, addresses, values, inner, *, hint=None, replace=False):
    """Deterministic parallel scatter-add (kernel API row ``scatter_add``; ``hint`` is for the GPU)."""
    ident = np.zeros(1, dtype=target.dtype)
    if target.dtype.kind in "fc":  # the additive identity: (-0.0) + x is x, -0.0 included (both parts)
        ident[0] = complex(-0.0, -0.0) if target.dtype.kind == "c" else -0.0
    _sc.scatter_add(target, addresses, values, inner, _nthreads(), ident, bool(replace))


def scatter_set(target, addresses, values, inner, *, hint=None):
    """Deterministic parallel scatter-set (kernel API row ``scatter_set``; ``hint`` is for the GPU)."""
    _sc.scatter_set(target, addresses, values, inner, _nthreads())


_FIRST_TOUCH_BYTES = 1 << 23  # outputs from 8 MiB: the copy is split between the threads


def strided_scatter_sorted(out, inp, src, src_base, offset, sizes, strides, src_strides, copy):
    """Copy + scatter of an increasing view (kernel API row ``strided_scatter_sorted``).

    With ``copy`` the work is one libc memcpy plus the scatter, memory-bound.
    Below 8 MiB it runs serially (waking the thread pool costs milliseconds
    on a loaded machine); from 8 MiB each thread copies and scatters its own
    range of the output, so a fresh output's pages are faulted by the
    threads that write them, in parallel, instead of by one.
    A scatter without copy splits the view between the threads.
    """
    nthreads = 1 if copy and out.nbytes < _FIRST_TOUCH_BYTES else _nthreads()
    _sc.strided_scatter_sorted(out, inp, src, int(src_base), int(offset), sizes, strides, src_strides,
                               bool(copy), nthreads)


def strided_scatter_ordered(out, src, src_base, offset, sizes, strides, src_strides):
    """Serial C-order scatter, last writer wins (kernel API row ``strided_scatter_ordered``)."""
    _sc.strided_scatter_ordered(out, src, int(src_base), int(offset), sizes, strides, src_strides)


# ---- intersect -----------------------------------------------------------------------------------
def _sorted_ends(keys, operand):
    """The O(1) check of a sorted flag (``intersect.ends_in_order``) on a key array."""
    if keys.shape[0] > 1:
        _ix.ends_in_order(keys[0], keys[-1], operand)


def match_merge(src_keys, probe_keys):
    """(first, count) of sorted ``src_keys`` in sorted ``probe_keys`` (linear merge)."""
    _sorted_ends(src_keys, "source")
    _sorted_ends(probe_keys, "probe")
    n = src_keys.shape[0]
    return _ix.match_merge(src_keys, probe_keys, _nthreads(), np.empty(n, _i64), np.empty(n, _i64))


def match_search(src_keys, probe_keys):
    """(first, count) of ``src_keys`` in any order in sorted ``probe_keys`` (partitioned search)."""
    _sorted_ends(probe_keys, "probe")
    return _ix.match_search(src_keys, probe_keys, _nthreads())


def merge_matches(src_keys, probe_keys):
    """(rows, first, count) of the matched entries of sorted ``src_keys`` only."""
    _sorted_ends(src_keys, "source")
    _sorted_ends(probe_keys, "probe")
    return _ix.merge_matches(src_keys, probe_keys, _nthreads())


def compact_matches(first, count):
    """(rows, first[rows], count[rows]) for the rows with count != 0."""
    return _ix.compact_matches(first, count, _nthreads())


def probe_sum(values, perm, first, count, *, shared_runs=False):
    """Ordered sums of the matched probe rows (perm None: identity; ``shared_runs`` is for the GPU)."""
    out = np.empty((first.shape[0], values.shape[1]), values.dtype)
    return _ix.probe_sum(values, first[:0] if perm is None else perm, perm is not None, first, count, out,
                        _nthreads())


def multiply_matched(src_values, rows, probe_values, perm, first, count, *, shared_runs=False):
    """src_values[rows] * ordered probe sums, fused (rows / perm None: identity; ``shared_runs`` is for the GPU)."""
    empty = first[:0]
    out = np.empty((first.shape[0], src_values.shape[1]), src_values.dtype)
    return _ix.multiply_matched(
        src_values, empty if rows is None else rows, rows is not None,
        probe_values, empty if perm is None else perm, perm is not None, first, count, out, _nthreads(),
    )


def _row_merge(a_indices, b_indices, strides, sizes, pointers, keys):
    """(ap, bp, limits, keys) of a per-row merge through the operands' row ``pointers``, or None where
    none applies (no pointers; three or more sparse axes without ``sizes``).

    Matrices merge their columns (keys None). Three or more sparse axes merge the linear keys of the
    trailing axes: ``keys`` as the caller holds them (checked when they were made), else computed
    here with every index checked. The merge over whole keys, which reads every index row at each
    step, took 1.8x as long (3-D union, 2M + 2M entries).
    """
    d = a_indices.shape[0]
    if pointers is None or d < 2 or (d > 2 and sizes is None):
        return None
    ap, bp = writeable(pointers[0]), writeable(pointers[1])
    if d == 2:
        return ap, bp, _ix.merge_limits(strides, sizes), None
    if keys is None:
        keys = [linear_index(idx[1:], strides[1:], sizes[1:]) for idx in (a_indices, b_indices)]
    return ap, bp, size_limits((sizes[0], strides[0])), tuple(writeable(k) for k in keys)


def merge_multiply(src_indices, src_values, probe_indices, probe_values, strides, *, sizes=None, pointers=None,
                   keys=None):
    """Fused compact product of a sorted source and a sorted probe: (indices, values).

    ``sizes``: the sparse shape; every index the merge reads is checked against it in its pass.
    ``pointers``: the operands' row pointers: the merge goes row by row over the columns (over the
    keys of the trailing axes with three or more sparse axes, where ``sizes`` must be given; ``keys``:
    those keys when the caller holds them, checked, else computed here).
    """
    rows = _row_merge(src_indices, probe_indices, strides, sizes, pointers, keys)
    if rows is not None:
        ap, bp, limits, keys = rows
        out = _ix.row_multiply(src_indices, src_values, probe_indices, probe_values, ap, bp, limits, _nthreads(),
                               keys)
        if out is not None:
            return out
    return _ix.merge_multiply(src_indices, src_values, probe_indices, probe_values, strides, _nthreads(), sizes)


def mask_values(src_indices, probe_indices, probe_values, strides, *, sizes=None, pointers=None, keys=None):
    """The sorted probe's values at the sorted source's indices (ordered sums, zeros where none).

    ``pointers``: both operands' row pointers: one merge row by row over the columns (over the keys
    of the trailing axes with three or more sparse axes, where ``sizes`` must be given; ``keys`` as
    in :func:`merge_multiply`).
    """
    rows = _row_merge(src_indices, probe_indices, strides, sizes, pointers, keys)
    if rows is not None:
        ap, bp, limits, keys = rows
        out = _ix.row_mask_values(src_indices, probe_indices, probe_values, ap, bp, limits, _nthreads(), keys)
        if out is not None:
            return out
    first, count = match_merge(linear_index(src_indices, strides, sizes), linear_index(probe_indices, strides, sizes))
    return probe_sum(probe_values, None, first, count)


def multiply_search(src_keys, src_values, probe_keys, probe_values, perm, *, shared_runs=False):
    """match_search + multiply_matched (rows None) in one pass: the values travel through the partition.

    ``shared_runs`` is for the GPU.
    """
    _sorted_ends(probe_keys, "probe")
    return _ix.multiply_search(src_keys, src_values, probe_keys, probe_values, perm, _nthreads())


# ---- union ---------------------------------------------------------------------------------------
def merge_union(a_keys, b_keys):
    """(a_pos, b_pos) over the sorted union of two strictly increasing key arrays."""
    _sorted_ends(a_keys, "first")
    _sorted_ends(b_keys, "second")
    sizes, blo, chunk, nthreads = _un.union_offsets(a_keys, b_keys, _nthreads())
    total = int(sizes[-1])
    a_pos, b_pos = np.empty(total, _i64), np.empty(total, _i64)
    _un.union_positions(a_keys, b_keys, sizes, blo, chunk, a_pos, b_pos, nthreads)
    return a_pos, b_pos


def union_columns(a_indices, b_indices, a_pos, b_pos):
    """Union index columns: from a where a_pos >= 0, else from b."""
    out = np.empty((a_indices.shape[0], a_pos.shape[0]), _i64)
    return _un.union_columns(a_indices, b_indices, a_pos, b_pos, out, _nthreads())


def _union_offsets_checked(a_indices, b_indices, strides, limits):
    """Chunked union sizes of two coalesced index sets: (sizes, blo, chunk, nthreads), or the IndexError /
    ValueError for an index outside ``limits`` or keys out of order, met in the same pass."""
    sizes, blo, chunk, flags, nthreads = _un.union_offsets_idx(a_indices, b_indices, strides, limits, _nthreads())
    in_order = (_ix.boundaries_in_order(a_indices, strides, range(chunk, a_indices.shape[1], chunk or 1), True)
                and _ix.boundaries_in_order(b_indices, strides, blo[1:-1], True))
    _ix.raise_merge_flags(flags, limits, a_indices, b_indices, in_order=in_order)
    return sizes, blo, chunk, nthreads


def merge_add(a_indices, b_indices, a_values, b_values, strides, negate, *, sizes=None, pointers=None, keys=None):
    """Fused coalesced union over index columns: (indices, values) of a + b (a - b with negate).

    ``sizes``: the sparse shape; every index is checked against it in the merge's own pass.
    ``pointers``: the operands' row pointers: the merge goes row by row over the columns (the keys of
    the trailing axes with three or more sparse axes, where ``sizes`` must be given; ``keys`` as in
    :func:`merge_multiply`).
    """
    rows = _row_merge(a_indices, b_indices, strides, sizes, pointers, keys)
    if rows is not None:
        ap, bp, limits, keys = rows
        return _un.row_add(a_indices, b_indices, a_values, b_values, ap, bp, limits, bool(negate), _nthreads(), keys)
    sizes, blo, chunk, nthreads = _union_offsets_checked(a_indices, b_indices, strides,
                                                         _ix.merge_limits(strides, sizes))
    total = int(sizes[-1])
    out_idx = np.empty((a_indices.shape[0], total), _i64)
    out_val = np.empty((total, a_values.shape[1]), a_values.dtype)
    _un.merge_add_idx_write(a_indices, b_indices, strides, sizes, blo, chunk, a_values, b_values,
                            bool(negate), out_idx, out_val, nthreads)
    return out_idx, out_val


# ---- elementwise ---------------------------------------------------------------------------------
def merge_gather(a_indices, b_indices, a_words, b_words, strides, a_fill, b_fill, *, sizes=None, pointers=None):
    """Coalesced union over index columns: (indices, a's words or a_fill, b's words or b_fill).

    ``sizes``: the sparse shape; every index is checked against it in the merge's own pass.
    ``pointers``: the operands' row pointers (2-D only): the merge goes row by row over the columns.
    """
    limits = _ix.merge_limits(strides, sizes)
    if pointers is not None and a_indices.shape[0] == 2:
        ap, bp = writeable(pointers[0]), writeable(pointers[1])
        offsets, nthreads = _un.row_union_offsets(a_indices, b_indices, ap, bp, limits, _nthreads())
        total = int(offsets[-1])
        out = (np.empty((2, total), _i64), np.empty((total, a_words.shape[1]), a_words.dtype),
               np.empty((total, b_words.shape[1]), b_words.dtype))
        _ew.row_gather_write(a_indices, b_indices, ap, bp, offsets, a_words, b_words, a_fill, b_fill, *out, nthreads)
        return out
    sizes, blo, chunk, nthreads = _union_offsets_checked(a_indices, b_indices, strides, limits)
    total = int(sizes[-1])
    out_idx = np.empty((a_indices.shape[0], total), _i64)
    out_a = np.empty((total, a_words.shape[1]), a_words.dtype)
    out_b = np.empty((total, b_words.shape[1]), b_words.dtype)
    _ew.merge_gather_write(a_indices, b_indices, strides, sizes, blo, chunk, a_words, b_words,
                           a_fill, b_fill, out_idx, out_a, out_b, nthreads)
    return out_idx, out_a, out_b


# A NumPy ufunc releases the GIL in its loops, so parts of one call run side by side on the kernel
# threads: np.sqrt of 2M float64 3.2 -> 2.0 ms, np.exp 22 -> 11 ms, np.negative 2.0 -> 1.8 ms (two
# threads, a gc.collect() before each call). Parts start at multiples of _UFUNC_ALIGN entries, so a
# part keeps the whole array's alignment; every element goes through the same loop as in one call.
_UFUNC_SERIAL_BELOW = 1 << 17  # elements of the largest operand
_UFUNC_ALIGN = 512


def apply_ufunc(f, args, kwargs):
    """``f(*args, **kwargs)``: a NumPy ufunc over an array of _UFUNC_SERIAL_BELOW elements or more in
    parts along the first axis (the arrays of the result's rank and first extent; other arguments
    broadcast whole to every part), each part run in the caller's context (``np.errstate`` holds
    there)."""
    plan = _ufunc_plan(f, args, kwargs)
    if plan is None:
        return f(*args, **kwargs)
    m, split, outs, kw = plan
    nparts, nthreads = _parts(m * math.prod(outs[0].shape[1:]), _UFUNC_SERIAL_BELOW)
    bounds = [min(m, m * t // nparts // _UFUNC_ALIGN * _UFUNC_ALIGN) for t in range(nparts)] + [m]
    context = contextvars.copy_context()

    def part(t, _nparts):
        lo, hi = bounds[t], bounds[t + 1]
        if lo < hi:
            piece = [a[lo:hi] if s else a for a, s in zip(args, split)]
            context.copy().run(f, *piece, out=tuple(o[lo:hi] for o in outs), **kw)

    _run_parts(part, nparts, nthreads)
    return outs if f.nout > 1 else outs[0]


def _ufunc_plan(f, args, kwargs):
    """(m, which arguments split, outputs, other keywords) for :func:`apply_ufunc` in parts, or None
    for one call: not a plain NumPy ufunc, ``where=``, object items, or no array of enough elements
    (tested first: most calls are small)."""
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    if not arrays or max(a.size for a in arrays) < _UFUNC_SERIAL_BELOW:
        return None
    if not isinstance(f, np.ufunc) or f.signature is not None or "where" in kwargs:
        return None
    if any(a.dtype.hasobject for a in arrays):
        return None
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    if shape[0] < 2:
        return None
    m = shape[0]
    split = [isinstance(a, np.ndarray) and a.ndim == len(shape) and a.shape[0] == m for a in args]
    kw = {k: v for k, v in kwargs.items() if k != "out"}
    out = kwargs.get("out")
    if out is not None:
        outs = out if isinstance(out, tuple) else (out,)
        if not all(isinstance(o, np.ndarray) and o.shape == shape for o in outs):
            return None
    else:
        # the dtypes NumPy resolves for these operands, from a call on none of their entries
        empty = f(*(a[:0] if s else a for a, s in zip(args, split)), **kw)
        outs = tuple(np.empty((m,) + r.shape[1:], r.dtype) for r in (empty if f.nout > 1 else (empty,)))
    return m, split, outs, kw


# ---- reduce --------------------------------------------------------------------------------------
def segment_prod(values, perm, starts):
    """Ordered per-segment products of 2-D ``values`` (perm None: already in order)."""
    return _red.segment_prod(values, starts[:0] if perm is None else perm, perm is not None, starts,
                             _nthreads())


def segment_minmax(values, perm, starts, is_max):
    """Per-segment max (``is_max``) or min of 2-D ``values``; the first NaN wins."""
    return _red.segment_minmax(values, starts[:0] if perm is None else perm, perm is not None, starts,
                               is_max, _nthreads())


def segment_arg(values, perm, starts, sub, is_max):
    """Per segment: (extreme value, sub of its first occurrence, first sub missing) by column."""
    return _red.segment_arg(values, starts[:0] if perm is None else perm, perm is not None, starts, sub,
                            is_max, _nthreads())


def segment_reduce(values, perm, starts, op):
    """Per-segment reductions of 2-D ``values`` by ``op`` in the blocked order (the reductions' kernel)."""
    return _red.segment_reduce(values, starts[:0] if perm is None else perm, perm is not None, starts, op,
                               _nthreads())


def reduce_sorted(sorted_keys, values, op):
    """Runs of equal sorted keys, each reduced in the blocked order: (starts, out) in one call."""
    return _red.reduce_sorted(sorted_keys, values, op, _nthreads())


def reduce_by_key(keys, values, bound, op, is_sorted):
    """Dense accumulator by key, the blocked order: (counts[bound], out[bound, k])."""
    return _red.reduce_by_key(keys, values, int(bound), op, bool(is_sorted), _nthreads())


# ---- indexing ------------------------------------------------------------------------------------
def mask_positions(mask):
    """Ascending positions of the True entries of a 1-D bool mask."""
    mask = np.ascontiguousarray(mask, dtype=np.bool_)
    nparts, nthreads = _parts(mask.shape[0])
    counts = np.zeros(nparts + 1, _i64)
    _run_parts(_idx.mask_count, nparts, nthreads, mask, counts)
    offsets = np.cumsum(counts)
    out = np.empty(int(offsets[-1]), _i64)
    _run_parts(_idx.mask_write, nparts, nthreads, mask, offsets, out)
    return out


def search_ranges(sorted_keys, lo, hi):
    """(start, stop): positions of the key ranges [lo[i], hi[i]) in sorted keys (galloping, in lo order)."""
    lo = np.ascontiguousarray(lo, dtype=_i64)
    hi = np.ascontiguousarray(hi, dtype=_i64)
    m = lo.shape[0]
    if m > 1 and bool((lo[1:] < lo[:-1]).any()):
        order = np.argsort(lo, kind="stable")
    else:
        order = np.arange(m, dtype=_i64)
    start, stop = np.empty(m, _i64), np.empty(m, _i64)
    nparts, nthreads = _parts(m, _SERIAL_QUERIES)
    _run_parts(_idx.search_part, nparts, nthreads, np.ascontiguousarray(sorted_keys, dtype=_i64), lo, hi,
               order, start, stop)
    return start, stop


def expand_ranges(start, count):
    """(rows, owner): the ranges start[i] .. start[i]+count[i]-1 concatenated, and each one's i."""
    start = np.ascontiguousarray(start, dtype=_i64)
    ends = np.cumsum(count, dtype=_i64)
    total = int(ends[-1]) if ends.shape[0] else 0
    rows, owner = np.empty(total, _i64), np.empty(total, _i64)
    nparts, nthreads = _parts(total)
    _run_parts(_idx.expand_part, nparts, nthreads, start, ends, total, rows, owner)
    return rows, owner


def take_ranges(indices, values, start, count):
    """Fused expand_ranges + gathers: (int64[d + 1, t] with row 0 the owner and rows 1.. the
    gathered index columns, values[rows])."""
    return _take(indices, values, np.ascontiguousarray(start, dtype=_i64), np.cumsum(count, dtype=_i64))


def take_rows(indices, values, ptr, rows):
    """take_ranges of the spans ptr[rows[i]] .. ptr[rows[i] + 1] of a row pointer (rows checked)."""
    return _take(indices, values, *_idx.spans_of_rows(np.ascontiguousarray(ptr, dtype=_i64), np.array(rows, _i64)))


def _take(indices, values, start, ends):
    indices = np.ascontiguousarray(indices, dtype=_i64)
    values = np.ascontiguousarray(values)  # (the matrix path copies ranges by memcpy)
    total = int(ends[-1]) if ends.shape[0] else 0
    out_idx = np.empty((indices.shape[0] + 1, total), _i64)
    out_val = np.empty((total, values.shape[1]), values.dtype)
    nparts, nthreads = _parts(total * (indices.shape[0] + 1 + values.shape[1]))
    _run_parts(_idx.take_ranges_part, nparts, nthreads, indices, values, start, ends, total, out_idx, out_val)
    return out_idx, out_val


# ---- join ----------------------------------------------------------------------------------------
def merge_take(keys, offsets, indices, values):
    """(indices[:, perm], values[perm]) for the stable merge order perm of sorted runs of keys."""
    keys = np.ascontiguousarray(keys, dtype=_i64)
    indices = np.ascontiguousarray(indices, dtype=_i64)
    n = keys.shape[0]
    offsets = run_offsets(offsets, keys, indices, values, "merge_take")
    r = offsets.shape[0] - 1
    if r > _join.MAX_MERGE_RUNS:
        perm = sort_pairs(keys, int(keys.max()) + 1)[1] if n else np.zeros(0, _i64)
        return gather_columns(indices, perm), gather_rows(values, perm)
    nparts, nthreads = _parts(n * (indices.shape[0] + values.shape[1]))
    cut, out0 = _join.merge_cuts(keys, offsets, _join.merge_splitters(keys, offsets, nparts))
    out_idx = np.empty((indices.shape[0], n), _i64)
    out_val = np.empty((n, values.shape[1]), values.dtype)
    bad = np.zeros(nparts, np.uint8)
    _run_parts(_join.merge_take_part, nparts, nthreads, keys, cut, out0, indices, values, out_idx, out_val, bad)
    if bad.any() or (nparts > 1 and bool((np.diff(cut, axis=0) < 0).any())):
        raise lying_flag_error()  # keys not sorted within their runs: a sorted flag lies
    return out_idx, out_val


def join_rows(indices, values, pointers, shifts, axis, out_idx, out_val):
    """Pieces sorted by row joined row by row into the outputs (join.py: joining rows)."""
    nparts, nthreads = _parts(out_idx.shape[1] * (out_idx.shape[0] + out_val.shape[1]))
    # (the pieces come in lists, which the read-only guard below does not open)
    _join.join_rows([writeable(x) for x in indices], [writeable(x) for x in values], pointers, shifts, axis,
                    out_idx, out_val, nparts, nthreads)


def counting_take(keys, bound, indices, values, other_bound=None):
    """(offsets int64[bound + 1], indices[:, perm], values[perm]) for the stable order perm of
    ``keys`` in [0, bound). IndexError for a key outside [0, bound), before anything is moved.

    Two index rows (a transpose) with one value word per entry: from DIRECT_MIN_ENTRIES entries
    over at most DIRECT_MAX_KEYS keys the direct sort of join.py (one scatter pass into the
    result); else, when the key and second row pack into one word, the split sort of join.py
    (512 buckets by the key's high bits, each bucket then sorted in cache); otherwise, or when it does not apply, an LSD radix sort of (word,
    value) pairs in digits of at most 9 bits (each pass writes to at most 512 streams, which stay
    in cache; a one-pass counting sort writes to ``bound`` streams, a cache miss per entry).
    Other keys: a counting sort (histograms per part, each part scatters in order).

    ``other_bound`` (optional): the second row's bound, as the shape says. The split sort then
    packs that many bits and its split pass checks the row as it reads it, instead of two passes
    for the row's minimum and maximum first (a flag that lies: the row is read again for them).
    """
    keys = np.ascontiguousarray(keys, dtype=_i64)
    n = keys.shape[0]
    bound = int(bound)
    nparts = 1 if n < _SERIAL_BELOW else _nthreads()
    kb = max(bound - 1, 1).bit_length()
    # (coalesce passes row 0 itself as the keys: the same memory needs no comparison; the rows of
    # a transpose not yet copied come as a view with rows reversed, taken row by row, not copied)
    pair = (indices.shape[0] == 2 and n and values.dtype.itemsize in _join.WORDS and indices.dtype == _i64
            and (keys.ctypes.data == indices[0].ctypes.data or bool((indices[0] == keys).all())))
    other = np.ascontiguousarray(indices[1], dtype=_i64) if pair else None
    split = pair and values.shape[1] == 1
    sb = max(int(other_bound) - 1, 1).bit_length() if other_bound is not None else 64
    if split and _join.DIRECT_MIN_ENTRIES <= n and bound <= _join.DIRECT_MAX_KEYS:
        return _join.direct_take(keys, bound, other, values, nparts)
    if split and kb + sb <= 63:
        out = _join.split_take(keys, bound, other, values, nparts, kb, sb)
        if out is not None and out is not False:
            return out
        split = out is False  # None: the split sort does not apply whatever the row holds
    indices = np.ascontiguousarray(indices, dtype=_i64)
    ob = int(indices[1].max()).bit_length() if indices.shape[0] == 2 and n else 64
    if pair and kb + ob <= 63 and int(indices[1].min()) >= 0:
        out = _join.split_take(keys, bound, other, values, nparts, kb, ob) if split else None
        if out is not None:
            return out
        return _join.radix_take(keys, bound, indices, values, nparts, kb, ob)
    nparts = 1 if bound > n else nparts  # a part holds a histogram of the whole key space
    hist = np.zeros((nparts, bound), _i64)
    bad = np.zeros(nparts, _i64)
    _run_parts(_join.counting_hist_part, nparts, nparts, keys, bound, 0, hist, bad)
    if bad.any():
        raise_out_of_bounds(keys.reshape(1, -1), (bound,))
    offsets, pos = _join.slot_starts(hist)
    out_idx = np.empty((indices.shape[0], n), _i64)
    out_val = np.empty((n, values.shape[1]), values.dtype)
    _run_parts(_join.counting_scatter_part, nparts, nparts, keys, indices, values, pos, out_idx, out_val)
    return offsets, out_idx, out_val


# ---- files ---------------------------------------------------------------------------------------
# These rows read a file's bytes in place (the ``bytes`` an ``io.BytesIO`` holds: read-only memory)
# as well as arrays of their own, so their kernels take read-only views alone (not the writeable
# views of the other rows, below): one specialisation each, and a write into the input would not compile.
CRC_FOLD_FROM = 1 << 12
"""Bytes from which ``crc32`` folds (below, zlib's call costs less than the kernel's hand-off)."""


def crc32(data, crc=0):
    """``zlib.crc32(data, crc)`` of a C-contiguous host buffer: folded by carry-less multiplication
    where Numba compiles for a CPU that has it (the same value, 2-5x zlib 1.2's speed), else zlib's."""
    if isinstance(data, np.ndarray) and data.flags.c_contiguous:
        a = read_only(data.reshape(-1).view(np.uint8))
    else:
        a = read_only(np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8))
    if a.shape[0] < CRC_FOLD_FROM:
        return zlib.crc32(a, crc)
    return _files.crc32(a, crc)


def widen_indices(src, sizes):
    """(int64 copy of ``src`` (d, n), some index outside ``sizes``, first position whose linear key
    decreases, first that repeats its predecessor's (-1: none)) in one pass; the keys count only
    when every index is inside."""
    src = read_only(np.ascontiguousarray(src))
    return _files.widen_indices(src, sizes, *_parts(src.size))


# ---- read-only inputs ----------------------------------------------------------------------------
def _writeable_arguments(row):
    """``row`` with read-only NumPy views (a COO's parts) passed as writeable views of the same memory.

    Numba types read-only arrays apart from writeable ones, so every kernel would otherwise be
    compiled (and cached) twice; the rows never write into their inputs.
    """
    @functools.wraps(row)
    def call(*args, **kwargs):
        args = [writeable(a) if type(a) is np.ndarray else a for a in args]
        if kwargs:
            kwargs = {k: writeable(v) if type(v) is np.ndarray else v for k, v in kwargs.items()}
        return row(*args, **kwargs)
    return call


for _row in sorted({r for rows in KERNEL_FAMILIES.values() for r in rows} - set(KERNEL_FAMILIES["files"])):
    globals()[_row] = _writeable_arguments(globals()[_row])
del _row
