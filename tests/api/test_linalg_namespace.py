"""``coosparse.linalg``, the Array API's linear-algebra extension: each function against NumPy's
``numpy.linalg`` on the dense meaning (Numba and emulated CUDA), the dense decompositions refused by name."""
import inspect

import numpy as np
import pytest

import coosparse
from coosparse import COO
from operands import FLAGS, dense, make

L = coosparse.linalg


def test_namespace_has_the_extension_names():
    a = make((2, 2), 2, "coalesced")
    assert a.__array_namespace__().linalg is L
    for name in L.__all__:
        assert callable(getattr(L, name)), name
    assert L.matmul is coosparse.matmul and L.tensordot is coosparse.tensordot
    assert list(inspect.signature(L.vector_norm).parameters) == ["x", "axis", "keepdims", "ord"]


@pytest.mark.parametrize("flags", list(FLAGS))
def test_norms(backend, flags):
    a = make((3, 5, 4), 20, flags, seed=1)
    x = dense(a)
    A = backend.put(a)
    for kw in ({}, {"ord": 1}, {"ord": np.inf}, {"ord": -np.inf}, {"ord": 0}, {"ord": 3.5}, {"axis": 1},
               {"axis": (0, 2), "keepdims": True}, {"axis": -1, "ord": 1}):
        got = backend.get(L.vector_norm(A, **kw))
        assert isinstance(got, COO) and got.dtype == np.float64
        np.testing.assert_allclose(got.to_dense(), np.linalg.vector_norm(x, **kw), err_msg=str(kw))
    for o in ("fro", 1, -1, np.inf, -np.inf):
        for keep in (False, True):
            got = backend.get(L.matrix_norm(A, ord=o, keepdims=keep))
            np.testing.assert_allclose(got.to_dense(), np.linalg.matrix_norm(x, ord=o, keepdims=keep))
    i = make((4, 3), 6, flags, dtype=np.int32, seed=2)
    np.testing.assert_allclose(backend.get(L.vector_norm(backend.put(i))).to_dense(),
                               np.linalg.vector_norm(dense(i).astype(np.float64)))
    c = make((4, 3), 6, flags, dtype=np.complex64, seed=3)
    got = backend.get(L.matrix_norm(backend.put(c)))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.to_dense(), np.linalg.matrix_norm(dense(c)), rtol=1e-5)


def test_norm_of_a_non_zero_fill():
    a = COO([[0, 2]], np.array([3.0, -4.0]), (4,), fill_value=1.0)
    np.testing.assert_allclose(float(L.vector_norm(a)), np.linalg.vector_norm(dense(a)))
    np.testing.assert_allclose(float(L.vector_norm(a, ord=-np.inf)), 1.0)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 3), (2, 3, 0)])
def test_max_norms_of_empty_arrays_are_zero(shape):
    # NumPy takes these maxima from 0 (max(..., initial=0)); a zero-size max raised ValueError
    d = np.zeros(shape)
    a = coosparse.asarray(d)
    for axis in (None, -1, (-2, -1)):
        got = coosparse.linalg.vector_norm(a, ord=np.inf, axis=axis)
        np.testing.assert_array_equal(dense(got), np.linalg.vector_norm(d, ord=np.inf, axis=axis))
    for ord in (1, np.inf):
        want = np.linalg.matrix_norm(d, ord=ord)
        got = dense(coosparse.linalg.matrix_norm(a, ord=ord))
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("flags", list(FLAGS))
def test_trace_diagonal_transpose(backend, flags):
    a = make((2, 5, 6), 18, flags, dtype=np.int16, seed=4)
    A, x = backend.put(a), dense(a)
    for k in (-3, 0, 2):
        np.testing.assert_array_equal(backend.get(L.diagonal(A, offset=k)).to_dense(),
                                      np.linalg.diagonal(x, offset=k))
        got = backend.get(L.trace(A, offset=k))
        np.testing.assert_array_equal(got.to_dense(), np.linalg.trace(x, offset=k))
        assert got.dtype == np.linalg.trace(x, offset=k).dtype
    np.testing.assert_array_equal(backend.get(L.trace(A, dtype=np.float32)).to_dense(),
                                  np.linalg.trace(x, dtype=np.float32))
    np.testing.assert_array_equal(backend.get(L.matrix_transpose(A)).to_dense(), np.linalg.matrix_transpose(x))


@pytest.mark.parametrize("flags", list(FLAGS))
def test_matrix_power(backend, flags):
    a = make((2, 4, 4), 12, flags, seed=5)
    A, x = backend.put(a), dense(a)
    for n in (0, 1, 2, 3, 7):
        got = backend.get(L.matrix_power(A, n))
        assert isinstance(got, COO) and got.shape == a.shape
        np.testing.assert_allclose(got.to_dense(), np.linalg.matrix_power(x, n))
    with pytest.raises(ValueError, match="square"):
        L.matrix_power(make((3, 4), 3, flags), 2)
    with pytest.raises(NotImplementedError, match="inv"):
        L.matrix_power(A, -2)


def test_cross(backend):
    rng = np.random.default_rng(6)
    a = make((4, 3), 7, "none", seed=7)
    b = COO.from_numpy(rng.integers(-2, 3, (4, 3)).astype(float))
    A, B = backend.put(a), backend.put(b)
    np.testing.assert_array_equal(backend.get(L.cross(A, B)).to_dense(), np.linalg.cross(dense(a), dense(b)))
    t = make((3, 2, 5), 8, "coalesced", seed=8)
    u = make((3, 1, 5), 5, "coalesced", seed=9)
    np.testing.assert_array_equal(backend.get(L.cross(backend.put(t), backend.put(u), axis=0)).to_dense(),
                                  np.cross(dense(t), dense(u), axis=0))
    with pytest.raises(ValueError, match="3 elements"):
        L.cross(A[:, :2], B[:, :2])


def test_products_are_the_top_level_ones():
    a = make((4, 3), 6, "coalesced", seed=10)
    b = make((3, 2), 4, "none", seed=11)
    np.testing.assert_allclose(L.matmul(a, b).to_dense(), dense(a) @ dense(b))
    np.testing.assert_allclose(L.vecdot(a, a).to_dense(), np.linalg.vecdot(dense(a), dense(a)))
    np.testing.assert_allclose(L.outer(a[0], b[:, 0]).to_dense(), np.linalg.outer(dense(a)[0], dense(b)[:, 0]))
    np.testing.assert_allclose(L.tensordot(a, b, axes=1).to_dense(), np.linalg.tensordot(dense(a), dense(b), axes=1))


@pytest.mark.parametrize("name", ["cholesky", "det", "eigh", "eigvalsh", "inv", "matrix_rank", "pinv", "qr",
                                  "slogdet", "svd", "svdvals"])
def test_dense_decompositions_are_refused_by_name(name):
    a = make((3, 3), 4, "coalesced")
    with pytest.raises(NotImplementedError, match=rf"linalg\.{name}.*dense.*numpy\.linalg\.{name}"):
        getattr(L, name)(a)


def test_solve_and_other_orders_are_refused():
    a = make((3, 3), 4, "coalesced")
    with pytest.raises(NotImplementedError, match="solve"):
        L.solve(a, a)
    for o in (2, -2, "nuc"):
        with pytest.raises(NotImplementedError, match="svdvals"):
            L.matrix_norm(a, ord=o)
    with pytest.raises(ValueError, match="ord"):
        L.matrix_norm(a, ord=3)
    with pytest.raises(ValueError, match="2 dimensions"):
        L.matrix_norm(a[0])
