"""pydata/sparse's COO tests, ported (sparse/numba_backend/tests/test_coo.py): the ones that the
migration work made portable (scipy operands, the peers' names, np functions on dense inputs,
creation with ``shape=``, ``random``'s keywords, ``from_numpy`` with a fill, ``sys.getsizeof``).
The rest of test_coo.py is ported beside the operation it tests (tests/ops/*/test_*.py,
``test_pydata_*``).

Adaptations, each marked: ``sparse.X`` -> ``coosparse.X``; ``COO(coords, data)`` keeps coosparse's
argument order; ``np.array(s)`` raises TypeError (pydata: RuntimeError); formats other than COO and
``idx_dtype`` have no counterpart.
"""
import operator
import sys

import numpy as np
import pytest

import coosparse
from coosparse import COO

scipy = pytest.importorskip("scipy")
import scipy.sparse  # noqa: E402
import scipy.stats  # noqa: E402


def assert_eq(x, y):
    x = x.todense() if hasattr(x, "todense") and not isinstance(x, np.ndarray) else x
    y = y.todense() if hasattr(y, "todense") and not isinstance(y, np.ndarray) else y
    x, y = np.asarray(x), np.asarray(y)
    assert x.shape == y.shape
    np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


def srandom(shape, density=0.5, seed=0, **kw):
    return coosparse.random(shape, density, seed=seed, **kw)


@pytest.fixture
def rng():
    return np.random.default_rng(42)


# ---------------------------------------------------------------------------- kron with scipy operands
@pytest.mark.parametrize("a_spmatrix, b_spmatrix", [(True, True), (True, False), (False, True)])
def test_kron_spmatrix(a_spmatrix, b_spmatrix):
    sa = srandom((3, 4), 0.5, seed=1)
    a = sa.todense()
    sb = srandom((5, 6), 0.5, seed=2)
    b = sb.todense()
    if a_spmatrix:
        sa = sa.tocsr()
    if b_spmatrix:
        sb = sb.tocsr()
    sol = np.kron(a, b)
    assert_eq(coosparse.kron(sa, sb), sol)
    assert_eq(coosparse.kron(sa, b), sol)
    assert_eq(coosparse.kron(a, sb), sol)
    with pytest.raises(ValueError):
        assert_eq(coosparse.kron(a, b), sol)


# ---------------------------------------------------------------------------- size and the peers' attributes
def test_sizeof():
    x = np.eye(100)
    y = COO.from_numpy(x)
    nb = sys.getsizeof(y)
    assert 400 < nb < x.nbytes / 10


def test_len():
    s = srandom((20, 30, 40), 0.01)
    assert len(s) == 20


def test_density():
    s = srandom((20, 30, 40), density=0.1)
    assert np.isclose(s.density, 0.1)


def test_size():
    s = srandom((20, 30, 40), 0.01)
    assert s.size == 20 * 30 * 40


def test_np_array():
    s = srandom((20, 30, 40), 0.01)
    with pytest.raises(TypeError):  # adapted: pydata raises RuntimeError
        np.array(s)


# ---------------------------------------------------------------------------- scipy.sparse interop
@pytest.mark.parametrize("sps_class", [scipy.sparse.coo_array, scipy.sparse.coo_matrix])
def test_scipy_sparse_interface(rng, sps_class):
    n, m = 100, 10
    row = rng.integers(0, n, size=n, dtype=np.uint16)
    col = rng.integers(0, m, size=n, dtype=np.uint16)
    data = np.ones(n, dtype=np.uint8)
    if sps_class is scipy.sparse.coo_array:
        stack = np.zeros(n, dtype=np.uint8)
        coords, shape = (stack, row, col), (1, n, m)
    else:
        coords, shape = (row, col), (n, m)
    x = sps_class((data, coords), shape=shape)
    xx = COO(np.stack(coords), data, shape)  # adapted: coosparse's (indices, values) order

    def mT(x):
        return x.T if x.ndim == 2 else np.moveaxis(x, -1, -2)

    assert_eq(x.toarray(), xx)
    assert_eq(mT(x).toarray(), xx.mT)
    assert_eq(xx.to_scipy_sparse().toarray(), x.toarray())
    assert_eq(COO.from_scipy_sparse(xx.to_scipy_sparse()), xx)
    if x.ndim == 2:
        assert_eq((mT(x) @ x).toarray(), xx.mT.dot(xx))
    assert isinstance(x + xx, COO)
    assert isinstance(xx + x, COO)


@pytest.mark.parametrize("scipy_format", ["coo", "csr", "dok", "csc"])
def test_scipy_sparse_interaction(scipy_format):
    x = srandom((10, 20), density=0.2, seed=3).todense()
    sp = getattr(scipy.sparse, scipy_format + "_array")(x)
    coo = COO.from_numpy(x)  # adapted: pydata's COO(x) of a dense array is from_numpy
    assert isinstance(sp + coo, COO)
    assert isinstance(coo + sp, COO)
    assert_eq(sp.toarray(), coo)


