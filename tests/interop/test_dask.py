"""Dask arrays of COO chunks (SPEC 11): threaded scheduler and a real LocalCluster.

Every result is compared with the same operation on the single COO and with
the dense NumPy answer. The cluster (2 worker processes, 1 thread each) is
started once for the module and closed at its end. The threaded-scheduler
tests run first, so Numba's on-disk cache is warm when the workers (which
import coosparse from this checkout) run the same kernels.

Operations that need a coosparse function not on this branch yet are skipped
with a reason naming the function (see ``needs``).
"""
from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

import coosparse
from coosparse import COO

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
cdask = pytest.importorskip("coosparse.dask")


def needs(*names):
    """Skip unless coosparse has every function in ``names`` (ops that land with other issues)."""
    missing = [n for n in names if not hasattr(coosparse, n)]
    return pytest.mark.skipif(bool(missing), reason=f"needs coosparse.{', coosparse.'.join(missing)} "
                                                    "(not on this branch yet)")


def needs_getitem():
    return pytest.mark.skipif(not hasattr(COO, "__getitem__"), reason="needs COO.__getitem__")


def dense(r):
    if isinstance(r, COO):
        return r.to_dense()
    return np.asarray(r)


def assert_same(result, single, reference):
    """``result`` (from Dask) has the single-array answer's type, and both match the dense reference."""
    assert type(result) is type(single) or (np.isscalar(single) and np.ndim(result) == 0), (
        f"Dask gave a {type(result).__name__}, the single array a {type(single).__name__}")
    if isinstance(single, COO):
        assert result.shape == single.shape and result.dtype == single.dtype
        np.testing.assert_array_equal(np.asarray(result.fill_value), np.asarray(single.fill_value))
    np.testing.assert_allclose(dense(result), reference, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dense(single), reference, rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def arrays():
    a = coosparse.random((60, 40), density=0.12, seed=0)
    b = coosparse.random((60, 40), density=0.12, seed=1)
    c = coosparse.random((40, 30), density=0.12, seed=2)
    return a, b, c


# ------------------------------------------------------------------ schedulers
def _compile_here_first():
    """Run the chunk operations once in this process, so Numba's on-disk cache is warm.

    The worker processes then load the kernels from the cache instead of each compiling
    them (cold, that is minutes on a 2-core machine).
    """
    a = coosparse.random((12, 10), density=0.3, seed=9)
    x = cdask.to_dask(a, chunks=(5, 4))
    v = da.from_array(np.ones(10), chunks=4)
    exprs = [x + x, x * x, np.abs(x), x + 1.0, np.maximum(x, x), x * v]
    if hasattr(coosparse, "sum"):
        exprs += [x.sum(axis=0, split_every=2), x.sum(axis=1, keepdims=True), x.max(axis=1),
                  x.mean(axis=0), (x > 0.5).any(axis=1), x.sum(), x.mean()]
    if hasattr(COO, "__getitem__") and hasattr(coosparse, "concatenate"):
        exprs += [x[1:9:2, 2:8], x[::-3, 7], x[[1, 5, 4]], da.concatenate([x, x], axis=1), x.rechunk((6, 10))]
    if hasattr(coosparse, "matmul"):
        exprs += [x @ x.T, x @ v, da.tensordot(x, x.T, axes=1)]
    for e in exprs:
        try:
            e.compute(scheduler="sync")
        except Exception:  # the tests report it
            pass


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    _compile_here_first()
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=":0", memory_limit="1GiB") as lc:
        with distributed.Client(lc) as client:
            yield client


@pytest.fixture(params=["threads", "distributed"])
def scheduler(request):
    """Keyword arguments for ``compute``: the threaded scheduler or the LocalCluster's client."""
    if request.param == "threads":
        return {"scheduler": "threads"}
    return {"scheduler": request.getfixturevalue("cluster")}


