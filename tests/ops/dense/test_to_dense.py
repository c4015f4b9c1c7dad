"""to_dense and scatter_into (the scatter-add side of SPEC 5) against np.add.at."""
import numpy as np
import pytest

import coosparse
from coosparse.ops.dense import scatter_into
from coosparse._kernels.numba.scatter import PARALLEL_MIN
from reference import dense_of, dense_reference

DTYPES = coosparse.SUPPORTED_DTYPES


def random_coo(rng, shape, sparse_ndim, nnz, dtype, dup=True):
    sparse_shape = shape[:sparse_ndim]
    if dup:
        idx = np.stack([rng.integers(0, n, size=nnz) for n in sparse_shape]) if sparse_ndim else np.zeros((0, nnz))
    else:
        keys = rng.permutation(int(np.prod(sparse_shape)))[:nnz]
        idx = np.stack(np.unravel_index(keys, sparse_shape)) if sparse_ndim else np.zeros((0, len(keys)))
    nnz = idx.shape[1]
    vshape = (nnz,) + shape[sparse_ndim:]
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        vals = rng.random(vshape) < 0.5
    elif dtype.kind in "iu":
        vals = rng.integers(0, 100, size=vshape).astype(dtype)
    elif dtype.kind == "c":
        vals = (rng.standard_normal(vshape) + 1j * rng.standard_normal(vshape)).astype(dtype)
    else:
        vals = rng.standard_normal(vshape).astype(dtype)
    return coosparse.COO(idx.astype(np.int64), vals, shape, unique=not dup)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("order", ["C", "F"])
def test_uncoalesced_hybrid_equals_add_at(backend, dtype, order):
    rng = np.random.default_rng(7)
    for shape, sparse_ndim, nnz in [((6, 5, 3), 2, 60), ((7,), 1, 30), ((4, 3, 2, 2), 1, 25), ((5, 4), 2, 0)]:
        a = random_coo(rng, shape, sparse_ndim, nnz, dtype)
        dev = backend.put(a).to_dense(order=order)
        # the layout is checked on the device: CuPy's .get() returns C order by default
        assert dev.flags.c_contiguous if order == "C" else dev.flags.f_contiguous
        got = backend.get(dev)
        assert got.dtype == a.dtype and got.shape == a.shape
        want = dense_of(a)
        if dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=1e-3 if dtype == np.float16 else 1e-6)
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128], ids=str)
def test_parallel_sums_are_in_stored_order(backend, order, dtype):
    # enough entries for the destination-partitioned parallel kernel; np.add.at
    # applies entries in order, so the float sums must agree bit for bit
    rng = np.random.default_rng(3)
    a = random_coo(rng, (60, 50, 2), 2, 4 * PARALLEL_MIN, dtype)
    got = backend.get(backend.put(a).to_dense(order=order))
    want = np.zeros(a.shape, dtype=dtype)
    np.add.at(want, tuple(a.indices), a.values)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(backend.get(backend.put(a).to_dense(order=order)), got)  # run to run


def test_unique_entries_are_set(backend):
    rng = np.random.default_rng(4)
    a = random_coo(rng, (300, 200), 2, PARALLEL_MIN + 1000, np.float64, dup=False)
    assert a.is_unique
    np.testing.assert_array_equal(backend.get(backend.put(a).to_dense()), dense_of(a))


@pytest.mark.parametrize("add", [True, False])
@pytest.mark.parametrize("layout", ["F", "sliced", "negative", "transposed"])
def test_scatter_into_strided_targets(layout, add):
    rng = np.random.default_rng(5)
    a = random_coo(rng, (5, 6, 2), 2, 40, np.float64)
    base = rng.standard_normal((10, 12, 6))
    target = {
        "F": np.asfortranarray(base[:5, :6, :2]),
        "sliced": base[::2, ::2, :4:2],
        "negative": base[:5, ::-2, 1:3][:, :, ::-1],
        "transposed": base[:2, :6, :5].T,
    }[layout]
    assert target.shape == a.shape
    before = target.copy()
    base_copy = base.copy()
    out = scatter_into(target, a, add=add)
    assert out is target
    if add:
        want = before + dense_of(a)
    else:  # assignment: the last duplicate in stored order wins
        want = before.copy()
        for i in range(a.nnz):
            want[tuple(a.indices[:, i])] = a.values[i]
    np.testing.assert_allclose(target, want, rtol=1e-12)
    if layout != "F":  # untouched memory between the strided elements stays untouched
        view_elems = np.zeros(base.size, bool)
        probe = np.arange(base.size, dtype=np.int64).reshape(base.shape)
        view_of_probe = {
            "sliced": probe[::2, ::2, :4:2],
            "negative": probe[:5, ::-2, 1:3][:, :, ::-1],
            "transposed": probe[:2, :6, :5].T,
        }[layout]
        view_elems[view_of_probe.reshape(-1)] = True
        np.testing.assert_array_equal(base.reshape(-1)[~view_elems], base_copy.reshape(-1)[~view_elems])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_dense_plus_coo_through_scatter_into(dtype):
    # the recipe the intersect engineer uses for dense + COO
    rng = np.random.default_rng(6)
    a = random_coo(rng, (4, 5, 3), 2, 30, dtype)
    dense = dense_reference(np.zeros((2, 0), np.int64), np.zeros((0, 3), dtype), (4, 5, 3)) + a.values[:1].reshape(1, 1, 3)
    out = np.array(dense, copy=True)
    scatter_into(out, a, add=True)
    acc = np.float32 if dtype == np.float16 else (np.int64 if dtype == np.bool_ else dtype)
    want = dense.astype(acc)
    np.add.at(want, tuple(a.indices), a.values.astype(acc))
    want = (want != 0) if dtype == np.bool_ else want.astype(dtype)
    if np.dtype(dtype).kind in "fc":
        np.testing.assert_allclose(out, want, rtol=1e-3)
    else:
        np.testing.assert_array_equal(out, want)


