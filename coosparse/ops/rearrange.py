"""Rearranging (SPEC 9): flip, roll, tile, repeat, pad, tril/triu, diagonal, kron.

Result flags (``is_unique`` is kept by all of them unless stated):

==================  ===========================================================
operation           ``is_sorted`` of the result
==================  ===========================================================
``flip``            True only when no flipped sparse axis has length > 1
``roll``            kept: the entries that wrap around and those that do not
                    are two sorted runs, merged (``merge_take``)
``tile``            kept (repeated ``concatenate``)
``repeat``          kept (sorted inputs are re-sorted by a stable key sort
                    when ``axis`` is not the last sparse axis)
``pad``             kept (indices shift)
``tril``/``triu``   kept (entries filtered, or blocks masked)
``diagonal``        kept when the two axes are the last two sparse axes,
                    else False
``kron``            True for sorted 1-D operands, else False; unique (an
                    operand with duplicates is coalesced first, so sorted)
==================  ===========================================================

Fill values: ``pad`` pads with the fill (``constant_values`` must equal it);
``tril``, ``triu`` and ``kron`` need fill 0 (ValueError otherwise).
"""
from __future__ import annotations

import numbers
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .._core import fill as _fill
from .._core.coo import COO
from .._core.dispatch import implements, sparse_operand
from .._core.keys import joint_keys
from .._core.shapes import check_entries, checked_shape, numpy_intp, prod
from .._kernels.backend import backend_for, is_device_array
from .._kernels.bounds import check_indices
from .broadcast import broadcast_to
from .coalesce import coalesce
from .dense import from_dense
from .device import as_coo
from .indexing import getitem
from .join import _piece_keys, _xp, concatenate, merge_values
from .shape import gather_values, insert_axes, ravel, reshape, result, to_hybrid


@implements(np.flip)
def flip(x, /, axis=None):
    """Reverse the order of elements along ``axis`` (None: all axes).

    Flags: ``is_sorted`` only when no flipped sparse axis has length > 1.
    """
    x = as_coo(x, "flip")
    axes = range(x.ndim) if axis is None else normalize_axis_tuple(axis, x.ndim)
    key = [slice(None)] * x.ndim
    for ax in axes:
        key[ax] = slice(None, None, -1)
    return getitem(x, tuple(key))


def roll(x, /, shift, *, axis=None):
    """Roll elements along ``axis`` (None: the flattened array), as :func:`numpy.roll`.

    Flags kept: the entries that wrap around and those that do not form two
    sorted runs, merged in one pass.
    """
    x = as_coo(x, "roll")
    if axis is None:
        return reshape(roll(ravel(x), shift, axis=0), x.shape)
    try:
        pairs = np.broadcast(np.asarray(shift), np.asarray(axis))
    except ValueError:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences of the same length") from None
    if np.ndim(shift) > 1 or np.ndim(axis) > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    total = {}
    for sh, ax in pairs:
        ax = normalize_axis_index(operator.index(ax), x.ndim)
        total[ax] = total.get(ax, 0) + operator.index(sh)
    out = x
    for ax, sh in total.items():
        n = x.shape[ax]
        if n:
            out = _roll_axis(out, sh % n, ax)
    return out


@implements(np.roll)
def _np_roll(a, shift, axis=None):
    # NumPy's signature takes axis by position too (the Array API's roll does not); NumPy checks the
    # axes first and reads each shift with int() (1.0 and 1.5 shift by 1, True by 1, NaN ValueError),
    # the Array API's roll takes integers only
    if axis is not None:
        normalize_axis_tuple(axis, np.ndim(a), allow_duplicate=True)
    sh = np.asarray(shift)
    if sh.dtype.kind not in "iu" and sh.ndim <= 1:
        shift = int(sh[()]) if sh.ndim == 0 else [int(v) for v in sh]
    return roll(a, shift, axis=axis)


