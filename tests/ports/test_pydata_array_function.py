"""pydata/sparse's NumPy-protocol tests, ported (sparse/numba_backend/tests/test_array_function.py).

Their inputs and expectations, COO format only; adaptations, each marked:

- ``sparse.random(shape, density)`` -> ``coosparse.random(shape, density, seed=...)``;
  ``assert_eq`` -> a dense comparison;
- pydata's DOK and GCXS formats have no counterpart: ``test_format`` keeps ``'coo'``,
  ``TestAsarray`` keeps COO inputs and outputs;
- reductions over the whole array return a 0-d COO (as pydata's, since its issue #921).
"""
import numpy as np
import pytest

import coosparse
from coosparse import COO

scipy_sparse = pytest.importorskip("scipy.sparse")


def dense(x):
    return x.to_dense() if isinstance(x, COO) else np.asarray(x)


def assert_eq(x, y):
    x, y = dense(x), dense(y)
    assert x.shape == y.shape
    np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("func", [np.mean, np.std, np.var, np.sum, lambda x: np.sum(x, axis=0),
                                  lambda x: np.transpose(x)])
def test_unary(func):
    y = coosparse.random((50, 50), density=0.25, seed=1)
    x = y.todense()
    assert_eq(func(x), func(y))


@pytest.mark.parametrize("arg_order", [(0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("func", [np.dot, np.result_type, np.tensordot, np.matmul])
def test_binary(func, arg_order):
    y = coosparse.random((50, 50), density=0.25, seed=2)
    x = y.todense()
    xx = func(x, x)
    args = [(x, y)[i] for i in arg_order]
    yy = func(*args)
    if isinstance(xx, np.ndarray):
        assert_eq(xx, yy)
    else:
        assert xx == yy  # result_type returns a dtype


def test_stack():
    """stack(), by design, does not allow for mixed type inputs"""
    y = coosparse.random((50, 50), density=0.25, seed=3)
    x = y.todense()
    assert_eq(np.stack([x, x]), np.stack([y, y]))


@pytest.mark.parametrize("arg_order", [(0, 0, 1), (0, 1, 0), (0, 1, 1), (1, 0, 0), (1, 0, 1), (1, 1, 0), (1, 1, 1)])
@pytest.mark.parametrize("func", [lambda a, b, c: np.where(a.astype(bool), b, c)])
def test_ternary(func, arg_order):
    y = coosparse.random((50, 50), density=0.25, seed=4)
    x = y.todense()
    xx = func(x, x, x)
    args = [(x, y)[i] for i in arg_order]
    assert_eq(xx, func(*args))


@pytest.mark.parametrize("func", [np.shape, np.size, np.ndim])
def test_property(func):
    y = coosparse.random((50, 50), density=0.25, seed=5)
    x = y.todense()
    assert func(x) == func(y)


def test_broadcast_to_scalar():
    s = COO.from_numpy(np.array([0, 0, 1, 2]))
    actual = np.broadcast_to(np.zeros_like(s, shape=()), (3,))
    expected = np.broadcast_to(np.zeros_like(s.todense(), shape=()), (3,))
    assert isinstance(actual, COO)
    assert_eq(actual, expected)


def test_zeros_like_order():
    s = COO.from_numpy(np.array([0, 0, 1, 2]))
    actual = np.zeros_like(s, order="C")
    expected = np.zeros_like(s.todense(), order="C")
    assert isinstance(actual, COO)
    assert_eq(actual, expected)


@pytest.mark.parametrize("format", ["coo"])  # adapted: COO only
def test_format(format):
    s = coosparse.random((5, 5), density=0.2, format=format, seed=6)
    assert s.format == format


class TestAsarray:
    np_eye = np.eye(5)

    @pytest.mark.parametrize("input", [
        np_eye, scipy_sparse.csr_array(np_eye), scipy_sparse.csc_array(np_eye), 4, np.array(5),
        np.arange(12).reshape((2, 3, 2)), COO.from_numpy(np_eye),
    ])
    @pytest.mark.parametrize("dtype", [np.int64, np.float64, np.complex128])
    def test_asarray(self, input, dtype):
        s = coosparse.asarray(input, dtype=dtype)
        actual = s.todense() if hasattr(s, "todense") else s
        expected = input.todense() if hasattr(input, "todense") else np.asarray(input)
        np.testing.assert_equal(np.asarray(actual), np.asarray(expected))
        assert s.dtype == dtype
        if isinstance(input, COO):
            assert coosparse.asarray(input).__class__ is input.__class__

    def test_asarray_pydata(self):
        # added: pydata's own arrays convert too (its formats, without densifying)
        sparse = pytest.importorskip("sparse")
        for p in (sparse.COO.from_numpy(self.np_eye), sparse.GCXS.from_numpy(self.np_eye),
                  sparse.DOK.from_numpy(self.np_eye)):
            np.testing.assert_equal(coosparse.asarray(p).todense(), self.np_eye)


class TestArrayAPIReductions:
    @pytest.mark.parametrize("fn, expected", [(coosparse.sum, 2.0), (coosparse.max, 1.0), (coosparse.min, 0.0),
                                              (coosparse.prod, 0.0), (coosparse.mean, 0.5)])
    def test_full_reduction_returns_0d_array(self, fn, expected):
        x = coosparse.asarray(np.eye(2))
        result = fn(x)
        assert result.ndim == 0 and isinstance(result, COO)
        assert abs(float(result) - expected) < 1e-9

    @pytest.mark.parametrize("fn", [coosparse.any, coosparse.all])
    def test_boolean_reduction_returns_0d_array(self, fn):
        result = fn(coosparse.asarray(np.eye(2)))
        assert result.ndim == 0 and isinstance(result, COO)

    def test_partial_reduction_still_returns_nd_array(self):
        x = coosparse.asarray(np.eye(2))
        for axis in (0, 1):
            r = coosparse.sum(x, axis=axis)
            assert r.shape == (2,) and isinstance(r, COO)

    def test_keepdims_full_reduction(self):
        r = coosparse.sum(coosparse.asarray(np.eye(2)), keepdims=True)
        assert r.shape == (1, 1) and isinstance(r, COO)

    def test_1d_full_reduction_returns_0d_array(self):
        r = coosparse.sum(coosparse.asarray(np.array([1.0, 2.0, 3.0])))
        assert r.ndim == 0 and isinstance(r, COO) and abs(float(r) - 6.0) < 1e-9
