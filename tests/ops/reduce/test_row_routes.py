"""Reductions over the rows of a matrix: every route gives the same bits, on both layers, for every
kind of value (-0.0, NaN, inf, signalling NaNs): the segment kernel over the row pointer (one value
per entry as a 1-D array, several (complex sums as float pairs, dense dimensions) as 2-D), the same
through a stable sort's permutation, and the tables by row; rows longer than ``TREE_LEAF`` take the
blocked order.
"""
import numpy as np
import pytest

import coosparse
from coosparse import COO
from coosparse._kernels.numba.reduce import TREE_LEAF
from coosparse.ops.reduce import grouping

SPECIAL = np.array([-0.0, 0.0, np.nan, np.inf, -np.inf, 1e300, -1e300, 5e-324, 1.0, -2.5, 3e-17, 0.1])


def _sorted_matrix(n, nrows, dtype, dense=(), seed=0, long_row=True):
    """A sorted (not unique) matrix: duplicates, empty rows, one row longer than TREE_LEAF, special values."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, nrows, n)
    if long_row:
        rows[: 2 * TREE_LEAF + 37] = nrows // 2
    cols = rng.integers(0, 40, n)
    order = np.lexsort((cols, rows))
    idx = np.stack([rows[order], cols[order]])
    shape = (nrows, 40) + dense
    size = n * int(np.prod(dense, dtype=np.int64))
    dt = np.dtype(dtype)
    if dt.kind == "f":
        v = np.where(rng.random(size) < 0.3, rng.choice(SPECIAL, size), rng.standard_normal(size) * 1e3)
    elif dt.kind == "c":
        v = rng.choice(SPECIAL, size) + 1j * rng.standard_normal(size)
    elif dt.kind == "b":
        v = rng.random(size) < 0.5
    else:
        v = rng.integers(-100, 100, size)
    with np.errstate(over="ignore"):
        values = v.astype(dt).reshape((n,) + dense)
    return COO(idx, values, shape, sorted=True, unique=False, check=False)


def _bits(r):
    return np.asarray(r.indices).tobytes(), np.ascontiguousarray(r.values).tobytes(), r.values.dtype


def _unsorted_same_row_order(a):
    """``a``'s entries with its rows in reverse order, each row's entries in their order (not sorted)."""
    order = np.argsort(-a.indices[0], kind="stable")
    return COO(a.indices[:, order], a.values[order], a.shape, sorted=False, unique=a.is_unique, check=False)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64, np.uint8, np.bool_])
@pytest.mark.parametrize("dense", [(), (3,)])
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("long_row", [True, False])
def test_row_reductions_same_bits_every_route(backend, dtype, dense, op, long_row):
    """sum/prod/max/min over the rows of a sorted matrix (duplicates, empty rows, special values, one
    value or three per entry, a row longer than TREE_LEAF or none): every route and both layers."""
    if op in ("max", "min") and np.dtype(dtype).kind == "c":
        return  # complex numbers are unordered (TypeError, tested elsewhere)
    a = _sorted_matrix(3000, 200, dtype, dense, long_row=long_row)
    if op != "sum":
        a = a.coalesce()  # (the other reductions coalesce first; a sum sums duplicates where they fall)

    def f(x):
        with np.errstate(all="ignore"):
            return getattr(coosparse, op)(x, axis=1)

    def fresh():
        return COO(a.indices, a.values, a.shape, sorted=True, unique=a.is_unique, check=False)

    pointer = f(fresh())  # the segment kernel over the row pointer
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grouping, "_by_key_fits", lambda bound, n: False)
        gathered = f(_unsorted_same_row_order(a))  # the kernel through a stable sort's permutation
    table = f(_unsorted_same_row_order(a))  # unsorted rows into a table, in stored order
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(COO, "_row_pointer_pays", lambda self: False)
        runs = f(fresh())  # the runs of sorted rows, each into its row of a table
    assert _bits(pointer) == _bits(gathered) == _bits(table) == _bits(runs)
    got = backend.get(f(backend.put(a)))  # the CUDA layer
    if op == "prod" and np.dtype(dtype).kind == "c" and backend.device != "cpu":
        # the layers' complex products of inf and NaN differ in the sign of the NaN they make (known,
        # not this path's): the same values, NaNs alike
        np.testing.assert_array_equal(got.indices, pointer.indices)
        np.testing.assert_array_equal(got.values, pointer.values)
    else:
        assert _bits(got) == _bits(pointer)
    if op == "prod":
        return  # a product's overflow (inf, then NaN at a zero) depends on its order: the bits above only
    d = a.to_dense()
    with np.errstate(all="ignore"):
        want = getattr(np, op)(d, axis=1)
        mine = pointer.to_dense()
        if op == "sum" and np.dtype(dtype).kind in "fc":  # another order (NumPy's is pairwise): close
            for part in (np.real, np.imag):
                _close_sum(part(mine), part(want), np.sum(np.abs(part(d)), axis=1))
        else:
            np.testing.assert_array_equal(mine, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint8, np.bool_])
@pytest.mark.parametrize("dense", [(), (3,)])
@pytest.mark.parametrize("fn", ["argmax", "argmin", "nanargmax", "nanargmin"])
def test_row_arg_extremes_over_the_pointer(backend, dtype, dense, fn):
    """argmax/argmin (and the NaN-skipping pair) over the rows of a coalesced matrix read its row
    pointer (columns ascend within each row): the same bits as the sort of the kept axes, on both
    layers, and NumPy's answer, implicit zeros, empty rows, ties and NaNs included."""
    a = _sorted_matrix(3000, 200, dtype, dense, long_row=False).coalesce()
    d = a.to_dense()
    if fn.startswith("nan") and np.dtype(dtype).kind == "f":
        keep = ~np.isnan(d).all(axis=1).any(axis=tuple(range(1, d.ndim - 1)))  # all-NaN rows raise
        a = a[np.flatnonzero(keep)]
        d = a.to_dense()
    f = getattr(coosparse, fn, None) or (lambda x, axis: getattr(np, fn)(x, axis=axis))
    pointer = f(a, axis=1)
    assert a._cached_companion(("row_pointer", 1, a.shape[0])) is not None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(COO, "_row_pointer_pays", lambda self: False)
        sorted_keys = f(COO(a.indices, a.values, a.shape, sorted=True, unique=True, check=False), axis=1)
    assert _bits(pointer) == _bits(sorted_keys)
    assert _bits(backend.get(f(backend.put(a), axis=1))) == _bits(pointer)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(pointer.to_dense(), getattr(np, fn)(d, axis=1))


