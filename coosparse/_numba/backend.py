"""The Numba kernel layer: the CPU implementation of ``coosparse/_kernel_api.py``."""
import numba
import numpy as np

from .._bounds import raise_out_of_bounds, size_limits

from . import coalesce as _co
from . import intersect as _ix
from . import linear_index as _li
from . import scatter as _sc
from . import segment as _seg
from . import sort as _sort
from . import union as _un

name = "numba"
xp = np

unravel_index = _li.unravel_index
segment_starts = _seg.segment_starts


def linear_index(indices, strides, sizes=None):
    """Row-major keys/addresses; with ``sizes`` every index is bounds-checked in the same pass."""
    if sizes is None:
        return _li.linear_index(indices, strides)
    keys, bad = _li.linear_index_checked(indices, strides, size_limits(sizes))
    if bad:
        raise_out_of_bounds(indices, sizes)
    return keys


def sort_pairs(keys, bound):
    """Stable sort of int64 keys in [0, bound): (sorted_keys, perm)."""
    return _sort.sort_pairs(keys, int(bound), numba.get_num_threads())


def coalesce_linear(indices, strides, bound, values):
    """Fused coalesce of a narrow shape: (unique indices, ordered sums) by linear index."""
    return _co.coalesce_linear(indices, strides, int(bound), values, numba.get_num_threads())


def segment_sum(values, perm, starts):
    """Ordered per-segment sums of 2-D ``values`` (perm None: already in order)."""
    if perm is None:
        return _seg.segment_sum(values, starts[:0], starts, False)
    return _seg.segment_sum(values, perm, starts, True)


def gather_rows(values, rows):
    return _seg.gather_rows(values, rows)


def scatter_add(target, addresses, values, inner, *, hint=None):
    """Deterministic parallel scatter-add (kernel API row ``scatter_add``; ``hint`` is for the GPU)."""
    _sc.scatter_add(target, addresses, values, inner, numba.get_num_threads())


def scatter_set(target, addresses, values, inner, *, hint=None):
    """Deterministic parallel scatter-set (kernel API row ``scatter_set``; ``hint`` is for the GPU)."""
    _sc.scatter_set(target, addresses, values, inner, numba.get_num_threads())


_FIRST_TOUCH_BYTES = 1 << 23  # outputs from 8 MiB: the copy is split between the threads


def strided_scatter_sorted(out, inp, src, src_base, offset, sizes, strides, src_strides, copy):
    """Copy + scatter of an increasing view (kernel API row ``strided_scatter_sorted``).

    With ``copy`` the work is one libc memcpy plus the scatter, memory-bound.
    Below 8 MiB it runs serially (waking the thread pool costs milliseconds
    on a loaded machine); from 8 MiB each thread copies and scatters its own
    range of the output, so a fresh output's pages are faulted by the
    threads that write them, in parallel (issue 16), instead of by one.
    A scatter without copy splits the view between the threads.
    """
    if copy and out.nbytes < _FIRST_TOUCH_BYTES:
        total = int(np.prod(sizes))
        _sc._sorted_piece(out, inp, True, src, int(src_base), int(offset), sizes, strides, src_strides,
                          0, total, 0, out.shape[0])
    else:
        _sc.strided_scatter_sorted(out, inp, src, int(src_base), int(offset), sizes, strides, src_strides,
                                   bool(copy), numba.get_num_threads())


def strided_scatter_ordered(out, src, src_base, offset, sizes, strides, src_strides):
    """Serial C-order scatter, last writer wins (kernel API row ``strided_scatter_ordered``)."""
    _sc.strided_scatter_ordered(out, src, int(src_base), int(offset), sizes, strides, src_strides)
# ---- intersection family (issue 3) -------------------------------------------
# Outputs are allocated here with NumPy (transparent huge pages) and filled by
# the kernels: Numba-allocated arrays of tens of MB page-fault several times
# slower than the kernels run.
_i64 = np.int64


