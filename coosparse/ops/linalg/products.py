"""Linear algebra (SPEC 10), the public products: matmul, tensordot, dot, inner, vecdot, outer,
vdot, sampled_matmul (SDDMM), and NumPy's functions for them. Each is one batched contraction
(:mod:`.core`); einsum is in :mod:`.einsum`.
"""
from __future__ import annotations

import numbers
import operator

import numpy as np

from ..._core.arrays import flat_view
from ..._core.coo import COO
from ..._core.dispatch import SPARSE_FOREIGN, foreign_kind, implements, operation
from ..._core.keys import INT64_LIMIT
from ..._core.shapes import check_entries
from ..._kernels.backend import array_namespace, backend_for, is_device_array
from ..._kernels import scratch
from ..._kernels.bounds import check_indices
from ..elementwise.arithmetic import multiply
from .core import (
    _as_operand, _batch_map, _broadcast_batch, _check_zero_fill, _from_acc, _is_coo, _normalize_axis,
    _product, _result_dtype, _strides, _to_acc, _xp_of, name_bad_index, sparsify, spmv_sorted,
    sum_duplicates_first,
)


# ----------------------------------------------------------------------------- public functions
def matmul(a, b):
    """Matrix product ``a @ b`` with NumPy's rules; at least one operand may be a COO.

    Parameters
    ----------
    a, b : COO or array_like
        At least one dimension each (a 1-D operand is a vector: NumPy's
        promotion and removal rules). The last two dimensions are the
        matrices; leading (batch) dimensions broadcast. COO operands need
        ``fill_value`` 0 (``ValueError`` otherwise); hybrid COO are allowed
        (their dense dimensions take part like any other).

    Returns
    -------
    COO or ndarray
        dtype ``result_type(a.dtype, b.dtype)``. COO x COO gives a coalesced
        COO (both flags True; entries reached by a product are stored, even
        when they cancel to zero). Any dense operand gives a dense array (NumPy
        or CuPy, on the operands' device).

    Notes
    -----
    Deterministic: every output element is a sum in a defined order (see the
    module docstring and docs/linalg.md), bit-identical between runs and
    between the CPU and the GPU. COO x dense and dense x COO never
    synchronise on a GPU (unless an operand's shape is wide); COO x COO does
    (output size).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 0, 1], [0, 2, 1]], np.array([1.0, 2.0, 3.0]), (2, 3))
    >>> a @ np.array([1.0, 10.0, 100.0])
    array([201.,  30.])
    >>> np.array([1.0, 2.0]) @ a
    array([1., 6., 2.])
    >>> c = a @ a.to_dense().T.copy()
    >>> c
    array([[5., 0.],
           [0., 9.]])
    >>> s = coosparse.matmul(a, coosparse.COO([[0, 2], [1, 0]], np.array([4.0, 5.0]), (3, 2)))
    >>> s.to_dense(), s.is_coalesced
    (array([[10.,  4.],
           [ 0.,  0.]]), True)
    """
    a = _as_operand(a, "matmul")
    b = _as_operand(b, "matmul")
    for i, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(f"matmul: input operand {i} does not have enough dimensions (a 0-d array); "
                             "use multiply for scalars")
    _check_zero_fill("matmul", a, b)
    if not _is_coo(a) and not _is_coo(b):
        return backend_for(a, b).xp.matmul(a, b)
    na, nb = a.ndim, b.ndim
    arows, acols, abatch = ((na - 2,), (na - 1,), tuple(range(na - 2))) if na >= 2 else ((), (0,), ())
    brows, bcols, bbatch = ((nb - 2,), (nb - 1,), tuple(range(nb - 2))) if nb >= 2 else ((0,), (), ())
    if a.shape[acols[0]] != b.shape[brows[0]]:
        raise ValueError(
            f"matmul: shapes {a.shape} and {b.shape} do not match: the last dimension of the first "
            f"({a.shape[acols[0]]}) must equal the {'only' if nb == 1 else 'second-to-last'} dimension of the "
            f"second ({b.shape[brows[0]]})"
        )
    if nb == 1 and _is_coo(a):
        try:
            out = spmv_sorted(a, b)  # (None unless a sorted CPU matrix and a vector of its float dtype)
        except IndexError:
            name_bad_index("matmul", a)
            raise
        if out is not None:
            return out
    batch = _broadcast_batch("matmul", [a.shape[i] for i in abatch], [b.shape[i] for i in bbatch])
    return _product(a, _batch_map(len(batch), abatch), arows, acols,
                    b, _batch_map(len(batch), bbatch), brows, bcols, batch, "matmul")


