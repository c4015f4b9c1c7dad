"""Searching, sets and sorting against NumPy: where, nonzero, argwhere, take, take_along_axis,
searchsorted, unique_*, sort, argsort, isin; ported pydata/sparse tests."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coosparse
from coosparse import COO
from coosparse.ops.search import MAX_FILL_NANS
from manip_helpers import assert_coo, check_flags, close, from_dense_fill, reference
from strategies import coo_parts


@st.composite
def arrays(draw, max_sparse_ndim=3, fills=True):
    indices, values, shape, s, u = draw(coo_parts(max_sparse_ndim=max_sparse_ndim))
    fill = None
    if fills and draw(st.integers(0, 3)) == 0:
        fill = values.dtype.type(True if values.dtype == np.bool_ else 1)
    return COO(indices, values, shape, sorted=s, unique=u, fill_value=fill)


def _bool_like(a, seed):
    rng = np.random.default_rng(seed)
    keep = rng.random(a.nnz) < 0.6
    return COO(a.indices[:, keep], rng.random((int(keep.sum()),) + a.dense_shape) < 0.5, a.shape,
               fill_value=bool(seed % 2))


@settings(max_examples=40)
@given(a=arrays(), seed=st.integers(0, 100), data=st.data())
def test_where_matches_numpy(a, seed, data, backend):
    c = _bool_like(a, seed)
    b = COO(a.indices[:, ::-1], a.values[::-1], a.shape, fill_value=a.fill_value)
    y = data.draw(st.sampled_from([b, 0, 2.5]))
    expected = np.where(reference(c), reference(a), reference(y) if isinstance(y, COO) else y)
    out = coosparse.where(backend.put(c), backend.put(a), backend.put(y) if isinstance(y, COO) else y)
    out = backend.get(out)
    assert_coo(out, expected)
    assert out.is_coalesced


def test_where_broadcasting_and_dense_operands():
    c = coosparse.random((3, 1, 4), nnz=5, seed=1, dtype=np.bool_)
    x = coosparse.random((5, 1), nnz=3, seed=2)
    y = coosparse.random((4,), nnz=2, seed=3)
    assert_coo(coosparse.where(c, x, y), np.where(reference(c), reference(x), reference(y)))
    d = np.arange(4.0)
    out = coosparse.where(c, x, d)
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, np.where(reference(c), reference(x), d))
    assert_coo(np.where(c, x, y), np.where(reference(c), reference(x), reference(y)))
    # fills: background is x's fill where the condition's fill is True
    c1 = COO([[0]], np.array([False]), (3,), fill_value=True)
    x1 = COO([[1]], np.array([5]), (3,), fill_value=7)
    out = coosparse.where(c1, x1, -1)
    assert out.fill_value == 7
    assert_coo(out, np.array([-1, 5, 7]))


def test_where_of_wide_shapes(backend):
    # (2**40, 2**40): NumPy's broadcast_shapes refuses 2**80 elements ("broadcast dimensions too
    # large"), where every other elementwise function of such arrays works
    n = 2**40
    a = COO([[5, n - 1, 5], [7, 3, 7]], np.array([1.5, -2.0, 1.0]), (n, n), fill_value=0.5)
    b = COO([[5, 9], [7, 9]], np.array([4.0, 3.0]), (n, n))
    r = backend.get(coosparse.where(backend.put(b), 7.0, backend.put(a))).to("cpu")
    check_flags(r)
    assert r.indices.tolist() == [[5, 9, n - 1], [7, 9, 3]] and r.values.tolist() == [7.0, 7.0, -2.0]
    assert r.fill_value == 0.5


def test_where_with_zero_dimensional_array_operands(backend):
    # a 0-d array beside COO and scalar operands is a constant; on a device it was taken with
    # np.asarray (an implicit transfer CuPy refuses: TypeError)
    c0 = COO(np.zeros((0, 0), np.int64), np.zeros(0, np.uint8), (), fill_value=2)
    c1 = COO([[0]], np.array([True]), (2,))
    for args in [(c0, np.array(5.0), np.int64(3)), (c1, np.array(5, np.int8), np.array(-1.5, np.float32)),
                 (c1, 2, np.array(7))]:
        got = backend.get(coosparse.where(*[backend.put(v) if isinstance(v, (COO, np.ndarray)) else v
                                            for v in args]))
        got = got.to("cpu").to_dense() if isinstance(got, COO) else np.asarray(got)
        want = np.where(*[v.to_dense() if isinstance(v, COO) else v for v in args])
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape", [(2**32, 2**32), (3, 2**62), (2**63 - 1, 2)])
def test_where_on_shapes_of_2_63_elements_or_more(shape, backend):
    """NumPy's broadcast_shapes refuses such shapes ("broadcast dimensions too large"); where works."""
    last = tuple(n - 1 for n in shape)
    x = COO(np.array([(0,) * len(shape), last, (1,) * len(shape)]).T, np.array([1.0, 2.0, 3.0]), shape)
    c = COO(np.array([last, (1,) * len(shape)]).T, np.array([True, False]), shape)
    for y in (-1.0, COO(np.array([(1,) * len(shape)]).T, np.array([4.0]), shape, fill_value=-1.0)):
        out = backend.get(coosparse.where(backend.put(c), backend.put(x), backend.put(y)))
        assert out.shape == shape and out.fill_value == -1.0 and out.is_sorted and out.is_unique
        stored = {tuple(int(i) for i in col): v for col, v in zip(out.indices.T, out.values.tolist())}
        assert stored == {last: 2.0, **({(1,) * len(shape): 4.0} if isinstance(y, COO) else {})}


