"""Reductions (SPEC 9) against NumPy on the dense meaning: every op, axis form, keepdims,
dtype, fill (NaN included), flag state, duplicates, hybrid dims, both kernel layers.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coosparse
from coosparse import COO
from reference import assert_bits, dense_reference
from strategies import coo_parts

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


# ---------------------------------------------------------------------------------- helpers
def dense_with_fill(a):
    """Dense meaning of a COO with its fill (reference helpers only, no coosparse kernels)."""
    a = a.to("cpu")
    d = dense_reference(a.indices, a.values, a.shape)
    if a.fill_value != 0 or np.isnan(a.fill_value):
        stored = np.zeros(a.sparse_shape, dtype=bool)
        if a.nnz:
            stored[tuple(a.indices)] = True
        d[~stored] = a.fill_value
    return d


def check_flags(r):
    """A result's True flags are true (COO's own validation)."""
    r = r.to("cpu")
    COO(r.indices, r.values, r.shape, sorted=r.is_sorted, unique=r.is_unique, check=True)


_RTOL = {np.dtype(np.float16): 2e-2, np.dtype(np.float32): 2e-4, np.dtype(np.complex64): 2e-4}


def assert_matches(r, expected, d=None):
    assert isinstance(r, COO), type(r)
    check_flags(r)
    got = r.to("cpu").to_dense()
    exp = np.asarray(expected)
    assert got.shape == exp.shape, (got.shape, exp.shape)
    assert got.dtype == exp.dtype, (got.dtype, exp.dtype)
    if exp.dtype.kind in "fc":
        rtol = _RTOL.get(exp.dtype, 1e-9)
        scale = 1.0 if d is None or d.size == 0 else float(np.nanmax(np.abs(np.where(np.isfinite(d), d, 0)))) + 1
        n = 1 if d is None else max(d.size, 1)
        np.testing.assert_allclose(got, exp, rtol=rtol, atol=rtol * scale * n, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, exp)


FILLS = {
    "b": [False, True],
    "i": [0, 3, -1],
    "u": [0, 7],
    "f": [0.0, 1.5, -2.0, np.nan],
    "c": [0, 1 + 1j],
}


@st.composite
def coo_with_fill(draw, nan_values=False, max_sparse_ndim=3):
    indices, values, shape, s, u = draw(coo_parts(max_sparse_ndim=max_sparse_ndim))
    kind = values.dtype.kind
    if kind in "fc":
        # small values: products and sums stay far from overflow in every float dtype
        small = np.round(values.real * 2) / 8
        if kind == "c":
            small = small + 1j * np.round(values.imag * 2) / 8
        values = small.astype(values.dtype)
        if nan_values and values.size:
            rng = np.random.default_rng(draw(st.integers(0, 2**31)))
            values = values.copy()
            values[rng.random(values.shape) < 0.3] = np.nan
    fill = draw(st.sampled_from(FILLS[kind]))
    return COO(indices, values, shape, sorted=s, unique=u, fill_value=fill)


@st.composite
def axes_for(draw, ndim, single=False):
    if single:
        return draw(st.none() | st.integers(-ndim, ndim - 1)) if ndim else None
    choice = draw(st.integers(0, 3))
    if choice == 0 or ndim == 0:
        return None if choice == 0 else ()
    if choice == 1:
        return draw(st.integers(-ndim, ndim - 1))
    axes = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    return tuple(ax - ndim if draw(st.booleans()) else ax for ax in axes)


def run_both(ours, theirs):
    """Call NumPy; when it raises, ours must raise the same type. Returns (ours, theirs) or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exp = theirs()
    except (ValueError, TypeError) as e:
        with pytest.raises(type(e)):
            ours()
        return None
    return ours(), exp


# ---------------------------------------------------------------------------------- hypothesis vs NumPy
REDUCTIONS = ["sum", "prod", "max", "min", "mean", "var", "std", "any", "all", "count_nonzero"]
NAN_REDUCTIONS = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]


@pytest.fixture(params=["any-strategy", "no-table"])
def strategy(request, monkeypatch):
    """Small arrays take the dense-table route; "no-table" forces the sort route instead."""
    if request.param == "no-table":
        import coosparse.ops.reduce.grouping as red

        monkeypatch.setattr(red, "_by_key_fits", lambda bound, n: False)
    return request.param


