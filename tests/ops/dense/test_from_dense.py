"""from_dense: the non-zero entries of a dense array, sorted and unique."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import coosparse
from coosparse import SUPPORTED_DTYPES
from reference import dense_of


@given(
    hnp.arrays(
        dtype=st.sampled_from(SUPPORTED_DTYPES),
        shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4),
        elements={"allow_nan": False},
    ),
    st.data(),
)
def test_from_dense_round_trip(x, data):
    sn = data.draw(st.integers(0, x.ndim))
    a = coosparse.from_dense(x, sparse_ndim=sn)
    assert a.is_coalesced and a.sparse_ndim == sn and a.shape == x.shape and a.dtype == x.dtype
    if sn:
        np.testing.assert_array_equal(dense_of(a), x)
    else:  # one position: at most one entry, holding all of x
        assert a.nnz <= 1 and a.indices.shape == (0, a.nnz)
        np.testing.assert_array_equal(a.values[0] if a.nnz else np.zeros_like(x), x)
    # an entry is stored exactly when its dense block has a non-zero
    blocks = x.reshape(x.shape[:sn] + (int(np.prod(x.shape[sn:])),))
    assert a.nnz == int(np.count_nonzero((blocks != 0).any(axis=-1)))


def test_from_dense_examples():
    a = coosparse.from_dense(np.array([[0, 5], [7, 0]]))
    assert a.indices.tolist() == [[0, 1], [1, 0]] and a.values.tolist() == [5, 7]
    h = coosparse.from_dense(np.array([[0, 0], [1, 0], [0, 2]]), sparse_ndim=1)
    assert h.indices.tolist() == [[1, 2]] and h.values.tolist() == [[1, 0], [0, 2]]
    z = coosparse.from_dense(np.float64(3.0))
    assert z.shape == () and z.nnz == 1
    x = np.ones((2, 2))
    s = coosparse.from_dense(x, sparse_ndim=0)
    assert not np.shares_memory(s.values, x)  # the result never shares memory with the input
    e = coosparse.from_dense(np.zeros((3, 0, 2)))
    assert e.nnz == 0 and e.shape == (3, 0, 2)
    assert coosparse.from_dense([[0, 1.5]]).values.tolist() == [1.5]  # array_like


def test_from_dense_bad_input():
    with pytest.raises(ValueError, match="sparse_ndim"):
        coosparse.from_dense(np.ones((2, 2)), sparse_ndim=3)
    with pytest.raises(TypeError, match="not supported"):
        coosparse.from_dense(np.array(["a"]))
    with pytest.raises(TypeError, match="dense array"):
        coosparse.from_dense(coosparse.random((3,), nnz=1))


def test_from_dense_with_a_complex_nan_fill_compares_part_by_part(backend):
    # a fill of nan+0j stands for exactly that element: nan+infj and nan+1j differ from it (a NaN in
    # either part is not "the fill"), nan+0j itself (any NaN payload) does not
    nan = np.nan
    x = np.array([[complex(nan, np.inf), complex(nan, 0)], [2j, complex(nan, 1)], [complex(nan, 0), 0]])
    for sn in (1, 2):
        a = backend.get(coosparse.from_dense(backend.put(x), sparse_ndim=sn, fill_value=complex(nan, 0))).to("cpu")
        assert a.is_coalesced
        got = a.to_dense()
        np.testing.assert_array_equal(got.real, x.real)
        np.testing.assert_array_equal(got.imag, x.imag)
        stored = {tuple(i) for i in a.indices.T.tolist()}
        assert stored == ({(0, 0), (1, 0), (1, 1), (2, 1)} if sn == 2 else {(0,), (1,), (2,)})
    r = coosparse.from_dense(np.array([1.0, nan, 2.0]), fill_value=nan)  # a real NaN fill: NaNs unstored
    assert r.indices.tolist() == [[0, 2]]


@pytest.mark.parametrize("fill", [-0.0, complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0), 0.0])
def test_from_dense_signed_zeros_with_a_fill_of_negative_zero(fill, backend):
    # signed_zeros=True promises x's bits back: beside a fill of -0.0 it is the +0.0 elements that
    # differ from the fill (and must be stored), not the -0.0 ones
    x = np.array([[0.0, -0.0, 1.5], [-0.0, 0.0, -2.0]])
    if isinstance(fill, complex):
        x = x + 1j * np.array([[-0.0, 0.0, 0.0], [0.0, -0.0, 3.0]])
    for sn in (1, 2):
        a = backend.get(coosparse.from_dense(backend.put(x), sparse_ndim=sn, signed_zeros=True,
                                             fill_value=fill)).to("cpu")
        assert a.is_coalesced
        got = a.to_dense()
        for g, w in ((got.real, x.real), (got.imag, x.imag)):
            np.testing.assert_array_equal(g, w)
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


@pytest.mark.parametrize("fill", [complex(-0.0, np.nan), complex(1.0, 0.0), complex(np.nan, -0.0), complex(2.0, -0.0)])
def test_from_dense_signed_zeros_beside_a_fill_with_a_zero_part(fill, backend):
    # a non-zero complex fill may have a zero part: an element that equals it but for that zero's
    # sign differs from it bit for bit, and signed_zeros=True must store it
    z = np.array([fill, complex(fill.real, -fill.imag) if fill.imag == 0 else complex(-fill.real, fill.imag),
                  complex(3.0, 0.0), fill])
    for sn in (None, 1):
        a = backend.get(coosparse.from_dense(backend.put(z), sparse_ndim=sn, signed_zeros=True,
                                             fill_value=fill)).to("cpu")
        got = a.to_dense()
        for g, w in ((got.real, z.real), (got.imag, z.imag)):
            np.testing.assert_array_equal(g, w)
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w))
