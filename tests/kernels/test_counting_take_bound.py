"""counting_take's ``other_bound``: the split sort packs the second row in the bits the shape gives
and checks the row in its split pass; a row that does not fit (a check=False array that lies) is
sorted as without the hint, with the same arrays."""
import numpy as np
import pytest

import coosparse
from coosparse._kernels.numba import layer as nb


def _reference(keys, bound, indices, values):
    order = np.argsort(keys, kind="stable")
    return np.searchsorted(keys[order], np.arange(bound + 1)), indices[:, order], values[order]


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("case", ["fits", "above", "negative", "huge bound", "skewed", "two values"])
def test_other_bound_same_arrays_as_without(case, nthreads, monkeypatch):
    monkeypatch.setattr(nb, "_nthreads", lambda: nthreads)
    rng = np.random.default_rng(len(case))
    n, bound, other_bound = 300_000, 131_072, 1000
    keys = rng.integers(0, bound, n)
    second = rng.integers(0, other_bound, n)
    k = 1
    if case == "above":
        second[n // 2] = 5000  # past the bits of other_bound (1000: 10 bits)
    elif case == "negative":
        second[7] = -3
    elif case == "huge bound":
        other_bound = 1 << 50  # with 17 key bits: more than a word, the hint is not used
    elif case == "skewed":
        keys[rng.random(n) < 0.9] = 123  # one bucket holds most keys: no split sort at all
    elif case == "two values":
        k = 2
    indices = np.stack([keys, second])
    values = rng.standard_normal((n, k))
    want = _reference(keys, bound, indices, values)
    plain = nb.counting_take(keys, bound, indices, values)
    hinted = nb.counting_take(keys, bound, indices, values, other_bound=other_bound)
    for got in (plain, hinted):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_other_bound_keys_outside_still_refused():
    keys = np.arange(50_000) % 5000
    keys[-1] = 5000
    indices = np.stack([keys, np.zeros(50_000, np.int64)])
    with pytest.raises(IndexError, match="5000"):
        nb.counting_take(keys, 5000, indices, np.ones((50_000, 1)), other_bound=10)


@pytest.mark.parametrize("lie", [0, 1 << 40, -5])
def test_transpose_coalesce_of_lying_rows(lie):
    """A check=False matrix whose row indices leave its shape: its transpose's coalesce still
    sorts by column without writing outside its output (the row values come out as they are)."""
    rng = np.random.default_rng(3)
    keys = np.unique(rng.integers(0, 300 * 200, 120_000))
    idx = np.stack(np.unravel_index(keys, (300, 200))).astype(np.int64)
    if lie:
        idx[0, -1] = lie  # the last entry: the sorted flag stays true for the large value
    a = coosparse.COO(idx, np.arange(idx.shape[1], dtype=np.float64), (300, 200), sorted=True, unique=True,
                      check=False)
    t = a.T.coalesce()
    order = np.argsort(idx[1], kind="stable")  # (a lying row keeps its place: a stable sort by column)
    np.testing.assert_array_equal(t.indices, idx[::-1][:, order])
    np.testing.assert_array_equal(t.values, a.values[order])
