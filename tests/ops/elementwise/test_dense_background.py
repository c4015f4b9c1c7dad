"""SPEC 9 with a dense operand: the result is sparse, of fill ``f(fill, x)``, when that is one value over
the dense operand's own elements (decided before broadcasting); otherwise it is dense. Every result is
compared with NumPy on the dense meanings, on the Numba and the emulated CUDA layers."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coosparse
from coosparse import COO
from operands import FLAGS, check_flags, dense, make, same


def numpy_of(f, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*[dense(a) if isinstance(a, COO) else a for a in args])


def run(f, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args)


@pytest.mark.parametrize("flags", list(FLAGS))
def test_row_normalisation_stays_sparse(backend, flags):
    a = make((20, 15), 60, flags, seed=1)
    rs = np.random.default_rng(2).uniform(1, 3, 20)
    r = backend.get(run(lambda x, y: x / y, backend.put(a), backend.put(rs[:, None])))
    assert isinstance(r, COO) and r.fill_value == 0
    same(r, numpy_of(np.true_divide, a, rs[:, None]))
    # the pattern is the COO's own (coalesced first: division is not linear in a dense divisor)
    assert r.nnz == a.coalesce().nnz
    # a column scale and a scalar-like broadcast view: read once per element of the operand
    cs = np.random.default_rng(3).uniform(1, 3, 15)
    for x in (cs, np.broadcast_to(rs[:, None], (20, 15))):
        r = backend.get(run(np.true_divide, backend.put(a), backend.put(np.ascontiguousarray(x)
                                                                         if backend.device != "cpu" else x)))
        assert isinstance(r, COO)
        same(r, numpy_of(np.true_divide, a, x))


def test_a_zero_divisor_makes_it_dense(backend):
    a = make((6, 5), 12, "coalesced", seed=4)
    rs = np.array([1.0, 2.0, 0.0, 4.0, 5.0, 6.0])
    r = backend.get(run(np.true_divide, backend.put(a), backend.put(rs[:, None])))
    assert not isinstance(r, COO)  # 0 / 0 is NaN where 0 / 2 is 0: the background is not one value
    same(r, numpy_of(np.true_divide, a, rs[:, None]))


def test_constant_dense_operands_give_sparse_results(backend):
    a = make((5, 4), 8, "none", seed=5)
    A = backend.put(a)
    for x, fill in ((np.full((5, 4), 2.0), 2.0), (np.ones(4), 1.0), (np.zeros((5, 1)), 0.0)):
        r = backend.get(A + backend.put(x))
        assert isinstance(r, COO) and r.fill_value == fill
        same(r, dense(a) + x)
    r = backend.get(np.maximum(A, backend.put(-np.ones((5, 4)))))
    assert isinstance(r, COO) and r.fill_value == 0  # max(0, -1) is 0 everywhere
    same(r, np.maximum(dense(a), -1.0))
    r = backend.get(A ** backend.put(np.array([1.0, 2.0, 3.0, 0.5])))
    assert isinstance(r, COO) and r.fill_value == 0  # 0 ** p is 0 for every p > 0
    same(r, numpy_of(np.power, a, np.array([1.0, 2.0, 3.0, 0.5])))
    # varying values: dense, by the union's scatter-add for add / subtract
    x = np.arange(20.0).reshape(5, 4)
    for f in (np.add, np.subtract, np.maximum):
        for args in ((A, backend.put(x)), (backend.put(x), A)):
            r = backend.get(f(*args))
            assert not isinstance(r, COO)
            same(r, numpy_of(f, *[a if isinstance(v, COO) else x for v in args]))


def test_multiply_keeps_stored_values_only(backend):
    # SPEC 4: a fill-0 COO times a dense array multiplies the stored values (x * 0 counts as 0)
    a = make((4, 4), 6, "coalesced", seed=6)
    x = np.full((4, 4), np.inf)
    r = backend.get(backend.put(a) * backend.put(x))
    assert isinstance(r, COO) and r.fill_value == 0
    np.testing.assert_array_equal(r.indices, a.indices)


def test_two_outputs_and_the_dense_operand_first(backend):
    a = make((6, 4), 10, "unique", seed=7)
    rs = np.array([3.0, 2.0, 5.0, 7.0])
    r = run(np.divmod, backend.put(a), backend.put(rs))
    for got, want in zip(r, numpy_of(np.divmod, a, rs)):
        got = backend.get(got)
        assert isinstance(got, COO)
        same(got, want)
    # x - a: f(x, 0) = x varies; x * a: stored values
    r = backend.get(backend.put(np.full(4, 2.5)) - backend.put(a))
    assert isinstance(r, COO) and r.fill_value == 2.5
    same(r, 2.5 - dense(a))


def test_hybrid_operand(backend):
    a = make((5, 3, 2), 6, "none", sparse_ndim=2, seed=8)
    x = np.array([2.0, 4.0])
    r = backend.get(backend.put(a) / backend.put(x))
    assert isinstance(r, COO) and r.sparse_ndim == 2
    same(r, dense(a) / x)


def test_in_place_operator_keeps_the_array_sparse(backend):
    a = backend.put(make((6, 5), 9, "coalesced", seed=9))
    b = a
    b /= backend.put(np.arange(1.0, 7.0)[:, None])
    assert isinstance(b, COO) and b is not a
    same(backend.get(b), dense(backend.get(a)) / np.arange(1.0, 7.0)[:, None])


def test_fill_of_the_result_is_positive_zero():
    # 0 / -3 is -0.0 and 0 / 3 is +0.0: one background (either sign); the fill is +0
    a = make((2, 3), 3, "coalesced", seed=10)
    r = a / np.array([[3.0], [-3.0]])
    assert isinstance(r, COO) and not np.signbit(r.fill_value)


def test_large_varying_operand_is_decided_by_its_sample(monkeypatch):
    """A dense operand whose sampled background already differs is not evaluated in full."""
    from coosparse.ops.elementwise import fillrule

    seen = []
    real = fillrule._background_of

    def spy(f, xf, fkw, ops, j, dense_at, values, anchors, xp):
        seen.append(values[0].shape[0])
        return real(f, xf, fkw, ops, j, dense_at, values, anchors, xp)

    monkeypatch.setattr(fillrule, "_background_of", spy)
    a = make((300, 200), 50, "coalesced", seed=11)
    x = np.random.default_rng(1).standard_normal((300, 200))
    assert not isinstance(a + x, COO)
    assert seen and max(seen) <= fillrule._SAMPLE


BINARY = [np.add, np.subtract, np.multiply, np.true_divide, np.maximum, np.minimum, np.power, np.equal,
          np.less, np.logical_and, np.logical_or, np.hypot, np.arctan2, np.floor_divide, np.remainder,
          np.copysign, np.fmax, np.heaviside]


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_every_ufunc_follows_the_rule(data):
    """Sparse exactly when f(fill, x) is one value over x's elements (multiply: SPEC 4), and always
    NumPy's dense meaning."""
    u = data.draw(st.sampled_from(BINARY))
    fill = data.draw(st.sampled_from([0.0, 0.0, 1.0, -2.0]))
    pool = data.draw(st.lists(st.sampled_from([0.0, 1.0, -1.0, 2.0, 0.5, 3.0]), min_size=1, max_size=3))
    shape = (4, 5)
    xshape = data.draw(st.sampled_from([(4, 5), (4, 1), (5,), (1, 5)]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.choice(pool, size=xshape)
    a = make(shape, data.draw(st.integers(0, 12)), data.draw(st.sampled_from(list(FLAGS))),
             seed=data.draw(st.integers(0, 100)))
    a = COO(a.indices, a.values.astype(float), shape, sorted=a.is_sorted, unique=a.is_unique, fill_value=fill)
    left = data.draw(st.booleans())
    args = (a, x) if left else (x, a)
    ref = numpy_of(u, *args)
    r = run(u, *args)
    same(r, np.asarray(ref))
    check_flags(r)
    bg = numpy_of(u, *((np.float64(fill), x) if left else (x, np.float64(fill))))
    one_value = np.all((bg == bg.flat[0]) | (np.isnan(bg) & np.isnan(bg.flat[0])))
    if u is np.multiply and fill == 0:
        assert isinstance(r, COO)
    elif one_value:
        assert isinstance(r, COO), (u, fill, x)
    else:
        assert not isinstance(r, COO), (u, fill, x)


def test_row_normalisation_against_scipy():
    sp = pytest.importorskip("scipy.sparse")
    a = coosparse.random((40, 30), density=0.1, seed=12)
    rs = np.asarray(coosparse.sum(a, axis=1).to_dense()) + 1.0
    r = a / rs[:, None]
    m = a.to_scipy("csr")
    want = m.multiply(1.0 / rs[:, None]).toarray()  # scipy's own row scaling, sparse
    np.testing.assert_allclose(r.to_dense(), want)
    assert isinstance(r, COO) and r.nnz == a.nnz and sp.issparse(m.multiply(1.0 / rs[:, None]))


def test_where_with_dense_operands_follows_the_rule(backend):
    a = make((5, 4), 8, "none", seed=13)
    c = make((5, 4), 6, "unique", dtype=np.bool_, seed=14)
    x = np.arange(20.0).reshape(5, 4) + 1
    A, C = backend.put(a), backend.put(c)
    cases = [
        ((backend.put(np.zeros((5, 4), bool)), 0.0, A), True),  # the mask leaves a's background alone
        ((C, backend.put(x), 0.0), True),  # c's pattern: where c is False (its fill) the answer is 0
        ((C, backend.put(x), A), False),  # x where c is True, a elsewhere: the fill is not one value
        ((backend.put(x > 10), A, backend.put(-x)), False),
    ]
    for (cond, p, q), sparse_result in cases:
        r = backend.get(coosparse.where(cond, p, q))
        assert isinstance(r, COO) == sparse_result
        want = np.where(*[dense(backend.get(v)) if isinstance(v, COO) else
                          (backend.get(v) if hasattr(v, "shape") else v) for v in (cond, p, q)])
        same(r, want)
        r2 = backend.get(np.where(cond, p, q))
        same(r2, want)


def test_vector_operand_gather_refuses_bad_indices_and_reads_any_strides(backend):
    a = make((6, 5), 12, "coalesced", seed=15)
    for x in (np.arange(1.0, 7.0)[:, None], np.arange(1.0, 7.0)[::-1][:, None], np.arange(1.0, 11.0)[::2]):
        r = backend.get(backend.put(a) / backend.put(np.ascontiguousarray(x) if backend.device != "cpu" else x))
        assert isinstance(r, COO)
        same(r, dense(a) / x)
    for bad in ([[0, 6], [1, 1]], [[0, -1], [1, 1]]):
        b = COO(bad, np.ones(2), (6, 5), check=False)
        with pytest.raises(IndexError, match="out of bounds for dimension 0"):
            b / np.arange(1.0, 7.0)[:, None]


@pytest.mark.parametrize("bad", [[[0, 1], [1, 7]], [[0, 1], [1, -1]], [[0, 9], [1, 1]]])
def test_rows_the_dense_operand_is_broadcast_along_are_still_checked(backend, bad):
    # a dense operand broadcast along an axis reads no index there, but the COO's index on that
    # axis must still lie in the shape: an array built with check=False is refused, never computed
    b = backend.put(COO(bad, np.ones(2), (6, 5), check=False))
    for x in (np.arange(1.0, 7.0)[:, None], np.arange(1.0, 6.0), np.ones((1, 5)) * 2, np.ones((6, 1)) * 3):
        for f in (np.true_divide, np.multiply, np.subtract):
            with pytest.raises(IndexError, match="out of bounds"):
                r = f(b, backend.put(x))
                backend.get(r)  # (a GPU reports at the next synchronising call)
                coosparse.check_device_errors()
