"""coalesce (SPEC 3): stable sort by linear index, then ordered duplicate sums."""
from __future__ import annotations

import numpy as np

from .._core import dtypes as _dtypes
from .._core import fill as _fill
from .._core.coo import COO
from .._core.dispatch import operation, sparse_operand
from .._core.keys import is_wide, joint_keys, key_bound, strides_of, unravel_keys
from .._kernels.backend import backend_for
from .._kernels.bounds import raise_out_of_bounds


@operation()
def coalesce(a, prune=False):
    """Sorted, duplicate-free version of ``a`` with both flags True.

    Duplicates are summed in their original order (deterministic and
    bit-identical between the CPU and the GPU); float16 sums in float32. The
    result keeps ``a``'s dtype. An already-coalesced array is returned as is
    (unless ``prune``). ``prune=True`` also drops the entries whose (summed)
    value equals the fill (explicit zeros for the default fill 0; NaN counts as
    equal to a NaN fill; hybrid: entries whose dense block is all fill), so the
    dense meaning is unchanged. Synchronises on a GPU (the number of unique
    indices decides the output size).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[3, 1, 3]], np.array([1.0, 2.0, 4.0]), (5,))
    >>> c = a.coalesce()
    >>> c.indices, c.values, c.is_coalesced
    (array([[1, 3]]), array([2., 5.]), True)
    """
    a = sparse_operand(a)  # scipy.sparse and pydata/sparse arrays convert (SPEC 12)
    if not isinstance(a, COO):
        raise TypeError(f"coalesce expects a COO array; got {type(a).__name__}")
    if a.is_coalesced:
        return _prune(a) if prune else a
    be = backend_for(a.values)
    xp = be.xp
    sparse_shape = a.sparse_shape
    block = int(np.prod(a.dense_shape, dtype=np.int64))
    values2d = xp.ascontiguousarray(_dtypes.to_accumulation(a.values.reshape(a.nnz, block)))
    complex_dtype = values2d.dtype if values2d.dtype.kind == "c" else None
    if complex_dtype is not None:
        # complex sums are the sums of the real and imaginary parts, operation for
        # operation: summing float columns is bit-identical and saves kernel builds
        values2d = values2d.view(np.float32 if complex_dtype == np.complex64 else np.float64)
    pointer = None
    if _column_major(a):
        # the transpose of a coalesced matrix (distinct entries ordered by column, then row):
        # a stable counting sort by row puts it in order, and leaves the row pointer behind
        rows = a._indices_as_stored()  # a transpose's rows are read where they lie, not copied
        offsets, out_indices, sums = be.counting_take(rows[0], sparse_shape[0], rows, values2d,
                                                      other_bound=sparse_shape[1])
        pointer = offsets
    elif not a.is_sorted and not is_wide(sparse_shape):
        if a.nnz and 0 in sparse_shape:  # nothing fits a shape of size 0 (check=False input)
            raise_out_of_bounds(a.indices, sparse_shape, "coalesce")
        strides, _ = strides_of(sparse_shape)
        out_indices, sums = be.coalesce_linear(
            a.indices, np.array(strides, dtype=np.int64), key_bound(sparse_shape), values2d
        )
    else:
        out_indices, sums = _coalesce_general(be, a, values2d)
    if complex_dtype is not None:
        sums = xp.ascontiguousarray(sums).view(complex_dtype)
    out_values = _dtypes.from_accumulation(sums, a.dtype)
    out = COO(
        out_indices,
        out_values.reshape((out_values.shape[0],) + a.dense_shape),
        a.shape,
        sorted=True,
        unique=True,
        check=False,
        fill_value=a.fill_value,
    )
    if pointer is not None:
        out._companion(("row_pointer", 1, a.shape[0]), lambda _be: pointer)
    return _prune(out) if prune else out


def _column_major(a):
    """Whether ``a`` is a 2-D array ordered by (column, row) with no repeat: the transpose of a
    coalesced matrix. A stable counting sort by row then gives the sorted, duplicate-free order.

    Only for arrays flagged unique (transposes keep that flag) whose row pointer stays small; the
    order is checked on the first entries (an unsorted array fails there, cheaply), then on all.
    Synchronises on a GPU.
    """
    if (a.is_sorted or not a.is_unique or a.sparse_ndim != 2 or a.nnz < 2
            or a.shape[0] > 2 * a.nnz + 1024):
        return False
    if a._cached_companion(COLUMN_ORDER) is not None:
        return True  # the transpose of a coalesced matrix: its order follows from the flags
    rows = a._indices_as_stored()
    return _in_column_order(rows[:, :1024]) and _in_column_order(rows)


