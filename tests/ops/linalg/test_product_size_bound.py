"""The CPU's size check of a COO x COO product: nnz(A) times B's longest row first (no gather); when
that bound is too large for the memory, the exact sum of each entry's row of B decides."""
import numpy as np

from coosparse import COO


def _pair():
    # A's entries (i, i) meet B's rows: row 0 holds 3000 entries, the others one each: 4999 products,
    # against nnz(A) * longest = 6,000,000
    n, m = 2000, 3000
    a = COO(np.stack([np.arange(n), np.arange(n)]), np.arange(1.0, n + 1), (n, n), sorted=True, unique=True)
    rows = np.concatenate([np.zeros(m, np.int64), np.arange(1, n)])
    cols = np.concatenate([np.arange(m), np.arange(1, n)])
    b = COO(np.stack([rows, cols]), np.linspace(-1, 1, rows.shape[0]), (n, m), sorted=True, unique=True)
    return a, b


def test_loose_bound_too_large_exact_bound_fits(monkeypatch):
    from coosparse._kernels import bounds

    a, b = _pair()
    want = a.todense() @ b.todense()
    monkeypatch.setattr(bounds, "memory_bytes", lambda: 2**20)  # 1 MiB: 6e6 entries refused, 4999 not
    c = a @ b
    assert c.nnz == 4999
    np.testing.assert_array_equal(c.todense(), want)


def test_loose_bound_fits():
    a, b = _pair()
    np.testing.assert_array_equal((a @ b).todense(), a.todense() @ b.todense())