def _close_sum(mine, want, scale):
    ok = np.isfinite(want)
    np.testing.assert_array_equal(np.isnan(mine), np.isnan(want))
    np.testing.assert_array_equal(mine[np.isinf(want)], want[np.isinf(want)])
    assert np.all(np.abs(mine - want)[ok] <= 1e-4 * scale[ok] + 1e-300)


@pytest.mark.parametrize("n", [1, 2, 3, 257, 1000])
def test_row_sums_edge_cases(n):
    """nnz=1, one row, every entry its own row, one long row, empty rows: the pointer's route gives
    the bits of the table's."""
    rng = np.random.default_rng(n)
    for rows in (np.zeros(n, np.int64), np.arange(n) * 2, np.sort(rng.integers(0, 5, n))):
        v = rng.standard_normal(n)
        v[::3] = -0.0
        a = COO(np.stack([rows, np.zeros(n, np.int64)]), v, (2 * n + 1, 1), sorted=True, unique=False, check=False)
        pointer = a.sum(axis=1)
        assert a._cached_companion(("row_pointer", 1, a.shape[0])) is not None
        table = _unsorted_same_row_order(a).sum(axis=1)
        assert _bits(pointer) == _bits(table)
        assert pointer.is_sorted and pointer.is_unique
        np.testing.assert_array_equal(pointer.indices[0], np.unique(rows))


SNAN = np.array([0x7FF0000000000001, 0xFFF4000000000000], dtype=np.uint64).view(np.float64)


@pytest.mark.parametrize("values, signs", [
    ([-0.0, -0.0, -0.0, 0.0, -0.0], [True, False, True]),  # rows: {-0, -0}, {-0, +0}, {-0}
    ([-0.0, -0.0, 0.0, -0.0, 0.0], [True, False, False]),
])
def test_row_sums_negative_zero_rows(backend, values, signs):
    """A row of negative zeros alone sums to -0.0 (left to right) on every route and layer."""
    idx = [[0, 0, 1, 1, 2], [0, 1, 0, 1, 0]]
    a = COO(idx, np.array(values), (3, 2), sorted=True, unique=True)
    r = backend.get(backend.put(a).sum(axis=1))
    assert np.signbit(r.values).tolist() == signs
    assert _bits(COO(idx, np.array(values), (3, 2)).sum(axis=1)) == _bits(r)  # unsorted: a table by row


