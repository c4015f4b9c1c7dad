"""Reductions over the rows of a sorted matrix: the three ways of finding each row's entries
(runs of equal rows found by NumPy for a small host array, the cached row pointer, and the strategies
without either) give the same bits, on both layers, for every kind of value; and the runs refuse the
bad input the row pointer refuses (an index outside the shape, a sorted flag that lies).

The segment kernel takes one value per entry as a 1-D array and several (complex sums, dense
dimensions) as 2-D: both are exercised here, with rows longer than ``TREE_LEAF`` (the blocked order).
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


def _other_strategies(f, a, mp):
    mp.setattr(COO, "_row_pointer_pays", lambda self: False)
    return f(a)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64, np.uint8, np.bool_])
@pytest.mark.parametrize("dense", [(), (3,)])
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
def test_runs_pointer_and_other_strategies_same_bits(backend, dtype, dense, op):
    if op in ("max", "min") and np.dtype(dtype).kind == "c":
        return  # complex numbers are unordered (TypeError, tested elsewhere)
    a = _sorted_matrix(3000, 200, dtype, dense)
    if op != "sum":
        a = a.coalesce()  # (the other reductions coalesce first; a sum sums duplicates where they fall)

    def f(x):
        with np.errstate(all="ignore"):
            return getattr(coosparse, op)(x, axis=1)

    runs = f(a)  # small and on the CPU: the runs found by NumPy
    assert a._cached_companion(("row_pointer", 1, a.shape[0])) is None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grouping, "_RUNS_BELOW", 0)
        pointer = f(COO(a.indices, a.values, a.shape, sorted=True, unique=a.is_unique, check=False))
    with pytest.MonkeyPatch.context() as mp:
        other = _other_strategies(f, a, mp)
    assert _bits(runs) == _bits(pointer) == _bits(other)
    got = backend.get(f(backend.put(a)))  # the CUDA layer reads the row pointer
    if op == "prod" and np.dtype(dtype).kind == "c" and backend.device != "cpu":
        # the layers' complex products of inf and NaN differ in the sign of the NaN they make (known,
        # not this path's): the same values, NaNs alike
        np.testing.assert_array_equal(got.indices, runs.indices)
        np.testing.assert_array_equal(got.values, runs.values)
    else:
        assert _bits(got) == _bits(runs)
    if op == "prod":
        return  # a product's overflow (inf, then NaN at a zero) depends on its order: the bits above only
    d = a.to_dense()
    with np.errstate(all="ignore"):
        want = getattr(np, op)(d, axis=1)
        mine = runs.to_dense()
        if op == "sum" and np.dtype(dtype).kind in "fc":  # another order (NumPy's is pairwise): close
            for part in (np.real, np.imag):
                _close_sum(part(mine), part(want), np.sum(np.abs(part(d)), axis=1))
        else:
            np.testing.assert_array_equal(mine, want)


def _close_sum(mine, want, scale):
    ok = np.isfinite(want)
    np.testing.assert_array_equal(np.isnan(mine), np.isnan(want))
    np.testing.assert_array_equal(mine[np.isinf(want)], want[np.isinf(want)])
    assert np.all(np.abs(mine - want)[ok] <= 1e-4 * scale[ok] + 1e-300)


@pytest.mark.parametrize("n", [1, 2, 3, 257, 1000])
def test_runs_small_cases(n):
    """nnz=1, one row, every entry its own row, one long row, empty rows: the pointer's bits."""
    rng = np.random.default_rng(n)
    for rows in (np.zeros(n, np.int64), np.arange(n) * 2, np.sort(rng.integers(0, 5, n))):
        v = rng.standard_normal(n)
        v[:: 3] = -0.0
        a = COO(np.stack([rows, np.zeros(n, np.int64)]), v, (2 * n + 1, 1), sorted=True, unique=False, check=False)
        runs = a.sum(axis=1)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(grouping, "_RUNS_BELOW", 0)
            pointer = COO(a.indices, v, a.shape, sorted=True, unique=False, check=False).sum(axis=1)
        assert _bits(runs) == _bits(pointer)
        assert runs.is_sorted and runs.is_unique
        np.testing.assert_array_equal(runs.indices[0], np.unique(rows))


def test_runs_all_negative_zero_row_keeps_its_sign():
    a = COO([[0, 0, 1, 1], [0, 1, 0, 1]], np.array([-0.0, -0.0, -0.0, 0.0]), (2, 2))
    r = a.sum(axis=1)
    assert np.signbit(r.values).tolist() == [True, False]


@pytest.mark.parametrize("route", ["runs", "pointer"])
def test_runs_refuse_what_the_pointer_refuses(route, monkeypatch):
    if route == "pointer":
        monkeypatch.setattr(grouping, "_RUNS_BELOW", 0)
    lying = COO([[2, 0, 1], [0, 0, 0]], np.ones(3), (3, 3), sorted=True, unique=True, check=False)
    with pytest.raises(ValueError, match="sorted=True is false"):
        lying.sum(axis=1)
    for rows, bad in (([0, 5], 5), ([-1, 0], -1), ([0, 10**12], 10**12)):
        outside = COO([rows, [0, 0]], np.ones(2), (3, 3), sorted=True, unique=True, check=False)
        with pytest.raises(IndexError, match=f"index {bad} at position .* out of bounds for dimension 0 with size 3"):
            outside.max(axis=1)
