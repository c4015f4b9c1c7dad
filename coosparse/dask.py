"""Dask arrays whose chunks are :class:`coosparse.COO` arrays (SPEC 11).

``import coosparse`` never imports Dask; importing this module does. Dask's
dispatch tables learn the COO type in one of two ways, whichever comes first:

- the ``dask.sizeof`` entry point that coosparse installs
  (:mod:`coosparse._dask_hook`): Dask loads it when Dask itself is imported
  (in the client and in every worker process), and it registers the COO chunk
  type as soon as ``dask.array`` has been imported (:func:`register` lists
  what is registered);
- importing :mod:`coosparse.dask`, which registers at once.

So ``dask.array.from_array(a, chunks=..., asarray=False)`` with a COO works
without importing anything from coosparse beyond the array itself.

The functions:

- :func:`to_dask` — a COO split into a chunked Dask array (one pass over the
  entries, on the client; each chunk holds only its own entries).
- :func:`from_chunks` — a chunked array from a grid of COO / scipy.sparse
  pieces, from an iterable (a generator) of row blocks, or from
  ``dask.delayed`` pieces built on the workers.
- :func:`from_dask` — compute a Dask array of COO chunks into one COO.

Examples
--------
>>> import numpy as np, coosparse
>>> from coosparse.dask import to_dask, from_dask
>>> a = coosparse.COO([[0, 1, 3], [0, 2, 3]], np.array([1.0, 2.0, 3.0]), (4, 4),
...                   sorted=True, unique=True)
>>> x = to_dask(a, chunks=(2, 4))
>>> x.chunks
((2, 2), (4,))
>>> type(x._meta).__name__
'COO'
>>> b = from_dask(x + x, scheduler="sync")
>>> b.to_dense()
array([[2., 0., 0., 0.],
       [0., 0., 4., 0.],
       [0., 0., 0., 0.],
       [0., 0., 0., 6.]])
>>> b.is_coalesced
True
"""
from __future__ import annotations

import math

import numpy as np

from ._core import fill as _fill
from ._core.coo import COO
from ._dask_sizeof import register_sizeof
from ._kernels.backend import array_namespace
from .interop.scipy import from_scipy
from .ops.join import concatenate
from .ops.linalg.einsum import einsum
from .ops.linalg.products import tensordot
from .ops.search import take

__all__ = ["from_chunks", "from_dask", "register", "to_dask"]


# ---------------------------------------------------------------------------- registration
_registered = False
def register():
    """Teach ``dask.array`` the COO chunk type (idempotent; imports ``dask.array``).

    Registered, as Dask itself does for ``sparse`` and ``cupy``:

    - ``register_chunk_type(COO)``: Dask arrays wrap COO chunks and do not
      defer to COO in arithmetic (``dask_array + coo`` is a Dask array);
    - ``concatenate_lookup`` -> :func:`coosparse.concatenate` (assembling
      chunks: ``compute``, reductions' tree steps, ``rechunk``);
    - ``tensordot_lookup`` -> :func:`coosparse.tensordot`, ``einsum_lookup`` ->
      :func:`coosparse.einsum` (``da.tensordot``, ``da.dot``, ``da.einsum``);
    - ``take_lookup`` -> :func:`coosparse.take` (integer-array indexing,
      shuffles);
    - ``numel_lookup`` / ``nannumel_lookup``: element counts for ``mean``,
      ``var``, ``std``, as dense NumPy arrays (as Dask does for pydata/sparse);
    - ``empty_lookup``: a COO that stores nothing;
    - ``to_numpy_dispatch``: ``x.to_backend("numpy")`` densifies each chunk;
    - ``sizeof``: a COO's size is its index and value bytes (the worker's
      memory accounting and spilling depend on it).

    """
    global _registered
    register_sizeof()
    if _registered:
        return
    from dask.array import chunk_types, dispatch

    if COO not in chunk_types._HANDLED_CHUNK_TYPES:
        chunk_types.register_chunk_type(COO)
    dispatch.concatenate_lookup.register(COO, _concatenate)
    dispatch.tensordot_lookup.register(COO, _tensordot)
    dispatch.einsum_lookup.register(COO, _einsum)
    dispatch.take_lookup.register(COO, _take)
    dispatch.empty_lookup.register(COO, _empty)
    dispatch.numel_lookup.register(COO, _numel)
    dispatch.nannumel_lookup.register(COO, _nannumel)
    dispatch.to_numpy_dispatch.register(COO, _to_numpy)
    _registered = True


