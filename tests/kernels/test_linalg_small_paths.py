"""The NumPy passes that stand in for linalg kernels on small arrays (so that their first use
compiles nothing) give what the kernels give: the same row pointers, the same products per row,
the same transposes, and the same checks (out-of-bounds indices, rows that step down)."""
import numpy as np
import pytest

from coosparse._kernels.numba import linalg as la
from coosparse._kernels.numba import spgemm as sg
from coosparse._kernels.numba import transpose as tr


def _kernel_only(monkeypatch):
    monkeypatch.setattr(la, "NUMPY_BELOW", 0)
    monkeypatch.setattr(tr, "TRANSPOSE_NUMPY_BELOW", 0)
    monkeypatch.setattr(sg, "NUMPY_BELOW", 0)


def _rows_cases(rng):
    sorted_rows = np.sort(rng.integers(0, 50, 300))
    down = sorted_rows.copy()
    down[100] = down[99] - 1 if down[99] else 5
    high, negative = sorted_rows.copy(), sorted_rows.copy()
    high[-1] = 50
    negative[0] = -1
    return [(sorted_rows, 50), (sorted_rows, 200), (np.zeros(0, np.int64), 7), (np.zeros(0, np.int64), 0),
            (np.array([3]), 4), (np.full(10, 49), 50), (down, 50), (high, 50), (negative, 50)]


def test_row_offsets_small_path_matches_the_kernel(monkeypatch):
    for rows, nrows in _rows_cases(np.random.default_rng(0)):
        rows = rows.astype(np.int64)
        small, small_flags = la.row_offsets(rows, nrows, 2)
        assert rows.shape[0] + nrows < la.NUMPY_BELOW
        with monkeypatch.context() as m:
            _kernel_only(m)
            big, big_flags = la.row_offsets(rows, nrows, 2)
        # the flags say the same (any index out of bounds; any step down); the pointer is
        # meaningful only when they are clear
        assert bool(small_flags[:, 0].any()) == bool(big_flags[:, 0].any())
        assert bool(small_flags[:, 1].any()) == bool(big_flags[:, 1].any())
        if not big_flags.any():
            np.testing.assert_array_equal(small, big)
            np.testing.assert_array_equal(small, np.searchsorted(rows, np.arange(nrows + 1)))


@pytest.mark.parametrize("perms", [False, True])
@pytest.mark.parametrize("bad", [None, "col", "negative col", "row", "row down"])
def test_row_flops_small_path_matches_the_kernel(monkeypatch, perms, bad):
    rng = np.random.default_rng(1)
    na, k = 400, 60
    a_rows_all = np.sort(rng.integers(0, 90, na))
    a_cols = rng.integers(0, k, na)
    b_rows = np.sort(rng.integers(0, k, 500))
    b_off, _ = la.row_offsets(b_rows, k, 1)
    starts = np.flatnonzero(np.r_[True, a_rows_all[1:] != a_rows_all[:-1], True]).astype(np.int64)
    a_rows = a_rows_all[starts[:-1]].copy()
    if bad == "col":
        a_cols[7] = k
    elif bad == "negative col":
        a_cols[3] = -2
    elif bad == "row":
        a_rows[-1] = 90
    elif bad == "row down":
        a_rows[5] = a_rows[4]
    grouped, perm = a_cols, None
    if perms:  # the entries stored in another order: entry p of the grouped order is a_cols[perm[p]]
        perm = rng.permutation(na)
        a_cols = np.empty_like(grouped)
        a_cols[perm] = grouped
    ap = perm if perm is not None else starts[:0]
    args = (starts, a_rows, True, np.uint64(90), ap, perm is not None, a_cols, b_off)
    small, small_flags = sg._row_flops(*args, 2)
    with monkeypatch.context() as m:
        _kernel_only(m)
        big, big_flags = sg._row_flops(*args, 2)
    assert bool(small_flags[:, 0].any()) == bool(big_flags[:, 0].any()) == (bad in ("col", "negative col", "row"))
    assert bool(small_flags[:, 1].any()) == bool(big_flags[:, 1].any()) == (bad == "row down")
    if bad is None:
        np.testing.assert_array_equal(small, big)
        lens = np.diff(b_off)
        want = np.r_[0, np.cumsum(lens[grouped])][starts]
        np.testing.assert_array_equal(small, want)


@pytest.mark.parametrize("shape", [(16, 300), (300, 7), (1, 1), (0, 4)])
def test_small_dense_transpose_is_a_copy_of_the_transpose(monkeypatch, shape):
    a = np.random.default_rng(2).random((shape[0], 2 * shape[1]))[:, ::2]
    got = tr.dense_transpose(a, 2)
    with monkeypatch.context() as m:
        _kernel_only(m)
        tiled = tr.dense_transpose(a, 2)
    for x in (got, tiled):
        assert x.flags.c_contiguous
        np.testing.assert_array_equal(x, a.T)
