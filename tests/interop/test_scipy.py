"""scipy.sparse bridge (SPEC 6): every format in, coo/csr/csc out, n-d COO."""
import numpy as np
import pytest

sp = pytest.importorskip("scipy.sparse")

import coosparse
from coosparse import COO
from reference import dense_of

FORMATS = ["coo", "csr", "csc", "bsr", "dia", "lil", "dok"]


def _matrix(fmt, kind="array", dtype=np.float64):
    rng = np.random.default_rng(0)
    dense = np.where(rng.random((6, 8)) < 0.3, rng.integers(1, 9, (6, 8)), 0).astype(dtype)
    ctor = getattr(sp, f"{fmt}_{kind}")
    if fmt == "bsr":
        return ctor(dense, blocksize=(2, 2)), dense
    return ctor(dense), dense


@pytest.mark.parametrize("kind", ["array", "matrix"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_from_scipy_every_format(fmt, kind):
    m, dense = _matrix(fmt, kind)
    a = coosparse.from_scipy(m)
    assert a.shape == dense.shape and a.dtype == dense.dtype
    np.testing.assert_array_equal(dense_of(a), dense)
    if fmt == "csr":
        assert a.is_coalesced  # canonical CSR is row-major sorted
    if fmt in ("dok", "dia", "lil", "csc"):
        assert a.is_unique
    # whatever the flags say is true (the constructor verified it)
    COO(a.indices, a.values, a.shape, sorted=a.is_sorted, unique=a.is_unique)


def test_from_scipy_duplicates_and_unsorted_csr():
    m = sp.coo_array((np.array([1.0, 2.0, 4.0]), (np.array([1, 0, 1]), np.array([2, 0, 2]))), shape=(3, 3))
    a = coosparse.from_scipy(m)
    assert not a.is_unique
    np.testing.assert_array_equal(dense_of(a), m.toarray())
    c = sp.csr_array((np.array([1.0, 2.0]), np.array([2, 0]), np.array([0, 2, 2])), shape=(2, 3))
    a = coosparse.from_scipy(c)  # unsorted columns within a row
    assert not a.is_sorted
    np.testing.assert_array_equal(dense_of(a), c.toarray())


def test_from_scipy_lying_canonical_flag_is_caught():
    m = sp.coo_array((np.ones(2), (np.array([1, 0]), np.array([0, 0]))), shape=(2, 2))
    m.has_canonical_format = True  # scipy does not check this attribute
    with pytest.raises(ValueError, match="sorted=True is false"):
        coosparse.from_scipy(m)


def test_from_scipy_nd_and_1d():
    rng = np.random.default_rng(1)
    dense = np.where(rng.random((3, 4, 5)) < 0.2, 1.5, 0.0)
    a = coosparse.from_scipy(sp.coo_array(dense))
    np.testing.assert_array_equal(dense_of(a), dense)
    b = coosparse.from_scipy(sp.coo_array(np.array([0, 2, 0, 3])))
    assert b.shape == (4,) and b.values.tolist() == [2, 3]


@pytest.mark.parametrize("fmt", ["coo", "csr", "csc"])
def test_to_scipy(fmt):
    a = coosparse.random((7, 9), nnz=40, duplicates=True, seed=3)
    m = a.to_scipy(fmt)
    assert m.format == fmt and m.shape == a.shape
    np.testing.assert_array_equal(m.toarray(), dense_of(a))
    if fmt != "coo":
        assert m.has_canonical_format and m.has_sorted_indices
        m.check_format(full_check=True)
    back = coosparse.from_scipy(m)
    np.testing.assert_array_equal(dense_of(back), dense_of(a))


def test_to_scipy_nd_coo_and_flags():
    a = coosparse.random((3, 4, 5), nnz=20, seed=2).coalesce()
    m = a.to_scipy("coo")
    assert m.ndim == 3 and m.has_canonical_format
    np.testing.assert_array_equal(m.toarray(), dense_of(a))
    u = coosparse.random((3, 4, 5), nnz=20, duplicates=True, seed=2)
    assert not u.to_scipy().has_canonical_format


def test_to_scipy_errors():
    a = coosparse.random((3, 4, 5), nnz=5, seed=0)
    with pytest.raises(ValueError, match="2-D"):
        a.to_scipy("csr")
    with pytest.raises(ValueError, match="format"):
        coosparse.random((3, 4), nnz=2).to_scipy("bsr")
    with pytest.raises(ValueError, match="hybrid"):
        coosparse.random((3, 4), nnz=2, sparse_ndim=1).to_scipy()
    with pytest.raises(ValueError, match="0-d"):
        COO(np.zeros((0, 1), np.int64), [1.0], ()).to_scipy()
    with pytest.raises(TypeError, match="scipy.sparse"):
        coosparse.from_scipy(np.ones((2, 2)))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("mutate", ["sort_indices", "sum_duplicates", "sum"])
def test_from_scipy_survives_scipy_sorting_its_matrix_in_place(fmt, mutate):
    """scipy sorts and sums a non-canonical CSR/CSC in place, data included (also implicitly: ``m.sum()``,
    ``m.max()``, ``scipy.sparse.linalg.norm(m)``):
    the COO must not share that buffer under indices of the old order."""
    data, minor, ptr = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 0, 1, 1]), np.array([0, 2, 4])
    m = getattr(sp, f"{fmt}_array")((data, minor, ptr), shape=(2, 2))
    a = coosparse.from_scipy(m)
    want = m.toarray()
    getattr(m, mutate)()
    assert m.has_sorted_indices  # scipy did reorder its buffers
    np.testing.assert_array_equal(a.to_dense(), want)
    c = getattr(sp, f"{fmt}_array")(want)  # canonical: shared, scipy never reorders it
    assert np.shares_memory(coosparse.from_scipy(c).values, c.data)


def test_from_scipy_survives_scipy_summing_a_1d_csr_in_place():
    m = sp.csr_array((np.array([1.0, 2.0, 3.0]), np.array([3, 0, 3]), np.array([0, 3])), shape=(5,))
    a = coosparse.from_scipy(m)  # through m.tocoo(), whose data is m.data
    want = m.toarray()
    m.sum()  # sums the duplicates of m in place
    np.testing.assert_array_equal(a.to_dense(), want)
    for fmt in ("dok", "lil", "dia", "bsr", "coo"):  # the other formats convert as before
        x = sp.csr_array(np.array([[0.0, 1.0], [2.0, 0.0]])).asformat(fmt)
        np.testing.assert_array_equal(coosparse.from_scipy(x).to_dense(), x.toarray())


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("indptr", [[0, 3, 2, 4], [1, 2, 3, 4], [0, 1, 2, 3], [0, 2, 4]])
def test_from_scipy_malformed_indptr_is_named(fmt, indptr):
    """A decreasing indptr, one that does not start at 0, one that ends short of the entries, or
    one of the wrong length: a ValueError naming indptr (it surfaced as NumPy's errors)."""
    m = getattr(sp, f"{fmt}_array")(np.eye(3))  # then its parts replaced, as scipy lets callers do
    m.data = np.arange(1.0, 5.0)
    m.indices = np.array([0, 1, 2, 0], dtype=m.indices.dtype)
    m.indptr = np.array(indptr, dtype=m.indptr.dtype)
    with pytest.raises(ValueError, match="indptr"):
        coosparse.from_scipy(m)
