"""Searching, sets and sorting (SPEC 9): where, take, take_along_axis, searchsorted, unique_*,
sort, argsort, isin (``nonzero`` and ``argwhere`` live with indexing: a boolean key is its nonzero).

What each returns:

==========================  ==================================================
operation                   result
==========================  ==================================================
``where(c, x, y)``          COO when no operand is a dense array: the union of
                            the operands' indices (duplicates summed first),
                            entries equal to the result's fill not stored;
                            fill ``x.fill if c.fill else y.fill``; both flags
                            True. A dense operand makes the result dense.
``where(c)``                ``nonzero(c)``: a tuple of int64 index arrays (C
                            order), dense
``take``,                   COO: ``a[key]`` with an array key (flags as
``take_along_axis``         indexing)
``searchsorted``            counts (int64): a COO with ``x2``'s indices when
                            ``x2`` is a COO, else dense
``unique_values``,          dense arrays (values sorted, NaNs distinct, the
``unique_counts``           fill counted once per unstored element)
``unique_inverse``,         dense values/indices/counts; ``inverse_indices``
``unique_all``              is a COO (fill: the fill value's index)
``sort``                    COO (fill kept, values equal to the fill not
                            stored), both flags True
``argsort``                 dense int64 (every position has an index)
``isin``                    COO of bool when ``x1`` is a COO (flags of the
                            coalesced ``x1``), else dense
==========================  ==================================================

Set functions and ``sort`` synchronise on a GPU (data-dependent sizes); the
set functions compute their small results on the host.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .._core import dtypes as _dtypes
from .._core import fill as _fill
from .._core.arrays import as_words, rows2d
from .._core.coo import COO
from .._core.dispatch import implements, sparse_operand
from .._core.keys import INT64_LIMIT, joint_keys, strides_of
from .._core.shapes import numpy_intp, prod
from .._kernels.backend import array_namespace, backend_for, is_device_array
from .broadcast import broadcast_shapes
from .coalesce import coalesce
from .elementwise.engine import elementwise
from .indexing import getitem, nonzero
from .shape import check_coo, gather_values, index_rows, insert_axes, ravel, reshape, result, to_hybrid

UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])

MAX_FILL_NANS = 1 << 24
"""Set functions list every unstored NaN separately (NaNs are distinct); beyond this many they refuse."""


def _is_dense(x):
    if isinstance(x, np.ma.MaskedArray):
        _dtypes.native(x)  # TypeError: the mask would be lost
    return not isinstance(x, COO) and (isinstance(x, np.ndarray) or is_device_array(x)) and x.ndim > 0


def _host(x):
    return x.get() if is_device_array(x) else x  # synchronize! (callers document it)


# ---------------------------------------------------------------------- where
def broadcast_sparse(a, shape):
    """``a`` broadcast to ``shape`` (new leading axes, length-1 axes repeated); flags as indexing."""
    shape = tuple(shape)
    if a.shape == shape:
        return a
    if len(shape) < a.ndim:
        raise ValueError(f"cannot broadcast an array of shape {a.shape} to {shape}")
    a = insert_axes(a, range(len(shape) - a.ndim))
    xp = backend_for(a.indices).xp
    for ax, (n_in, n_out) in enumerate(zip(a.shape, shape)):
        if n_in == n_out:
            continue
        if n_in != 1:
            raise ValueError(f"cannot broadcast an array of shape {a.shape} to {shape}")
        a = getitem(a, (slice(None),) * ax + (xp.zeros(n_out, dtype=np.int64),))
    return a


def _values_at(be, ukeys, x, xkeys, fill):
    """x's (coalesced) values at the sorted union keys ``ukeys``, the fill where x stores nothing."""
    xp = be.xp
    first, count = be.match_search(ukeys, xkeys)
    rows = xp.where(count > 0, first, -1)
    v2 = rows2d(x.values)
    vals = be.gather_or_zero(as_words(v2), rows).view(v2.dtype)
    vals = xp.where((count > 0)[:, None], vals, xp.asarray(fill, dtype=x.dtype))
    return vals