@pytest.mark.parametrize("op", REDUCTIONS + NAN_REDUCTIONS)
@settings(max_examples=15)
@given(data=st.data())
def test_reduction_matches_numpy(backend, strategy, op, data):
    a = data.draw(coo_with_fill(nan_values=op.startswith("nan")), label="a")
    axis = data.draw(axes_for(a.ndim), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    d = dense_with_fill(a)
    if a.dtype.kind == "c" and op.replace("nan", "") in ("max", "min"):
        with pytest.raises(TypeError, match="complex"):
            getattr(coosparse, op)(backend.put(a), axis=axis, keepdims=keepdims)
        return
    if op in ("prod", "nanprod") and a.dtype == np.float16:
        return  # float16 products of a few dozen values overflow in NumPy's order or ours
    kw = {}
    if op in ("var", "std", "nanvar", "nanstd"):
        kw["correction"] = data.draw(st.sampled_from([0, 1]), label="correction")
    np_kw = {"ddof": kw["correction"]} if kw else {}
    res = run_both(lambda: getattr(coosparse, op)(backend.put(a), axis=axis, keepdims=keepdims, **kw),
                   lambda: getattr(np, op)(d, axis=axis, keepdims=keepdims, **np_kw))
    if res is None:
        return
    r, exp = res
    if op in ("mean", "nanmean") and a.dtype == np.float16:
        exp = np.asarray(exp).astype(np.float16)  # NumPy: float16 mean in float16
    if op in ("prod", "nanprod") and a.dtype.kind == "f" and np.isnan(exp).any():
        # NumPy's running product can overflow to inf before it meets a zero, and gives NaN; where no
        # element is NaN or infinite the exact product there is a zero (ours), signed by the factors
        finite = np.isfinite(d).all(axis=axis, keepdims=keepdims) if op == "prod" else ~np.isinf(d).any(
            axis=axis, keepdims=keepdims)
        negative = np.sum(np.signbit(d) & ~np.isnan(d), axis=axis, keepdims=keepdims) % 2 == 1
        exp = np.where(np.isnan(exp) & finite, np.where(negative, -0.0, 0.0).astype(exp.dtype), exp)
    if op in ("prod", "nanprod") and a.dtype.kind == "c" and not np.isfinite(exp).all():
        # complex products that overflow: NaN or inf parts depend on the order of the products
        got = backend.get(r).to_dense()
        assert (np.isfinite(got) == np.isfinite(exp)).all()
        exp = np.where(np.isfinite(exp), exp, got)
    assert_matches(backend.get(r), exp, d)


@pytest.mark.parametrize("op", ["argmax", "argmin", "nanargmax", "nanargmin"])
@settings(max_examples=25)
@given(data=st.data())
def test_arg_reduction_matches_numpy(backend, op, data):
    a = data.draw(coo_with_fill(nan_values=True), label="a")
    axis = data.draw(axes_for(a.ndim, single=True), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    d = dense_with_fill(a)
    if a.dtype.kind == "c":
        with pytest.raises(TypeError, match="complex"):
            getattr(coosparse, op)(backend.put(a), axis=axis)
        return
    res = run_both(lambda: getattr(coosparse, op)(backend.put(a), axis=axis, keepdims=keepdims),
                   lambda: getattr(np, op)(d, axis=axis, keepdims=keepdims))
    if res is not None:
        assert_matches(backend.get(res[0]), res[1])


@pytest.mark.parametrize("op", ["cumulative_sum", "cumulative_prod"])
@settings(max_examples=20)
@given(data=st.data())
def test_cumulative_matches_numpy(backend, op, data):
    a = data.draw(coo_with_fill(), label="a")
    if a.ndim == 0:
        return
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1), label="axis")
    include_initial = data.draw(st.booleans(), label="include_initial")
    if op == "cumulative_prod" and a.dtype == np.float16:
        return
    d = dense_with_fill(a)
    r = getattr(coosparse, op)(backend.put(a), axis=axis, include_initial=include_initial)
    exp = getattr(np, op)(d, axis=axis, include_initial=include_initial)
    assert_matches(backend.get(r), exp, d)


@settings(max_examples=20)
@given(data=st.data())
def test_diff_matches_numpy(backend, data):
    a = data.draw(coo_with_fill(), label="a")
    if a.ndim == 0 or a.dtype == np.bool_:
        return
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1), label="axis")
    n = data.draw(st.integers(0, 2), label="n")
    d = dense_with_fill(a)
    r = coosparse.diff(backend.put(a), axis=axis, n=n)
    assert_matches(backend.get(r), np.diff(d, n=n, axis=axis), d)


# ---------------------------------------------------------------------------------- determinism
@pytest.mark.parametrize("op", ["sum", "prod", "max", "mean", "var", "argmax"])
@pytest.mark.parametrize("axis", [0, 1, (0, 2), None])
def test_same_bits_twice_and_on_both_layers(op, axis):
    from coosparse._kernels.backend import use_cpu_backend

    rng = np.random.default_rng(5)
    n = 20000
    idx = np.stack([rng.integers(0, s, n) for s in (40, 50, 30)])
    a = COO(idx, rng.standard_normal(n).astype(np.float32) * 1e3, (40, 50, 30), fill_value=0.5)
    if op == "argmax" and isinstance(axis, tuple):
        axis = 2
    f = getattr(coosparse, op)
    r1 = f(a, axis=axis)
    r2 = f(a, axis=axis)
    with use_cpu_backend("cuda-emulated"):
        r3 = f(a, axis=axis)  # the CUDA layer's rows (reduce_by_key for the small key spaces here)
    results = [r2, r3]
    from coosparse._kernels.cuda import emulated
    import emulation as strict

    if emulated.available():  # on a device the sort strategies replace the dense table: same bits
        with strict.allow_transfers():
            results.append(strict.to_host(f(strict.to_device(a), axis=axis)))
        coosparse.check_device_errors()
    for r in results:
        np.testing.assert_array_equal(r1.indices, r.indices)
        assert r1.values.tobytes() == r.values.tobytes()
        assert r1.fill_value.tobytes() == r.fill_value.tobytes()


def test_sum_order_is_stored_order():
    # float sums are sequential in stored order: 1e16 + 1 - 1e16 differs from 1e16 - 1e16 + 1
    a = COO([[0, 0, 0, 1, 1, 1], [0, 1, 2, 0, 1, 2]], np.array([1e16, 1.0, -1e16, 1e16, -1e16, 1.0]), (2, 3))
    np.testing.assert_array_equal(a.sum(axis=1).to_dense(), [0.0, 1.0])
    b = COO([[0, 0, 0]], np.array([1e16, 1.0, -1e16]), (1,))  # duplicates, one output index
    assert float(b.sum()) == 0.0


# ---------------------------------------------------------------------------------- results: flags, fills, shapes
def test_sum_of_sorted_rows_skips_the_sort_and_is_coalesced():
    a = coosparse.random((50, 40), nnz=300, seed=1).coalesce()
    r = a.sum(axis=1)
    assert r.is_sorted and r.is_unique and r.sparse_ndim == 1
    np.testing.assert_allclose(r.to_dense(), a.to_dense().sum(axis=1))


