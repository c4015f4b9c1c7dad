"""NumPy's functions on COO arrays (``__array_function__``): each compared with NumPy on the dense
meaning; functions NumPy serves from the protocol alone work; the rest are refused by name."""
import numpy as np
import pytest

import coosparse
from coosparse import COO
from operands import FLAGS, dense, make


def d(x):
    return dense(x) if isinstance(x, COO) else np.asarray(x)


@pytest.fixture
def a():
    return make((5, 4), 9, "none", seed=1)


def test_metadata_functions(a):
    x = dense(a)
    for f in (np.shape, np.size, np.ndim, np.iscomplexobj, np.isrealobj, lambda v: np.size(v, 1),
              lambda v: np.size(v, -1)):
        assert f(a) == f(x)


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like"])
def test_like_functions(a, name):
    f = getattr(np, name)
    for kw in ({}, {"dtype": np.int32}, {"shape": (3, 2)}, {"shape": ()}, {"order": "C"}):
        r = f(a, **kw)
        want = f(dense(a), **kw)
        assert isinstance(r, COO) and r.shape == want.shape and r.dtype == want.dtype and r.nnz == 0
        if name != "empty_like":
            np.testing.assert_array_equal(r.to_dense(), want)
    r = np.full_like(a, 2.5, shape=(2, 2))
    assert isinstance(r, COO) and r.fill_value == 2.5
    np.testing.assert_array_equal(r.to_dense(), np.full_like(dense(a), 2.5, shape=(2, 2)))
    h = make((3, 4, 2), 4, "unique", sparse_ndim=2)
    assert np.zeros_like(h).sparse_ndim == 2 and np.zeros_like(h, shape=(3, 4)).sparse_ndim == 2
    assert coosparse.zeros_like(a, shape=7).shape == (7,)
    # pydata's test_broadcast_to_scalar: a 0-d prototype broadcast
    r = np.broadcast_to(np.zeros_like(a, shape=()), (3,))
    assert isinstance(r, COO) and r.shape == (3,)


def test_comparisons_to_a_bool(a):
    x = dense(a)
    y = x.copy()
    y[0, 0] += 1e-9
    b = COO.from_numpy(y)
    for other in (x, y, b, x + 1, np.nan * x):
        for f in (np.allclose, np.array_equal, np.array_equiv,
                  lambda p, q: np.array_equal(p, q, equal_nan=True),
                  lambda p, q: np.allclose(p, q, atol=0, rtol=0)):
            got = f(a, other)
            assert got is f(x, d(other)) or got == f(x, d(other))
            assert isinstance(got, (bool, np.bool_))
    assert not np.array_equal(a, x[:2]) and not np.array_equiv(a, np.ones(3))
    assert np.array_equiv(a[:1], np.broadcast_to(dense(a[:1]), (3, 4)))  # broadcasts
    nanny = COO([[0, 1]], np.array([np.nan, 1.0]), (3,))
    assert np.array_equal(nanny, nanny, equal_nan=True) and not np.array_equal(nanny, nanny)


def _dense_tree(z):
    if isinstance(z, list):
        return [_dense_tree(y) for y in z]
    return d(z) if isinstance(z, COO) else z


def test_stacking_functions():
    a = make((3, 4), 5, "coalesced", seed=2)
    b = make((3, 4), 4, "none", seed=3)
    v = make((4,), 2, "coalesced", seed=4)
    x = np.arange(12.0).reshape(3, 4)
    cases = [
        (np.hstack, ([a, b],)), (np.hstack, ([a, x],)), (np.hstack, ([v, v],)), (np.vstack, ([a, b, x],)),
        (np.vstack, ([v, a],)), (np.dstack, ([a, b],)), (np.column_stack, ([v, v],)),
        (np.column_stack, ([a, b],)), (np.block, ([[a, b], [x, a]],)), (np.block, ([a, x],)),
        (np.block, ([[[a]], [[b]]],)), (np.concatenate, ([a, x],)), (np.concatenate, ([x, a], 1)),
        (np.concatenate, ([a, b, x], None)), (np.stack, ([a, x],)), (np.atleast_3d, (v,)),
        (np.atleast_2d, (v,)), (np.atleast_1d, (a,)),
    ]
    for f, args in cases:
        dense_args = [_dense_tree(z) for z in args]
        r = f(*args)
        want = f(*dense_args)
        assert isinstance(r, COO), f
        np.testing.assert_array_equal(r.to_dense(), want)
    two = np.atleast_2d(v, a)
    assert [t.shape for t in two] == [(1, 4), (3, 4)]


