"""sampled_matmul's transposed copy of a strided factor comes from host scratch memory reused across
calls (coosparse/_kernels/scratch.py): the same results through it, and the copies given back."""
import threading

import numpy as np
import pytest

import coosparse
from coosparse import COO
from coosparse._kernels.numba import layer as nb_layer
from coosparse._kernels.numba import transpose as tr
from coosparse._kernels import scratch
from coosparse.ops.linalg import products


@pytest.fixture
def pool(monkeypatch):
    """An empty pool with small thresholds (so that small test arrays go through it); the pool's own
    rules are tested in tests/kernels/test_scratch.py."""
    monkeypatch.setattr(scratch, "MIN_BYTES", 1024)
    monkeypatch.setattr(scratch, "KEEP_BYTES", 1 << 20)
    scratch.clear()
    yield scratch
    scratch.clear()


@pytest.mark.parametrize("ncols", [300, 1200])  # both sides of the tiled transpose's threshold (65,536)
@pytest.mark.parametrize("named_from", [0, None])  # y's named columns only (0), or the plain copy
def test_sampled_matmul_through_scratch(pool, backend, ncols, named_from, monkeypatch):
    """Row-major y (and column-major x) are transposed into scratch: the same bits as contiguous
    operands, call after call with new data in the reused memory; the scratch is given back."""
    if named_from is not None:
        monkeypatch.setattr(products, "SAMPLED_COLUMNS_FROM", named_from)
    rng = np.random.default_rng(3)
    mask = coosparse.random((90, ncols), density=0.3, random_state=4)
    if backend.device == "cpu":
        assert mask.nnz >= max(90, ncols)  # the copies are made
    for _ in range(3):
        x, y = rng.standard_normal((90, 64)), rng.standard_normal((64, ncols))
        want = coosparse.sampled_matmul(mask, x, np.asfortranarray(y)).values  # y's columns unit-stride: no copy
        m, xb, yb, xf = (backend.put(v) for v in (mask, x, y, np.asfortranarray(x)))
        for xo in (xb, xf):
            got = backend.get(coosparse.sampled_matmul(m, xo, yb))
            assert got.values.tobytes() == want.tobytes()
        np.testing.assert_allclose(want, (x @ y)[tuple(mask.indices)], rtol=1e-12, atol=1e-12)
        if backend.device == "cpu":
            # both copies given back (x's and y's); the numbers of y's named columns stay with the mask
            assert len(pool._free) == 2
            kept = m._cached_companion(products.COLUMN_NUMBERING + (ncols,))
            assert (kept is not None) == (named_from == 0)


@pytest.mark.parametrize("named_from", [0, None])
def test_scratch_given_back_on_error(pool, named_from, monkeypatch):
    if named_from is not None:
        monkeypatch.setattr(products, "SAMPLED_COLUMNS_FROM", named_from)
    idx = np.stack([np.arange(400) % 3, np.arange(400) % 300])
    idx[1, -1] = 5000  # a column out of range, after more entries than columns (so y is copied)
    mask = COO(idx, np.ones(400), (3, 300), check=False)
    x, y = np.ones((3, 64)), np.ones((64, 300))
    with pytest.raises(IndexError):
        coosparse.sampled_matmul(mask, x, y)
    assert pool.kept_bytes() == 300 * 64 * 8 + pool.ALIGN  # y's copy (the numbers stay with the mask)


def test_sampled_matmul_threads_never_share_scratch(pool):
    """Calls from several Python threads at once (the kernels release the GIL) each get their own copy."""
    mask = coosparse.random((200, 5000), density=0.05, random_state=5)
    rng = np.random.default_rng(6)
    ys = [rng.standard_normal((16, 5000)) for _ in range(4)]
    x = rng.standard_normal((200, 16))
    want = [coosparse.sampled_matmul(mask, x, np.asfortranarray(y)).values for y in ys]
    bad = []

    def work(i):
        for _ in range(20):
            if coosparse.sampled_matmul(mask, x, ys[i]).values.tobytes() != want[i].tobytes():
                bad.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad and pool.kept_bytes() <= pool.KEEP_BYTES
    assert tr.TRANSPOSE_NUMPY_BELOW < 16 * 5000  # the tiled (GIL-free) transpose ran


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.float32, np.float64, np.int64, np.uint64,
                                   np.bool_, np.complex128])
