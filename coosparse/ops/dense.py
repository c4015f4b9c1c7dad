"""Dense <-> COO: from_dense, and to_dense on the strided scatter kernels."""
from __future__ import annotations

import operator

import numpy as np

from .._core import dtypes as _dtypes
from .._core import fill as _fill
from .._core.arrays import BITS, dense_block_offsets, flat_view, unit_stride
from .._core.coo import COO
from .._core.dispatch import operation, sparse_operand
from .._core.fill import require_zero_fill
from .._kernels.backend import array_namespace, backend_for
from .._kernels.bounds import check_indices
from .coalesce import coalesce


def scatter_addresses(a, elem_strides, base):
    """(addresses of each entry's first element on a's device, offsets within its dense block on the host)."""
    be = backend_for(a.indices)
    xp = be.xp
    sn = a.sparse_ndim
    if a.nnz:
        # bounds-checked in the same pass: an index outside the shape is an IndexError
        # (a GPU reports it and skips the entry), never a silently dropped entry or a
        # write to another element; strides and sizes are host values (passed by value)
        addresses = be.linear_index(a.indices, np.array(elem_strides[:sn], dtype=np.int64), a.sparse_shape)
        if base:
            addresses += base
    else:
        addresses = xp.zeros(0, dtype=np.int64)
    return addresses, dense_block_offsets(a.dense_shape, elem_strides[sn:])


def scatter_into(out, a, *, add=True, replace=False):
    """Scatter ``a``'s entries into the dense array ``out`` in place (any strides).

    ``add=True`` accumulates (duplicates summed in stored order, so the result
    is bit-identical whatever the thread schedule); ``add=False`` assigns (the
    last duplicate wins). ``replace=True`` (with ``add``) sums each element that
    receives entries from -0.0 instead of its old value: exactly the IEEE sum of
    its entries, a -0.0 sum included. ``out`` must have ``a``'s shape and a dtype that
    ``a``'s values cast to safely; it may be non-contiguous, F-ordered or have
    negative strides. bool and float16 targets are summed in int64 / float32
    and cast back. Returns ``out``. This is ``dense + COO``: copy the dense
    operand into a fresh array of the result dtype, then scatter-add.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> from coosparse.ops.dense import scatter_into
    >>> a = coosparse.COO([[0, 2, 0]], np.array([1.0, 2.0, 3.0]), (3,))
    >>> out = np.ones(6)[::-2]  # negative stride
    >>> scatter_into(out, a)
    array([5., 1., 3.])
    """
    require_zero_fill("scatter_into (dense + COO)", a)
    if tuple(out.shape) != a.shape:
        raise ValueError(f"target shape {tuple(out.shape)} does not match COO shape {a.shape}")
    if not np.can_cast(a.dtype, out.dtype, "safe"):
        raise TypeError(f"COO values of dtype {a.dtype} do not cast safely to the target dtype {out.dtype}")
    if isinstance(out, np.ndarray) and not out.flags.writeable:  # (CuPy arrays have no such flag)
        raise ValueError("the target array is read-only")
    if a.nnz == 0 or out.size == 0:
        check_indices(a.indices, a.sparse_shape)  # nothing is written, but bad input is still refused
        return out
    be = backend_for(out, a.values)
    flat, base, es = flat_view(out)
    addresses, inner = scatter_addresses(a, es, base)
    values2d = a.values.reshape(a.nnz, -1)
    hint = _address_hint(out, a)
    if add:
        acc = _dtypes.accumulation_dtype(out.dtype)
        if out.dtype.kind == "u" and out.dtype.itemsize >= 4:
            # modular sums: same bits as the signed type, one kernel fewer
            signed = np.dtype(f"i{out.dtype.itemsize}")
            be.scatter_add(flat.view(signed), addresses, values2d.astype(out.dtype, copy=False).view(signed), inner,
                           hint=hint, replace=replace)
        elif (out.dtype.kind == "i" and out.dtype.itemsize >= 4) or out.dtype.kind == "c" or out.dtype == acc:
            be.scatter_add(flat, addresses, values2d.astype(out.dtype, copy=False), inner, hint=hint, replace=replace)
        else:
            # bool and float16 have no arithmetic in the kernels, and 8/16-bit
            # integers are not worth a compiled kernel each: sum in a wider buffer
            tmp = out.astype(acc)
            scatter_into(tmp, a, add=True, replace=replace)
            out[...] = _dtypes.from_accumulation(tmp, out.dtype)
        return out
    vals = values2d.astype(out.dtype, copy=False)
    # assignment is a bit copy: one kernel per itemsize serves every dtype
    bits = BITS[out.dtype.itemsize]
    be.scatter_set(flat.view(bits), addresses, unit_stride(vals).view(bits), inner, hint=hint)
    return out


def _address_hint(out, a):
    """What the flags say about the element addresses of ``a`` in ``out`` (lets a GPU skip their sort).

    'distinct' for a unique COO in a target whose elements do not alias (C or
    F contiguous), 'sorted' for a sorted COO of scalar entries in a
    C-contiguous target (its element addresses do not decrease in stored
    order; the blocks of two duplicates would interleave), else None. The GPU
    checks the hint it is given (flags built with check=False may lie).
    """
    if a.is_unique and (out.flags.c_contiguous or out.flags.f_contiguous):
        return "distinct"
    if a.is_sorted and out.flags.c_contiguous and all(n <= 1 for n in a.dense_shape):
        return "sorted"
    return None