@settings(max_examples=40)
@given(a=arrays())
def test_nonzero_argwhere(a, backend):
    d = reference(a)
    if a.ndim == 0:
        with pytest.raises(ValueError):
            coosparse.nonzero(a)
        np.testing.assert_array_equal(coosparse.argwhere(a), np.argwhere(d))
        return
    got = coosparse.nonzero(backend.put(a))
    exp = np.nonzero(d)
    assert len(got) == len(exp)
    for g, e in zip(got, exp):
        np.testing.assert_array_equal(backend.get(g), e)
        assert backend.get(g).dtype == np.int64
    np.testing.assert_array_equal(backend.get(coosparse.argwhere(backend.put(a))), np.argwhere(d))
    one = coosparse.where(backend.put(a))
    for g, e in zip(one, exp):
        np.testing.assert_array_equal(backend.get(g), e)


@settings(max_examples=40)
@given(a=arrays(), data=st.data())
def test_take_and_take_along_axis(a, data, backend):
    d = reference(a)
    if a.ndim == 0:
        return
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[axis]
    idx = np.array(data.draw(st.lists(st.integers(-n, n - 1), max_size=5)) if n else [], dtype=np.int64)
    assert_coo(backend.get(coosparse.take(backend.put(a), idx, axis=axis)), np.take(d, idx, axis=axis))
    if d.size:
        flat = np.array(data.draw(st.lists(st.integers(0, d.size - 1), max_size=4)), dtype=np.int64)
        assert_coo(coosparse.take(a, flat), np.take(d, flat))
    if n:
        rng = np.random.default_rng(data.draw(st.integers(0, 99)))
        shape = list(d.shape)
        shape[axis] = data.draw(st.integers(0, 4))
        ind = rng.integers(-n, n, shape)
        out = backend.get(coosparse.take_along_axis(backend.put(a), ind, axis=axis))
        assert_coo(out, np.take_along_axis(d, ind, axis=axis))


