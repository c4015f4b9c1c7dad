"""The Numba kernel layer: the CPU implementation of ``coosparse/_kernel_api.py``."""
import numba
import numpy as np

from . import coalesce as _co
from . import linear_index as _li
from . import scatter as _sc
from . import segment as _seg
from . import sort as _sort

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
