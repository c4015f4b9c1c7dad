"""NumPy's elementwise functions that are not ufuncs (``np.clip``, ...) and array methods on COO arrays:
NumPy's answers, dtypes included (``coosparse.clip`` is the Array API's and keeps ``x``'s dtype)."""
import numpy as np
import pytest

import coosparse
from coosparse import COO


def _coo(x, fill):
    idx = np.nonzero(x != fill)
    return COO(np.array(idx), x[idx], x.shape, fill_value=fill)


@pytest.mark.parametrize("dtype, lo, hi", [
    (np.float16, np.float32(0.5), np.float32(1.0)), (np.float16, np.array(0.5, np.float32), None),
    (np.float32, np.float64(0.1), None), (np.int8, np.int16(-2), np.int16(3)), (np.int8, 1.5, None),
    (np.float32, None, np.float64(2.5)),
])
def test_np_clip_promotes_as_numpy(backend, dtype, lo, hi):
    x = np.array([[0, 3, -4], [2, 0, 7]]).astype(dtype)
    a = backend.put(_coo(x, x.dtype.type(0)))
    want = np.clip(x, lo, hi)
    for got in (np.clip(a, lo, hi), a.clip(lo, hi)):
        got = backend.get(got)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.to_dense(), want)
    assert coosparse.clip(a, lo, hi).dtype == (dtype if np.dtype(dtype).kind == want.dtype.kind else want.dtype)


def test_np_clip_dense_bound_promotes_as_numpy(backend):
    x = np.array([[0, 3, -4], [2, 0, 7]], dtype=np.float32)
    lo = np.array([[0.1, 0.2, 0.3], [1e-50, -1.0, 2.0]])
    a = backend.put(_coo(x, np.float32(0)))
    want = np.clip(x, lo, None)
    got = backend.get(np.clip(a, backend.put(coosparse.asarray(lo)), None))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.to_dense(), want)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint64, np.int64])
@pytest.mark.parametrize("lo, hi", [(-1, None), (None, 2**64), (-(2**70), 5), (2, 2**65), (None, None)])
def test_np_clip_python_int_bounds_beyond_the_dtype(backend, dtype, lo, hi):
    # NumPy: a Python int bound beyond the dtype's range bounds nothing (NEP 50, no promotion)
    x = np.array([0, 5, 120, 3], dtype=dtype)
    a = backend.put(_coo(x, x.dtype.type(3)))
    want = np.clip(x, lo, hi)
    got = backend.get(np.clip(a, lo, hi))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.to_dense(), want)


@pytest.mark.parametrize("lo, hi", [(300, None), (None, -1)])
def test_np_clip_python_int_bounds_that_cannot_be_cast_raise(lo, hi):
    x = np.array([0, 5, 250], dtype=np.uint8)
    with pytest.raises(OverflowError):
        np.clip(x, lo, hi)
    with pytest.raises(OverflowError):
        np.clip(coosparse.asarray(x), lo, hi)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.float32, np.complex64])
def test_conj_method_keeps_the_dtype(dtype):
    x = np.array([0, 1, 1, 0]).astype(dtype)
    a = coosparse.asarray(x)
    got, want = a.conj(), x.conj()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.to_dense(), want)


@pytest.mark.parametrize("args, kw", [
    ((0, None), {"min": 1}), ((0, 2), {"max": 1}), ((None, None), {"min": 1}), ((0,), {}), ((), {"a_min": 0, "max": 1}),
    ((), {"min": 1}), ((), {"max": 1.0}), ((0.5, None), {}), ((), {"a_min": 0, "a_max": 1}),
])
def test_np_clip_argument_forms_as_numpy(args, kw):
    # NumPy's rules for a_min/a_max beside the min=/max= keywords: the same answer or the same exception
    x = np.array([0.0, 1.5, 3.0])
    a = coosparse.asarray(x)
    try:
        want = np.clip(x, *args, **kw)
    except (TypeError, ValueError) as e:
        with pytest.raises(type(e)):
            np.clip(a, *args, **kw)
        return
    np.testing.assert_array_equal(np.clip(a, *args, **kw).to_dense(), want)


def test_np_isclose_with_array_tolerances(backend):
    # rtol and atol broadcast against the operands, as in NumPy
    x = np.array([[0.0, 1.5, -2.5], [np.nan, 0.0, 3.7]])
    a = backend.put(_coo(x, np.float64(0)))
    rtol, atol = np.array([0.1, 0.2, 0.3]), np.array([[0.0], [1.0]])
    for args in ((1.5, rtol), (1.5, 1e-5, atol), (1.5, rtol, atol), (x[::-1], rtol, atol, True)):
        want = np.isclose(x, *args)
        got = backend.get(np.isclose(a, *[backend.put(v) if isinstance(v, np.ndarray) else v for v in args]))
        np.testing.assert_array_equal(got.to_dense() if isinstance(got, COO) else got, want)
    assert np.allclose(a, backend.put(x), backend.put(rtol), equal_nan=True)


@pytest.mark.parametrize("imag, tol", [(1e-15, 100), (1e-10, 100), (1e-10, 1e-9), (0.0, 100), (0.5, 1.0)])
@pytest.mark.parametrize("fill", [0j, 1 + 1e-14j, 2 + 1j])
def test_np_real_if_close(backend, imag, tol, fill):
    x = np.array([1 + imag * 1j, fill, 3 - 2 * imag * 1j, fill], dtype=np.complex128)
    a = backend.put(_coo(x, np.complex128(fill)))
    want = np.real_if_close(x, tol=tol)
    got = backend.get(np.real_if_close(a, tol=tol))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.to_dense(), want)
    r = coosparse.asarray(np.array([1.0, 0.0]))
    assert np.real_if_close(r) is r


@pytest.mark.parametrize("dx, dlo, dhi", [
    (np.int8, np.uint8, np.float16), (np.uint8, np.int8, np.float16), (np.float16, np.int8, np.uint8),
    (np.int16, np.uint16, np.float32), (np.uint8, np.float16, np.int8),
])
def test_np_clip_promotes_the_three_operands_at_once(backend, dx, dlo, dhi):
    # minimum(maximum(x, lo), hi) in two steps widens int8 with uint8 to int16 and then with float16 to
    # float32, where NumPy's clip promotes all three to float16
    x = np.array([[0, 3, -4 if np.dtype(dx).kind != "u" else 4], [2, 0, 7]]).astype(dx)
    lo = np.array([[1, 0, 2], [5, 0, 1]]).astype(dlo)
    hi = np.array([[4, 2, 3], [9, 1, 6]]).astype(dhi)
    a = backend.put(_coo(x, x.dtype.type(0)))
    for l, h in ((lo, hi), (hi, lo)):
        want = np.clip(x, l, h)
        got = backend.get(np.clip(a, backend.put(_coo(l, l.dtype.type(0))), backend.put(h)))
        got = got.to_dense() if isinstance(got, COO) else got
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
