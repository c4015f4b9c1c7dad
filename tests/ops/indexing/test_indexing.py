"""a[key] against NumPy on the dense reference: random valid and invalid keys, flags, fast paths,
hybrid and wide shapes; ported pydata/sparse and torch tests."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coosparse
from coosparse import COO
from manip_helpers import assert_coo, check_flags, close, from_dense_fill, reference
from reference import assert_bits
from strategies import coo_parts

# ---------------------------------------------------------------------- random keys (ndindex style)


@st.composite
def index_items(draw, shape):
    """A key for ``shape``: mostly valid, sometimes out of range, too long, mismatched or unbroadcastable.

    The only errors drawn are IndexErrors (out of range, too many indices,
    two ellipses, boolean shape mismatch, arrays that do not broadcast), so
    NumPy's error order does not matter; other error types have their own tests.
    """
    ndim = len(shape)
    nitems = draw(st.integers(0, ndim + 1))
    items = []
    axis = 0
    for _ in range(nitems):
        n = shape[axis] if axis < ndim else 3
        kind = draw(st.sampled_from(["int", "int", "slice", "slice", "slice", "none", "ellipsis",
                                     "intarr", "intarr", "boolarr", "bool"]))
        if kind == "int":
            items.append(draw(st.integers(-n - 1, n)) if draw(st.integers(0, 9)) == 0
                         else draw(st.integers(-n, max(n - 1, -n))))
            axis += 1
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
            step = draw(st.sampled_from([None, 1, 1, 2, 3, -1, -1, -2, -3]))
            items.append(slice(draw(bound), draw(bound), step))
            axis += 1
        elif kind == "none":
            items.append(None)
        elif kind == "ellipsis":
            items.append(Ellipsis)
            axis = max(axis, ndim - (nitems - len(items)))
        elif kind == "intarr":
            ashape = draw(st.sampled_from([(0,), (1,), (2,), (3,), (1, 2), (2, 1), (2, 3)]))
            lo, hi = (-n - 1, n) if draw(st.integers(0, 9)) == 0 else (-n, n - 1)
            if hi < lo:
                lo, hi = 0, 0
            vals = draw(st.lists(st.integers(lo, hi), min_size=int(np.prod(ashape)),
                                 max_size=int(np.prod(ashape))))
            arr = np.array(vals, dtype=np.int64).reshape(ashape)
            items.append(arr if draw(st.booleans()) else arr.tolist())
            axis += 1
        elif kind == "boolarr":
            k = draw(st.integers(1, 2))
            bshape = tuple(shape[axis:axis + k]) or (3,)
            if draw(st.integers(0, 9)) == 0:
                bshape = tuple(b + 1 for b in bshape)
            seed = draw(st.integers(0, 2**31))
            items.append(np.random.default_rng(seed).random(bshape) < 0.5)
            axis += len(bshape)
        else:
            items.append(draw(st.booleans()))
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


@st.composite
def array_and_key(draw, max_sparse_ndim=3):
    indices, values, shape, s, u = draw(coo_parts(max_sparse_ndim=max_sparse_ndim))
    fill = None
    if draw(st.integers(0, 4)) == 0:
        fill = values.dtype.type(True if values.dtype == np.bool_ else (np.nan if values.dtype.kind in "fc" else 1))
    a = COO(indices, values, shape, sorted=s, unique=u, fill_value=fill)
    return a, draw(index_items(shape))


def _compare(a, key, backend):
    dense = reference(a)
    try:
        expected = dense[key]
    except IndexError:
        with pytest.raises(IndexError):
            backend.put(a)[key]
        return
    out = backend.put(a)[key]
    if isinstance(key, tuple) and not key:
        assert isinstance(out, COO) and out.shape == a.shape
        return
    if isinstance(expected, np.ndarray):
        out = backend.get(out)
        assert_coo(out, expected, dtype=a.dtype)
        assert out.is_unique or not a.is_unique
        assert out.fill_value == a.fill_value or np.isnan(out.fill_value)
    else:
        assert not isinstance(out, COO), (key, out)
        assert np.asarray(out).dtype == a.dtype
        close(out, expected)


@settings(max_examples=150)
@given(data=array_and_key())
def test_random_keys_match_numpy(data, backend):
    a, key = data
    _compare(a, key, backend)


@settings(max_examples=60)
@given(data=array_and_key())
def test_random_keys_on_coalesced_arrays(data, backend):
    a, key = data
    _compare(a.coalesce(), key, backend)


@pytest.mark.parametrize("key", [
    1.5, "a", b"a", {"x": 1}, [0.5], np.array([1.0]), (0, 0.5), [[0, 1], "a"], object(),
    (slice(None), [slice(None)]), [[0, 1], [2]], slice(0.5, 2), (slice(None), slice(0, "a")),
])
def test_invalid_keys_raise_what_numpy_raises(key):
    a = coosparse.random((3, 4), nnz=5, seed=0)
    with pytest.raises(Exception) as expected:
        np.zeros((3, 4))[key]
    for x in (a, a.coalesce()):
        with pytest.raises(expected.type):
            x[key]


@pytest.mark.parametrize("key", [slice(0, 2, 0), (0, slice(None, None, 0))])
def test_zero_step_raises_value_error(key):
    a = coosparse.random((3, 4), nnz=5, seed=0)
    with pytest.raises(ValueError):
        np.zeros((3, 4))[key]
    with pytest.raises(ValueError):
        a[key]
    with pytest.raises(ValueError):
        a.coalesce()[key]


def test_setitem_raises_type_error_naming_alternatives():
    a = coosparse.random((3, 4), nnz=5, seed=0)
    with pytest.raises(TypeError, match="immutable.*where.*to_dense"):
        a[0, 1] = 5
    with pytest.raises(TypeError):
        a[:] = 0


# ---------------------------------------------------------------------- fast paths and flags


def _coalesced(shape, nnz, seed=0, dtype=np.float64):
    return coosparse.random(shape, nnz=nnz, seed=seed, sorted=True, dtype=dtype)


def test_sorted_row_slice_is_binary_search_and_keeps_flags(backend):
    a = _coalesced((50, 40), 300)
    d = reference(a)
    for key in [slice(3, 17), slice(None, 5), slice(45, None), slice(-7, -2), slice(10, 10), slice(20, 5)]:
        out = backend.get(backend.put(a)[key])
        assert_coo(out, d[key])
        assert out.is_sorted and out.is_unique
    out = backend.get(backend.put(a)[7])
    assert_coo(out, d[7])
    assert out.is_coalesced


def test_sorted_prefix_narrowing(backend):
    a = _coalesced((6, 7, 8), 150, seed=3)
    d = reference(a)
    for key in [(2, 3), (2, 3, slice(1, 6)), (1, slice(2, 5)), (4, slice(None, None, 2)), (3, 1, 5),
                (2, slice(6, 1, -1)), (5, slice(None, None, -3), 4)]:
        out = backend.put(a)[key]
        if isinstance(d[key], np.ndarray):
            out = backend.get(out)
            assert_coo(out, d[key])
        else:
            close(out, d[key])


def test_flags_of_results():
    a = _coalesced((30, 20), 200)
    assert a[3:9].is_coalesced
    assert a[::2].is_coalesced
    assert a[:, 5:9].is_coalesced
    assert a[None, 2:4, None].is_coalesced
    assert not a[::-1].is_sorted and a[::-1].is_unique
    # arrays on the leading axis: emitted point by point, sorted whatever the order of the points
    assert a[[5, 1, 5, 0]].is_coalesced
    assert a[[4, 2], 3:7].is_coalesced
    assert a[np.array([[1, 2], [3, 0]])].is_coalesced
    # arrays after a slice: not sorted in general
    r = a[:, [5, 1]]
    assert r.is_unique
    check_flags(r)
    # duplicates are never summed by indexing
    u = COO([[1, 1, 2]], np.array([1.0, 2.0, 3.0]), (4,))
    assert u[1:3].nnz == 3 and not u[1:3].is_unique
    assert u[1] == 3.0


def test_advanced_index_on_unsorted_array(backend):
    a = coosparse.random((40, 30), nnz=400, seed=5)
    d = reference(a)
    rng = np.random.default_rng(0)
    for key in [rng.integers(0, 40, 25), (rng.integers(0, 40, 7), rng.integers(0, 30, 7)),
                (slice(2, 30, 3), rng.integers(-30, 30, 9)), (rng.integers(0, 40, (3, 4)), 5),
                (rng.integers(0, 40, 5), slice(None), None)]:
        out = backend.get(backend.put(a)[key])
        assert_coo(out, d[key])


def test_mixed_advanced_placement():
    rng = np.random.default_rng(1)
    for sparse_ndim in range(5):
        a = from_dense_fill(rng.integers(0, 3, (3, 4, 5, 2)) * (rng.random((3, 4, 5, 2)) < 0.4),
                            sparse_ndim=sparse_ndim)
        d = reference(a)
        for key in [(0, slice(None), [1, 2]), ([0, 2], slice(None), [1, 2]), (slice(None), [1, 2], [0, 4]),
                    ([1], 1, slice(None), 0), (slice(None), 0, slice(None), [1, 0]),
                    (Ellipsis, [1, 0], [0, 1]), ([0, 1], [2, 3], [4, 0], [1, 1]), (None, 1, [0, 3], None),
                    (True, 0), (slice(None), False), ([[0], [2]], slice(1, 3), [[1, 2]]),
                    (d[..., 0] > 0), (d[:, :, 0, 0] > 0, 2), (slice(None), d[0, :, :, 0] > 0)]:
            out = a[key]
            assert_coo(out, d[key])


def test_boolean_coo_key():
    a = coosparse.random((6, 5), nnz=12, seed=2)
    mask = coosparse.random((6, 5), nnz=8, seed=3, dtype=np.bool_)
    d, m = reference(a), reference(mask)
    assert_coo(a[mask], d[m])


def test_scalar_results():
    a = COO([[0, 1, 1], [2, 0, 0]], np.array([1.0, 2.0, 5.0]), (2, 3))
    assert a[1, 0] == 7.0 and isinstance(a[1, 0], np.float64)
    assert a[0, 0] == 0.0
    assert a[-1, -3] == 7.0
    f = COO([[0]], np.array([3], dtype=np.int8), (4,), fill_value=-1)
    assert f[2] == -1 and f[2].dtype == np.int8
    assert f.coalesce()[0] == 3
    h = COO([[1]], np.array([[1.0, 2.0]]), (3, 2))
    assert h[1, 1] == 2.0 and h[0, 1] == 0.0
    assert isinstance(h[1], COO) and h[1].shape == (2,)
    z = COO(np.zeros((0, 2), np.int64), np.array([1.5, 2.0]), ())
    assert z[()] is z  # an empty key returns the array (Array API), also when 0-d
    assert reference(z[...]) == 3.5
    assert isinstance(z[...], COO) and z[...].shape == ()
    assert isinstance(h[()], COO) and h[()] is h
    # float16 sums in float32
    t = COO([[0] * 3], np.array([2048, 1, 1], dtype=np.float16), (1,))
    assert t[0] == np.float16(2050)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("vals", [[-0.0], [-0.0, -0.0], [1e4, 1.0, -1e4] + [0.25] * 10, [1e16, 1.0, -1e16] + [1.0] * 10])
def test_scalar_is_the_dense_meaning_bit_for_bit(backend, dtype, vals):
    """The scalar of an all-integer key sums an index's entries as coalesce and to_dense do: in stored
    order from the first entry (a reduction's pairwise or tree order rounds differently past 8
    entries, and its 0 start turns a stored -0.0 into +0.0)."""
    v = np.array(vals, dtype=np.float64)
    v = (v * (1 - 2j) if len(vals) > 2 else v - 0.0j) if np.dtype(dtype).kind == "c" else v
    with np.errstate(over="ignore"):
        v = v.astype(dtype)
    m = len(vals)
    for a in (COO([[1] * m], v, (3,)), COO([[1] * m, [2] * m], v, (2, 4)), COO([[1] * m], v[:, None], (3, 1))):
        a = backend.put(a)
        key = (1,) + (2,) * (a.sparse_ndim - 1) + (0,) * a.dense_ndim
        want = backend.get(a.to_dense())[key]
        for k in (key, tuple(i - n for i, n in zip(key, a.shape))):
            got = a[k]
            assert isinstance(got, np.generic) and got.dtype == dtype
            assert_bits(got, want)
            assert_bits(got, backend.get(a.coalesce()).values[(0,) * (1 + a.dense_ndim)])


def test_pydata_scalar_slicing():
    x = np.array([0, 1])
    s = coosparse.from_dense(x)
    assert np.isscalar(s[0]) and s[0] == x[0]
    assert isinstance(s[0, ...], COO) and s[0, ...].shape == ()
    assert_coo(s[0, ...], x[0, ...])
    assert np.isscalar(s[1]) and s[1] == x[1]
    assert_coo(s[1, ...], x[1, ...])


def test_hybrid_keys_touching_dense_dims():
    rng = np.random.default_rng(4)
    d = rng.integers(-3, 4, (4, 3, 5)) * (rng.random((4, 3, 5)) < 0.5)
    for sparse_ndim in (1, 2):
        a = from_dense_fill(d, sparse_ndim=sparse_ndim)
        for key in [(1, 2), (slice(None), 1, 3), (Ellipsis, [4, 0, 4]), (0, Ellipsis, [1, 1]),
                    (slice(None), slice(None), slice(None, None, -2)), (None, Ellipsis, None),
                    ([3, 0], Ellipsis, [1, 2]), (slice(1, 3), [2, 0], [4, 4])]:
            out = a[key]
            assert_coo(out, d[key])


def test_wide_shape_indexing(backend):
    n = 2**32
    idx = np.array([[0, 5, 5, n - 1, n - 1], [7, 3, n - 2, 0, n - 1]], dtype=np.int64)
    vals = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    for sorted_ in (True, False):
        order = np.arange(5) if sorted_ else np.array([3, 0, 4, 2, 1])
        a = backend.put(COO(idx[:, order], vals[order], (n, n), sorted=sorted_, unique=True))
        r = backend.get(a[5])
        assert r.shape == (n,) and sorted(zip(r.indices[0].tolist(), r.values.tolist())) == [(3, 2.0), (n - 2, 3.0)]
        assert a[n - 1, n - 1] == 5.0 and a[5, 4] == 0.0
        r = backend.get(a[n // 2:, ::-1])
        check_flags(r)
        assert sorted(zip(r.indices[0].tolist(), r.indices[1].tolist(), r.values.tolist())) == [
            (n // 2 - 1, 0, 5.0), (n // 2 - 1, n - 1, 4.0)]
        r = backend.get(a[[n - 1, 5, -1], [0, 3, -1]])
        assert r.shape == (3,)
        assert sorted(zip(r.indices[0].tolist(), r.values.tolist())) == [(0, 4.0), (1, 2.0), (2, 5.0)]
        r = backend.get(a[:, 3])
        assert r.indices.tolist() == [[5]] and r.values.tolist() == [2.0]


# ---------------------------------------------------------------------- ported pydata/sparse tests
PYDATA_SLICES = [
    0, 1, -1, (1, 1, 1), (slice(0, 2),), (slice(None, 2), slice(None, 2)), (slice(1, None), slice(1, None)),
    (slice(None, None),), (slice(None, None, -1),), (slice(None, 2, -1), slice(None, 2, -1)),
    (slice(1, None, 2), slice(1, None, 2)), (slice(None, None, 2),), (slice(None, 2, -1), slice(None, 2, -2)),
    (slice(1, None, 2), slice(1, None, 1)), (slice(None, None, -2),), (0, slice(0, 2)), (slice(0, 1), 0),
    (None, slice(1, 3), 0), (slice(0, 3), None, 0), (slice(1, 2), slice(2, 4)), (slice(1, 2), slice(None, None)),
    (slice(1, 2), slice(None, None), 2), (slice(1, 2, 2), slice(None, None), 2),
    (slice(1, 2, None), slice(None, None, 2), 2), (slice(1, 2, -2), slice(None, None), -2),
    (slice(1, 2, None), slice(None, None, -2), 2), (slice(1, 2, -1), slice(None, None), -1),
    (slice(1, 2, None), slice(None, None, -1), 2), (slice(2, 0, -1), slice(None, None), -1),
    (slice(-2, None, None),), (slice(-1, None, None), slice(-2, None, None)), (Ellipsis, slice(1, 3)),
    (1, Ellipsis, slice(1, 3)), (slice(0, 1), Ellipsis), (Ellipsis, None), (None, Ellipsis), (1, Ellipsis),
    (1, Ellipsis, None), (1, 1, 1, Ellipsis), (Ellipsis, 1, None), ([0, 1],) * 2, ([0, 1], [0, 2]),
    ([0, 0, 0], [0, 1, 2], [1, 2, 1]), (slice(None, 1000)), (slice(None), slice(None, 1000)),
    (slice(None), slice(1000, -1000, -1)), (slice(None), slice(1000, -1000, -50)), (slice(5, 0),),
    (slice(0, 5, -1),), (slice(0, 0, None),),
]
PYDATA_ADVANCED = [
    ([1, 0], 0), (1, [0, 2]), (0, [1, 0], 0), (1, [2, 0], 0), (1, [], 0),
    ([True, False], slice(1, None), slice(-2, None)), (slice(1, None), slice(-2, None), [True, False, True, False]),
    ([1, 0],), (Ellipsis, [2, 1, 3]), (slice(None), [2, 1, 2]), (1, [2, 0, 1]),
]


@pytest.mark.parametrize("index", PYDATA_SLICES + PYDATA_ADVANCED)
def test_pydata_slicing(index):
    s = coosparse.random((2, 3, 4), density=0.5, seed=7)
    for a in (s, s.coalesce()):
        x = reference(a)
        out = a[index]
        if isinstance(x[index], np.ndarray):
            assert_coo(out, x[index])
        else:
            close(out, x[index])


@pytest.mark.parametrize("index", [
    (Ellipsis, Ellipsis), (1, 1, 1, 1), (slice(None),) * 4, 5, -5, "foo", [True, False, False], 0.5, [0.5],
    {"potato": "kartoffel"},
])
def test_pydata_slicing_errors(index):
    # pydata also rejects ([[0, 1]],), a 2-D integer array: NumPy (and coosparse) accept it
    s = coosparse.random((2, 3, 4), density=0.5, seed=7)
    with pytest.raises(IndexError):
        s[index]
    with pytest.raises(IndexError):
        s.coalesce()[index]


# ---------------------------------------------------------------------- ported torch tests
def _gen_sparse(sparse_dims, nnz, sizes, coalesced, seed=0):
    """torch's _gen_sparse: nnz random entries over the sparse dims (duplicates possible), hybrid values."""
    rng = np.random.default_rng(seed)
    sizes = list(sizes)
    idx = np.stack([rng.integers(0, n, nnz) for n in sizes[:sparse_dims]]) if sparse_dims else \
        np.zeros((0, nnz), np.int64)
    vals = rng.standard_normal((nnz,) + tuple(sizes[sparse_dims:])) + 1j * rng.standard_normal(
        (nnz,) + tuple(sizes[sparse_dims:]))
    a = COO(idx, vals, tuple(sizes))
    return a.coalesce() if coalesced else a