@implements(np.where)
def where(condition, x=None, y=None, /):
    """Elements of ``x`` where ``condition`` is true, else of ``y`` (NumPy broadcasting).

    ``where(condition)`` is :func:`nonzero`. With COO and scalar operands the
    result is a COO over the union of the operands' indices: fill
    ``x.fill if condition.fill else y.fill``, entries equal to that fill not
    stored, both flags True (synchronises on a GPU). With a dense array operand
    the elementwise engine's rule decides (SPEC 9): ``where(c, dense, 0)`` keeps
    ``c``'s pattern, ``where(dense_mask, 0, a)`` keeps ``a``'s when the mask
    leaves ``a``'s background alone; otherwise the result is dense.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> c = coosparse.COO([[1, 3]], np.array([True, True]), (4,))
    >>> a = coosparse.COO([[0, 1]], np.array([5.0, 6.0]), (4,))
    >>> coosparse.where(c, a, -1.0).to_dense()
    array([-1.,  6., -1.,  0.])
    """
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    # scipy.sparse and pydata/sparse operands take part as the COOs they convert to
    condition, x, y = sparse_operand(condition), sparse_operand(x), sparse_operand(y)
    ops = [condition, x, y]
    coos = [o for o in ops if isinstance(o, COO)]
    if not coos:
        return np.where(condition, x, y)
    if any(_is_dense(o) for o in ops):
        # a dense operand: the elementwise engine's rule (SPEC 9), as for every ufunc: a COO of the
        # pattern that decides the background when its values leave one, else the dense result
        return elementwise(np.where, (condition, x, y), name="where")
    # a 0-d device array is a constant: read it once (this route synchronises anyway)
    condition, x, y = (_host(o) if is_device_array(o) else o for o in (condition, x, y))
    ops = [condition, x, y]
    dtype = np.result_type(*[o.dtype if isinstance(o, COO) else o for o in (x, y)])
    # (the library's broadcast: NumPy's refuses shapes of 2**63 elements or more)
    shape = broadcast_shapes(*[o.shape if isinstance(o, COO) else np.shape(o) for o in ops])
    ops = [broadcast_sparse(o, shape) if isinstance(o, COO) else np.asarray(o)[()] for o in ops]
    coos = [o for o in ops if isinstance(o, COO)]
    dn = min(o.dense_ndim for o in coos)
    ops = [coalesce(to_hybrid(o, dn)) if isinstance(o, COO) else o for o in ops]
    coos = [o for o in ops if isinstance(o, COO)]
    be = backend_for(*[o.indices for o in coos])
    xp = be.xp
    sparse_shape = coos[0].sparse_shape
    keys, bound = joint_keys([o.indices for o in coos], sparse_shape)
    allkeys = xp.concatenate(keys)
    allidx = xp.concatenate([o.indices for o in coos], axis=1)
    skeys, perm = be.sort_pairs(allkeys, bound)
    starts = be.segment_starts(skeys)  # synchronize! (union size)
    heads = starts[:-1]
    ukeys = skeys[heads]
    uidx = be.gather_columns(xp.ascontiguousarray(allidx), perm[heads])
    m = ukeys.shape[0]
    block = prod(coos[0].dense_shape)
    kmap = {id(o): k for o, k in zip(coos, keys)}

    def at_union(o):
        if isinstance(o, COO):
            return _values_at(be, ukeys, o, kmap[id(o)], o.fill_value), o.fill_value
        return xp.full((m, block), o), o

    (cv, cf), (xv, xf), (yv, yf) = (at_union(o) for o in ops)
    out = xp.where(cv.astype(bool), xv.astype(dtype), yv.astype(dtype))
    fill = np.asarray(xf if bool(cf) else yf).astype(dtype)[()]
    # a value that is the fill with the other sign of zero is stored: the sign is part of the meaning
    differs = _fill.differs(xp, out, fill)
    keep = be.mask_positions(differs.any(axis=1))  # synchronize! (output size)
    values = gather_values(be, out.reshape((m,) + coos[0].dense_shape), keep)
    return COO._trusted(be.gather_columns(uidx, keep), values, shape, True, True, fill)

