"""topk and argpartition against a dense reference (each lane sorted with NumPy's order, NaN largest,
ties to the lower index), on the Numba and emulated CUDA layers; topk against scipy's per-row loop
and torch.topk on dense rows."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coosparse
from coosparse import COO
from operands import FLAGS, check_flags, dense, make


def ref_topk(d, k, axis, largest, fill):
    dm = np.moveaxis(d, axis, -1)
    out = np.full(dm.shape, fill, dtype=d.dtype)
    n = dm.shape[-1]
    for lane in np.ndindex(dm.shape[:-1]):
        v = dm[lane]

        def key(i):
            x = v[i]
            nan = isinstance(x, (float, np.floating)) and math.isnan(x)
            num = 0 if nan else (float(x) if v.dtype.kind == "f" else int(x))
            return (0 if nan else 1, -num, i) if largest else (1 if nan else 0, num, i)

        for i in sorted(range(n), key=key)[:k]:
            out[lane + (i,)] = v[i]
    return np.moveaxis(out, -1, axis)


def same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(np.nan_to_num(got), np.nan_to_num(want))
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("flags", list(FLAGS))
@pytest.mark.parametrize("largest", [True, False])
def test_topk_rows(backend, flags, largest):
    a = make((7, 9), 30, flags, seed=1)  # integer-valued floats: many ties, negatives and positives
    A = backend.put(a)
    for k in (0, 1, 3, 7, 9):
        for axis in (1, 0, -1):
            if k > a.shape[axis]:
                continue
            r = backend.get(coosparse.topk(A, k, axis=axis, largest=largest))
            assert isinstance(r, COO) and r.is_coalesced and r.shape == a.shape
            check_flags(r)
            same_bits(r.to_dense(), ref_topk(dense(a), k, axis % 2, largest, 0.0))
            assert not (r.values == r.fill_value).any()


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_topk_hypothesis(data):
    ndim = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    dtype = data.draw(st.sampled_from([np.float64, np.float32, np.int8, np.uint16, np.int64, np.bool_]))
    flags = data.draw(st.sampled_from(list(FLAGS)))
    total = int(np.prod(shape))
    a = make(shape, data.draw(st.integers(0, 2 * total)), flags, dtype=dtype, seed=data.draw(st.integers(0, 999)),
             sparse_ndim=data.draw(st.integers(0, ndim)) if ndim > 1 else None)
    vals = a.values.copy()
    fill = 0
    if np.dtype(dtype).kind == "f" and vals.size:
        vals.reshape(-1)[:: max(1, vals.size // 3)] = np.nan
        fill = data.draw(st.sampled_from([0.0, 1.0, -2.0, np.nan]))
    elif np.dtype(dtype).kind in "iu":
        fill = data.draw(st.sampled_from([0, 1, 3]))
    a = COO(a.indices, vals, shape, sorted=a.is_sorted, unique=a.is_unique, fill_value=fill)
    axis = data.draw(st.integers(-ndim, ndim - 1))
    k = data.draw(st.integers(0, shape[axis]))
    largest = data.draw(st.booleans())
    r = coosparse.topk(a, k, axis=axis, largest=largest)
    same_bits(r.to_dense(), ref_topk(dense(a), k, axis % ndim, largest, np.asarray(a.fill_value)[()]))
    check_flags(r)


def lanes_case(rng, shape, nnz, dtype, fill, stored_fill):
    """A coalesced COO whose values tie often (a few levels, NaN, -0.0 and, with stored_fill,
    explicit entries equal to the fill), through a raw COO with duplicates that coalesce sums."""
    total = int(np.prod(shape))
    keys = rng.integers(0, total, nnz)
    idx = np.stack(np.unravel_index(keys, shape)).astype(np.int64)
    levels = np.array([-3, -1, 0, 1, 2, 5])
    vals = rng.choice(levels, nnz).astype(dtype)
    if np.dtype(dtype).kind == "f" and nnz:
        vals[rng.random(nnz) < 0.1] = np.nan
        vals[rng.random(nnz) < 0.05] = -0.0
    c = COO(idx, vals, shape, fill_value=fill).coalesce()
    v = c.values.copy()
    if stored_fill and c.nnz:
        v[rng.random(c.nnz) < 0.15] = fill
    return COO(c.indices, v, shape, sorted=True, unique=True, fill_value=fill)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
@pytest.mark.parametrize("case", ["rows", "long rows", "hypersparse", "vector", "3-d"])
def test_topk_last_axis_lanes(backend, dtype, case):
    """The per-lane selection along the last axis (a buffer of the best values for k <= 16 and a
    quickselect above, either side of the fill) against the dense reference: ties, NaN, -0.0,
    stored fill values, empty rows, k = 0 .. n, both directions, every fill."""
    rng = np.random.default_rng(hash(case) % 2**32)
    shape, nnz, ks = {"rows": ((9, 40), 200, (0, 1, 2, 5, 16, 17, 33, 40)),
                      "long rows": ((4, 120), 400, (1, 15, 16, 17, 60, 100, 120)),
                      "hypersparse": ((3000, 20), 30, (0, 1, 3, 20)),  # shape[0] > 2 nnz + 1024: run lanes
                      "vector": ((90,), 70, (0, 1, 16, 17, 50, 90)),
                      "3-d": ((3, 4, 25), 150, (1, 8, 17, 25))}[case]
    fills = [0, 1, -2] + ([np.nan] if np.dtype(dtype).kind == "f" else [])
    for fill in fills:
        for stored_fill in (False, True):
            a = lanes_case(rng, shape, nnz, dtype, fill, stored_fill)
            A = backend.put(a)
            d = dense(a)
            for k in ks:
                for largest in (True, False):
                    r = backend.get(coosparse.topk(A, k, axis=-1, largest=largest))
                    assert r.dtype == a.dtype and r.is_sorted and r.is_unique
                    check_flags(r)
                    same_bits(r.to_dense(), ref_topk(d, k, len(shape) - 1, largest, np.asarray(fill, dtype)[()]))
                    if r.nnz:
                        assert not (r.values == r.fill_value).any()


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_topk_last_axis_hypothesis(data):
    """Rows of every length against the dense reference (the Numba layer's per-lane selection)."""
    rows = data.draw(st.integers(1, 6))
    n = data.draw(st.integers(1, 50))
    dtype = data.draw(st.sampled_from([np.float64, np.int32]))
    kind = np.dtype(dtype).kind
    fill = data.draw(st.sampled_from([0, 2, -1] + ([np.nan] if kind == "f" else [])))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    a = lanes_case(rng, (rows, n), data.draw(st.integers(0, 3 * rows * n)), dtype, fill, data.draw(st.booleans()))
    k = data.draw(st.integers(0, n))
    largest = data.draw(st.booleans())
    r = coosparse.topk(a, k, axis=1, largest=largest)
    same_bits(r.to_dense(), ref_topk(dense(a), k, 1, largest, np.asarray(fill, dtype)[()]))
    check_flags(r)


def test_topk_dense_input_and_errors():
    x = np.array([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]])
    np.testing.assert_array_equal(coosparse.topk(x, 1).to_dense(), [[3.0, 0.0, 0.0], [0.0, 0.0, 5.0]])
    with pytest.raises(ValueError, match="k must be between 0 and 3"):
        coosparse.topk(x, 4)
    with pytest.raises(ValueError, match="k must be"):
        coosparse.topk(x, -1)
    with pytest.raises(TypeError, match="complex"):
        coosparse.topk(COO([[0]], np.array([1j]), (2,)), 1)
    with pytest.raises(ValueError, match="0-d"):
        coosparse.topk(COO(np.zeros((0, 1), np.int64), np.array([1.0]), ()), 0)
    with pytest.raises(np.exceptions.AxisError):
        coosparse.topk(x, 1, axis=2)