def _roll_axis(x, sh, axis):
    if sh == 0 or x.nnz == 0:
        return x
    n = x.shape[axis]
    s = x.sparse_ndim
    if axis >= s:
        vals = _xp(x).roll(x.values, sh, axis=axis - s + 1)
        return result(x, x.indices, vals, x.shape, sorted=x.is_sorted, unique=x.is_unique)
    be = backend_for(x.indices)
    xp = be.xp
    row = x.indices[axis]
    wrap = row >= n - sh
    new_row = xp.where(wrap, row + (sh - n), row + sh)
    indices = x.indices.copy()
    indices[axis] = new_row
    if not x.is_sorted or x.nnz <= 1:
        return result(x, indices, x.values, x.shape, sorted=False, unique=x.is_unique)
    # runs: entries that do not wrap, then those that do (each sorted), merged by the
    # key of the axes up to ``axis``
    stay = be.mask_positions(~wrap)  # synchronize! (run sizes)
    moved = be.mask_positions(wrap)
    order = xp.concatenate([stay, moved])
    indices = be.gather_columns(indices, order)
    keys = _piece_keys(be, indices, x.shape[:axis + 1])
    indices, values = merge_values(be, keys, np.array([0, stay.shape[0], x.nnz]), indices,
                                   gather_values(be, x.values, order))
    return result(x, indices, values, x.shape, sorted=True, unique=x.is_unique)


def _sorted_by_leading_axes(be, indices, vals, shape, naxes):
    """(indices, vals) stably sorted by the key of their first ``naxes`` sparse axes: copies laid out
    copy-major, each sorted within itself, interleave into the sorted order."""
    (keys,), bound = joint_keys([be.xp.ascontiguousarray(indices[:naxes])], shape[:naxes])
    _, perm = be.sort_pairs(keys, bound)
    return be.gather_columns(indices, perm), gather_values(be, vals, perm)


# above this many copies along one axis, tile lays the copies out by index arithmetic (one
# pass, plus a stable sort for a sorted array along a later axis) instead of merging pieces
_TILE_MERGE_MAX = 16


@implements(np.tile)
def tile(x, /, reps):
    """Repeat the whole array ``reps`` times per axis, as :func:`numpy.tile`. Flags kept.

    The result's shape and entry count are checked before anything is
    built: a dimension beyond 2**63 raises ``ValueError``, more entries than
    memory can hold ``MemoryError`` (both naming the sizes).
    """
    x = as_coo(x, "tile")
    try:
        reps = (operator.index(reps),) if np.ndim(reps) == 0 else tuple(operator.index(r) for r in reps)
    except TypeError:
        raise TypeError(f"tile: reps must be an integer or a sequence of integers; got {reps!r}") from None
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative; got {reps}")
    if len(reps) > x.ndim:
        x = insert_axes(x, range(len(reps) - x.ndim))
    reps = (1,) * (x.ndim - len(reps)) + reps
    s = x.sparse_ndim
    shape = checked_shape([n * r for n, r in zip(x.shape, reps)], "tile", like=x.shape)
    if 0 in reps or x.nnz == 0:
        return result(x, _xp(x).zeros((s, 0), dtype=np.int64), x.values[:0].reshape((0,) + shape[s:]), shape,
                      sorted=True, unique=True)
    check_entries(x.nnz * prod(reps[:s]), "tile", 8 * s + x.dtype.itemsize * prod(shape[s:]))
    dense_reps = reps[s:]
    if any(r != 1 for r in dense_reps):
        vals = _xp(x).tile(x.values, (1,) + dense_reps)
        x = result(x, x.indices, vals, x.shape[:s] + shape[s:], sorted=x.is_sorted, unique=x.is_unique)
    for ax in range(s - 1, -1, -1):
        r = reps[ax]
        if r > _TILE_MERGE_MAX:
            x = _tile_axis(x, ax, r)
        elif r > 1:
            x = concatenate([x] * r, axis=ax)
    return x


def _tile_axis(x, ax, r):
    """``r`` copies of ``x`` along sparse axis ``ax`` (copy k shifted by ``k * n``), flags kept."""
    be = backend_for(x.indices)
    xp = be.xp
    n, nnz = x.shape[ax], x.nnz
    indices = xp.tile(x.indices, (1, r))
    indices[ax] += xp.repeat(xp.arange(r, dtype=np.int64) * n, nnz)  # (r - 1) * n < r * n <= 2**63
    vals = xp.tile(x.values, (r,) + (1,) * x.dense_ndim)
    shape = x.shape[:ax] + (n * r,) + x.shape[ax + 1:]
    sorted_ = x.is_sorted and (ax == 0 or prod(x.shape[:ax]) <= 1)
    if x.is_sorted and not sorted_:
        # copy-major order is sorted within each copy; a stable sort by the key of the axes up to
        # ``ax`` interleaves the copies and keeps each group's (sorted) stored order
        indices, vals = _sorted_by_leading_axes(be, indices, vals, shape, ax + 1)
        sorted_ = True
    return result(x, indices, vals, shape, sorted=sorted_, unique=x.is_unique)


