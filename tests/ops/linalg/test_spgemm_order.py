"""SpGEMM's rows long enough for the accumulator (more than ``spgemm.SMALL_ROW`` products) sum
each output in the documented order, bit for bit: the first product stored as it is (a -0.0
stays -0.0), the next ones added in the order of A's entries, then B's (docs/linalg.md)."""
import numpy as np
import pytest

from coosparse import COO
from coosparse._kernels.numba import spgemm as sg


def _ordered_product(a, b):
    """{(row, col): value} of a @ b, each value summed in the documented order."""
    b_rows = {}
    for (k, c), v in zip(b.indices.T.tolist(), b.values):
        b_rows.setdefault(k, []).append((c, v))
    out = {}
    for (r, k), av in zip(a.indices.T.tolist(), a.values):
        for c, bv in b_rows.get(k, []):
            p = av * bv
            out[(r, c)] = p if (r, c) not in out else out[(r, c)] + p
    return out


def _sorted_coo(rng, shape, nnz, dtype):
    keys = np.unique(rng.integers(0, shape[0] * shape[1], nnz))
    idx = np.stack(np.unravel_index(keys, shape)).astype(np.int64)
    vals = rng.standard_normal(keys.shape[0])
    vals[rng.random(keys.shape[0]) < 0.2] = -0.0  # products of -0.0: a sum's sign depends on the order
    if np.dtype(dtype).kind == "c":
        vals = vals + 1j * rng.standard_normal(keys.shape[0])
    return COO(idx, vals.astype(dtype), shape, sorted=True, unique=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_long_rows_sum_in_order_bit_for_bit(dtype):
    rng = np.random.default_rng(7)
    # 40 x 30 times 30 x 25: ~18 entries per row of A reach ~12 of B's each, so every row of the
    # product holds far more than SMALL_ROW products and takes the accumulator
    a = _sorted_coo(rng, (40, 30), 720, dtype)
    b = _sorted_coo(rng, (30, 25), 360, dtype)
    flops = np.bincount(a.indices[0], weights=np.bincount(b.indices[0], minlength=30)[a.indices[1]])
    assert flops.min() > sg.SMALL_ROW
    c = a @ b
    want = _ordered_product(a, b)
    assert c.is_sorted and c.is_unique and c.nnz == len(want)
    keys = sorted(want)
    assert c.indices.T.tolist() == [list(k) for k in keys]
    expect = np.array([want[k] for k in keys], dtype=dtype)
    assert c.values.dtype == np.dtype(dtype)
    assert c.values.tobytes() == expect.tobytes()