@pytest.mark.parametrize("chunks", [(10, 15), (7, 11)])  # even and uneven chunks (counts that differ)
@pytest.mark.parametrize("op", ["mean", "var", "std", "nanvar", "nanmean"])
@pytest.mark.parametrize("axis", [0, 1, (0, 1), None])
def test_moments_along_an_axis_are_coos(op, axis, chunks, arrays):
    a = arrays[0]
    x = cdask.to_dask(a, chunks=chunks)
    f = getattr(np, op)
    result = f(x, axis=axis).compute(scheduler="sync")
    single = f(a, axis=axis)
    assert isinstance(single, COO) and isinstance(result, COO), (type(result), type(single))
    np.testing.assert_allclose(dense(result), f(a.to_dense(), axis=axis), rtol=1e-12, atol=1e-12)
    assert result.shape == single.shape


@pytest.mark.parametrize("chunks", [0, (0, 4), (4, 0), -3, ((30, 20), 40)])
def test_to_dask_refuses_bad_chunks(chunks, arrays):
    with pytest.raises(ValueError, match=r"to_dask: chunks="):
        cdask.to_dask(arrays[0], chunks=chunks)
    z = coosparse.zeros((0, 4))
    assert cdask.to_dask(z, chunks=((0,), (2, 2))).chunks == ((0,), (2, 2))