def _chunks():
    return 4 * numba.get_num_threads()


def _sorted_ends(keys, operand):
    """The O(1) check of a sorted flag (``intersect.ends_in_order``) on a key array."""
    if keys.shape[0] > 1:
        _ix.ends_in_order(keys[0], keys[-1], operand)


def match_merge(src_keys, probe_keys):
    """(first, count) of sorted ``src_keys`` in sorted ``probe_keys`` (linear merge)."""
    _sorted_ends(src_keys, "source")
    _sorted_ends(probe_keys, "probe")
    n = src_keys.shape[0]
    return _ix.match_merge(src_keys, probe_keys, _chunks(), np.empty(n, _i64), np.empty(n, _i64))


def match_search(src_keys, probe_keys):
    """(first, count) of ``src_keys`` in any order in sorted ``probe_keys`` (partitioned search)."""
    _sorted_ends(probe_keys, "probe")
    return _ix.match_search(src_keys, probe_keys, numba.get_num_threads())


def merge_matches(src_keys, probe_keys):
    """(rows, first, count) of the matched entries of sorted ``src_keys`` only."""
    _sorted_ends(src_keys, "source")
    _sorted_ends(probe_keys, "probe")
    return _ix.merge_matches(src_keys, probe_keys, _chunks())


def compact_matches(first, count):
    """(rows, first[rows], count[rows]) for the rows with count != 0."""
    return _ix.compact_matches(first, count, _chunks())


def probe_sum(values, perm, first, count, *, shared_runs=False):
    """Ordered sums of the matched probe rows (perm None: identity; ``shared_runs`` is for the GPU)."""
    out = np.empty((first.shape[0], values.shape[1]), values.dtype)
    return _ix.probe_sum(values, first[:0] if perm is None else perm, perm is not None, first, count, out)


def multiply_matched(src_values, rows, probe_values, perm, first, count, *, shared_runs=False):
    """src_values[rows] * ordered probe sums, fused (rows / perm None: identity; ``shared_runs`` is for the GPU)."""
    empty = first[:0]
    out = np.empty((first.shape[0], src_values.shape[1]), src_values.dtype)
    return _ix.multiply_matched(
        src_values, empty if rows is None else rows, rows is not None,
        probe_values, empty if perm is None else perm, perm is not None, first, count, out,
    )


def gather_columns(indices, rows):
    """indices[:, rows], C-contiguous."""
    return _ix.gather_columns(indices, rows, np.empty((indices.shape[0], rows.shape[0]), _i64))


def gather_strided(source, addresses, inner):
    """out[i, c] = source[addresses[i] + inner[c]]."""
    out = np.empty((addresses.shape[0], inner.shape[0]), source.dtype)
    return _ix.gather_strided(source, addresses, inner, out)


def merge_union(a_keys, b_keys):
    """(a_pos, b_pos) over the sorted union of two strictly increasing key arrays."""
    _sorted_ends(a_keys, "first")
    _sorted_ends(b_keys, "second")
    sizes, blo, chunk = _un.union_offsets(a_keys, b_keys, _chunks())
    total = int(sizes[-1])
    a_pos, b_pos = np.empty(total, _i64), np.empty(total, _i64)
    _un.union_positions(a_keys, b_keys, sizes, blo, chunk, a_pos, b_pos)
    return a_pos, b_pos


def union_columns(a_indices, b_indices, a_pos, b_pos):
    """Union index columns: from a where a_pos >= 0, else from b."""
    out = np.empty((a_indices.shape[0], a_pos.shape[0]), _i64)
    return _un.union_columns(a_indices, b_indices, a_pos, b_pos, out)


def gather_or_zero(values, rows):
    """values[rows], zero rows where rows < 0."""
    return _un.gather_or_zero(values, rows, np.empty((rows.shape[0], values.shape[1]), values.dtype))