def test_scatter_into_errors():
    a = coosparse.COO([[0, 1]], np.array([1.0, 2.0]), (3,))
    with pytest.raises(ValueError, match="does not match"):
        scatter_into(np.zeros(4), a)
    with pytest.raises(TypeError, match="cast safely"):
        scatter_into(np.zeros(3, np.int64), a)
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        scatter_into(ro, a)
    with pytest.raises(ValueError, match="order"):
        a.to_dense(order="K")


def test_contract_breaking_entries_never_leave_the_buffer():
    # check=False trusts the caller; an out-of-range entry must still not corrupt memory, and
    # is refused (IndexError) before anything is written rather than silently dropped
    a = coosparse.COO(np.array([[0, 5, -7, 2]]), np.array([1.0, 2.0, 3.0, 4.0]), (3,), check=False)
    out = np.zeros(3)
    with pytest.raises(IndexError, match="index 5 at position 1 .* dimension 0 with size 3"):
        scatter_into(out, a)
    np.testing.assert_array_equal(out, [0.0, 0.0, 0.0])


def test_zero_size(backend):
    a = coosparse.COO(np.zeros((2, 0), np.int64), np.zeros(0), (0, 5))
    assert backend.get(backend.put(a).to_dense()).shape == (0, 5)
    b = coosparse.COO(np.zeros((1, 0), np.int64), np.zeros((0, 0)), (3, 0))
    assert backend.get(backend.put(b).to_dense(order="F")).shape == (3, 0)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64, np.float64])
def test_sorted_duplicates_whose_elements_interleave(backend, dtype):
    # a sorted COO with duplicates: the elements of two equal blocks (a dense dimension, or the two
    # words of a complex value on a GPU) interleave, so their addresses are not sorted: no 'sorted'
    # shortcut may be taken (on a GPU it would let two threads add into one word)
    rng = np.random.default_rng(9)
    idx = np.sort(rng.integers(0, 6, 40))[None, :]
    for dense in ((), (3,)):
        vals = (rng.standard_normal((40,) + dense) + (1j * rng.standard_normal((40,) + dense)
                                                       if np.dtype(dtype).kind == "c" else 0)).astype(dtype)
        a = coosparse.COO(idx, vals, (6,) + dense, sorted=True)
        got = backend.get(backend.put(a).to_dense())
        want = np.zeros(a.shape, dtype)
        np.add.at(want, idx[0], vals)
        np.testing.assert_array_equal(got, want)  # stored order on both: same bits
        backend.check_errors()  # no hint was found false


@pytest.mark.parametrize("flags", [dict(sorted=True), dict(unique=True)])
def test_lying_flags_are_reported_on_a_gpu(backend, flags):
    # check=False trusts the flags; where a GPU kernel relies on them (no sort) it checks them
    # cheaply and reports a lie (ValueError at the next check); the CPU never relies on them here
    a = coosparse.COO([[3, 1, 3, 0]], np.array([1.0, 2.0, 4.0, 8.0]), (4,), check=False, **flags)
    got = backend.get(backend.put(a).to_dense())
    if backend.device == "cpu":
        want = [8.0, 2.0, 0.0, 4.0 if flags.get("unique") else 5.0]  # unique: the last duplicate is written
        np.testing.assert_array_equal(got, want)
    else:
        with pytest.raises(ValueError, match="flag sorted=True is false"):
            backend.check_errors()