def test_take_modes():
    a = coosparse.random((6, 5), nnz=10, seed=1)
    d = reference(a)
    for mode in ("wrap", "clip"):
        idx = np.array([-9, 0, 7, 12])
        assert_coo(coosparse.take(a, idx, axis=0, mode=mode), np.take(d, idx, axis=0, mode=mode))
        assert_coo(np.take(a, idx, axis=1, mode=mode), np.take(d, idx, axis=1, mode=mode))
        assert_coo(a.take(idx, axis=1, mode=mode), d.take(idx, axis=1, mode=mode))  # ndarray.take's signature
        assert_coo(a.take(idx, None, None, mode), d.take(idx, None, None, mode))
    with pytest.raises(TypeError, match="out="):
        a.take([0], out=np.empty(1))
    with pytest.raises(IndexError):
        coosparse.take(a, np.array([6]), axis=0)
    with pytest.raises(TypeError):
        coosparse.take(a, np.array([1.5]), axis=0)
    assert coosparse.take(coosparse.random((6,), nnz=3, seed=2), 2) == reference(coosparse.random((6,), nnz=3, seed=2))[2]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint64])
@pytest.mark.parametrize("mode", ["wrap", "clip"])
def test_take_modes_with_narrow_index_dtypes(dtype, mode, backend):
    # the axis is longer than the index dtype reaches: wrapping and clipping are exact, no overflow
    a = COO([[0, 150, 299, 40000]], np.array([1.0, 2.0, 3.0, 4.0]), (70000,), fill_value=7.0)
    info = np.iinfo(dtype)
    idx = np.array([info.min, info.max, 5, 0, info.max // 2], dtype=dtype)
    out = backend.get(coosparse.take(backend.put(a), backend.put(idx), mode=mode))
    n = a.shape[0]  # the exact positions (NumPy's own take loops for ages on uint64 2**63 in 'wrap')
    pos = [i % n if mode == "wrap" else min(max(i, 0), n - 1) for i in idx.tolist()]
    assert_coo(out, reference(a)[pos])


@pytest.mark.parametrize("idx", [[], [[]], ([], [])])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_take_of_an_empty_list(idx, axis, backend):
    # np.asarray makes an empty list float64; NumPy's take takes nothing with it, and so do we
    a = COO([[0, 2], [1, 1]], np.array([1.0, 3.0]), (4, 3), fill_value=5.0)
    out = backend.get(coosparse.take(backend.put(a), idx, axis=axis))
    assert_coo(out, np.take(reference(a), idx, axis=axis))
    with pytest.raises(TypeError, match="integers"):
        coosparse.take(a, np.array([], dtype=np.float64), axis=axis)  # a float array stays refused


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 3), (0,)])
@pytest.mark.parametrize("idx", [[5], [0, -1], 2, [[1], [7]]])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_take_from_empty_arrays_as_numpy(shape, idx, mode):
    """NumPy checks no index where the axes before ``axis`` hold nothing, and refuses a take from an
    empty axis only when the result would hold elements: the same results and the same errors."""
    a = COO(np.zeros((len(shape), 0), np.int64), np.zeros(0), shape, fill_value=1.5)
    d = reference(a)
    for axis in range(len(shape)):
        n, before = shape[axis], int(np.prod(shape[:axis]))
        out_shape = shape[:axis] + np.shape(idx) + shape[axis + 1:]
        raises = (n == 0 and np.prod(out_shape) > 0 or mode == "raise" and before > 0
                  and not all(-n <= i < n for i in np.ravel(idx)))
        if not (mode == "wrap" and n == 0 and before):  # (NumPy 2.4 loops forever there)
            try:
                assert np.take(d, idx, axis=axis, mode=mode).shape == out_shape and not raises
            except IndexError:
                assert raises
        if raises:
            with pytest.raises(IndexError):
                coosparse.take(a, idx, axis=axis, mode=mode)
            continue
        got = coosparse.take(a, idx, axis=axis - len(shape), mode=mode)
        assert_coo(got, np.full(out_shape, 1.5))
        assert got.fill_value == 1.5


