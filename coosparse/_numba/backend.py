"""The Numba kernel layer: the CPU implementation of ``coosparse/_kernel_api.py``."""
import numba
import numpy as np

from . import linear_index as _li
from . import scatter as _sc
from . import segment as _seg
from . import sort as _sort

name = "numba"
xp = np

linear_index = _li.linear_index
unravel_index = _li.unravel_index
segment_starts = _seg.segment_starts


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


def scatter_add(target, addresses, values, inner):
    """Deterministic parallel scatter-add (kernel API row ``scatter_add``)."""
    _sc.scatter_add(target, addresses, values, inner, numba.get_num_threads())


def scatter_set(target, addresses, values, inner):
    """Deterministic parallel scatter-set (kernel API row ``scatter_set``)."""
    _sc.scatter_set(target, addresses, values, inner, numba.get_num_threads())


def strided_scatter_sorted(out, inp, src, src_base, offset, sizes, strides, src_strides, copy):
    """Copy + scatter of an increasing view (kernel API row ``strided_scatter_sorted``).

    With ``copy`` the work is one libc memcpy plus the scatter: memory-bound,
    and measured no faster on two threads (best cases equal) while waking the
    thread pool costs milliseconds on a loaded machine, so it runs serially.
    A scatter without copy splits the view between the threads.
    """
    if copy:
        total = int(np.prod(sizes))
        _sc._sorted_piece(out, inp, True, src, int(src_base), int(offset), sizes, strides, src_strides,
                          0, total, 0, out.shape[0])
    else:
        _sc.strided_scatter_sorted(out, inp, src, int(src_base), int(offset), sizes, strides, src_strides,
                                   False, numba.get_num_threads())


def strided_scatter_ordered(out, src, src_base, offset, sizes, strides, src_strides):
    """Serial C-order scatter, last writer wins (kernel API row ``strided_scatter_ordered``)."""
    _sc.strided_scatter_ordered(out, src, int(src_base), int(offset), sizes, strides, src_strides)