@operation()
def to_dense(a, order="C"):
    """Dense NumPy/CuPy array equal to ``a`` (duplicates summed), C or F ordered.

    Indices that store nothing hold ``a.fill_value``; a stored index holds the
    sum of its entries (the fill is not added to it).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 1, 0], [1, 0, 1]], np.array([1, 2, 3]), (2, 2))
    >>> a.to_dense()
    array([[0, 4],
           [2, 0]])
    """
    a = sparse_operand(a)  # scipy.sparse and pydata/sparse arrays convert (SPEC 12)
    if not isinstance(a, COO):
        raise TypeError(
            f"to_dense expects a COO array; got {type(a).__name__}"
            + (" (it is dense already)" if hasattr(a, "shape") and hasattr(a, "dtype") else "")
        )
    if order not in ("C", "F"):
        raise ValueError(f"order must be 'C' or 'F'; got {order!r}")
    xp = array_namespace(a.values)
    fill = a.fill_value
    if not _fill.is_zero(fill):
        # the background is the fill; stored indices are overwritten by their sums
        c = a if a.is_unique else coalesce(a)
        out = xp.full(a.shape, fill, dtype=a.dtype, order=order)
        return scatter_into(out, c._with(fill_value=0), add=False)
    # the background has the fill's bits (a fill of -0.0 stays -0.0); a unique index is written,
    # not added, so a stored -0.0 keeps its sign
    neg = negative_zero_parts(fill)
    out = xp.full(a.shape, fill, dtype=a.dtype, order=order) if any(neg) else \
        xp.zeros(a.shape, dtype=a.dtype, order=order)
    z = a._with(fill_value=0)
    if a.is_unique or a.dtype.kind not in "fc":
        return scatter_into(out, z, add=not a.is_unique)
    # duplicates summed onto the background +0.0 would turn a -0.0 sum into +0.0: the kernels'
    # replace mode sums them from -0.0 (the additive identity) instead. Not needed when the
    # background is -0.0 already, nor when no stored value is -0.0 (then no sum is -0.0: checked
    # on the host, where that costs no synchronisation; on a GPU the mode is free)
    replace = not all(neg) and (xp is not np or has_negative_zero(a.values))
    return scatter_into(out, z, add=True, replace=replace)


def negative_zero_parts(x):
    """For a float or complex scalar: whether each part ((real,) or (real, imag)) is -0.0; () otherwise."""
    if x.dtype.kind not in "fc":
        return ()
    parts = (x.real, x.imag) if x.dtype.kind == "c" else (x,)
    return tuple(bool(p == 0 and np.signbit(p)) for p in parts)


def has_negative_zero(values):
    """Whether some element (or part of one) of the host array ``values`` is -0.0."""
    parts = (values.real, values.imag) if values.dtype.kind == "c" else (values,)
    return any(bool(((p == 0) & np.signbit(p)).any()) for p in parts)


@operation()
def from_dense(x, sparse_ndim=None, *, signed_zeros=False, fill_value=None):
    """COO holding the non-zero entries of dense ``x`` (sorted and unique).

    With ``sparse_ndim < x.ndim`` the trailing dimensions stay dense (hybrid):
    an entry is stored when any element of its dense block is non-zero.
    ``signed_zeros=True`` also stores the zeros whose sign differs from the
    fill's (-0.0 beside the default fill, +0.0 beside a fill of -0.0, part
    by part for complex values and fills such as 1-0j), so
    that the result's dense form has ``x``'s bits (``asarray`` asks for it).
    ``fill_value`` (default 0): the result's fill; the elements that differ
    from it are stored (a NaN fill leaves the NaNs unstored; a complex fill is
    compared part by part, so nan+infj differs from a fill of nan+0j).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.from_dense(np.array([[0, 5], [7, 0]]))
    >>> a.indices, a.values, a.is_coalesced
    (array([[0, 1],
           [1, 0]]), array([5, 7]), True)
    """
    if isinstance(x, COO):
        raise TypeError("from_dense expects a dense array; got a COO (use .copy())")
    xp = array_namespace(x)
    x = _dtypes.native(xp.asarray(x))
    _dtypes.check_dtype(x.dtype)
    if sparse_ndim is None:
        sparse_ndim = x.ndim
    sparse_ndim = operator.index(sparse_ndim)
    if not 0 <= sparse_ndim <= x.ndim:
        raise ValueError(f"sparse_ndim must be between 0 and {x.ndim}; got {sparse_ndim}")
    sparse_shape = x.shape[:sparse_ndim]
    block = 1
    for n in x.shape[sparse_ndim:]:
        block *= n
    # an explicit block size: reshape cannot infer -1 when some dimension is 0
    blocks = x.reshape(sparse_shape + (block,))
    fill = None if fill_value is None else _fill.fill_scalar(fill_value, x.dtype)
    zero_sign = signed_zeros and x.dtype.kind in "fc"
    if fill is None or (_fill.is_zero(fill) and not any(negative_zero_parts(fill))):  # a fill of +0
        nz = blocks != 0
        if zero_sign:  # (the -0.0 parts: one signbit pass, cheaper than differs' compare of signs)
            nz |= xp.signbit(blocks.real) | (xp.signbit(blocks.imag) if x.dtype.kind == "c" else False)
    else:  # a NaN fill leaves the NaNs unstored; a complex one part by part (nan+infj is not nan+0j);
        # with signed zeros, a zero of the other sign than a zero part of the fill differs from it
        nz = _fill.differs(xp, blocks, fill, zero_sign=zero_sign)
    mask = nz.any(axis=-1)
    if sparse_ndim == 0:
        nnz = int(mask)  # synchronize!
        indices = xp.zeros((0, nnz), dtype=np.int64)
        values = x.reshape((1,) + x.shape)[:nnz].copy()  # never a view of the input
    else:
        nz = xp.nonzero(mask)
        indices = xp.ascontiguousarray(xp.stack(nz).astype(np.int64, copy=False))
        values = x[nz]
    return COO(indices, values, x.shape, sorted=True, unique=True, check=False, fill_value=fill)