@settings(max_examples=40)
@given(data=st.data())
def test_searchsorted(data, backend):
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    n = data.draw(st.integers(0, 12))
    fill = data.draw(st.sampled_from([0.0, -1.0, 2.0, np.nan]))
    dense = np.sort(np.concatenate([rng.integers(-3, 4, n).astype(float), [np.nan] * data.draw(st.integers(0, 1))]))
    x1 = from_dense_fill(dense, fill=fill) if not np.isnan(fill) else from_dense_fill(dense, fill=np.nan)
    v = np.array([-5.0, -1.0, 0.0, 0.5, 2.0, 3.0, np.nan])
    for side in ("left", "right"):
        expected = np.searchsorted(reference(x1), v, side=side)
        got = backend.get(coosparse.searchsorted(backend.put(x1), v, side=side))
        np.testing.assert_array_equal(got, expected)
        x2 = from_dense_fill(np.array([[0.0, 2.0], [-1.0, 0.0]]))
        out = backend.get(coosparse.searchsorted(backend.put(x1), backend.put(x2), side=side))
        assert_coo(out, np.searchsorted(reference(x1), reference(x2), side=side))
        np.testing.assert_array_equal(coosparse.searchsorted(reference(x1), x2, side=side).to_dense(),
                                      np.searchsorted(reference(x1), reference(x2), side=side))


@pytest.mark.parametrize("stored", [True, False])
def test_searchsorted_of_a_dense_dimension(stored, backend):
    # a 1-D array whose one dimension is dense stores its elements as one block of values (or none)
    values = np.array([[1.0, 3.0, 3.0, 5.0]]) if stored else np.zeros((0, 4))
    x1 = COO(np.zeros((0, values.shape[0]), dtype=np.int64), values, (4,), fill_value=2.0)
    d = reference(x1)
    v = np.array([0.0, 2.0, 3.0, 4.0, 6.0, np.nan])
    for side in ("left", "right"):
        got = backend.get(coosparse.searchsorted(backend.put(x1), v, side=side))
        np.testing.assert_array_equal(got, np.searchsorted(d, v, side=side))


@pytest.mark.parametrize("sorter", [[0, 1, 99, 2, 3], [0, -1, 2, 3, 4], [0, 1, 2], [[0, 1, 2, 3, 4]],
                                    [0.0, 1.0, 2.0, 3.0, 4.0], [4, 3, 2, 1, 0], [1, 0, 2, 3, 4]])
def test_searchsorted_checks_sorter(sorter, backend):
    # a COO x1 does not need the sorter, but a bad one is an error, never silently ignored: integers,
    # one per element, each in range (NumPy checks only the entries its binary search reads)
    x1 = COO([[0, 2, 3]], [3.0, 1.0, 2.0], (5,))
    d = reference(x1)
    s = np.asarray(sorter)
    if s.dtype.kind != "i":
        with pytest.raises(TypeError, match="sorter must hold integers"):
            coosparse.searchsorted(backend.put(x1), 1.5, sorter=s)
    elif s.shape != (5,) or s.min() < 0 or s.max() >= 5:
        with pytest.raises(ValueError, match="sorter"):
            coosparse.searchsorted(backend.put(x1), 1.5, sorter=s)
    else:  # a valid sorter: the insertion point in the sorted values
        got = backend.get(coosparse.searchsorted(backend.put(x1), 1.5, sorter=s))
        assert int(got) == np.searchsorted(d, 1.5, sorter=np.argsort(d, kind="stable")) == 3


def _unique_ref(d):
    return np.unique(d.ravel(), return_index=True, return_inverse=True, return_counts=True, equal_nan=False)


@settings(max_examples=50)
@given(a=arrays())
def test_unique_family(a, backend):
    d = reference(a)
    if a.dtype == np.float16:
        d = d.astype(np.float16)
    u, first, inv, counts = _unique_ref(d)
    x = backend.put(a)
    np.testing.assert_array_equal(backend.get(coosparse.unique_values(x)), u)
    r = coosparse.unique_counts(x)
    np.testing.assert_array_equal(backend.get(r.values), u)
    np.testing.assert_array_equal(backend.get(r.counts), counts)
    r = coosparse.unique_inverse(x)
    np.testing.assert_array_equal(backend.get(r.values), u)
    inv_d = reference(backend.get(r.inverse_indices))
    np.testing.assert_array_equal(u[inv_d], d) if not np.isnan(u).any() else None
    r = coosparse.unique_all(x)
    np.testing.assert_array_equal(backend.get(r.values), u)
    np.testing.assert_array_equal(backend.get(r.counts), counts)
    np.testing.assert_array_equal(backend.get(r.indices), first)
    got = u[reference(backend.get(r.inverse_indices))]
    np.testing.assert_array_equal(got, d)