def test_hstack_vstack_take_dtype_and_casting_as_numpy():
    a = COO([[0], [1]], np.array([1.5]), (2, 2))
    b = COO([[1], [0]], np.array([3], np.int8), (2, 2))
    for f in (np.hstack, np.vstack):
        for dtype, casting in [(np.int16, "unsafe"), (np.float32, "same_kind"), (np.float64, "safe")]:
            r = f([a, b], dtype=dtype, casting=casting)
            want = f([d(a), d(b)], dtype=dtype, casting=casting)
            assert r.dtype == want.dtype
            np.testing.assert_array_equal(r.to_dense(), want)
        for dtype, casting in [(np.int16, "same_kind"), (np.float32, "safe")]:
            with pytest.raises(TypeError):
                f([d(a), d(b)], dtype=dtype, casting=casting)
            with pytest.raises(TypeError, match="cannot cast"):
                f([a, b], dtype=dtype, casting=casting)


def test_concatenate_of_a_coo_with_dense_keeps_the_fill():
    a = COO([[0, 2]], np.array([5.0, 6.0]), (4,), fill_value=1.0)
    r = np.concatenate([a, np.array([1.0, 2.0, 1.0])])
    assert isinstance(r, COO) and r.fill_value == 1.0 and r.nnz == 3
    np.testing.assert_array_equal(r.to_dense(), [5.0, 1.0, 6.0, 1.0, 1.0, 2.0, 1.0])
    with pytest.raises(TypeError, match="unsupported"):
        coosparse.concatenate([a, "abc"])


@pytest.mark.parametrize("flags", list(FLAGS))
def test_trace_and_diag(flags):
    a = make((5, 6), 14, flags, seed=5)
    x = dense(a)
    for k in (-2, 0, 1, 7):
        assert float(np.trace(a, offset=k)) == np.trace(x, offset=k)
        np.testing.assert_array_equal(np.diag(a, k).to_dense(), np.diag(x, k))
    t = make((3, 4, 4), 10, flags, seed=6)
    np.testing.assert_array_equal(np.trace(t, axis1=1, axis2=2).to_dense(), np.trace(dense(t), axis1=1, axis2=2))
    v = make((4,), 3, flags, seed=7)
    for k in (-1, 0, 2):
        r = np.diag(v, k)
        np.testing.assert_array_equal(r.to_dense(), np.diag(dense(v), k))
        assert r.is_unique == v.is_unique
    np.testing.assert_array_equal(np.diagflat(a[:2, :2]).to_dense(), np.diagflat(x[:2, :2]))
    with pytest.raises(ValueError, match="fill"):
        np.diag(COO([[0]], np.array([1.0]), (3,), fill_value=2.0))
    with pytest.raises(ValueError, match="1- or 2-d"):
        np.diag(t)


@pytest.mark.parametrize("flags", list(FLAGS))
def test_unique(flags):
    a = make((5, 4), 12, flags, seed=8)
    x = dense(a)
    for kw in ({}, {"return_index": True}, {"return_counts": True},
               {"return_index": True, "return_inverse": True, "return_counts": True}):
        got = np.unique(a, **kw)
        want = np.unique(x, **kw)
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(d(g).reshape(w.shape), w)
    nan = COO([[0, 1, 3]], np.array([np.nan, np.nan, 2.0]), (5,), fill_value=np.nan)
    for eq in (True, False):
        np.testing.assert_array_equal(np.unique(nan, equal_nan=eq), np.unique(dense(nan), equal_nan=eq))
    with pytest.raises(TypeError, match="axis"):
        np.unique(a, axis=0)


