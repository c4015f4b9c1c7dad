"""counting_take's direct sort (a transpose of at least DIRECT_MIN_ENTRIES entries over at most
DIRECT_MAX_KEYS keys, one value word per entry): one scatter pass into the result, the key row
filled from the counts. Both sides of both thresholds, parts, skew, every word width, a second row
that lies, the wide slot table, and the same arrays as the split sort it replaced there."""
import numpy as np
import pytest

import coosparse
from coosparse._kernels.numba import join as nj
from coosparse._kernels.numba import layer as nb


def _reference(keys, bound, indices, values):
    order = np.argsort(keys, kind="stable")
    return np.searchsorted(keys[order], np.arange(bound + 1)), indices[:, order], values[order]


def _check(got, want):
    assert got[2].dtype == want[2].dtype and got[2].shape == want[2].shape
    for a, b in zip(got, want):
        np.testing.assert_array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))


def _split_only(monkeypatch):
    monkeypatch.setattr(nj, "DIRECT_MIN_ENTRIES", 1 << 62)


def _case(rng, n, bound, dtype=np.float64, skew=False):
    keys = rng.integers(0, bound, n)
    if skew:
        keys[rng.random(n) < 0.9] = min(123, bound - 1)  # one key holds most entries
    second = np.sort(rng.integers(0, 1 << 30, n))  # a transpose's second row: in order
    if np.dtype(dtype).kind == "f":
        values = rng.standard_normal((n, 1)).astype(dtype)
    else:
        values = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (n, 1), dtype=dtype, endpoint=True)
    return keys, np.stack([keys, second]), values


@pytest.mark.parametrize("n", [nj.DIRECT_MIN_ENTRIES - 1, nj.DIRECT_MIN_ENTRIES])
@pytest.mark.parametrize("bound", [300, nj.DIRECT_MAX_KEYS, nj.DIRECT_MAX_KEYS + 1])
def test_both_sides_of_the_thresholds(n, bound, monkeypatch):
    rng = np.random.default_rng(n + bound)
    keys, indices, values = _case(rng, n, bound)
    calls = []
    real = nj.direct_take
    monkeypatch.setattr(nj, "direct_take", lambda *a: calls.append(1) or real(*a))
    got = nb.counting_take(keys, bound, indices, values)
    _check(got, _reference(keys, bound, indices, values))
    assert bool(calls) == (n >= nj.DIRECT_MIN_ENTRIES and bound <= nj.DIRECT_MAX_KEYS)


@pytest.mark.parametrize("nthreads", [1, 2, 3])
@pytest.mark.parametrize("skew", [False, True])
def test_parts_and_skew(nthreads, skew, monkeypatch):
    """Parts cut by entries: each scatters to its own slots of every key, and the key row is
    filled part by part (a part's slots may start inside a key's run, or span empty keys)."""
    monkeypatch.setattr(nb, "_nthreads", lambda: nthreads)
    monkeypatch.setattr(nb, "_SERIAL_BELOW", 1000)
    rng = np.random.default_rng(nthreads + 10 * skew)
    n, bound = 200_003, 131_072
    keys, indices, values = _case(rng, n, bound, skew=skew)
    want = _reference(keys, bound, indices, values)
    _check(nb.counting_take(keys, bound, indices, values), want)
    _split_only(monkeypatch)
    _check(nb.counting_take(keys, bound, indices, values), want)  # the split sort: the same arrays


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64, np.complex64])
def test_every_word_width(dtype):
    rng = np.random.default_rng(np.dtype(dtype).itemsize)
    n, bound = 70_000, 5000
    if dtype == np.complex64:
        keys, indices, _ = _case(rng, n, bound)
        values = (rng.standard_normal((n, 1)) + 1j * rng.standard_normal((n, 1))).astype(dtype)
    else:
        keys, indices, values = _case(rng, n, bound, dtype)
    values[5, 0] = values[7, 0]  # any bits move as they are
    if np.dtype(dtype).kind == "f":
        values[3, 0] = np.nan
    _check(nb.counting_take(keys, bound, indices, values), _reference(keys, bound, indices, values))