@pytest.mark.parametrize("shape", [(8, 8), (16, 64), (17, 130), (9, 1000), (64, 203), (3, 40)])
def test_dense_transpose_blocks_exact(monkeypatch, dtype, shape):
    """The tiled transpose (vector 8 x 8 blocks for unit-stride rows of plain numbers, streamed
    into whole aligned cache lines for 8-byte items; element by element otherwise: strided rows,
    unaligned data, bool, complex) copies every bit (any NaN payload included), whole blocks and
    ragged edges, into a fresh or a given array, and writes nothing outside it."""
    monkeypatch.setattr(tr, "TRANSPOSE_NUMPY_BELOW", 0)
    rng = np.random.default_rng(8)
    itemsize = np.dtype(dtype).itemsize
    raw = rng.integers(0, 256, size=(shape[0] * 2) * (shape[1] * 2) * itemsize + itemsize, dtype=np.uint8)
    if dtype is np.bool_:
        raw &= 1
    flat = raw[:-itemsize].view(dtype)
    unaligned = raw[1:1 + flat.nbytes].view(dtype) if itemsize > 1 else flat  # off by one byte
    sources = [flat[:shape[0] * shape[1]].reshape(shape),
               flat.reshape(shape[0] * 2, shape[1] * 2)[::2, ::2],  # strided rows
               flat.reshape(shape[0] * 2, shape[1] * 2)[::2, 1:shape[1] + 1],  # unit-stride rows, offset
               np.asfortranarray(flat[:shape[0] * shape[1]].reshape(shape)),
               unaligned[:shape[0] * shape[1]].reshape(shape)]
    for src in sources:
        want = np.ascontiguousarray(src.T)
        for nthreads in (1, 3):
            got = tr.dense_transpose(src, nthreads)
            assert got.flags.c_contiguous and got.tobytes() == want.tobytes()
            # into a cache-line aligned array (8-byte items then stream their stores) and one that
            # is not (8 bytes off a line)
            for skew in (0, 8):
                buf = np.zeros(want.nbytes + 128, np.uint8)
                at = -buf.ctypes.data % 64 + skew
                out = buf[at:at + want.nbytes].view(dtype).reshape(want.shape)
                assert tr.dense_transpose(src, nthreads, out) is out and out.tobytes() == want.tobytes()
                assert not buf[:at].any() and not buf[at + want.nbytes:].any()  # nothing written outside


def test_dense_transpose_picks_the_streaming_kernel_only_for_aligned_lines(monkeypatch):
    monkeypatch.setattr(tr, "TRANSPOSE_NUMPY_BELOW", 0)
    used = []
    for name in ("_transpose_part", "_transpose_rows_part", "_transpose_stream_part"):
        kernel = getattr(tr, name)
        monkeypatch.setattr(tr, name, lambda t, n, *args, kernel=kernel, name=name: (used.append(name), kernel(t, n, *args)))
    a = np.random.default_rng(9).random((16, 100))
    buf = np.zeros(2 * a.nbytes + 128, np.uint8)
    at = -buf.ctypes.data % 64
    # items move as unsigned integers of their width: complex64 as 8-byte words, bool as bytes;
    # 16-byte items element by element
    for skew, dtype, want in ((0, np.float64, "_transpose_stream_part"), (8, np.float64, "_transpose_rows_part"),
                              (0, np.float32, "_transpose_rows_part"), (0, np.complex64, "_transpose_stream_part"),
                              (0, np.bool_, "_transpose_rows_part"), (0, np.complex128, "_transpose_part")):
        src = (a * (1 + 1j) if np.dtype(dtype).kind == "c" else a > 0.5 if dtype is np.bool_ else a).astype(dtype)
        out = buf[at + skew:at + skew + src.nbytes].view(dtype).reshape(100, 16)
        used.clear()
        tr.dense_transpose(src, 1, out)
        assert set(used) == {want} and np.array_equal(out, src.T)


