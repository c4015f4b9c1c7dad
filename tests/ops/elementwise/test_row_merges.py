"""The per-row merges of multiply and add of coalesced matrices (through cached row pointers).

Both operands sorted 2-D on the CPU: the Numba layer merges each row's columns
(``intersect.row_multiply``, ``union.row_add``) instead of the global merge over
keys. Checked here: the same results, bit for bit, as the global merge and the
dense meaning; bad columns and lying flags refused; probe repeats handed to
the global merge; the row cut of the parts. The CUDA layer ignores the pointers
(``backend`` runs the operations on both layers).
"""
import numpy as np
import pytest

import coosparse
from coosparse import COO
from coosparse._core import dtypes
from coosparse._core.arrays import rows2d
from coosparse._kernels.backend import backend_for
from coosparse._kernels.numba import layer
from coosparse._kernels.numba.parts import row_range
from coosparse.ops.elementwise import operands as _operands
from coosparse.ops.elementwise.operands import row_pointers
from operands import close
from reference import dense_of
from test_reliability import expect_error

POINTER = ("row_pointer", 1)


@pytest.fixture(params=["rows", "keys"])
def merge(request, monkeypatch):
    """Small operands through the per-row merges too ("rows"), or as they go by default ("keys")."""
    if request.param == "rows":
        monkeypatch.setattr(_operands, "ROW_MERGE_MIN", 0)
    return request.param


def _random(shape, nnz, seed, dtype=np.float64, k=None, rows=None, unique=True):
    """A sorted matrix with ``nnz`` entries (rows drawn from ``rows`` when given: empty rows elsewhere)."""
    rng = np.random.default_rng(seed)
    r = rng.choice(rows, nnz) if rows is not None else rng.integers(0, shape[0], nnz)
    c = rng.integers(0, shape[1], nnz)
    keys = r * shape[1] + c
    keys = np.unique(keys) if unique else np.sort(keys)
    idx = np.stack([keys // shape[1], keys % shape[1]])
    vshape = (keys.size,) + ((k,) if k else ())
    vals = rng.standard_normal(vshape) * 100
    if np.dtype(dtype).kind == "c":
        vals = vals + 1j * rng.standard_normal(vshape)
    return COO(idx, vals.astype(dtype), shape + ((k,) if k else ()), sorted=True, unique=unique)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.uint8, np.complex128])
