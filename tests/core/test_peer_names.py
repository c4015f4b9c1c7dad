"""The names scipy.sparse and pydata/sparse code already uses on arrays (docs: the migration pages),
each checked against the peer's own answer."""
import sys

import numpy as np
import pytest

import coosparse
from coosparse import COO
from operands import FLAGS, check_flags, dense, make

sp = pytest.importorskip("scipy.sparse")


def test_data_coords_nbytes_density_format():
    a = make((6, 5), 9, "none", seed=1)
    assert a.data is a.values and a.coords is a.indices
    assert a.nbytes == a.indices.nbytes + a.values.nbytes
    assert a.density == a.nnz / 30 and a.format == "coo"
    h = make((4, 3, 2), 5, "unique", sparse_ndim=2, seed=2)
    assert h.density == h.nnz * 2 / 24  # a stored entry is a block of 2 elements
    assert coosparse.zeros((0, 3)).density == 0.0
    sparse = pytest.importorskip("sparse")
    p = sparse.COO.from_numpy(dense(a.coalesce()))
    c = a.coalesce()
    assert (c.nbytes, c.density, c.format) == (p.nbytes, p.density, p.format)


def test_sizeof_counts_the_arrays():
    """pydata's test_sizeof: an eye(100) holds 100 entries, so it is small next to its dense form."""
    x = np.eye(100)
    y = COO.from_numpy(x)
    nb = sys.getsizeof(y)
    assert 400 < nb < x.nbytes / 10
    assert nb >= y.nbytes


@pytest.mark.parametrize("flags", list(FLAGS))
def test_scipy_spellings(flags):
    a = make((6, 5), 12, flags, seed=3)
    d = dense(a)
    for m, fmt in ((a.tocsr(), "csr"), (a.tocsc(), "csc"), (a.to_scipy_sparse(), "coo")):
        assert sp.issparse(m) and m.format == fmt
        np.testing.assert_array_equal(m.toarray(), d)
    np.testing.assert_array_equal(a.toarray(), d)
    s = a.sum_duplicates()
    assert s.is_coalesced and s is not a or a.is_coalesced
    np.testing.assert_array_equal(s.to_dense(), d)
    # scipy's own answer on the same data
    m = sp.coo_array((a.values, tuple(a.indices)), shape=a.shape)
    m.sum_duplicates()
    np.testing.assert_array_equal(np.stack([m.row, m.col]), s.indices)
    np.testing.assert_array_equal(m.data, s.values)


@pytest.mark.parametrize("flags", list(FLAGS))
def test_eliminate_zeros_as_scipy(flags):
    a = make((6, 5), 14, flags, seed=4)
    vals = a.values.copy()
    vals[::3] = 0
    a = COO(a.indices, vals, a.shape, sorted=a.is_sorted, unique=a.is_unique)
    e = a.eliminate_zeros()
    assert (e.values != 0).all() and (e.is_sorted, e.is_unique) == (a.is_sorted, a.is_unique)
    np.testing.assert_array_equal(e.to_dense(), dense(a))
    check_flags(e)
    m = sp.coo_array((a.values, tuple(a.indices)), shape=a.shape)
    m.eliminate_zeros()  # scipy: in place, keeps order
    np.testing.assert_array_equal(np.stack([m.row, m.col]), e.indices)
    np.testing.assert_array_equal(coosparse.eliminate_zeros(a).values, m.data)


def test_eliminate_zeros_with_a_fill():
    # fill 1: an entry equal to the fill is dropped; duplicates are summed first (1 + 1 is 2, not fill)
    a = COO([[0, 0, 2, 3]], np.array([1.0, 1.0, 1.0, 5.0]), (5,), fill_value=1.0)
    e = coosparse.eliminate_zeros(a)
    np.testing.assert_array_equal(e.to_dense(), dense(a))
    assert e.nnz == 2 and e.is_coalesced
    h = COO([[0, 1]], np.array([[0.0, 0.0], [0.0, 2.0]]), (3, 2))
    assert coosparse.eliminate_zeros(h).nnz == 1  # hybrid: a block of zeros
    with pytest.raises(TypeError, match="COO"):
        coosparse.eliminate_zeros(np.ones(3))


@pytest.mark.parametrize("fill", [None, 0.0, 2.0, np.nan])
def test_from_numpy_and_from_scipy_sparse(fill):
    x = np.array([[0.0, 2.0, 2.0], [np.nan, 0.0, 3.0]])
    a = COO.from_numpy(x, fill_value=fill)
    np.testing.assert_array_equal(a.to_dense(), x)
    assert a.is_coalesced
    if fill is not None:
        np.testing.assert_array_equal(np.asarray(a.fill_value), fill)
        stored = a.values
        assert not np.any((stored == fill) | (np.isnan(stored) & np.isnan(fill)))
    sparse = pytest.importorskip("sparse")
    p = sparse.COO.from_numpy(x, fill_value=fill)
    assert a.nnz == p.nnz
    m = sp.csr_array(np.nan_to_num(x))
    b = COO.from_scipy_sparse(m)
    np.testing.assert_array_equal(b.to_dense(), m.toarray())


def test_random_state_and_format():
    a = coosparse.random((20, 10), density=0.2, random_state=3)
    b = coosparse.random((20, 10), density=0.2, random_state=np.random.default_rng(3))
    c = coosparse.random((20, 10), density=0.2, seed=3)
    np.testing.assert_array_equal(a.to_dense(), c.to_dense())
    np.testing.assert_array_equal(b.to_dense(), c.to_dense())
    assert coosparse.random((4, 4), density=0.5, format="coo").format == "coo"
    with pytest.raises(ValueError, match="format"):
        coosparse.random((4, 4), density=0.5, format="gcxs")
    with pytest.raises(TypeError, match="random_state"):
        coosparse.random((4, 4), density=0.5, seed=1, random_state=1)
