"""The linear shortcut (SPEC 4: scale a COO's duplicates one by one, keeping its layout) against the
dense meaning (duplicates summed first) where IEEE arithmetic is not linear: infinite and NaN
multipliers. (float16 and division: tests/ops/elementwise/test_ufunc.py.)"""
import numpy as np

import coosparse
from coosparse import COO
from operands import dense


def _dense(r):
    return r.to("cpu").to_dense() if isinstance(r, COO) else np.asarray(r)


def test_infinite_multiplier_sums_duplicates_first(backend):
    # duplicates 2.5 and 0.0 times inf: one by one inf + NaN = NaN, the dense meaning 2.5 * inf = inf
    a = COO([[0, 0, 2, 2]], np.array([2.5, 0.0, -1.0, 1.0]), (3,), sorted=False, unique=False)
    A = backend.put(a)
    with np.errstate(invalid="ignore"):
        for c in (np.inf, -np.inf, np.float64(np.inf), complex(np.inf, 0.0), np.nan):
            want = dense(a) * c
            for r in (A * c, c * A, coosparse.multiply(A, c)):
                np.testing.assert_array_equal(_dense(backend.get(r)), want)
        # a COO whose fill is inf (stores nothing): its fill multiplies a's duplicates
        e = COO(np.zeros((1, 0), np.int64), np.zeros(0), (3,), fill_value=np.inf)
        for x in (a, COO(a.indices, a.values, a.shape, sorted=False, unique=False, fill_value=np.nan)):
            for r in (backend.put(x) * backend.put(e), backend.put(e) * backend.put(x)):
                np.testing.assert_array_equal(_dense(backend.get(r)), dense(x) * np.inf)
    # finite multipliers keep SPEC 4's layout (entries scaled one by one, duplicates kept)
    r = backend.get(A * 2.0)
    assert r.nnz == 4 and not r.is_unique
    np.testing.assert_array_equal(r.to_dense(), dense(a) * 2.0)


def test_cross_of_uncoalesced_operands_with_infinite_fill(backend):
    # linalg.cross multiplies parts of its operands: duplicates -1.8 and inf times the other's
    # fill inf gave NaN where NumPy's cross gives -inf
    a = COO([[0, 0, 0, 0, 1], [0, 1, 2, 2, 1]], np.array([1.0, 2.0, -1.8, np.inf, 3.0]), (2, 3), sorted=False,
            unique=False, fill_value=np.nan)
    b = COO([[2]], np.array([1e300]), (3,), fill_value=np.inf)
    with np.errstate(invalid="ignore"):
        want = np.linalg.cross(dense(a), dense(b))
        got = backend.get(coosparse.linalg.cross(backend.put(a), backend.put(b))).to_dense()
    np.testing.assert_array_equal(got, want)