def test_dense_axis_reduction_keeps_indices_and_flags():
    a = COO([[2, 0, 1]], np.arange(12.0).reshape(3, 4), (3, 4))  # hybrid: one sparse, one dense axis
    r = a.sum(axis=1)
    assert r.indices is a.indices and not r.is_sorted and r.is_unique is a.is_unique
    np.testing.assert_array_equal(r.to_dense(), a.to_dense().sum(axis=1))


def test_result_fill_is_the_reduction_of_the_fill():
    a = COO([[0], [1]], np.array([5.0]), (3, 4), fill_value=2.0)
    assert a.sum(axis=1).fill_value == 8.0  # 2 * 4
    assert a.prod(axis=1).fill_value == 16.0
    assert a.max(axis=1).fill_value == 2.0
    assert a.mean(axis=1).fill_value == 2.0
    assert a.var(axis=1).fill_value == 0.0
    assert coosparse.count_nonzero(a, axis=1).fill_value == 4
    assert a.argmax(axis=1).fill_value == 0
    np.testing.assert_array_equal(a.sum(axis=1).to_dense(), [11.0, 8.0, 8.0])


@pytest.mark.parametrize("dtype, n", [(np.float32, 300), (np.float64, 2000)])
@pytest.mark.parametrize("fill", [1.5, -2.0, -1.5])
def test_product_with_an_overflowing_fill_power_and_a_stored_zero_is_a_signed_zero(backend, dtype, fill, n):
    # row 0: +0 and 1 stored, row 1: -0 stored, row 2: 3 stored, row 3 nothing; fill ** (n - 1 or 2) overflows
    a = COO([[0, 0, 1, 2], [0, 1, 0, 0]], np.array([0.0, 1.0, -0.0, 3.0], dtype), (4, n), fill_value=fill)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "invalid value" warning for the zeros
        got = backend.get(backend.put(a).prod(axis=1)).to("cpu").to_dense()
    # the sign of fill ** k is negative for a negative fill and odd k
    assert got[0] == 0 and np.signbit(got[0]) == (fill < 0 and (n - 2) % 2 == 1)
    assert got[1] == 0 and np.signbit(got[1]) == (not (fill < 0 and (n - 1) % 2 == 1))
    assert np.isinf(got[2]) and np.isinf(got[3])
    assert np.signbit(got[2]) == (fill < 0 and (n - 1) % 2 == 1)
    assert np.signbit(got[3]) == (fill < 0 and n % 2 == 1)


def test_product_with_an_infinite_fill_and_a_stored_zero_stays_nan(backend):
    a = COO([[0], [0]], np.array([0.0]), (1, 3), fill_value=np.inf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = backend.get(backend.put(a).prod(axis=1)).to("cpu").to_dense()
        assert np.isnan(got[0]) and np.isnan(np.prod(a.to_dense(), axis=1)[0])


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("fill", [0.0, 2.0])
def test_initial_on_every_layer(backend, op, axis, fill):
    # row 2 stores nothing (the result's fill, combined with initial on the host on every device)
    a = COO([[0, 0, 1, 1, 1, 1], [0, 2, 0, 1, 2, 3]], np.array([1.0, -4.0, 3.0, 0.5, -1.0, 5.0]), (3, 4),
            fill_value=fill)
    for initial in (-3.0, 1.5, 9.0):
        got = backend.get(getattr(np, op)(backend.put(a), axis=axis, initial=initial)).to("cpu")
        assert_matches(got, getattr(np, op)(a.to_dense(), axis=axis, initial=initial))


@pytest.mark.parametrize("fill", [complex(np.nan, -1e308), complex(1.0, np.nan)], ids=["nan+x", "x+nan"])
def test_cumulative_with_a_complex_nan_fill_keeps_the_other_part(backend, fill):
    # every element of the dense result has the fill's NaN part, but the other part grows (overflows):
    # those elements differ from the fill and are stored, where a NaN in either part counted as the fill
    a = COO([[1], [2]], np.array([2 + 3j]), (3, 4), fill_value=fill)
    for name in ("cumulative_sum", "cumulative_prod"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = backend.get(getattr(coosparse, name)(backend.put(a), axis=1)).to("cpu")
            want = getattr(np, name)(a.to_dense(), axis=1)
        check_flags(got)
        assert_bits(got.to_dense(), want)  # (part by part: assert_array_equal takes any NaN part as NaN)


def test_cumulative_product_of_a_negative_zero_fill_alternates_in_sign(backend):
    # along a dense axis: row 1 stores nothing, its cumulative product is -0, 0, -0, 0 (not the fill -0.0)
    a = COO([[0]], np.array([[1.0, 2.0, 3.0, 4.0]]), (2, 4), fill_value=-0.0)
    got = backend.get(coosparse.cumulative_prod(backend.put(a), axis=1)).to("cpu")
    check_flags(got)
    assert_bits(got.to_dense(), np.cumulative_prod(a.to_dense(), axis=1))
    got = backend.get(coosparse.cumulative_sum(backend.put(a), axis=1)).to("cpu")
    assert_bits(got.to_dense(), np.cumulative_sum(a.to_dense(), axis=1))


@pytest.mark.parametrize("func", [np.nancumsum, np.nancumprod])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_nan_cumulative_sees_the_summed_duplicates(backend, func, axis):
    # (1, 1) stores inf and -inf (a NaN element, left out), (1, 2) NaN and 2 (NaN, left out), (0, 2) 1 and 2;
    # replacing the NaN entries before summing the duplicates gave NaN for the first and 2 for the second
    a = COO([[1, 1, 1, 1, 0, 0], [1, 1, 2, 2, 2, 2]], np.array([np.inf, -np.inf, np.nan, 2.0, 1.0, 2.0]), (2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = backend.get(func(backend.put(a), axis=axis)).to("cpu")
        assert_matches(got, func(a.to_dense(), axis=axis))


@pytest.mark.parametrize("func", [np.nanvar, np.nanstd, np.var])
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("ddof", [1, 2])
def test_no_degrees_of_freedom(backend, func, axis, ddof):
    # NumPy's nanvar/nanstd give NaN where n - ddof <= 0 (var gives d / 0: inf, or NaN for d == 0)
    x = np.array([[1.0, 2.0], [3.0, np.nan], [5.0, 5.0]])
    a = COO([[0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1]], x.ravel(), (3, 2), fill_value=np.nan)
    i = np.array([[1, 2], [3, 4], [5, 5]])  # integers: NumPy's nanvar is var (inf)
    b = COO([[0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1]], i.ravel(), (3, 2))
    for y, d in ((a, x), (b, i)):
        for kw in ({}, {"dtype": np.float32}):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = backend.get(func(backend.put(y), axis=axis, ddof=ddof, **kw)).to("cpu")
                assert_matches(got, func(d, axis=axis, ddof=ddof, **kw))


@pytest.mark.parametrize("func", [np.nanmax, np.nanmin])
@pytest.mark.parametrize("initial", [np.nan, 2.0, -7.0])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nan_extremes_with_initial_are_fmax_reductions(backend, func, initial, axis):
    # NumPy's nanmax(initial=v) is fmax.reduce: an all-NaN slice gives v (no warning), a NaN initial is
    # left out; the all-NaN rule overrode v with NaN and maximum() let a NaN initial win
    a = COO([[0, 0, 1], [0, 2, 0]], np.array([np.nan, 5.0, np.nan]), (3, 3), fill_value=np.nan)
    b = COO([[0, 0, 1], [0, 2, 0]], np.array([np.nan, 5.0, -1.0]), (3, 3), fill_value=0.5)
    for x in (a, b):
        with warnings.catch_warnings(record=True) as w_np:
            warnings.simplefilter("always")
            want = func(x.to_dense(), axis=axis, initial=initial)
        with warnings.catch_warnings(record=True) as w_ours:
            warnings.simplefilter("always")
            got = backend.get(func(backend.put(x), axis=axis, initial=initial)).to("cpu")
        assert_matches(got, want)
        assert [str(m.message) for m in w_ours] == [str(m.message) for m in w_np]


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("initial", [np.float16(-np.inf), np.nan, 2**70, 1.5, -1, np.float64(2.7)], ids=str)
@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.float16])
def test_initial_is_converted_as_numpy_converts_it(op, initial, dtype):
    # an infinite or NaN initial for an integer reduction is NumPy's OverflowError / ValueError, not
    # a wrapped garbage value; a fraction truncates; -1 for an unsigned one is NumPy's OverflowError
    a = COO([[0, 1]], np.array([3, 2], dtype), (4,), fill_value=1)
    try:
        with np.errstate(all="ignore"):
            want = getattr(np, op)(a.to_dense(), initial=initial)
    except (OverflowError, ValueError) as e:
        with pytest.raises(type(e)):
            getattr(np, op)(a, initial=initial)
        return
    assert_matches(getattr(np, op)(a, initial=initial), want)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint64, np.float16, np.float64])
