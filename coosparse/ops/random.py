"""Random COO arrays for tests, docs and the benchmark."""
from __future__ import annotations

import operator

import numpy as np

from .._core import dtypes as _dtypes
from .._core.coo import COO
from .._core.keys import INT64_LIMIT, strides_of
from .._core.shapes import as_shape


def _random_values(rng, n, dense_shape, dtype):
    shape = (n,) + tuple(dense_shape)
    if dtype == np.bool_:
        return np.ones(shape, dtype=bool)
    if dtype.kind in "iu":
        return rng.integers(1, 10, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.random(shape) + 1j * rng.random(shape)).astype(dtype)
    return rng.random(shape).astype(dtype)


def _unique_keys(rng, total, n):
    """n distinct keys from [0, total) in random order."""
    if n > total:
        raise ValueError(f"cannot draw {n} distinct indices from {total} positions")
    if total <= 4 * n + 1024:
        return rng.permutation(total)[:n].astype(np.int64)
    keys = np.unique(rng.integers(0, total, size=n, dtype=np.int64))
    while keys.shape[0] < n:
        extra = rng.integers(0, total, size=n - keys.shape[0], dtype=np.int64)
        keys = np.unique(np.concatenate([keys, extra]))
    return rng.permutation(keys)


def random(
    shape,
    density=None,
    *,
    nnz=None,
    dtype=None,
    duplicates=False,
    sorted=False,
    sparse_ndim=None,
    seed=None,
    device="cpu",
    random_state=None,
    data_rvs=None,
    format="coo",
    fill_value=None,
):
    """A random COO array with uniformly drawn indices.

    Parameters
    ----------
    shape : tuple of int
    nnz, density : int or float, optional
        Number of stored entries, or the fraction of the sparse shape to fill
        (one of them; default density 0.01).
    dtype : dtype, optional
        Values are uniform in [0, 1) for floats (and both parts of complex),
        integers in [1, 10), True for bool. Default float64, or the dtype
        ``data_rvs`` returns.
    duplicates : bool
        False: distinct indices (``is_unique`` True). True: indices drawn with
        replacement, keeping whatever duplicates the draws give (flag False).
    sorted : bool
        Return the entries in sorted order (``is_sorted`` True); otherwise the
        order is random and the flag False.
    sparse_ndim : int, optional
        Leading sparse dimensions (default all); the rest are dense (hybrid).
    seed : int or numpy.random.Generator, optional
    device : str
        'cpu' or 'cuda[:N]'.
    random_state : int, numpy.random.Generator or RandomState, optional
        pydata/sparse's and scipy's name for ``seed`` (give one of them); a
        ``RandomState`` seeds a Generator with one draw.
    data_rvs : callable, optional
        pydata's value generator: ``data_rvs(nnz)`` returns the values (cast to
        ``dtype`` when given; dense dimensions: ``data_rvs(nnz * block)`` reshaped).
    format : {'coo'}
        pydata's keyword; only ``'coo'`` (ValueError otherwise).
    fill_value : scalar, optional
        The result's fill (SPEC 8); the drawn entries are stored as they come.

    Examples
    --------
    >>> import coosparse
    >>> a = coosparse.random((100, 100), nnz=50, seed=0)
    >>> a.nnz, a.is_unique, a.is_sorted
    (50, True, False)
    """
    if format != "coo":
        raise ValueError(f"random: format must be 'coo' (coosparse has one format); got {format!r}")
    if random_state is not None:
        if seed is not None:
            raise TypeError("random: give seed or random_state (its other name), not both")
        seed = random_state
        if isinstance(seed, np.random.RandomState):
            seed = np.random.default_rng(seed.randint(2**31))
    shape = as_shape(shape)
    dtype = None if dtype is None and data_rvs is not None else _dtypes.check_dtype(np.float64 if dtype is None else dtype)
    if sparse_ndim is None:
        sparse_ndim = len(shape)
    if not 0 <= sparse_ndim <= len(shape):
        raise ValueError(f"sparse_ndim must be between 0 and {len(shape)}; got {sparse_ndim}")
    sparse_shape, dense_shape = shape[:sparse_ndim], shape[sparse_ndim:]
    _, total = strides_of(sparse_shape)
    if nnz is not None and density is not None:
        raise ValueError("give nnz or density, not both")
    if nnz is None:
        density = 0.01 if density is None else float(density)
        if not 0.0 <= density <= 1.0:
            raise ValueError(f"density must be in [0, 1]; got {density}")
        nnz = int(round(density * total))
    try:
        nnz = operator.index(nnz)
    except TypeError:
        raise TypeError(f"nnz must be an integer; got {nnz!r}") from None
    if nnz < 0:
        raise ValueError(f"nnz must be non-negative; got {nnz}")
    if nnz and total == 0:
        raise ValueError(f"cannot place {nnz} entries in sparse shape {sparse_shape} of size 0")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if total < INT64_LIMIT:
        if duplicates:
            keys = rng.integers(0, max(total, 1), size=nnz, dtype=np.int64)
        else:
            keys = _unique_keys(rng, total, nnz)
        if sorted:
            keys = np.sort(keys, kind="stable")
        indices = np.array(np.unravel_index(keys, sparse_shape), dtype=np.int64).reshape(sparse_ndim, nnz) if sparse_ndim else np.zeros((0, nnz), dtype=np.int64)
    else:
        indices = _wide_indices(rng, sparse_shape, nnz, duplicates)
        if sorted:
            indices = indices[:, np.lexsort(indices[::-1])]
    if data_rvs is None:
        values = _random_values(rng, nnz, dense_shape, dtype)
    else:
        block = int(np.prod(dense_shape, dtype=np.int64))
        values = np.asarray(data_rvs(nnz * block))
        if dtype is not None:
            values = values.astype(dtype, copy=False)
        values = _dtypes.native(values).reshape((nnz,) + dense_shape)
    out = COO(
        np.ascontiguousarray(indices), values, shape,
        sorted=sorted, unique=not duplicates, check=False, fill_value=fill_value,
    )
    return out.to(device)


def _wide_indices(rng, sparse_shape, nnz, duplicates):
    """Per-dimension draws for shapes with 2**63 elements or more (no int64 key)."""
    def draw(n):
        # a dimension of 2**63 or more: indices are int64, so draw from its first 2**63 positions
        return np.stack([rng.integers(0, min(s, INT64_LIMIT), size=n, dtype=np.int64) for s in sparse_shape])

    indices = draw(nnz)
    if duplicates or nnz < 2:
        return indices
    while True:
        order = np.lexsort(indices[::-1])
        s = indices[:, order]
        dup = np.zeros(nnz, dtype=bool)
        dup[order[1:]] = (s[:, 1:] == s[:, :-1]).all(axis=0)
        if not dup.any():
            return indices
        indices[:, dup] = draw(int(dup.sum()))
