"""NumPy ufunc methods on COO arrays (``np.maximum.reduce(a, dtype=...)``, ...): NumPy's answers or TypeError."""
import warnings

import numpy as np
import pytest

from coosparse import COO

DTYPES = [np.int64, np.uint64, np.int8, np.float32, np.float64, np.bool_]


def _operand(backend, kind="f"):
    # integer targets get an int64 operand: float -> integer casts of NaN or negatives are undefined in C
    x = np.array([[1.5, 1.5, 0.0, -7.0], [-1.0, 2.0, np.nan, 0.0], [0.0, 0.0, 0.0, -0.5]])
    if kind in "iu":
        x = np.array([[300, 1, 0, -7], [-1, 2, 3, 0], [0, 0, 0, -200]])
    idx = np.nonzero(x)
    return x, backend.put(COO(np.array(idx), x[idx], x.shape))


@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum, np.fmax, np.fmin])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, None])
def test_min_max_reduce_casts_the_input_to_dtype(backend, ufunc, dtype, axis):
    # NumPy casts the operand to dtype, then reduces: max of [-1.0, 2.0] as uint64 is 2**64 - 1, and
    # fmax as float32 still skips NaN
    x, a = _operand(backend, np.dtype(dtype).kind)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        exp = ufunc.reduce(x, axis=axis, dtype=dtype)
        r = backend.get(ufunc.reduce(a, axis=axis, dtype=dtype))
    assert r.dtype == exp.dtype
    np.testing.assert_array_equal(r.to_dense(), exp)


@pytest.mark.parametrize("ufunc", [np.logical_and, np.logical_or])
def test_logical_reduce_dtype(backend, ufunc):
    x, a = _operand(backend)
    np.testing.assert_array_equal(backend.get(ufunc.reduce(a, axis=1, dtype=bool)).to_dense(),
                                  ufunc.reduce(x, axis=1, dtype=bool))
    for dt in (np.int64, np.float64):
        with pytest.raises(TypeError):
            ufunc.reduce(x, axis=1, dtype=dt)
        with pytest.raises(TypeError, match="dtype"):
            ufunc.reduce(a, axis=1, dtype=dt)


@pytest.mark.parametrize("call", [
    lambda x, **kw: np.add.reduce(x, **kw), lambda x, **kw: np.multiply.reduce(x, **kw),
    lambda x, **kw: np.sum(x, **kw), lambda x, **kw: np.prod(x, **kw),
])
@pytest.mark.parametrize("dtype, initial", [(np.int8, 300), (np.uint8, -1), (np.int8, 100), (np.int16, -(2**15))])
def test_sum_and_prod_initial_is_converted_to_dtype_as_numpy(backend, call, dtype, initial):
    # NumPy converts initial to the reduction's dtype with its errors: 300 does not fit int8 (never wrapped to 44)
    x = np.array([[1, 0, 2], [0, 3, 0]], dtype=np.int64)
    a = backend.put(COO(np.array(np.nonzero(x)), x[np.nonzero(x)], x.shape))
    for axis in (0, None):
        try:
            want = call(x, axis=axis, dtype=dtype, initial=initial)
        except OverflowError:
            with pytest.raises(OverflowError):
                call(a, axis=axis, dtype=dtype, initial=initial)
            continue
        got = backend.get(call(a, axis=axis, dtype=dtype, initial=initial))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.to_dense(), want)


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.subtract])
def test_accumulate_takes_a_one_tuple_axis(backend, ufunc):
    x, a = _operand(backend)
    np.testing.assert_array_equal(backend.get(ufunc.accumulate(a, axis=(1,))).to_dense(), ufunc.accumulate(x, axis=(1,)))
    for axis in ((0, 1), ()):
        with pytest.raises(ValueError):
            ufunc.accumulate(x, axis=axis)
        with pytest.raises(ValueError, match="multiple axes"):
            ufunc.accumulate(a, axis=axis)
