"""NumPy's search functions on a COO answer as NumPy's: np.argsort/np.argpartition of a 0-d array,
np.searchsorted of a scalar, np.take's bool and float indices (the Array API's functions keep their
own rules)."""
import numpy as np
import pytest

import coosparse
from manip_helpers import assert_coo, from_dense_fill


def _same(ours, numpys):
    """(ours, NumPy's) where NumPy answers; where it raises, ours raises the same type and None."""
    try:
        want = numpys()
    except Exception as e:  # noqa: BLE001 -- the type is the point
        with pytest.raises(type(e)):
            ours()
        return None
    return ours(), want


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
        r = _same(lambda: np.argsort(x, axis=axis), lambda: np.argsort(d, axis=axis))
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
        r = _same(lambda: np.argpartition(x, kth, axis=axis), lambda: np.argpartition(d, kth, axis=axis))
        if r is not None:
            got = backend.get(r[0])
            assert isinstance(got, np.ndarray) and got.dtype == np.int64
            np.testing.assert_array_equal(got, r[1])


def test_array_api_argsort_of_a_0d_array_still_needs_an_axis():
    # the Array API's argsort keeps x's shape: a 0-d array has no axis -1 to sort along
    with pytest.raises(np.exceptions.AxisError):
        coosparse.argsort(coosparse.asarray(np.array(5.0)))
