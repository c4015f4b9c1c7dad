"""scipy.sparse arrays and matrices as operands of the products and of kron (SPEC 12): converted to COO
without densifying, the result compared with scipy's own (or NumPy's on the dense meanings)."""
import numpy as np
import pytest

import coosparse
from coosparse import COO
from operands import dense, make

sp = pytest.importorskip("scipy.sparse")

FORMATS = ["csr_array", "csc_array", "coo_array", "csr_matrix", "coo_matrix", "dok_array", "lil_array"]


def scipy_of(name, d):
    return getattr(sp, name)(d)


@pytest.mark.parametrize("fmt", FORMATS)
def test_products_with_scipy_operands(fmt):
    a = make((6, 5), 12, "none", seed=1)
    d = np.random.default_rng(2).standard_normal((5, 4)) * (np.random.default_rng(3).random((5, 4)) < 0.4)
    m = scipy_of(fmt, d)
    want = dense(a) @ d
    for r in (a @ m, coosparse.matmul(a, m), np.matmul(a, m), coosparse.dot(a, m), np.dot(a, m),
              coosparse.tensordot(a, m, axes=1), np.tensordot(a, m, axes=1), a.dot(m)):
        assert isinstance(r, COO)
        np.testing.assert_allclose(r.to_dense(), want, atol=1e-12)
    # scipy on the left, through coosparse's functions (scipy's own operator densifies, see below)
    left = scipy_of(fmt, d.T)
    for r in (coosparse.matmul(left, a.T), np.matmul(left, a.T), coosparse.dot(left, a.T),
              coosparse.tensordot(left, a.T, axes=1)):
        assert isinstance(r, COO)
        np.testing.assert_allclose(r.to_dense(), d.T @ dense(a).T, atol=1e-12)
    np.testing.assert_allclose(coosparse.vecdot(a, scipy_of(fmt, dense(a))).to_dense(),
                               np.sum(dense(a) * dense(a), axis=-1))


def test_eye_array_operand():
    a = make((6, 6), 10, "coalesced", seed=4)
    r = a @ sp.eye_array(6)
    assert isinstance(r, COO)
    np.testing.assert_array_equal(r.to_dense(), dense(a))


def test_scipy_left_operator_is_scipys():
    """``csr @ a`` runs scipy's operator first, which asks for a dense array: refused (TypeError),
    never a silent densification (the migration page names coosparse.matmul)."""
    a = make((4, 4), 5, "coalesced", seed=5)
    with pytest.raises(TypeError, match="dense"):
        sp.csr_array(np.eye(4)) @ a


@pytest.mark.parametrize("a_scipy, b_scipy", [(True, True), (True, False), (False, True)])
def test_kron_with_scipy_operands(a_scipy, b_scipy):
    a = make((3, 4), 6, "coalesced", seed=6)
    b = make((5, 2), 4, "none", seed=7)
    x = a.to_scipy("csr") if a_scipy else a
    y = b.coalesce().to_scipy("csc") if b_scipy else b
    r = coosparse.kron(x, y)
    assert isinstance(r, COO)
    np.testing.assert_array_equal(r.to_dense(), np.kron(dense(a), dense(b)))
    if a_scipy and b_scipy:
        np.testing.assert_array_equal(r.to_dense(), sp.kron(x, y).toarray())
    np.testing.assert_array_equal(np.kron(x, b).to_dense(), np.kron(dense(a), dense(b)))  # NumPy's function


def test_elementwise_with_scipy_operands_still_sparse():
    a = make((4, 5), 6, "coalesced", seed=8)
    m = sp.random_array((4, 5), density=0.3, random_state=np.random.default_rng(9), format="csr")
    for r, want in ((a + m, dense(a) + m.toarray()), (m + a, m.toarray() + dense(a)), (a * m, dense(a) * m.toarray())):
        assert isinstance(r, COO)
        np.testing.assert_allclose(r.to_dense(), want)


FUNCTIONS = {
    "transpose": (lambda x: coosparse.transpose(x), lambda d: d.T),
    "reshape": (lambda x: coosparse.reshape(x, (-1,)), lambda d: d.reshape(-1)),
    "expand_dims": (lambda x: coosparse.expand_dims(x, axis=0), lambda d: d[None]),
    "moveaxis": (lambda x: coosparse.moveaxis(x, 0, 1), lambda d: np.moveaxis(d, 0, 1)),
    "sort": (lambda x: coosparse.sort(x, axis=1), lambda d: np.sort(d, axis=1)),
    "take": (lambda x: coosparse.take(x, np.array([2, 0]), axis=0), lambda d: np.take(d, [2, 0], axis=0)),
    "coalesce": (lambda x: coosparse.coalesce(x), lambda d: d),
    "to_dense": (lambda x: coosparse.to_dense(x), lambda d: d),
    "sum": (lambda x: coosparse.sum(x, axis=0), lambda d: d.sum(axis=0)),
    "max": (lambda x: coosparse.max(x, axis=1), lambda d: d.max(axis=1)),
    "sparse_mask": (lambda x: coosparse.sparse_mask(np.full(x.shape, 2.0), x), lambda d: np.where(d != 0, 2.0, 0.0)),
    "unique_values": (lambda x: coosparse.unique_values(x), lambda d: np.unique(d)),
    "nonzero": (lambda x: np.stack(coosparse.nonzero(x)), lambda d: np.stack(np.nonzero(d))),
    "flip": (lambda x: coosparse.flip(x, axis=0), lambda d: d[::-1]),
    "topk": (lambda x: coosparse.topk(x, 1, axis=1), None),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("kind", ["scipy", "pydata"])
def test_functions_take_foreign_sparse_arrays(name, kind):
    """SPEC 12: other libraries' sparse arrays are taken wherever a COO operand is."""
    d = np.array([[0.0, 2.0, 0.0, 1.0], [3.0, 0.0, 0.0, 0.0], [0.0, 5.0, 4.0, 0.0]])
    if kind == "scipy":
        x = sp.csr_array(d)
    else:
        x = pytest.importorskip("sparse").COO.from_numpy(d)
    f, ref = FUNCTIONS[name]
    got = f(x)
    want = ref(d) if ref is not None else dense(coosparse.topk(COO.from_numpy(d), 1, axis=1))
    np.testing.assert_array_equal(dense(got) if isinstance(got, COO) else np.asarray(got), want)