def test_numpy_linalg_norm():
    a = make((5, 4), 10, "none", seed=9)
    x = dense(a)
    for kw in ({}, {"ord": 1}, {"ord": np.inf}, {"ord": -np.inf}, {"ord": "fro"}, {"ord": -1},
               {"axis": 0}, {"axis": 1, "ord": 3}, {"axis": -1, "ord": 0}, {"axis": (0, 1)},
               {"axis": (1, 0), "ord": 1, "keepdims": True}, {"keepdims": True}):
        np.testing.assert_allclose(d(np.linalg.norm(a, **kw)), np.linalg.norm(x, **kw), err_msg=str(kw))
    v = a[0]
    for o in (None, 1, 2, 0, np.inf, -np.inf, 0.5):
        np.testing.assert_allclose(d(np.linalg.norm(v, o)), np.linalg.norm(dense(v), o))
    with pytest.raises(NotImplementedError, match="svdvals"):
        np.linalg.norm(a, 2)
    with pytest.raises(NotImplementedError, match="svdvals"):
        np.linalg.norm(a, "nuc")


def test_numpy_matrix_power():
    a = make((5, 5), 9, "none", seed=10)
    x = dense(a)
    for n in (0, 1, 2, 5):
        r = np.linalg.matrix_power(a, n)
        assert isinstance(r, COO)
        np.testing.assert_allclose(r.to_dense(), np.linalg.matrix_power(x, n))
    with pytest.raises(NotImplementedError, match="inv"):
        np.linalg.matrix_power(a, -1)


def test_functions_served_from_the_protocol(a):
    x = dense(a)
    assert float(np.ptp(a)) == np.ptp(x)
    for got, want in zip(np.triu_indices_from(make((4, 4), 3, "coalesced")), np.triu_indices_from(np.zeros((4, 4)))):
        np.testing.assert_array_equal(got, want)
    assert np.copy(a).nnz == a.nnz and np.copy(a) is not a


@pytest.mark.parametrize("f", [np.median, np.average, np.cov, lambda v: np.percentile(v, 50), np.linalg.det,
                               np.fliplr])
def test_functions_that_need_the_dense_array_are_refused_by_name(a, f):
    with pytest.raises(TypeError, match=r"numpy\.(linalg\.)?\w+ is not supported for coosparse.COO"):
        f(a)


def test_roll_and_friends_take_dense_arrays():
    x = np.arange(12.0).reshape(3, 4)
    for f, args in ((coosparse.roll, (1,)), (coosparse.flip, ()), (coosparse.tile, ((2, 1),)),
                    (coosparse.repeat, (2,)), (coosparse.tril, ()), (coosparse.triu, (1,)),
                    (coosparse.diagonal, ()), (coosparse.pad, (1,))):
        r = f(x, *args)
        assert isinstance(r, COO)
        np.testing.assert_array_equal(r.to_dense(), getattr(np, f.__name__)(x, *args))
    np.testing.assert_array_equal(coosparse.roll(np.arange(4.0), 1).to_dense(), np.roll(np.arange(4.0), 1))
    np.testing.assert_array_equal(coosparse.roll([1, 2, 3], -1).to_dense(), [2, 3, 1])
    with pytest.raises(TypeError, match="roll expects an array"):
        coosparse.roll("abc", 1)


@pytest.mark.skipif(not hasattr(np, "astype"), reason="np.astype is NumPy >= 2.1")
def test_np_astype():
    # the dense meaning is cast: duplicates summed first (0.7 + 0.7 = 1.4 -> 1), the fill cast too
    a = COO([[0, 1, 1]], np.array([0.6, 0.7, 0.7]), (3,), fill_value=2.5)
    for dtype in (np.int64, np.bool_, np.float32, np.complex64):
        r = np.astype(a, dtype)
        assert isinstance(r, COO) and r.dtype == dtype
        np.testing.assert_array_equal(r.to_dense(), np.astype(a.to_dense(), dtype))
    assert np.astype(a, np.float64, copy=False) is a
    assert np.astype(a, np.float32, device="cpu").device == "cpu"
