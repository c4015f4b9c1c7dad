"""The intersection family (SPEC 4): multiply, sparse_mask, mask_projection.

All of them run on one primitive, :func:`match`: the linear keys of a
*source* (whose layout the result keeps) are matched against a sorted
*probe*. For every source entry the primitive returns the position of the
first equal probe key and the number of equal probe keys; probe duplicates
are then summed in probe order (stable, i.e. original order), source
duplicates stay separate entries.

Strategy (decided here, from the flags only):

=======================  =================================================
both sorted, compact     one fused merge over the index columns that also
                         gathers and multiplies (``merge_multiply``; same
                         dtype, narrow shape)
source sorted            linear merge (``match_merge``)
source in any order      partitioned search (``match_search``; binary
                         search on a GPU) -- the source is never reordered;
                         multiply with compact=False and one dtype matches
                         and multiplies in one pass (``multiply_search``)
probe not sorted         the probe's keys are sorted first (stable radix
                         sort); its values are read through the permutation
=======================  =================================================

Side choice of :func:`multiply` (never argument order): the probe is the side
ranked higher by ``(is_coalesced, is_sorted, is_unique, -nnz)``; on a tie
the second argument is the probe. So a coalesced side is never sorted again,
when neither side is sorted the smaller one is sorted, and
``multiply(a, b)`` equals ``multiply(b, a)`` exactly whenever flags or nnz
differ.
"""
from __future__ import annotations

import contextlib

import numpy as np

from ..._core import dtypes as _dtypes
from ..._core.arrays import copy_kernel, rows2d
from ..._core.coo import COO
from ..._core.fill import require_zero_fill
from ..._core.keys import is_wide, joint_keys, strides_of
from ..._kernels.backend import backend_for
from ..coalesce import coalesce as _coalesce
from .operands import (as_dense_operand, check_coo, gather_dense, row_pointers, sparse_pair_shape, trailing_keys,
                       values_as)


# ----------------------------------------------------------------------------- primitive
def probe_rank(a):
    """The ordering key of the side choice: higher rank -> probe."""
    return (a.is_coalesced, a.is_sorted, a.is_unique, -a.nnz)


def choose_sides(a, b):
    """(source, probe): the probe ranks higher by :func:`probe_rank`; ties -> ``b``."""
    if probe_rank(a) > probe_rank(b):
        return b, a
    return a, b


def _match_keys(src, probe):
    """(backend, source keys, sorted probe keys, perm): perm maps sorted probe positions to stored ones (None: sorted already)."""
    be = backend_for(src.indices, probe.indices)
    (sk, pk), bound = joint_keys([src.indices, probe.indices], src.sparse_shape)
    perm = None
    if not probe.is_sorted:
        pk, perm = be.sort_pairs(pk, bound)
    return be, sk, pk, perm


def match(src, probe, compact=False):
    """Match ``src``'s keys against ``probe``'s: (rows, first, count, perm).

    ``first[i]``/``count[i]`` locate the matches of source entry ``rows[i]``
    (``i`` when ``rows`` is None, i.e. ``compact=False``) in the probe's
    *sorted* order; ``perm`` maps sorted positions to the probe's stored
    positions (None when the probe was sorted already). ``compact=True``
    keeps only the source entries that matched and synchronises once on a GPU
    (output size); ``compact=False`` never does for narrow shapes (wide shapes
    rank their index columns, which reads the rank count back).
    """
    be, sk, pk, perm = _match_keys(src, probe)
    rows = None
    if src.is_sorted:
        if compact:
            rows, first, count = be.merge_matches(sk, pk)  # synchronize! (output size)
        else:
            first, count = be.match_merge(sk, pk)
    else:
        first, count = be.match_search(sk, pk)
        if compact:
            rows, first, count = be.compact_matches(first, count)  # synchronize! (output size)
    return rows, first, count, perm


def _probe_values(be, probe, perm, first, count, shared_runs=False):
    """Per output row: the ordered sum of the probe's matched duplicates, in the probe's dtype.

    ``shared_runs``: the source has duplicates, so rows repeat probe runs (a GPU sums each once).
    """
    v = _dtypes.to_accumulation(rows2d(probe.values))
    sums = be.probe_sum(v, perm, first, count, shared_runs=shared_runs)
    m = sums.shape[0]
    return _dtypes.from_accumulation(sums, probe.dtype).reshape((m,) + probe.dense_shape)


def _expand(v, ndim):
    """(n,) -> (n, 1, ..., 1) to broadcast against (n, *dense) values."""
    return v.reshape(v.shape + (1,) * (ndim - 1))


# ----------------------------------------------------------------------------- multiply
def _keeps_duplicates(x, dtype):
    """Whether COO ``x`` takes part in a product of ``dtype`` with its duplicates apart (else it is
    coalesced first). Duplicates mean their sum in ``x``'s own dtype: they stay apart only where the
    cast to the result commutes with that sum (two bool Trues are one True, uint8 sums wrap) or a
    float32/64 sum only rounds differently (so ``u * u32`` keeps its layout, sync-free with
    compact=False), and the products keep it."""
    if x.is_unique:
        return True
    if x.dtype == np.float16:
        return False  # float16 duplicates sum in float32: 40000 * 2 alone overflows float16
    return x.dtype.kind in "fc" or _dtypes.cast_keeps_sums(x.dtype, dtype)