def test_empty_keys_and_the_last_key():
    """Keys with no entry (runs of empty rows) before, between and after the used ones."""
    n, bound = 100_000, 200_000
    keys = np.where(np.arange(n) % 2 == 0, 7, bound - 1).astype(np.int64)
    indices = np.stack([keys, np.arange(n)])
    values = np.arange(n, dtype=np.float64).reshape(n, 1)
    _check(nb.counting_take(keys, bound, indices, values), _reference(keys, bound, indices, values))


@pytest.mark.parametrize("lie", [-5, 1 << 62])
def test_second_row_values_come_out_as_they_are(lie):
    rng = np.random.default_rng(4)
    keys, indices, values = _case(rng, 80_000, 1000)
    indices[1, 10] = lie
    _check(nb.counting_take(keys, 1000, indices, values, other_bound=1 << 30),
           _reference(keys, 1000, indices, values))


@pytest.mark.parametrize("bad", [-1, 5000, 1 << 40])
def test_keys_outside_refused_before_writing(bad, monkeypatch):
    keys = np.arange(70_000, dtype=np.int64) % 5000
    keys[-1] = bad
    indices = np.stack([keys, np.zeros(70_000, np.int64)])
    called = []
    monkeypatch.setattr(nj, "direct_scatter_part", lambda *a: called.append(1))
    with pytest.raises(IndexError, match=str(bad)):
        nb.counting_take(keys, 5000, indices, np.ones((70_000, 1)))
    assert not called


def test_wide_slot_table(monkeypatch):
    """From 2**32 entries the slot table is int64 (uint32 below): the same arrays."""
    monkeypatch.setattr(nj, "DIRECT_SLOTS32_BELOW", 1000)
    rng = np.random.default_rng(6)
    keys, indices, values = _case(rng, 90_000, 3000)
    _check(nb.counting_take(keys, 3000, indices, values), _reference(keys, 3000, indices, values))


def test_transpose_coalesce_takes_the_direct_sort(backend):
    """The public path on both backends: a.T.coalesce() of a matrix past the threshold."""
    a = coosparse.random((3000, 2000), nnz=150_000, seed=8, sorted=True)
    assert a.is_coalesced and a.nnz >= nj.DIRECT_MIN_ENTRIES
    t = backend.put(a).T.coalesce()
    got = backend.get(t)
    assert got.is_coalesced
    order = np.lexsort((a.indices[0], a.indices[1]))
    np.testing.assert_array_equal(got.indices, a.indices[::-1][:, order])
    np.testing.assert_array_equal(got.values, a.values[order])
    np.testing.assert_array_equal(np.asarray(backend.get(t).row_pointer()),
                                  np.searchsorted(a.indices[1][order], np.arange(2001)))


@pytest.mark.parametrize("route", ["direct", "split", "radix", "counting"])
def test_rows_given_as_a_reversed_view(route, monkeypatch):
    """A transpose's rows come as a reversed (negative-stride) view of the source's: every route
    gives the arrays it gives for a contiguous copy of them, and the source is left as it was."""
    rng = np.random.default_rng(5)
    n, bound = nj.DIRECT_MIN_ENTRIES + 7, 5000
    if route != "direct":
        _split_only(monkeypatch)
    if route == "radix":
        monkeypatch.setattr(nj, "split_take", lambda *a: None)
    keys, indices, values = _case(rng, n, bound)
    if route == "counting":
        values = np.ascontiguousarray(np.repeat(values, 2, axis=1))  # two words: no pair route
    source = np.ascontiguousarray(indices[::-1])
    before = source.copy()
    view = source[::-1]
    assert not view.flags.c_contiguous
    _check(nb.counting_take(view[0], bound, view, values, other_bound=1 << 30),
           _reference(keys, bound, indices, values))
    np.testing.assert_array_equal(source, before)