# ---------------------------------------------------------------------------- roll (dense inputs too)
class TestRoll:
    @pytest.mark.parametrize("shift", [0, 2, -2, 20, -20])
    def test_1d(self, shift):
        xs = srandom((100,), density=0.5, seed=4)
        x = xs.todense()
        assert_eq(np.roll(x, shift), coosparse.roll(xs, shift))
        assert_eq(np.roll(x, shift), coosparse.roll(x, shift))

    @pytest.mark.parametrize("shift", [0, 2, -2, 20, -20])
    @pytest.mark.parametrize("ax", [None, 0, 1, (0, 1)])
    def test_2d(self, shift, ax):
        xs = srandom((10, 10), density=0.5, seed=5)
        x = xs.todense()
        assert_eq(np.roll(x, shift, axis=ax), coosparse.roll(xs, shift, axis=ax))
        assert_eq(np.roll(x, shift, axis=ax), coosparse.roll(x, shift, axis=ax))

    @pytest.mark.parametrize("shift", [(0, 0), (1, -1), (-1, 1), (10, -10)])
    @pytest.mark.parametrize("ax", [(0, 1), (0, 2), (1, 2), (-1, 1)])
    def test_multiaxis(self, shift, ax):
        xs = srandom((9, 9, 9), density=0.5, seed=6)
        x = xs.todense()
        assert_eq(np.roll(x, shift, axis=ax), coosparse.roll(xs, shift, axis=ax))
        assert_eq(np.roll(x, shift, axis=ax), coosparse.roll(x, shift, axis=ax))

    @pytest.mark.parametrize("shift", [0, 2, -2, 20, -20])
    @pytest.mark.parametrize("ax", [None, 0, 1, (0, 1)])
    def test_original_is_copied(self, shift, ax):
        xs = srandom((10, 10), density=0.5, seed=7)
        xc = COO(np.copy(xs.coords), np.copy(xs.data), shape=xs.shape)
        coosparse.roll(xs, shift, axis=ax)
        assert_eq(xs, xc)

    def test_iterable_shift_on_one_axis_is_numpys(self):
        x = srandom((2, 2, 2), density=1, seed=8)
        assert_eq(coosparse.roll(x, (1, 1), axis=0), np.roll(x.todense(), (1, 1), 0))

    def test_empty(self):
        x = np.array([])
        assert_eq(np.roll(x, 1), coosparse.roll(coosparse.asarray(x), 1))

    # adapted: ((1, 1), 0) is left out: NumPy accepts it (the shifts add up), and so does coosparse
    @pytest.mark.parametrize("args", [(1, [[0, 1]]), ([[0, 1]], [0, 1]), ([[0, 1], [0, 1]], [0, 1])])
    def test_valerr(self, args):
        x = srandom((2, 2, 2), density=1, seed=8)
        with pytest.raises(ValueError):
            coosparse.roll(x, args[0], axis=args[1])  # adapted: axis is keyword-only (Array API)


# ---------------------------------------------------------------------------- creation
@pytest.mark.parametrize("funcname", ["ones", "zeros"])
def test_ones_zeros(funcname):
    sp_func = getattr(coosparse, funcname)
    np_func = getattr(np, funcname)
    assert_eq(sp_func(5), np_func(5))
    assert_eq(sp_func((5, 4)), np_func((5, 4)))
    assert_eq(sp_func((5, 4), dtype="i4"), np_func((5, 4), dtype="i4"))
    assert_eq(sp_func((5, 4), dtype=None), np_func((5, 4), dtype=None))


@pytest.mark.parametrize("funcname", ["ones_like", "zeros_like"])
def test_ones_zeros_like(funcname):
    sp_func = getattr(coosparse, funcname)
    np_func = getattr(np, funcname)
    x = np.ones((5, 5), dtype="i8")
    assert_eq(sp_func(x), np_func(x))
    assert_eq(sp_func(x, dtype="f8"), np_func(x, dtype="f8"))
    assert_eq(sp_func(x, dtype=None), np_func(x, dtype=None))
    assert_eq(sp_func(x, shape=(2, 2)), np_func(x, shape=(2, 2)))


def test_full():
    assert_eq(coosparse.full(5, 9), np.full(5, 9))
    assert_eq(coosparse.full(5, 9, dtype="f8"), np.full(5, 9, dtype="f8"))
    assert_eq(coosparse.full((5, 4), 9.5), np.full((5, 4), 9.5))
    assert_eq(coosparse.full((5, 4), 9.5, dtype="i4"), np.full((5, 4), 9.5, dtype="i4"))


def test_full_like():
    x = np.zeros((5, 5), dtype="i8")
    assert_eq(coosparse.full_like(x, 9.5), np.full_like(x, 9.5))
    assert_eq(coosparse.full_like(x, 9.5, dtype="f8"), np.full_like(x, 9.5, dtype="f8"))
    assert_eq(coosparse.full_like(x, 9.5, shape=(2, 2)), np.full_like(x, 9.5, shape=(2, 2)))