#: chunks of different fills (e.g. Dask's ``var``/``std`` partials, ``x - chunk_mean``) are
#: joined densely up to this many elements; beyond it the concatenation refuses (ValueError)
DENSE_JOIN_LIMIT = 2**22


def _concatenate(arrays, axis=0):
    arrays = list(arrays)
    coos = [a for a in arrays if isinstance(a, COO)]
    if coos and not all(_fill.equal(c.fill_value, coos[0].fill_value) for c in coos):
        # one COO has one fill (SPEC 8): pieces of different fills join as a dense array,
        # what NumPy would give, when that is small (Dask's partial results of a reduction)
        if sum(a.size for a in arrays) <= DENSE_JOIN_LIMIT:
            dense = [a.to_dense() if isinstance(a, COO) else a for a in arrays]
            return array_namespace(dense[0]).concatenate(dense, axis=axis)
    return concatenate(arrays, axis=axis)


def _tensordot(a, b, axes=2):
    return tensordot(a, b, axes=axes)


def _einsum(*operands, **kwargs):
    # NumPy keywords Dask passes along with their defaults; coosparse.einsum takes neither
    for key, default in (("casting", "safe"), ("order", "K")):
        if kwargs.get(key, default) == default:
            kwargs.pop(key, None)
    return einsum(*operands, **kwargs)


def _take(a, indices, axis=0):
    return take(a, indices, axis=axis)


def _empty(shape, dtype=float, **kwargs):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return COO(np.zeros((len(shape), 0), dtype=np.int64), np.zeros(0, dtype=dtype), shape,
               sorted=True, unique=True, check=False)


