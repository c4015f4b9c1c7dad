"""Joining and rearranging against NumPy: concatenate/stack/unstack, flip, roll, tile, repeat, pad,
tril/triu, diagonal, kron; ported pydata/sparse and torch tests."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coosparse
from coosparse import COO
from manip_helpers import assert_coo, from_dense_fill, reference
from strategies import values_of


@st.composite
def same_layout(draw, count=3, vary_axis=None):
    """``count`` COO arrays of one ndim / hybrid layout / fill (shapes may differ along ``vary_axis``)."""
    ndim = draw(st.integers(1, 4))
    sparse_ndim = draw(st.integers(1, ndim))
    shape = [draw(st.integers(0 if draw(st.booleans()) else 1, 4)) for _ in range(ndim)]
    dtype = draw(st.sampled_from([np.float64, np.int32, np.bool_, np.complex64, np.float16, np.uint8]))
    fill = None if draw(st.integers(0, 3)) else np.dtype(dtype).type(1)
    out = []
    for i in range(count):
        sh = list(shape)
        if vary_axis is not None:
            sh[vary_axis % ndim] = draw(st.integers(0, 4))
        rng = np.random.default_rng(draw(st.integers(0, 2**31)))
        total = int(np.prod(sh[:sparse_ndim]))
        nnz = draw(st.integers(0, 12)) if total else 0
        flat = rng.integers(0, max(total, 1), nnz)
        if draw(st.booleans()):
            flat = np.unique(flat)
            idx = np.array(np.unravel_index(flat, sh[:sparse_ndim]), dtype=np.int64).reshape(sparse_ndim, -1)
            a = COO(idx, values_of(rng, idx.shape[1], sh[sparse_ndim:], dtype), tuple(sh),
                    sorted=True, unique=True, fill_value=fill)
        else:
            idx = np.array(np.unravel_index(flat, sh[:sparse_ndim]), dtype=np.int64).reshape(sparse_ndim, -1)
            a = COO(idx, values_of(rng, nnz, sh[sparse_ndim:], dtype), tuple(sh), fill_value=fill)
        out.append(a)
    return out


@settings(max_examples=60)
@given(data=st.data())
def test_concatenate_matches_numpy(data, backend):
    axis = data.draw(st.integers(-4, 3))
    arrays = data.draw(same_layout(count=data.draw(st.integers(1, 4)), vary_axis=axis))
    axis = axis % arrays[0].ndim - (arrays[0].ndim if data.draw(st.booleans()) else 0)
    expected = np.concatenate([reference(a) for a in arrays], axis=axis)
    out = backend.get(coosparse.concatenate([backend.put(a) for a in arrays], axis=axis))
    assert_coo(out, expected)
    if all(a.is_sorted for a in arrays):
        assert out.is_sorted
    if all(a.is_unique for a in arrays):
        assert out.is_unique
    assert_coo(coosparse.concat(arrays, axis=None), np.concatenate([reference(a) for a in arrays], axis=None))


@settings(max_examples=40)
@given(data=st.data())
def test_stack_unstack_match_numpy(data, backend):
    arrays = data.draw(same_layout(count=data.draw(st.integers(1, 3))))
    axis = data.draw(st.integers(-arrays[0].ndim - 1, arrays[0].ndim))
    out = backend.get(coosparse.stack([backend.put(a) for a in arrays], axis=axis))
    assert_coo(out, np.stack([reference(a) for a in arrays], axis=axis))
    a = arrays[0]
    ax = data.draw(st.integers(-a.ndim, a.ndim - 1))
    parts = coosparse.unstack(backend.put(a), axis=ax)
    expected = np.unstack(reference(a), axis=ax)
    assert len(parts) == len(expected)
    for p, e in zip(parts, expected):
        assert_coo(backend.get(p), e)
        assert p.is_sorted or not a.is_sorted


@settings(max_examples=40)
@given(data=st.data())
def test_flip_roll_tile_repeat_pad(data, backend):
    (a,) = data.draw(same_layout(count=1))
    d = reference(a)
    x = backend.put(a)
    axes = data.draw(st.sampled_from([None, 0, -1] + ([(0, -1)] if a.ndim > 1 else [])))
    assert_coo(backend.get(coosparse.flip(x, axis=axes)), np.flip(d, axis=axes))
    shift = data.draw(st.integers(-7, 7))
    rax = data.draw(st.sampled_from([None, 0, -1] + ([(0, -1)] if a.ndim > 1 else [])))
    rshift = shift if not isinstance(rax, tuple) else (shift, 1 - shift)
    r = backend.get(coosparse.roll(x, rshift, axis=rax))
    assert_coo(r, np.roll(d, rshift, axis=rax))
    if rax is not None:
        assert r.is_sorted == a.is_sorted
    reps = tuple(data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=a.ndim + 1)))
    t = backend.get(coosparse.tile(x, reps))
    assert_coo(t, np.tile(d, reps))
    if a.is_sorted:
        assert t.is_sorted or t.nnz <= 1
    rep_axis = data.draw(st.sampled_from([None, 0, -1]))
    n = d.size if rep_axis is None else d.shape[rep_axis]
    repeats = data.draw(st.one_of(st.integers(0, 3), st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    rp = backend.get(coosparse.repeat(x, np.asarray(repeats), axis=rep_axis))
    assert_coo(rp, np.repeat(d, repeats, axis=rep_axis))
    if a.is_sorted and rep_axis is not None:
        assert rp.is_sorted
    pw = data.draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=a.ndim, max_size=a.ndim))
    p = backend.get(coosparse.pad(x, pw, constant_values=a.fill_value))
    assert_coo(p, np.pad(d, pw, constant_values=a.fill_value))
    assert p.is_sorted or not a.is_sorted


@settings(max_examples=40)
@given(data=st.data())
def test_triangles_and_diagonal(data, backend):
    (a,) = data.draw(same_layout(count=1))
    if a.ndim < 2:
        a = coosparse.expand_dims(a, 0)
    a = a if a.fill_value == 0 else COO(a.indices, a.values, a.shape, sorted=a.is_sorted, unique=a.is_unique)
    d = reference(a)
    k = data.draw(st.integers(-3, 3))
    x = backend.put(a)
    assert_coo(backend.get(coosparse.tril(x, k)), np.tril(d, k))
    assert_coo(backend.get(coosparse.triu(x, k)), np.triu(d, k))
    a1, a2 = data.draw(st.permutations(range(a.ndim)))[:2]
    out = backend.get(coosparse.diagonal(x, k, a1, a2))
    assert_coo(out, np.diagonal(d, k, a1, a2))


def test_concatenate_flags_and_merge():
    rng = np.random.default_rng(0)
    parts = [coosparse.random((50, 30 + i), nnz=200, seed=i, sorted=True) for i in range(4)]
    out = coosparse.concatenate(parts, axis=1)
    assert out.is_coalesced
    assert_coo(out, np.concatenate([reference(p) for p in parts], axis=1))
    out = coosparse.concatenate([coosparse.random((50, 30), nnz=200, seed=i, sorted=True) for i in range(3)])
    assert out.is_coalesced
    unsorted = [COO(p.indices[:, rng.permutation(p.nnz)], p.values, p.shape, unique=True) for p in parts]
    out = coosparse.concatenate(unsorted, axis=1)
    assert not out.is_sorted and out.is_unique
    # many pieces: merged by a sort (same order)
    many = [coosparse.random((5, 3), nnz=4, seed=i, sorted=True) for i in range(20)]
    out = coosparse.concatenate(many, axis=1)
    assert out.is_coalesced
    assert_coo(out, np.concatenate([reference(p) for p in many], axis=1))


@pytest.mark.parametrize("npieces", [2, 4, 5, 9])
@pytest.mark.parametrize("layout", ["matrix", "hybrid", "3d", "duplicates"])
def test_concatenate_second_axis_by_rows(npieces, layout, backend):
    """Sorted pieces along axis 1 join row by row through their row pointers (four pieces per
    pass): the merge's result and order, the result's row pointer cached, empty rows and pieces."""
    rng = np.random.default_rng(npieces)
    pieces = []
    for i in range(npieces):
        shape = (40, 3 + i) + ((2,) if layout == "hybrid" else (5,) if layout == "3d" else ())
        sparse_ndim = 3 if layout == "3d" else 2
        nnz = 0 if i == 1 else int(rng.integers(1, 60))
        flat = np.sort(rng.integers(0, int(np.prod(shape[:sparse_ndim])), nnz))
        if layout != "duplicates":
            flat = np.unique(flat)
        idx = np.array(np.unravel_index(flat, shape[:sparse_ndim]), dtype=np.int64).reshape(sparse_ndim, -1)
        vals = rng.standard_normal((idx.shape[1],) + shape[sparse_ndim:])
        pieces.append(COO(idx, vals, shape, sorted=True, unique=layout != "duplicates"))
    res = coosparse.concatenate([backend.put(p) for p in pieces], axis=1)
    assert res._cached_companion(("row_pointer", 1, 40)) is not None  # (the pieces' pointers, summed)
    pointer = backend.get(res.row_pointer())
    out = backend.get(res)
    assert out.is_sorted and out.is_unique == (layout != "duplicates")
    expected = np.concatenate([p.to_dense() for p in pieces], axis=1)
    np.testing.assert_array_equal(out.to_dense(), expected)
    # the merge's order exactly: row by row, pieces in turn, each piece's order kept
    keys = np.concatenate([p.indices[0] for p in pieces])
    order = np.argsort(keys, kind="stable")
    offs = np.cumsum([0] + [p.shape[1] for p in pieces])
    idx = np.concatenate([p.indices + np.eye(p.indices.shape[0], dtype=np.int64)[1][:, None] * o
                          for p, o in zip(pieces, offs)], axis=1)
    np.testing.assert_array_equal(out.indices, idx[:, order])
    np.testing.assert_array_equal(out.values, np.concatenate([p.values for p in pieces])[order])
    np.testing.assert_array_equal(pointer, np.searchsorted(out.indices[0], np.arange(41)))


def test_concatenate_second_axis_refuses_a_lying_sorted_flag():
    a = COO([[0, 2, 1], [0, 1, 2]], np.ones(3), (3, 3), sorted=True, unique=True, check=False)
    b = coosparse.random((3, 3), nnz=4, seed=0, sorted=True)
    with pytest.raises(ValueError, match="sorted"):
        coosparse.concatenate([b, a], axis=1)


def test_concatenate_dense_axis_and_layouts():
    d1 = np.arange(24.0).reshape(2, 3, 4) % 3
    d2 = np.arange(12.0).reshape(2, 3, 2) % 2
    a, b = from_dense_fill(d1, sparse_ndim=2), from_dense_fill(d2, sparse_ndim=2)
    out = coosparse.concatenate([a, b], axis=2)
    assert out.dense_ndim == 1 and out.is_coalesced
    assert_coo(out, np.concatenate([d1, d2], axis=2))
    c = from_dense_fill(d2, sparse_ndim=3)
    assert_coo(coosparse.concatenate([a, c], axis=2), np.concatenate([d1, d2], axis=2))
    f1, f2 = from_dense_fill(d1, fill=1.0, sparse_ndim=1), from_dense_fill(d2, fill=1.0, sparse_ndim=1)
    out = coosparse.concatenate([f1, f2], axis=-1)
    assert out.fill_value == 1.0
    assert_coo(out, np.concatenate([d1, d2], axis=-1))


def test_concatenate_errors():
    a = coosparse.random((3, 4), nnz=3, seed=0)
    with pytest.raises(ValueError):
        coosparse.concatenate([])
    # a dense operand joins as a COO of the others' fill (as np.concatenate takes array_likes)
    np.testing.assert_array_equal(coosparse.concatenate([a, a.to_dense()]).to_dense(),
                                  np.concatenate([a.to_dense(), a.to_dense()]))
    with pytest.raises(TypeError, match="unsupported"):
        coosparse.concatenate([a, object()])
    with pytest.raises(ValueError):
        coosparse.concatenate([a, coosparse.random((3, 5), nnz=3, seed=0)], axis=0)
    with pytest.raises(ValueError):
        coosparse.concatenate([a, coosparse.random((3, 4, 1), nnz=3, seed=0)])
    with pytest.raises(ValueError, match="fill"):
        coosparse.concatenate([a, COO(a.indices, a.values, a.shape, fill_value=1.0)])
    with pytest.raises(ValueError):
        coosparse.stack([a, coosparse.random((4, 3), nnz=3, seed=0)])
    assert coosparse.concatenate([a, a.astype(np.float32)]).dtype == np.float64


def test_roll_flags_and_sorted_merge(backend):
    a = coosparse.random((20, 30, 4), nnz=300, seed=3, sorted=True)
    d = reference(a)
    for shift, axis in [(7, 0), (-4, 1), (3, 2), ((1, 2), (0, 1)), (45, None)]:
        out = backend.get(coosparse.roll(backend.put(a), shift, axis=axis))
        assert_coo(out, np.roll(d, shift, axis=axis))
        assert out.is_coalesced


def test_repeat_and_tile_errors():
    a = coosparse.random((3, 4), nnz=3, seed=0)
    with pytest.raises(ValueError):
        coosparse.repeat(a, [1, 2], axis=0)
    with pytest.raises(ValueError):
        coosparse.repeat(a, -1, axis=0)
    with pytest.raises(ValueError):
        coosparse.repeat(a, 1.5)
    with pytest.raises(ValueError):
        coosparse.tile(a, (-1,))


def test_pad_errors():
    a = coosparse.random((3, 4), nnz=3, seed=0)
    with pytest.raises(ValueError):
        coosparse.pad(a, 1, constant_values=2)
    with pytest.raises(NotImplementedError):
        coosparse.pad(a, 1, mode="edge")
    with pytest.raises(ValueError):
        coosparse.pad(a, ((1, 2), (1, 2), (1, 1)))
    with pytest.raises(ValueError):
        coosparse.pad(a, -1)


def test_triangles_need_zero_fill():
    a = COO([[0], [1]], np.array([1.0]), (2, 2), fill_value=1.0)
    with pytest.raises(ValueError, match="fill"):
        coosparse.tril(a)
    with pytest.raises(ValueError):
        coosparse.triu(coosparse.random((3,), nnz=1, seed=0))


def test_kron(backend):
    for sa, sb in [((2, 3), (4, 5)), ((3,), (2, 4)), ((2, 3, 4), (2,)), ((5,), (4,))]:
        a = coosparse.random(sa, density=0.5, seed=1)
        b = coosparse.random(sb, density=0.5, seed=2)
        out = backend.get(coosparse.kron(backend.put(a), backend.put(b)))
        assert_coo(out, np.kron(reference(a), reference(b)))
    a, b = coosparse.random((5,), nnz=3, seed=1, sorted=True), coosparse.random((4,), nnz=2, seed=2, sorted=True)
    assert coosparse.kron(a, b).is_coalesced


def test_numpy_functions_dispatch():
    a = coosparse.random((4, 5), nnz=8, seed=4, sorted=True)
    d = reference(a)
    assert_coo(np.concatenate([a, a], axis=1), np.concatenate([d, d], axis=1))
    assert_coo(np.concat([a, a]), np.concat([d, d]))
    assert_coo(np.stack([a, a], axis=2), np.stack([d, d], axis=2))
    assert_coo(np.flip(a, 1), np.flip(d, 1))
    assert_coo(np.roll(a, 3), np.roll(d, 3))
    assert_coo(np.tile(a, 2), np.tile(d, 2))
    assert_coo(np.repeat(a, 2, axis=1), np.repeat(d, 2, axis=1))
    assert_coo(np.pad(a, 1), np.pad(d, 1))
    assert_coo(np.tril(a), np.tril(d))
    assert_coo(np.triu(a, 1), np.triu(d, 1))
    assert_coo(np.diagonal(a), np.diagonal(d))
    assert_coo(np.kron(a, d[:2, :2]), np.kron(d, d[:2, :2]))
    parts = np.unstack(a, axis=1)
    assert len(parts) == 5


# ---------------------------------------------------------------------- ported pydata/sparse tests
def test_pydata_concatenate():
    for shapes, axis in [([(2, 3, 4), (5, 3, 4), (4, 3, 4)], 0), ([(5, 3, 1), (5, 3, 3), (5, 3, 2)], 2),
                         ([(5, 3, 1), (5, 3, 3), (5, 3, 2)], -1)]:
        xs = [coosparse.random(s, density=0.5, seed=i) for i, s in enumerate(shapes)]
        assert_coo(coosparse.concatenate(xs, axis=axis), np.concatenate([reference(x) for x in xs], axis=axis))


@pytest.mark.parametrize("func", [coosparse.stack, coosparse.concatenate])
@pytest.mark.parametrize("axis", [0, 1])
def test_pydata_concatenate_mixed(func, axis):
    # adapted: pydata refuses a dense operand; coosparse joins it as a COO (as np.concatenate takes
    # array_likes), so the result is NumPy's on the dense meanings
    s = coosparse.random((10, 10), density=0.5, seed=1)
    npf = np.stack if func is coosparse.stack else np.concatenate
    assert_coo(func([reference(s), s, s], axis=axis), npf([reference(s)] * 3, axis=axis))


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4), (5, 2)])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_pydata_stack(shape, axis):
    xs = [coosparse.random(shape, density=0.5, seed=i) for i in range(3)]
    assert_coo(coosparse.stack(xs, axis=axis), np.stack([reference(x) for x in xs], axis=axis))


def test_pydata_large_concat_stack():
    xs = COO(np.array([[255]], dtype=np.uint8), np.array([1], dtype=np.uint8), (256,), sorted=True, unique=True)
    x = reference(xs)
    assert_coo(coosparse.stack([xs, xs]), np.stack([x, x]))
    assert_coo(coosparse.concatenate((xs, xs)), np.concatenate((x, x)))


@pytest.mark.parametrize("shape, k", [((3, 4), 0), ((3, 4, 5), 1), ((4, 2), -1), ((2, 4), -2), ((4, 4), 1000)])
def test_pydata_triul(shape, k):
    s = coosparse.random(shape, density=0.5, seed=2)
    x = reference(s)
    assert_coo(coosparse.triu(s, k), np.triu(x, k))
    assert_coo(coosparse.tril(s, k), np.tril(x, k))


class TestPydataRoll:
    @pytest.mark.parametrize("shift", [0, 2, -2, 20, -20])
    def test_1d(self, shift):
        xs = coosparse.random((100,), density=0.5, seed=3)
        assert_coo(coosparse.roll(xs, shift), np.roll(reference(xs), shift))

    @pytest.mark.parametrize("shift", [0, 2, -2, 20, -20])
    @pytest.mark.parametrize("ax", [None, 0, 1, (0, 1)])
    def test_2d(self, shift, ax):
        xs = coosparse.random((10, 10), density=0.5, seed=4)
        assert_coo(coosparse.roll(xs, shift, axis=ax), np.roll(reference(xs), shift, axis=ax))

    @pytest.mark.parametrize("shift", [(0, 0), (1, -1), (-1, 1), (10, -10)])
    @pytest.mark.parametrize("ax", [(0, 1), (0, 2), (1, 2), (-1, 1)])
    def test_multiaxis(self, shift, ax):
        xs = coosparse.random((9, 9, 9), density=0.5, seed=5)
        assert_coo(coosparse.roll(xs, shift, axis=ax), np.roll(reference(xs), shift, axis=ax))

    @pytest.mark.parametrize("shift", [0, 2, -2, 20, -20])
    @pytest.mark.parametrize("ax", [None, 0, 1, (0, 1)])
    def test_original_is_unchanged(self, shift, ax):
        xs = coosparse.random((10, 10), density=0.5, seed=6)
        before = (xs.indices.copy(), xs.values.copy())
        coosparse.roll(xs, shift, axis=ax)
        assert np.array_equal(xs.indices, before[0]) and np.array_equal(xs.values, before[1])

    def test_empty(self):
        x = np.array([])
        assert_coo(coosparse.roll(coosparse.from_dense(x), 1), np.roll(x, 1))

    @pytest.mark.parametrize("args", [(1, [[0, 1]]), ([[0, 1]], [0, 1]), ([[0, 1], [0, 1]], [0, 1])])
    def test_valerr(self, args):
        # pydata also refuses ((1, 1), 0); NumPy rolls axis 0 twice there, and so does coosparse
        x = coosparse.random((2, 2, 2), density=1, seed=7)
        with pytest.raises((ValueError, TypeError)):
            coosparse.roll(x, *args)


def test_pydata_diagonal():
    a = coosparse.random((4, 4), density=0.5, seed=8)
    for offset in (0, 1, 2):
        assert_coo(coosparse.diagonal(a, offset=offset), np.diagonal(reference(a), offset=offset))
    a = coosparse.random((4, 5, 4, 6), density=0.5, seed=9)
    for offset in (0, 1, 2):
        assert_coo(coosparse.diagonal(a, offset=offset, axis1=0, axis2=2),
                   np.diagonal(reference(a), offset=offset, axis1=0, axis2=2))


@pytest.mark.parametrize("pad_width", [2, (2, 1), ((2), (1)), ((1, 2), (4, 5), (7, 8))])
@pytest.mark.parametrize("constant_values", [0, 1, 150, np.nan])
def test_pydata_pad_valid(pad_width, constant_values):
    y = coosparse.random((50, 50, 3), density=0.15, seed=10)
    y = COO(y.indices, y.values, y.shape, sorted=y.is_sorted, unique=y.is_unique, fill_value=constant_values)
    x = reference(y)
    assert_coo(np.pad(y, pad_width=pad_width, constant_values=constant_values),
               np.pad(x, pad_width=pad_width, constant_values=constant_values))


@pytest.mark.parametrize("constant_values", [150, 2, (1, 2)])
def test_pydata_pad_invalid(constant_values):
    y = coosparse.random((50, 50, 3), density=0.15, seed=11)
    with pytest.raises(ValueError):
        np.pad(y, ((2, 1), (5, 7)), constant_values=constant_values)


@pytest.mark.parametrize("axis", [None, -1, 0, 1, 2, (0, 1), (2, 0)])
def test_pydata_flip(axis):
    arr = np.arange(24).reshape((2, 3, 4))
    assert_coo(coosparse.flip(coosparse.from_dense(arr), axis=axis), np.flip(arr, axis=axis))


@pytest.mark.parametrize("ndim", range(1, 5))
@pytest.mark.parametrize("repeats", [1, 2, 3])
def test_pydata_repeat(ndim, repeats):
    rng = np.random.default_rng(ndim)
    a = rng.integers(1, 10, size=tuple(rng.integers(1, 4) for _ in range(ndim)))
    s = coosparse.from_dense(a)
    for axis in [*range(-ndim, ndim), None]:
        assert_coo(coosparse.repeat(s, repeats=repeats, axis=axis), np.repeat(a, repeats=repeats, axis=axis))


@pytest.mark.parametrize("arr,reps", [
    (np.array([1, 2, 3]), (3,)), (np.array([4, 5, 6, 7]), 3), (np.array(1), 3), (np.array([[1, 2], [3, 4]]), (2, 2)),
    (np.array([[[1], [2]], [[3], [4]]]), (2, 1, 2)), (np.random.default_rng(0).integers(0, 10, (2, 1, 3)), (2, 2, 2)),
    (np.random.default_rng(1).integers(0, 5, (1, 3, 1, 2)), (2, 1, 3, 1)),
])
def test_pydata_tile(arr, reps):
    assert_coo(coosparse.tile(coosparse.from_dense(arr), reps), np.tile(arr, reps))
    assert isinstance(coosparse.tile(np.eye(3), 2), COO)


@pytest.mark.parametrize("ndim", range(1, 5))
def test_pydata_unstack(ndim):
    rng = np.random.default_rng(42)
    a = rng.integers(0, 10, size=tuple(rng.integers(2, 5) for _ in range(ndim)))
    s = coosparse.from_dense(a)
    for axis in range(-ndim, ndim):
        parts = coosparse.unstack(s, axis=axis)
        expected = np.moveaxis(a, axis, 0)
        assert len(parts) == expected.shape[0]
        for p, e in zip(parts, expected):
            assert_coo(p, e)


@pytest.mark.parametrize("axis", [-10, 10, 100, -100])
def test_pydata_unstack_invalid_axis(axis):
    with pytest.raises(ValueError):
        coosparse.unstack(coosparse.from_dense(np.arange(6).reshape(2, 3)), axis=axis)


def test_pydata_unstack_invalid_type():
    with pytest.raises(TypeError):
        coosparse.unstack(np.arange(6).reshape(2, 3), axis=0)


@pytest.mark.parametrize("a_ndim", [1, 2, 3])
@pytest.mark.parametrize("b_ndim", [1, 2, 3])
def test_pydata_kron(a_ndim, b_ndim):
    sa = coosparse.random((2, 3, 4)[:a_ndim], density=0.5, seed=1)
    sb = coosparse.random((5, 6, 7)[:b_ndim], density=0.5, seed=2)
    a, b = reference(sa), reference(sb)
    sol = np.kron(a, b)
    assert_coo(coosparse.kron(sa, sb), sol)
    assert_coo(coosparse.kron(sa, b), sol)
    assert_coo(coosparse.kron(a, sb), sol)
    with pytest.raises(ValueError):
        coosparse.kron(a, b)


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_pydata_kron_scalar(ndim):
    sa = coosparse.random((3, 4, 5)[:ndim], density=0.5, seed=3)
    scalar = np.array(5)
    sol = np.kron(reference(sa), scalar)
    assert_coo(coosparse.kron(sa, scalar), sol)
    assert_coo(coosparse.kron(scalar, sa), sol)


# ---------------------------------------------------------------------- ported torch test
@pytest.mark.parametrize("coalesced", [True, False])
def test_torch_cat(coalesced, backend):
    def gen(sparse_dims, nnz, sizes, seed):
        rng = np.random.default_rng(seed)
        idx = np.stack([rng.integers(0, n, nnz) for n in sizes[:sparse_dims]])
        vals = rng.standard_normal((nnz,) + tuple(sizes[sparse_dims:])) + 1j * rng.standard_normal(
            (nnz,) + tuple(sizes[sparse_dims:]))
        a = COO(idx, vals, tuple(sizes))
        return a.coalesce() if coalesced else a

    def check(shapes, dim):
        inputs = [gen(*s, seed=i) for i, s in enumerate(shapes)]
        out = backend.get(coosparse.concatenate([backend.put(x) for x in inputs], axis=dim))
        assert_coo(out, np.concatenate([reference(x) for x in inputs], axis=dim))

    check([(3, 10, [2, 3, 4]), (3, 10, [2, 1, 4]), (3, 10, [2, 4, 4])], 1)
    with pytest.raises(ValueError):
        check([(3, 10, [2, 3, 4]), (3, 10, [2, 1, 4])], 0)
    check([(2, 10, [2, 3, 4]), (2, 10, [2, 1, 4]), (2, 10, [2, 4, 4])], 1)
    check([(2, 10, [2, 3, 4]), (2, 10, [2, 3, 7])], 2)
    check([(1, 10, [2, 3, 4]), (1, 10, [2, 3, 4])], 1)
    check([(1, 10, [2, 3, 4]), (1, 10, [2, 3, 4])], 2)
    # torch refuses mismatched sparse dims; coosparse joins them (the dense dims become sparse)
    check([(2, 10, [2, 3, 4]), (3, 10, [2, 3, 4])], 0)
    check([(3, 10, [2, 3, 4]), (3, 10, [2, 1, 4]), (3, 10, [2, 4, 4])], -2)
    sp = gen(3, 10, [2, 3, 4], seed=9)
    # a dense operand joins as a COO (torch refuses a sparse-dense cat): the dense meaning is NumPy's
    assert_coo(coosparse.concatenate((sp, reference(sp))), np.concatenate([reference(sp), reference(sp)]))


@pytest.mark.parametrize("op", [np.concatenate, np.stack])
def test_join_dtype_casts_each_piece_directly(op, backend):
    # int64 beside uint64 promotes to float64: dtype=int64 must cast each piece to int64 itself, as
    # NumPy does, not round 2**53 + 1 through the promoted float64 first
    a = COO([[0]], np.array([2**53 + 1], np.int64), (2,))
    b = COO([[1]], np.array([2**64 - 1], np.uint64), (2,))
    got = backend.get(op([backend.put(a), backend.put(b)], dtype=np.int64, casting="unsafe"))
    want = op([a.to_dense(), b.to_dense()], dtype=np.int64, casting="unsafe")
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got.to_dense(), want)


@pytest.mark.parametrize("op", [np.concatenate, np.stack])
def test_join_casting_is_enforced(op):
    a = COO([[0]], np.array([1.5]), (2,))
    b = COO([[1]], np.array([2], np.int8), (2,))
    for dtype, casting in [(np.float32, "safe"), (np.int64, "same_kind"), (np.float32, "no"),
                           (np.float64, "equiv"), (np.bool_, "same_kind")]:
        with pytest.raises(TypeError):
            op([a.to_dense(), b.to_dense()], dtype=dtype, casting=casting)  # (what NumPy says)
        with pytest.raises(TypeError, match="cannot cast"):
            op([a, b], dtype=dtype, casting=casting)
    for dtype, casting in [(np.float32, "same_kind"), (np.int64, "unsafe"), (np.float64, "safe"),
                           (np.complex64, "same_kind")]:
        got = op([a, b], dtype=dtype, casting=casting)
        want = op([a.to_dense(), b.to_dense()], dtype=dtype, casting=casting)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.to_dense(), want)
    with pytest.raises(ValueError, match="casting must be one of"):
        op([a, b], casting="sideways")


def test_kron_counts_an_unstored_element_as_an_exact_zero():
    # documented (docs/shape.md): multiply's rule, not NumPy's dense inf * 0 = NaN
    a = COO([[1]], np.array([np.inf]), (2,))
    b = COO([[0]], np.array([np.nan]), (2,))
    r = coosparse.kron(a, b)
    assert r.nnz == 1 and r.fill_value == 0
    np.testing.assert_array_equal(r.to_dense(), [0.0, 0.0, np.nan, 0.0])
    with np.errstate(invalid="ignore"):
        assert np.isnan(np.kron(a.to_dense(), b.to_dense())[[0, 2, 3]]).all()  # 0 * nan, inf * nan, inf * 0


def test_join_a_dense_operand_beside_a_fill_its_dtype_cannot_hold(backend):
    # the dense operand is compared with the others' fill in the result dtype: a fill of 0.5 beside
    # an int array (or 7 beside a bool one, 255 beside int8) is no reason to refuse the join
    cases = [(COO([[0]], np.array([3.0]), (2,), fill_value=0.5), np.array([1, 2])),
             (COO([[0]], np.array([3]), (2,), fill_value=7), np.array([True, False])),
             (COO([[0]], np.array([3], np.uint8), (2,), fill_value=255), np.array([-1, 5], np.int8))]
    for a, x in cases:
        for pieces in ([a, x], [x, a]):
            got = backend.get(coosparse.concatenate([backend.put(p) for p in pieces])).to("cpu")
            want = np.concatenate([p.to_dense() if isinstance(p, COO) else p for p in pieces])
            assert got.dtype == want.dtype and got.fill_value == a.fill_value
            np.testing.assert_array_equal(got.to_dense(), want)


def test_pad_takes_a_dict_of_widths_as_numpy(backend):
    # NumPy 2.3+: {axis: width or (before, after)}, the other axes unpadded
    x = np.arange(6.0).reshape(2, 3)
    a = coosparse.asarray(x)
    for pw in [{0: (1, 2)}, {-1: 2}, {1: (0, 1), 0: 1}, {}]:
        assert_coo(backend.get(coosparse.pad(backend.put(a), pw)), np.pad(x, pw))
        assert_coo(backend.get(np.pad(backend.put(a), pw)), np.pad(x, pw))
    with pytest.raises(IndexError):
        coosparse.pad(a, {2: 1})
    with pytest.raises(ValueError):
        coosparse.pad(a, {0: -1})
    with pytest.raises(TypeError):
        coosparse.pad(a, {0: 1.5})


def test_numpy_roll_and_repeat_take_axis_by_position(backend):
    # np.roll(a, shift, axis) and np.repeat(a, repeats, axis): NumPy's signatures, dispatched
    a = coosparse.random((3, 4), nnz=5, seed=1)
    d = reference(a)
    x = backend.put(a)
    assert_coo(backend.get(np.roll(x, 1, 0)), np.roll(d, 1, 0))
    assert_coo(backend.get(np.roll(x, (1, -2), (0, 1))), np.roll(d, (1, -2), (0, 1)))
    assert_coo(backend.get(np.repeat(x, 2, 1)), np.repeat(d, 2, 1))
    assert_coo(backend.get(np.repeat(x, [1, 0, 2], 0)), np.repeat(d, [1, 0, 2], 0))


def test_pad_mode_empty_pads_with_the_fill(backend):
    # NumPy leaves the padding of mode='empty' undefined: the fill is one of its answers, and the one
    # that stores nothing; a hybrid array's dense dimensions pad with it too
    for fill, sn in [(0.0, 2), (7.0, 2), (np.nan, 1)]:
        a = coosparse.random((3, 4), nnz=3, seed=2, fill_value=fill, sparse_ndim=sn)
        want = np.pad(a.to_dense(), ((1, 0), (2, 1)), mode="constant", constant_values=fill)
        for r in (coosparse.pad(backend.put(a), ((1, 0), (2, 1)), mode="empty"),
                  np.pad(backend.put(a), ((1, 0), (2, 1)), mode="empty")):
            r = backend.get(r)
            assert r.nnz == a.nnz and np.array_equal(r.fill_value, fill, equal_nan=True)
            np.testing.assert_array_equal(r.to_dense(), want)
    with pytest.raises(TypeError, match="constant_values"):
        coosparse.pad(a, 1, mode="empty", constant_values=0)
