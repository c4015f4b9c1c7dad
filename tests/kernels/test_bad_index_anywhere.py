"""A bad index anywhere (first, middle or last entry; in one part or in one of many) in SpMM (plain
and grouped), SpMM of unsorted rows (a row or a column), dense x COO (parts by rows and by columns)
and SpGEMM's count pass raises IndexError, before the ValueError of a row key that steps down: a
kernel may stop a part at its first bad index or count them, the call raises the same."""
import numpy as np
import pytest

from coosparse._kernels.numba import layer as nb
from coosparse._kernels.numba import layer_linalg
from coosparse._kernels.numba import linalg as la
from coosparse._kernels.numba import spgemm as sg
from coosparse._kernels.numba.parts import SERIAL_WORK

SIZES = [(60, 30), (SERIAL_WORK // 4, 3000)]  # (entries, rows): one part; parallel parts (8 columns)


def _matrix(n, nrows, k, seed=0):
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.integers(0, nrows, n))
    cols = rng.integers(0, k, n)
    return rows, cols, rng.standard_normal(n)


def _spoiled(first, first_size, second, second_size, in_first, negative, w):
    """Copies of two index rows, entry ``w`` of one of them (``in_first``) made -1 or its size."""
    first, second = first.copy(), second.copy()
    row, size = (first, first_size) if in_first else (second, second_size)
    row[w] = -1 if negative else size
    return first, second


def _where(n):
    return (0, n // 3, n - 1)


@pytest.mark.parametrize("n,nrows", SIZES)
@pytest.mark.parametrize("grouped", [False, True])
@pytest.mark.parametrize("bad", [-1, 10**6])
def test_spmm_bad_column_raises_wherever_it_lies(n, nrows, grouped, bad):
    k = 40
    rows, cols, vals = _matrix(n, nrows, k)
    x = np.random.default_rng(1).standard_normal((k, 8))
    off = nb.row_offsets(rows, nrows)
    perm = np.arange(n)[::-1].copy() if grouped else None
    if grouped:  # entry p of the grouped order is entry perm[p] of the stored arrays
        cols, vals = cols[::-1].copy(), vals[::-1].copy()
    ref = np.zeros((nrows, 8))
    np.add.at(ref, rows, (vals if perm is None else vals[::-1])[:, None] * x[(cols if perm is None else cols[::-1])])
    np.testing.assert_allclose(nb.spmm(off, perm, cols, vals, x, nrows, None, k), ref, rtol=1e-12, atol=1e-12)
    for w in _where(n):
        c = cols.copy()
        c[w if perm is None else perm[w]] = bad
        out, flags = la.spmm(off, perm, c, vals, x, nrows, np.zeros(1, np.int64), k, 4)
        assert flags[:, 0].any() and not flags[:, 1].any() and (flags.shape[0] > 1) == (n > 1000)
        with pytest.raises(IndexError):
            nb.spmm(off, perm, c, vals, x, nrows, None, k)


@pytest.mark.parametrize("n,nrows", SIZES)
@pytest.mark.parametrize("bad", ["row", "negative row", "col", "negative col"])
def test_spmm_unsorted_bad_index_raises_wherever_it_lies(n, nrows, bad):
    k = 40
    rows, cols, vals = _matrix(n, nrows, k)
    p = np.random.default_rng(2).permutation(n)
    rows, cols, vals = rows[p], cols[p], vals[p]
    x = np.random.default_rng(1).standard_normal((k, 8))
    ref = np.zeros((nrows, 8))
    np.add.at(ref, rows, vals[:, None] * x[cols])
    np.testing.assert_allclose(nb.spmm_unsorted(rows, cols, vals, x, nrows, 1, None), ref, rtol=1e-12, atol=1e-12)
    for w in _where(n):
        r, c = _spoiled(rows, nrows, cols, k, bad.endswith("row"), bad.startswith("negative"), w)
        _, flags = la.spmm_unsorted(r, c, vals, x, nrows, nrows + 1, np.zeros(1, np.int64), k, 4)
        assert flags[:, 0].any() and (flags.shape[0] > 1) == (n > 1000)
        with pytest.raises(IndexError):
            nb.spmm_unsorted(r, c, vals, x, nrows, 1, None)


@pytest.mark.parametrize("m", [3000, 2])  # parts by output rows; parts by output columns
@pytest.mark.parametrize("bad", ["krow", "negative krow", "col", "negative col"])
def test_dense_spmm_bad_index_raises_wherever_it_lies(m, bad):
    n, k, ncols = (SERIAL_WORK // 2 if m == 2 else 2000), 40, 500
    rng = np.random.default_rng(3)
    krow, cols, vals = rng.integers(0, k, n), rng.integers(0, ncols, n), rng.standard_normal(n)
    d = rng.standard_normal((m, k))
    ref = np.zeros((m, ncols))
    np.add.at(ref.T, cols, vals[:, None] * d.T[krow])
    np.testing.assert_allclose(nb.dense_spmm(d, None, m, None, None, krow, cols, vals, ncols), ref,
                               rtol=1e-12, atol=1e-12)
    boff, base = np.array([0, n], np.int64), np.zeros(1, np.int64)
    for w in _where(n):
        kr, c = _spoiled(krow, k, cols, ncols, bad.endswith("krow"), bad.startswith("negative"), w)
        _, flags = la.dense_spmm(d, base, m, boff, None, kr, c, vals, ncols, 4)
        assert flags.shape[0] > 1 and flags[:, 0].any()
        with pytest.raises(IndexError):
            nb.dense_spmm(d, None, m, None, None, kr, c, vals, ncols)


@pytest.mark.parametrize("n,nrows", [(60, 30), (SERIAL_WORK, 3000)])  # one part; parallel parts
@pytest.mark.parametrize("down", [False, True])
def test_row_flops_bad_column_wins_over_rows_that_step_down(monkeypatch, n, nrows, down):
    # a bad column (flags[:, 0]: IndexError) is raised before a row key that steps down later in
    # the same part (flags[:, 1]: ValueError)
    monkeypatch.setattr(sg, "NUMPY_BELOW", 0)
    k = 50
    rows, cols, _ = _matrix(n, nrows, k)
    b_off = nb.row_offsets(np.sort(np.random.default_rng(4).integers(0, k, 400)), k)
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1], True]).astype(np.int64)
    keys = rows[starts[:-1]].copy()
    if down:
        keys[-1] = keys[-2]
    e = np.zeros(0, np.int64)
    _, flags = sg._row_flops(starts, keys, True, np.uint64(nrows), e, False, cols, b_off, 4)
    assert not flags[:, 0].any() and bool(flags[:, 1].any()) == down
    assert (flags.shape[0] > 1) == (n > 1000)
    for w in _where(n):
        c = cols.copy()
        c[w] = k + w
        _, flags = sg._row_flops(starts, keys, True, np.uint64(nrows), e, False, c, b_off, 4)
        assert flags[:, 0].any()
        with pytest.raises(IndexError):
            layer_linalg._raise_linalg_flags(flags)