def _numel(x, axis=None, keepdims=False, dtype=np.float64, **kwargs):
    """Number of elements reduced, as a dense NumPy array (Dask's ``numel`` for pydata/sparse)."""
    shape = x.shape
    if axis is None:
        n = np.prod(shape, dtype=dtype)
        return np.full((1,) * len(shape), n, dtype=dtype) if keepdims else n
    axes = [a % len(shape) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    n = math.prod(shape[a] for a in axes)
    out = tuple(1 if d in axes else s for d, s in enumerate(shape)) if keepdims else tuple(
        s for d, s in enumerate(shape) if d not in axes)
    return np.broadcast_to(np.array(n, dtype=dtype), out)


def _nannumel(x, **kwargs):
    """Number of non-NaN elements reduced, densified (as Dask does for pydata/sparse)."""
    n = np.sum(~np.isnan(x), **kwargs)
    return n.to_dense() if isinstance(n, COO) else n


def _to_numpy(x, **kwargs):
    d = x.to_dense()
    return d if isinstance(d, np.ndarray) else d.get()  # synchronize! (a GPU chunk to the host)


# ---------------------------------------------------------------------------- meta and checks
def _meta(dtype, ndim, sparse_ndim=None, fill_value=None, xp=np):
    """An empty COO standing for the chunks: dtype, ndim, sparse_ndim, fill and namespace."""
    sparse_ndim = ndim if sparse_ndim is None else sparse_ndim
    values = xp.zeros((0,) * (1 + ndim - sparse_ndim), dtype=dtype)
    return COO(xp.zeros((sparse_ndim, 0), dtype=np.int64), values, (0,) * ndim,
               sorted=True, unique=True, check=False, fill_value=fill_value)


def _as_coo(piece, where):
    """A chunk as a COO: COO kept, scipy.sparse converted; anything else is a TypeError."""
    if isinstance(piece, COO):
        return piece
    if hasattr(piece, "tocoo") and hasattr(piece, "format"):
        return from_scipy(piece)
    raise TypeError(
        f"chunk {where} is a {type(piece).__module__}.{type(piece).__qualname__}; expected a "
        "coosparse.COO, a scipy.sparse array/matrix or a dask.delayed object"
    )


def _common_fill(pieces, what):
    """The one fill of ``pieces`` (COOs): ValueError naming two that differ."""
    first = pieces[0]
    for p in pieces[1:]:
        if not _fill.equal(p.fill_value, first.fill_value):
            raise ValueError(
                f"{what} have different fill values ({first.fill_value!r} and {p.fill_value!r}); "
                "one array has one fill (SPEC 8): give the pieces the same fill first"
            )
    return first.fill_value


def _check_dense_dims(chunks, sparse_ndim, what):
    for d in range(sparse_ndim, len(chunks)):
        if len(chunks[d]) != 1:
            raise ValueError(
                f"{what}: dimension {d} is a dense (hybrid) dimension and must be one chunk; "
                f"got chunks {chunks[d]} (only sparse dimensions are split)"
            )


# ---------------------------------------------------------------------------- to_dask
def to_dask(a, chunks="auto", *, name=None):
    """A chunked Dask array of COO chunks holding ``a``.

    The entries are distributed to their chunks in one pass on the caller's
    side (a counting sort by chunk number, stable), so each task of the graph
    holds only its own chunk: a distributed cluster receives each entry once.
    ``dask.array.from_array(a, chunks=..., asarray=False)`` works too, but
    puts the whole of ``a`` in every worker that computes a chunk of it.

    Parameters
    ----------
    a : COO or scipy.sparse array/matrix
    chunks : int, tuple, "auto", ...
        As for :func:`dask.array.from_array` ("auto" sizes chunks as if they
        were dense). Dense (hybrid) dimensions must be one chunk.
    name : str, optional
        The graph name; by default derived from ``a``'s token (content).

    Returns
    -------
    dask.array.Array
        Chunks are COOs on ``a``'s device with ``a``'s dtype, fill and
        ``sparse_ndim``; each chunk keeps ``a``'s flags (a chunk of a sorted
        array is sorted in its own shape, a chunk of a unique one unique).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> from coosparse.dask import to_dask
    >>> a = coosparse.COO([[0, 5, 9]], np.array([1, 2, 3]), (10,), fill_value=-1)
    >>> x = to_dask(a, chunks=4)
    >>> x.chunks, x.dtype
    (((4, 4, 2),), dtype('int64'))
    >>> [x.blocks[i].compute(scheduler="sync").nnz for i in range(3)]
    [1, 1, 1]
    >>> x.blocks[1].compute(scheduler="sync").fill_value
    np.int64(-1)
    """
    import dask.array as da
    from dask.array.core import normalize_chunks
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    register()
    a = _as_coo(a, "(the array)")
    chunks = _normalized_chunks(normalize_chunks, chunks, a)
    _check_dense_dims(chunks, a.sparse_ndim, "to_dask")
    name = name or "coosparse-to-dask-" + tokenize(a, chunks)
    pieces = _split(a, chunks)
    grid = tuple(len(c) for c in chunks)
    layer = {(name, *ix): p for ix, p in zip(np.ndindex(*grid), pieces)}
    graph = HighLevelGraph.from_collections(name, layer, dependencies=())
    xp = array_namespace(a.values)
    return da.Array(graph, name, chunks,
                    meta=_meta(a.dtype, a.ndim, a.sparse_ndim, a.fill_value, xp))


def _normalized_chunks(normalize_chunks, chunks, a):
    """Dask's chunks for ``a``; ValueError naming ``chunks`` when a size is not positive (Dask itself
    divides by it: ``chunks=0`` was a ZeroDivisionError)."""
    sizes = chunks if isinstance(chunks, (tuple, list)) else (chunks,)
    for c in sizes:
        for v in (c if isinstance(c, (tuple, list)) else (c,)):
            if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v <= 0 and v != -1:
                if v == 0 and 0 in a.shape and isinstance(c, (tuple, list)):
                    continue  # an axis of length 0 has one chunk of size 0
                raise ValueError(f"to_dask: chunks={chunks!r}: a chunk size must be a positive int "
                                 "(or -1 for a whole axis, None, 'auto', or a tuple of them)")
    try:
        return normalize_chunks(chunks, a.shape, dtype=a.dtype)
    except (ZeroDivisionError, ValueError, TypeError) as e:
        raise ValueError(f"to_dask: chunks={chunks!r} do not describe chunks of shape {a.shape}: {e}") from None


def _split(a, chunks):
    """``a``'s entries per chunk, in C order of the chunk grid (a list of COOs)."""
    xp = array_namespace(a.values)
    k = a.sparse_ndim
    grid = [len(c) for c in chunks[:k]]
    nblocks = math.prod(grid)
    starts = [np.concatenate([[0], np.cumsum(c)[:-1]]).astype(np.int64) for c in chunks[:k]]
    block_shape = lambda ix: tuple(chunks[d][ix[d]] if d < k else chunks[d][0] for d in range(a.ndim))  # noqa: E731
    kw = dict(sorted=a.is_sorted, unique=a.is_unique, check=False, fill_value=a.fill_value)
    if nblocks == 1:
        return [COO(a.indices, a.values, a.shape, **kw)]
    idx = a.indices
    bid = xp.zeros(a.nnz, dtype=np.int64)
    local = xp.empty_like(idx)
    for d in range(k):
        bounds = xp.asarray(starts[d][1:])
        bd = xp.searchsorted(bounds, idx[d], side="right")
        local[d] = idx[d] - xp.asarray(starts[d])[bd]
        bid = bid * grid[d] + bd
    # a stable counting sort by chunk number: NumPy sorts 16-bit keys by radix
    key = bid.astype(np.uint16) if nblocks <= 2**16 else bid
    order = xp.argsort(key, kind="stable")
    counts = np.asarray(xp.bincount(bid, minlength=nblocks).tolist() if xp is not np
                        else np.bincount(bid, minlength=nblocks))  # synchronize! (chunk sizes)
    local = local[:, order]
    values = a.values[order]
    ends = np.cumsum(counts)
    out = []
    for b, ix in enumerate(np.ndindex(*grid)):
        lo, hi = int(ends[b] - counts[b]), int(ends[b])
        # copies: a chunk sent to a worker carries its own entries only
        out.append(COO(xp.ascontiguousarray(local[:, lo:hi]), values[lo:hi].copy(),
                       block_shape(ix), **kw))
    return out


# ---------------------------------------------------------------------------- from_chunks
def from_chunks(pieces, *, chunks=None, dtype=None, fill_value=None, sparse_ndim=None, name=None):
    """A Dask array from COO pieces: a grid, an iterable of row blocks, or delayed pieces.

    Parameters
    ----------
    pieces : nested list, or iterable
        A nested list (or tuple) of pieces, nested as deep as the chunk grid,
        like :func:`dask.array.block`: ``[[p00, p01], [p10, p11]]`` for a 2x2
        grid. Axes deeper than the nesting are one chunk. Any other iterable
        (a generator) is consumed at once and gives the blocks along axis 0.
        A piece is a :class:`coosparse.COO`, a scipy.sparse array/matrix
        (converted with :func:`coosparse.from_scipy`), or a ``dask.delayed``
        object that computes one (built on the workers, never on the caller).
    chunks : tuple of tuples, optional
        The chunk sizes per axis; required when a piece is delayed (its shape is
        not known), else checked against the pieces.
    dtype, fill_value, sparse_ndim : optional
        Describe delayed pieces (defaults: float64, 0, all dimensions sparse);
        with concrete pieces they come from the pieces (dtypes are promoted).

    Returns
    -------
    dask.array.Array
        Chunks are the pieces, unchanged (flags and fill kept); concrete pieces
        must share one fill (``ValueError`` otherwise).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, coosparse
    >>> from coosparse.dask import from_chunks, from_dask
    >>> top = coosparse.COO([[0], [1]], np.array([1.0]), (2, 3))
    >>> bottom = sp.coo_array(np.array([[0.0, 0.0, 2.0]]))
    >>> x = from_chunks([top, bottom])
    >>> x.chunks
    ((2, 1), (3,))
    >>> from_dask(x, scheduler="sync").to_dense()
    array([[0., 1., 0.],
           [0., 0., 0.],
           [0., 0., 2.]])
    """
    import dask.array as da
    from dask.base import tokenize
    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph

    register()
    if not isinstance(pieces, (list, tuple)):
        pieces = list(pieces)  # a generator: the blocks along axis 0
    if not pieces:
        raise ValueError("from_chunks needs at least one piece")
    grid = np.empty(_nest_shape(pieces), dtype=object)
    for ix in np.ndindex(*grid.shape):
        p = pieces
        for i in ix:
            p = p[i]
        grid[ix] = p if isinstance(p, Delayed) else _as_coo(p, ix)
    concrete = [p for p in grid.flat if isinstance(p, COO)]
    delayed = [p for p in grid.flat if isinstance(p, Delayed)]
    if concrete:
        ndim = concrete[0].ndim
        sparse_ndim = concrete[0].sparse_ndim if sparse_ndim is None else sparse_ndim
        for p in concrete:
            if p.ndim != ndim or p.sparse_ndim != sparse_ndim:
                raise ValueError(
                    f"pieces differ in ndim/sparse_ndim: {p.ndim}/{p.sparse_ndim} and {ndim}/{sparse_ndim}")
        fill = _common_fill(concrete, "the pieces")
        if fill_value is not None and not _fill.equal(_fill.fill_scalar(fill_value, fill.dtype), fill):
            raise ValueError(f"fill_value={fill_value!r} but the pieces have fill {fill!r}")
        dt = np.result_type(*{p.dtype for p in concrete}) if dtype is None else np.dtype(dtype)
        for ix in np.ndindex(*grid.shape):
            if isinstance(grid[ix], COO) and grid[ix].dtype != dt:
                grid[ix] = grid[ix].astype(dt)
        fill = _fill.fill_scalar(fill, dt)
        xp = array_namespace(concrete[0].values)
    else:
        if chunks is None:
            raise ValueError("from_chunks: chunks= is required when the pieces are delayed")
        ndim = len(chunks)
        sparse_ndim = ndim if sparse_ndim is None else sparse_ndim
        dt = np.dtype(np.float64 if dtype is None else dtype)
        fill, xp = fill_value, np
    if grid.ndim > ndim:
        raise ValueError(f"the pieces are nested {grid.ndim} deep but the arrays have {ndim} dimensions")
    grid = grid.reshape(grid.shape + (1,) * (ndim - grid.ndim))
    found = _chunks_of(grid)
    if chunks is None:
        chunks = found
    else:
        chunks = tuple(tuple(int(c) for c in cs) for cs in chunks)
        if len(chunks) != ndim or tuple(len(c) for c in chunks) != grid.shape:
            raise ValueError(f"chunks {chunks} do not match a grid of {grid.shape} pieces")
        for d, cs in enumerate(found):
            for i, c in enumerate(cs):
                if c is not None and c != chunks[d][i]:
                    raise ValueError(f"piece {i} along axis {d} has size {c}, chunks say {chunks[d][i]}")
    if any(c is None for cs in chunks for c in cs):
        raise ValueError("from_chunks: chunks= is required when a row/column of the grid is all delayed")
    _check_dense_dims(chunks, sparse_ndim, "from_chunks")
    name = name or "coosparse-from-chunks-" + tokenize(
        [p.key if isinstance(p, Delayed) else p for p in grid.flat], chunks, str(dt), sparse_ndim)
    layer = {(name, *ix): (grid[ix].key if isinstance(grid[ix], Delayed) else grid[ix])
             for ix in np.ndindex(*grid.shape)}
    graph = HighLevelGraph.from_collections(name, layer, dependencies=delayed)
    return da.Array(graph, name, chunks, meta=_meta(dt, ndim, sparse_ndim, fill, xp))


def _nest_shape(pieces):
    shape = []
    p = pieces
    while isinstance(p, (list, tuple)):
        if not p:
            raise ValueError("from_chunks: an empty list in the grid of pieces")
        shape.append(len(p))
        p = p[0]
    return tuple(shape)


def _chunks_of(grid):
    """Chunk sizes read from the concrete pieces (None where a whole row is delayed); checked."""
    out = []
    for d in range(grid.ndim):
        sizes = []
        for i in range(grid.shape[d]):
            seen = {p.shape[d] for p in np.take(grid, i, axis=d).flat if isinstance(p, COO)}
            if len(seen) > 1:
                raise ValueError(f"pieces at position {i} along axis {d} have different sizes {sorted(seen)}")
            sizes.append(seen.pop() if seen else None)
        out.append(tuple(sizes))
    return tuple(out)


# ---------------------------------------------------------------------------- from_dask
def from_dask(x, **compute_kwargs):
    """Compute a Dask array of COO chunks into one COO (the chunks are assembled here).

    Unlike ``x.compute()`` (Dask's concatenation of the chunks, which needs
    :func:`coosparse.concatenate`), the chunks come back as they are and their
    entries are placed at their offsets in one pass.

    Parameters
    ----------
    x : dask.array.Array
        Chunks are COOs (scipy.sparse chunks are converted); all of one fill.
        Dense (hybrid) dimensions must be one chunk.
    **compute_kwargs
        Passed to :func:`dask.compute` (``scheduler=...``).

    Returns
    -------
    COO
        Entries in chunk order. Flags: unique when every chunk is unique;
        sorted when every chunk is sorted and only the first axis is split
        (row blocks in order). The fill is the chunks' fill.
    """
    import dask

    register()
    keys = np.empty(x.numblocks, dtype=object)
    blocks = x.to_delayed()
    for ix in np.ndindex(*x.numblocks):
        keys[ix] = blocks[ix]
    pieces = dask.compute(*keys.ravel().tolist(), **compute_kwargs)
    pieces = [_as_coo(p, ix) for p, ix in zip(pieces, np.ndindex(*x.numblocks))]
    return _assemble(pieces, x.chunks, x.shape)


def _assemble(pieces, chunks, shape):
    if not pieces:
        raise ValueError("no chunks")
    k = pieces[0].sparse_ndim
    if any(p.sparse_ndim != k for p in pieces):
        raise ValueError("the chunks differ in sparse_ndim")
    _check_dense_dims(chunks, k, "from_dask")
    fill = _common_fill(pieces, "the chunks")
    xp = array_namespace(pieces[0].values)
    dt = np.result_type(*{p.dtype for p in pieces})
    starts = [np.concatenate([[0], np.cumsum(c)[:-1]]).astype(np.int64) for c in chunks]
    idx_parts, val_parts = [], []
    for p, ix in zip(pieces, np.ndindex(*(len(c) for c in chunks))):
        off = np.array([starts[d][ix[d]] for d in range(k)], dtype=np.int64)
        idx_parts.append(p.indices + xp.asarray(off)[:, None] if off.any() else p.indices)
        val_parts.append(p.values.astype(dt, copy=False))
    indices = xp.concatenate(idx_parts, axis=1) if len(pieces) > 1 else xp.ascontiguousarray(idx_parts[0])
    values = xp.concatenate(val_parts, axis=0) if len(pieces) > 1 else val_parts[0]
    unique = all(p.is_unique for p in pieces)
    sorted_ = all(p.is_sorted for p in pieces) and all(len(c) == 1 for c in chunks[1:k])
    return COO(indices, values, shape, sorted=sorted_, unique=unique, check=False,
               fill_value=_fill.fill_scalar(fill, dt))


register()