def repeat(x, /, repeats, *, axis=None):
    """Repeat each element ``repeats`` times along ``axis`` (None: flattened), as :func:`numpy.repeat`.

    ``repeats`` is an int or one non-negative int per element of ``axis``.
    Flags kept (a sorted input is re-sorted by a stable key sort when
    ``axis`` is not its last sparse axis).
    """
    x = as_coo(x, "repeat")
    if axis is None:
        x = ravel(x)
        axis = 0
    axis = normalize_axis_index(axis, x.ndim)
    n = x.shape[axis]
    if isinstance(repeats, COO):
        repeats = repeats.to_dense()
    rep = np.asarray(repeats.get() if is_device_array(repeats) else repeats)  # (host metadata: read back)
    if rep.size == 0 and rep.dtype.kind == "f":
        rep = rep.astype(np.int64)  # an empty list
    if rep.dtype.kind not in "iu" or rep.ndim > 1:
        raise ValueError(f"repeat: repeats must be an integer or a 1-D integer array; got {repeats!r}")
    if rep.dtype.kind == "u" and rep.size and int(rep.max()) >= 2**63:
        raise ValueError(f"repeat: a repeat count of {int(rep.max())} would give a dimension of 2**63 or "
                         "more: its indices would not fit int64")
    if rep.ndim == 0 or (rep.shape[0] == 1 and n != 1):
        # one count for every element: never broadcast to the axis (its length may pass 2**60)
        r = int(rep.reshape(-1)[0])
        if r < 0 and n:  # (NumPy repeats an empty axis by any count: nothing to repeat)
            raise ValueError("repeat: repeats may not contain negative values")
        new_n, most, rep = n * r, r, None
    else:
        if rep.shape[0] != n:
            raise ValueError(f"repeat: repeats has {rep.shape[0]} entries but axis {axis} has length {n}")
        rep = rep.astype(np.int64)
        if (rep < 0).any():
            raise ValueError("repeat: repeats may not contain negative values")
        most = int(rep.max()) if n else 0
        # the new length in exact Python ints (an int64 sum could wrap)
        new_n = int(rep.sum()) if n == 0 or most < 2**63 // n else sum(int(v) for v in rep)
    shape = checked_shape(x.shape[:axis] + (new_n,) + x.shape[axis + 1:], "repeat", like=x.shape)
    s = x.sparse_ndim
    be = backend_for(x.indices)
    xp = be.xp
    if x.nnz == 0:
        return result(x, x.indices, x.values.reshape((0,) + shape[s:]), shape, sorted=True, unique=True)
    if n:
        # an upper bound of the stored entries (every entry repeated the most), refused at once
        # when even the exact count (one pass over the repeats of the stored rows) cannot be held
        entry_bytes = (8 * s if axis < s else 0) + x.dtype.itemsize * prod(shape[s:])
        if axis >= s or rep is None:
            check_entries(x.nnz * (1 if axis >= s else most), "repeat", entry_bytes)
        else:
            try:
                check_entries(x.nnz * most, "repeat", entry_bytes)
            except MemoryError:
                rows = xp.clip(x.indices[axis], 0, n - 1)  # (a bound: check=False indices are checked later)
                # (a float sum cannot wrap; its rounding does not matter against a memory size)
                check_entries(int(xp.asarray(rep)[rows].sum(dtype=np.float64)), "repeat",  # synchronize!
                              entry_bytes)
    if axis >= s:
        counts = [most] * n if rep is None else rep.tolist()
        vals = xp.repeat(x.values, counts, axis=axis - s + 1)  # (CuPy takes repeats as host ints)
        return result(x, x.indices, vals, shape, sorted=x.is_sorted, unique=x.is_unique)
    row = x.indices[axis]
    if rep is None:  # entry at index i: rows i * r .. i * r + r - 1 (i * r < n * r <= 2**63)
        starts = row * most if n > 1 else xp.zeros_like(row)
        new_row, owner = be.expand_ranges(starts, xp.full(x.nnz, most, dtype=np.int64))  # synchronize!
    else:
        cum = xp.asarray(np.concatenate([[0], np.cumsum(rep)[:-1]]).astype(np.int64))
        rep_d = xp.asarray(rep)
        new_row, owner = be.expand_ranges(cum[row], rep_d[row])  # synchronize! (output size)
    indices = be.gather_columns(x.indices, owner)
    indices[axis] = new_row
    vals = gather_values(be, x.values, owner)
    # along the last sparse axis the copies of an entry follow it, unless a duplicate's copies interleave
    sorted_ = x.is_sorted and (most <= 1 or (axis == s - 1 and x.is_unique))
    if x.is_sorted and not sorted_ and indices.shape[1] > 1:
        indices, vals = _sorted_by_leading_axes(be, indices, vals, shape, axis + 1)
        sorted_ = True
    return result(x, indices, vals, shape, sorted=sorted_, unique=x.is_unique)