def test_unique_of_2_64_elements(backend):
    # the fill occurs 2**64 - 3 times: values and the inverse need no count of it; counts refuse clearly
    a = backend.put(COO([[0, 2**32 - 1, 5], [3, 2**32 - 2, 5]], np.array([1.0, -2.0, 0.0]), (2**32, 2**32)))
    np.testing.assert_array_equal(backend.get(coosparse.unique_values(a)), [-2.0, 0.0, 1.0])
    np.testing.assert_array_equal(backend.get(np.unique(a)), [-2.0, 0.0, 1.0])
    u, inv = coosparse.unique_inverse(a)
    np.testing.assert_array_equal(backend.get(u), [-2.0, 0.0, 1.0])
    inv = backend.get(inv)
    assert inv.shape == a.shape and int(inv.fill_value) == 1
    assert {tuple(ix): int(v) for ix, v in zip(inv.indices.T.tolist(), inv.values)} == \
        {(0, 3): 2, (2**32 - 1, 2**32 - 2): 0, (5, 5): 1}
    for f in (coosparse.unique_counts, lambda x: np.unique(x, return_counts=True)):
        with pytest.raises(ValueError, match="does not fit int64"):
            f(a)


@settings(max_examples=50)
@given(a=arrays(), data=st.data())
def test_sort_and_argsort(a, data, backend):
    if a.ndim == 0 or a.dtype.kind == "c":
        return
    d = reference(a)
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    descending = data.draw(st.booleans())
    expected = np.sort(d, axis=axis)
    if descending:
        expected = np.flip(expected, axis=axis)
    out = backend.get(coosparse.sort(backend.put(a), axis=axis, descending=descending))
    assert_coo(out, expected)
    assert out.is_coalesced and out.fill_value == a.fill_value or np.isnan(out.fill_value)
    arg = backend.get(coosparse.argsort(backend.put(a), axis=axis, descending=descending))
    if descending:
        n = d.shape[axis]
        exp = n - 1 - np.flip(np.argsort(np.flip(d, axis=axis), axis=axis, kind="stable"), axis=axis)
    else:
        exp = np.argsort(d, axis=axis, kind="stable")
    np.testing.assert_array_equal(arg, exp)


def test_sort_complex_and_nan():
    d = np.array([[3 + 1j, 0, 1 - 2j], [0, -1 + 0j, 0]])
    a = coosparse.from_dense(d)
    assert_coo(coosparse.sort(a, axis=1), np.sort(d, axis=1))
    assert_coo(coosparse.sort(a, axis=0), np.sort(d, axis=0))
    f = from_dense_fill(np.array([[np.nan, 1.0, 5.0], [2.0, np.nan, -1.0]]), fill=np.nan)
    assert_coo(coosparse.sort(f, axis=1), np.sort(reference(f), axis=1))


@settings(max_examples=40)
@given(a=arrays(), data=st.data())
def test_isin(a, data, backend):
    d = reference(a)
    test = np.unique(d)[: data.draw(st.integers(0, 3))]
    out = backend.get(coosparse.isin(backend.put(a), test))
    assert_coo(out, np.isin(d, test))
    inv = coosparse.isin(a, test, invert=True)
    assert_coo(inv, np.isin(d, test, invert=True))
    b = COO(a.indices[:, :2], a.values[:2], a.shape, fill_value=a.fill_value)
    assert_coo(coosparse.isin(a, b), np.isin(d, reference(b)))
    np.testing.assert_array_equal(coosparse.isin(d, b), np.isin(d, reference(b)))