@pytest.mark.parametrize("k", [None, 3])
@pytest.mark.parametrize("nnz", [0, 1, 200, 60_000])
def test_row_merges_equal_the_global_merges_bit_for_bit(dtype, k, nnz):
    shape = (300, 500)
    # b only in every third row: rows empty on one side, both sides, or neither
    a = _random(shape, nnz, 1, dtype, k)
    b = _random(shape, nnz // 2 + 1, 2, dtype, k, rows=np.arange(0, 300, 3))
    strides = np.array([shape[1], 1])
    av, bv = rows2d(a.values), rows2d(b.values)
    pointers = a.row_pointer(), b.row_pointer()
    for x, y, xv, yv, p in [(a, b, av, bv, pointers), (b, a, bv, av, pointers[::-1])]:
        want = layer.merge_multiply(x.indices, xv, y.indices, yv, strides, sizes=shape)
        got = layer.merge_multiply(x.indices, xv, y.indices, yv, strides, sizes=shape, pointers=p)
        for w, g in zip(want, got):
            assert w.dtype == g.dtype and w.view(np.uint8).tobytes() == g.view(np.uint8).tobytes()
        for negate in (False, True) if dtype != np.uint8 else (False,):
            want = layer.merge_add(x.indices, y.indices, xv, yv, strides, negate, sizes=shape)
            got = layer.merge_add(x.indices, y.indices, xv, yv, strides, negate, sizes=shape, pointers=p)
            for w, g in zip(want, got):
                assert w.dtype == g.dtype and w.view(np.uint8).tobytes() == g.view(np.uint8).tobytes()


@pytest.mark.parametrize("op", ["multiply", "add", "subtract"])
def test_row_merges_against_dense(backend, op):
    # large enough for several parts; skewed rows (a few long ones) to move the cuts
    shape = (400, 8000)
    rows = np.concatenate([np.repeat(np.arange(400), 20), np.full(800, 7), np.full(800, 350)])
    a, b = _random(shape, 45_000, 3, rows=rows), _random(shape, 35_000, 4)
    assert a.nnz + b.nnz > _operands.ROW_MERGE_MIN
    r = backend.get(getattr(coosparse, op)(backend.put(a), backend.put(b)))
    assert r.is_sorted and r.is_unique and r.dtype == np.float64
    close(dense_of(r), getattr(np, op)(dense_of(a), dense_of(b)), np.float64)
    if backend.device == "cpu":  # the pointers are cached with the operands (counted in nbytes)
        assert a._cached_companion(POINTER + (shape[0],)) is not None
        assert a.nbytes == a.indices.nbytes + a.values.nbytes + 8 * (shape[0] + 1)


def test_one_sided_entries_keep_their_sign_and_bits(merge):
    a = COO([[0, 0, 1], [0, 2, 1]], np.array([-0.0, 1.0, np.nan]), (2, 3), sorted=True, unique=True)
    b = COO([[0, 1], [1, 1]], np.array([-0.0, 2.0]), (2, 3), sorted=True, unique=True)
    s = coosparse.add(a, b)
    assert s.indices.tolist() == [[0, 0, 0, 1], [0, 1, 2, 1]]
    assert np.signbit(s.values[:2]).tolist() == [True, True] and np.isnan(s.values[3])
    d = coosparse.subtract(a, b)
    assert np.signbit(d.values[:2]).tolist() == [True, False]  # -0.0 alone; -(-0.0) alone


def test_probe_repeats_go_to_the_global_merge(backend, merge):
    # sorted, not unique on both sides: the probe's repeated columns are summed in stored order
    a = COO([[0, 0, 1, 1], [1, 1, 0, 2]], np.array([2.0, 3.0, 5.0, 7.0]), (2, 3), sorted=True)
    b = COO([[0, 0, 0, 1], [1, 1, 1, 2]], np.array([1e16, 1.0, -1e16, 4.0]), (2, 3), sorted=True)
    r = backend.get(coosparse.multiply(backend.put(a), backend.put(b)))
    assert r.indices.tolist() == [[0, 0, 1], [1, 1, 2]]  # a (the source: tie, b probes) keeps its repeats
    assert r.values.tolist() == [0.0, 0.0, 28.0]  # (1e16 + 1) - 1e16 == 0 in stored order
    assert r.is_sorted and not r.is_unique


@pytest.mark.parametrize("order", ["ab", "ba"])
def test_repeats_on_one_side_go_to_the_global_merge(backend, merge, order):
    # one side sorted with repeated columns (the source, whatever the argument order), the other
    # coalesced: the row merge (which advances both sides on a match) hands the pair to the merge
    # over keys, which keeps the source's repeats (and sums a probe's)
    rep = _random((60, 50), 900, 11, unique=False)
    assert rep.nnz > np.unique(rep.indices[0] * 50 + rep.indices[1]).size
    co = _random((60, 50), 800, 12)
    a, b = (rep, co) if order == "ab" else (co, rep)
    r = backend.get(coosparse.multiply(backend.put(a), backend.put(b)))
    assert r.is_sorted and not r.is_unique
    close(dense_of(r), dense_of(a) * dense_of(b), np.float64)
    if backend.device == "cpu":  # the layer's row, with either side probing
        for src, probe in ((a, b), (b, a)):
            args = (src.indices, rows2d(src.values), probe.indices, rows2d(probe.values), np.array([50, 1]))
            want = layer.merge_multiply(*args, sizes=(60, 50))
            got = layer.merge_multiply(*args, sizes=(60, 50), pointers=(src.row_pointer(), probe.row_pointer()))
            assert all(w.tobytes() == g.tobytes() for w, g in zip(want, got))


def test_small_operands_use_pointers_only_when_cached():
    a, b = _random((300, 500), 2000, 8), _random((300, 500), 2000, 9)
    assert row_pointers(a, b) is None and a._cached_companion(POINTER + (300,)) is None
    a.row_pointer(), b.row_pointer()
    assert all(p is q for p, q in zip(row_pointers(a, b), (a._row_pointer(), b._row_pointer())))
    big = _random((300, 5000), 70_000, 10)
    assert row_pointers(big, big) is not None  # large enough: built (and cached)
    assert big._cached_companion(POINTER + (300,)) is not None


def test_no_pointer_where_it_does_not_pay():
    # a leading dimension much longer than nnz: the global merge, no pointer cached
    a = _random((10**6, 50), 40_000, 5)
    b = _random((10**6, 50), 40_000, 6)
    assert row_pointers(a, b) is None
    coosparse.multiply(a, b), coosparse.add(a, b)
    assert a._cached_companion(POINTER + (10**6,)) is None
    c = coosparse.random((10, 5, 4), nnz=30, seed=7).coalesce()  # 3-D: keys over all dimensions
    assert row_pointers(c, c) is None


@pytest.mark.parametrize("where", ["column", "row", "middle"])
def test_row_merges_refuse_indices_out_of_bounds(backend, where, merge):
    g = backend.put(_random((50, 40), 300, 1))
    idx = {"column": [[0, 1, 2], [1, 40, 3]], "row": [[0, 1, 50], [1, 5, 3]],
           # inside a row whose order is broken too (its first and last columns are inside)
           "middle": [[1, 1, 1], [5, 45, 3]]}[where]
    bad = backend.put(COO(np.array(idx), np.ones(3), (50, 40), sorted=True, unique=True, check=False))
    for f in (lambda: coosparse.multiply(bad, g), lambda: coosparse.multiply(g, bad),
              lambda: coosparse.add(bad, g), lambda: coosparse.subtract(g, bad)):
        expect_error(backend, IndexError, f, f"out of bounds for dimension {int(where != 'row')}",
                     "out of bounds")


def test_row_merges_name_columns_out_of_order_within_a_row(backend, merge):
    # the rows are in order (the pointer builds), the columns of row 1 are not
    g = backend.put(_random((50, 40), 300, 1))
    lie = backend.put(COO(np.array([[0, 1, 1, 2], [1, 9, 5, 3]]), np.ones(4), (50, 40), sorted=True, unique=True,
                          check=False))
    for f in (lambda: coosparse.multiply(lie, g), lambda: coosparse.multiply(g, lie),
              lambda: coosparse.add(lie, g), lambda: coosparse.add(g, lie)):
        expect_error(backend, ValueError, f, "flag sorted=True", "flag sorted=True")
    # a repeat where unique=True lies: the union refuses it (a product may take repeats)
    rep = backend.put(COO(np.array([[0, 1, 1, 2], [1, 5, 5, 3]]), np.ones(4), (50, 40), sorted=True, unique=True,
                          check=False))
    for f in (lambda: coosparse.add(rep, g), lambda: coosparse.add(g, rep)):
        expect_error(backend, ValueError, f, "flag sorted=True", "flag sorted=True")


def test_row_range_cuts_rows_by_work():
    rng = np.random.default_rng(0)
    for lengths in (np.zeros(5, int), rng.integers(0, 30, 1000), np.r_[np.zeros(99, int), 10**6],
                    np.r_[10**5, np.ones(500, int)]):
        ap = np.r_[0, np.cumsum(lengths)]
        bp = np.r_[0, np.cumsum(lengths[::-1])]
        for nparts in (1, 3, 8):
            cuts = [row_range(t, nparts, ap, bp) for t in range(nparts)]
            assert cuts[0][0] == 0 and cuts[-1][1] == lengths.size
            assert all(cuts[t][1] == cuts[t + 1][0] for t in range(nparts - 1))
            assert all(lo <= hi for lo, hi in cuts)


@pytest.mark.parametrize("fn", [np.maximum, np.minimum, np.add, np.greater, np.logical_or])
@pytest.mark.parametrize("fills", [(0.0, 0.0), (1.5, -2.0)])
def test_engine_union_through_rows_equals_keys(monkeypatch, fn, fills):
    # the elementwise engine's union (merge_gather) takes the per-row merge from ROW_MERGE_MIN
    def operands(p):
        a = _random((300, 500), 40_000, 11, rows=np.arange(0, 300, 2))
        b = _random((300, 500), 30_000, 12, np.float32)
        return tuple(COO(x.indices, x.values, x.shape, sorted=True, unique=True, fill_value=x.dtype.type(f))
                     for x, f in zip((a, b), fills))
    monkeypatch.setattr(_operands, "ROW_MERGE_MIN", 1 << 62)
    a, b = operands(False)
    want = fn(a, b)
    assert a._cached_companion(POINTER + (300,)) is None
    monkeypatch.setattr(_operands, "ROW_MERGE_MIN", 0)
    a, b = operands(True)
    got = fn(a, b)
    if fn is not np.add and fills == (0.0, 0.0):  # (a mixed-dtype add and the fills take other paths)
        assert a._cached_companion(POINTER + (300,)) is not None
    assert (got.is_sorted, got.is_unique, got.dtype, got.fill_value) == (want.is_sorted, want.is_unique, want.dtype,
                                                                          want.fill_value)
    np.testing.assert_array_equal(got.indices, want.indices)
    assert got.values.tobytes() == want.values.tobytes()
    # the dense meaning, fills included (dense_of ignores a fill; to_dense writes it)
    np.testing.assert_array_equal(got.to_dense(), fn(a.to_dense(), b.to_dense()))


# ---- sparse_mask of two sorted matrices: one pass per row writing each mask entry's value ------
def _mask_by_keys(x, mask):
    """sparse_mask's values through the merge over keys (the path without pointers)."""
    strides = np.array([x.shape[1], 1])
    v = layer.mask_values(mask.indices, x.indices, dtypes.to_accumulation(rows2d(x.values)), strides,
                          sizes=x.sparse_shape)
    return dtypes.from_accumulation(v, x.dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.uint8, np.complex128, bool])
