"""Shape manipulation (SPEC 9): transpose, reshape, new and removed axes, hybrid layout.

Every function returns a COO with the input's fill value and documents the
flags of its result:

==========================  ==================================================
operation                   result flags
==========================  ==================================================
``permute_dims``, ``T``,    ``is_unique`` kept. ``is_sorted`` kept when the
``mT``, ``swapaxes``,       axes of size > 1 keep their relative order among
``moveaxis``                the sparse dimensions (e.g. moving a size-1 axis),
                            else False: a transpose of a sorted 2-D array is
                            not sorted (call ``coalesce``)
``reshape``, ``ravel``,     both kept: C order keeps every linear index
``flatten``                 (unless dense dimensions must become sparse:
                            then as ``to_hybrid``)
``expand_dims``,            both kept (a new sparse axis is a row of zeros)
``squeeze``
``to_hybrid`` (fewer        ``is_unique`` kept; ``is_sorted`` kept when the
dense dims)                 input is also unique (each entry's block becomes
                            entries in C order, explicit zeros included)
``to_hybrid`` (more dense   both True: duplicates are summed first
dims)
==========================  ==================================================

Layout rule: an operation that would move a dense (hybrid) dimension in
front of a sparse one first turns just enough trailing dense dimensions into
sparse ones (``to_hybrid``); one that only moves dense dimensions among
themselves works on ``values`` and moves no index.
"""
from __future__ import annotations

import numbers
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from .._core.arrays import as_words, rows2d
from .._core.coo import COO
from .._core.dispatch import implements, operation, sparse_operand
from .._core.keys import INT64_LIMIT, joint_keys, linear_keys, unravel_keys
from .._core.shapes import checked_shape, prod
from .._kernels.backend import array_namespace, backend_for, is_device_array
from .coalesce import COLUMN_ORDER, coalesce


def check_coo(a, op):
    """``a`` as a COO (a scipy.sparse or pydata/sparse array converts without densifying, SPEC 12);
    TypeError naming ``op`` for anything else."""
    a = sparse_operand(a)
    if not isinstance(a, COO):
        raise TypeError(f"{op} expects a coosparse.COO array; got {type(a).__name__}")
    return a


def result(a, indices, values, shape, *, sorted, unique):
    """A COO of ``a``'s dtype, fill and device from parts known to be valid (no checks)."""
    return COO._trusted(indices, values, tuple(shape), sorted, unique, a.fill_value)


def _xp(a):
    return backend_for(a.indices).xp


def gather_values(be, values, rows):
    """``values[rows]`` for values of any dense shape and dtype, by the ``gather_rows`` kernel."""
    v2 = rows2d(values)
    out = be.gather_rows(as_words(v2), rows).view(v2.dtype)
    return out.reshape((rows.shape[0],) + values.shape[1:])


def index_rows(indices, rows):
    """``indices[rows]`` (C-contiguous) for host row numbers ``rows``.

    A list index would be uploaded to the device (a host-to-device copy in an
    operation that is otherwise sync-free); the rows are copied one by one
    instead, or as one slice when they are consecutive.
    """
    rows = [int(r) for r in rows]
    xp = array_namespace(indices)
    if not rows:
        return xp.empty((0, indices.shape[1]), dtype=indices.dtype)
    if rows == list(range(rows[0], rows[0] + len(rows))):
        return xp.ascontiguousarray(indices[rows[0]:rows[0] + len(rows)])
    return xp.stack([indices[r] for r in rows])


# ---------------------------------------------------------------------- permutations
def _axes_tuple(axes, ndim, op):
    try:
        axes = tuple(operator.index(x) for x in axes)
    except TypeError:
        raise TypeError(f"{op}: axes must be a sequence of integers; got {axes!r}") from None
    if len(axes) != ndim:
        raise ValueError(f"{op}: axes {axes} don't match an array of {ndim} dimensions")
    return normalize_axis_tuple(axes, ndim)


def _sorted_survives(shape, sparse_perm):
    """True when the sparse axes of size > 1 keep their relative order."""
    big = [p for p in sparse_perm if shape[p] > 1]
    return big == sorted(big)


