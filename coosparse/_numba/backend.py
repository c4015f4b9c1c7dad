"""The Numba kernel layer: the CPU implementation of ``coosparse/_kernel_api.py``."""
import numba
import numpy as np

from . import intersect as _ix
from . import linear_index as _li
from . import scatter as _sc
from . import segment as _seg
from . import sort as _sort
from . import union as _un

name = "numba"
xp = np

linear_index = _li.linear_index
unravel_index = _li.unravel_index
segment_starts = _seg.segment_starts
scatter_add = _sc.scatter_add
scatter_set = _sc.scatter_set


def sort_pairs(keys, bound):
    """Stable sort of int64 keys in [0, bound): (sorted_keys, perm)."""
    return _sort.sort_pairs(keys, int(bound), numba.get_num_threads())


def segment_sum(values, perm, starts):
    """Ordered per-segment sums of 2-D ``values`` (perm None: already in order)."""
    if perm is None:
        return _seg.segment_sum(values, starts[:0], starts, False)
    return _seg.segment_sum(values, perm, starts, True)


def gather_rows(values, rows):
    return _seg.gather_rows(values, rows)


# ---- intersection family (issue 3) -------------------------------------------
gather_columns = _ix.gather_columns
gather_strided = _ix.gather_strided
union_columns = _un.union_columns
gather_or_zero = _un.gather_or_zero
union_values = _un.union_values


def match_merge(src_keys, probe_keys):
    """(first, count) of sorted ``src_keys`` in sorted ``probe_keys`` (linear merge)."""
    return _ix.match_merge(src_keys, probe_keys, 4 * numba.get_num_threads())


def match_search(src_keys, probe_keys):
    """(first, count) of ``src_keys`` in any order in sorted ``probe_keys`` (partitioned search)."""
    return _ix.match_search(src_keys, probe_keys, numba.get_num_threads())


def merge_matches(src_keys, probe_keys):
    """(rows, first, count) of the matched entries of sorted ``src_keys`` only."""
    return _ix.merge_matches(src_keys, probe_keys, 4 * numba.get_num_threads())


def compact_matches(first, count):
    """(rows, first[rows], count[rows]) for the rows with count != 0."""
    return _ix.compact_matches(first, count, 4 * numba.get_num_threads())


def probe_sum(values, perm, first, count):
    """Ordered sums of the matched probe rows (perm None: identity)."""
    return _ix.probe_sum(values, first[:0] if perm is None else perm, perm is not None, first, count)


def multiply_matched(src_values, rows, probe_values, perm, first, count):
    """src_values[rows] * ordered probe sums, fused (rows / perm None: identity)."""
    empty = first[:0]
    return _ix.multiply_matched(
        src_values, empty if rows is None else rows, rows is not None,
        probe_values, empty if perm is None else perm, perm is not None, first, count,
    )


def merge_union(a_keys, b_keys):
    """(a_pos, b_pos) over the sorted union of two strictly increasing key arrays."""
    return _un.merge_union(a_keys, b_keys, 4 * numba.get_num_threads())