@pytest.mark.parametrize("k", [None, 3])
@pytest.mark.parametrize("nnz", [0, 1, 200, 60_000])
def test_sparse_mask_through_rows_equals_keys_bit_for_bit(dtype, k, nnz):
    shape = (300, 500)
    x = _random(shape, nnz, 1, dtype, k)
    # the mask only in every third row, with repeated columns (a mask need not be unique)
    mask = _random(shape, nnz // 2 + 1, 2, rows=np.arange(0, 300, 3), unique=False)
    if k:
        mask = COO(mask.indices, np.ones((mask.nnz, k)), shape + (k,), sorted=True, unique=False)
    x.row_pointer(), mask.row_pointer()  # cached: the op takes the row path at any size
    assert row_pointers(mask, x) is not None
    r = coosparse.sparse_mask(x, mask)
    want = _mask_by_keys(x, mask).reshape(r.values.shape)
    assert r.values.dtype == want.dtype and r.values.tobytes() == want.tobytes()
    assert r.indices is mask.indices and r.is_sorted and r.is_unique == mask.is_unique
    np.testing.assert_array_equal(r.values, dense_of(x)[tuple(mask.indices)])  # each mask entry: x there


def test_sparse_mask_through_rows_against_dense(backend, merge):
    shape = (400, 8000)
    rows = np.concatenate([np.repeat(np.arange(400), 20), np.full(800, 7), np.full(800, 350)])
    x, mask = _random(shape, 45_000, 3, rows=rows), _random(shape, 35_000, 4)
    r = backend.get(coosparse.sparse_mask(backend.put(x), backend.put(mask)))
    np.testing.assert_array_equal(dense_of(r), np.where(dense_of(mask) != 0, dense_of(x), 0))
    assert r.indices.tolist() == mask.indices.tolist()


def test_sparse_mask_probe_repeats_go_to_the_keys():
    # x flagged unique but repeating a column (check=False): the row pass hands it to the merge
    # over keys, whose ordered sums are sparse_mask's meaning of duplicates
    x = COO(np.array([[0, 0, 0, 1], [1, 1, 2, 0]]), np.array([1e16, 1.0, 5.0, 7.0]), (2, 3), sorted=True,
            unique=True, check=False)
    mask = COO(np.array([[0, 0, 1], [1, 2, 0]]), np.ones(3), (2, 3), sorted=True, unique=True)
    x.row_pointer(), mask.row_pointer()
    assert coosparse.sparse_mask(x, mask).values.tolist() == [1e16 + 1.0, 5.0, 7.0]


def test_sparse_mask_rows_refuse_bad_columns(backend, merge):
    g = _random((50, 40), 300, 1)
    bad = COO(np.array([[1, 1, 1], [5, 45, 3]]), np.ones(3), (50, 40), sorted=True, unique=True, check=False)
    lie = COO(np.array([[0, 1, 1, 2], [1, 9, 5, 3]]), np.ones(4), (50, 40), sorted=True, unique=True, check=False)
    for x, m in ((bad, g), (g, bad)):
        expect_error(backend, IndexError, lambda: coosparse.sparse_mask(backend.put(x), backend.put(m)),
                     "out of bounds for dimension 1", "out of bounds")
    if backend.device == "cpu":  # the key path on a device reports no order (its binary search stays in bounds)
        for x, m in ((lie, g), (g, lie)):
            if merge == "rows":
                with pytest.raises(ValueError, match="flag sorted=True"):
                    coosparse.sparse_mask(x, m)


def test_mask_values_rows_agree_across_layers(backend):
    # the row itself: the CUDA layer's composition gives the Numba layer's bits
    x, mask = _random((60, 70), 900, 5, k=2), _random((60, 70), 700, 6, unique=False)
    strides = np.array([70, 1])
    want = layer.mask_values(mask.indices, x.indices, rows2d(x.values), strides, sizes=(60, 70),
                             pointers=(mask.row_pointer(), x.row_pointer()))
    si, pi, pv = backend.put(mask.indices), backend.put(x.indices), backend.put(rows2d(x.values))
    got = backend.get(backend_for(si).mask_values(si, pi, pv, strides, sizes=(60, 70)))
    assert np.asarray(got).tobytes() == want.tobytes()


@pytest.mark.parametrize("row", [0, 255, 256, 600, 999])
def test_count_pass_finds_a_lie_in_any_block_of_rows(row):
    # the count pass checks blocks of rows as flat runs and takes back the pairs across row starts:
    # a lie inside any row of any block is found, the legal drops at row starts are not lies
    shape = (1000, 300)
    g = _random(shape, 20_000, 21)
    idx = g.indices.copy()
    s, e = int(np.searchsorted(idx[0], row)), int(np.searchsorted(idx[0], row, "right"))
    assert e - s >= 3
    strides, p = np.array([300, 1]), g.row_pointer()
    for change, product_ok in (("swap", False), ("repeat", True)):
        bad = idx.copy()
        if change == "swap":
            bad[1, s + 1], bad[1, s + 2] = idx[1, s + 2], idx[1, s + 1]
        else:
            bad[1, s + 1] = idx[1, s]
        v = rows2d(g.values)
        if product_ok:  # a repeat goes to the merge over keys: the product is still right
            got = layer.merge_multiply(bad, v, idx, v, strides, sizes=shape, pointers=(p, p))
            want = layer.merge_multiply(bad, v, idx, v, strides, sizes=shape)
            assert all(w.tobytes() == x.tobytes() for w, x in zip(want, got))
        else:
            with pytest.raises(ValueError, match="flag sorted=True"):
                layer.merge_multiply(bad, v, idx, v, strides, sizes=shape, pointers=(p, p))
        with pytest.raises(ValueError, match="flag sorted=True"):
            layer.merge_add(idx, bad, v, v, strides, False, sizes=shape, pointers=(p, p))


@pytest.mark.parametrize("columns", [1, 64, 500, 2**20, 2**20 + 1])
@pytest.mark.parametrize("bits", [True, False])
def test_count_pass_bitmap_and_merge_count_alike(columns, bits, monkeypatch):
    # up to _BITS_MAX_COLUMNS columns the count pass finds the matches of each row through a bitmap
    # of the columns, wider (or with the bitmap off) through a merge of the row: same counts, and
    # the results of the row merges equal the merges over keys bit for bit either way
    from coosparse._kernels.numba import rowmerge

    if not bits:
        monkeypatch.setattr(rowmerge, "_BITS_MAX_COLUMNS", 0)
    shape = (300, columns)
    a = _random(shape, 20_000, 3)
    b = _random(shape, 9_000, 4, rows=np.arange(0, 300, 2))
    limits = np.array(shape, dtype=np.uint64)
    p = a.row_pointer(), b.row_pointer()
    matches = rowmerge._row_counts(a.indices, b.indices, *p, limits, 2)[0]
    ka, kb = (x.indices[0] * columns + x.indices[1] for x in (a, b))
    assert matches.sum() == np.intersect1d(ka, kb).size
    strides = np.array([columns, 1])
    av, bv = rows2d(a.values), rows2d(b.values)
    for fn in (lambda **kw: layer.merge_multiply(a.indices, av, b.indices, bv, strides, sizes=shape, **kw),
               lambda **kw: layer.merge_add(a.indices, b.indices, av, bv, strides, True, sizes=shape, **kw)):
        want, got = fn(), fn(pointers=p)
        assert all(w.tobytes() == g.tobytes() for w, g in zip(want, got))


def test_row_merges_take_strided_values():
    # value rows that are a strided view (a column of a wider array): the kernels read flat views
    # of C-contiguous values, so their drivers copy such operands; the same bits as contiguous ones
    shape = (300, 500)
    a, b = _random(shape, 60_000, 5), _random(shape, 40_000, 6)
    p = a.row_pointer(), b.row_pointer()
    strides = np.array([shape[1], 1])
    av, bv = rows2d(a.values), rows2d(b.values)

    def strided(v):
        wide = np.zeros((v.shape[0], 3))
        wide[:, 1:2] = v
        assert not wide[:, 1:2].flags.c_contiguous
        return wide[:, 1:2]

    for fn, args in [(layer.merge_multiply, lambda x, y: (a.indices, x, b.indices, y, strides)),
                     (layer.merge_add, lambda x, y: (a.indices, b.indices, x, y, strides, False)),
                     (layer.mask_values, lambda x, y: (a.indices, b.indices, y, strides))]:
        want = fn(*args(av, bv), sizes=shape, pointers=p)
        got = fn(*args(strided(av), strided(bv)), sizes=shape, pointers=p)
        for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
            assert w.dtype == g.dtype and w.tobytes() == g.tobytes()