def multiply_sparse(a, b, compact, keep_match=False):
    """COO * COO: ``(result, match)``.

    ``match`` is ``(src_is_a, rows, first, count)`` when the result was built
    from a match against an already-sorted probe (output entry i is source row
    ``rows[i]``, or i when ``rows`` is None, times the probe entries
    ``first[i]:first[i] + count[i]``), else None. ``keep_match`` skips the
    fused merge, which has no match to return (the torch bridge's backward
    reuses it).
    """
    shape = sparse_pair_shape(a, b, "multiply")
    dtype = _dtypes.result_type(a.dtype, b.dtype)
    a, b = (x if _keeps_duplicates(x, dtype) else _coalesce(x) for x in (a, b))
    be = backend_for(a.indices, b.indices)
    xp = be.xp
    src, probe = choose_sides(a, b)
    dense_shape = shape[src.sparse_ndim:]
    fused = (src.dtype == dtype and probe.dtype == dtype
             and _dtypes.accumulation_dtype(dtype) == dtype
             and src.dense_shape == dense_shape and probe.dense_shape == dense_shape)
    if (fused and compact and not keep_match and src.is_sorted and probe.is_sorted
            and not is_wide(src.sparse_shape)):
        # the common canonical case in one fused merge (keys computed on the fly)
        # strides and sizes are host values (passed by value); the merge checks every index it
        # reads against the sizes and the order the flags promise, in the pass it makes anyway
        strides = np.array(strides_of(src.sparse_shape)[0], dtype=np.int64)
        pointers = row_pointers(src, probe, nd=True)
        indices, values = be.merge_multiply(
            src.indices, rows2d(src.values), probe.indices, rows2d(probe.values), strides,
            sizes=src.sparse_shape, pointers=pointers, keys=trailing_keys(pointers, src, probe),
        )  # synchronize! (output size)
        values = values.reshape((values.shape[0],) + dense_shape)
        return COO(indices, values, shape, sorted=True, unique=src.is_unique, check=False), None
    if fused and not compact and not keep_match and not src.is_sorted and not is_wide(src.sparse_shape):
        # the source's layout in any order: the match and the product in one pass
        # (the Numba layer carries the source values through its partition)
        be, sk, pk, perm = _match_keys(src, probe)
        values = be.multiply_search(sk, rows2d(src.values), pk, rows2d(probe.values), perm,
                                    shared_runs=not src.is_unique)
        values = values.reshape((src.nnz,) + dense_shape)
        return COO(src.indices, values, shape, sorted=False, unique=src.is_unique, check=False), None
    rows, first, count, perm = match(src, probe, compact)
    m = first.shape[0]
    indices = src.indices if rows is None else be.gather_columns(src.indices, rows)
    if fused:
        # one fused pass: gather, ordered probe sums, product, zeros where unmatched
        values = be.multiply_matched(rows2d(src.values), rows, rows2d(probe.values), perm,
                                     first, count, shared_runs=not src.is_unique).reshape((m,) + dense_shape)
    else:
        sv = src.values if rows is None else copy_kernel(
            be.gather_rows, rows2d(src.values), rows).reshape((m,) + src.dense_shape)
        pv = _probe_values(be, probe, perm, first, count, shared_runs=not src.is_unique)
        # compact=False: inf * 0 of unmatched entries is replaced by 0 below, so no warning
        with np.errstate(invalid="ignore") if not compact else contextlib.nullcontext():
            values = values_as(sv, m, dense_shape, dtype) * values_as(pv, m, dense_shape, dtype)
        if not compact and dtype.kind in "fc":
            # unmatched entries are zeros (not src * 0, which is NaN for inf/NaN sources)
            values = xp.where(_expand(count != 0, values.ndim), values, xp.zeros((), dtype=dtype))
        values = xp.ascontiguousarray(values)
    result = COO(indices, values, shape, sorted=src.is_sorted, unique=src.is_unique, check=False)
    return result, ((src is a, rows, first, count) if perm is None else None)


