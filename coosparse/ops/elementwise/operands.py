"""Shared checks of the elementwise operations: operand kinds, shapes, dtypes, dense gathers.

Sparse-sparse operations need identical sparse shapes (and sparse_ndim); the
dense (hybrid) trailing dimensions broadcast as in NumPy. A dense operand
broadcasts against a COO as long as the COO's sparse dimensions are not
broadcast (that would make the result dense or change its sparse shape).
"""
from __future__ import annotations

import numpy as np

from ..._core import dtypes as _dtypes
from ..._core.arrays import copy_kernel, dense_block_offsets, flat_view
from ..._core.coo import COO
from ..._core.dispatch import sparse_operand
from ..._kernels.backend import array_namespace, backend_for, is_device_array
from ..._kernels.bounds import check_indices, raise_out_of_bounds


def is_dense(x):
    """A NumPy or CuPy array (not a COO)."""
    return isinstance(x, np.ndarray) or is_device_array(x)


def as_dense_operand(x, op):
    """``x`` as a NumPy/CuPy array (lists and scalars accepted), or TypeError."""
    if isinstance(x, COO):
        raise TypeError(f"{op}: expected a dense operand, got a COO")
    if is_dense(x):
        return _dtypes.native(x)
    try:
        arr = np.asarray(x)
    except Exception:
        arr = None
    if arr is None or arr.dtype == object:
        raise TypeError(f"{op}: unsupported operand type {type(x).__name__}")
    return _dtypes.native(arr)


def sparse_pair_shape(a, b, op):
    """Result shape of a sparse-sparse elementwise op, or ValueError naming both shapes."""
    if a.sparse_ndim != b.sparse_ndim or a.sparse_shape != b.sparse_shape or a.ndim != b.ndim:
        raise ValueError(
            f"{op}: shapes {a.shape} (sparse {a.sparse_shape}) and {b.shape} "
            f"(sparse {b.sparse_shape}) do not match; sparse dimensions must be equal"
        )
    try:
        dense = np.broadcast_shapes(a.dense_shape, b.dense_shape)
    except ValueError:
        raise ValueError(
            f"{op}: shapes {a.shape} and {b.shape} do not broadcast in their dense dimensions "
            f"{a.dense_shape} and {b.dense_shape}"
        ) from None
    return a.sparse_shape + tuple(dense)


def sparse_dense_shape(a, x_shape, op):
    """Result shape of COO ``a`` combined with a dense operand of ``x_shape``."""
    try:
        shape = tuple(np.broadcast_shapes(a.shape, tuple(x_shape)))
    except ValueError:
        raise ValueError(
            f"{op}: COO shape {a.shape} and dense shape {tuple(x_shape)} do not broadcast together"
        ) from None
    if len(shape) != a.ndim or shape[: a.sparse_ndim] != a.sparse_shape:
        raise ValueError(
            f"{op}: COO shape {a.shape} and dense shape {tuple(x_shape)} broadcast to {shape}, "
            f"which would make the COO grow (its sparse shape {a.sparse_shape} is kept: the dense "
            "operand may broadcast against the COO, not the COO against it)"
        )
    return shape


def result_dtype(*dtypes_or_values):
    return _dtypes.result_type(*dtypes_or_values)


def values_as(values, nnz, dense_shape, dtype):
    """``values`` (nnz, *d) cast to ``dtype`` and broadcast to (nnz, *dense_shape)."""
    xp = array_namespace(values)
    v = values.astype(dtype, copy=False)
    target = (nnz,) + tuple(dense_shape)
    if tuple(v.shape) != target:
        v = xp.broadcast_to(v, target)
    return v