@implements(np.repeat)
def _np_repeat(a, repeats, axis=None):
    # NumPy's signature takes axis by position too (the Array API's repeat does not); its counts are
    # read as NumPy reads them (2.0 and True count, a float array is a TypeError), the Array API's
    # repeat takes integers only
    if isinstance(repeats, COO):
        repeats = repeats.to_dense()
    return repeat(a, numpy_intp(repeats, "safe"), axis=axis)


def _pad_widths(pad_width, ndim):
    """``pad_width`` as one (before, after) pair of Python ints per dimension, as :func:`numpy.pad` reads it."""
    if isinstance(pad_width, dict):  # NumPy 2.3's {axis: width or (before, after)}, other axes 0
        pairs = [(0, 0)] * ndim
        for ax, w in pad_width.items():
            ax = normalize_axis_index(operator.index(ax), ndim)
            w = _pad_widths(w if np.ndim(w) else (w, w), 1)[0]
            pairs[ax] = w
        return pairs
    # as objects: Python ints of any size stay exact (NumPy would make 2**63 beside 0 a float)
    pw = pad_width if isinstance(pad_width, np.ndarray) else np.asarray(pad_width, dtype=object)
    if pw.dtype == object:
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in pw.reshape(-1)):
            raise TypeError(f"pad: pad_width must be integers; got {pad_width!r}")
    elif pw.dtype.kind not in "iu":
        raise TypeError(f"pad: pad_width must be integers; got {pad_width!r}")
    try:
        pw = np.broadcast_to(pw, (ndim, 2))
    except ValueError:
        raise ValueError(f"pad: pad_width {pad_width!r} does not fit an array of {ndim} dimensions") from None
    pairs = [(int(p[0]), int(p[1])) for p in pw]
    if any(v < 0 for p in pairs for v in p):
        raise ValueError("pad: pad_width may not be negative")
    return pairs


@implements(np.pad)
def pad(x, pad_width, mode="constant", **kwargs):
    """Pad with the fill value, as :func:`numpy.pad` with ``mode='constant'``. Flags kept.

    ``constant_values`` (default 0) must equal the array's fill value: the
    padding stores nothing. ``mode='empty'`` (NumPy leaves the padding
    undefined) pads with the fill too. Other modes raise ``NotImplementedError``.
    """
    x = as_coo(x, "pad")
    if mode not in ("constant", "empty"):
        raise NotImplementedError(f"pad: only mode='constant' and mode='empty' are supported; got {mode!r}")
    extra = set(kwargs) - ({"constant_values"} if mode == "constant" else set())
    if extra:
        raise TypeError(f"pad: unexpected keyword arguments {sorted(extra)} for mode={mode!r}")
    if mode == "constant":
        cv = kwargs.get("constant_values", 0)
        cva = np.asarray(cv)
        if cva.dtype == object or not all(_fill.equal(np.asarray(v).astype(x.dtype)[()], x.fill_value)
                                          for v in cva.reshape(-1)):
            raise ValueError(
                f"pad: constant_values {cv!r} must equal the fill value {x.fill_value!r} "
                "(the padding stores nothing)"
            )
    pw = _pad_widths(pad_width, x.ndim)
    # exact Python ints: a width near 2**63 is refused here, never wrapped in int64
    shape = checked_shape([n + p0 + p1 for n, (p0, p1) in zip(x.shape, pw)], "pad", like=x.shape)
    s = x.sparse_ndim
    dense_pad = any(p0 or p1 for p0, p1 in pw[s:])
    if dense_pad:
        check_entries(x.nnz * prod(shape[s:]), "pad", x.dtype.itemsize, "values")
    if dense_pad and not x.is_unique and not _fill.is_zero(x.fill_value):
        x = coalesce(x)  # each duplicate's padding would add the fill once more
    xp = _xp(x)
    indices = x.indices
    if x.nnz and any(p0 for p0, _ in pw[:s]):  # shift row by row: the offsets stay host scalars (no upload)
        indices = xp.empty_like(x.indices)
        for d in range(s):
            xp.add(x.indices[d], pw[d][0], out=indices[d])
    vals = x.values
    if dense_pad:
        vals = xp.pad(vals, [(0, 0)] + list(pw[s:]), mode="constant", constant_values=x.fill_value)
    return result(x, indices, vals, shape, sorted=x.is_sorted, unique=x.is_unique)


