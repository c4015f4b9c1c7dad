"""The union algorithms (SPEC 4) behind ``add`` and ``subtract`` of sparse operands.

Both operands coalesced: one parallel linear merge of their keys; the result
is coalesced. Otherwise the entries are concatenated (``a``'s, then ``b``'s),
the result's flags are False, and ``coalesce=True`` asks for a coalesced
result instead. A dense operand makes the result dense: the dense array is
copied into a fresh array of the result dtype and the COO is scatter-added
into it (``coosparse.ops.dense.scatter_into``). Float and complex results are
NumPy's answer on the COO's dense meaning bit for bit: the COO's exact dense
form is built in the result, then the ufunc runs on it in place.
"""
from __future__ import annotations

import numpy as np

from ..._core import dtypes as _dtypes
from ..._core.arrays import copy_kernel, rows2d
from ..._core.coo import COO
from ..._core.keys import is_wide, joint_keys, strides_of
from ..._kernels.backend import backend_for
from ..coalesce import coalesce as _coalesce
from ..dense import has_negative_zero, negative_zero_parts, scatter_into, to_dense
from .operands import row_pointers, sparse_dense_shape, sparse_pair_shape, trailing_keys, values_as


def _check_subtract(dtype, negate):
    if negate and dtype == bool:
        raise TypeError(
            "subtract: boolean subtract is not supported (as in NumPy); use logical_xor"
        )


def _union_sparse(a, b, negate, coalesce, op):
    shape = sparse_pair_shape(a, b, op)
    dtype = _dtypes.result_type(a.dtype, b.dtype)
    _check_subtract(dtype, negate)
    be = backend_for(a.indices, b.indices)
    xp = be.xp
    dense_shape = shape[a.sparse_ndim:]
    if a.is_coalesced and b.is_coalesced:
        if (a.dtype == dtype and b.dtype == dtype and dtype.kind in "iufc" and dtype != np.float16
                and a.dense_shape == dense_shape and b.dense_shape == dense_shape
                and not is_wide(a.sparse_shape)):
            # one fused kernel over the index columns: merge, columns and values
            # strides and sizes are host values (passed by value); the merge checks every index
            # against the sizes and the order the flags promise, in the pass it makes anyway
            strides = np.array(strides_of(a.sparse_shape)[0], dtype=np.int64)
            pointers = row_pointers(a, b, nd=True)
            indices, va = be.merge_add(a.indices, b.indices, rows2d(a.values), rows2d(b.values),
                                       strides, negate, sizes=a.sparse_shape, pointers=pointers,
                                       keys=trailing_keys(pointers, a, b))  # synchronize! (output size)
            m = indices.shape[1]
        else:
            (ka, kb), _ = joint_keys([a.indices, b.indices], a.sparse_shape)
            a_pos, b_pos = be.merge_union(ka, kb)  # synchronize! (output size)
            m = a_pos.shape[0]
            indices = be.union_columns(a.indices, b.indices, a_pos, b_pos)
            va = copy_kernel(be.gather_or_zero, rows2d(values_as(a.values, a.nnz, dense_shape, dtype)), a_pos)
            vb = copy_kernel(be.gather_or_zero, rows2d(values_as(b.values, b.nnz, dense_shape, dtype)), b_pos)
            if negate:
                xp.subtract(va, vb, out=va)
            else:
                xp.add(va, vb, out=va)
        return COO(indices, va.reshape((m,) + dense_shape), shape, sorted=True, unique=True,
                   check=False)
    a, b = _own_sums(a, dtype), _own_sums(b, dtype)
    va = values_as(a.values, a.nnz, dense_shape, dtype)
    vb = values_as(b.values, b.nnz, dense_shape, dtype)
    out = COO(
        xp.concatenate([a.indices, b.indices], axis=1),
        xp.concatenate([va, -vb if negate else vb], axis=0),
        shape,
        check=False,
    )
    return _coalesce(out) if coalesce else out


def _own_sums(a, dtype):
    """``a`` with its duplicates summed in its own dtype when promotion to ``dtype`` changes it.

    Duplicates mean their sum in the array's dtype (SPEC 1): bool ``[True, True]``
    is True, uint8 ``200 + 100`` is 44. Promoting each entry first would sum them
    in the wider dtype (2, 300), so the answer would depend on whether the operand
    was coalesced. Unique arrays and arrays whose dtype is kept pass unchanged.
    """
    if a.is_unique or a.dtype == dtype:
        return a
    return _coalesce(a)


def _union_dense(a, x, negate, coo_first, op):
    """COO a with dense x: ``a + x`` / ``a - x`` (coo_first) or ``x + a`` / ``x - a``."""
    shape = sparse_dense_shape(a, x.shape, op)
    if shape != a.shape:
        raise ValueError(
            f"{op}: COO shape {a.shape} and dense shape {tuple(x.shape)} do not match; a dense "
            "operand must broadcast to the COO's shape"
        )
    dtype = _dtypes.result_type(a.dtype, x.dtype)
    _check_subtract(dtype, negate)
    xp = backend_for(a.values, x).xp
    a = _own_sums(a, dtype)
    # copying x and scatter-adding a is exact for integers, and for floats in x - a where a is
    # unique with a fill of +0 on the CPU (x - 0.0 is x; x + (-v) at each stored index is x - v)
    if dtype.kind in "fc" and not (negate and not coo_first and _plain_unique(a, xp)):
        return _union_dense_float(a, x, negate, coo_first, dtype, xp)
    out = xp.empty(shape, dtype=dtype)
    if negate and coo_first:
        out[...] = -x.astype(dtype, copy=False)
    else:
        out[...] = x
    if negate and not coo_first:
        a = -a.astype(dtype, copy=False)  # cast first: -uint8 then widening would wrap
    scatter_into(out, a, add=True)
    return out


def _union_dense_float(a, x, negate, coo_first, dtype, xp):
    """Float ``a + x`` / ``a - x`` / ``x - a``: NumPy's ufunc on ``a``'s exact dense meaning.

    Copying ``x`` and scatter-adding ``a`` would be wrong in three ways: where ``a`` stores
    nothing the result is ``fill + x`` (``0.0 + -0.0`` is +0.0) or ``fill - x`` (``0.0 - 0.0``
    is +0.0; ``-x`` would be -0.0), not ``x`` or ``-x``; and duplicates are summed before the
    function (``x + (v1 + v2)``, not ``(x + v1) + v2``, which can overflow or cancel). The dense
    meaning is built in the result itself (``to_dense``: sums in stored order, signed zeros
    kept), then the ufunc runs in place: no second dense array.
    """
    f = xp.subtract if negate else xp.add
    if _plain_unique(a, xp) and not has_negative_zero(a.values):
        # fill (op) x differs from x (or -x) only by the sign of a zero, and that sign
        # decides v + zero only when v is -0.0: one pass, then a scatter-add (the old speed)
        fill = a.fill_value.astype(dtype)
        out = f(fill, x, dtype=dtype) if coo_first else f(x, fill, dtype=dtype)
        return scatter_into(out, a, add=True)
    out = to_dense(a if a.dtype == dtype else a.astype(dtype))
    return f(out, x, out=out) if coo_first else f(x, out, out=out)


def _plain_unique(a, xp):
    """``a`` is unique, on the CPU, with no -0.0 in its fill: where a scatter-add onto a dense
    array computes what the ufunc on ``a``'s dense meaning does (the sign checks are host reads)."""
    return a.is_unique and xp is np and not any(negative_zero_parts(a.fill_value))