# ---------------------------------------------------------------------- take
def take(x, indices, /, *, axis=None, mode="raise"):
    """Elements at ``indices`` along ``axis`` (None: of the flattened array), as :func:`numpy.take`.

    ``mode``: 'raise' (IndexError out of range), 'wrap' or 'clip'. Returns a
    COO (a scalar when ``x`` becomes 0-d by an integer). Flags as indexing.
    """
    x = check_coo(x, "take")
    if axis is None:
        x = ravel(x)
        axis = 0
    axis = normalize_axis_index(axis, x.ndim)
    xp = backend_for(x.indices).xp
    idx = indices.to_dense() if isinstance(indices, COO) else indices
    idx = idx if is_device_array(idx) else np.asarray(idx)
    if idx.dtype.kind not in "iu" and idx.size == 0 and isinstance(indices, (list, tuple)):
        idx = idx.astype(np.int64)  # an empty list (float64 to np.asarray) takes nothing, as in NumPy
    if idx.dtype.kind not in "iu":
        raise TypeError(f"take: indices must be integers; got dtype {idx.dtype}")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip'; got {mode!r}")
    n = x.shape[axis]
    if x.size == 0 and idx.size and (mode != "raise" and n == 0 or mode == "raise" and not prod(x.shape[:axis])):
        # NumPy checks no index where the axes before ``axis`` hold nothing, and takes nothing from an
        # empty axis only when the result is empty too
        shape = x.shape[:axis] + tuple(idx.shape) + x.shape[axis + 1:]
        if prod(shape):
            raise IndexError("cannot do a non-empty take from an empty axes.")
        return reshape(getitem(x, (slice(None),) * axis + (slice(0, 0),)), shape)
    if mode == "wrap" or mode == "clip":
        if idx.dtype.itemsize < 8:  # the axis's length need not fit a narrow index dtype (int8 % 300)
            idx = idx.astype(np.int64)
        idx = idx % n if mode == "wrap" and n else (idx.clip(0, n - 1) if n else idx)
    key = (slice(None),) * axis + ((int(idx) if idx.ndim == 0 else xp.asarray(idx)),)
    return getitem(x, key)


@implements(np.take)
def _np_take(a, indices, axis=None, out=None, mode="raise"):
    if out is not None:
        raise TypeError("take: out= is not supported (COO arrays are immutable)")
    # NumPy reads the indices as intp under 'same_kind' casting: bools are 0/1, a float array is a
    # TypeError, a list of floats or a float converts with int(); the Array API's take: integers only
    if isinstance(indices, COO):
        indices = indices.to_dense()
    return take(a, numpy_intp(indices, "same_kind"), axis=axis, mode=mode)


def take_along_axis(x, indices, /, *, axis=-1):
    """``out[..., j, ...] = x[..., indices[..., j, ...], ...]`` along ``axis``, as
    :func:`numpy.take_along_axis` (``indices`` dense, same ndim as ``x``).

    Cost is proportional to ``indices.size`` (the result's size) plus the
    matching of the stored entries. Result flags as indexing (sorted for a
    sorted ``x``).
    """
    x = check_coo(x, "take_along_axis")
    if axis is None:
        x = ravel(x)
        axis = 0
    xp = backend_for(x.indices).xp
    idx = indices.to_dense() if isinstance(indices, COO) else xp.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise IndexError("take_along_axis: indices must be integers")
    if idx.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices have {idx.ndim} dimensions but x has {x.ndim}")
    axis = normalize_axis_index(axis, x.ndim)
    key = []
    for d in range(x.ndim):
        if d == axis:
            key.append(idx)
        else:
            shp = [1] * x.ndim
            shp[d] = x.shape[d]
            key.append(xp.arange(x.shape[d], dtype=np.int64).reshape(shp))
    return getitem(x, tuple(key))


