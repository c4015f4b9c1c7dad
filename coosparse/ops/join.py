"""Joining (SPEC 9): concatenate, stack, unstack.

Result flags (``is_unique`` is kept by all of them):

==================  ===========================================================
operation           ``is_sorted`` of the result
==================  ===========================================================
``concatenate``     axis 0: True when every input is sorted (pieces follow each
                    other). Another sparse axis: True when every input is
                    sorted: the pieces are merged by the key of the axes before
                    ``axis`` (``merge_take``: one sequential pass, no sort;
                    axis 1: each output row is the pieces' rows in turn, copied
                    through their row pointers, ``join_rows``, and the result
                    keeps its pointer); else False. A dense axis: the pieces' blocks are joined per
                    index (both flags True)
``stack``           as ``concatenate`` along the new axis
``unstack``         each piece keeps the source's flags
==================  ===========================================================

Fill values: every input's fill must be equal (after casting to the result
dtype).
"""
from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .._core import dtypes as _dtypes
from .._core import fill as _fill
from .._core.arrays import as_words, rows2d
from .._core.coo import COO
from .._core.dispatch import implements, sparse_operand
from .._core.keys import joint_keys
from .._core.shapes import check_entries, checked_shape
from .._kernels.backend import backend_for, is_device_array
from .dense import from_dense
from .shape import check_coo, expand_dims, gather_values, index_rows, ravel, result, to_hybrid


def _xp(a):
    return backend_for(a.indices).xp


def _common(arrays, op, dtype=None, casting="same_kind"):
    """The arrays cast to one dtype and one hybrid layout, and their common fill (ValueError if fills differ).

    The dtype is NumPy's promotion of the arrays' dtypes, or ``dtype`` when given: then each array
    is cast to it directly, as NumPy's ``concatenate(..., dtype=)`` casts (never through the
    promoted dtype first: int64 beside uint64 promotes to float64, which would round), after
    checking that each array's dtype casts to it under ``casting`` (TypeError otherwise, as NumPy).
    """
    arrays = [sparse_operand(x) for x in arrays]  # scipy.sparse and pydata/sparse arrays: their COOs
    if not arrays:
        raise ValueError(f"{op}: need at least one array")
    for i, x in enumerate(arrays):
        if isinstance(x, COO):
            continue
        if not (isinstance(x, (np.ndarray, np.generic, list, tuple)) or is_device_array(x)):
            raise TypeError(f"{op}: unsupported array type {type(x).__name__} at position {i}; "
                            "expected a COO or a dense array")
        if not (isinstance(x, np.ndarray) or is_device_array(x)):
            arrays[i] = np.asarray(x)
    if dtype is None:
        dtype = np.result_type(*[x.dtype for x in arrays])
    else:
        dtype = np.dtype(dtype)
        for x in arrays:
            if not np.can_cast(x.dtype, dtype, casting):
                raise TypeError(f"{op}: cannot cast array data from {x.dtype!r} to {dtype!r} "
                                f"according to the rule {casting!r}")
    arrays = [x if x.dtype == dtype else x.astype(dtype, copy=False) for x in arrays]
    coos = [x for x in arrays if isinstance(x, COO)]
    if len(coos) < len(arrays):
        # dense operands (as np.concatenate takes them) join as COOs of the others' fill, both in
        # the result dtype (a fill of 0.5 beside an int array): the elements that differ from it
        # are stored
        fill = coos[0].fill_value if coos else None
        arrays = [x if isinstance(x, COO) else from_dense(x, fill_value=fill) for x in arrays]
    fill = arrays[0].fill_value
    for i, x in enumerate(arrays[1:], 1):
        if not _fill.equal(x.fill_value, fill):
            raise ValueError(
                f"{op}: fill values differ ({fill!r} at position 0, {x.fill_value!r} at position {i})"
            )
    dn = min(x.dense_ndim for x in arrays)
    return [to_hybrid(x, dn) for x in arrays]


def _piece_keys(be, indices, prefix_shape):
    """Keys of the first ``len(prefix_shape)`` index rows (row-major; ranks for wide prefixes)."""
    k = len(prefix_shape)
    if k == 1:
        return indices[0]
    (keys,), _ = joint_keys([be.xp.ascontiguousarray(indices[:k])], prefix_shape)
    return keys


def concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """Join COO arrays along an existing axis (``axis=None``: flattened first).

    Shapes must match except along ``axis``; dtypes promote as NumPy's, or
    each input is cast to ``dtype`` when given, under the ``casting`` rule
    (TypeError when one may not be cast, as NumPy); fill values must be
    equal. Flags: see the module table (sorted inputs give a
    sorted result along any axis; along a non-leading axis the pieces are
    merged in one sequential pass). O(total nnz).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 1], [1, 0]], np.array([1.0, 2.0]), (2, 2), sorted=True, unique=True)
    >>> c = coosparse.concatenate([a, a], axis=1)
    >>> c.shape, c.indices.tolist(), c.is_coalesced
    ((2, 4), [[0, 0, 1, 1], [1, 3, 0, 2]], True)
    """
    if out is not None:
        raise TypeError("concatenate: out= is not supported (COO arrays are immutable)")
    _dtypes.check_casting(casting)
    arrays = _common(arrays, "concatenate", dtype, casting)
    if axis is None:
        arrays = _common([ravel(x) for x in arrays], "concatenate")
        axis = 0
    first = arrays[0]
    ndim = first.ndim
    for i, x in enumerate(arrays):
        if x.ndim != ndim:
            raise ValueError(
                "all the input arrays must have same number of dimensions, but the array at index 0 "
                f"has {ndim} dimension(s) and the array at index {i} has {x.ndim} dimension(s)"
            )
    if ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis_index(axis, ndim)
    for i, x in enumerate(arrays):
        for d in range(ndim):
            if d != axis and x.shape[d] != first.shape[d]:
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must match "
                    f"exactly, but along dimension {d}, the array at index 0 has size "
                    f"{first.shape[d]} and the array at index {i} has size {x.shape[d]}"
                )
    if len(arrays) == 1:
        return first
    if axis >= first.sparse_ndim:
        # a dense axis: join the blocks index by index (the axis becomes sparse meanwhile)
        dn = first.dense_ndim
        joined = concatenate([to_hybrid(x, ndim - axis - 1) for x in arrays], axis=axis)
        return to_hybrid(joined, dn)
    be = backend_for(*[x.indices for x in arrays])
    xp = be.xp
    sizes = [x.shape[axis] for x in arrays]
    # exact: a joined length beyond 2**63 is refused, never wrapped by the int64 offsets below
    shape = checked_shape(first.shape[:axis] + (sum(sizes),) + first.shape[axis + 1:], "concatenate",
                          like=first.shape)
    counts = [x.nnz for x in arrays]
    total = sum(counts)
    s = first.sparse_ndim
    if axis == 1 and total > 1 and all(x._row_pointer_pays() for x in arrays):
        return _by_rows(be, arrays, sizes, shape, total)
    indices = xp.empty((s, total), dtype=np.int64)
    o = off = 0
    for x, n, size in zip(arrays, counts, sizes):
        indices[:axis, o:o + n] = x.indices[:axis]
        if n:  # (off + size <= 2**63: off itself fits int64 when the piece stores something)
            xp.add(x.indices[axis], off, out=indices[axis, o:o + n])
        indices[axis + 1:, o:o + n] = x.indices[axis + 1:]
        o += n
        off += size
    values = xp.concatenate([x.values for x in arrays], axis=0)
    all_sorted = all(x.is_sorted for x in arrays)
    unique = all(x.is_unique for x in arrays)
    if axis == 0 or not all_sorted or total <= 1:
        return result(first, indices, values, shape, sorted=all_sorted and axis == 0, unique=unique)
    # sorted pieces along a later axis: merge them by the key of the axes before ``axis``
    keys = _piece_keys(be, indices, first.shape[:axis])
    indices, values = merge_values(be, keys, np.cumsum([0] + counts), indices, values)
    return result(first, indices, values, shape, sorted=True, unique=unique)