@pytest.mark.parametrize("shape, indices", [((3, 0), [[0, 1]]), ((3, 2, 0), [[0, 2], [1, 1]])])
def test_an_empty_dense_axis_reduces_to_the_identity(backend, dtype, shape, indices):
    # hybrid arrays whose dense block has no elements: any/all, and max/min with initial=, answer
    # as NumPy does; max/min without initial= raise NumPy's ValueError
    a = COO(indices, np.zeros((2, 0), dtype), shape, fill_value=1)
    x = np.ones(shape, dtype)
    nd = len(shape)
    cases = [("any", {}), ("all", {}), ("any", {"axis": -1}), ("all", {"axis": (0, nd - 1), "keepdims": True}),
             ("any", {"axis": 0}), ("max", {"initial": 0}), ("min", {"axis": -1, "initial": 1}),
             ("max", {"axis": (0, nd - 1), "initial": 1}), ("min", {"axis": 0, "initial": 0})]
    for op, kw in cases:
        got = backend.get(getattr(np, op)(backend.put(a), **kw)).to("cpu")
        assert_matches(got, getattr(np, op)(x, **kw))
    for op in ("max", "min"):
        with pytest.raises(ValueError):
            getattr(np, op)(backend.put(a), axis=-1)


def test_full_reduction_is_a_0d_coo():
    a = coosparse.asarray(np.eye(2))
    for f, v in [(coosparse.sum, 2.0), (coosparse.max, 1.0), (coosparse.min, 0.0), (coosparse.prod, 0.0),
                 (coosparse.mean, 0.5)]:
        r = f(a)
        assert isinstance(r, COO) and r.ndim == 0 and float(r) == v
    assert bool(coosparse.any(a)) and not bool(coosparse.all(a))
    assert coosparse.sum(a, keepdims=True).shape == (1, 1)
    assert coosparse.sum(a, axis=0).shape == (2,)
    empty = coosparse.zeros((3, 0))
    assert float(coosparse.sum(empty)) == 0.0 and coosparse.sum(empty).nnz == 0


def test_nan_fill_does_not_poison_complete_lines():
    # pydata regression: fill * 0 must be the identity when a line stores every position
    s = COO([[0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1]], np.array([0.586, 0.021, np.nan, 0.156, 0.363, 0.281]),
            (3, 2), fill_value=np.nan)
    x = s.to_dense()
    for op in ("sum", "mean", "prod", "max"):
        for axis in (None, 0, 1):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                np.testing.assert_allclose(getattr(s, op)(axis=axis).to_dense(), getattr(x, op)(axis=axis),
                                           equal_nan=True)


