"""Broadcasting of COO arrays (SPEC 9): broadcast_to, broadcast_arrays, and operand alignment.

A COO broadcasts like the NumPy array of its dense meaning. Dimensions that
are prepended become *sparse* dimensions (in front of the existing ones); a
sparse dimension of size 1 broadcast to ``n`` replicates every entry ``n``
times; a dense (hybrid) dimension of size 1 broadcasts in the values. The
result is a new COO (not a view): its stored entries are the input's entries
times the number of broadcast positions, explicit zeros and duplicates
included, and its fill is the input's.

Entries are written in the order (leading broadcast dimensions, input entry,
remaining broadcast dimensions), so the result is sorted when the input is
sorted and the broadcast sparse dimensions do not interleave with the kept
ones (``(1, 4) -> (3, 4)`` and ``(3, 1) -> (3, 4)`` stay sorted;
``(3, 1, 4) -> (3, 5, 4)`` does not) -- and, where broadcast dimensions
follow the kept ones, when the input is also unique; it is unique when the
input is.

Elementwise operations bring their COO operands to one shape and one number
of sparse dimensions with :func:`align`: the operand with the most dense
(hybrid) dimensions has the extra ones turned into sparse dimensions
(:func:`sparsify`, each dense block becoming one entry per element).
"""
from __future__ import annotations

import operator

import numpy as np

from .._core.coo import COO
from .._core.dispatch import implements
from .._core.shapes import as_shape, check_entries, checked_shape, prod
from .._kernels.backend import array_namespace


def broadcast_shapes(*shapes):
    """NumPy's broadcast of ``shapes``, or ValueError naming all of them.

    Pure Python (NumPy's own refuses shapes of 2**63 elements or more).
    """
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for d, n in enumerate(s, ndim - len(s)):
            if n != 1:
                if out[d] not in (1, n):
                    shown = " ".join(str(tuple(t)) for t in shapes)
                    raise ValueError(f"operands could not be broadcast together with shapes {shown}")
                out[d] = n
    return tuple(out)