@implements(np.take_along_axis)
def _np_take_along_axis(arr, indices, axis=-1):
    return take_along_axis(arr, indices, axis=axis)


# ---------------------------------------------------------------------- searchsorted
def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """Insertion points of ``x2`` in the sorted 1-D ``x1`` (dense meaning), as int64.

    For a COO ``x1`` the answer is a count: stored values before ``v`` plus
    the unstored elements when the fill comes before ``v`` (NumPy's order,
    NaN last), so no dense array is formed and ``sorter`` is not needed; one
    that is given is checked as NumPy checks it (integers, one per element,
    each in range: TypeError / ValueError otherwise).
    A COO ``x2`` gives a COO of counts with its indices; else a dense array.
    """
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right'; got {side!r}")
    if isinstance(x1, COO):
        if x1.ndim != 1:
            raise ValueError(f"searchsorted: x1 must be 1-D; got shape {x1.shape}")
        if sorter is not None:
            _check_sorter(sorter, x1.size)
        c = coalesce(x1)
        xp = array_namespace(c.values)
        # (a 1-D array whose one dimension is dense stores one block of values: its elements)
        vals = xp.sort(c.values.reshape(-1))
        nfill = x1.size - vals.shape[0]
        fillarr = xp.full(1, x1.fill_value, dtype=c.dtype)

        def count(v):
            out = xp.searchsorted(vals, v, side=side).astype(np.int64)
            if nfill:
                out = out + nfill * xp.searchsorted(fillarr, v, side=side).astype(np.int64)
            return out
    else:
        xp = array_namespace(x1)
        x1 = xp.asarray(x1)
        if x1.ndim != 1:
            raise ValueError(f"searchsorted: x1 must be 1-D; got shape {x1.shape}")

        def count(v):
            return xp.searchsorted(x1, v, side=side, sorter=sorter).astype(np.int64)
    if isinstance(x2, COO):
        c2 = x2 if x2.is_unique else coalesce(x2)
        fill = count(xp.full(1, x2.fill_value, dtype=x2.dtype))
        return COO._trusted(c2.indices, count(c2.values), x2.shape, c2.is_sorted, c2.is_unique,
                            np.int64(int(_host(fill)[0])))
    out = count(xp.asarray(x2))
    return out


def _check_sorter(sorter, n):
    """NumPy's checks of ``sorter`` (a COO ``x1`` does not need it, but a bad one is still an error)."""
    s = sorter.to_dense() if isinstance(sorter, COO) else sorter
    s = _host(s) if is_device_array(s) else np.asarray(s)
    if s.dtype.kind not in "iu":
        raise TypeError(f"searchsorted: sorter must hold integers; got dtype {s.dtype}")
    if s.ndim != 1 or s.shape[0] != n:
        raise ValueError(f"searchsorted: sorter must be 1-D with one entry per element of x1 ({n}); "
                         f"got shape {s.shape}")
    if n and (int(s.min()) < 0 or int(s.max()) >= n):
        bad = int(s.min()) if int(s.min()) < 0 else int(s.max())
        raise ValueError(f"searchsorted: sorter index {bad} is out of range for x1 of size {n}")


@implements(np.searchsorted)
def _np_searchsorted(a, v, side="left", sorter=None):
    return searchsorted(a, v, side=side, sorter=sorter)


