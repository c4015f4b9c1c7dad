"""NumPy's search functions on a COO answer as NumPy's: np.argsort/np.argpartition of a 0-d array,
np.searchsorted of a scalar, np.take's bool and float indices (the Array API's functions keep their
own rules)."""
import numpy as np
import pytest

import coosparse
from manip_helpers import assert_coo, from_dense_fill, same_or_raises


def _zero_d():
    """(dense, COO) 0-d pairs: stored, unstored, a non-zero fill stored and unstored, NaN."""
    yield np.array(5.0), coosparse.asarray(np.array(5.0))
    yield np.array(0.0), coosparse.asarray(np.array(0.0))
    yield np.array(3.0), from_dense_fill(np.array(3.0), 7.0)
    yield np.array(7.0), from_dense_fill(np.array(7.0), 7.0)
    yield np.array(np.nan), coosparse.asarray(np.array(np.nan))
    yield np.array(2, dtype=np.int32), coosparse.asarray(np.array(2, dtype=np.int32))


@pytest.mark.parametrize("axis", [None, 0, -1, 1, -2])
def test_np_argsort_of_a_0d_array(axis, backend):
    for d, a in _zero_d():
        x = backend.put(a)
        r = same_or_raises(lambda: np.argsort(x, axis=axis), lambda: np.argsort(d, axis=axis))
        if r is not None:
            got = backend.get(r[0])
            assert isinstance(got, np.ndarray) and got.dtype == np.int64
            np.testing.assert_array_equal(got, r[1])
            assert got.shape == r[1].shape == (1,)


@pytest.mark.parametrize("kth", [0, -1, 1, -2, [0], [0, -1], True, 0.0])
@pytest.mark.parametrize("axis", [None, 0, -1, 1])
def test_np_argpartition_of_a_0d_array(kth, axis, backend):
    for d, a in _zero_d():
        x = backend.put(a)
        r = same_or_raises(lambda: np.argpartition(x, kth, axis=axis), lambda: np.argpartition(d, kth, axis=axis))
        if r is not None:
            got = backend.get(r[0])
            assert isinstance(got, np.ndarray) and got.dtype == np.int64
            np.testing.assert_array_equal(got, r[1])


def test_array_api_argsort_of_a_0d_array_still_needs_an_axis():
    # the Array API's argsort keeps x's shape: a 0-d array has no axis -1 to sort along
    with pytest.raises(np.exceptions.AxisError):
        coosparse.argsort(coosparse.asarray(np.array(5.0)))


def _vectors():
    """(dense, COO) pairs: fill 0, a non-zero fill, a 2-D hybrid, empty."""
    x = np.array([1.0, 0.0, 2.0, 0.0])
    f = np.array([7.0, 3.0, 7.0])
    m = np.arange(6.0).reshape(2, 3) % 4
    yield x, from_dense_fill(x)
    yield f, from_dense_fill(f, 7.0)
    yield m, from_dense_fill(m, sparse_ndim=1)
    yield np.zeros(0), from_dense_fill(np.zeros(0))


INDICES = [np.array([True, False]), [True, False], True, np.False_, np.array(True), np.array([], dtype=bool),
           np.array([1.0]), np.array(1.0), np.array([], dtype=float), np.array([1 + 0j]), [1.0], 1.0, 1.7,
           np.float64(1), [1.0, -1.5], [], "1", None, np.nan, 2**63, np.array([1], dtype=np.uint64),
           np.array([1, 0], dtype=np.uint8)]


@pytest.mark.parametrize("indices", INDICES, ids=repr)
def test_np_take_reads_indices_as_numpy(indices, backend):
    for d, a in _vectors():
        x = backend.put(a)
        for axis in (None, 0, -1):
            for mode in ("raise", "wrap", "clip"):
                r = same_or_raises(lambda: np.take(x, indices, axis=axis, mode=mode),
                          lambda: np.take(d, indices, axis=axis, mode=mode))
                if r is None:
                    continue
                got, want = backend.get(r[0]), r[1]
                if np.ndim(want) == 0:  # one element: a scalar, as NumPy's
                    assert not isinstance(got, coosparse.COO) and got == want
                else:
                    assert_coo(got, want)


def test_np_take_device_and_coo_indices(backend):
    d, a = next(_vectors())
    x = backend.put(a)
    mask = np.array([True, False, True])
    assert_coo(backend.get(np.take(x, backend.put(mask))), np.take(d, mask))
    assert_coo(backend.get(np.take(x, coosparse.asarray(mask))), np.take(d, mask))
    with pytest.raises(TypeError):
        np.take(x, backend.put(np.array([1.0])))


def test_array_api_take_takes_integers_only():
    a = coosparse.asarray(np.array([1.0, 2.0]))
    for idx in (np.array([True, False]), np.array([1.0])):
        with pytest.raises(TypeError, match="integers"):
            coosparse.take(a, idx)


def test_np_searchsorted_of_a_scalar_is_a_scalar(backend):
    # NumPy gives an intp scalar for a scalar (or 0-d) value; on a device the answer is a 0-d device
    # array, as CuPy's searchsorted gives. coosparse.searchsorted (the Array API's) gives shape ()
    for d, a in ((np.array([1, 3, 5, 7]), coosparse.asarray(np.array([1, 3, 5, 7]))),
                 (np.array([0, 0, 3, 5]), coosparse.asarray(np.array([0, 0, 3, 5]))),
                 (np.array([7.0, 7.0, 9.0]), from_dense_fill(np.array([7.0, 7.0, 9.0]), 7.0)),
                 (np.zeros(0), coosparse.asarray(np.zeros(0)))):
        x = backend.put(a)
        for v in (4, 4.0, np.int64(4), np.array(4), True, 8):
            for side in ("left", "right"):
                want = np.searchsorted(d, v, side=side)
                for got in (np.searchsorted(x, v, side=side), coosparse.searchsorted(x, v, side=side)):
                    assert got.shape == () and got.dtype == np.int64
                    if backend.device == "cpu":
                        assert type(got) is type(want)
                    assert int(backend.get(got)) == want
