"""coosparse.random: exact flags, reproducible draws, every dtype."""
import numpy as np
import pytest

import coosparse
from coosparse import COO, SUPPORTED_DTYPES


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=str)
def test_dtype_and_flags_are_true(dtype):
    a = coosparse.random((20, 30), nnz=100, dtype=dtype, seed=1)
    assert a.dtype == dtype and a.nnz == 100 and a.is_unique and not a.is_sorted
    COO(a.indices, a.values, a.shape, unique=True)  # verified
    s = coosparse.random((20, 30), nnz=100, dtype=dtype, sorted=True, seed=1)
    COO(s.indices, s.values, s.shape, sorted=True, unique=True)


def test_duplicates_density_seed_and_hybrid():
    a = coosparse.random((10, 10), nnz=500, duplicates=True, seed=5)
    assert a.nnz == 500 and not a.is_unique
    b = coosparse.random((10, 10), nnz=500, duplicates=True, seed=5)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.values, b.values)
    assert coosparse.random((100, 100), density=0.1, seed=0).nnz == 1000
    assert coosparse.random((100, 100), seed=0).nnz == 100  # default density 0.01
    h = coosparse.random((5, 6, 3), nnz=7, sparse_ndim=2, seed=0)
    assert h.sparse_ndim == 2 and h.values.shape == (7, 3)
    full = coosparse.random((4, 4), density=1.0, seed=0)
    assert full.coalesce().nnz == 16
    z = coosparse.random((), nnz=1)
    assert z.shape == () and z.nnz == 1
    g = coosparse.random((5,), nnz=2, seed=np.random.default_rng(0))
    assert g.nnz == 2


def test_wide_random():
    a = coosparse.random((2**40, 2**40), nnz=1000, seed=0)
    COO(a.indices, a.values, a.shape, unique=True)
    s = coosparse.random((2**40, 2**40), nnz=1000, sorted=True, seed=0)
    COO(s.indices, s.values, s.shape, sorted=True, unique=True)


def test_random_errors():
    with pytest.raises(ValueError, match="distinct"):
        coosparse.random((3, 3), nnz=10)
    with pytest.raises(ValueError, match="not both"):
        coosparse.random((3, 3), nnz=1, density=0.1)
    with pytest.raises(ValueError, match="density"):
        coosparse.random((3, 3), density=2.0)
    with pytest.raises(ValueError, match="size 0"):
        coosparse.random((0, 3), nnz=1, duplicates=True)
    with pytest.raises(TypeError):
        coosparse.random((3,), dtype=object)