# ---------------------------------------------------------------------------- random
@pytest.mark.parametrize("shape", [(2,), (2, 3), (2, 3, 4)])
@pytest.mark.parametrize("density", [0.1, 0.3, 0.5, 0.7])
def test_random_shape(shape, density):
    s = coosparse.random(shape, density)
    assert isinstance(s, COO)
    assert s.shape == shape
    expected_nnz = density * np.prod(shape)
    assert np.floor(expected_nnz) <= s.nnz <= np.ceil(expected_nnz)


@pytest.mark.parametrize("shape, nnz", [((1,), 1), ((2,), 0), ((3, 4), 5)])
def test_random_nnz(shape, nnz):
    s = coosparse.random(shape, nnz=nnz)
    assert isinstance(s, COO)
    assert s.nnz == nnz


@pytest.mark.parametrize("density, nnz", [(1, 1), (1.01, None), (-0.01, None), (None, 2)])
def test_random_invalid_density_and_nnz(density, nnz):
    with pytest.raises(ValueError):
        coosparse.random((1,), density, nnz=nnz)


def test_two_random_unequal():
    s1 = coosparse.random((2, 3, 4), 0.3)
    s2 = coosparse.random((2, 3, 4), 0.3)
    assert not np.allclose(s1.todense(), s2.todense())


def test_two_random_same_seed(rng):
    state = int(rng.integers(100))
    s1 = coosparse.random((2, 3, 4), 0.3, random_state=state)
    s2 = coosparse.random((2, 3, 4), 0.3, random_state=state)
    assert_eq(s1, s2)


@pytest.mark.parametrize("rvs, dtype", [
    (None, np.float64),
    (scipy.stats.poisson(25, loc=10).rvs, np.int64),
    (lambda x: np.random.default_rng().choice([True, False], size=x), np.bool_),
])
@pytest.mark.parametrize("shape", [(2, 4, 5), (20, 40, 50)])
@pytest.mark.parametrize("density", [0.0, 0.01, 0.1, 0.2])
def test_random_rvs(rvs, dtype, shape, density):
    x = coosparse.random(shape, density, data_rvs=rvs)
    assert x.shape == shape
    assert x.dtype == dtype


@pytest.mark.parametrize("format", ["coo"])  # adapted: COO only
def test_random_fv(format, rng):
    fv = rng.random()
    s = coosparse.random((2, 3, 4), density=0.5, format=format, fill_value=fv)
    assert s.fill_value == fv


def test_scalar_shape_construction(rng):
    x = rng.random(5)
    coords = np.arange(5)[None]
    s = COO(coords, x, shape=5)
    assert_eq(x, s)


# ---------------------------------------------------------------------------- unique, with from_numpy's fill
class TestUnique:
    arr = np.array([[0, 0, 1, 5, 3, 0], [1, 0, 4, 0, 3, 0], [0, 1, 0, 1, 1, 0]], dtype=np.int64)
    arr_empty = np.zeros((5, 5))
    arr_full = np.arange(1, 10)
    arr_negative = np.array([[-3, -2, 0, 0], [-1, 2, 0, -2]], dtype=np.int64)

    @pytest.mark.parametrize("arr", [arr, arr_empty, arr_full, arr_negative])
    @pytest.mark.parametrize("fill_value", [-1, 0, 1])
    def test_unique_counts(self, arr, fill_value):
        s_arr = COO.from_numpy(arr, fill_value)
        result_values, result_counts = coosparse.unique_counts(s_arr)
        expected_values, expected_counts = np.unique(arr, return_counts=True)
        np.testing.assert_equal(result_values, expected_values)
        np.testing.assert_equal(result_counts, expected_counts)
        # added: numpy.unique on the COO itself
        v, c = np.unique(s_arr, return_counts=True)
        np.testing.assert_equal(v, expected_values)
        np.testing.assert_equal(c, expected_counts)

    @pytest.mark.parametrize("arr", [arr, arr_empty, arr_full])
    @pytest.mark.parametrize("fill_value", [-1, 0, 1])
    def test_unique_values(self, arr, fill_value):
        s_arr = COO.from_numpy(arr, fill_value)
        np.testing.assert_equal(coosparse.unique_values(s_arr), np.unique(arr))

    def test_unique_values_nan_distinct(self):
        arr = coosparse.asarray([float("nan"), float("nan")])
        result = coosparse.unique_values(arr)
        assert result.shape == (2,)
        assert all(np.isnan(result))

    def test_unique_values_nan_fill_value(self):
        arr = COO([[0, 2]], [1.0, 2.0], shape=(4,), fill_value=float("nan"))
        result = coosparse.unique_values(arr)
        assert result.shape == (4,)
        np.testing.assert_equal(result[:2], [1.0, 2.0])
        assert all(np.isnan(result[2:]))

    def test_unique_counts_nan_fill_value(self):
        arr = COO([[0, 2]], [1.0, 2.0], shape=(4,), fill_value=float("nan"))
        result = coosparse.unique_counts(arr)
        np.testing.assert_equal(result.values[:2], [1.0, 2.0])
        assert all(np.isnan(result.values[2:]))
        np.testing.assert_equal(result.counts, [1, 1, 1, 1])