def tensordot(a, b, axes=2):
    """Sum of products over the given axes (``numpy.tensordot``); COO or dense operands.

    Parameters
    ----------
    a, b : COO or array_like
    axes : int or (sequence, sequence)
        An int ``N``: the last ``N`` axes of ``a`` with the first ``N`` of
        ``b``. A pair: the axes of ``a`` and of ``b`` to contract, paired in
        order (negative axes allowed).

    Returns
    -------
    COO or ndarray
        Shape: ``a``'s remaining axes then ``b``'s. COO x COO: a coalesced
        COO; otherwise dense. See :func:`matmul` for dtypes, fill values and
        determinism.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 1], [1, 0], [2, 0]], np.array([1.0, 2.0]), (2, 2, 3))
    >>> coosparse.tensordot(a, np.ones((2, 3)), axes=([1, 2], [0, 1]))
    array([1., 2.])
    """
    a = _as_operand(a, "tensordot")
    b = _as_operand(b, "tensordot")
    if isinstance(axes, numbers.Integral) or (isinstance(axes, np.ndarray) and axes.ndim == 0):
        n = operator.index(axes)
        if n < 0:
            raise ValueError(f"tensordot: axes={n} must not be negative")
        if n > a.ndim or n > b.ndim:  # (AxisError: a ValueError, and the IndexError NumPy raises)
            raise np.exceptions.AxisError(f"tensordot: axes={n} is out of range for operands of {a.ndim} and "
                                          f"{b.ndim} dimensions")
        ax_a, ax_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        try:
            ax_a, ax_b = axes
        except (TypeError, ValueError):
            raise TypeError(f"tensordot: axes must be an int or a pair of axis sequences; got {axes!r}") from None
        ax_a = [ax_a] if isinstance(ax_a, numbers.Integral) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, numbers.Integral) else list(ax_b)
        if len(ax_a) != len(ax_b):
            raise ValueError(f"tensordot: {len(ax_a)} axes of the first operand but {len(ax_b)} of the second")
        ax_a = [_normalize_axis(x, a.ndim, "tensordot") for x in ax_a]
        ax_b = [_normalize_axis(x, b.ndim, "tensordot") for x in ax_b]
        if len(set(ax_a)) != len(ax_a) or len(set(ax_b)) != len(ax_b):
            raise ValueError("tensordot: an axis is repeated")
    for x, y in zip(ax_a, ax_b):
        if a.shape[x] != b.shape[y]:
            raise ValueError(
                f"tensordot: shape-mismatch for sum: axis {x} of the first operand (shape {a.shape}) and "
                f"axis {y} of the second (shape {b.shape}) differ"
            )
    _check_zero_fill("tensordot", a, b)
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [i for i in range(b.ndim) if i not in ax_b]
    if not _is_coo(a) and not _is_coo(b):
        return backend_for(a, b).xp.tensordot(a, b, axes=(ax_a, ax_b))
    return _product(a, [], free_a, ax_a, b, [], ax_b, free_b, (), "tensordot")


def dot(a, b):
    """``numpy.dot`` semantics: scalar product, inner product, matrix product, or N-d sum-product.

    For N-d operands, ``dot(a, b)[i, j, k, m] = sum(a[i, j, :] * b[k, :, m])``.
    A 0-d operand multiplies elementwise (:func:`coosparse.multiply`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> v = coosparse.COO([[0, 2]], np.array([1.0, 2.0]), (3,))
    >>> coosparse.dot(v, np.array([3.0, 4.0, 5.0]))
    array(13.)
    """
    a = _as_operand(a, "dot")
    b = _as_operand(b, "dot")
    if a.ndim == 0 or b.ndim == 0:
        if _is_coo(a) or _is_coo(b):
            return multiply(a, b)
        return a * b
    if not _is_coo(a) and not _is_coo(b):
        return backend_for(a, b).xp.dot(a, b)
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2 if b.ndim >= 2 else 0]))


