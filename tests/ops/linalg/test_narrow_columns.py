"""SpMV's 32-bit column companion: a sorted CPU operand with enough entries and fewer than 2**31
columns keeps an int32 copy of its column index row (built by SpMV, used by SpMV and SpMM), with
the same bits as the int64 path, counted in ``nbytes`` and freed by ``drop_companions()``."""
import numpy as np
import pytest

import coosparse
from coosparse import COO
from coosparse.ops.linalg import core

KEY = ("int32 index", 1)


def _matrix(rng, shape, nnz, dtype=np.float64):
    keys = np.unique(rng.integers(0, shape[0] * shape[1], nnz))
    idx = np.stack(np.unravel_index(keys, shape)).astype(np.int64)
    vals = (rng.standard_normal(keys.shape[0]) * 3).astype(dtype)
    if np.dtype(dtype).kind == "c":
        vals = vals + 1j * vals[::-1]
    return COO(idx, vals, shape, sorted=True, unique=True)


def _int64_path(monkeypatch, fn):
    monkeypatch.setattr(core, "NARROW_COLUMNS_MIN", 1 << 62)
    try:
        return fn()
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64])
def test_spmv_builds_it_spmm_uses_it_same_bits(monkeypatch, dtype):
    rng = np.random.default_rng(1)
    a = _matrix(rng, (3000, 2500), 90_000, dtype)
    assert a.nnz >= core.NARROW_COLUMNS_MIN
    x = rng.standard_normal(2500).astype(dtype)
    xm = rng.standard_normal((2500, 5)).astype(dtype)
    plain = a.indices.nbytes + a.values.nbytes
    want_v = _int64_path(monkeypatch, lambda: a @ x)
    want_m = _int64_path(monkeypatch, lambda: a @ xm)
    a.drop_companions()
    m0 = a @ xm  # SpMM alone does not build the copy
    assert a._cached_companion(KEY) is None
    v = a @ x
    c = a._cached_companion(KEY)
    assert c.dtype == np.int32 and (c == a.indices[1]).all()
    m1 = a @ xm
    assert v.tobytes() == want_v.tobytes()
    assert m0.tobytes() == m1.tobytes() == want_m.tobytes()
    np.testing.assert_allclose(v, a.to_dense() @ x, rtol=1e-4 if dtype in (np.float32,) else 1e-10)
    assert a.nbytes == plain + 8 * (a.shape[0] + 1) + 4 * a.nnz
    a.drop_companions()
    assert a.nbytes == plain


def test_not_built_where_it_does_not_pay_or_cannot_hold():
    rng = np.random.default_rng(2)
    small = _matrix(rng, (300, 300), 2000)
    small @ np.ones(300)
    assert small._cached_companion(KEY) is None
    big = _matrix(rng, (3000, 2500), 90_000)
    big.T @ np.ones(3000)  # a transposed view reads the rows as columns: no copy of its own
    assert big._cached_companion(KEY) is None
    # 2**31 columns or more cannot be narrowed (a dense operand that tall is too big to test)
    cols = big.indices[1]
    assert core._narrow_columns(big, big.nnz, cols, 2**31, True) is cols
    assert big._cached_companion(KEY) is None
    assert core._narrow_columns(big, big.nnz, cols, 2**31 - 1, False) is cols  # not built on request
    assert core._narrow_columns(big, big.nnz, cols, 2**31 - 1, True).dtype == np.int32


def test_bad_index_keeps_the_int64_path_and_raises():
    rng = np.random.default_rng(3)
    a = _matrix(rng, (3000, 2500), 90_000)
    for bad in (2**32 + 3, -1, 2500):
        idx = a.indices.copy()
        idx[1, 7] = bad
        b = COO(idx, a.values, a.shape, sorted=True, unique=True, check=False)
        with pytest.raises(IndexError, match="out of bounds for dimension 1"):
            b @ np.ones(2500)
        assert b._cached_companion(KEY) is None


def test_hybrid_operand_builds_no_copy_on_its_temporary(monkeypatch):
    """A hybrid matrix is sparsified into a temporary per product: no copy is built for it (it
    would be thrown away with the temporary), and the result is the int64 path's."""
    rng = np.random.default_rng(4)
    rows = np.arange(0, 80_000, 2)[None, :]
    h = COO(rows, rng.standard_normal((rows.shape[1], 2)), (80_000, 2), sorted=True, unique=True)
    assert h.dense_ndim == 1 and h.nnz * 2 >= core.NARROW_COLUMNS_MIN
    x = rng.standard_normal(2)
    built = []
    real = core._narrow_columns
    monkeypatch.setattr(core, "_narrow_columns", lambda *args: built.append(args[4]) or real(*args))
    got = h @ x
    assert built == [False]
    np.testing.assert_allclose(got, h.to_dense() @ x, rtol=1e-10)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("nnz", [core.NARROW_COLUMNS_MIN - 1, 90_000])
def test_spmv_short_path_same_bits_as_the_general_one(monkeypatch, dtype, nnz):
    """``a @ x`` of a sorted CPU matrix and a vector of its float dtype skips the general grouping
    (``spmv_sorted``) from NARROW_COLUMNS_MIN entries: the same bits as the general path, with
    duplicates and empty rows; other vectors (another dtype, strided, a list) take the general path."""
    rng = np.random.default_rng(5)
    shape = (6000, 2500)
    rows = np.sort(rng.integers(0, shape[0] // 2, nnz)) * 2  # odd rows empty
    cols = rng.integers(0, shape[1], nnz)
    order = np.lexsort((cols, rows))
    idx = np.stack([rows[order], cols[order]])
    a = COO(idx, (rng.standard_normal(nnz) * 3).astype(dtype), shape, sorted=True, unique=False)
    assert not a.is_unique  # duplicates are summed where they fall, as in the general path
    x = rng.standard_normal(shape[1]).astype(dtype)
    taken = []
    real = core.spmv_sorted
    monkeypatch.setattr("coosparse.ops.linalg.products.spmv_sorted",
                        lambda *args: taken.append(real(*args) is not None) or real(*args))
    got = a @ x
    assert taken == [nnz >= core.NARROW_COLUMNS_MIN]
    monkeypatch.setattr("coosparse.ops.linalg.products.spmv_sorted", lambda *args: None)
    want = a @ x
    assert got.dtype == want.dtype == dtype and got.shape == (shape[0],)
    assert got.tobytes() == want.tobytes()
    np.testing.assert_allclose(got, a.to_dense().astype(np.float64) @ x.astype(np.float64),
                               rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-3 if dtype == np.float32 else 0)
    monkeypatch.undo()
    other_dtype = x.astype(np.float32 if dtype == np.float64 else np.float64)
    strided = np.repeat(x, 2)[::2]
    for other in (other_dtype, strided):
        assert core.spmv_sorted(a, other) is None
        np.testing.assert_allclose(a @ other, a.to_dense().astype(np.float64) @ other.astype(np.float64),
                                   rtol=1e-4, atol=1e-3)


def test_spmv_short_path_names_a_bad_index():
    rng = np.random.default_rng(6)
    a = _matrix(rng, (3000, 2500), 90_000)
    idx = a.indices.copy()
    idx[1, 11] = 2500
    b = COO(idx, a.values, a.shape, sorted=True, unique=True, check=False)
    assert b.nnz >= core.NARROW_COLUMNS_MIN
    with pytest.raises(IndexError, match="out of bounds for dimension 1"):
        b @ np.ones(2500)