# ----------------------------------------------------------------------------- sparse_mask
def sparse_mask(x, mask):
    """``x`` read at ``mask``'s indices: a COO with exactly the mask's layout.

    Parameters
    ----------
    x : COO or dense array
        Its leading dimensions must equal ``mask.sparse_shape``; a COO ``x``
        must have ``mask``'s sparse_ndim. Dense (hybrid) dimensions of ``x``
        are kept.
    mask : COO
        Only its indices are used; its dense dimensions, if any, must equal
        ``x``'s.

    Returns
    -------
    COO
        ``mask``'s indices (order and duplicates kept) and flags, shape
        ``mask.sparse_shape + x``'s dense shape, dtype of ``x``. Each value is
        ``x`` at that index: the sum of ``x``'s duplicates in stored order,
        zero where ``x`` stores nothing. Never synchronises on a GPU
        (narrow shapes).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[2, 1, 2, 3]], np.array([5, 7, 6, 8]), (5,))
    >>> mask = coosparse.COO([[1, 0, 1, 2]], np.ones(4), (5,))
    >>> coosparse.sparse_mask(x, mask).values
    array([ 7,  0,  7, 11])
    >>> coosparse.sparse_mask(np.arange(5) * 10, mask).values
    array([10,  0, 10, 20])
    """
    mask = check_coo(mask, "sparse_mask", "mask")
    sn = mask.sparse_ndim
    if isinstance(x, COO):
        require_zero_fill("sparse_mask", x)
        if x.sparse_ndim != sn or x.sparse_shape != mask.sparse_shape:
            raise ValueError(
                f"sparse_mask: x of shape {x.shape} (sparse {x.sparse_shape}) does not match "
                f"mask of shape {mask.shape} (sparse {mask.sparse_shape})"
            )
        shape = x.shape
    else:
        x = as_dense_operand(x, "sparse_mask")
        if tuple(x.shape[:sn]) != mask.sparse_shape:
            raise ValueError(
                f"sparse_mask: dense x of shape {tuple(x.shape)} does not match mask of shape "
                f"{mask.shape}: its leading dimensions must equal {mask.sparse_shape}"
            )
        shape = tuple(x.shape)
    if mask.dense_ndim and mask.shape != shape:
        raise ValueError(
            f"sparse_mask: mask of shape {mask.shape} has dense dimensions that differ from "
            f"x's shape {shape}"
        )
    _dtypes.check_dtype(x.dtype)
    be = backend_for(mask.indices, x.indices if isinstance(x, COO) else x)
    pointers = row_pointers(mask, x, nd=True) if isinstance(x, COO) and x.is_unique else None
    if pointers is not None:
        # sorted operands on the CPU: one merge per row over the columns (the trailing axes' keys
        # with three or more sparse axes), writing each mask entry's value (the operands keep
        # their row pointers, as for a product)
        strides = np.array(strides_of(mask.sparse_shape)[0], dtype=np.int64)
        v = be.mask_values(mask.indices, x.indices, _dtypes.to_accumulation(rows2d(x.values)), strides,
                           sizes=mask.sparse_shape, pointers=pointers, keys=trailing_keys(pointers, mask, x))
        values = _dtypes.from_accumulation(v, x.dtype).reshape((mask.nnz,) + x.dense_shape)
    elif isinstance(x, COO):
        _, first, count, perm = match(mask, x)
        values = _probe_values(be, x, perm, first, count, shared_runs=not mask.is_unique)
    else:
        values = gather_dense(x, mask.indices, sn)
    return COO(mask.indices, values, shape, sorted=mask.is_sorted, unique=mask.is_unique,
               check=False)


# ----------------------------------------------------------------------------- mask_projection
def mask_projection(x, mask, *, accumulate=False):
    """``x`` restricted to ``mask``'s indices, in ``x``'s layout (the reverse of sparse_mask).

    Parameters
    ----------
    x, mask : COO
        Equal sparse shapes; ``mask``'s values and dense dimensions are ignored.
    accumulate : bool
        Multiply each kept value by the number of times ``mask`` stores its
        index (the gradient of :func:`sparse_mask` with an uncoalesced mask).

    Returns
    -------
    COO
        ``x``'s indices, order and flags; a value is ``x``'s value where
        ``mask`` has the index (times the number of matches with
        ``accumulate``), else 0. Never synchronises on a GPU (narrow shapes).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[1, 2, 3, 4]], np.array([5, 7, 6, 9]), (5,))
    >>> mask = coosparse.COO([[2, 1, 2, 3]], np.ones(4), (5,))
    >>> coosparse.mask_projection(x, mask).values
    array([5, 7, 6, 0])
    >>> coosparse.mask_projection(x, mask, accumulate=True).values
    array([ 5, 14,  6,  0])
    """
    x = check_coo(x, "mask_projection", "x")
    mask = check_coo(mask, "mask_projection", "mask")
    if not isinstance(accumulate, bool):
        raise TypeError(f"mask_projection: accumulate must be a bool; got {accumulate!r}")
    require_zero_fill("mask_projection", x)
    if x.sparse_ndim != mask.sparse_ndim or x.sparse_shape != mask.sparse_shape:
        raise ValueError(
            f"mask_projection: x of shape {x.shape} (sparse {x.sparse_shape}) does not match "
            f"mask of shape {mask.shape} (sparse {mask.sparse_shape})"
        )
    xp = backend_for(x.indices, mask.indices).xp
    _, first, count, _ = match(x, mask)
    hit = _expand(count != 0, x.values.ndim)
    if accumulate:
        # unmatched entries are 0, not value * 0 (NaN for inf/NaN values)
        with np.errstate(invalid="ignore", over="ignore"):
            values = xp.where(hit, x.values * _expand(count.astype(x.dtype), x.values.ndim),
                              xp.zeros((), dtype=x.dtype))
    else:
        values = xp.where(hit, x.values, xp.zeros((), dtype=x.dtype))
    return x._with(values=xp.ascontiguousarray(values.astype(x.dtype, copy=False)))