def inner(a, b):
    """``numpy.inner``: sum-product over the last axes of ``a`` and ``b``.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 1], [1, 0]], np.array([1.0, 2.0]), (2, 2))
    >>> coosparse.inner(a, np.array([[1.0, 1.0]]))
    array([[1.],
           [2.]])
    """
    a = _as_operand(a, "inner")
    b = _as_operand(b, "inner")
    if a.ndim == 0 or b.ndim == 0:
        return dot(a, b)
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


def _conj(x):
    if x.dtype.kind != "c":
        return x
    if _is_coo(x):
        return x._with(values=array_namespace(x.values).conj(x.values), fill_value=np.conj(x.fill_value))
    return array_namespace(x).conj(x)


def vecdot(x1, x2, /, *, axis=-1):
    """Dot product of vectors along ``axis`` (Array API ``vecdot``): ``sum(conj(x1) * x2, axis)``.

    The two operands broadcast in every other dimension; along ``axis`` they
    must have the same size (no broadcasting there). A positive ``axis``
    counts in the broadcast shape.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 1], [1, 0]], np.array([1.0, 2.0]), (2, 2))
    >>> coosparse.vecdot(a, np.array([10.0, 1.0]))
    array([ 1., 20.])
    """
    x1 = _as_operand(x1, "vecdot")
    x2 = _as_operand(x2, "vecdot")
    nd = max(x1.ndim, x2.ndim)
    if nd == 0:
        raise ValueError("vecdot: operands must have at least one dimension")
    try:
        ax = operator.index(axis)
    except TypeError:
        raise TypeError(f"vecdot: axis must be an integer; got {axis!r}") from None
    if ax >= 0:
        ax -= nd
    if not (-x1.ndim <= ax < 0 and -x2.ndim <= ax < 0) or x1.shape[ax] != x2.shape[ax]:
        raise ValueError(
            f"vecdot: Shapes must match along axis {axis}: got shapes {x1.shape} and {x2.shape}"
        )
    _check_zero_fill("vecdot", x1, x2)
    a1, a2 = x1.ndim + ax, x2.ndim + ax
    b1 = [i for i in range(x1.ndim) if i != a1]
    b2 = [i for i in range(x2.ndim) if i != a2]
    batch = _broadcast_batch("vecdot", [x1.shape[i] for i in b1], [x2.shape[i] for i in b2])
    return _product(_conj(x1), _batch_map(len(batch), b1), [], [a1],
                    x2, _batch_map(len(batch), b2), [a2], [], batch, "vecdot")


def _ravel_1d(a, op):
    """A COO (or dense array) as 1-D in C order (COO: keys over its shape; narrow shapes only)."""
    if not _is_coo(a):
        return array_namespace(a).ravel(a)
    a = sparsify(a)
    size = a.size
    if size >= INT64_LIMIT:
        raise ValueError(f"{op}: an array of shape {a.shape} has {size} elements, too many for a 1-D index")
    be = backend_for(a.indices)
    xp = be.xp
    if a.ndim == 1:
        return a
    # bounds-checked in the same pass: a check=False index outside the shape never aliases another
    key = be.linear_index(a.indices, np.array(_strides(a.shape), dtype=np.int64), a.shape) if a.nnz \
        else xp.zeros(0, np.int64)
    return COO(key.reshape(1, -1), a.values, (size,), sorted=a.is_sorted, unique=a.is_unique, check=False,
               fill_value=a.fill_value)