def test_isin_of_a_nan_fill_over_many_elements(backend):
    # the set functions refuse to list more than MAX_FILL_NANS distinct unstored NaNs; isin needs
    # only the set of values, in which NaN (found in nothing) takes one place
    n = 1 << 13
    assert n * n > MAX_FILL_NANS
    x2 = COO([[0, 5], [1, 7]], np.array([2.0, np.nan]), (n, n), fill_value=np.nan)
    x1 = COO([[0, 1, 2]], np.array([2.0, np.nan, 3.0]), (5,), fill_value=np.nan)
    test = np.array([2.0, np.nan, np.nan])  # x2's values: the same set
    for invert in (False, True):
        out = backend.get(coosparse.isin(backend.put(x1), backend.put(x2), invert=invert))
        assert_coo(out, np.isin(reference(x1), test, invert=invert))
        got = backend.get(coosparse.isin(backend.put(np.array([0.0, 2.0, np.nan])), backend.put(x2), invert=invert))
        np.testing.assert_array_equal(got, np.isin([0.0, 2.0, np.nan], test, invert=invert))


def test_numpy_functions_dispatch():
    a = coosparse.random((4, 5), nnz=8, seed=4)
    d = reference(a)
    for g, e in zip(np.nonzero(a), np.nonzero(d)):
        np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(np.argwhere(a), np.argwhere(d))
    assert_coo(np.take(a, [1, 3], axis=1), np.take(d, [1, 3], axis=1))
    assert_coo(np.sort(a, axis=0), np.sort(d, axis=0))
    np.testing.assert_array_equal(np.argsort(a, axis=0), np.argsort(d, axis=0, kind="stable"))
    np.testing.assert_array_equal(np.unique_values(a), np.unique_values(d))
    np.testing.assert_array_equal(np.unique_counts(a).counts, np.unique_counts(d).counts)
    assert_coo(np.isin(a, [d[0, 0]]), np.isin(d, [d[0, 0]]))
    s = coosparse.from_dense(np.array([0.0, 0.0, 1.0, 3.0]))
    np.testing.assert_array_equal(np.searchsorted(s, [0.5, 3.0]), [2, 3])
    assert_coo(np.take_along_axis(a, np.zeros((4, 1), dtype=np.int64), axis=1), d[:, :1])


# ---------------------------------------------------------------------- ported pydata/sparse tests
@pytest.mark.parametrize("shapes", [
    [(2,), (3, 2), (4, 3, 2)], [(3,), (2, 3), (2, 2, 3)], [(2,), (2, 2), (2, 2, 2)], [(4,), (4, 4), (4, 4, 4)],
    [(1, 1, 2), (1, 3, 1), (4, 1, 1)], [(2,), (2, 1), (2, 1, 1)], [(3,), (), (2, 3)], [(4, 4), (), ()],
])
def test_pydata_three_arg_where(shapes):
    cs = coosparse.random(shapes[0], density=0.5, seed=1).astype(np.bool_)
    xs = coosparse.random(shapes[1], density=0.5, seed=2)
    ys = coosparse.random(shapes[2], density=0.5, seed=3)
    out = coosparse.where(cs, xs, ys)
    assert isinstance(out, COO)
    assert_coo(out, np.where(reference(cs), reference(xs), reference(ys)))


def test_pydata_one_and_two_arg_where():
    s = coosparse.random((2, 3, 4), density=0.5, seed=4)
    for g, e in zip(coosparse.where(s), np.where(reference(s))):
        np.testing.assert_array_equal(g, e)
    with pytest.raises(TypeError):
        coosparse.where(np.ones((2, 3)))
    with pytest.raises(ValueError):
        coosparse.where(s.astype(np.bool_), s)


def test_pydata_nonzero_argwhere():
    s = coosparse.random((2, 3, 4), density=0.5, seed=5)
    x = reference(s)
    got = s.nonzero()
    assert isinstance(got, tuple)
    for g, e in zip(got, x.nonzero()):
        np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(np.argwhere(s), np.argwhere(x))


