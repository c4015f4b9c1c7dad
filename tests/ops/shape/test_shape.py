"""Shape manipulation against NumPy: transpose family, reshape (wide shapes exact), new/removed axes,
hybrid layout; ported pydata/sparse and torch tests."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coosparse
from coosparse import COO
from manip_helpers import assert_coo, check_flags, from_dense_fill, linear, reference
from strategies import coo_parts


@st.composite
def arrays(draw, max_sparse_ndim=3):
    indices, values, shape, s, u = draw(coo_parts(max_sparse_ndim=max_sparse_ndim))
    fill = None
    if draw(st.integers(0, 4)) == 0:
        fill = values.dtype.type(True if values.dtype == np.bool_ else 2)
    return COO(indices, values, shape, sorted=s, unique=u, fill_value=fill)


def _factor_shape(draw, size, ndim_max=4):
    """A random shape with ``size`` elements (possibly with 1s, and a -1)."""
    if size == 0:
        return tuple(draw(st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=3))) + (0,)
    primes = []
    n, p = size, 2
    while n > 1:
        while n % p == 0:
            primes.append(p)
            n //= p
        p += 1
    k = draw(st.integers(1, ndim_max))
    dims = [1] * k
    for q in primes:
        dims[draw(st.integers(0, k - 1))] *= q
    if draw(st.booleans()):
        dims[draw(st.integers(0, k - 1))] = -1
    return tuple(dims)


@settings(max_examples=60)
@given(a=arrays(), data=st.data())
def test_transpose_matches_numpy(a, data, backend):
    perm = tuple(data.draw(st.permutations(range(a.ndim))))
    out = backend.get(coosparse.permute_dims(backend.put(a), perm))
    assert_coo(out, reference(a).transpose(perm))
    assert out.is_unique == a.is_unique
    assert_coo(backend.get(backend.put(a).T), reference(a).T)


@settings(max_examples=60)
@given(a=arrays(), data=st.data())
def test_reshape_matches_numpy(a, data, backend):
    shape = _factor_shape(data.draw, a.size)
    expected = reference(a).reshape(shape)
    out = backend.get(backend.put(a).reshape(shape))
    assert_coo(out, expected)
    assert out.is_unique == a.is_unique
    if out.dense_ndim == a.dense_ndim or a.is_unique:  # blocks made sparse interleave repeated indices
        assert out.is_sorted == a.is_sorted
    assert_coo(coosparse.ravel(a), reference(a).ravel())


@settings(max_examples=40)
@given(a=arrays(), data=st.data())
def test_expand_squeeze_swap_move(a, data):
    d = reference(a)
    axis = data.draw(st.integers(-a.ndim - 1, a.ndim))
    e = coosparse.expand_dims(a, axis)
    assert_coo(e, np.expand_dims(d, axis))
    assert e.is_sorted == a.is_sorted
    assert_coo(coosparse.squeeze(e, axis), d)
    assert_coo(coosparse.squeeze(a), np.squeeze(d))
    if a.ndim:
        i, j = data.draw(st.integers(-a.ndim, a.ndim - 1)), data.draw(st.integers(-a.ndim, a.ndim - 1))
        assert_coo(coosparse.swapaxes(a, i, j), np.swapaxes(d, i, j))
        assert_coo(coosparse.moveaxis(a, i, j), np.moveaxis(d, i, j))
    if a.ndim >= 2:
        assert_coo(a.mT, np.swapaxes(d, -1, -2))


@settings(max_examples=40)
@given(a=arrays(), data=st.data())
def test_to_hybrid_round_trip(a, data, backend):
    k = data.draw(st.integers(0, a.ndim))
    h = backend.get(backend.put(a).to_hybrid(k))
    assert h.dense_ndim == k
    assert_coo(h, reference(a))
    if k > a.dense_ndim:
        assert h.is_coalesced
    elif a.is_unique:  # repeated indices interleave their blocks' elements
        assert h.is_sorted == a.is_sorted
    assert_coo(h.to_hybrid(a.dense_ndim), reference(a))


def test_transpose_flags():
    a = coosparse.random((5, 6, 7), nnz=40, seed=1, sorted=True)
    assert not a.T.is_sorted and a.T.is_unique
    assert a.transpose((0, 1, 2)) is a
    b = coosparse.random((5, 1, 7), nnz=10, seed=1, sorted=True)
    assert b.transpose((1, 0, 2)).is_sorted  # only a length-1 axis moved
    h = b.to_hybrid(1)
    t = h.transpose((0, 1, 2))
    assert t is h
    t = h.transpose((1, 0, 2))
    assert t.dense_ndim == 1 and t.is_sorted  # dense axis stays dense
    t = h.transpose((2, 0, 1))
    assert t.dense_ndim == 0  # the dense axis moved first: made sparse
    assert_coo(t, reference(h).transpose((2, 0, 1)))


def test_transpose_then_coalesce(backend):
    a = coosparse.random((300, 200), nnz=3000, seed=2, sorted=True)
    t = backend.put(a).T.coalesce()
    assert_coo(backend.get(t), reference(a).T)
    assert t.is_coalesced


@pytest.mark.parametrize("shape", [(300, 200), (20, 30, 40)])
def test_transpose_copies_its_index_rows_at_their_first_read(backend, shape):
    """A transpose's index rows are the source's in reverse order, held as a view until first
    read: then a C-contiguous read-only int64 copy, kept. Shape, nnz, nbytes and a 2-D
    ``coalesce()`` (its counting sort takes the rows as they lie) do not copy them; ``.T.T``
    is the source's rows again."""
    src = coosparse.random(shape, nnz=3000, seed=2, sorted=True)
    a = backend.put(src)
    t = a.T
    assert "_indices" not in vars(t)
    assert (t.nnz, t.sparse_ndim, t.shape) == (a.nnz, len(shape), shape[::-1])
    assert t.nbytes == a.indices.nbytes + a.values.nbytes
    if len(shape) == 2:
        c = t.coalesce()
        assert "_indices" not in vars(t)  # read where they lie
        assert_coo(backend.get(c), reference(src).T)
    tt = t.T
    assert "_indices" in vars(tt)  # the reverse of the reverse: the source's rows, no copy
    if backend.device == "cpu":
        assert np.shares_memory(tt.indices, a.indices)
    idx = t.indices
    assert "_indices" in vars(t) and "_index_view" not in vars(t) and t.indices is idx
    assert idx.dtype == np.int64 and idx.flags.c_contiguous
    if backend.device == "cpu":
        assert not idx.flags.writeable and not np.shares_memory(idx, a.indices)
    np.testing.assert_array_equal(backend.get(t).indices, src.indices[::-1])
    assert_coo(backend.get(t), reference(src).T)