def outer(a, b):
    """Outer product of the flattened operands (``numpy.outer``): shape ``(a.size, b.size)``.

    COO x COO gives a COO with every pair of entries (sorted when both are
    sorted and ``a`` is unique, unique when both are unique); a dense operand gives a dense array.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[1]], np.array([2.0]), (2,))
    >>> coosparse.outer(a, np.array([1.0, 3.0]))
    array([[0., 0.],
           [2., 6.]])
    """
    a = _as_operand(a, "outer")
    b = _as_operand(b, "outer")
    _check_zero_fill("outer", a, b)
    if not _is_coo(a) and not _is_coo(b):
        return backend_for(a, b).xp.outer(a, b)
    dtype = _result_dtype(a.dtype, b.dtype)
    ra = _ravel_1d(sum_duplicates_first(a, dtype), "outer")
    rb = _ravel_1d(sum_duplicates_first(b, dtype), "outer")
    if not (_is_coo(ra) and _is_coo(rb)):
        xp = _xp_of(ra if not _is_coo(ra) else rb)
        da = ra.to_dense() if _is_coo(ra) else ra
        db = rb.to_dense() if _is_coo(rb) else rb
        return xp.outer(da.astype(dtype, copy=False), db.astype(dtype, copy=False))
    be = backend_for(ra.indices, rb.indices)
    xp = be.xp
    na, nb = ra.nnz, rb.nnz
    check_entries(na * nb, "outer", 16 + dtype.itemsize)
    check_indices(ra.indices, ra.shape)  # (1-D operands are used as they are: their indices are copied)
    check_indices(rb.indices, rb.shape)
    rows = xp.repeat(ra.indices[0], nb)
    cols = xp.tile(rb.indices[0], na)
    values = ra.values.astype(dtype, copy=False)[:, None] * rb.values.astype(dtype, copy=False)[None, :]
    # sorted: a's rows in order, each followed by b's whole pattern, which is in order only once per row
    # (a repeated row of a repeats b's columns after its last one)
    return COO(xp.stack([rows, cols]), xp.ascontiguousarray(values.reshape(-1)), (ra.shape[0], rb.shape[0]),
               sorted=ra.is_sorted and rb.is_sorted and (ra.is_unique or nb <= 1),
               unique=ra.is_unique and rb.is_unique, check=False)


def vdot(a, b):
    """``numpy.vdot``: ``sum(conj(a.ravel()) * b.ravel())`` as a scalar (sizes must match).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 1], [1, 0]], np.array([1.0, 2.0]), (2, 2))
    >>> float(coosparse.vdot(a, np.arange(4.0)))
    5.0
    """
    a = _as_operand(a, "vdot")
    b = _as_operand(b, "vdot")
    if a.size != b.size:
        raise ValueError(f"vdot: operands of shapes {a.shape} and {b.shape} have different sizes")
    _check_zero_fill("vdot", a, b)
    if not _is_coo(a) and not _is_coo(b):
        return backend_for(a, b).xp.vdot(a, b)
    if a.shape != b.shape:
        a, b = _ravel_1d(a, "vdot"), _ravel_1d(b, "vdot")
    ax = list(range(a.ndim))
    r = _product(_conj(a), [], [], ax, b, [], ax, [], (), "vdot")
    if _is_coo(r):
        r = r.to_dense()
    return r[()]


SAMPLED_COLUMNS_FROM = 1 << 16
"""Entries from which a copied real or integer ``y`` holds only the columns the entries name (``sddmm_rows``):
below it the plain copy (one kernel fewer to compile on a first, small call; the gain is the
large graph's)."""


