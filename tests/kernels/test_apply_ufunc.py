"""The elementwise engine's function on the values (``apply_ufunc``): a NumPy ufunc of many elements
runs in parts on the kernel threads, with the bits, the dtypes, the errors and the warnings of one
call, compared against NumPy's own call on the same arrays."""
import threading
import warnings

import numpy as np
import pytest

import coosparse
from coosparse._kernels.numba import layer

M = 300_001  # entries: above the parallel size, not a multiple of the parts' alignment


@pytest.fixture
def parts(monkeypatch):
    """The number of parts of each call that ran in parts (a list that grows per call)."""
    seen = []
    run = layer._run_parts

    def spy(fn, nparts, nthreads, *args):
        seen.append(nparts)
        return run(fn, nparts, nthreads, *args)

    monkeypatch.setattr(layer, "_run_parts", spy)
    return seen


def _values(dtype, shape=(M,), seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-1000 if np.dtype(dtype).kind == "i" else 0, 1000, shape).astype(dtype)
    v = (rng.standard_normal(shape) * 50).astype(dtype)
    if np.dtype(dtype).kind == "c":
        v = v + 1j * (rng.standard_normal(shape) * 50).astype(dtype)
    # special values spread through every part
    v.reshape(-1)[::9973] = np.nan
    v.reshape(-1)[5::7919] = np.inf
    v.reshape(-1)[7::6007] = -0.0
    return v


def _same_bits(got, want):
    got, want = (got if isinstance(got, tuple) else (got,)), (want if isinstance(want, tuple) else (want,))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(np.ascontiguousarray(g).view(np.uint8), np.ascontiguousarray(w).view(np.uint8))


UNARY = [np.sqrt, np.exp, np.log1p, np.sin, np.tanh, np.arctan, np.cbrt, np.negative, np.absolute, np.isnan,
         np.signbit, np.floor, np.rint, np.reciprocal]


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
@pytest.mark.parametrize("f", UNARY, ids=lambda f: f.__name__)
def test_unary_ufuncs_give_one_calls_bits(f, dtype, parts):
    if np.dtype(dtype).kind == "c" and f in (np.signbit, np.floor, np.cbrt, np.rint):
        pytest.skip("not defined for complex")
    v = _values(dtype)[1:]  # an odd start: the parts' base is not aligned either
    with np.errstate(all="ignore"):
        _same_bits(layer.apply_ufunc(f, [v], {}), f(v))
    assert parts and parts[-1] > 1


@pytest.mark.parametrize("f", [np.add, np.multiply, np.true_divide, np.power, np.arctan2, np.maximum, np.fmin,
                               np.greater, np.logical_and, np.hypot, np.remainder, np.copysign],
                         ids=lambda f: f.__name__)
def test_binary_ufuncs_with_arrays_and_constants(f, parts):
    a, b = _values("float64", seed=1), _values("float64", seed=2)
    with np.errstate(all="ignore"):
        _same_bits(layer.apply_ufunc(f, [a, b], {}), f(a, b))
        _same_bits(layer.apply_ufunc(f, [a, 2.5], {}), f(a, 2.5))
        _same_bits(layer.apply_ufunc(f, [np.float32(3), a], {}), f(np.float32(3), a))
    assert len(parts) == 3


def test_integer_and_bool_items():
    i, j = _values("int32", seed=3), _values("int64", seed=4)
    _same_bits(layer.apply_ufunc(np.add, [i, j], {}), np.add(i, j))
    _same_bits(layer.apply_ufunc(np.left_shift, [i, 3], {}), np.left_shift(i, 3))
    nz = np.where(j == 0, 1, j)
    _same_bits(layer.apply_ufunc(np.floor_divide, [i, nz], {}), np.floor_divide(i, nz))
    b = _values("bool")
    _same_bits(layer.apply_ufunc(np.logical_xor, [b, b[::-1].copy()], {}), np.logical_xor(b, b[::-1]))
    # NumPy's rules for a Python integer beside int8 items: the same error from the parts' call
    with pytest.raises(OverflowError):
        layer.apply_ufunc(np.add, [i.astype(np.int8), 300], {})