@pytest.mark.parametrize("ncols", [2000, 70000])  # both sides of the tiled transpose's threshold (x 16 rows)
@pytest.mark.parametrize("sort", [True, False])
@pytest.mark.parametrize("named_from", [0, None])
def test_sampled_matmul_copies_only_named_columns(backend, ncols, sort, named_from, monkeypatch):
    """A mask naming a few columns, many times over (so y is copied): only those columns are copied
    and renumbered; the same bits as y with unit-stride columns (no copy), sorted mask or not."""
    if named_from is not None:
        monkeypatch.setattr(products, "SAMPLED_COLUMNS_FROM", named_from)
    rng = np.random.default_rng(11)
    named = rng.choice(ncols, size=ncols // 7, replace=False)
    n = ncols + 5
    idx = np.stack([rng.integers(0, 40, n), rng.choice(named, n)])
    mask = COO(idx, np.ones(n), (40, ncols))
    if sort:
        mask = mask.coalesce()
    x, y = rng.standard_normal((40, 16)), rng.standard_normal((16, ncols))
    want = coosparse.sampled_matmul(mask, x, np.asfortranarray(y)).values
    got = backend.get(coosparse.sampled_matmul(backend.put(mask), backend.put(x), backend.put(y)))
    assert got.values.tobytes() == want.tobytes()
    np.testing.assert_allclose(want, (x @ y)[tuple(mask.indices)], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("named_from", [0, None])
def test_sampled_matmul_bad_column_through_named_columns(named_from, monkeypatch):
    """A column past the end among many named ones: IndexError naming the mask, as before."""
    if named_from is not None:
        monkeypatch.setattr(products, "SAMPLED_COLUMNS_FROM", named_from)
    idx = np.stack([np.arange(500) % 4, np.arange(500) % 50])
    idx[1, 250] = 50
    mask = COO(idx, np.ones(500), (4, 50), check=False)
    with pytest.raises(IndexError):
        coosparse.sampled_matmul(mask, np.ones((4, 16)), np.ones((16, 50)))
    idx[1, :] = -1  # every column bad
    with pytest.raises(IndexError):
        coosparse.sampled_matmul(COO(idx, np.ones(500), (4, 50), check=False), np.ones((4, 16)), np.ones((16, 50)))


def test_named_columns_route_taken_from_its_threshold(monkeypatch):
    """At SAMPLED_COLUMNS_FROM entries and above the copy holds y's named columns only; below, the
    plain copy (the same bits either way)."""
    calls = []
    real = products.backend_for

    def spy(*args):
        be = real(*args)

        class Spy:
            def __getattr__(self, name):
                if name in ("sampled_transpose", "dense_transpose"):
                    calls.append(name)
                return getattr(be, name)
        return Spy()

    monkeypatch.setattr(products, "backend_for", spy)
    monkeypatch.setattr(products, "SAMPLED_COLUMNS_FROM", 600)
    rng = np.random.default_rng(12)
    x, y = rng.standard_normal((30, 8)), rng.standard_normal((8, 400))
    for n, want in ((599, "dense_transpose"), (600, "sampled_transpose")):
        mask = COO(np.stack([rng.integers(0, 30, n), rng.integers(0, 400, n)]), np.ones(n), (30, 400))
        calls.clear()
        got = coosparse.sampled_matmul(mask, x, y).values
        assert calls == [want]
        assert got.tobytes() == coosparse.sampled_matmul(mask, x, np.asfortranarray(y)).values.tobytes()
    # float32 and int64 too; complex keeps the plain copy whatever the size
    for dtype, route in ((np.float32, "sampled_transpose"), (np.int64, "sampled_transpose"),
                         (np.complex128, "dense_transpose")):
        calls.clear()
        got = coosparse.sampled_matmul(mask, x.astype(dtype), y.astype(dtype)).values
        assert calls == [route]
        assert got.tobytes() == coosparse.sampled_matmul(mask, x.astype(dtype),
                                                         np.asfortranarray(y.astype(dtype))).values.tobytes()


def test_column_numbering_kept_with_the_mask(pool, monkeypatch):
    """A 2-D mask keeps the numbering of the columns it names (first-entry order): the next product
    with that mask skips the pass; it is counted in nbytes and dropped with the companions. A
    strided 1-D y (no mask row to keep it with) numbers into scratch, given back."""
    monkeypatch.setattr(products, "SAMPLED_COLUMNS_FROM", 0)
    counted = []
    real = nb_layer.number_columns
    monkeypatch.setattr(nb_layer, "number_columns", lambda *a: counted.append(1) or real(*a))
    rng = np.random.default_rng(21)
    mask = COO(np.stack([rng.integers(0, 40, 900), rng.integers(0, 300, 900)]), np.ones(900), (40, 300))
    before = mask.nbytes
    x = rng.standard_normal((40, 16))
    for _ in range(3):
        y = rng.standard_normal((16, 300))
        got = coosparse.sampled_matmul(mask, x, y)
        want = coosparse.sampled_matmul(mask, x, np.asfortranarray(y))  # unit-stride columns: no copy
        assert got.values.tobytes() == want.values.tobytes()
    assert len(counted) == 1
    cols2, rowmap, m = mask._cached_companion(products.COLUMN_NUMBERING + (300,))
    named = np.unique(mask.indices[1])
    assert int(m[0]) == named.shape[0] and (rowmap >= 0).sum() == named.shape[0]
    np.testing.assert_array_equal(cols2, rowmap[mask.indices[1]])
    assert mask.nbytes == before + cols2.nbytes + rowmap.nbytes + m.nbytes
    mask.drop_companions()
    coosparse.sampled_matmul(mask, x, y)
    assert len(counted) == 2
    # a 1-D y read with a stride: its column row is zeros, not the mask's; numbers into scratch
    v = COO(np.stack([rng.integers(0, 40, 900)]), np.ones(900), (40,))
    yv = rng.standard_normal(32)[::2]
    got = coosparse.sampled_matmul(v, x, yv)
    np.testing.assert_allclose(got.values, (x @ yv)[v.indices[0]], rtol=1e-12)
    assert len(counted) == 3 and not v.__dict__.get("_companions")
    assert len(pool._free) == 2  # y's copy and the numbers, given back