def sampled_matmul(mask, x, y):
    """``x @ y`` evaluated only at ``mask``'s indices (SDDMM), never forming the dense product.

    Parameters
    ----------
    mask : COO
        Only its indices are used (values and fill ignored). Its shape is
        the shape of ``x @ y`` (NumPy matmul rules, batch dimensions
        broadcast). Hybrid masks are allowed: a dense trailing dimension
        samples the whole row (or block) of the product.
    x, y : array_like
        Dense operands, ``x @ y`` must have ``mask``'s shape.

    Returns
    -------
    COO
        ``mask``'s indices (order and duplicates kept) and flags; values
        ``(x @ y)[index]``, dtype ``result_type(x.dtype, y.dtype)``, fill 0.
        Never synchronises on a GPU.

    Notes
    -----
    Each value is a dot product over ``K`` (the contracted size) taken in
    a fixed order: eight interleaved partial sums (lane ``l`` adds
    ``x[.., j] * y[j, ..]`` for ``j = l, l + 8, ...`` in turn), combined as
    ``((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))``. The same on every
    device (bit-identical), and it lets the CPU overlap eight sums.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> mask = coosparse.COO([[1, 0, 1], [0, 1, 0]], np.ones(3), (2, 2))
    >>> x, y = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> r = coosparse.sampled_matmul(mask, x, y)
    >>> r.values, r.is_sorted
    (array([3., 2., 3.]), False)
    """
    if not _is_coo(mask):
        raise TypeError(f"sampled_matmul: mask must be a COO array; got {type(mask).__name__}")
    x = _as_operand(x, "sampled_matmul")
    y = _as_operand(y, "sampled_matmul")
    if _is_coo(x) or _is_coo(y):
        raise TypeError("sampled_matmul: x and y must be dense arrays (use matmul for sparse operands)")
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError("sampled_matmul: x and y must have at least one dimension")
    x2 = x if x.ndim >= 2 else x.reshape(1, -1)
    y2 = y if y.ndim >= 2 else y.reshape(-1, 1)
    if x2.shape[-1] != y2.shape[-2]:
        raise ValueError(f"sampled_matmul: x of shape {x.shape} and y of shape {y.shape} cannot be multiplied")
    batch = _broadcast_batch("sampled_matmul", x2.shape[:-2], y2.shape[:-2])
    shape = batch + ((x2.shape[-2],) if x.ndim >= 2 else ()) + ((y2.shape[-1],) if y.ndim >= 2 else ())
    if mask.shape != shape:
        raise ValueError(f"sampled_matmul: mask has shape {mask.shape} but x @ y has shape {shape}")
    dtype = _result_dtype(x.dtype, y.dtype)
    m = sparsify(mask)
    be = backend_for(m.indices, x, y)
    rows = [m.indices[i] for i in range(m.ndim)]
    if x.ndim == 1 or y.ndim == 1:
        zeros = be.xp.zeros(m.nnz, dtype=np.int64)
        if x.ndim == 1:
            rows.insert(len(batch), zeros)
        if y.ndim == 1:
            rows.append(zeros)
    try:
        if x2.shape[-1] == 0:  # no product reads the indices: check them here (the result keeps them)
            check_indices(m.indices, m.shape)
        # with a 2-D y the last index row is the mask's own: its numbering can be kept with the mask
        owner = m if y.ndim >= 2 else None
        values = sddmm_rows(be, rows, m.nnz, x2, y2, len(batch), dtype, columns_of=owner)
    except IndexError:
        name_bad_index("sampled_matmul", mask)
        raise
    return COO(mask.indices, values.reshape((mask.nnz,) + mask.dense_shape), mask.shape,
               sorted=mask.is_sorted, unique=mask.is_unique, check=False)