def _triangle(x, k, lower, op):
    x = as_coo(x, op)
    _fill.require_zero_fill(op, x)
    if x.ndim < 2:
        raise ValueError(f"{op} needs an array of at least 2 dimensions; got shape {x.shape}")
    k = operator.index(k)
    be = backend_for(x.indices)
    xp = be.xp
    s = x.sparse_ndim
    ri, ci = x.ndim - 2, x.ndim - 1

    def keep(r, c):
        return (c - r <= k) if lower else (c - r >= k)

    if ci < s:  # both sparse: drop entries
        mask = keep(x.indices[ri], x.indices[ci])
        rows = be.mask_positions(mask)  # synchronize! (output size)
        return result(x, be.gather_columns(x.indices, rows), gather_values(be, x.values, rows), x.shape,
                      sorted=x.is_sorted, unique=x.is_unique)
    nc = x.shape[ci]
    c = xp.arange(nc, dtype=np.int64)
    if ri < s:  # row sparse, column dense: mask each entry's block
        m = keep(x.indices[ri][:, None], c[None, :])
        m = m.reshape((x.nnz,) + (1,) * (x.dense_ndim - 1) + (nc,))
    else:
        r = xp.arange(x.shape[ri], dtype=np.int64)
        m = keep(r[:, None], c[None, :])
    vals = xp.where(m, x.values, xp.zeros((), dtype=x.dtype))
    return result(x, x.indices, vals, x.shape, sorted=x.is_sorted, unique=x.is_unique)


def tril(x, /, k=0):
    """Lower triangle of the last two axes (elements with ``j - i > k`` zeroed); fill 0 only."""
    return _triangle(x, k, True, "tril")


def triu(x, /, k=0):
    """Upper triangle of the last two axes (elements with ``j - i < k`` zeroed); fill 0 only."""
    return _triangle(x, k, False, "triu")


def _np_triangle(m, k, lower, op):
    # NumPy's tril/triu of a 1-D array give the n x n matrix of it broadcast over the rows, then
    # the triangle; the Array API's (``coosparse.tril``) take matrices (..., M, N) only
    x = as_coo(m, op)
    if x.ndim == 1:
        _fill.require_zero_fill(op, x)  # (before anything is broadcast)
        x = broadcast_to(x, (x.shape[0],) * 2)
    return _triangle(x, k, lower, op)


@implements(np.tril)
def _np_tril(m, k=0):
    return _np_triangle(m, k, True, "tril")


@implements(np.triu)
def _np_triu(m, k=0):
    return _np_triangle(m, k, False, "triu")