def gather_dense(x, indices, sparse_ndim):
    """x[tuple(indices)] for a dense ``x`` of any strides: (n, *x.shape[sparse_ndim:]).

    Addresses are computed from ``x``'s element strides (broadcast views with
    zero strides included), then one parallel gather reads them. Never
    synchronises.
    """
    be = backend_for(x, indices)
    xp = be.xp
    n = indices.shape[1]
    dense_shape = tuple(x.shape[sparse_ndim:])
    if n == 0 or x.size == 0:
        check_indices(indices, tuple(x.shape[:sparse_ndim]))  # nothing is read, but bad input is refused
        return xp.zeros((n,) + dense_shape, dtype=x.dtype)
    flat, base, es = flat_view(x)
    # strides, sizes and block offsets are host metadata: the CUDA layer passes them by value.
    # Bounds-checked in the same pass: an unchecked index outside x is an IndexError (a GPU
    # reports it and reads zeros), never a read of another element. Dimensions x is broadcast
    # along (stride 0) address nothing; their index rows are still checked against the shape
    # (a COO built with check=False may hold an index outside it)
    used = [d for d in range(sparse_ndim) if es[d] != 0]
    if len(used) == 1 and not dense_shape and isinstance(x, np.ndarray):
        # one index row addresses a vector (A / rs[:, None]): NumPy's own gather reads it, which
        # refuses an index past the end; a negative one (it would wrap) is refused first, and the
        # other rows by their extremes
        d = used[0]
        row = indices[d]
        vec = flat[base:][::es[d]][: x.shape[d]] if es[d] > 0 else flat[: base + 1][::es[d]][: x.shape[d]]
        sizes = tuple(x.shape[:sparse_ndim])
        for e in range(sparse_ndim):
            if e != d and (int(indices[e].min()) < 0 or int(indices[e].max()) >= sizes[e]):
                raise_out_of_bounds(indices, sizes)
        if int(row.min()) < 0:
            raise_out_of_bounds(indices[d:d + 1], (x.shape[d],))
        try:
            return vec[row].reshape((n,))
        except IndexError:
            raise_out_of_bounds(indices[d:d + 1], (x.shape[d],))
    consecutive = bool(used) and used == list(range(used[0], used[-1] + 1))
    if not consecutive or len(used) < sparse_ndim:
        # (none, rows apart, or rows x is broadcast along: all of them, the unread ones with
        # stride 0, so that the checked pass sees every index)
        used = list(range(sparse_ndim))
    rows = indices[used[0]:used[-1] + 1] if used else indices  # rows of a C-contiguous array: no copy
    # the addresses are computed, checked and read in one pass (no address array)
    gathered = copy_kernel(be.gather_indexed, flat, rows, np.array([es[d] for d in used], dtype=np.int64),
                           tuple(x.shape[d] for d in used), base, dense_block_offsets(dense_shape, es[sparse_ndim:]))
    return gathered.reshape((n,) + dense_shape)


def check_coo(x, op, name):
    """``x`` as a COO (scipy.sparse and pydata/sparse arrays convert, SPEC 12), else TypeError."""
    x = sparse_operand(x)
    if not isinstance(x, COO):
        raise TypeError(f"{op}: {name} must be a COO array; got {type(x).__name__}")
    return x


ROW_MERGE_MIN = 1 << 16
"""Entries (all operands together) from which the fused merges build the operands' row pointers."""


def row_pointers(*arrays, nd=False):
    """The operands' row pointers (:meth:`COO.row_pointer`, built once and cached with each) for
    the per-row merges of the fused products and sums, or None where they do not pay.

    Only for sorted matrices (sparse_ndim 2; with ``nd`` any of two or more sparse axes, for the
    union, the product and the mask, which merge the keys of the trailing axes row by row; the
    elementwise engine's union has no such merge) on the CPU whose pointers stay small
    (``shape[0] <= 2 * nnz + 1024``): a merge over rows then reads one column index
    per entry instead of both, without a branch per step. Below ``ROW_MERGE_MIN``
    entries the merge over keys takes a fraction of a millisecond, about what
    building the pointers costs, so they are used only when already cached (a first
    small call then compiles no pointer kernel either). On a GPU the merges compute
    keys (one thread per entry), so no pointer is built there.
    """
    cached = []
    for a in arrays:
        if not (a.sparse_ndim == 2 or (nd and a.sparse_ndim > 2)) or is_device_array(a.indices) or not a.is_sorted:
            return None
        cached.append(a._cached_companion(("row_pointer", 1, a.shape[0])))
        if cached[-1] is None and not a._row_pointer_pays():
            return None
    if any(p is None for p in cached) and sum(a.nnz for a in arrays) < ROW_MERGE_MIN:
        return None
    return tuple(a._row_pointer() for a in arrays)


def trailing_keys(pointers, *arrays):
    """With the row pointers of operands of three or more sparse axes (:func:`row_pointers` with
    ``nd``), their trailing axes' keys, built once and cached with each (8 bytes an entry, counted in
    ``nbytes``; ``drop_companions`` frees them): the column of the per-row merge. None otherwise."""
    if pointers is None or arrays[0].sparse_ndim <= 2:
        return None
    return tuple(a._trailing_keys() for a in arrays)