# ------------------------------------------------------------------ no Dask needed to import
def test_import_coosparse_does_not_import_dask():
    code = "import sys, coosparse; assert 'dask' not in sys.modules, sorted(m for m in sys.modules if 'dask' in m)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_registered_through_the_entry_point_without_importing_coosparse_dask():
    # Dask loads the dask.sizeof entry point; the dask.array tables follow its import
    code = """
import sys, numpy as np, coosparse
import dask.array as da
from dask.array.dispatch import concatenate_lookup, tensordot_lookup, numel_lookup
from dask.array.chunk_types import is_valid_chunk_type
from dask.sizeof import sizeof
a = coosparse.COO([[0, 3]], np.array([1.0, 2.0]), (5,))
assert concatenate_lookup.dispatch(coosparse.COO).__module__ == "coosparse.dask"
assert tensordot_lookup.dispatch(coosparse.COO).__module__ == "coosparse.dask"
assert numel_lookup.dispatch(coosparse.COO).__module__ == "coosparse.dask"
assert is_valid_chunk_type(coosparse.COO)
assert sizeof(a) >= a.indices.nbytes + a.values.nbytes
"""
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------------ pickle and tokenize
@pytest.mark.parametrize("fill", [0.0, 2.5, np.nan])
def test_pickle_protocol5_out_of_band_keeps_fill_and_flags(fill):
    a = COO([[0, 1, 3], [2, 0, 1]], np.array([1.0, 2.0, 3.0]), (4, 3), sorted=True, unique=True,
            fill_value=fill)
    buffers = []
    data = pickle.dumps(a, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 2  # indices and values travel out of band, not in the stream
    assert len(data) < 400
    b = pickle.loads(data, buffers=buffers)
    assert (b.shape, b.dtype, b.is_sorted, b.is_unique) == (a.shape, a.dtype, True, True)
    np.testing.assert_array_equal(b.indices, a.indices)
    np.testing.assert_array_equal(b.values, a.values)
    np.testing.assert_array_equal(np.asarray(b.fill_value), np.asarray(a.fill_value))
    assert b.fill_value.dtype == a.dtype
    c = pickle.loads(pickle.dumps(a))  # the default protocol still works (copies in band)
    assert c.is_coalesced and np.array_equal(c.values, a.values)


def test_cloudpickle_round_trip():
    cloudpickle = pytest.importorskip("cloudpickle")
    a = coosparse.random((5, 4, 3), density=0.3, sparse_ndim=2, seed=3).astype(np.float32)
    b = cloudpickle.loads(cloudpickle.dumps(a))
    assert b.sparse_ndim == 2 and b.dtype == np.float32
    np.testing.assert_array_equal(b.to_dense(), a.to_dense())


def test_tokenize_is_deterministic_and_content_based():
    from dask.base import tokenize

    a = COO([[0, 1, 3]], np.array([1.0, 2.0, 3.0]), (5,), sorted=True, unique=True)
    same = COO(np.array([[0, 1, 3]]), np.array([1.0, 2.0, 3.0]), (5,), sorted=True, unique=True)
    assert tokenize(a) == tokenize(same) == tokenize(a.copy())
    others = [
        COO([[0, 1, 3]], np.array([1.0, 2.0, 4.0]), (5,), sorted=True, unique=True),  # values
        COO([[0, 1, 4]], np.array([1.0, 2.0, 3.0]), (5,), sorted=True, unique=True),  # indices
        COO([[0, 1, 3]], np.array([1.0, 2.0, 3.0]), (6,), sorted=True, unique=True),  # shape
        COO([[0, 1, 3]], np.array([1.0, 2.0, 3.0]), (5,)),  # flags
        COO([[0, 1, 3]], np.array([1.0, 2.0, 3.0]), (5,), sorted=True, unique=True, fill_value=1),  # fill
        a.astype(np.float32),  # dtype
    ]
    tokens = {tokenize(o) for o in others}
    assert len(tokens) == len(others) and tokenize(a) not in tokens
    nan = COO([[0]], np.array([1.0]), (2,), fill_value=np.nan)
    assert tokenize(nan) == tokenize(COO([[0]], np.array([1.0]), (2,), fill_value=float("nan")))
    # a subprocess gives the same token (no id() or randomness in it)
    code = ("import numpy as np, coosparse; from dask.base import tokenize; "
            "print(tokenize(coosparse.COO([[0, 1, 3]], np.array([1.0, 2.0, 3.0]), (5,), sorted=True, unique=True)))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert out == tokenize(a)


# ------------------------------------------------------------------ creation and assembly
@pytest.mark.parametrize("sorted_", [False, True])
def test_to_dask_chunks_hold_their_entries_flags_and_fill(sorted_):
    a = coosparse.random((23, 17), density=0.2, sorted=sorted_, seed=4)
    a = COO(a.indices, a.values, a.shape, sorted=a.is_sorted, unique=a.is_unique, fill_value=-1.0)
    x = cdask.to_dask(a, chunks=(7, 5))
    assert x.chunks == ((7, 7, 7, 2), (5, 5, 5, 2))
    assert x.dtype == a.dtype
    ref = a.to_dense()
    blocks = dask.compute(*x.to_delayed().ravel().tolist(), scheduler="sync")
    for (i, j), blk in zip(np.ndindex(*x.numblocks), blocks):
        assert isinstance(blk, COO)
        if blk.nnz > 1:  # (nnz <= 1 sets both flags)
            assert blk.is_sorted == a.is_sorted and blk.is_unique == a.is_unique
        assert blk.fill_value == -1.0
        np.testing.assert_array_equal(blk.to_dense(), ref[7 * i:7 * i + 7, 5 * j:5 * j + 5])
    assert sum(b.nnz for b in blocks) == a.nnz
    back = cdask.from_dask(x, scheduler="sync")
    np.testing.assert_array_equal(back.to_dense(), ref)
    assert back.fill_value == -1.0 and back.is_unique == a.is_unique and not back.is_sorted


def test_to_dask_and_back_keeps_sorted_for_row_blocks():
    a = coosparse.random((30, 20), density=0.2, sorted=True, seed=5)
    x = cdask.to_dask(a, chunks=(8, 20))
    b = cdask.from_dask(x, scheduler="sync")
    assert b.is_coalesced
    np.testing.assert_array_equal(b.indices, a.indices)
    np.testing.assert_array_equal(b.values, a.values)


@pytest.mark.parametrize("case", ["empty", "nnz1", "hybrid", "3d"])
def test_to_dask_edge_cases(case):
    if case == "empty":
        a, chunks = COO(np.zeros((2, 0), dtype=np.int64), np.zeros(0), (6, 4)), (3, 2)
    elif case == "nnz1":
        a, chunks = COO([[5], [1]], np.array([7.0]), (6, 4)), (4, 4)
    elif case == "hybrid":
        a, chunks = coosparse.random((9, 8, 3), density=0.2, sparse_ndim=2, seed=6), (4, 3, 3)
    else:
        a, chunks = coosparse.random((6, 5, 4), density=0.2, duplicates=True, seed=7), (4, 2, 3)
    x = cdask.to_dask(a, chunks=chunks)
    b = cdask.from_dask(x, scheduler="sync")
    assert b.sparse_ndim == a.sparse_ndim and b.nnz == a.nnz
    np.testing.assert_array_equal(b.to_dense(), a.to_dense())


def test_to_dask_refuses_split_dense_dimensions():
    a = coosparse.random((9, 8, 3), density=0.2, sparse_ndim=2, seed=6)
    with pytest.raises(ValueError, match="dimension 2 is a dense"):
        cdask.to_dask(a, chunks=(4, 4, 2))


def test_from_chunks_grid_of_coo_and_scipy_pieces():
    sp = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(8)
    d = rng.random((7, 9)) * (rng.random((7, 9)) < 0.3)
    pieces = [[coosparse.from_dense(d[:4, :5]), sp.coo_array(d[:4, 5:])],
              [sp.csr_matrix(d[4:, :5]), coosparse.from_dense(d[4:, 5:].astype(np.float32))]]
    x = cdask.from_chunks(pieces)
    assert x.chunks == ((4, 3), (5, 4)) and x.dtype == np.float64
    np.testing.assert_allclose(cdask.from_dask(x, scheduler="sync").to_dense(), d, rtol=1e-6)


def test_from_chunks_generator_gives_row_blocks():
    parts = (coosparse.random((n, 6), density=0.3, seed=n) for n in (3, 4, 2))
    x = cdask.from_chunks(parts)
    assert x.chunks == ((3, 4, 2), (6,))
    ref = np.concatenate([coosparse.random((n, 6), density=0.3, seed=n).to_dense() for n in (3, 4, 2)])
    np.testing.assert_array_equal(cdask.from_dask(x, scheduler="sync").to_dense(), ref)


def _piece(i):
    return coosparse.random((5, 8), density=0.25, seed=100 + i)


def test_from_chunks_delayed_pieces_are_built_by_the_scheduler():
    from dask import delayed

    x = cdask.from_chunks([delayed(_piece)(i) for i in range(4)], chunks=((5,) * 4, (8,)))
    assert isinstance(x._meta, COO) or not hasattr(COO, "__getitem__")
    ref = np.concatenate([_piece(i).to_dense() for i in range(4)])
    np.testing.assert_array_equal(cdask.from_dask(x, scheduler="threads").to_dense(), ref)


def test_from_chunks_errors():
    a = COO([[0], [1]], np.array([1.0]), (2, 2))
    with pytest.raises(ValueError, match="different fill values"):
        cdask.from_chunks([a, COO([[0], [1]], np.array([1.0]), (2, 2), fill_value=1.0)])
    with pytest.raises(ValueError, match="different sizes"):
        cdask.from_chunks([[a, a], [COO([[0], [1]], np.array([1.0]), (2, 3)), a]])
    with pytest.raises(TypeError, match="expected a coosparse.COO"):
        cdask.from_chunks([a, np.ones((2, 2))])
    with pytest.raises(ValueError, match="chunks= is required"):
        from dask import delayed

        cdask.from_chunks([delayed(_piece)(0)])
    with pytest.raises(ValueError, match="at least one piece"):
        cdask.from_chunks([])


@needs_getitem()
def test_from_array_and_map_blocks_with_coo_meta(arrays):
    a = arrays[0]
    x = da.from_array(a, chunks=(16, 15), asarray=False)
    assert isinstance(x._meta, COO)
    np.testing.assert_array_equal(x.compute(scheduler="threads").to_dense() if hasattr(coosparse, "concatenate")
                                  else cdask.from_dask(x, scheduler="threads").to_dense(), a.to_dense())
    meta = cdask._meta(np.float64, 2)
    y = x.map_blocks(lambda blk: blk * 2.0, meta=meta, dtype=np.float64)
    assert isinstance(y._meta, COO)
    np.testing.assert_array_equal(cdask.from_dask(y, scheduler="threads").to_dense(), 2 * a.to_dense())


# ------------------------------------------------------------------ operations (both schedulers)
ELEMENTWISE = {
    "add": lambda x, y: x + y,
    "multiply": lambda x, y: x * y,
    "abs": lambda x, y: np.abs(-x),
    "fill travels (x + 1)": lambda x, y: x + 1.0,
    "maximum": lambda x, y: np.maximum(x, y),
}


@pytest.mark.parametrize("op", list(ELEMENTWISE))
def test_elementwise(op, arrays, scheduler):
    a, b, _ = arrays
    f = ELEMENTWISE[op]
    x, y = cdask.to_dask(a, chunks=(16, 15)), cdask.to_dask(b, chunks=(16, 15))
    r = f(x, y)
    result = cdask.from_dask(r, **scheduler)
    assert_same(result, f(a, b), f(a.to_dense(), b.to_dense()))


def test_times_dense_dask_array(arrays, scheduler):
    a = arrays[0]
    d = np.arange(a.size, dtype=np.float64).reshape(a.shape)
    x = cdask.to_dask(a, chunks=(16, 15))
    result = cdask.from_dask(x * da.from_array(d, chunks=(16, 15)), **scheduler)
    assert_same(result, a * d, a.to_dense() * d)


REDUCTIONS = {
    "sum": lambda x, **k: x.sum(**k),
    "sum axis 0": lambda x, **k: x.sum(axis=0, **k),
    "sum axis 1 keepdims": lambda x, **k: x.sum(axis=1, keepdims=True, **k),
    "max axis 1": lambda x, **k: x.max(axis=1, **k),
    "mean axis 0": lambda x, **k: x.mean(axis=0, **k),
    "mean": lambda x, **k: x.mean(**k),
    "any axis 1": lambda x, **k: (x > 0.5).any(axis=1, **k),
    # Dask's moments subtract each chunk's own mean: partials of different fills (joined densely)
    "var": lambda x, **k: x.var(**k),
    "std axis 0": lambda x, **k: x.std(axis=0, **k),
    "var axis 1": lambda x, **k: x.var(axis=1, **k),
    "std axis 1 ddof": lambda x, **k: x.std(axis=1, ddof=1, **k),
}


@needs("sum", "max", "mean", "any", "var", "std", "concatenate")
@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_reductions_with_split_every(op, arrays, scheduler):
    a = arrays[0]
    f = REDUCTIONS[op]
    x = cdask.to_dask(a, chunks=(10, 15))
    result = f(x, split_every=2).compute(**scheduler)
    single, ref = f(a), f(a.to_dense())
    if op == "max axis 1" or not isinstance(single, COO):
        # Dask builds these from dense pieces: compare values
        np.testing.assert_allclose(dense(result), ref, rtol=1e-12)
        np.testing.assert_allclose(dense(single), ref, rtol=1e-12)
    else:
        # the divisions by Dask's dense element counts and its where(n == 0, ...) keep the COO
        # partials sparse (SPEC 9: the counts are never 0), so mean, var and std give COOs too
        assert_same(result, single, ref)


@needs_getitem()
@needs("concatenate")
@pytest.mark.parametrize("key", [(slice(5, 50, 2), slice(3, 33)), (slice(None, None, -3), 7), ([1, 5, 40, 5],)])
def test_slicing(key, arrays, scheduler):
    a = arrays[0]
    x = cdask.to_dask(a, chunks=(16, 15))
    result = x[key].compute(**scheduler)
    assert_same(result, a[key], a.to_dense()[key])


@needs("concatenate")
@pytest.mark.parametrize("axis", [0, 1])
def test_concatenate_and_compute(axis, arrays, scheduler):
    a, b, _ = arrays
    x, y = cdask.to_dask(a, chunks=(16, 15)), cdask.to_dask(b, chunks=(16, 15))
    result = da.concatenate([x, y], axis=axis).compute(**scheduler)
    assert_same(result, coosparse.concatenate([a, b], axis=axis), np.concatenate([a.to_dense(), b.to_dense()], axis))


@needs_getitem()
@needs("concatenate")
def test_rechunk(arrays, scheduler):
    a = arrays[0]
    x = cdask.to_dask(a, chunks=(16, 15)).rechunk((25, 40))
    assert x.chunks == ((25, 25, 10), (40,))
    result = cdask.from_dask(x, **scheduler)
    np.testing.assert_array_equal(result.to_dense(), a.to_dense())
    assert isinstance(x.compute(**scheduler), COO)


@needs("tensordot", "matmul", "concatenate")
@pytest.mark.parametrize("other", ["sparse", "dense", "vector"])
@pytest.mark.parametrize("how", ["matmul", "tensordot"])
def test_matmul_and_tensordot(how, other, arrays, scheduler):
    a, _, c = arrays
    if other == "vector":
        c = np.linspace(-1, 1, 40)
    elif other == "dense":
        c = c.to_dense()
    x = cdask.to_dask(a, chunks=(16, 15))
    y = cdask.to_dask(c, chunks=(15, 12)) if isinstance(c, COO) else da.from_array(c, chunks=15)
    if how == "matmul":
        result, single = (x @ y).compute(**scheduler), a @ c
    else:
        result, single = da.tensordot(x, y, axes=1).compute(**scheduler), coosparse.tensordot(a, c, axes=1)
    assert_same(result, single, a.to_dense() @ dense(c))


@needs("einsum", "concatenate")
def test_einsum(arrays):
    a, _, c = arrays
    x, y = cdask.to_dask(a, chunks=(16, 15)), cdask.to_dask(c, chunks=(15, 12))
    result = da.einsum("ij,jk->ik", x, y).compute(scheduler="threads")
    np.testing.assert_allclose(dense(result), a.to_dense() @ c.to_dense(), rtol=1e-12)


def test_cluster_workers_registered_coo(cluster):
    """The worker processes know the COO chunk type and size it by its bytes (entry point)."""
    def probe():
        import coosparse as cs
        from dask.array.dispatch import concatenate_lookup
        from dask.sizeof import sizeof

        a = cs.COO([[0, 1]], np.array([1.0, 2.0]), (3,))
        return concatenate_lookup.dispatch(cs.COO).__module__, sizeof(a) >= 32

    assert set(cluster.run(probe).values()) == {("coosparse.dask", True)}


def test_cluster_delayed_pieces_fill_and_flags_travel(cluster):
    from dask import delayed

    def piece(i):
        p = coosparse.random((6, 9), density=0.3, sorted=True, seed=200 + i)
        return COO(p.indices, p.values, p.shape, sorted=True, unique=True, fill_value=np.nan)

    x = cdask.from_chunks([delayed(piece)(i) for i in range(3)], chunks=((6,) * 3, (9,)), fill_value=np.nan)
    y = x.map_blocks(lambda blk: blk, dtype=np.float64, meta=cdask._meta(np.float64, 2, fill_value=np.nan))
    result = cdask.from_dask(y, scheduler=cluster)
    assert np.isnan(result.fill_value) and result.is_coalesced
    expected = np.concatenate([piece(i).to_dense() for i in range(3)])
    np.testing.assert_array_equal(result.to_dense(), expected)


# ------------------------------------------------------------------ the benchmark suite
def test_bench_dask_is_its_own_suite_and_its_blocks_form_an_rmat_graph():
    from coosparse.bench import cases_dask, cli, discover

    assert discover.suite_of("cases_dask") == "dask" and discover.suite_of("cases_coalesce") == "default"
    assert cli.parse_args(["--suite", "dask"]).suite == "dask" and cli.parse_args([]).suite == "default"
    scale, nblocks = 12, 4
    blocks = [cases_dask.rmat_row_block(scale, nblocks, k, seed=5) for k in range(nblocks)]
    again = cases_dask.rmat_row_block(scale, nblocks, 2, seed=5)
    np.testing.assert_array_equal(again[0], blocks[2][0])  # deterministic per (seed, block)
    n = 1 << scale
    total = 0
    for idx, val in blocks:
        keys = idx[0] * n + idx[1]
        assert np.all(np.diff(keys) > 0) and idx[0].max() < n // nblocks  # coalesced, local rows
        assert np.all((val >= 0) & (val < 1))
        total += idx.shape[1]
    # edge factor 16 drawn (Poisson), fewer after repeated edges are dropped; blocks are balanced
    assert 0.6 * 16 * n < total <= 1.1 * 16 * n
    sizes = [idx.shape[1] for idx, _ in blocks]
    assert max(sizes) < 2 * min(sizes)  # (hub vertices make blocks uneven at small scales)