def sddmm_rows(be, rows, n, x, y, nbatch, dtype, columns_of=None):
    """Values of ``x @ y`` at ``n`` entries given by index rows (batch..., m, j) of the product.

    ``columns_of``: the COO whose last index row ``rows[-1]`` is (a 2-D mask), which then keeps
    the numbering of its named columns (below) as a companion for the next call.

    ``x`` is (..., M, K) and ``y`` (..., K, N), any strides (transposed or
    conjugated views included); their batch dimensions broadcast to the
    ``nbatch`` leading rows. The kernel reads both through flat views; a
    factor is copied only for a dtype cast or to make it unit-stride (below).

    Every index row is checked against its size (IndexError on the CPU, the
    error word on a GPU), by the kernel for a lone row or column index, by the
    checked ``linear_index`` where batch indices join in; batch dimensions that
    neither operand reads (both broadcast) join x's address with stride 0.
    """
    xp = be.xp
    k = x.shape[-1]
    if n == 0 or k == 0:
        return xp.zeros(n, dtype=dtype)
    xa = _to_acc(x, dtype)
    ya = _to_acc(y, dtype)
    # the kernel walks a row of x and a column of y: make both unit-stride when the
    # entries outnumber the rows/columns (one O(size) copy instead of strided reads; a
    # matrix by the kernel layer's tiled transpose, faster than NumPy's strided copy; on the host
    # into scratch memory kept for the next call, see _kernels/scratch.py)
    item = xa.dtype.itemsize
    taken = []

    def transposed(a):
        if xp is not np:
            return be.dense_transpose(a)
        out = scratch.take((a.shape[1], a.shape[0]), a.dtype)
        taken.append(out)
        return be.dense_transpose(a, out)

    try:
        if xa.strides[-1] != item and n >= xa.shape[-2] and 0 not in xa.strides:
            xa = transposed(xa.T) if xa.ndim == 2 else xp.ascontiguousarray(xa)
        if ya.strides[-2] != item and n >= ya.shape[-1] and 0 not in ya.strides:
            if (ya.ndim == 2 and nbatch == 0 and xp is np and n >= SAMPLED_COLUMNS_FROM
                    and ya.dtype.kind in "fiu"):
                # only the columns the entries name, renumbered in the order they are first named:
                # fewer rows copied, and the rows gathered at random lie closer together (real and
                # integer items, copied by vector blocks; complex keeps the plain copy)
                yt = scratch.take((ya.shape[1], ya.shape[0]), ya.dtype)
                taken.append(yt)
                yt, cols, m = be.sampled_transpose(ya, rows[1], yt, numbering=_numbering(be, rows[1], ya.shape[1],
                                                                                          columns_of, taken))
                rows = [rows[0], cols]
                ya = yt[:max(m, 1)].T  # m == 0: every column is bad and nothing is read
            else:
                ya = transposed(ya).T if ya.ndim == 2 else \
                    xp.swapaxes(xp.ascontiguousarray(xp.swapaxes(ya, -1, -2)), -1, -2)
        return _sddmm_flat(be, rows, nbatch, xa, ya, k, dtype)
    finally:
        for t in taken:  # the values are in a new array: nothing reads the copies any more
            scratch.give(t)


def _numbering(be, cols, ncols, owner, taken):
    """``number_columns`` of a mask's column row: kept with the mask (``owner``; an immutable
    array, so the numbers stay valid: a repeated product with one pattern skips the serial pass,
    ~2 ms of a 2M-entry call) or, without one, into scratch memory given back after the call."""
    if owner is None:
        out = scratch.take(cols.shape[0], np.int32 if ncols < 2**31 else np.int64)
        taken.append(out)
        return be.number_columns(cols, ncols, out)
    cols2, rowmap, m = owner._companion(COLUMN_NUMBERING + (ncols,), lambda b: _kept_numbering(b, cols, ncols))
    return cols2, rowmap, int(m[0])


COLUMN_NUMBERING = ("column numbering",)
"""Companion key (with the column count) of a 2-D mask's SDDMM numbering: (cols2, rowmap, [m])."""


def _kept_numbering(be, cols, ncols):
    cols2, rowmap, m = be.number_columns(cols, ncols)
    return cols2, rowmap, np.array([m], dtype=np.int64)  # a companion holds arrays only