def _by_rows(be, arrays, sizes, shape, total):
    """Sorted pieces joined along axis 1 through their row pointers (companions, cached): output
    row i is row i of every piece in turn, written once, in order (``join_rows``): no
    concatenation first and no merge. The result is sorted (the merge's order exactly) and its
    row pointer, the sum of the pieces', is cached with it."""
    xp = be.xp
    first = arrays[0]
    ptrs = xp.stack([x._row_pointer() for x in arrays])  # (checks each piece's rows: bounds and order)
    v2 = [rows2d(x.values) for x in arrays]
    out_idx = xp.empty((first.sparse_ndim, total), dtype=np.int64)
    out_words = as_words(xp.empty((total, v2[0].shape[1]), dtype=v2[0].dtype))
    shifts = np.cumsum([0] + sizes[:-1], dtype=np.int64)
    be.join_rows([x.indices for x in arrays], [as_words(w) for w in v2], ptrs, shifts, 1, out_idx, out_words)
    values = out_words.view(v2[0].dtype).reshape((total,) + first.dense_shape)
    out = result(first, out_idx, values, shape, sorted=True, unique=all(x.is_unique for x in arrays))
    pointer = ptrs.sum(axis=0)
    out._companion(("row_pointer", 1, shape[0]), lambda _be: pointer)
    return out


def merge_values(be, keys, offsets, indices, values):
    """``merge_take`` for values of any dense shape and dtype (moved as words)."""
    v2 = rows2d(values)
    out_idx, words = be.merge_take(keys, offsets, indices, as_words(v2))
    return out_idx, words.view(v2.dtype).reshape(values.shape)


@implements(np.concatenate)
def _np_concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return concatenate(arrays, axis=axis, out=out, dtype=dtype, casting=casting)


# np.concat is np.concatenate (NumPy 2): _np_concatenate answers both
def concat(arrays, /, *, axis=0):
    """Array API ``concat``: :func:`concatenate` (``axis=None`` flattens)."""
    return concatenate(arrays, axis=axis)


@implements(np.stack)
def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join same-shape COO arrays along a new axis. Flags as :func:`concatenate`."""
    if out is not None:
        raise TypeError("stack: out= is not supported (COO arrays are immutable)")
    _dtypes.check_casting(casting)
    arrays = _common(arrays, "stack", dtype, casting)
    shape = arrays[0].shape
    for i, x in enumerate(arrays):
        if x.shape != shape:
            raise ValueError(f"all input arrays must have the same shape; got {shape} at 0 and {x.shape} at {i}")
    axis = normalize_axis_index(axis, len(shape) + 1)
    return concatenate([expand_dims(x, axis) for x in arrays], axis=axis)


@implements(np.unstack)
def unstack(x, /, *, axis=0):
    """Split along ``axis`` into a tuple of arrays with that axis removed; each keeps ``x``'s flags.

    One pass: the entries are grouped by their index on ``axis`` with a
    stable sort (a range split when ``axis`` is 0 of a sorted array).
    """
    x = check_coo(x, "unstack")
    if x.ndim == 0:
        raise ValueError("unstack needs an array of at least one dimension")
    axis = normalize_axis_index(axis, x.ndim)
    n = x.shape[axis]
    s = x.sparse_ndim
    shape = x.shape[:axis] + x.shape[axis + 1:]
    check_entries(n, "unstack", 512, "arrays")  # one COO per index: refused at once when that is absurd
    if axis >= s:
        d = axis - s + 1
        return tuple(result(x, x.indices, x.values[(slice(None),) * d + (i,)], shape,
                            sorted=x.is_sorted, unique=x.is_unique) for i in range(n))
    be = backend_for(x.indices)
    xp = be.xp
    row = x.indices[axis]
    if x.is_sorted and axis == 0:
        perm, srow = None, row
    else:
        srow, perm = be.sort_pairs(row, max(n, 1))
    bounds = xp.searchsorted(srow, xp.arange(n + 1, dtype=np.int64))
    bounds = bounds.get() if is_device_array(bounds) else bounds  # synchronize! (piece sizes)
    rest = index_rows(x.indices, [r for r in range(s) if r != axis])
    out = []
    for i in range(n):
        lo, hi = int(bounds[i]), int(bounds[i + 1])
        if perm is None:
            idx = xp.ascontiguousarray(rest[:, lo:hi])
            vals = x.values[lo:hi]
        else:
            rows = perm[lo:hi]
            idx = be.gather_columns(rest, rows)
            vals = gather_values(be, x.values, rows)
        out.append(result(x, idx, vals, shape, sorted=x.is_sorted, unique=x.is_unique))
    return tuple(out)