# ---------------------------------------------------------------------- sets
def _set_parts(x, positions=False):
    """Host arrays: stored element values (duplicates summed), their flat positions (optional),
    and the number of unstored elements."""
    x = check_coo(x, "unique")
    c = coalesce(x)
    block = prod(c.dense_shape)
    vals = np.asarray(_host(c.values)).reshape(-1)
    nfill = x.size - c.nnz * block
    pos = None
    if positions:
        if x.size >= INT64_LIMIT:
            raise ValueError(f"flat indices of shape {x.shape} do not fit int64")
        strides, _ = strides_of(c.sparse_shape)
        idx = np.asarray(_host(c.indices))
        keys = (idx * np.array(strides, dtype=np.int64).reshape(-1, 1)).sum(axis=0) if c.sparse_ndim else \
            np.zeros(c.nnz, dtype=np.int64)
        pos = (keys[:, None] * block + np.arange(block, dtype=np.int64)[None, :]).reshape(-1)
    return c, vals, pos, nfill


def _with_fill(x, vals, pos, nfill, nan_distinct=True):
    """Append the fill: once (weight nfill), or once per unstored element when it is NaN (unless
    not ``nan_distinct``)."""
    fill = np.asarray(x.fill_value)
    nan = fill.dtype.kind in "fc" and bool(np.isnan(fill))
    if nfill == 0:
        return vals, pos, np.ones(vals.shape[0], dtype=np.int64)
    if nan and nan_distinct:
        if nfill > MAX_FILL_NANS:
            raise ValueError(
                f"the fill value is NaN and {nfill} elements are unstored: each would be a distinct "
                "unique value (Array API rule); convert with .to_dense() if this is intended"
            )
        extra_pos = None
        if pos is not None:
            extra_pos = np.setdiff1d(np.arange(x.size, dtype=np.int64), pos, assume_unique=True)
            pos = np.concatenate([pos, extra_pos])
        vals = np.concatenate([vals, np.full(nfill, fill, dtype=vals.dtype)])
        return vals, pos, np.ones(vals.shape[0], dtype=np.int64)
    if pos is not None:
        # the first unstored flat position: where the sorted stored positions leave a gap
        gaps = np.flatnonzero(pos != np.arange(pos.shape[0], dtype=np.int64))
        first = int(gaps[0]) if gaps.shape[0] else pos.shape[0]
        pos = np.concatenate([pos, [first]])
    weights = None  # (the fill's count does not fit int64: only counts need it)
    if nfill < INT64_LIMIT:
        weights = np.ones(vals.shape[0] + 1, dtype=np.int64)
        weights[-1] = nfill
    return np.concatenate([vals, np.asarray([fill], dtype=vals.dtype)]), pos, weights


def _counts(x, u, inv, w):
    """The count of each distinct value (int64): the weights summed by inverse index."""
    if w is None:
        raise ValueError(f"the fill value of an array of shape {x.shape} occurs 2**63 times or more: "
                         "its count does not fit int64")
    counts = np.zeros(u.shape[0], dtype=np.int64)
    np.add.at(counts, inv.reshape(-1), w)
    return counts


def _device(x, arr):
    return array_namespace(x.values).asarray(arr)


def unique_values(x, /):
    """The distinct values of ``x`` (dense meaning), sorted; NaNs are distinct. A dense array."""
    x = check_coo(x, "unique_values")
    _, vals, _, nfill = _set_parts(x)
    vals, _, _ = _with_fill(x, vals, None, nfill)
    return _device(x, np.unique(vals, equal_nan=False))


def unique_counts(x, /):
    """``(values, counts)`` of the distinct values (dense arrays; the fill counted once per unstored element)."""
    x = check_coo(x, "unique_counts")
    _, vals, _, nfill = _set_parts(x)
    vals, _, w = _with_fill(x, vals, None, nfill)
    u, inv = np.unique(vals, return_inverse=True, equal_nan=False)
    return UniqueCountsResult(_device(x, u), _device(x, _counts(x, u, inv, w)))