def test_rows_of_values_and_broadcast_constants(parts):
    v = _values("float64", shape=(M // 4, 4))
    row = np.array([[1.0, -2.0, 0.5, 3.0]])
    col = np.arange(4.0)
    _same_bits(layer.apply_ufunc(np.multiply, [v, row], {}), v * row)
    _same_bits(layer.apply_ufunc(np.subtract, [col, v], {}), col - v)
    assert parts and parts[-1] > 1


def test_several_outputs_keywords_and_a_given_out(parts):
    v = _values("float64")
    with np.errstate(all="ignore"):
        _same_bits(layer.apply_ufunc(np.modf, [v], {}), np.modf(v))
        _same_bits(layer.apply_ufunc(np.divmod, [v, 7.0], {}), np.divmod(v, 7.0))
        _same_bits(layer.apply_ufunc(np.frexp, [v], {}), np.frexp(v))
        _same_bits(layer.apply_ufunc(np.sqrt, [v], {"dtype": np.float32, "casting": "unsafe"}),
                   np.sqrt(v, dtype=np.float32, casting="unsafe"))
        out = np.empty_like(v)
        got = layer.apply_ufunc(np.exp, [v], {"out": out})
        assert got is out
        _same_bits(out, np.exp(v))
    assert len(parts) == 5


def test_one_call_where_parts_do_not_apply(parts):
    v = _values("float64")
    small = v[:1000]
    _same_bits(layer.apply_ufunc(np.sqrt, [np.abs(small)], {}), np.sqrt(np.abs(small)))
    mask = v > 0
    out = np.zeros_like(v)
    layer.apply_ufunc(np.sqrt, [v], {"where": mask, "out": out})
    want = np.zeros_like(v)
    np.sqrt(v, where=mask, out=want)
    _same_bits(out, want)
    objs = np.arange(M, dtype=object)
    assert layer.apply_ufunc(np.add, [objs, 1], {})[-1] == M
    _same_bits(layer.apply_ufunc(np.add, [3.0, 4.0], {}), np.add(3.0, 4.0))
    assert parts == []  # none of these went in parts


def test_errstate_and_warnings_hold_in_every_part(monkeypatch):
    threads = []

    def on_other_threads(fn, nparts, nthreads, *args):
        # every part on a thread of its own (a pool thread may otherwise take none of them)
        for t in range(nparts):
            err = []

            def run(t=t):
                try:
                    fn(t, nparts, *args)
                except BaseException as e:  # noqa: BLE001 - handed to the caller, as run_parts does
                    err.append(e)

            th = threading.Thread(target=run)
            th.start()
            th.join()
            threads.append(th)
            if err:
                raise err[0]

    monkeypatch.setattr(layer, "_run_parts", on_other_threads)
    v = np.ones(M)
    v[-1] = 0.0  # in the last part
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            layer.apply_ufunc(np.true_divide, [1.0, v], {})
    with np.errstate(divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isinf(layer.apply_ufunc(np.true_divide, [1.0, v], {})[-1])
    with pytest.warns(RuntimeWarning, match="divide"):
        layer.apply_ufunc(np.true_divide, [1.0, v], {})
    with pytest.raises(ValueError, match="negative integer powers"):
        layer.apply_ufunc(np.power, [np.full(M, 2), np.where(np.arange(M) == M - 1, -1, 1)], {})
    assert len(threads) > 4


@pytest.mark.parametrize("f", [np.sqrt, np.expm1, np.negative], ids=lambda f: f.__name__)
def test_through_the_engine(f, backend):
    # on the CPU in parts, on the (emulated) GPU in one call: the same bits as NumPy on the values
    a = coosparse.random((2000, 3000), nnz=M, seed=5).coalesce()
    with np.errstate(all="ignore"):
        got = backend.get(f(backend.put(a)))
        want = f(a.to_dense())
    assert isinstance(got, coosparse.COO) and got.nnz == a.nnz
    _same_bits(got.to_dense(), want)
    hybrid = coosparse.COO(a.indices[:1, :M // 4], _values("float64", shape=(M // 4, 4)), (2000, 4),
                           check=False).coalesce()  # rows of four values, summed where rows repeat
    row = np.array([1.0, -2.0, 0.5, 3.0])
    with np.errstate(all="ignore"):
        got = backend.get(np.multiply(backend.put(hybrid), backend.put(row)))
    _same_bits(got.values, hybrid.values * row)  # (the stored rows: an unstored one reads 0 * -2 as +0)