@implements(np.diagonal)
def diagonal(x, offset=0, axis1=0, axis2=1):
    """Diagonals over ``axis1`` and ``axis2``, as :func:`numpy.diagonal`: those axes are removed
    and the diagonal becomes the last axis.

    Flags: ``is_sorted`` kept when the two axes are the last two sparse
    axes; ``is_unique`` kept. O(nnz).
    """
    x = as_coo(x, "diagonal")
    offset = operator.index(offset)
    a1 = normalize_axis_index(axis1, x.ndim)
    a2 = normalize_axis_index(axis2, x.ndim)
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    n1, n2 = x.shape[a1], x.shape[a2]
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    keep_axes = [d for d in range(x.ndim) if d not in (a1, a2)]
    shape = tuple(x.shape[d] for d in keep_axes) + (length,)
    s = x.sparse_ndim
    xp = _xp(x)
    if min(a1, a2) >= s:  # both dense: the values' own diagonal
        vals = xp.diagonal(x.values, offset, a1 - s + 1, a2 - s + 1)
        return result(x, x.indices, vals, shape, sorted=x.is_sorted, unique=x.is_unique)
    if x.dense_ndim:
        x = to_hybrid(x, 0)
    be = backend_for(x.indices)
    i, j = x.indices[a1], x.indices[a2]
    rows = be.mask_positions(j - i == offset)  # synchronize! (output size)
    cols = be.gather_columns(x.indices, rows)
    indices = xp.empty((len(keep_axes) + 1, rows.shape[0]), dtype=np.int64)
    for t, d in enumerate(keep_axes):
        indices[t] = cols[d]
    indices[-1] = cols[a1] if offset >= 0 else cols[a2]
    sorted_ = x.is_sorted and {a1, a2} == {x.ndim - 2, x.ndim - 1}
    return result(x, indices, gather_values(be, x.values, rows), shape, sorted=sorted_, unique=x.is_unique)


@implements(np.kron)
def kron(a, b):
    """Kronecker product, as :func:`numpy.kron` (a dense operand is converted; fill 0 only).

    Result: ``nnz(a) * nnz(b)`` entries (``a``-major) of the coalesced
    operands (duplicates are summed first), flags: unique, sorted for 1-D
    sorted operands.  An unstored element counts as an exact 0 (the result
    stores nothing there even beside a stored inf or NaN, where NumPy's dense
    product is NaN: ``multiply``'s rule).
    """
    a, b = sparse_operand(a), sparse_operand(b)
    if not isinstance(a, COO) and not isinstance(b, COO):
        raise ValueError("kron: at least one operand must be a coosparse.COO")
    a = a if isinstance(a, COO) else from_dense(_xp(b).asarray(a))
    b = b if isinstance(b, COO) else from_dense(_xp(a).asarray(b))
    _fill.require_zero_fill("kron", a, b)
    # each output element is one product of the two dense meanings: duplicates summed first (a product
    # of each pair would round, overflow and, for bool, count twice on its own; the inputs are small
    # beside the nnz(a) * nnz(b) result)
    a, b = (x if x.is_unique else coalesce(x) for x in (a, b))
    a, b = to_hybrid(a, 0), to_hybrid(b, 0)
    nd = max(a.ndim, b.ndim)
    if a.ndim < nd:
        a = insert_axes(a, range(nd - a.ndim))
    if b.ndim < nd:
        b = insert_axes(b, range(nd - b.ndim))
    # exact sizes: every index a_i * q + b_i < p * q <= 2**63 then fits int64 (no wrap)
    shape = checked_shape([p * q for p, q in zip(a.shape, b.shape)], "kron",
                          like=[p * q if min(p, q) <= 1 else None for p, q in zip(a.shape, b.shape)])
    dtype = np.result_type(a.dtype, b.dtype)
    na, nb = a.nnz, b.nnz
    check_entries(na * nb, "kron", 8 * nd + dtype.itemsize)
    be = backend_for(a.indices, b.indices)
    xp = be.xp
    # a check=False index outside its shape would land in another block (or wrap): refused
    check_indices(a.indices, a.shape)
    check_indices(b.indices, b.shape)
    indices = xp.empty((nd, na * nb), dtype=np.int64)
    for d in range(nd):  # (b's sizes stay host scalars: no upload)
        p, q = a.shape[d], b.shape[d]
        if q == 1:
            head = a.indices[d][:, None]
        elif p <= 1:  # index 0 (q may be 2**63, not an int64 scalar)
            head = xp.zeros((na, 1), dtype=np.int64)
        else:
            head = a.indices[d][:, None] * q
        indices[d] = (head + b.indices[d][None, :]).reshape(na * nb)
    vals = (a.values.astype(dtype)[:, None] * b.values.astype(dtype)[None, :]).reshape(na * nb)
    out = COO._trusted(xp.ascontiguousarray(indices), vals, shape, nd <= 1 and a.is_sorted and b.is_sorted,
                       a.is_unique and b.is_unique, dtype.type(0))
    return out
