"""Selection along an axis: ``topk`` (the k largest or smallest elements of each lane, as a COO) and
``argpartition`` (NumPy's, a dense index array).

``topk`` keeps the array's shape: each lane along ``axis`` keeps the elements
that rank among its ``k`` first (largest first, or smallest first), and every
other element becomes the fill. Ranking uses the dense meaning, so the
unstored elements of a lane take part as the fill: a lane of stored negatives
with room for unstored zeros keeps none of them when ``k`` does not reach past
the zeros. NaN ranks as the largest value (NumPy's sort order). Among equal
stored values the lower index ranks first; elements equal to the fill are
never stored (storing them would change nothing). This is the sparsification
of a kNN similarity matrix (``topk(S, k, axis=1)``: each row's k best
neighbours), with no dense lane: along the last axis a selection within each lane (the
``topk_lanes`` kernel: no sort), along another axis one sort of the stored entries.
"""
from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .._core.dispatch import implements
from .._core.keys import joint_keys, key_bound
from .._kernels.backend import backend_for
from .coalesce import coalesce
from .device import as_coo
from .search import argsort, lane_ranks, last_axis_lanes
from .shape import gather_values, index_rows, ravel, result, to_hybrid


_LANE_DTYPES = (np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float32), np.dtype(np.float64))


def _sides(xp, v, fill, largest):
    """(before, after): the entries that rank before the fill of their lane, and after it."""
    gt, lt = v > fill, v < fill
    if v.dtype.kind == "f":
        vn, fn = xp.isnan(v), bool(np.isnan(fill))
        gt, lt = (gt | vn, lt) if not fn else (xp.zeros_like(gt), ~vn)
    return (gt, lt) if largest else (lt, gt)


def _order_key(xp, v, largest):
    """Unsigned keys whose order is ``v``'s (descending for ``largest``; NaN largest, zeros of both
    signs equal)."""
    if v.dtype == np.bool_:
        v = v.astype(np.uint8)
    if v.dtype.kind == "f":
        v = xp.where(xp.isnan(v), np.nan, v + v.dtype.type(0))  # one NaN, and -0 as +0
        width = v.dtype.itemsize * 8
        ut = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
        bits = v.view(ut)
        sign = ut(1) << ut(width - 1)
        # IEEE order: negative numbers' bits run backwards; flipping them all (or the sign bit of
        # the positive ones) orders every float as its unsigned bits
        u = xp.where(bits & sign, ~bits, bits | sign)
    elif v.dtype.kind == "i":
        width = v.dtype.itemsize * 8
        ut = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
        u = v.view(ut) ^ (ut(1) << ut(width - 1))
    else:
        u = v
    return ~u if largest else u


def _lane_value_order(be, lane, lane_bound, v, largest):
    """Stable order by lane, then by value within a lane (:func:`_order_key`; ties in stored order).

    The kernel's stable sort, least significant key first: the value in 32-bit words, then the
    lane. Each pass keeps its keys and positions packed in one machine word (the kernel's fastest
    path), which a wider key (lane and value together) would not.
    """
    xp = be.xp
    u = _order_key(xp, v, largest)
    width = u.dtype.itemsize * 8
    u = u.astype(np.uint64)
    if width <= 32:
        words = [(u.astype(np.int64), 1 << width)]
    else:
        words = [((u & np.uint64(0xFFFFFFFF)).astype(np.int64), 1 << 32),
                 ((u >> np.uint64(32)).astype(np.int64), 1 << 32)]
    words.append((lane, lane_bound))
    order = None
    for w, bound in words:
        w = w if order is None else w[order]
        _, p = be.sort_pairs(xp.ascontiguousarray(w), bound)
        order = p if order is None else order[p]
    return order