def merge_add(a_indices, b_indices, a_values, b_values, strides, negate, *, sizes=None):
    """Fused coalesced union over index columns: (indices, values) of a + b (a - b with negate).

    ``sizes``: the sparse shape; every index is checked against it in the merge's own pass.
    """
    limits = _ix.merge_limits(strides, sizes)
    sizes, blo, chunk, flags = _un.union_offsets_idx(a_indices, b_indices, strides, limits, _chunks())
    in_order = (_ix.boundaries_in_order(a_indices, strides, range(chunk, a_indices.shape[1], chunk or 1), True)
                and _ix.boundaries_in_order(b_indices, strides, blo[1:-1], True))
    _ix.raise_merge_flags(flags, limits, a_indices, b_indices, in_order=in_order)
    total = int(sizes[-1])
    out_idx = np.empty((a_indices.shape[0], total), _i64)
    out_val = np.empty((total, a_values.shape[1]), a_values.dtype)
    _un.merge_add_idx_write(a_indices, b_indices, strides, sizes, blo, chunk, a_values, b_values,
                            bool(negate), out_idx, out_val)
    return out_idx, out_val


def merge_multiply(src_indices, src_values, probe_indices, probe_values, strides, *, sizes=None):
    """Fused compact product of a sorted source and a sorted probe: (indices, values).

    ``sizes``: the sparse shape; every index the merge reads is checked against it in its pass.
    """
    return _ix.merge_multiply(src_indices, src_values, probe_indices, probe_values, strides, _chunks(), sizes)


# ---- elementwise engine (issue 11) -------------------------------------------------
from . import ufunc as _uf  # noqa: E402

_SERIAL_BELOW = 32768  # entries: below this one thread merges (the pool's wake-up costs more)


def merge_gather(a_indices, b_indices, a_words, b_words, strides, a_fill, b_fill, *, sizes=None):
    """Coalesced union over index columns: (indices, a's words or a_fill, b's words or b_fill).

    ``sizes``: the sparse shape; every index is checked against it in the merge's own pass.
    """
    limits = _ix.merge_limits(strides, sizes)
    if a_indices.shape[1] + b_indices.shape[1] < _SERIAL_BELOW:
        flags = np.zeros((1, 2), _i64)
        out = _uf.merge_gather_serial(a_indices, b_indices, strides, limits, flags, a_words, b_words,
                                      a_fill, b_fill)
        _ix.raise_merge_flags(flags, limits, a_indices, b_indices)
        return out
    sizes, blo, chunk, flags = _un.union_offsets_idx(a_indices, b_indices, strides, limits, _chunks())
    in_order = (_ix.boundaries_in_order(a_indices, strides, range(chunk, a_indices.shape[1], chunk or 1), True)
                and _ix.boundaries_in_order(b_indices, strides, blo[1:-1], True))
    _ix.raise_merge_flags(flags, limits, a_indices, b_indices, in_order=in_order)
    total = int(sizes[-1])
    out_idx = np.empty((a_indices.shape[0], total), _i64)
    out_a = np.empty((total, a_words.shape[1]), a_words.dtype)
    out_b = np.empty((total, b_words.shape[1]), b_words.dtype)
    _uf.merge_gather_write(a_indices, b_indices, strides, sizes, blo, chunk, a_words, b_words,
                           a_fill, b_fill, out_idx, out_a, out_b)
    return out_idx, out_a, out_b


# ---- CPU performance II (issue 16) ---------------------------------------------------
def multiply_search(src_keys, src_values, probe_keys, probe_values, perm, *, shared_runs=False):
    """match_search + multiply_matched (rows None) in one pass: the values travel through the partition.

    ``shared_runs`` is for the GPU.
    """
    _sorted_ends(probe_keys, "probe")
    return _ix.multiply_search(src_keys, src_values, probe_keys, probe_values, perm, numba.get_num_threads())