def test_row_sums_signalling_nan_kept_alone_quieted_in_a_sum(backend):
    """A row holding one signalling NaN keeps its bits (nothing is added to it); one more term quiets
    it, on every route and layer."""
    v = np.array([SNAN[0], SNAN[1], 1.0, 2.0, SNAN[0]])
    idx = [[0, 1, 1, 2, 2], [0, 0, 1, 0, 1]]
    r = backend.get(backend.put(COO(idx, v, (3, 2), sorted=True, unique=True)).sum(axis=1))
    assert _bits(r) == _bits(COO(idx, v, (3, 2)).sum(axis=1))
    assert r.values[:1].view(np.uint64)[0] == SNAN.view(np.uint64)[0]
    assert np.isnan(r.values[1:]).all()


@pytest.mark.parametrize("empty_rows", [True, False])
def test_row_segments_cached_counted_and_dropped(empty_rows):
    """The non-empty rows of a sorted CPU array (with their starts) are cached beside its row pointer,
    counted in nbytes and freed by drop_companions(); later sums read them and give the same result,
    whose indices stay read-only (the cache is never written)."""
    rng = np.random.default_rng(3)
    nrows = 500
    rows = np.sort(rng.integers(0, nrows // 2 if empty_rows else nrows, 20_000))
    if not empty_rows:
        rows[:nrows] = np.arange(nrows)
        rows.sort()
    a = COO(np.stack([rows, np.zeros_like(rows)]), rng.standard_normal(rows.shape[0]), (nrows, 1),
            sorted=True, unique=False, check=False)
    base = a.nbytes
    first = a.sum(axis=1)
    seg = a._cached_companion(("row_segments", 1, nrows))
    assert seg is not None
    want_rows = np.unique(rows)
    if empty_rows:
        np.testing.assert_array_equal(seg[0], want_rows)
        np.testing.assert_array_equal(seg[1], np.append(np.searchsorted(rows, want_rows), rows.shape[0]))
    else:
        assert seg[0].shape == seg[1].shape == (0,)  # the pointer serves as the starts
    numbers = a._cached_companion(("row numbers", nrows))  # every row number, with no empty row
    assert (numbers is None) == empty_rows
    cached_rows = seg[0] if empty_rows else numbers
    extra = 0 if empty_rows else numbers.nbytes
    assert a.nbytes == base + (nrows + 1) * 8 + seg[0].nbytes + seg[1].nbytes + extra
    again = a.sum(axis=1)
    assert _bits(again) == _bits(first)
    np.testing.assert_array_equal(first.indices[0], want_rows)
    assert np.shares_memory(again.indices, cached_rows)  # the results view the cached rows ...
    with pytest.raises(ValueError, match="read-only"):
        again.indices[0, 0] = 7  # ... read-only
    np.testing.assert_array_equal(cached_rows, want_rows)
    a.drop_companions()
    assert a.nbytes == base
    assert _bits(a.sum(axis=1)) == _bits(first)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.complex128, np.int8, np.uint64, np.bool_])