def _inverse_coo(x, c, inv, nstored):
    xp = array_namespace(c.values)
    inv_vals = xp.asarray(inv[:nstored].astype(np.int64)).reshape(c.values.shape)
    fill = np.int64(inv[nstored]) if inv.shape[0] > nstored else np.int64(0)
    return COO._trusted(c.indices, inv_vals, x.shape, c.is_sorted, c.is_unique, fill)


def unique_inverse(x, /):
    """``(values, inverse_indices)``: ``values`` dense, ``inverse_indices`` a COO of ``x``'s shape
    (its fill is the index of the fill value)."""
    x = check_coo(x, "unique_inverse")
    c, vals, _, nfill = _set_parts(x)
    nstored = vals.shape[0]
    vals, _, _ = _with_fill(x, vals, None, nfill)
    u, inv = np.unique(vals, return_inverse=True, equal_nan=False)
    return UniqueInverseResult(_device(x, u), _inverse_coo(x, c, inv.reshape(-1), nstored))


def unique_all(x, /):
    """``(values, indices, inverse_indices, counts)``; ``indices`` are flat positions of first
    occurrences (dense int64); ``inverse_indices`` a COO as in :func:`unique_inverse`."""
    x = check_coo(x, "unique_all")
    c, vals, pos, nfill = _set_parts(x, positions=True)
    nstored = vals.shape[0]
    vals, pos, w = _with_fill(x, vals, pos, nfill)
    u, inv = np.unique(vals, return_inverse=True, equal_nan=False)
    inv = inv.reshape(-1)
    first = np.full(u.shape[0], np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, inv, pos)
    return UniqueAllResult(_device(x, u), _device(x, first), _inverse_coo(x, c, inv, nstored),
                           _device(x, _counts(x, u, inv, w)))


@implements(np.unique)
def _np_unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
               equal_nan=True, sorted=True):
    """``numpy.unique`` of a COO's dense meaning (NumPy's keywords; ``equal_nan=True``, NumPy's
    default, counts every NaN as one value). Values, first flat indices and counts are dense
    arrays; the inverse is a COO of ``ar``'s shape (its fill: the index of the fill value), as
    :func:`unique_inverse` gives, never a dense array of ``ar``'s size."""
    if axis is not None:
        raise TypeError("numpy.unique with axis= is not supported for coosparse.COO arrays (unique slices "
                        "of a sparse array); convert with .to_dense() first")
    ar = sparse_operand(ar)
    ar = check_coo(ar, "numpy.unique")
    c, vals, pos, nfill = _set_parts(ar, positions=return_index)
    nstored = vals.shape[0]
    fill = np.asarray(ar.fill_value)
    if return_inverse and nfill and not equal_nan and fill.dtype.kind in "fc" and bool(np.isnan(fill)):
        raise ValueError("numpy.unique(return_inverse=True, equal_nan=False) of an array whose fill is NaN: each "
                         "unstored NaN is its own value, so the inverse is no COO of one fill; use equal_nan=True")
    vals, pos, w = _with_fill(ar, vals, pos, nfill, nan_distinct=not equal_nan)
    u, inv = np.unique(vals, return_inverse=True, equal_nan=equal_nan)
    inv = inv.reshape(-1)
    out = [_device(ar, u)]
    if return_index:
        first = np.full(u.shape[0], np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, inv, pos)
        out.append(_device(ar, first))
    if return_inverse:
        out.append(_inverse_coo(ar, c, inv, nstored))
    if return_counts:
        out.append(_device(ar, _counts(ar, u, inv, w)))
    return out[0] if len(out) == 1 else tuple(out)


@implements(np.unique_values)
def _np_unique_values(x):
    return unique_values(x)


@implements(np.unique_counts)
def _np_unique_counts(x):
    return unique_counts(x)


@implements(np.unique_inverse)
def _np_unique_inverse(x):
    return unique_inverse(x)


@implements(np.unique_all)
def _np_unique_all(x):
    return unique_all(x)