@pytest.mark.parametrize("coalesced", [True, False])
def test_torch_select(coalesced, backend):
    sizes = [5, 7, 11, 13, 17]
    cases = [(1, 0, i) for i in range(sizes[0])]
    cases += [(3, d, i) for d in range(3) for i in range(sizes[d])]
    cases += [(1, d, i) for d in range(1, 3) for i in range(sizes[d])]
    for sparse_dims, dim, i in cases:
        x = _gen_sparse(sparse_dims, 10, sizes, coalesced, seed=dim * 31 + i)
        out = backend.get(backend.put(x)[(slice(None),) * dim + (i,)])
        assert_coo(out, np.take(reference(x), i, axis=dim))
    x = _gen_sparse(1, 10, sizes, coalesced)
    with pytest.raises(IndexError):
        x[sizes[0] + 1]


@pytest.mark.parametrize("coalesced", [True, False])
def test_torch_index_select(coalesced, backend):
    sizes = [5, 7, 11, 13, 17]
    for d in range(len(sizes)):
        for index in [0, sizes[d] - 1, [0, sizes[d] // 2, sizes[d] - 1]]:
            for sparse_dims in (1, len(sizes) // 2, len(sizes)):
                x = _gen_sparse(sparse_dims, 10, sizes, coalesced, seed=d)
                idx = np.atleast_1d(np.array(index))
                out = backend.get(coosparse.take(backend.put(x), idx, axis=d))
                assert_coo(out, np.take(reference(x), idx, axis=d))


@pytest.mark.parametrize("coalesced", [True, False])
def test_torch_index_select_exhaustive_small(coalesced):
    import itertools

    sizes = (3, 3, 4)
    rng = np.random.default_rng(0)
    dense = rng.standard_normal(sizes) * (rng.random(sizes) < 0.6)
    t = coosparse.from_dense(dense)
    t = t if coalesced else COO(t.indices[:, ::-1], t.values[::-1], t.shape)
    for d in range(3):
        for idx in itertools.product(range(-sizes[d], 0), repeat=sizes[d]):
            idx = np.array(idx)
            assert_coo(coosparse.take(t, idx, axis=d), np.take(dense, idx + sizes[d], axis=d))


def test_torch_index_select_empty_and_noncontiguous_index():
    rng = np.random.default_rng(0)
    t = rng.standard_normal((5, 5))
    s = coosparse.from_dense(t)
    assert_coo(coosparse.take(s, np.array([], dtype=np.int64), axis=0), t[[]])
    idx = rng.integers(0, 5, (10, 2))[:, 0]
    for sizes in [(10, 10), (10, 100, 100)]:
        dense = rng.standard_normal(sizes)
        assert_coo(coosparse.take(coosparse.from_dense(dense), idx, axis=0), dense[idx])


def test_torch_narrow():
    shape = [3, 3, 4, 2]
    for sparse_dims in (4, 2):
        x = _gen_sparse(sparse_dims, 19, shape, False, seed=sparse_dims)
        d = reference(x)
        for dim, n in enumerate(shape):
            for start in range(n):
                for length in range(n - start):
                    key = (slice(None),) * dim + (slice(start, start + length),)
                    assert_coo(x[key], d[key])


@pytest.mark.parametrize("m", [0, 1, 4095, 4096, 6000])
@pytest.mark.parametrize("rows_dtype", [np.int64, np.int32, np.uint64, np.int16])
def test_whole_rows_through_the_row_pointer(backend, m, rows_dtype):
    """a[rows] of a sorted array, rows whole: the rows' spans from the row pointer (NumPy's passes
    below 4,096 rows, one kernel pass from there), any order, repeats, negative ids, empty rows,
    every kind of value (hybrid, complex, float16, bool); rows outside raise IndexError."""
    rng = np.random.default_rng(m)
    nrows = 1500
    lengths = rng.integers(0, 6, nrows)
    lengths[rng.random(nrows) < 0.3] = 0
    cols = np.concatenate([np.sort(rng.choice(40, k, replace=False)) for k in lengths])
    idx = np.stack([np.repeat(np.arange(nrows), lengths), cols])
    n = idx.shape[1]
    rows = rng.integers(0, nrows, m)
    if np.dtype(rows_dtype).kind == "i":
        rows = np.where(rng.random(m) < 0.3, rows - nrows, rows)  # negative ids count from the end
    rows[: m // 4] = rows[m // 4: 2 * (m // 4)]  # repeats
    rows = rows.astype(rows_dtype)
    for vals, dense in [(rng.standard_normal(n), ()), ((rng.random((n, 2)) + 1j).astype(np.complex64), (2,)),
                        (rng.standard_normal(n).astype(np.float16), ()), (rng.random(n) < 0.5, ())]:
        a = COO(idx, vals, (nrows, 40) + dense, sorted=True, unique=True)
        d = a.to_dense()
        x = backend.put(a)
        for key in [rows, (rows, slice(None)), (rows, Ellipsis)]:
            on_device = tuple(backend.put(k) if isinstance(k, np.ndarray) else k for k in key) \
                if isinstance(key, tuple) else backend.put(key)
            got = backend.get(x[on_device])
            want = d[key]
            assert got.shape == want.shape and got.dtype == want.dtype
            assert got.to_dense().tobytes() == want.tobytes()
    if m:
        for bad in (nrows, -nrows - 1):
            key = np.array(rows, dtype=np.int64)
            key[m // 2] = bad
            with pytest.raises(IndexError, match=f"index {bad} is out of bounds for axis 0"):
                backend.put(a)[backend.put(key)]


@pytest.mark.parametrize("m", [63, 64, 5000])
@pytest.mark.parametrize("dense", [(), (3,)])
@pytest.mark.parametrize("shape", [(700, 50), (700,), (700, 9, 11)])
def test_row_list_fast_path_is_the_general_route(m, dense, shape):
    """``a[rows]`` by a 1-D signed NumPy row list (the short path from 64 rows) gives the same
    entries, shape and flags as the general route through ``a[rows, ...]``, on both sides of the
    row count, for 1-D, 2-D and 3-D sparse shapes with and without dense dimensions."""
    rng = np.random.default_rng(m + len(shape))
    dense_ref = rng.random(shape + dense) * (rng.random(shape)[(...,) + (None,) * len(dense)] < 0.2)
    a = coosparse.from_dense(dense_ref, sparse_ndim=len(shape))
    assert a.is_sorted
    rows = rng.integers(-700, 700, m).astype(np.int32)
    fast, general = a[rows], a[rows, ...]
    assert fast.shape == general.shape == (m,) + a.shape[1:]
    np.testing.assert_array_equal(fast.indices, general.indices)
    assert fast.values.tobytes() == general.values.tobytes()
    assert (fast.is_sorted, fast.is_unique) == (general.is_sorted, general.is_unique) == (True, True)
    np.testing.assert_array_equal(fast.to_dense(), dense_ref[rows])


def test_slices_of_an_axis_of_2_63(backend):
    # an axis of 2**63 elements: a slice's length or its bound 2**63 overflowed (len(range) is a
    # C ssize_t; the binary search took its bounds as int64), so a[::-1], a[::2] and flip raised
    n = 2**63
    idx = [0, 5, 2**62, n - 2, n - 1]
    for srt in (True, False):
        a = backend.put(COO([idx], np.arange(1.0, 6.0), (n,), sorted=srt, unique=True))
        for s in [slice(None, None, -1), slice(None, None, 2), slice(1, None, 2**62), slice(-2, None),
                  slice(None, None, -2**62), slice(2**62, n)]:
            start, stop, step = s.indices(n)
            r = range(start, stop, step)
            g = backend.get(a[s])
            assert g.shape == (max(0, (stop - start + step + (-1 if step > 0 else 1)) // step),)
            want = sorted((r.index(i), v) for i, v in zip(idx, range(1, 6)) if i in r)
            assert sorted(zip(g.indices[0].tolist(), g.values.tolist())) == want, s
        f = backend.get(coosparse.flip(a))
        assert sorted(zip(f.indices[0].tolist(), f.values.tolist())) == sorted(
            (n - 1 - i, float(v)) for i, v in zip(idx, range(1, 6)))
    b = coosparse.flip(COO([[0, 2**62], [1, 2**62 + 3]], np.array([1.0, 2.0]), (n, n), sorted=True))
    assert sorted(map(tuple, b.indices.T.tolist())) == [(n - 1 - 2**62, n - 4 - 2**62), (n - 1, n - 2)]
