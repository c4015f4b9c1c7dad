"""``spmm(..., out_rows, out_nrows)``: the rows of ``offsets`` placed at listed output rows, zero in
the others (SpMV of a matrix's non-empty rows alone), the same bits on the Numba layer (its own SpMV
kernel, parallel parts from 2^18 entries and rows; other products by rows, then placed) and the emulated CUDA
layer, equal to the product over every row; bad ``out_rows`` refused."""
import numpy as np
import pytest

from coosparse._kernels.numba import layer as nb

emulated = pytest.importorskip("coosparse._kernels.cuda.emulated")
if not emulated.available():
    pytest.skip(f"emulated CUDA layer unavailable: {emulated._build_error}", allow_module_level=True)

from coosparse._kernels.cuda import emulated_host as H  # noqa: E402


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
@pytest.mark.parametrize("n,nrows", [(50, 40), (5000, 900), (300_000, 9000)])  # (the last in parallel parts)
def test_listed_rows_equal_the_product_over_every_row(dtype, n, nrows):
    rng = np.random.default_rng(n)
    k = 700
    rows = np.sort(rng.integers(0, nrows // 3, n)) * 3  # two rows in three empty, and the last ones
    cols = rng.integers(0, k, n)
    vals = (rng.standard_normal(n) * 4).astype(dtype) if np.dtype(dtype).kind != "i" else rng.integers(-9, 9, n)
    full = nb.row_offsets(rows, nrows)
    listed = np.flatnonzero(full[1:] != full[:-1])
    starts = np.append(full[listed], n)
    for ncols in (1, 3):
        dense = rng.standard_normal((k, ncols)).astype(dtype) if np.dtype(dtype).kind != "i" else \
            rng.integers(-9, 9, (k, ncols))
        want = nb.spmm(full, None, cols, vals, dense, nrows, None)
        got = nb.spmm(starts, None, cols, vals, dense, nrows, None, None, listed, nrows)
        _same(got, want)
        _same(H.spmm(starts, None, cols, vals, dense, nrows, None, None, listed, nrows), want)
        assert not got[np.setdiff1d(np.arange(nrows), listed)].any()
        ref = np.zeros((nrows, ncols), dtype=np.result_type(vals, dense))
        np.add.at(ref, rows, vals[:, None] * dense[cols])
        np.testing.assert_allclose(got, ref, rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-3)
    # narrow int32 columns (a sorted matrix's cached copy) and a permutation (products by rows)
    x = rng.standard_normal((k, 1)).astype(np.float64)
    v64 = vals.real.astype(np.float64)
    _same(nb.spmm(starts, None, cols.astype(np.int32), v64, x, nrows, None, k, listed, nrows),
          nb.spmm(full, None, cols, v64, x, nrows, None, k))
    perm = np.arange(n)
    _same(nb.spmm(starts, perm, cols, v64, x, nrows, None, k, listed, nrows),
          nb.spmm(full, None, cols, v64, x, nrows, None))


def test_no_listed_row_gives_zeros_and_bad_rows_are_refused():
    x = np.ones((5, 1))
    _same(nb.spmm(np.zeros(1, np.int64), None, np.zeros(0, np.int64), np.zeros(0), x, 1, None, None,
                  np.zeros(0, np.int64), 4), np.zeros((4, 1)))
    off = np.array([0, 2, 3], np.int64)
    cols, vals = np.array([0, 4, 1]), np.array([1.0, 2.0, 3.0])
    _same(nb.spmm(off, None, cols, vals, x, 1, None, None, np.array([1, 3]), 4),
          np.array([[0.0], [3.0], [0.0], [3.0]]))
    for ncols in (1, 2):
        xx = np.ones((5, ncols))
        for bad in ([3, 1], [1, 1], [-1, 2], [1, 4]):
            with pytest.raises(ValueError, match="out_rows"):
                nb.spmm(off, None, cols, vals, xx, 1, None, None, np.array(bad), 4)
        with pytest.raises(ValueError, match="out_rows"):
            nb.spmm(off, None, cols, vals, xx, 1, None, None, np.array([1]), 4)  # one row per row of off
        with pytest.raises(ValueError, match="out_rows"):
            nb.spmm(off, None, cols, vals, xx, 1, np.zeros(1, np.int64), None, np.array([1, 3]), 4)
    with pytest.raises(IndexError):
        nb.spmm(off, None, np.array([0, 5, 1]), vals, x, 1, None, None, np.array([1, 3]), 4)


@pytest.mark.parametrize("n,nrows", [(50, 40), (300_000, 9000)])  # one part, parallel parts
@pytest.mark.parametrize("listed", [True, False])
def test_spmv_stops_at_a_bad_column_and_bad_rows_still_report_first(n, nrows, listed):
    # the Numba SpMV kernels leave a row at its first column outside the bound (no count carried
    # through the loop): IndexError wherever it lies, ValueError when the row list is bad as well
    rng = np.random.default_rng(5)
    k = 64
    rows = np.sort(rng.integers(0, nrows, n))
    cols = rng.integers(0, k, n)
    vals = rng.standard_normal(n)
    x = rng.standard_normal((k, 1))
    full = np.searchsorted(rows, np.arange(nrows + 1)).astype(np.int64)
    lens = np.diff(full)
    listed_rows = np.flatnonzero(lens).astype(np.int64)
    starts = np.append(full[listed_rows], n).astype(np.int64)
    for where in (0, n // 3, n - 1):
        bad_cols = cols.copy()
        bad_cols[where] = k + where
        with pytest.raises(IndexError):  # (the CUDA layer reports bad reads through its device flags)
            if listed:
                nb.spmm(starts, None, bad_cols, vals, x, nrows, None, k, listed_rows, nrows)
            else:
                nb.spmm(full, None, bad_cols, vals, x, nrows, None, k)
        if listed and listed_rows.shape[0] > 2:
            swapped = listed_rows.copy()
            swapped[-2], swapped[-1] = swapped[-1], swapped[-2]  # after the bad column, in the last part
            with pytest.raises(ValueError, match="out_rows"):
                nb.spmm(starts, None, bad_cols, vals, x, nrows, None, k, swapped, nrows)


@pytest.mark.parametrize("shape", ["one heavy row", "heavy rows at both ends", "empty listed rows", "one row"])
@pytest.mark.parametrize("n", [40, 300_000])  # one part, parallel parts
def test_spmv_sums_each_listed_row_in_entry_order(shape, n):
    # rows of any lengths (one row with most entries, empty listed rows, parts cut inside a long
    # run of rows) give the one-row-at-a-time sums, bit for bit
    rng = np.random.default_rng(len(shape) + n)
    nrows, k = 3000, 500
    if shape == "one heavy row":
        rows = np.where(rng.random(n) < 0.8, 1234, rng.integers(0, nrows, n))
    elif shape == "heavy rows at both ends":
        rows = np.where(rng.random(n) < 0.45, 0, np.where(rng.random(n) < 0.8, nrows - 1, rng.integers(0, nrows, n)))
    elif shape == "one row":
        rows = np.full(n, 7)
    else:
        rows = rng.integers(0, nrows, n)
    rows = np.sort(rows)
    cols = rng.integers(0, k, n)
    vals = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n)  # sums that depend on their order
    x = rng.standard_normal((k, 1))
    full = nb.row_offsets(rows, nrows)
    listed = np.arange(nrows, dtype=np.int64) if shape == "empty listed rows" else \
        np.flatnonzero(full[1:] != full[:-1])
    starts = full if shape == "empty listed rows" else np.append(full[listed], n)
    got = nb.spmm(starts, None, cols, vals, x, nrows, None, k, listed, nrows)
    want = np.zeros((nrows, 1))
    for r in np.unique(rows):  # each row's products summed one after another, in entry order
        acc = 0.0
        for e in range(full[r], full[r + 1]):
            acc += vals[e] * x[cols[e], 0]
        want[r, 0] = acc
    _same(got, want)
