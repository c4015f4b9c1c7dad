"""NumPy's functions that users call on arrays, answered for COO arrays through ``__array_function__``.

Metadata (``np.shape``, ``np.ndim``, ``np.size``, ``np.iscomplexobj``,
``np.isrealobj``), creation from a prototype (``np.zeros_like``, ``ones_like``,
``empty_like``, ``full_like``, with ``shape=``), comparisons to a bool
(``np.allclose``, ``np.array_equal``, ``np.array_equiv``), stacking
(``np.hstack``, ``vstack``, ``dstack``, ``column_stack``, ``block``,
``atleast_1d/2d/3d``), ``np.trace``, ``np.diag``, ``np.diagflat``, ``np.copy``
and ``np.linalg.norm`` / ``np.linalg.matrix_power`` (through
:mod:`coosparse.linalg`). Each keeps its result sparse where NumPy's dense
answer is an array: a COO (a 0-d COO for a full reduction, as ``np.sum`` gives).

A NumPy function with no entry here is still answered when NumPy's own
implementation can serve it from the array's protocol alone (its
``_implementation`` runs on the COO and reaches only attributes and functions
that COO supports); it is refused with TypeError when that implementation
would need the dense array.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from .._core.coo import COO
from .._core.dispatch import implements, sparse_operand
from .._kernels.backend import array_namespace
from ..ops.join import concatenate
from ..ops.rearrange import diagonal
from ..ops.reduce.functions import all as _all
from ..ops.reduce.functions import sum as _sum
from ..ops.shape import expand_dims, ravel, reshape
from . import linalg
from .creation import empty_like, full_like, ones_like, zeros_like


def _refuse_out(name, out):
    if out is not None:
        raise TypeError(f"numpy.{name} with out= is not supported for coosparse.COO arrays: a COO is "
                        "immutable; use the returned array")


def _no_order(name, order):
    # memory layout and subclasses mean nothing for a COO
    if order not in ("K", "A", "C", "F", None):
        raise ValueError(f"numpy.{name}: order must be one of 'C', 'F', 'A' or 'K'; got {order!r}")


# ---------------------------------------------------------------------------- metadata
@implements(np.shape)
def _np_shape(a):
    return a.shape


@implements(np.ndim)
def _np_ndim(a):
    return a.ndim


@implements(np.size)
def _np_size(a, axis=None):
    if axis is None:
        return a.size
    return a.shape[operator.index(axis)]


@implements(np.iscomplexobj)
def _np_iscomplexobj(x):
    return x.dtype.kind == "c"


@implements(np.isrealobj)
def _np_isrealobj(x):
    return x.dtype.kind != "c"


@implements(np.copy)
def _np_copy(a, order="K", subok=False):
    _no_order("copy", order)
    return a.copy()


# ---------------------------------------------------------------------------- creation from a prototype
@implements(np.zeros_like)
def _np_zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    _no_order("zeros_like", order)
    return zeros_like(a, dtype=dtype, shape=shape, device=device)


@implements(np.empty_like)
def _np_empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    _no_order("empty_like", order)
    return empty_like(prototype, dtype=dtype, shape=shape, device=device)


@implements(np.ones_like)
def _np_ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    _no_order("ones_like", order)
    return ones_like(a, dtype=dtype, shape=shape, device=device)


@implements(np.full_like)
def _np_full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    _no_order("full_like", order)
    return full_like(a, fill_value, dtype=dtype, shape=shape, device=device)


# ---------------------------------------------------------------------------- comparisons to a bool
def _true_everywhere(x):
    """``x`` (a COO or a dense bool array) is True at every element."""
    if isinstance(x, COO):
        return builtins.bool(_all(x))
    return builtins.bool(np.all(x.get() if hasattr(x, "get") and not isinstance(x, np.ndarray) else x))


@implements(np.allclose)
def _np_allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _true_everywhere(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _equal(a1, a2, equal_nan):
    eq = np.equal(a1, a2)
    if equal_nan:
        kinds = {np.result_type(getattr(x, "dtype", None) or np.asarray(x).dtype).kind for x in (a1, a2)}
        if kinds & {"f", "c"}:
            eq = np.logical_or(eq, np.logical_and(np.isnan(a1), np.isnan(a2)))
    return eq


@implements(np.array_equal)
def _np_array_equal(a1, a2, equal_nan=False):
    a1, a2 = sparse_operand(a1), sparse_operand(a2)
    if np.shape(a1) != np.shape(a2):
        return False
    return _true_everywhere(_equal(a1, a2, equal_nan))


@implements(np.array_equiv)
def _np_array_equiv(a1, a2):
    a1, a2 = sparse_operand(a1), sparse_operand(a2)
    try:
        np.broadcast_shapes(np.shape(a1), np.shape(a2))
    except ValueError:
        return False
    return _true_everywhere(_equal(a1, a2, False))


# ---------------------------------------------------------------------------- stacking
def _atleast(x, nd):
    x = sparse_operand(x)
    if not isinstance(x, COO):
        x = np.asarray(x)
        return {1: np.atleast_1d, 2: np.atleast_2d, 3: np.atleast_3d}[nd](x)
    if x.ndim >= nd:
        return x
    if nd == 3:  # NumPy's rule: (N,) -> (1, N, 1), (M, N) -> (M, N, 1)
        return reshape(x, {0: (1, 1, 1), 1: (1,) + x.shape + (1,), 2: x.shape + (1,)}[x.ndim])
    return expand_dims(x, axis=tuple(range(nd - x.ndim)))


def _atleast_all(arys, nd):
    out = tuple(_atleast(x, nd) for x in arys)
    return out[0] if len(out) == 1 else out


@implements(np.atleast_1d)
def _np_atleast_1d(*arys):
    return _atleast_all(arys, 1)


@implements(np.atleast_2d)
def _np_atleast_2d(*arys):
    return _atleast_all(arys, 2)


@implements(np.atleast_3d)
def _np_atleast_3d(*arys):
    return _atleast_all(arys, 3)


def _joined(name, arrays, axis, dtype, casting):
    return concatenate(arrays, axis=axis, dtype=dtype, casting=casting)


@implements(np.hstack)
def _np_hstack(tup, *, dtype=None, casting="same_kind"):
    arrs = [_atleast(x, 1) for x in tup]
    axis = 0 if arrs and arrs[0].ndim == 1 else 1
    return _joined("hstack", arrs, axis, dtype, casting)


@implements(np.vstack)
def _np_vstack(tup, *, dtype=None, casting="same_kind"):
    return _joined("vstack", [_atleast(x, 2) for x in tup], 0, dtype, casting)


@implements(np.dstack)
def _np_dstack(tup):
    return concatenate([_atleast(x, 3) for x in tup], axis=2)


@implements(np.column_stack)
def _np_column_stack(tup):
    cols = []
    for x in tup:
        x = _atleast(x, 1)
        cols.append(reshape(x, (x.shape[0], 1)) if x.ndim == 1 and isinstance(x, COO)
                    else (x.reshape(-1, 1) if x.ndim == 1 else _atleast(x, 2)))
    return concatenate(cols, axis=1)


def _depth(arrays, where="arrays"):
    if isinstance(arrays, tuple):
        raise TypeError(f"numpy.block: {where} is a tuple; only lists can be used to arrange blocks")
    if not isinstance(arrays, list):
        return 0, [arrays]
    if not arrays:
        raise ValueError(f"numpy.block: {where} is an empty list")
    depths, leaves = set(), []
    for i, x in enumerate(arrays):
        d, lv = _depth(x, f"{where}[{i}]")
        depths.add(d)
        leaves += lv
    if len(depths) != 1:
        raise ValueError(f"numpy.block: list depths are mismatched in {where}")
    return depths.pop() + 1, leaves


@implements(np.block)
def _np_block(arrays):
    depth, leaves = _depth(arrays)
    nd = builtins.max([depth] + [np.ndim(x) for x in leaves])

    def build(x, level):
        if level == depth:
            return _atleast_nd(x, nd)
        return concatenate([build(y, level + 1) for y in x], axis=-(depth - level))

    return build(arrays, 0)


def _atleast_nd(x, nd):
    x = sparse_operand(x)
    if isinstance(x, COO):
        return x if x.ndim >= nd else expand_dims(x, axis=tuple(range(nd - x.ndim)))
    x = np.asarray(x)
    return x.reshape((1,) * (nd - x.ndim) + x.shape)


# ---------------------------------------------------------------------------- diagonals
@implements(np.trace)
def _np_trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    _refuse_out("trace", out)
    return _sum(diagonal(a, offset=offset, axis1=axis1, axis2=axis2), axis=-1, dtype=dtype)


@implements(np.diag)
def _np_diag(v, k=0):
    v = sparse_operand(v)
    k = operator.index(k)
    if v.ndim == 2:
        return diagonal(v, offset=k)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    if not (v.fill_value == 0):
        raise ValueError(f"numpy.diag of a 1-D COO with fill_value {v.fill_value!r}: the matrix it builds is zero "
                         "off the diagonal, so the vector's unstored elements must be 0 (fill 0)")
    n = v.shape[0] + builtins.abs(k)
    xp = array_namespace(v.indices)
    rows = v.indices[0] + builtins.max(-k, 0)
    cols = v.indices[0] + builtins.max(k, 0)
    return COO(xp.stack([rows, cols]), v.values, (n, n), sorted=v.is_sorted, unique=v.is_unique, check=False)


@implements(np.diagflat)
def _np_diagflat(v, k=0):
    return _np_diag(ravel(sparse_operand(v)), k)


# ---------------------------------------------------------------------------- numpy.linalg
@implements(np.linalg.norm)
def _np_norm(x, ord=None, axis=None, keepdims=False):
    x = sparse_operand(x)
    if axis is None:
        if ord is None:
            return linalg.vector_norm(x, keepdims=keepdims)
        if x.ndim == 1:
            return linalg.vector_norm(x, ord=ord, keepdims=keepdims)
        if x.ndim == 2:
            return linalg.matrix_norm(x, ord=ord, keepdims=keepdims)
        raise ValueError("Improper number of dimensions to norm.")
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(axes) == 1:
        return linalg.vector_norm(x, axis=axes[0], ord=2 if ord is None else ord, keepdims=keepdims)
    if len(axes) != 2:
        raise ValueError("Improper number of dimensions to norm.")
    a1, a2 = (operator.index(ax) % x.ndim for ax in axes)
    if a1 == a2:
        raise ValueError("Duplicate axes given.")
    moved = np.moveaxis(x, (a1, a2), (-2, -1))
    r = linalg.matrix_norm(moved, ord="fro" if ord is None else ord, keepdims=keepdims)
    return np.moveaxis(r, (-2, -1), (a1, a2)) if keepdims else r


@implements(np.linalg.matrix_power)
def _np_matrix_power(a, n):
    return linalg.matrix_power(sparse_operand(a), n)