def test_errors():
    a = coosparse.asarray(np.array([[1.0, 2.0], [0.0, 3.0]]))
    with pytest.raises(np.exceptions.AxisError):
        a.sum(axis=2)
    with pytest.raises(ValueError, match="duplicate"):
        a.sum(axis=(0, 0))
    with pytest.raises(TypeError, match="out="):
        np.sum(a, out=np.zeros(2))
    with pytest.raises(TypeError, match="where="):
        np.sum(a, where=np.ones((2, 2), bool))
    with pytest.raises(ValueError, match="identity"):
        coosparse.max(coosparse.zeros((0, 3)), axis=0)
    with pytest.raises(ValueError, match="empty sequence"):
        coosparse.argmax(coosparse.zeros((0, 3)), axis=0)
    with pytest.raises(TypeError, match="complex"):
        coosparse.max(a.astype(np.complex128))
    with pytest.raises(TypeError, match="COO"):
        coosparse.sum(np.ones(3))
    with pytest.raises(ValueError, match="correction"):
        coosparse.var(a, correction=-1)
    with pytest.raises(ValueError, match="axis must be given"):
        coosparse.cumulative_sum(a)
    with pytest.raises(ValueError, match="All-NaN"):
        coosparse.nanargmax(coosparse.asarray(np.array([np.nan, np.nan])))


def test_numpy_warnings_are_kept():
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        coosparse.zeros((0, 2)).mean(axis=0)
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        coosparse.nanmax(coosparse.asarray(np.array([[np.nan, 1.0], [np.nan, 2.0]])), axis=0)
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        coosparse.var(coosparse.asarray(np.array([1.0, 2.0])), correction=2)


# ---------------------------------------------------------------------------------- wide shapes
def test_wide_shapes_stay_exact():
    n = 2**40
    a = COO([[5, 5, 2**39, 7], [3, n - 1, 0, 7]], np.array([1.0, 2.0, 3.0, -4.0]), (n, n))
    r = a.sum(axis=1)
    np.testing.assert_array_equal(r.indices, [[5, 7, 2**39]])
    np.testing.assert_array_equal(r.values, [3.0, -4.0, 3.0])
    r = a.max(axis=0)  # every column has implicit zeros
    np.testing.assert_array_equal(r.indices, [[0, 3, 7, n - 1]])
    np.testing.assert_array_equal(r.values, [3.0, 1.0, 0.0, 2.0])
    assert float(a.sum()) == 2.0 and float(a.min()) == -4.0 and float(a.max()) == 3.0
    b = COO(a.indices, np.array([1, 2, 3, 4]), (n, n), fill_value=1)
    assert int(b.sum()) == (n * n - 4 + 10) % 2**64 == 6  # int64 sums are modular, as NumPy's
    c = COO(a.indices, np.array([1, 3, 1, 1]), (n, n), fill_value=-1)
    assert int(c.prod()) == 3  # (-1) ** (n*n - 4), n*n even
    # a count of 2**80 elements does not fit int64: refused, not wrapped to 0 (the count over one axis fits)
    with pytest.raises(ValueError, match="count_nonzero.*does not fit int64"):
        coosparse.count_nonzero(b)
    with pytest.raises(ValueError, match="does not fit int64"):
        coosparse.count_nonzero(b, axis=(0, 1), keepdims=True)
    r = coosparse.count_nonzero(b, axis=1)
    assert r.fill_value == n and int(r.values[r.indices[0] == 5][0]) == n
    assert int(coosparse.count_nonzero(a)) == 4  # fill 0: only stored entries count
    with pytest.raises(ValueError, match="int64"):
        a.argmax()