def topk(x, k, /, *, axis=-1, largest=True):
    """The ``k`` largest (or smallest) elements of each lane along ``axis``, the rest set to the fill.

    Parameters
    ----------
    x : COO or array_like
        Real dtypes (complex values have no order: TypeError). A dense input is
        converted with :func:`coosparse.asarray`.
    k : int
        ``0 <= k <= x.shape[axis]``.
    axis : int
        The axis along which lanes run (default the last).
    largest : bool
        True: the largest elements (NaN first); False: the smallest.

    Returns
    -------
    COO
        ``x``'s shape, dtype and fill; stores at most ``k`` entries per lane
        (those of the lane's first ``k`` elements that differ from the fill),
        coalesced (both flags True). Synchronises on a GPU.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> s = coosparse.asarray(np.array([[0.0, 0.9, 0.2, 0.7], [0.5, 0.0, 0.0, 0.1]]))
    >>> coosparse.topk(s, 2, axis=1).to_dense()
    array([[0. , 0.9, 0. , 0.7],
           [0.5, 0. , 0. , 0.1]])
    >>> coosparse.topk(coosparse.asarray(np.array([-1.0, -3.0, 0.0, 0.0])), 2).to_dense()  # the zeros win
    array([0., 0., 0., 0.])
    """
    x = as_coo(x, "topk")
    if x.ndim == 0:
        raise ValueError("topk: a 0-d array has no axis to select along")
    axis = normalize_axis_index(operator.index(axis), x.ndim)
    k = operator.index(k)
    n = x.shape[axis]
    if not 0 <= k <= n:
        raise ValueError(f"topk: k must be between 0 and {n} (the length of axis {axis}); got {k}")
    if x.dtype.kind == "c":
        raise TypeError("topk: complex values have no order")
    if x.dense_ndim:
        x = to_hybrid(x, 0)
    c = coalesce(x)
    be = backend_for(c.indices)
    if axis == c.ndim - 1 and c.dtype in _LANE_DTYPES and c.nnz:
        # the lanes are runs of the stored order (the rows, through the cached row pointer):
        # a selection per lane, no sort, and the kept positions come out in stored order
        keep = be.topk_lanes(c.values, last_axis_lanes(c, be), c.fill_value, n, k, largest)  # synchronize!
        return result(c, be.gather_columns(c.indices, keep), gather_values(be, c.values, keep), c.shape,
                      sorted=True, unique=True)
    xp = be.xp
    before, after = _sides(xp, c.values, c.fill_value, largest)
    cand = be.mask_positions(before | after)  # synchronize! (entries that differ from the fill)
    v, before = c.values[cand], before[cand]
    other = [d for d in range(c.ndim) if d != axis]
    lane_shape = tuple(c.shape[d] for d in other)
    if other:
        (lane,), _ = joint_keys([index_rows(be.gather_columns(c.indices, cand), other)], lane_shape)
    else:
        lane = xp.zeros(cand.shape[0], dtype=np.int64)
    # lane-major, value order within a lane (ties: stored order, i.e. the lower index first)
    order = _lane_value_order(be, lane, key_bound(lane_shape) if other else 1, v, largest)
    lane, before = lane[order], before[order]
    rank, lane_len = lane_ranks(xp, lane)
    # the fill's elements of a lane sit between its entries before and after the fill
    pos = xp.where(before, rank, n - (lane_len - rank))
    kept = xp.zeros(c.nnz, dtype=bool)
    kept[cand[order][pos < k]] = True
    keep = be.mask_positions(kept)  # synchronize! (output size); ascending: the result stays coalesced
    return result(c, be.gather_columns(c.indices, keep), gather_values(be, c.values, keep), c.shape,
                  sorted=True, unique=True)


def argpartition(x, kth, /, *, axis=-1):
    """Indices that partition ``x`` along ``axis`` around ``kth`` (``numpy.argpartition``).

    The result is a dense int64 array of ``x``'s shape (NumPy's form: every
    element has an index). It is the stable sort order of each lane
    (:func:`coosparse.argsort`), which is a valid partition for every ``kth``
    at once. ``kth`` (an int or a sequence) is validated as NumPy does.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> coosparse.argpartition(coosparse.asarray(np.array([3.0, 0.0, 1.0])), 1)
    array([1, 2, 0])
    """
    x = as_coo(x, "argpartition")
    if x.ndim == 0:
        raise ValueError("argpartition: a 0-d array has no axis to partition along")
    axis = normalize_axis_index(operator.index(axis), x.ndim)
    n = x.shape[axis]
    kth = np.asarray(kth)
    if kth.dtype == np.bool_:
        raise ValueError("Booleans unacceptable as partition index")
    if kth.dtype.kind not in "iu":  # ([] included: it is float64)
        raise TypeError(f"Partition index must be integer; got dtype {kth.dtype}")
    if kth.ndim > 1:
        raise ValueError(f"kth must be an integer or a 1-D sequence of them; got shape {kth.shape}")
    for t in np.atleast_1d(kth):
        t = operator.index(t)
        if not -n <= t < n:
            raise ValueError(f"kth(={t}) out of bounds ({n})")
    return argsort(x, axis=axis)


@implements(np.argpartition)
def _np_argpartition(a, kth, axis=-1, kind="introselect", order=None):
    if order is not None:
        raise TypeError("numpy.argpartition with order= is not supported for coosparse.COO arrays")
    if axis is None:  # the flattened array, as NumPy
        return argpartition(ravel(a), kth, axis=0)
    if np.ndim(a) == 0:  # NumPy partitions a 0-d array as the 1-D array of its element: array([0])
        a = ravel(a)
    return argpartition(a, kth, axis=axis)