def lane_ranks(xp, lane):
    """(rank within its lane, its lane's length) of each entry of ``lane`` (lane ids, grouped)."""
    m = lane.shape[0]
    new = xp.ones(m, dtype=bool)
    if m:
        new[1:] = lane[1:] != lane[:-1]
    heads = xp.flatnonzero(new)
    lane_id = xp.cumsum(new) - 1
    rank = xp.arange(m, dtype=np.int64) - heads[lane_id]
    lane_len = xp.diff(xp.concatenate([heads, xp.full(1, m, dtype=heads.dtype)]))[lane_id]
    return rank, lane_len


# ---------------------------------------------------------------------- sort / argsort
def sort(x, /, *, axis=-1, descending=False, stable=True):
    """Sorted copy along ``axis`` (dense meaning; NaN last): a COO with ``x``'s fill.

    Per lane, the stored values that sort before the fill come first, those
    after it last; values equal to the fill are not stored. Both flags True.
    O(nnz log nnz); synchronises on a GPU.
    """
    x = check_coo(x, "sort")
    axis = normalize_axis_index(axis, x.ndim)
    s = x.sparse_ndim
    xp = array_namespace(x.values)
    if axis >= s:
        c = coalesce(x)
        vals = xp.sort(c.values, axis=axis - s + 1)
        if descending:
            vals = xp.flip(vals, axis=axis - s + 1)
        return result(c, c.indices, vals, c.shape, sorted=c.is_sorted, unique=c.is_unique)
    if x.dense_ndim:
        x = to_hybrid(x, 0)
    c = coalesce(x)
    be = backend_for(c.indices)
    if (axis == c.ndim - 1 and c.ndim >= 1 and c.dtype in _ROW_SORT_DTYPES and c.nnz
            and not np.isnan(c.fill_value) and (c.ndim == 1 or c._row_pointer_pays())):
        return _sort_last_axis(c, be, descending)
    vals = c.values
    fillarr = xp.full(1, c.fill_value, dtype=c.dtype)
    less = xp.searchsorted(fillarr, vals, side="right") == 0
    greater = xp.searchsorted(fillarr, vals, side="left") == 1
    keep = be.mask_positions(less | greater)  # synchronize! (output size)
    idx = be.gather_columns(c.indices, keep)
    vals, less = vals[keep], less[keep]
    other = [d for d in range(c.ndim) if d != axis]
    lane_shape = tuple(c.shape[d] for d in other)
    (lane,), _ = joint_keys([index_rows(idx, other)], lane_shape)
    # lane-major, then value order (NaN last): two stable sorts (CuPy's lexsort takes one 2-D array
    # of a single dtype, which would not hold int64 lanes and float values exactly)
    o = xp.argsort(vals, kind="stable")
    order = o[xp.argsort(lane[o], kind="stable")]
    lane, vals, less, idx = lane[order], vals[order], less[order], idx[:, order]
    rank, lane_len = lane_ranks(xp, lane)
    n = c.shape[axis]
    # within a lane the values before the fill come first (ranks 0..), the rest end the lane
    pos = xp.where(less, rank, n - (lane_len - rank))
    if descending:
        pos = n - 1 - pos
    idx = xp.ascontiguousarray(idx)
    idx[axis] = pos
    out = result(c, idx, vals, c.shape, sorted=axis == c.ndim - 1 and not descending, unique=True)
    return out if out.is_sorted else coalesce(out)


_ROW_SORT_DTYPES = (np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float32), np.dtype(np.float64))


def last_axis_lanes(c, be):
    """The lanes along the last axis of coalesced ``c`` (nnz > 0) as segments of its entries:
    offsets int64[s + 1]. A matrix whose row pointer pays: that pointer (cached, empty rows
    included); otherwise the runs of equal leading indices."""
    xp = be.xp
    if c.ndim == 1:
        offsets = xp.zeros(2, dtype=np.int64)
        offsets[1] = c.nnz
    elif c.ndim == 2 and c._row_pointer_pays():
        offsets = c._row_pointer()
    else:  # lanes: runs of equal leading indices
        change = xp.zeros(c.nnz + 1, dtype=bool)
        change[0] = change[-1] = True
        change[1:-1] = (c.indices[:-1, 1:] != c.indices[:-1, :-1]).any(axis=0)
        offsets = xp.flatnonzero(change)  # synchronize! (the number of lanes)
    return offsets


