"""Hypothesis strategies and helpers shared by the foundation tests."""
import numpy as np
from hypothesis import strategies as st

from coosparse import SUPPORTED_DTYPES


def values_of(rng, n, dense_shape, dtype):
    """Small exact values of ``dtype`` (integers, halves, complex with both parts)."""
    shape = (n,) + tuple(dense_shape)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -9, 10, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.integers(-8, 9, size=shape) / 2 + 1j * rng.integers(-8, 9, size=shape) / 4).astype(dtype)
    return (rng.standard_normal(size=shape) * 4).astype(dtype)


@st.composite
def coo_parts(draw, max_sparse_ndim=4, allow_zero_size=True):
    """(indices, values, shape, sorted_hint, unique_hint): a random COO with true hints."""
    sparse_ndim = draw(st.integers(1, max_sparse_ndim))
    lo = 0 if allow_zero_size else 1
    sparse_shape = tuple(draw(st.lists(st.integers(lo, 6), min_size=sparse_ndim, max_size=sparse_ndim)))
    dense_shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    dtype = draw(st.sampled_from(SUPPORTED_DTYPES))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    total = int(np.prod(sparse_shape))
    nnz = 0 if total == 0 else draw(st.integers(0, 40))
    dup_rate = draw(st.sampled_from([0.0, 0.3, 0.9, 1.0]))
    # draw from a pool of distinct positions: a small pool makes many duplicates
    pool = max(1, min(total, int(round(nnz * (1 - dup_rate))) or 1))
    keys = rng.choice(total, size=pool, replace=False) if total else np.zeros(0, np.int64)
    flat = keys[rng.integers(0, pool, size=nnz)] if nnz else np.zeros(0, np.int64)
    make_sorted = draw(st.booleans())
    make_unique = draw(st.booleans())
    if make_unique:
        flat = np.unique(flat) if make_sorted else flat[np.sort(np.unique(flat, return_index=True)[1])]
    elif make_sorted:
        flat = np.sort(flat, kind="stable")
    indices = np.array(np.unravel_index(flat, sparse_shape), dtype=np.int64).reshape(sparse_ndim, -1)
    values = values_of(rng, indices.shape[1], dense_shape, dtype)
    hint_sorted = make_sorted and draw(st.booleans())
    hint_unique = make_unique and draw(st.booleans())
    return indices, values, sparse_shape + dense_shape, hint_sorted, hint_unique


def full_range_values(rng, shape, dtype, scale=1.0):
    """Random values over the whole range of integer dtypes; normal floats times ``scale``.

    Complex values are ``normal * scale + 1j * normal`` (the imaginary part unscaled).
    """
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    x = rng.standard_normal(shape)
    if scale != 1.0:  # unscaled, a 0-d draw stays an array
        x = x * scale
    if dtype.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)