def test_nan_statistics_of_wide_shapes_count_in_floats(backend):
    # 2**80 elements, most of them the fill 0.5, one NaN element (a duplicate pair): the counts of the
    # elements taking part wrapped in int64 (to 0), so nanmean was inf; they are float64 there
    n = 2**40
    a = backend.put(COO([[5, n - 1, 5], [7, 3, 7]], np.array([1.5, -2.0, np.nan]), (n, n), fill_value=0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no empty slice)
        assert float(backend.get(coosparse.nanmean(a)).to("cpu")) == 0.5
        np.testing.assert_allclose(float(backend.get(coosparse.nanvar(a)).to("cpu")), 2.5**2 / (n * n - 1))
        r = backend.get(coosparse.nanmean(a, axis=0)).to("cpu")
    np.testing.assert_array_equal(r.indices, [[3, 7]])
    np.testing.assert_allclose(r.values, [0.5 - 2.5 / n, 0.5])
    assert r.fill_value == 0.5


# ---------------------------------------------------------------------------------- NumPy's entry points
def test_numpy_functions_and_methods_reach_coosparse():
    x = np.array([[1.0, 0.0, -2.0], [0.0, 3.0, 0.0]])
    a = coosparse.asarray(x)
    for f in (np.sum, np.prod, np.max, np.amax, np.min, np.amin, np.mean, np.var, np.std, np.any, np.all,
              np.argmax, np.argmin, np.nansum, np.nanmax, np.nanmin, np.nanmean, np.nanvar, np.nanstd,
              np.nanprod, np.nanargmax, np.nanargmin):
        for axis in (None, 0, 1):
            np.testing.assert_allclose(f(a, axis=axis).to_dense(), f(x, axis=axis), err_msg=f.__name__)
    np.testing.assert_array_equal(np.count_nonzero(a, axis=0).to_dense(), np.count_nonzero(x, axis=0))
    np.testing.assert_allclose(np.var(a, ddof=1).to_dense(), np.var(x, ddof=1))
    np.testing.assert_allclose(np.std(a, axis=0, correction=1).to_dense(), np.std(x, axis=0, ddof=1))
    np.testing.assert_array_equal(np.cumsum(a).to_dense(), np.cumsum(x))  # axis None flattens
    np.testing.assert_array_equal(np.cumsum(a, axis=1).to_dense(), np.cumsum(x, axis=1))
    np.testing.assert_array_equal(np.cumprod(a, axis=0).to_dense(), np.cumprod(x, axis=0))
    np.testing.assert_array_equal(np.nancumsum(a, axis=0).to_dense(), np.nancumsum(x, axis=0))
    np.testing.assert_array_equal(np.cumulative_sum(a, axis=1).to_dense(), np.cumulative_sum(x, axis=1))
    np.testing.assert_array_equal(np.diff(a).to_dense(), np.diff(x))
    np.testing.assert_array_equal(np.diff(a, axis=0, prepend=0).to_dense(), np.diff(x, axis=0, prepend=0))
    np.testing.assert_array_equal(a.sum(axis=0, keepdims=True, initial=5.0).to_dense(),
                                  x.sum(axis=0, keepdims=True, initial=5.0))
    np.testing.assert_array_equal(a.max(axis=1, initial=2.0).to_dense(), x.max(axis=1, initial=2.0))
    np.testing.assert_array_equal(a.cumsum(axis=0).to_dense(), x.cumsum(axis=0))
    np.testing.assert_array_equal(a.argmax(axis=1, keepdims=True).to_dense(), x.argmax(axis=1, keepdims=True))


UFUNC_CASES = [
    (np.add, {}), (np.add, {"axis": 1, "keepdims": True}), (np.add, {"axis": None, "dtype": np.float32}),
    (np.multiply, {"axis": 0}), (np.maximum, {}), (np.minimum, {"axis": 1}), (np.maximum, {"initial": 5.0}),
    (np.fmax, {"axis": 0}), (np.fmin, {"axis": 1}), (np.logical_or, {"axis": 0}), (np.logical_and, {"axis": 1}),
]


@pytest.mark.parametrize("ufunc, kw", UFUNC_CASES)
def test_ufunc_reduce(ufunc, kw):
    x = np.array([[1.0, 0.0, -2.0, np.nan], [0.0, 3.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
    a = coosparse.asarray(x)
    from coosparse.ops.reduce.functions import ufunc_method

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exp = ufunc.reduce(x, **kw)
    r = ufunc_method(ufunc, "reduce", a, **kw)
    assert r.dtype == exp.dtype
    np.testing.assert_array_equal(r.to_dense(), exp)
    r = ufunc.reduce(a, **kw)  # through the (temporary on this branch) COO.__array_ufunc__
    np.testing.assert_array_equal(r.to_dense(), exp)


def test_ufunc_reduce_keeps_integer_dtypes_and_accumulates():
    x = np.array([[1, 0, 2], [0, 3, 0]], dtype=np.int8)
    a = coosparse.asarray(x)
    for u in (np.add, np.multiply, np.maximum):
        r, e = u.reduce(a, axis=1), u.reduce(x, axis=1)
        assert r.dtype == e.dtype
        np.testing.assert_array_equal(r.to_dense(), e)
    for u in (np.add, np.multiply, np.maximum):
        np.testing.assert_array_equal(u.accumulate(a, axis=1).to_dense(), u.accumulate(x, axis=1))


@pytest.mark.parametrize("method", ["reduceat", "outer", "at"])
def test_other_ufunc_methods_raise_typeerror(method):
    from coosparse.ops.reduce.functions import ufunc_method

    a = coosparse.asarray(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match=method):
        ufunc_method(np.add, method, a, np.array([0]))
    with pytest.raises(TypeError, match="not supported"):
        ufunc_method(np.subtract, "reduce", a)
    with pytest.raises(TypeError, match="out="):
        ufunc_method(np.add, "reduce", a, out=(np.zeros(()),))


# ---------------------------------------------------------------------------------- pydata/sparse's tests, ported
# sparse/numba_backend/tests/core/test_coo.py (pydata/sparse 0.19.3): same inputs, same expectations.
@pytest.fixture(scope="module", params=["f8", "f4", "i8", "i4"])
def random_sparse(request):
    rng = np.random.default_rng(0)
    dtype = np.dtype(request.param)
    a = coosparse.random((20, 30, 40), density=0.25, dtype=np.float64, seed=1)
    if dtype.kind == "i":
        a = a._with(values=rng.integers(-1000, 1000, a.nnz))
    return a.astype(dtype)


PYDATA_REDUCTIONS = [("sum", {}), ("sum", {"dtype": np.float32}), ("mean", {}), ("mean", {"dtype": np.float32}),
                     ("prod", {}), ("max", {}), ("min", {}), ("std", {}), ("var", {})]
PYDATA_AXES = [None, 0, 1, 2, (0, 2), -3, (1, -1)]


@pytest.mark.parametrize("reduction, kwargs", PYDATA_REDUCTIONS)
@pytest.mark.parametrize("axis", PYDATA_AXES)
@pytest.mark.parametrize("keepdims", [True, False])
def test_pydata_reductions(reduction, random_sparse, axis, keepdims, kwargs):
    x = random_sparse
    y = x.to_dense()
    xx = getattr(x, reduction)(axis=axis, keepdims=keepdims, **kwargs)
    yy = getattr(y, reduction)(axis=axis, keepdims=keepdims, **kwargs)
    assert_matches(xx, yy, y if reduction != "prod" else None)


@pytest.mark.parametrize("reduction, kwargs", [("sum", {}), ("sum", {"dtype": np.float32}), ("prod", {})])
@pytest.mark.parametrize("axis", PYDATA_AXES)
@pytest.mark.parametrize("keepdims", [True, False])
def test_pydata_reductions_fill_value(reduction, axis, keepdims, kwargs):
    rng = np.random.default_rng(3)
    a = coosparse.random((20, 30, 40), density=0.25, seed=2)
    x = a._with(values=rng.integers(-10, 10, a.nnz), fill_value=-1).astype(np.int64)  # random_sparse_small - 1
    y = x.to_dense()
    assert_matches(getattr(x, reduction)(axis=axis, keepdims=keepdims, **kwargs),
                   getattr(y, reduction)(axis=axis, keepdims=keepdims, **kwargs), y)


@pytest.mark.parametrize("reduction", ["any", "all"])
@pytest.mark.parametrize("axis", PYDATA_AXES)
@pytest.mark.parametrize("keepdims", [True, False])
def test_pydata_reductions_bool(reduction, axis, keepdims):
    y = np.zeros((2, 3, 4), dtype=bool)
    y[0] = True
    y[1, 1, 1] = True
    x = coosparse.asarray(y)
    assert_matches(getattr(x, reduction)(axis=axis, keepdims=keepdims),
                   getattr(y, reduction)(axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("reduction, kwargs", [(np.max, {}), (np.sum, {}), (np.sum, {"dtype": np.float32}),
                                               (np.mean, {}), (np.mean, {"dtype": np.float32}), (np.prod, {}),
                                               (np.min, {})])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, (0, 2), -1, (0, -1)])
@pytest.mark.parametrize("keepdims", [True, False])
def test_pydata_ufunc_reductions(random_sparse, reduction, kwargs, axis, keepdims):
    x = random_sparse
    y = x.to_dense()
    xx = reduction(x, axis=axis, keepdims=keepdims, **kwargs)
    yy = reduction(y, axis=axis, keepdims=keepdims, **kwargs)
    assert_matches(xx, yy, y if reduction is not np.prod else None)


@pytest.mark.parametrize("reduction", ["nansum", "nanmean", "nanprod", "nanmax", "nanmin"])
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("fraction", [0.25, 0.5, 0.75, 1.0])
def test_pydata_nan_reductions(reduction, axis, fraction):
    rng = np.random.default_rng(4)
    s = coosparse.random((2, 3, 4), density=0.25, seed=5)
    vals = s.values.copy()
    vals[rng.random(s.nnz) < fraction] = np.nan
    s = s._with(values=vals)
    x = s.to_dense()
    assert_matches(getattr(coosparse, reduction)(s, axis=axis), getattr(np, reduction)(x, axis=axis), x)


@pytest.mark.parametrize("reduction", ["nansum", "nanprod"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("fill_value", [0, 1 + 1j, complex(np.nan, 0), complex(0, np.nan)])
@pytest.mark.parametrize("axis", [None, 0, 1, (), (0, 1), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_pydata_complex_nan_reductions(reduction, dtype, fill_value, axis, keepdims):
    x = np.array([[1 + 2j, complex(np.nan, 0), complex(0, np.nan), complex(np.nan, np.nan)],
                  [0, 1 + 1j, 2 - 1j, 3j]], dtype=dtype)
    stored = x != fill_value
    idx = np.stack(np.nonzero(stored))
    s = COO(idx, x[stored], x.shape, fill_value=fill_value)
    d = s.to_dense()
    s.values.flags.writeable = False
    s.indices.flags.writeable = False
    exp = getattr(np, reduction)(d, axis=axis, keepdims=keepdims)
    assert_matches(getattr(coosparse, reduction)(s, axis=axis, keepdims=keepdims), exp)
    assert_matches(getattr(np, reduction)(s, axis=axis, keepdims=keepdims), exp)


@pytest.mark.parametrize("reduction", ["nansum", "nanprod"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(0,), (0, 2), (2, 0), (2, 3), ()])
@pytest.mark.parametrize("fill_value", [complex(np.nan, 0), complex(0, np.nan), 1 + 2j])
def test_pydata_complex_nan_reduction_empty(reduction, dtype, shape, fill_value):
    x = np.full(shape, fill_value, dtype=dtype)
    s = coosparse.full(shape, fill_value, dtype=dtype)
    assert s.nnz == 0
    exp = getattr(np, reduction)(x, keepdims=True, dtype=np.complex128)
    assert_matches(getattr(np, reduction)(s, keepdims=True, dtype=np.complex128), exp)


@pytest.mark.parametrize("reduction", ["nanmax", "nanmin", "nanmean"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_pydata_all_nan_reduction_warning(reduction, axis):
    s = coosparse.asarray(np.full((2, 3, 4), np.nan))
    with pytest.warns(RuntimeWarning):
        getattr(coosparse, reduction)(s, axis=axis)


def test_pydata_large_sum():
    rng = np.random.default_rng(6)
    n = 500000
    idx = np.stack([rng.integers(0, 10000, n), rng.integers(0, 1000, n), rng.integers(0, 3, n)])
    a = COO(idx, rng.random(n), (10000, 1000, 3))
    b = a.sum(axis=2)
    assert b.nnz > 100000
    c = a.coalesce()
    np.testing.assert_allclose(b.values, np.add.reduceat(c.values, np.unique(c.indices[0] * 1000 + c.indices[1],
                                                                              return_index=True)[1]))


def test_pydata_reduce_many_entries_per_group():
    rng = np.random.default_rng(7)
    shape = (200, 20, 10)
    a = COO(np.mgrid[0:200, 0:20, 0:10].reshape(3, -1), rng.random(40000), shape)
    x = a.to_dense()
    for f in ("sum", "mean", "max"):
        np.testing.assert_allclose(getattr(a, f)(axis=(1, 2)).to_dense(), getattr(x, f)(axis=(1, 2)))


def test_pydata_empty_reduction():
    x = np.zeros((2, 3, 4))
    assert_matches(coosparse.asarray(x).sum(axis=(0, 2)), x.sum(axis=(0, 2)))


@pytest.mark.parametrize("reduction", ["all", "any"])
@pytest.mark.parametrize("fill_value", [False, True])
@pytest.mark.parametrize("axis", [None, 0, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_pydata_logical_reduction_over_empty_axis(reduction, fill_value, axis, keepdims):
    x = np.full((0, 3), fill_value)
    s = coosparse.full((0, 3), fill_value)
    assert_matches(getattr(coosparse, reduction)(s, axis=axis, keepdims=keepdims),
                   getattr(np, reduction)(x, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("reduction", ["all", "any"])
@pytest.mark.parametrize("fill_value", [np.nan, 2.0, -1.0])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_pydata_logical_reduction_nonzero_fill_value(reduction, fill_value, axis, keepdims):
    x = np.full((3, 4, 2), fill_value)
    x[0, 1, 1] = 0.0
    x[2, :, 0] = [0.0, 1.0, np.nan, 3.0]
    stored = ~((x == fill_value) | (np.isnan(x) & np.isnan(fill_value)))
    s = COO(np.stack(np.nonzero(stored)), x[stored], x.shape, fill_value=fill_value)
    assert_matches(getattr(coosparse, reduction)(s, axis=axis, keepdims=keepdims),
                   getattr(np, reduction)(x, axis=axis, keepdims=keepdims))


def test_pydata_prod_along_axis():
    s1 = coosparse.random((10, 10), density=0.1, seed=8)
    s2 = COO(s1.indices, 1 - s1.values, s1.shape, fill_value=1.0)  # 1 - s1
    for s in (s1, s2):
        x = s.to_dense()
        np.testing.assert_allclose(s.prod(axis=0).to_dense(), x.prod(axis=0))


ARG_ARRAYS = [np.array([[0, 3, 0], [1, 2, 0]]), np.array([[[0, 0], [1, 0]], [[5, 0], [0, -3]]])]


@pytest.mark.parametrize("arr", ARG_ARRAYS)
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("keepdims", [True, False])
@pytest.mark.parametrize("mode", [(coosparse.argmax, np.argmax), (coosparse.argmin, np.argmin)])
def test_pydata_argmax_argmin(arr, axis, keepdims, mode):
    ours, theirs = mode
    np.testing.assert_equal(ours(coosparse.asarray(arr), axis=axis, keepdims=keepdims).to_dense(),
                            theirs(arr, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("axis", [None, 0, 1, 2])
@pytest.mark.parametrize("mode", [(coosparse.argmax, np.argmax), (coosparse.argmin, np.argmin)])
def test_pydata_argmax_argmin_3d(axis, mode):
    ours, theirs = mode
    s = COO([[100, 100, 100], [100, 100, 99], [0, 1, 0]], np.array([3.0, 3.0, -2.0]), (1000, 550, 3))
    np.testing.assert_equal(ours(s, axis=axis).to_dense(), theirs(s.to_dense(), axis=axis))


@pytest.mark.parametrize("arr, axis", [(ARG_ARRAYS[0], -1), (ARG_ARRAYS[0], -2), (ARG_ARRAYS[1], -1),
                                       (ARG_ARRAYS[1], -2), (ARG_ARRAYS[1], -3)])
@pytest.mark.parametrize("keepdims", [True, False])
@pytest.mark.parametrize("mode", [(coosparse.argmax, np.argmax), (coosparse.argmin, np.argmin)])
def test_pydata_argmax_argmin_negative_axis(arr, axis, keepdims, mode):
    ours, theirs = mode
    np.testing.assert_equal(ours(coosparse.asarray(arr), axis=axis, keepdims=keepdims).to_dense(),
                            theirs(arr, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("fill_value", [0.0, 1.0, -2.0])
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("mode", [(coosparse.argmax, np.argmax), (coosparse.argmin, np.argmin)])
def test_pydata_argmax_argmin_nan(fill_value, axis, mode):
    ours, theirs = mode
    arr = np.array([[1.0, np.nan, -2.0], [np.nan, 0.0, 5.0], [-2.0, 1.0, np.nan]])
    stored = arr != fill_value
    s = COO(np.stack(np.nonzero(stored)), arr[stored], arr.shape, fill_value=fill_value)
    np.testing.assert_equal(ours(s, axis=axis).to_dense(), theirs(arr, axis=axis))


@pytest.mark.parametrize("func", [coosparse.argmax, coosparse.argmin])
def test_pydata_argmax_argmin_constraint(func):
    s = coosparse.full((2, 2), 2)
    with pytest.raises(ValueError, match="out of bounds"):
        func(s, axis=2)
    with pytest.raises(ValueError, match="out of bounds"):
        func(s, axis=-3)


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "mean", "var"])
@pytest.mark.parametrize("shape, axis", [((40, 50), 1), ((40, 50, 30), (1, 2)), ((3000, 4), 1)])
def test_row_pointer_strategy_same_bits(backend, op, shape, axis):
    """Rows of a sorted array reduced over the array's row pointer: the bits of the other strategies
    (each row in stored order), on both layers; the pointer stays cached with the array."""
    rng = np.random.default_rng(11)
    n = 2000
    idx = np.stack([rng.integers(0, s, n) for s in shape])
    a = COO(idx, rng.standard_normal(n) * 1e3, shape, fill_value=0.0).coalesce()
    if op == "sum":  # sorted with duplicates (the other ops coalesce them first)
        a = COO(np.repeat(a.indices, 2, axis=1), np.repeat(a.values, 2), shape, sorted=True)
    f = getattr(coosparse, op)
    other = f(a, axis=axis)  # a fresh array without the cache ...
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(COO, "_row_pointer_pays", lambda self: False)
        other = f(a, axis=axis)  # ... and the strategies without the pointer
    x = backend.put(a)
    got = backend.get(f(x, axis=axis))
    if shape[0] <= 2 * a.nnz + 1024 and a.is_coalesced == (op != "sum"):
        assert x._cached_companion(("row_pointer", 1, shape[0])) is not None
    np.testing.assert_array_equal(got.indices, other.indices)
    assert got.values.tobytes() == other.values.tobytes()
    d = a.to_dense()
    np.testing.assert_allclose(got.to_dense(), getattr(np, op)(d, axis=axis), rtol=1e-9, atol=1e-6)