@pytest.mark.parametrize("bad", [5000, -3])
def test_transpose_coalesce_of_a_bad_column_raises(backend, bad):
    """A check=False matrix with a column outside its shape: ``a.T.coalesce()`` (the rows read
    where they lie) names it in an IndexError and leaves the source as it was."""
    rng = np.random.default_rng(9)
    n = 100_000  # the direct counting sort's size
    idx = np.unique(rng.integers(0, 10**6, n))
    idx = np.stack([idx // 1000, idx % 1000])
    pos = idx.shape[1] // 2
    idx[1, pos] = bad
    before = idx.copy()
    a = backend.put(COO(idx, np.ones(idx.shape[1]), (1000, 1000), sorted=True, unique=True, check=False))
    # (a GPU kernel reports through its error word, which names no position)
    message = f"index {bad} at position {pos}" if backend.device == "cpu" else "out of bounds"
    with pytest.raises(IndexError, match=message):
        a.T.coalesce()
        backend.check_errors()
    np.testing.assert_array_equal(backend.get(a).indices, before)


def test_transpose_rows_copied_once_across_threads():
    """Threads reading a fresh transpose's indices at once all get the same (one) copy."""
    import concurrent.futures
    import pickle

    a = coosparse.random((400, 300), nnz=20_000, seed=3, sorted=True)
    for _ in range(5):
        t = a.T
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            got = list(pool.map(lambda _: t.indices, range(8)))
        assert all(g is got[0] for g in got) and got[0] is t.indices
    u = pickle.loads(pickle.dumps(a.T))  # a transpose not yet copied pickles its rows
    np.testing.assert_array_equal(u.indices, a.indices[::-1])
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        a.T.nothing


def test_method_forms():
    a = coosparse.random((2, 3, 4), nnz=10, seed=3)
    d = reference(a)
    assert_coo(a.transpose(2, 0, 1), d.transpose(2, 0, 1))
    assert_coo(a.transpose([2, 0, 1]), d.transpose(2, 0, 1))
    assert_coo(a.transpose(), d.T)
    assert_coo(a.reshape(4, 6), d.reshape(4, 6))
    assert_coo(a.reshape((4, -1)), d.reshape(4, 6))
    assert_coo(a.flatten(), d.flatten())
    assert_coo(a.swapaxes(0, 2), d.swapaxes(0, 2))
    assert_coo(np.transpose(a, (1, 0, 2)), d.transpose(1, 0, 2))
    assert_coo(np.reshape(a, (6, 4)), d.reshape(6, 4))
    assert_coo(np.moveaxis(a, 0, -1), np.moveaxis(d, 0, -1))
    assert_coo(np.expand_dims(a, 1), np.expand_dims(d, 1))
    assert_coo(np.squeeze(np.expand_dims(a, 1)), d)
    assert_coo(np.permute_dims(a, (1, 2, 0)), d.transpose(1, 2, 0))
    assert_coo(np.matrix_transpose(a), np.matrix_transpose(d))
    assert_coo(np.ravel(a), d.ravel())


def test_reshape_keeps_fill_and_dense_suffix():
    a = from_dense_fill(np.arange(24.0).reshape(2, 3, 4) % 5, fill=1.0, sparse_ndim=2)
    r = a.reshape(3, 2, 4)
    assert r.dense_ndim == 1 and r.fill_value == 1.0
    assert_coo(r, reference(a).reshape(3, 2, 4))
    r = a.reshape(6, 2, 2)
    assert r.dense_ndim == 2
    assert_coo(r, reference(a).reshape(6, 2, 2))
    r = a.reshape(4, 6)
    assert_coo(r, reference(a).reshape(4, 6))


def test_wide_reshape_is_exact(backend):
    n = 2**32
    idx = np.array([[0, 5, n - 1, n - 1], [7, 3, 0, n - 1]], dtype=np.int64)
    a = backend.put(COO(idx, np.arange(4.0), (n, n), sorted=True, unique=True))
    keys = linear(a)
    for shape in [(2**16, 2**16, n), (n, 2**8, 2**24), (2**20, 2**44), (2**60, 16), (2**62, 4)]:
        r = backend.get(a.reshape(shape))
        assert r.shape == shape and r.is_coalesced
        assert linear(r) == keys
        assert r.values.tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="2\\*\\*63"):
        a.reshape(-1)
    # a wide block: (2**40, 2**40) -> (2**20, 2**60) has no int64 key
    m = 2**40
    b = backend.put(COO([[1, m - 1, 3], [m - 1, 5, 0]], np.ones(3), (m, m), unique=True))
    r = backend.get(b.reshape(2**20, 2**60))
    assert linear(r) == linear(b)
    back = r.reshape(m, m).to("cpu")
    assert back.indices.tolist() == [[1, m - 1, 3], [m - 1, 5, 0]]


def test_reshape_errors():
    a = coosparse.random((5, 3), nnz=5, seed=0)
    with pytest.raises(ValueError):
        a.reshape(4, 4)
    with pytest.raises(ValueError):
        a.reshape(-1, -1)
    with pytest.raises(NotImplementedError):
        a.reshape((3, 5, 1), order="F")
    with pytest.raises(TypeError):
        a.reshape(2.5, 6)


def test_squeeze_and_axis_errors():
    a = coosparse.from_dense(np.eye(3))
    with pytest.raises(ValueError):
        a.squeeze(3)
    with pytest.raises(TypeError):
        a.squeeze(1.1)
    with pytest.raises(ValueError):
        a.squeeze(0)
    with pytest.raises(ValueError):
        coosparse.matrix_transpose(coosparse.from_dense(np.ones(3)))


def test_trusted_constructor_sets_what_init_sets():
    a = COO([[0, 1]], np.array([1.0, 2.0]), (3,), sorted=True, unique=True, fill_value=1.5)
    b = COO._trusted(a.indices, a.values, a.shape, True, True, a.fill_value)
    assert set(vars(a)) == set(vars(b))
    assert {k: str(v) for k, v in vars(a).items()} == {k: str(v) for k, v in vars(b).items()}


# ---------------------------------------------------------------------- ported pydata/sparse tests
@pytest.mark.parametrize("axis", [None, (1, 2, 0), (2, 1, 0), (0, 1, 2), (0, 1, -1), (0, -2, -1), (-3, -2, -1)])
def test_pydata_transpose(axis):
    x = coosparse.random((2, 3, 4), density=0.25, seed=1)
    assert_coo(x.transpose(axis), reference(x).transpose(axis))


@pytest.mark.parametrize("axis", [(0, 1), (0, 1, 2, 3), (3, 1, 0), (0, -1, -4), (0, 0, 1), (0, -1, 2)])
def test_pydata_transpose_error(axis):
    x = coosparse.random((2, 3, 4), density=0.25, seed=1)
    with pytest.raises(ValueError):
        x.transpose(axis)


@pytest.mark.parametrize("axis", [0.3, ((0, 1, 2),)])
def test_transpose_bad_axis_type(axis):
    # pydata raises ValueError here; NumPy (and coosparse) raise TypeError
    x = coosparse.random((2, 3, 4), density=0.25, seed=1)
    with pytest.raises(TypeError):
        x.transpose(axis)


@pytest.mark.parametrize("axis1", [-3, -2, -1, 0, 1, 2])
@pytest.mark.parametrize("axis2", [-3, -2, -1, 0, 1, 2])
def test_pydata_swapaxes(axis1, axis2):
    x = coosparse.random((2, 3, 4), density=0.25, seed=2)
    assert_coo(x.swapaxes(axis1, axis2), reference(x).swapaxes(axis1, axis2))


@pytest.mark.parametrize("axis1", [-4, 3])
@pytest.mark.parametrize("axis2", [-4, 3, 0])
def test_pydata_swapaxes_error(axis1, axis2):
    x = coosparse.random((2, 3, 4), density=0.25, seed=2)
    with pytest.raises(ValueError):
        x.swapaxes(axis1, axis2)


@pytest.mark.parametrize("source, destination", [
    [0, 1], [2, 1], [-2, 1], [-2, -3], [(0, 1), (2, 3)], [(-1, 0), (0, 1)], [(0, 1, 2), (2, 1, 0)],
    [(0, 1, 2), (-2, -3, -1)],
])
def test_pydata_moveaxis(source, destination):
    x = coosparse.random((2, 3, 4, 5), density=0.25, seed=3)
    assert_coo(coosparse.moveaxis(x, source, destination), np.moveaxis(reference(x), source, destination))


@pytest.mark.parametrize("source, destination", [[0, -4], [(0, 5), (1, 2)], [(0, 1, 2), (2, 1)]])
def test_pydata_moveaxis_error(source, destination):
    x = coosparse.random((2, 3, 4), density=0.25, seed=3)
    with pytest.raises(ValueError):
        coosparse.moveaxis(x, source, destination)


@pytest.mark.parametrize("a,b", [
    [(3, 4), (3, 4)], [(12,), (3, 4)], [(12,), (3, -1)], [(3, 4), (12,)], [(3, 4), (-1, 4)], [(3, 4), (3, -1)],
    [(2, 3, 4, 5), (8, 15)], [(2, 3, 4, 5), (24, 5)], [(2, 3, 4, 5), (20, 6)], [(), ()],
])
def test_pydata_reshape(a, b):
    s = coosparse.random(a, density=0.5, seed=4)
    assert_coo(s.reshape(b), reference(s).reshape(b))


def test_pydata_large_reshape():
    n, m = 100, 10
    row = np.arange(n, dtype=np.uint16)
    x = COO(np.stack([row, row % m]), np.ones(n, dtype=np.uint8), (100, 10), sorted=True, unique=True)
    assert_coo(x.reshape(x.shape), reference(x))
    assert x.reshape(x.shape) is x


@pytest.mark.parametrize("in_shape", [(5, 5), 62, (3, 3, 3)])
def test_pydata_flatten(in_shape):
    s = coosparse.random(in_shape, density=0.5, seed=5)
    assert_coo(s.flatten(), reference(s).flatten())


@pytest.mark.parametrize("axis", [-1, 0, 1, 2, 3])
def test_pydata_expand_dims(axis):
    arr = np.arange(24).reshape((2, 3, 4))
    assert_coo(coosparse.expand_dims(coosparse.from_dense(arr), axis=axis), np.expand_dims(arr, axis=axis))


@pytest.mark.parametrize("arr_and_axis", [
    (np.eye(2).reshape(1, 2, 1, 2), None), (np.eye(2).reshape(1, 2, 1, 2), 0), (np.eye(2).reshape(1, 2, 1, 2), 2),
    (np.eye(2).reshape(1, 2, 1, 2), (0, 2)), (np.zeros((5,)), None),
])
def test_pydata_squeeze(arr_and_axis):
    arr, axis = arr_and_axis
    s = coosparse.from_dense(arr)
    assert_coo(coosparse.squeeze(s, axis=axis), np.squeeze(arr, axis=axis))
    assert_coo(s.squeeze(axis=axis), np.squeeze(arr, axis=axis))


@pytest.mark.parametrize("ndim", [2, 3, 4, 5])
@pytest.mark.parametrize("density", [0.0, 0.1, 0.25, 1.0])
def test_pydata_matrix_transpose(ndim, density):
    shape = tuple(range(2, 34)[:ndim])
    xs = coosparse.random(shape, density=density, seed=ndim)
    expected = np.swapaxes(reference(xs), -1, -2)
    assert_coo(coosparse.matrix_transpose(xs), expected)
    assert_coo(xs.mT, expected)


# ---------------------------------------------------------------------- ported torch tests
def _gen_sparse(sparse_dims, nnz, sizes, coalesced, seed=0):
    rng = np.random.default_rng(seed)
    idx = np.stack([rng.integers(0, n, nnz) for n in sizes[:sparse_dims]]) if nnz and sparse_dims else \
        np.zeros((sparse_dims, nnz), np.int64)
    vals = rng.standard_normal((nnz,) + tuple(sizes[sparse_dims:]))
    a = COO(idx, vals, tuple(sizes))
    return a.coalesce() if coalesced else a


@pytest.mark.parametrize("coalesced", [True, False])
def test_torch_transpose(coalesced, backend):
    import itertools

    for sparse_dims, nnz, sizes in [(4, 6, [3, 3, 3, 3]), (4, 3, [7, 7, 7, 3, 3, 3, 0]),
                                    (4, 0, [0, 0, 7, 3, 3, 3, 0])]:
        x = backend.put(_gen_sparse(sparse_dims, nnz, sizes, coalesced))
        y = reference(x)
        for i, j in itertools.combinations(range(4), 2):
            x = x.swapaxes(i, j)
            y = y.swapaxes(i, j)
            assert_coo(backend.get(x), y)
            x = x.swapaxes(i, j)
            y = y.swapaxes(i, j)
            assert_coo(backend.get(x), y)


@pytest.mark.parametrize("coalesced", [True, False])
def test_torch_unsqueeze(coalesced):
    for sparse_dims, sizes, dim in [(3, [5, 7, 11], 0), (3, [5, 7, 11, 13, 17], 0), (3, [5, 7, 11, 13, 17], 3),
                                    (3, [5, 7, 11, 13, 17], 4), (3, [5, 7, 11, 13, 17], 5),
                                    (3, [5, 7, 11, 13, 17], -1), (3, [5, 7, 11, 13, 17], -6)]:
        x = _gen_sparse(sparse_dims, 10, sizes, coalesced)
        out = coosparse.expand_dims(x, dim)
        assert_coo(out, np.expand_dims(reference(x), dim))
        check_flags(out)
    x = _gen_sparse(3, 10, [5, 7, 11, 13, 17], coalesced)
    for dim in (-7, 6):
        with pytest.raises(ValueError):  # numpy.exceptions.AxisError
            coosparse.expand_dims(x, dim)