def test_topk_against_scipy_rows_and_torch():
    sp = pytest.importorskip("scipy.sparse")
    torch = pytest.importorskip("torch")
    a = coosparse.random((50, 40), density=0.2, seed=2)  # positive values: the per-row top-k of scipy's loop
    k = 3
    m = a.to_scipy("csr")
    rows, cols, vals = [], [], []
    for i in range(m.shape[0]):  # the scipy idiom: argpartition of each row's data
        lo, hi = m.indptr[i], m.indptr[i + 1]
        d = m.data[lo:hi]
        top = np.argpartition(-d, min(k, d.size) - 1)[:k] if d.size else []
        rows += [i] * len(top)
        cols += list(m.indices[lo:hi][top])
        vals += list(d[top])
    want = sp.coo_array((vals, (rows, cols)), shape=m.shape).toarray()
    got = coosparse.topk(a, k, axis=1)
    np.testing.assert_array_equal(got.to_dense(), want)
    tv, ti = torch.topk(torch.from_numpy(a.to_dense()), k, dim=1)
    dense_rows = np.zeros(a.shape)
    np.put_along_axis(dense_rows, ti.numpy(), tv.numpy(), axis=1)
    np.testing.assert_array_equal(got.to_dense(), dense_rows)


@pytest.mark.parametrize("flags", list(FLAGS))
def test_argpartition(backend, flags):
    a = make((5, 6), 14, flags, seed=3)
    x = dense(a)
    for kth in (0, 2, -1, [1, 4]):
        for axis in (0, 1, None):
            got = backend.get(np.argpartition(backend.put(a), kth, axis=axis))
            want = np.argpartition(x, kth, axis=axis)
            flat = x.reshape(-1) if axis is None else x
            ax = 0 if axis is None else axis
            sorted_vals = np.sort(flat, axis=ax)
            part = np.take_along_axis(flat, got, axis=ax)
            for t in np.atleast_1d(kth):  # a valid partition: the kth element in place, smaller before
                np.testing.assert_array_equal(np.take(part, t, axis=ax), np.take(sorted_vals, t, axis=ax))
                idx = t % flat.shape[ax]
                before = np.take(part, np.arange(idx), axis=ax)
                assert (before <= np.take(part, [idx], axis=ax)).all()
            assert got.shape == want.shape and got.dtype == np.int64
    with pytest.raises(ValueError, match="kth"):
        coosparse.argpartition(a, 6)
    with pytest.raises(TypeError, match="order"):
        np.argpartition(a, 1, order="x")


@pytest.mark.parametrize("kth", [True, [True, False], [], [1, 1.5], 1.0, [[0]], np.array([], dtype=np.int64),
                                 np.uint8(1), [0, -1]])
def test_argpartition_checks_kth_as_numpy(kth):
    # the same exception type as NumPy's for each kth it refuses, and an answer where it answers
    x = np.array([[3.0, 0.0, 1.0], [0.0, 2.0, 0.0]])
    a = coosparse.asarray(x)
    try:
        np.argpartition(x, kth)
    except (TypeError, ValueError) as e:
        with pytest.raises(type(e)):
            coosparse.argpartition(a, kth)
    else:
        np.testing.assert_array_equal(coosparse.argpartition(a, kth), np.argsort(x, axis=-1, kind="stable"))