class TestPydataUnique:
    arr = np.array([[0, 0, 1, 5, 3, 0], [1, 0, 4, 0, 3, 0], [0, 1, 0, 1, 1, 0]], dtype=np.int64)
    arr_empty = np.zeros((5, 5))
    arr_full = np.arange(1, 10)

    @pytest.mark.parametrize("arr", [arr, arr_empty, arr_full])
    @pytest.mark.parametrize("fill_value", [-1, 0, 1])
    def test_unique_counts(self, arr, fill_value):
        values, counts = coosparse.unique_counts(from_dense_fill(arr, fill_value))
        ev, ec = np.unique(arr, return_counts=True)
        np.testing.assert_equal(values, ev)
        np.testing.assert_equal(counts, ec)

    @pytest.mark.parametrize("arr", [arr, arr_empty, arr_full])
    @pytest.mark.parametrize("fill_value", [-1, 0, 1])
    def test_unique_values(self, arr, fill_value):
        np.testing.assert_equal(coosparse.unique_values(from_dense_fill(arr, fill_value)), np.unique(arr))

    def test_unique_values_nan_distinct(self):
        result = coosparse.unique_values(coosparse.from_dense(np.array([np.nan, np.nan])))
        assert result.shape == (2,) and np.isnan(result).all()

    def test_unique_values_nan_fill_value(self):
        arr = COO([[0, 2]], np.array([1.0, 2.0]), (4,), fill_value=np.nan)
        result = coosparse.unique_values(arr)
        assert result.shape == (4,)
        np.testing.assert_equal(result[:2], [1.0, 2.0])
        assert np.isnan(result[2:]).all()

    def test_unique_counts_nan(self):
        result = coosparse.unique_counts(coosparse.from_dense(np.array([np.nan] * 3)))
        assert result.values.shape == (3,) and np.isnan(result.values).all()
        np.testing.assert_equal(result.counts, [1, 1, 1])
        arr = COO([[0, 2]], np.array([1.0, 2.0]), (4,), fill_value=np.nan)
        result = coosparse.unique_counts(arr)
        np.testing.assert_equal(result.values[:2], [1.0, 2.0])
        assert np.isnan(result.values[2:]).all()
        np.testing.assert_equal(result.counts, [1, 1, 1, 1])

    @pytest.mark.parametrize("func", [coosparse.unique_counts, coosparse.unique_values])
    def test_input_validation(self, func):
        with pytest.raises(TypeError):
            func(self.arr)


@pytest.mark.parametrize("arr", [
    np.array([[0, 0, 1, 5, 3, 0], [1, 0, 4, 0, 3, 0], [0, 1, 0, 1, 1, 0]], dtype=np.int64),
    np.array([[[2, 0], [0, 5]], [[1, 0], [4, 0]], [[0, 1], [0, -1]]], dtype=np.float64),
    np.arange(3, 10),
])
@pytest.mark.parametrize("fill_value", [-1, 0, 1, 3])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("stable", [False, True])
def test_pydata_sort(arr, fill_value, axis, descending, stable):
    if axis >= arr.ndim:
        return
    s = from_dense_fill(arr, fill_value)
    out = coosparse.sort(s, axis=axis, descending=descending, stable=stable)
    expected = -np.sort(-arr, axis=axis) if descending else np.sort(arr, axis=axis)
    assert_coo(out, expected)
    assert_coo(s, arr)


@pytest.mark.parametrize("fill_value", [-1, 0, 1])
@pytest.mark.parametrize("descending", [False, True])
def test_pydata_sort_only_fill_value(fill_value, descending):
    arr = np.full((3, 3), fill_value=fill_value)
    out = coosparse.sort(from_dense_fill(arr, fill_value), axis=0, descending=descending)
    assert_coo(out, np.sort(arr, axis=0))


@pytest.mark.parametrize("fill_value", [-1, 0, 1, 3])
@pytest.mark.parametrize("indices,axis", [([1], 0), ([2, 1], 1), ([1, 2, 3], 2), ([2, 3], -1), ([5, 3, 7, 8], None)])
def test_pydata_take(fill_value, indices, axis):
    arr = np.arange(24).reshape((2, 3, 4))
    out = coosparse.take(from_dense_fill(arr, fill_value), np.array(indices), axis=axis)
    assert_coo(out, np.take(arr, indices, axis))
    check_flags(out)
    close(reference(out), np.take(arr, indices, axis))
