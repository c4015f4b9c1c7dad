"""The pydata/sparse bridge (SPEC 12): conversions both ways and pydata arrays as operands,
checked against pydata's own dense meaning."""
import numpy as np
import pytest

import coosparse
from coosparse import COO
from operands import FLAGS, check_flags, dense, make

sparse = pytest.importorskip("sparse")


def pyd(shape=(6, 5), density=0.3, fill_value=None, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return sparse.random(shape, density=density, random_state=rng, fill_value=fill_value).astype(dtype)


@pytest.mark.parametrize("fill", [None, 1.5, np.nan])
@pytest.mark.parametrize("shape", [(6, 5), (3, 4, 2), (7,), ()])
def test_from_pydata_keeps_meaning_fill_and_flags(shape, fill):
    p = pyd(shape, fill_value=fill) if shape else sparse.COO.from_numpy(np.array(2.5))
    for a in (coosparse.COO.from_pydata(p), coosparse.asarray(p), coosparse.interop.pydata.from_pydata(p)):
        assert isinstance(a, COO) and a.shape == p.shape and a.dtype == p.dtype
        np.testing.assert_array_equal(a.to_dense(), p.todense())
        np.testing.assert_array_equal(np.asarray(a.fill_value), np.asarray(p.fill_value))
        assert a.is_coalesced  # pydata's COO is sorted and duplicate-free; verified
        check_flags(a)


@pytest.mark.parametrize("fmt", ["gcxs", "dok"])
def test_other_pydata_formats(fmt):
    p = pyd((5, 4), seed=1).asformat(fmt)
    a = coosparse.asarray(p)
    np.testing.assert_array_equal(a.to_dense(), p.todense())


@pytest.mark.parametrize("value", [0.0, 2.5])
@pytest.mark.parametrize("fmt", ["gcxs", "dok"])
def test_zero_dim_pydata_formats(fmt, value):
    """pydata's GCXS of a 0-d array becomes a COO with empty float64 coords: no index, not an error."""
    p = sparse.COO.from_numpy(np.array(value)).asformat(fmt)
    a = coosparse.asarray(p)
    assert a.shape == () and a.indices.dtype == np.int64
    np.testing.assert_array_equal(a.to_dense(), p.todense())
    np.testing.assert_array_equal(np.asarray(a.fill_value), np.asarray(p.fill_value))


def test_a_lying_pydata_array_comes_back_without_flags():
    p = sparse.COO(np.array([[2, 0]]), np.array([1.0, 2.0]), shape=(3,), sorted=True, has_duplicates=False)
    a = coosparse.COO.from_pydata(p)
    assert not a.is_sorted
    np.testing.assert_array_equal(a.to_dense(), [2.0, 0.0, 1.0])


@pytest.mark.parametrize("flags", list(FLAGS))
@pytest.mark.parametrize("fill", [0.0, -1.0, np.nan])
def test_to_pydata(flags, fill):
    a = make((6, 5), 12, flags, seed=2)
    a = COO(a.indices, a.values.astype(float), a.shape, sorted=a.is_sorted, unique=a.is_unique, fill_value=fill)
    p = a.to_pydata()
    assert isinstance(p, sparse.COO)
    np.testing.assert_array_equal(p.todense(), a.to_dense())
    np.testing.assert_array_equal(np.asarray(p.fill_value), np.asarray(a.fill_value))
    back = coosparse.asarray(p)
    np.testing.assert_array_equal(back.to_dense(), a.to_dense())
    if a.is_coalesced:  # no copy for an array pydata can take as it is
        assert np.shares_memory(p.data, a.values)
    assert a.values.flags.writeable is False  # the COO itself stays read-only


def test_to_pydata_of_a_hybrid_and_errors():
    h = make((4, 3, 2), 5, "none", sparse_ndim=2, seed=3)
    p = h.to_pydata()
    assert p.shape == h.shape
    np.testing.assert_array_equal(p.todense(), h.to_dense())
    with pytest.raises(TypeError, match="pydata"):
        coosparse.COO.from_pydata(np.ones(3))
    with pytest.raises(TypeError, match="COO"):
        coosparse.interop.pydata.to_pydata(np.ones(3))


def test_mixed_operations():
    a = make((6, 5), 10, "coalesced", seed=4)
    p = pyd((6, 5), seed=5)
    pd = p.todense()
    for r, want in ((a + p, dense(a) + pd), (p + a, pd + dense(a)), (a * p, dense(a) * pd),
                    (a - p, dense(a) - pd), (np.maximum(a, p), np.maximum(dense(a), pd)),
                    (a == p, dense(a) == pd), (p > a, pd > dense(a))):
        assert isinstance(r, COO)
        np.testing.assert_array_equal(r.to_dense(), want)
    r = a @ p.T
    assert isinstance(r, COO)
    np.testing.assert_allclose(r.to_dense(), dense(a) @ pd.T)
    np.testing.assert_allclose(coosparse.matmul(p, a.T).to_dense(), pd @ dense(a).T)
    np.testing.assert_allclose(coosparse.tensordot(a, p, axes=([0, 1], [0, 1])).to_dense(),
                               np.tensordot(dense(a), pd, axes=([0, 1], [0, 1])))
    c = a > 0.5
    for r in (coosparse.where(c, a, p), np.where(c, a, p)):
        assert isinstance(r, COO)
        np.testing.assert_array_equal(r.to_dense(), np.where(dense(c), dense(a), pd))
    r = np.concatenate([a, p])
    assert isinstance(r, COO)
    np.testing.assert_array_equal(r.to_dense(), np.concatenate([dense(a), pd]))
    np.testing.assert_array_equal(coosparse.kron(p, a).to_dense(), np.kron(pd, dense(a)))


def test_mixed_operations_with_a_pydata_fill():
    a = make((4, 3), 5, "coalesced", seed=6)
    p = pyd((4, 3), fill_value=2.0, seed=7)
    r = a + p
    assert isinstance(r, COO) and r.fill_value == 2.0
    np.testing.assert_array_equal(r.to_dense(), dense(a) + p.todense())