COLUMN_ORDER = ("column order",)
"""The companion key that marks a 2-D array as the transpose of a coalesced one (an empty array:
no memory). Set by the transpose, which knows the order from the source's flags (exact, or
trusted with ``check=False`` as every flag is), so coalesce skips the pass that proves it."""


def _in_column_order(idx):
    xp = backend_for(idx).xp
    if xp is not np:
        return _chunk_in_column_order(xp, idx)  # one synchronisation for the whole array
    # on the CPU in pieces whose temporaries stay in cache (one pass over memory, not six)
    n = idx.shape[1]
    return all(_chunk_in_column_order(np, idx[:, lo:lo + _ORDER_CHUNK + 1])
               for lo in range(0, max(n - 1, 1), _ORDER_CHUNK))


_ORDER_CHUNK = 1 << 16


def _chunk_in_column_order(xp, idx):
    r, c = idx
    step = c[1:] - c[:-1]
    return bool(xp.all((step > 0) | ((step == 0) & (r[1:] > r[:-1]))))  # synchronize!


def _coalesce_general(be, a, values2d):
    """Sort (unless sorted), find segments, sum them: the path for wide shapes and sorted input."""
    xp = be.xp
    sparse_shape = a.sparse_shape
    (keys,), bound = joint_keys([a.indices], sparse_shape)
    if a.is_sorted:
        sorted_keys, perm = keys, None
    else:
        sorted_keys, perm = be.sort_pairs(keys, bound)
    if a.is_unique:
        sums = values2d if perm is None else be.gather_rows(values2d, perm)
        rows = perm
        out_keys = sorted_keys
    else:
        starts = be.segment_starts(sorted_keys)  # synchronize! (output size)
        sums = be.segment_sum(values2d, perm, starts)
        firsts = starts[:-1]
        out_keys = sorted_keys[firsts]
        rows = firsts if perm is None else perm[firsts]
    if is_wide(sparse_shape):
        # ranks are not linear indices: take the index columns themselves
        out_indices = a.indices if rows is None else a.indices[:, rows]
    else:
        out_indices = unravel_keys(out_keys, sparse_shape)
    return xp.ascontiguousarray(out_indices), sums


def _prune(a):
    """Drop entries whose values all equal the fill (NaN equals NaN); keeps flags (a subsequence)."""
    xp = backend_for(a.values).xp
    fill = a.fill_value
    differs = _fill.differs(xp, a.values, fill, zero_sign=False)  # (a complex NaN fill: part by part)
    # an explicit block size: reshape cannot infer -1 when nnz or a dense dimension is 0
    block = int(np.prod(a.dense_shape, dtype=np.int64))
    keep = differs.reshape(a.nnz, block).any(axis=1) if a.dense_ndim else differs
    if bool(keep.all()):  # synchronize!
        return a
    return a._with(xp.ascontiguousarray(a.indices[:, keep]), a.values[keep])


@operation()
def eliminate_zeros(a):
    """``a`` without the stored entries equal to its fill (explicit zeros for fill 0), as scipy's
    ``eliminate_zeros`` (which works in place: a COO is immutable, so the result is returned).

    The dense meaning is unchanged. With fill 0 the kept entries keep their
    order, duplicates included, and both flags (a subsequence). With another
    fill the array is coalesced first (an uncoalesced entry equal to the fill
    still adds to its index). NaN counts as equal to a NaN fill; hybrid:
    entries whose whole dense block is the fill. Synchronises on a GPU.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[3, 1, 3]], np.array([1.0, 0.0, 4.0]), (5,))
    >>> b = coosparse.eliminate_zeros(a)
    >>> b.indices, b.values, b.is_sorted
    (array([[3, 3]]), array([1., 4.]), False)
    """
    a = sparse_operand(a)
    if not isinstance(a, COO):
        raise TypeError(f"eliminate_zeros expects a COO array; got {type(a).__name__}")
    if not a.is_unique and not _fill.is_zero(a.fill_value):
        a = coalesce(a)
    return _prune(a)
