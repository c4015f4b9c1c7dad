"""coosparse as an Array API namespace: dtypes, constants, inspection, data-type functions,
creation functions, conversions of 0-d arrays, and NumPy's result_type/can_cast on COO.
(The conformance suite itself runs from the Makefile: `make array-api-tests`.)
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coosparse
from coosparse import COO

DTYPE_NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float32", "float64", "complex64", "complex128"]


def test_namespace_and_version():
    a = coosparse.asarray(np.eye(2))
    assert a.__array_namespace__() is coosparse
    assert a.__array_namespace__(api_version="2023.12") is coosparse
    with pytest.raises(ValueError, match="2024.12"):
        a.__array_namespace__(api_version="2099.12")
    assert coosparse.__array_api_version__ == "2024.12"


@pytest.mark.parametrize("name", DTYPE_NAMES + ["float16"])
def test_dtype_objects_compare_with_coo_dtypes(name):
    dt = getattr(coosparse, name)
    assert np.dtype(dt) == np.dtype(name)
    a = coosparse.zeros(3, dtype=dt)
    assert a.dtype == dt and a.dtype == np.dtype(name)


def test_constants():
    assert coosparse.e == math.e and coosparse.pi == math.pi
    assert math.isinf(coosparse.inf) and math.isnan(coosparse.nan)
    assert coosparse.newaxis is None


def test_inspection():
    info = coosparse.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] is True and caps["data-dependent shapes"] is True
    assert caps["max dimensions"] is None
    assert info.default_device() == "cpu" and info.devices()[0] == "cpu"
    d = info.default_dtypes()
    assert d["real floating"] == np.float64 and d["complex floating"] == np.complex128
    assert d["integral"] == np.int64 and d["indexing"] == np.int64
    assert list(info.dtypes()) == DTYPE_NAMES
    assert list(info.dtypes(kind="integral")) == DTYPE_NAMES[1:9]
    assert list(info.dtypes(kind=("bool", "complex floating"))) == ["bool", "complex64", "complex128"]
    with pytest.raises(ValueError, match="device"):
        info.dtypes(device="tpu")


def test_data_type_functions():
    assert coosparse.can_cast(coosparse.int8, coosparse.float32)
    assert not coosparse.can_cast(coosparse.float64, coosparse.float32)
    assert coosparse.can_cast(coosparse.asarray(np.array([1], np.uint8)), coosparse.int16)
    fi = coosparse.finfo(coosparse.complex64)
    assert fi.dtype == np.float32 and isinstance(fi.eps, float) and fi.bits == 32
    assert isinstance(coosparse.finfo(coosparse.asarray(np.array([1.0]))).max, float)
    ii = coosparse.iinfo(coosparse.asarray(np.array([1], np.int16)))
    assert ii.max == 32767 and isinstance(ii.min, int)
    with pytest.raises(ValueError):
        coosparse.finfo(coosparse.int8)
    assert coosparse.isdtype(coosparse.uint8, "unsigned integer")
    assert coosparse.isdtype(coosparse.uint8, ("bool", "integral"))
    assert not coosparse.isdtype(coosparse.float32, "integral")
    assert coosparse.isdtype(coosparse.float32, coosparse.float32)
    with pytest.raises(ValueError, match="kind"):
        coosparse.isdtype(coosparse.float32, "floaty")
    a = coosparse.asarray(np.array([1], np.int8))
    assert coosparse.result_type(a, coosparse.int16, 1.0) == np.result_type(np.int8, np.int16, 1.0)
    assert np.result_type(a, np.float32) == np.float32  # through __array_function__
    assert np.can_cast(a, np.int16)
    b = coosparse.astype(a, coosparse.float64)
    assert b.dtype == np.float64 and b.indices is not a.indices
    assert coosparse.astype(a, coosparse.int8, copy=False) is a


def test_may_share_memory():
    a = coosparse.asarray(np.eye(3))
    assert np.may_share_memory(a, a)
    assert np.may_share_memory(a, a.values)
    assert not np.may_share_memory(a, a.copy())


# ---------------------------------------------------------------------------------- creation
@pytest.mark.parametrize("f, fill", [(coosparse.zeros, 0), (coosparse.empty, 0), (coosparse.ones, 1)])
def test_zeros_ones_empty_store_nothing(f, fill):
    a = f((2, 3))
    assert a.nnz == 0 and a.dtype == np.float64 and a.fill_value == fill and a.is_coalesced
    np.testing.assert_array_equal(a.to_dense(), np.full((2, 3), fill, dtype=np.float64))
    b = f(4, dtype=coosparse.int32)
    assert b.shape == (4,) and b.dtype == np.int32


@pytest.mark.parametrize("value, dtype", [(True, np.bool_), (3, np.int64), (2.5, np.float64), (1 + 2j, np.complex128)])
def test_full_infers_the_dtype_and_stores_nothing(value, dtype):
    a = coosparse.full((2, 2), value)
    assert a.nnz == 0 and a.dtype == dtype and a.fill_value == value
    np.testing.assert_array_equal(a.to_dense(), np.full((2, 2), value))
    with pytest.raises(OverflowError):
        coosparse.full(2, 300, dtype=coosparse.uint8)


@pytest.mark.parametrize("value, dtype, exc", [
    (float("nan"), np.int64, ValueError), (1 + 2j, np.float64, TypeError), (1 + 2j, np.int8, TypeError),
    (float("inf"), np.int64, OverflowError), (1e300, np.int64, OverflowError),
])
def test_full_refusals_name_the_value_and_dtype(value, dtype, exc):
    # Python values that do not convert are refused, each with its own exception type, naming full
    with pytest.raises(exc, match=r"full: fill_value .* dtype") as info:
        coosparse.full(2, value, dtype=dtype)
    assert "uint64 holds" not in str(info.value)  # the uint64 hint is for integers in [2**63, 2**64)
    with pytest.raises(OverflowError, match="uint64 holds"):
        coosparse.full(2, 2**63)


def test_like_functions_keep_shape_dtype_and_hybrid_split():
    x = COO([[0, 2]], np.ones((2, 3), np.float32), (4, 3))  # one sparse, one dense dimension
    for f, fill in [(coosparse.zeros_like, 0), (coosparse.empty_like, 0), (coosparse.ones_like, 1)]:
        r = f(x)
        assert r.shape == x.shape and r.dtype == np.float32 and r.sparse_ndim == 1 and r.fill_value == fill
    r = coosparse.full_like(x, 7, dtype=coosparse.int16)
    assert r.dtype == np.int16 and r.fill_value == 7 and r.nnz == 0
    np.testing.assert_array_equal(r.to_dense(), np.full((4, 3), 7, np.int16))


@pytest.mark.parametrize("device", [b"cpu", 0, object()])
def test_like_functions_refuse_a_device_that_is_not_a_device_name(device):
    # an explicit device is validated as every creation function validates it, never dropped
    x = COO([[0, 2]], np.ones(2), (4,))
    for f in (coosparse.zeros_like, coosparse.empty_like, coosparse.ones_like, lambda x, **kw: coosparse.full_like(x, 2, **kw)):
        with pytest.raises(ValueError, match="device"):
            f(x, device=device)
    with pytest.raises(ValueError, match="device"):
        coosparse.zeros(3, device=device)


@pytest.mark.parametrize("n, m, k", [(3, None, 0), (3, 5, 1), (4, 2, -1), (2, 3, 5), (0, 2, 0), (3, 3, -3)])
def test_eye(n, m, k):
    a = coosparse.eye(n, m, k=k, dtype=coosparse.int8)
    assert a.is_coalesced and a.dtype == np.int8
    np.testing.assert_array_equal(a.to_dense(), np.eye(n, m, k=k, dtype=np.int8))


def test_arange_linspace_meshgrid():
    np.testing.assert_array_equal(coosparse.arange(5).to_dense(), np.arange(5))
    np.testing.assert_array_equal(coosparse.arange(1, 7, 2, dtype=coosparse.float32).to_dense(),
                                  np.arange(1, 7, 2, dtype=np.float32))
    np.testing.assert_array_equal(coosparse.arange(2.0, -1.0, -0.5).to_dense(), np.arange(2.0, -1.0, -0.5))
    np.testing.assert_array_equal(coosparse.linspace(0, 1, 5, endpoint=False).to_dense(),
                                  np.linspace(0, 1, 5, endpoint=False))
    assert coosparse.linspace(0, 1j, 3).dtype == np.complex128
    x, y = np.array([1, 0, 3]), np.array([0, 5])
    for indexing in ("xy", "ij"):
        got = coosparse.meshgrid(coosparse.asarray(x), coosparse.asarray(y), indexing=indexing)
        for g, e in zip(got, np.meshgrid(x, y, indexing=indexing)):
            np.testing.assert_array_equal(g.to_dense(), e)


@pytest.mark.parametrize("start, stop", [
    (np.complex64(0), 1), (0, np.complex64(1 + 1j)), (np.array(0), np.array(1 + 1j)), (0.0, np.complex128(2j)),
    (np.array([0.5 + 0.5j])[0], 3.0),
])
def test_linspace_complex_endpoints_of_any_kind_give_a_complex_result(start, stop):
    # a NumPy complex scalar or 0-d array is complex as Python's complex is (Array API: the default complex dtype)
    r = coosparse.linspace(start, stop, 5)
    assert r.dtype == np.complex128
    np.testing.assert_array_equal(r.to_dense(), np.linspace(start, stop, 5, dtype=np.complex128))
    r = coosparse.linspace(np.float32(1), np.float32(2), 3)
    assert r.dtype == np.float64


def test_arange_linspace_meshgrid_keep_negative_zeros():
    def bits(x):
        return np.signbit(x).tolist(), x.tolist()

    assert bits(coosparse.arange(-0.0, 1.0).to_dense()) == bits(np.arange(-0.0, 1.0))
    assert bits(coosparse.linspace(-0.0, -0.0, 3).to_dense()) == bits(np.linspace(-0.0, -0.0, 3))
    x, y = np.array([1.0, -0.0]), np.array([np.inf, 0.0])
    for g, e in zip(coosparse.meshgrid(coosparse.asarray(x), coosparse.asarray(y)), np.meshgrid(x, y)):
        assert bits(g.to_dense()) == bits(e)


def test_from_dlpack():
    x = np.array([[0.0, 1.5], [2.0, 0.0]])
    a = coosparse.from_dlpack(x)
    np.testing.assert_array_equal(a.to_dense(), x)
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(coosparse.from_dlpack(torch.tensor(x)).to_dense(), x)


# ---------------------------------------------------------------------------------- asarray
def test_asarray_from_python_values():
    a = coosparse.asarray([[0, 1], [2, 0]])
    assert a.dtype == np.int64 and a.nnz == 2
    assert coosparse.asarray(2.5).shape == () and float(coosparse.asarray(2.5)) == 2.5
    assert coosparse.asarray(True).dtype == np.bool_
    assert coosparse.asarray(1j).dtype == np.complex128
    b = coosparse.asarray([0.1, 0.0], dtype=coosparse.float32)
    assert b.dtype == np.float32 and b.values[0] == np.float32(0.1)  # converted directly, not via float64 rounding twice
    with pytest.raises(OverflowError):
        coosparse.asarray([300], dtype=coosparse.uint8)


def test_asarray_copy_semantics():
    a = coosparse.asarray(np.eye(2))
    assert coosparse.asarray(a) is a and coosparse.asarray(a, copy=False) is a
    c = coosparse.asarray(a, copy=True)
    assert c is not a and not np.may_share_memory(c.values, a.values)
    assert coosparse.asarray(a, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="copy"):
        coosparse.asarray(a, dtype=np.float32, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        coosparse.asarray(np.eye(2), copy=False)
    x = np.array([1.0, 0.0, 2.0])
    b = coosparse.asarray(x, copy=True)
    x[0] = 5
    assert b.to_dense()[0] == 1.0


def test_asarray_from_scipy_and_torch():
    sp = pytest.importorskip("scipy.sparse")
    m = sp.random(5, 4, density=0.4, format="csr", random_state=0)
    np.testing.assert_array_equal(coosparse.asarray(m).to_dense(), m.toarray())
    torch = pytest.importorskip("torch")
    t = torch.tensor([[0.0, 1.0], [2.0, 0.0]])
    np.testing.assert_array_equal(coosparse.asarray(t).to_dense(), t.numpy())
    ts = t.to_sparse()
    a = coosparse.asarray(ts, dtype=np.float64)
    assert a.dtype == np.float64
    np.testing.assert_array_equal(a.to_dense(), t.numpy())


# ---------------------------------------------------------------------------------- 0-d conversions
def test_scalar_conversions():
    assert bool(coosparse.asarray(np.array(True))) is True
    assert bool(coosparse.zeros(())) is False
    assert int(coosparse.asarray(np.array(7, np.int8))) == 7
    assert float(coosparse.full((), 2.5)) == 2.5
    assert complex(coosparse.asarray(np.array(1 + 2j))) == 1 + 2j
    assert [10, 20, 30][coosparse.asarray(np.array(2))] == 30  # __index__
    with pytest.raises(TypeError, match="integer"):
        [1][coosparse.asarray(np.array(0.0))]
    dup = COO(np.zeros((0, 3), np.int64), np.array([1.0, 2.0, 3.0]), ())  # duplicates of the one element
    assert float(dup) == 6.0
    one = COO([[0], [0]], np.array([4.0]), (1, 1))
    assert float(one) == 4.0 and bool(one)
    with pytest.raises(ValueError, match="ambiguous"):
        bool(coosparse.asarray(np.eye(2)))
    with pytest.raises(TypeError, match="size-1"):
        float(coosparse.asarray(np.eye(2)))


def test_to_device():
    a = coosparse.asarray(np.eye(2))
    assert a.to_device("cpu") is a and a.device == "cpu"
    with pytest.raises(ValueError, match="stream"):
        a.to_device("cpu", stream=1)


@settings(max_examples=30)
@given(shape=st.lists(st.integers(0, 4), max_size=3).map(tuple),
       dtype=st.sampled_from([np.bool_, np.int8, np.uint16, np.int64, np.float32, np.complex128]),
       data=st.data())
def test_asarray_round_trips_dense(shape, dtype, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    x = (rng.integers(-2, 3, shape) * (rng.random(shape) < 0.5)).astype(dtype)
    a = coosparse.asarray(x)
    assert a.shape == x.shape and a.dtype == x.dtype and a.is_coalesced
    np.testing.assert_array_equal(a.to_dense(), x)
    if x.size:  # tolist() of an empty array loses its shape
        np.testing.assert_array_equal(coosparse.asarray(x.tolist(), dtype=dtype).to_dense(), x)