def _permute(a, perm):
    if perm == tuple(range(a.ndim)):
        return a
    s = a.sparse_ndim
    if sorted(perm[:s]) != list(range(s)):
        # a dense dimension moves in front of a sparse one: make it sparse
        d = a.dense_ndim
        while d and sorted(perm[a.ndim - d:]) != list(range(a.ndim - d, a.ndim)):
            d -= 1
        a = to_hybrid(a, d)
        s = a.sparse_ndim
    sp, dp = perm[:s], perm[s:]
    values = a.values
    if dp != tuple(range(s, a.ndim)):
        values = values.transpose((0,) + tuple(1 + p - s for p in dp))
    shape = tuple(a.shape[p] for p in perm)
    sorted_ = a.is_sorted and _sorted_survives(a.shape, sp)
    if s >= 2 and sp == tuple(reversed(range(s))):
        # rows reversed (a matrix transpose): copied when first read, which coalesce's counting
        # sort never does (it takes the rows as a view: no 16 B per entry copied into fresh pages)
        out = COO._index_rows_reversed(a._indices_as_stored(), values, shape, sorted_, a.is_unique, a.fill_value)
    else:
        indices = a.indices if sp == tuple(range(s)) else index_rows(a.indices, sp)
        out = result(a, indices, values, shape, sorted=sorted_, unique=a.is_unique)
    if sp == (1, 0) and a.is_sorted and a.is_unique and not out.is_sorted:
        # the transposed matrix is in (column, row) order without repeats: coalesce needs
        # only the counting sort by row, not the pass over both index rows that proves the order
        out._companion(COLUMN_ORDER, lambda _be: np.empty(0, np.uint8))
    return out


@implements(np.transpose, *([np.permute_dims] if hasattr(np, "permute_dims") else []))  # one object in NumPy 2
def transpose(a, axes=None):
    """Permute the dimensions (``axes=None`` reverses them), as :func:`numpy.transpose`.

    Flags: ``is_unique`` kept; ``is_sorted`` only when the sparse axes of size
    > 1 keep their order. A dense (hybrid) dimension moved before a sparse one
    becomes sparse. O(nnz) (the index rows are copied in their new order;
    when all sparse axes are reversed, as ``a.T`` of a matrix, only when
    ``indices`` is first read: until then they are a view of ``a``'s).
    The transpose of a coalesced matrix is in (column, row) order: it is
    marked so (an empty companion), and its ``coalesce()`` is one counting
    sort by row, without a pass that checks the order first.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 1], [2, 0]], np.array([1.0, 2.0]), (2, 3), sorted=True, unique=True)
    >>> t = coosparse.transpose(a)
    >>> t.shape, t.indices.tolist(), t.is_sorted, t.is_unique
    ((3, 2), [[2, 0], [0, 1]], False, True)
    """
    a = check_coo(a, "transpose")
    perm = tuple(reversed(range(a.ndim))) if axes is None else _axes_tuple(axes, a.ndim, "transpose")
    return _permute(a, perm)


def permute_dims(x, /, axes):
    """Array API ``permute_dims``: :func:`transpose` with explicit ``axes``."""
    x = check_coo(x, "permute_dims")
    return _permute(x, _axes_tuple(axes, x.ndim, "permute_dims"))