@pytest.mark.parametrize("op", ["sum", "prod"])
def test_row_reductions_of_large_inputs_one_value_per_entry(backend, dtype, op):
    """From 65,536 entries, one value per entry in stored order takes its own kernel (long rows'
    pieces four at a time): rows of every length class (one entry, exactly a piece, four pieces and
    a tail, eleven pieces), empty rows, special values; both layers the same bits, NumPy's values
    row by row (products with a fill of 1)."""
    rng = np.random.default_rng(np.dtype(dtype).num)
    nrows, ncols = 4000, 3000
    lengths = rng.integers(0, 40, nrows)
    lengths[rng.random(nrows) < 0.2] = 0
    lengths[[7, 8, 9, 10]] = [1, TREE_LEAF, 4 * TREE_LEAF + 17, 11 * TREE_LEAF - 3]
    cols = np.concatenate([np.sort(rng.choice(ncols, m, replace=False)) for m in lengths])
    idx = np.stack([np.repeat(np.arange(nrows), lengths), cols])
    n = idx.shape[1]
    assert n >= 65_536
    dt = np.dtype(dtype)
    if dt.kind in "fc" and op == "prod":
        v = 1 + (rng.standard_normal(n) + (1j * rng.standard_normal(n) if dt.kind == "c" else 0)) / 64
    elif dt.kind in "fc":
        v = np.where(rng.random(n) < 0.02, rng.choice(SPECIAL, n), rng.standard_normal(n))
        v = (v + 1j * rng.standard_normal(n) if dt.kind == "c" else v)
    else:
        v = rng.integers(0, 3, n) if dt.kind in "bu" else rng.integers(-3, 4, n)
    with np.errstate(over="ignore", invalid="ignore"):
        # (a product's fill is 1: NumPy's product of a dense row is then that of its stored values)
        a = COO(idx, v.astype(dt), (nrows, ncols), sorted=True, unique=True, fill_value=op == "prod")

    def f(x):
        with np.errstate(all="ignore"):
            return getattr(coosparse, op)(x, axis=1)

    mine = f(a)
    assert _bits(backend.get(f(backend.put(a)))) == _bits(mine)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    rows = [a.values[bounds[r]:bounds[r + 1]] for r in range(nrows)]
    with np.errstate(all="ignore"):  # NumPy row by row (the dense matrix would be 100-200 MB)
        want = np.array([getattr(np, op)(x) for x in rows])
        got = mine.to_dense()
    assert got.dtype == want.dtype
    if dt.kind in "fc" and op == "sum":  # another order than NumPy's (pairwise): close to the scale
        for part in (np.real, np.imag):
            scale = np.array([np.sum(np.abs(part(x.astype(np.complex128)))) for x in rows])
            _close_sum(part(got.astype(np.complex128)), part(want.astype(np.complex128)),
                       scale * (10 if dt == np.float16 else 1))
    elif dt.kind in "fc":
        tol = 1e-2 if dt == np.float16 else 1e-4
        np.testing.assert_allclose(got.astype(np.complex128), want.astype(np.complex128), rtol=tol)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [5_000, 70_000])  # both sides of the 1-D kernel's threshold
@pytest.mark.parametrize("empty_rows", [True, False])
def test_row_sums_short_route_is_the_general_one(monkeypatch, dtype, n, empty_rows):
    """``sum(axis=1)`` of a sorted CPU float matrix with fill +0.0 skips the general grouping
    (``grouping.row_sums``): the same result (bits, indices, shape, flags, fill) as the general
    route; other fills, axes given otherwise, keywords, and strided values take or match the general
    route."""
    nrows = n if empty_rows else n // 50
    a = _sorted_matrix(n, nrows, dtype, seed=7)
    assert (np.unique(a.indices[0]).shape[0] < nrows) == empty_rows
    from coosparse.ops.reduce import reductions
    taken = []
    real = reductions.row_sums
    monkeypatch.setattr(reductions, "row_sums", lambda x, axis: taken.append(real(x, axis) is not None)
                        or real(x, axis))
    short = [a.sum(axis=1), coosparse.sum(a, axis=-1)]
    assert taken == [True, True]
    monkeypatch.setattr(reductions, "row_sums", lambda x, axis: None)
    general = a.sum(axis=1)
    for r in short:
        assert _bits(r) == _bits(general)
        assert r.shape == general.shape == (nrows,) and r.is_sorted and r.is_unique
        assert r.fill_value == 0 and not np.signbit(r.fill_value) and r.fill_value.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(r.indices, general.indices)
        with pytest.raises(ValueError, match="read-only"):
            r.indices[0, 0] = 1
    monkeypatch.undo()
    np.testing.assert_array_equal(short[0].indices[0], np.unique(a.indices[0]))
    # not taken: a fill other than +0.0, an integer axis of another type, keywords, strided values
    for fill in (-0.0, 1.5, np.nan):
        assert grouping.row_sums(a._with(fill_value=fill), 1) is None
    assert grouping.row_sums(a, np.int64(1)) is None and grouping.row_sums(a, 0) is None
    assert grouping.row_sums(a.astype(np.float16), 1) is None
    strided = COO(a.indices, np.repeat(a.values, 2)[::2], a.shape, sorted=True, unique=False, check=False)
    assert not strided.values.flags.c_contiguous
    assert _bits(grouping.row_sums(strided, 1)) == _bits(general)
    assert _bits(a.sum(axis=1, keepdims=True).reshape((nrows,))) == _bits(general)