def _coords(xp, count, sizes):
    """Row-major coordinates of 0..count-1 over ``sizes``: one int64 array per size."""
    if count == 0:
        return [xp.zeros(0, dtype=np.int64) for _ in sizes]
    pos = xp.arange(count, dtype=np.int64)
    out = []
    stride = count
    for n in sizes:
        stride //= n
        out.append((pos // stride) % n)
    return out


def broadcast_to(a, shape):
    """``a`` broadcast to ``shape`` as NumPy would broadcast its dense meaning.

    Parameters
    ----------
    a : COO
    shape : tuple of int
        ``a``'s shape must broadcast to it (same rank or more; each of ``a``'s
        dimensions equal to the target's or 1).

    Returns
    -------
    COO
        A new array (never a view), ``a`` itself when the shape is already
        ``shape``. New leading dimensions are sparse: the result has
        ``a.sparse_ndim + len(shape) - a.ndim`` sparse dimensions. Each
        stored entry is repeated once per broadcast position; the fill is
        ``a``'s. Flags: unique when ``a`` is unique; sorted when ``a`` is
        sorted, no broadcast sparse dimension lies between two kept ones
        (see the module docstring), and ``a`` is unique or no broadcast
        dimension follows the kept ones. Never synchronises.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 2]], np.array([1.0, 2.0]), (3,), sorted=True, unique=True)
    >>> b = coosparse.broadcast_to(a, (2, 3))
    >>> b.indices
    array([[0, 0, 1, 1],
           [0, 2, 0, 2]])
    >>> b.to_dense()
    array([[1., 0., 2.],
           [1., 0., 2.]])
    >>> b.is_coalesced
    True
    """
    if not isinstance(a, COO):
        raise TypeError(f"broadcast_to expects a COO array; got {type(a).__name__}")
    shape = as_shape(shape)
    if shape == a.shape:
        return a
    lead = len(shape) - a.ndim
    if lead < 0 or any(s != 1 and s != t for s, t in zip(a.shape, shape[lead:])):
        raise ValueError(f"broadcast_to: a COO of shape {a.shape} cannot be broadcast to {shape}")
    # a new or broadcast dimension beyond 2**63 could not be indexed: refused, never wrapped
    checked_shape(shape, "broadcast_to", like=(None,) * lead + a.shape)
    xp = array_namespace(a.values)
    sn = a.sparse_ndim + lead
    out_sparse = shape[:sn]
    dense_out = shape[sn:]
    # per output sparse dim: the input dim it keeps, or None where it broadcasts
    kept = [None] * lead + [d if a.shape[d] == shape[lead + d] else None for d in range(a.sparse_ndim)]
    first_kept = next((o for o, k in enumerate(kept) if k is not None), sn)
    lead_dims = [o for o in range(first_kept) if kept[o] is None]
    rest_dims = [o for o in range(first_kept, sn) if kept[o] is None]
    L = int(np.prod([out_sparse[o] for o in lead_dims], dtype=object)) if lead_dims else 1
    T = int(np.prod([out_sparse[o] for o in rest_dims], dtype=object)) if rest_dims else 1
    n = a.nnz
    m = L * n * T
    if m == 0:  # (no coordinate table: L or T alone may be huge)
        return COO(xp.zeros((sn, 0), dtype=np.int64), xp.zeros((0,) + dense_out, dtype=a.dtype), shape,
                   sorted=True, unique=True, check=False, fill_value=a.fill_value)
    check_entries(m, "broadcast_to", 8 * sn + a.dtype.itemsize * prod(dense_out))
    indices = xp.empty((sn, m), dtype=np.int64)
    lead_coords = dict(zip(lead_dims, _coords(xp, L, [out_sparse[o] for o in lead_dims])))
    rest_coords = dict(zip(rest_dims, _coords(xp, T, [out_sparse[o] for o in rest_dims])))
    for o in range(sn):
        if o in lead_coords:
            c = lead_coords[o][:, None, None]
        elif o in rest_coords:
            c = rest_coords[o][None, None, :]
        else:
            c = a.indices[kept[o]][None, :, None]
        indices[o] = xp.broadcast_to(c, (L, n, T)).reshape(-1)
    values = a.values.reshape((1, n, 1) + a.dense_shape)
    values = xp.ascontiguousarray(xp.broadcast_to(values, (L, n, T) + dense_out)).reshape((m,) + dense_out)
    # sorted: no broadcast dimension of the inner group lies before a kept dimension that varies
    last_varying_kept = max((o for o, k in enumerate(kept) if k is not None and out_sparse[o] > 1), default=-1)
    interleaved = any(o < last_varying_kept and out_sparse[o] > 1 for o in rest_dims)
    # duplicates of a sorted input, each followed by its inner copies, would interleave
    sorted_ = a.is_sorted and not interleaved and (a.is_unique or T == 1)
    return COO(indices, values, shape, sorted=sorted_, unique=a.is_unique,
               check=False, fill_value=a.fill_value)


def broadcast_arrays(*arrays):
    """Broadcast several arrays against each other (COO results for COO inputs).

    Parameters
    ----------
    *arrays : COO or dense arrays
        Dense (NumPy/CuPy) inputs are allowed beside COOs.

    Returns
    -------
    list
        One array per input, all of the broadcast shape: COOs through
        :func:`broadcast_to` (flags and fill as documented there), dense
        inputs as the namespace's read-only broadcast views.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 2], [0, 0]], np.array([1, 2]), (3, 1))
    >>> b = coosparse.COO([[0], [3]], np.array([5]), (1, 4))
    >>> [x.shape for x in coosparse.broadcast_arrays(a, b)]
    [(3, 4), (3, 4)]
    """
    shape = broadcast_shapes(*(tuple(x.shape) for x in arrays))
    out = []
    for x in arrays:
        if isinstance(x, COO):
            out.append(broadcast_to(x, shape))
        else:
            out.append(array_namespace(x).broadcast_to(x, shape))
    return out


def sparsify(a, sparse_ndim):
    """``a`` with its first dense dimensions turned into sparse ones (``sparse_ndim`` in all).

    Every stored entry becomes one entry per element of the moved part of its
    dense block (explicit zeros included), in row-major order, so unique inputs
    stay so, and sorted ones unless they hold duplicates (their blocks
    interleave). Fill kept.
    """
    sparse_ndim = operator.index(sparse_ndim)
    k = sparse_ndim - a.sparse_ndim
    if k == 0:
        return a
    if k < 0 or sparse_ndim > a.ndim:
        raise ValueError(f"cannot give a COO of shape {a.shape} with {a.sparse_ndim} sparse "
                         f"dimensions {sparse_ndim} sparse dimensions")
    xp = array_namespace(a.values)
    moved = a.dense_shape[:k]
    rest = a.dense_shape[k:]
    B = int(np.prod(moved, dtype=object))
    n = a.nnz
    m = n * B
    check_entries(m, "sparsify", 8 * sparse_ndim + a.dtype.itemsize * prod(rest))
    indices = xp.empty((sparse_ndim, m), dtype=np.int64)
    if a.sparse_ndim:
        indices[: a.sparse_ndim] = xp.broadcast_to(a.indices[:, :, None], (a.sparse_ndim, n, B)).reshape(
            a.sparse_ndim, m)
    for j, c in enumerate(_coords(xp, B, moved)):
        indices[a.sparse_ndim + j] = xp.broadcast_to(c[None, :], (n, B)).reshape(-1)
    values = xp.ascontiguousarray(a.values.reshape((m,) + rest))
    # (the moved blocks of two duplicates interleave: a sorted array with duplicates is sorted no more)
    return COO(indices, values, a.shape, sorted=a.is_sorted and (a.is_unique or B <= 1), unique=a.is_unique,
               check=False, fill_value=a.fill_value)


def align(arrays, shape):
    """COOs brought to ``shape`` with one number of sparse dimensions (the largest needed)."""
    dense_ndim = min(min(a.dense_ndim for a in arrays), len(shape))
    sn = len(shape) - dense_ndim
    out = []
    for a in arrays:
        lead = len(shape) - a.ndim
        a = sparsify(a, sn - lead) if a.sparse_ndim + lead < sn else a
        out.append(broadcast_to(a, shape))
    return out


@implements(np.broadcast_to)
def _np_broadcast_to(array, shape, subok=False):
    return broadcast_to(array, shape)


@implements(np.broadcast_arrays)
def _np_broadcast_arrays(*args, subok=False):
    return tuple(broadcast_arrays(*args))