@implements(np.matrix_transpose)
def matrix_transpose(x, /):
    """Swap the last two dimensions (Array API ``matrix_transpose``, ``x.mT``).

    Raises ValueError for arrays of fewer than two dimensions. Flags as
    :func:`transpose`.
    """
    x = check_coo(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least 2 dimensions; got shape {x.shape}")
    perm = list(range(x.ndim))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return _permute(x, tuple(perm))


@implements(np.swapaxes)
def swapaxes(a, axis1, axis2):
    """Interchange two axes, as :func:`numpy.swapaxes`. Flags as :func:`transpose`."""
    a = check_coo(a, "swapaxes")
    i, j = normalize_axis_tuple((axis1,), a.ndim)[0], normalize_axis_tuple((axis2,), a.ndim)[0]
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return _permute(a, tuple(perm))


@implements(np.moveaxis)
def moveaxis(a, source, destination):
    """Move axes to new positions, as :func:`numpy.moveaxis`. Flags as :func:`transpose`."""
    a = check_coo(a, "moveaxis")
    src = normalize_axis_tuple(source, a.ndim, "source")
    dst = normalize_axis_tuple(destination, a.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _permute(a, tuple(order))


# ---------------------------------------------------------------------- reshape
def _resolve_shape(shape, size):
    if isinstance(shape, numbers.Integral) or (isinstance(shape, np.ndarray) and shape.ndim == 0):
        shape = (shape,)
    try:
        shape = [operator.index(n) for n in shape]
    except TypeError:
        raise TypeError(f"shape must be an integer or a sequence of integers; got {shape!r}") from None
    unknown = [i for i, n in enumerate(shape) if n < 0]
    if any(shape[i] != -1 for i in unknown):
        raise ValueError(f"negative dimensions are not allowed in shape {tuple(shape)} (only one -1)")
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if unknown:
        known = prod(n for n in shape if n != -1)
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {tuple(shape)}")
        shape[unknown[0]] = size // known
    shape = tuple(shape)
    if prod(shape) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
    return checked_shape(shape, "reshape")


def _blocks(old, new):
    """Aligned blocks (old dims, new dims) whose products are equal, left to right (sizes >= 1)."""
    out = []
    k = l = bk = bl = 0
    pk = pl = 1
    while k < len(old) or l < len(new):
        if l == len(new) or (k < len(old) and pk <= pl):
            pk *= old[k]
            k += 1
        else:
            pl *= new[l]
            l += 1
        if pk == pl:
            out.append((bk, k, bl, l))
            bk, bl = k, l
    return out


def reshape_indices(indices, old, new):
    """Index rows of the same entries in sparse shape ``new`` (same number of elements), exact.

    Narrow shapes go through one linear key; wide ones (2**63 elements or
    more) split into aligned blocks, and a block that is itself wide is
    computed in Python integers (exact, slower: O(nnz) object arithmetic).
    """
    be = backend_for(indices)
    xp = be.xp
    n = indices.shape[1]
    if n == 0 or prod(old) == 0:
        return xp.zeros((len(new), n), dtype=np.int64)
    if prod(old) < INT64_LIMIT:
        return xp.ascontiguousarray(unravel_keys(linear_keys(indices, old), new))
    out = xp.empty((len(new), n), dtype=np.int64)
    for bk, k, bl, l in _blocks(old, new):
        if l == bl:
            continue  # old dims of size 1 only
        if k == bk:
            out[bl:l] = 0  # new dims of size 1 only
        elif prod(old[bk:k]) < INT64_LIMIT:
            out[bl:l] = unravel_keys(linear_keys(xp.ascontiguousarray(indices[bk:k]), old[bk:k]), new[bl:l])
        else:
            out[bl:l] = xp.asarray(_object_reshape(indices[bk:k], old[bk:k], new[bl:l]))
    return out


def _object_reshape(rows, old, new):
    rows = rows.get() if is_device_array(rows) else rows  # synchronize! (exact Python-integer path)
    keys = np.zeros(rows.shape[1], dtype=object)
    for r, d in zip(rows, old):
        keys = keys * int(d) + r.astype(object)
    out = np.empty((len(new), rows.shape[1]), dtype=np.int64)
    for j in range(len(new) - 1, -1, -1):
        d = int(new[j])
        out[j] = (keys % d).astype(np.int64)
        keys = keys // d
    return out


@implements(np.reshape)
def reshape(a, shape, order="C", *, copy=None, newshape=None):
    """Give ``a`` a new shape with the same elements in C order (``-1`` infers one size).

    Flags: both kept (C order keeps every entry's linear index). Exact for
    shapes of 2**63 elements or more. The dense (hybrid) dimensions stay
    dense when a suffix of the new shape holds exactly their elements;
    otherwise they become sparse first. Returns ``a`` itself when the shape
    does not change. Only ``order='C'`` is supported.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 1], [3, 0]], np.array([1.0, 2.0]), (2, 4), sorted=True, unique=True)
    >>> b = coosparse.reshape(a, (4, -1))
    >>> b.shape, b.indices.tolist(), b.is_coalesced
    ((4, 2), [[1, 2], [1, 0]], True)
    """
    a = check_coo(a, "reshape")
    if newshape is not None:
        shape = newshape
    if order != "C":
        raise NotImplementedError(f"reshape supports order='C' only; got order={order!r}")
    shape = _resolve_shape(shape, a.size)
    if shape == a.shape:
        return a
    dsize = prod(a.dense_shape)
    m = None
    if a.dense_ndim and shape[len(shape) - a.dense_ndim:] == a.dense_shape:
        m = a.dense_ndim
    else:
        for j in range(0, len(shape) + 1):
            if prod(shape[len(shape) - j:]) == dsize and (j or dsize == 1):
                m = j
                break
    if m is None or (a.dense_ndim and dsize == 0):
        a = to_hybrid(a, 0)
        m = 0
    new_sparse = shape[: len(shape) - m]
    indices = reshape_indices(a.indices, a.sparse_shape, new_sparse)
    values = a.values.reshape((a.nnz,) + shape[len(shape) - m:])
    return result(a, indices, values, shape, sorted=a.is_sorted, unique=a.is_unique)


@implements(np.ravel)
def ravel(a, order="C"):
    """The array as 1-D in C order (:func:`reshape` to ``(-1,)``); flags kept."""
    return reshape(a, (-1,), order=order)


def flatten(a, order="C"):
    """Same as :func:`ravel` (COO is immutable, so no copy is needed)."""
    return reshape(a, (-1,), order=order)


# ---------------------------------------------------------------------- new / removed axes
def insert_axes(a, new_positions):
    """``a`` with length-1 axes at the output positions ``new_positions`` (sorted, normalised).

    A new axis is dense when every sparse axis comes before it and ``a`` has
    dense dimensions; otherwise it is a sparse axis (a row of zeros). Flags kept.
    """
    new_positions = set(new_positions)
    out_ndim = a.ndim + len(new_positions)
    s = a.sparse_ndim
    k = 0
    rows = []  # per output sparse axis: input axis or None (zeros)
    dense = []
    shape = []
    for p in range(out_ndim):
        if p in new_positions:
            if k >= s and a.dense_ndim:
                dense.append(1)
            else:
                rows.append(None)
            shape.append(1)
        else:
            if k < s:
                rows.append(k)
            else:
                dense.append(a.shape[k])
            shape.append(a.shape[k])
            k += 1
    xp = _xp(a)
    if rows == list(range(s)):
        indices = a.indices
    else:
        indices = xp.zeros((len(rows), a.nnz), dtype=np.int64)
        for j, r in enumerate(rows):
            if r is not None:
                indices[j] = a.indices[r]
    values = a.values.reshape((a.nnz,) + tuple(dense))
    return result(a, indices, values, shape, sorted=a.is_sorted, unique=a.is_unique)


@implements(np.expand_dims)
def expand_dims(a, axis=0):
    """Insert length-1 axes at ``axis`` (int or tuple, positions in the result).

    Flags kept. A new axis after every sparse axis of a hybrid array is dense.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[1, 3]], np.array([1.0, 2.0]), (4,))
    >>> coosparse.expand_dims(a, 0).indices.tolist()
    [[0, 0], [1, 3]]
    """
    a = check_coo(a, "expand_dims")
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    axes = normalize_axis_tuple(axes, a.ndim + len(axes))
    return insert_axes(a, sorted(axes))


@implements(np.squeeze)
def squeeze(a, axis=None):
    """Remove length-1 axes (all of them, or those named by ``axis``); flags kept.

    Raises ValueError when a named axis does not have length 1.
    """
    a = check_coo(a, "squeeze")
    if axis is None:
        axes = {i for i, n in enumerate(a.shape) if n == 1}
    else:
        axes = set(normalize_axis_tuple(axis, a.ndim))
        for ax in sorted(axes):
            if a.shape[ax] != 1:
                raise ValueError(
                    f"cannot select an axis to squeeze out which has size not equal to one "
                    f"(axis {ax} has size {a.shape[ax]})"
                )
    if not axes:
        return a
    s = a.sparse_ndim
    keep_rows = [k for k in range(s) if k not in axes]
    indices = a.indices if len(keep_rows) == s else index_rows(a.indices, keep_rows)
    dense = tuple(a.shape[k] for k in range(s, a.ndim) if k not in axes)
    values = a.values.reshape((a.nnz,) + dense)
    shape = tuple(n for k, n in enumerate(a.shape) if k not in axes)
    return result(a, indices, values, shape, sorted=a.is_sorted, unique=a.is_unique)


# ---------------------------------------------------------------------- hybrid layout
@operation()
def to_hybrid(a, dense_ndim):
    """The same array with ``dense_ndim`` trailing dense (hybrid) dimensions.

    Fewer dense dimensions than ``a`` has: every element of each entry's
    block that moves becomes an entry of its own (explicit zeros included,
    nnz times the block size), in C order; ``is_unique`` kept, ``is_sorted``
    kept for unique inputs. More: the trailing
    sparse dimensions move into the blocks; duplicates are summed first and
    block elements that no entry stores hold the fill value; both flags True
    (synchronises on a GPU: the number of blocks). ``to_hybrid(0)`` is the
    fully sparse layout.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 0, 2], [1, 2, 0]], np.array([1.0, 2.0, 3.0]), (3, 3))
    >>> h = coosparse.to_hybrid(a, 1)
    >>> h.indices.tolist(), h.values.tolist()
    ([[0, 2]], [[0.0, 1.0, 2.0], [3.0, 0.0, 0.0]])
    >>> coosparse.to_hybrid(h, 0).nnz
    6
    """
    a = check_coo(a, "to_hybrid")
    dense_ndim = operator.index(dense_ndim)
    if not 0 <= dense_ndim <= a.ndim:
        raise ValueError(f"dense_ndim must be between 0 and {a.ndim}; got {dense_ndim}")
    if dense_ndim == a.dense_ndim:
        return a
    if dense_ndim < a.dense_ndim:
        return _dense_to_sparse(a, a.dense_ndim - dense_ndim)
    return _sparse_to_dense(a, dense_ndim - a.dense_ndim)


def _dense_to_sparse(a, m):
    xp = _xp(a)
    s = a.sparse_ndim
    moved = a.shape[s:s + m]
    rest = a.shape[s + m:]
    block = prod(moved)
    nnz = a.nnz
    n = nnz * block
    indices = xp.empty((s + m, n), dtype=np.int64)
    if n:
        indices[:s] = xp.repeat(a.indices, block, axis=1)
        grid = xp.indices(moved, dtype=np.int64).reshape(m, block)  # made on the device: no upload
        indices[s:] = xp.tile(grid, (1, nnz))
    values = a.values.reshape((n,) + rest)
    # a repeated index would interleave its blocks' elements: sorted only without repeats
    return result(a, indices, values, a.shape, sorted=a.is_sorted and (a.is_unique or block <= 1),
                  unique=a.is_unique)


def _sparse_to_dense(a, m):
    be = backend_for(a.indices)
    xp = be.xp
    c = coalesce(a)
    s = c.sparse_ndim - m
    prefix_shape = c.sparse_shape[:s]
    if c.nnz == 0:
        values = xp.empty((0,) + c.shape[s:], dtype=c.dtype)
        return result(a, xp.zeros((s, 0), dtype=np.int64), values, a.shape, sorted=True, unique=True)
    prefix = xp.ascontiguousarray(c.indices[:s])
    (keys,), _ = joint_keys([prefix], prefix_shape)
    starts = be.segment_starts(keys)  # synchronize! (the number of blocks)
    nseg = starts.shape[0] - 1
    seg = xp.cumsum(xp.concatenate([xp.zeros(1, dtype=np.int64), (keys[1:] != keys[:-1]).astype(np.int64)]))
    blocks = xp.full((nseg,) + c.shape[s:], c.fill_value, dtype=c.dtype)
    blocks[(seg,) + tuple(c.indices[s:])] = c.values
    indices = xp.ascontiguousarray(prefix[:, starts[:-1]])
    return result(a, indices, blocks, a.shape, sorted=True, unique=True)