def _sddmm_flat(be, rows, nbatch, xa, ya, k, dtype):
    """sddmm_rows once ``xa`` and ``ya`` are laid out for the kernel."""
    xp = be.xp
    fx, basex, sx = flat_view(xa)
    fy, basey, sy = flat_view(ya)

    bsizes = (1,) * nbatch + tuple(np.broadcast_shapes(xa.shape[:-2], ya.shape[:-2]))
    bsizes = bsizes[len(bsizes) - nbatch:]

    def reads(arr, strides, d):
        off = nbatch - (arr.ndim - 2)
        return d >= off and arr.shape[d - off] != 1 and strides[d - off] != 0

    def terms(arr, strides, which, extra=()):
        """(index row, stride, size) of the dims that address ``arr``, then ``extra`` (stride 0)."""
        off = nbatch - (arr.ndim - 2)
        out = [(rows[d], strides[d - off], arr.shape[d - off]) for d in range(nbatch) if reads(arr, strides, d)]
        out += [(rows[d], 0, bsizes[d]) for d in extra]
        out.append((rows[nbatch + which], strides[-2] if which == 0 else strides[-1],
                    arr.shape[-2] if which == 0 else arr.shape[-1]))
        return out

    def resolve(ts, base):
        """(addresses or the index row, stride, bound the kernel checks: None when linear_index did)."""
        if len(ts) == 1 and base == 0:
            return ts[0][0], ts[0][1], ts[0][2]
        addr = be.linear_index(xp.ascontiguousarray(xp.stack([t[0] for t in ts])),
                               np.array([t[1] for t in ts], dtype=np.int64),  # host strides: by value
                               tuple(t[2] for t in ts))  # checked in the same pass
        if base:
            addr += base
        return addr, 1, None

    unread = [d for d in range(nbatch) if not reads(xa, sx, d) and not reads(ya, sy, d)]
    rx, rsx, bx = resolve(terms(xa, sx, 0, unread), basex)
    ry, rsy, by = resolve(terms(ya, sy, 1), basey)
    out = be.sddmm(rx, rsx, ry, rsy, fx, sx[-1], fy, sy[-2], k, bx, by)
    return _from_acc(out, dtype)


# ----------------------------------------------------------------------------- NumPy's functions
def _no_out(name, out):
    if out is not None:
        raise TypeError(f"numpy.{name}: out= is not supported for COO operands")


@implements(np.dot)
def _np_dot(a, b, out=None):
    _no_out("dot", out)
    return dot(a, b)


@implements(np.tensordot, np.linalg.tensordot)
def _np_tensordot(a, b, axes=2):
    return tensordot(a, b, axes=axes)


@implements(np.inner)
def _np_inner(a, b):
    return inner(a, b)


@implements(np.vdot)
def _np_vdot(a, b):
    return vdot(a, b)


@implements(np.outer)
def _np_outer(a, b, out=None):
    _no_out("outer", out)
    return outer(a, b)


@implements(np.linalg.outer)
def _np_linalg_outer(x1, x2, /):
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"numpy.linalg.outer: operands must be 1-D; got shapes {x1.shape} and {x2.shape}")
    return outer(x1, x2)


@implements(np.linalg.matmul)
def _np_linalg_matmul(x1, x2, /):
    return matmul(x1, x2)


@implements(np.linalg.vecdot)
def _np_linalg_vecdot(x1, x2, /, *, axis=-1):
    return vecdot(x1, x2, axis=axis)


# np.matmul and np.vecdot are generalized ufuncs: COO.__array_ufunc__ (coosparse/ops/elementwise/engine.py)
# finds them here after dropping out=/where= (refused there) and the ignored keywords
@implements(np.matmul)
def _np_matmul(x1, x2, /, **kwargs):
    _no_gufunc_keywords("matmul", kwargs)
    return matmul(x1, x2)


@implements(np.vecdot)
def _np_vecdot(x1, x2, /, *, axis=-1, **kwargs):
    _no_gufunc_keywords("vecdot", kwargs)
    return vecdot(x1, x2, axis=axis)


def _no_gufunc_keywords(name, kwargs):
    if kwargs:
        raise TypeError(f"numpy.{name}: keyword(s) {sorted(kwargs)} not supported for COO operands")


def binary_operand(x):
    """True when ``x`` can be the other operand of ``COO @ x`` (else the operator defers)."""
    return (_is_coo(x) or isinstance(x, (np.ndarray, np.generic, numbers.Number, list, tuple)) or is_device_array(x)
            or foreign_kind(x, SPARSE_FOREIGN) is not None)


@operation()
def matmul_operator(a, b):
    """``a @ b`` with a COO on either side: :func:`matmul`, or NotImplemented when the other
    operand is of a type it does not take (so that type's own operator can answer)."""
    other = b if isinstance(a, COO) else a
    return matmul(a, b) if binary_operand(other) else NotImplemented