def _sort_last_axis(c, be, descending):
    """sort along the last axis of coalesced ``c``: each lane (the entries of one row of a matrix,
    through its cached row pointer) sorted by the ``sort_lanes`` row, which also writes the new
    last index of each kept entry. Results as the general path's."""
    offsets = last_axis_lanes(c, be)
    n = c.shape[-1]
    idx, vals = be.sort_lanes(c.values, offsets, c.indices, c.fill_value, n)  # synchronize! (output size)
    if descending:
        idx[-1] = n - 1 - idx[-1]
    out = result(c, idx, vals, c.shape, sorted=not descending, unique=True)
    return out if out.is_sorted else coalesce(out)


@implements(np.sort)
def _np_sort(a, axis=-1, kind=None, order=None, *, stable=None):
    if order is not None:
        raise ValueError("sort: order= (structured arrays) is not supported")
    if axis is None:
        a, axis = ravel(a), 0
    return sort(a, axis=axis)


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """Indices that sort ``x`` along ``axis``: a dense int64 array (every element has one).

    Stable in both directions (equal elements keep their order). Densifies
    ``x``: the result has its size anyway.
    """
    x = check_coo(x, "argsort")
    axis = normalize_axis_index(axis, x.ndim)
    xp = array_namespace(x.values)
    d = x.to_dense()
    if not descending:
        return xp.argsort(d, axis=axis, kind="stable").astype(np.int64, copy=False)
    n = d.shape[axis]
    r = xp.flip(xp.argsort(xp.flip(d, axis=axis), axis=axis, kind="stable"), axis=axis)
    return (n - 1 - r).astype(np.int64, copy=False)


@implements(np.argsort)
def _np_argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    if order is not None:
        raise ValueError("argsort: order= (structured arrays) is not supported")
    if axis is None:
        a, axis = ravel(a), 0
    elif np.ndim(a) == 0:  # NumPy sorts a 0-d array as the 1-D array of its element: array([0])
        a = ravel(a)
    return argsort(a, axis=axis)


# ---------------------------------------------------------------------- isin
def isin(x1, x2, /, *, invert=False):
    """Elementwise ``x1 in x2`` (NaN is in nothing), as :func:`numpy.isin`.

    A COO ``x1`` gives a bool COO: its coalesced indices and flags, fill
    ``fill in x2``. A COO ``x2`` is its set of values (the fill included
    when some element is unstored).
    """
    if isinstance(x2, COO):
        # its set of values: a NaN fill once (NaN is in nothing), however many elements are unstored
        x2 = check_coo(x2, "isin")
        _, vals, _, nfill = _set_parts(x2)
        vals, _, _ = _with_fill(x2, vals, None, nfill, nan_distinct=False)
        test = _device(x2, np.unique(vals))
    else:
        test = x2
    if isinstance(x1, COO):
        c = x1 if x1.is_unique else coalesce(x1)
        xp = array_namespace(c.values)
        test = xp.asarray(test)
        vals = xp.isin(c.values, test, invert=invert)
        fill = np.isin(np.asarray(c.fill_value), _host(test), invert=invert)[()]
        return COO._trusted(c.indices, vals, c.shape, c.is_sorted, c.is_unique, np.bool_(fill))
    xp = array_namespace(x1) if not np.isscalar(x1) else np
    return xp.isin(x1, xp.asarray(test), invert=invert)


@implements(np.isin)
def _np_isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    return isin(element, test_elements, invert=invert)

