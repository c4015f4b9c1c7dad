"""The indexing and join kernel rows (mask_positions, search_ranges, expand_ranges, take_ranges,
take_rows, merge_take) on every layer, against NumPy."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coosparse._kernels.backend import backend_for


def _be(backend, *arrays):
    return backend_for(*[backend.put(x) for x in arrays])


@given(n=st.integers(0, 3000), p=st.floats(0, 1), seed=st.integers(0, 2**31))
def test_mask_positions(n, p, seed, backend):
    mask = np.random.default_rng(seed).random(n) < p
    be = _be(backend, mask)
    np.testing.assert_array_equal(backend.get(be.mask_positions(backend.put(mask))), np.flatnonzero(mask))


@given(n=st.integers(0, 400), m=st.integers(0, 200), span=st.integers(1, 500), seed=st.integers(0, 2**31))
def test_search_ranges(n, m, span, seed, backend):
    rng = np.random.default_rng(seed)
    keys = np.sort(rng.integers(0, span, n))
    lo = rng.integers(-3, span + 3, m)
    hi = lo + rng.integers(-2, 30, m)
    be = _be(backend, keys)
    start, stop = be.search_ranges(*[backend.put(x) for x in (keys, lo, hi)])
    es = np.searchsorted(keys, lo)
    ee = np.where(hi > lo, np.maximum(es, np.searchsorted(keys, hi)), es)
    np.testing.assert_array_equal(backend.get(start), es)
    np.testing.assert_array_equal(backend.get(stop), ee)


@given(m=st.integers(0, 200), seed=st.integers(0, 2**31), big=st.booleans())
def test_expand_ranges(m, seed, big, backend):
    rng = np.random.default_rng(seed)
    start = rng.integers(0, 1000, m)
    count = rng.integers(0, 5000 if big else 4, m)
    be = _be(backend, start)
    rows, owner = be.expand_ranges(backend.put(start), backend.put(count))
    er = np.concatenate([np.arange(s, s + c) for s, c in zip(start, count)] + [np.zeros(0, np.int64)])
    np.testing.assert_array_equal(backend.get(rows), er)
    np.testing.assert_array_equal(backend.get(owner), np.repeat(np.arange(m), count))


def _merge_check(be, backend, keys, offsets, seed):
    rng = np.random.default_rng(seed)
    n = keys.shape[0]
    indices = rng.integers(0, 99, (2, n))
    values = rng.standard_normal((n, 2))
    out, vals = be.merge_take(backend.put(keys), offsets, backend.put(indices), backend.put(values.view(np.uint64)))
    perm = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(backend.get(out), indices[:, perm])
    np.testing.assert_array_equal(backend.get(vals).view(np.float64), values[perm])


@given(sizes=st.lists(st.integers(0, 3000), min_size=1, max_size=20), span=st.integers(1, 10**6),
       seed=st.integers(0, 2**31))
def test_merge_take(sizes, span, seed, backend):
    rng = np.random.default_rng(seed)
    keys = np.concatenate([np.sort(rng.integers(0, span, k)) for k in sizes])
    _merge_check(_be(backend, keys), backend, keys, np.cumsum([0] + sizes), seed)


@pytest.mark.parametrize("runs", [1, 2, 4])
def test_merge_take_large_parallel_split(runs, backend):
    rng = np.random.default_rng(runs)
    sizes = [300000 + 13 * t for t in range(runs)]
    keys = np.concatenate([np.sort(rng.integers(0, 1 << 17, k)) for k in sizes])
    _merge_check(_be(backend, keys), backend, keys, np.cumsum([0] + sizes), runs)


@given(m=st.integers(0, 100), d=st.integers(0, 3), k=st.integers(0, 3), seed=st.integers(0, 2**31),
       dtype=st.sampled_from([np.int8, np.float16, np.float64, np.complex128]))
def test_take_ranges(m, d, k, seed, dtype, backend):
    rng = np.random.default_rng(seed)
    n = 500
    indices = rng.integers(0, 99, (d, n))
    values = (rng.standard_normal((n, k)) * 10).astype(dtype)
    start = rng.integers(0, n - 10, m)
    count = rng.integers(0, 10, m)
    words = values.view({1: np.uint8, 2: np.uint16, 8: np.uint64, 16: np.uint64}[values.dtype.itemsize])
    be = _be(backend, indices)
    out, vals = be.take_ranges(backend.put(indices), backend.put(words), backend.put(start), backend.put(count))
    rows = np.concatenate([np.arange(s, s + c) for s, c in zip(start, count)] + [np.zeros(0, np.int64)])
    expected = np.concatenate([np.repeat(np.arange(m), count)[None], indices[:, rows]])
    np.testing.assert_array_equal(backend.get(out), expected)
    np.testing.assert_array_equal(backend.get(vals).view(dtype), values[rows])


@pytest.mark.parametrize("d, k", [(1, 1), (2, 1), (1, 2)])
@pytest.mark.parametrize("long_ranges", [False, True])
def test_take_ranges_parallel_parts(d, k, long_ranges, backend):
    # enough output for several parts: ranges cut by the parts' edges (empty ones among them), on
    # the matrix path (one index row, one value word) and the general one
    rng = np.random.default_rng(d * 10 + k + long_ranges)
    n, m = 50_000, 3001
    indices = rng.integers(0, 1 << 40, (d, n))
    values = rng.integers(0, 2**63, (n, k), dtype=np.uint64)
    count = rng.integers(0, 3000 if long_ranges else 30, m)
    count[rng.random(m) < 0.2] = 0
    start = rng.integers(0, n - count.max() - 1, m)
    be = _be(backend, indices)
    out, vals = be.take_ranges(backend.put(indices), backend.put(values), backend.put(start), backend.put(count))
    rows = np.concatenate([np.arange(s, s + c) for s, c in zip(start, count)])
    np.testing.assert_array_equal(backend.get(out), np.concatenate([np.repeat(np.arange(m), count)[None],
                                                                    indices[:, rows]]))
    np.testing.assert_array_equal(backend.get(vals), values[rows])


@pytest.mark.parametrize("last", [0, 1, 7, 8, 9, 16, 17])
def test_take_ranges_matrix_path_edges(last, backend):
    # the matrix path (one index row, one value word) copies each range by memcpy and fills its
    # owners in whole groups of eight where they end 8 or more before the part's end, one by one
    # near it: ranges of 0-17 entries, the last of ``last`` entries reading the source's end
    rng = np.random.default_rng(last)
    n = 64
    indices = rng.integers(0, 1 << 40, (1, n))
    values = rng.integers(0, 2**63, (n, 1), dtype=np.uint64)
    count = np.array(list(rng.integers(0, 18, 40)) + [last])
    start = np.array([rng.integers(0, n - c + 1) for c in count[:-1]] + [n - last])
    be = _be(backend, indices)
    out, vals = be.take_ranges(backend.put(indices), backend.put(values), backend.put(start), backend.put(count))
    rows = np.concatenate([np.arange(s, s + c) for s, c in zip(start, count)])
    np.testing.assert_array_equal(backend.get(out), np.concatenate([np.repeat(np.arange(count.size), count)[None],
                                                                    indices[:, rows]]))
    np.testing.assert_array_equal(backend.get(vals), values[rows])


def test_take_ranges_strided_values():
    # values that are a column of a wider array (not C-contiguous): copied first on the CPU layer,
    # whose matrix path moves each range by memcpy
    from coosparse._kernels.numba import layer as L

    rng = np.random.default_rng(3)
    indices = rng.integers(0, 99, (1, 500))
    wide = rng.integers(0, 2**63, (500, 3), dtype=np.uint64)
    start, count = rng.integers(0, 490, 30), rng.integers(0, 10, 30)
    out, vals = L.take_ranges(indices, wide[:, 1:2], start, count)
    rows = np.concatenate([np.arange(s, s + c) for s, c in zip(start, count)])
    np.testing.assert_array_equal(out[1], indices[0, rows])
    np.testing.assert_array_equal(vals, wide[rows, 1:2])


@pytest.mark.parametrize("m", [0, 1, 7, 4095, 4096, 9000])
@pytest.mark.parametrize("empty_rows", [False, True])
def test_take_rows(m, empty_rows, backend):
    """The rows of a row pointer gathered whole (repeats, empty rows, any order) = take_ranges of
    their spans; long row lists take the one-pass spans kernel (4096 rows and more)."""
    rng = np.random.default_rng(m + empty_rows)
    nrows = 700
    lengths = rng.integers(0, 40, nrows)
    if empty_rows:
        lengths[rng.random(nrows) < 0.5] = 0
    ptr = np.concatenate([[0], np.cumsum(lengths)])
    n = int(ptr[-1])
    indices = rng.integers(0, 1 << 40, (1, n))
    values = rng.integers(0, 2**63, (n, 1), dtype=np.uint64)
    rows = rng.integers(0, nrows, m)
    be = _be(backend, indices)
    out, vals = be.take_rows(*[backend.put(x) for x in (indices, values, ptr, rows)])
    span = [np.arange(ptr[r], ptr[r + 1]) for r in rows]
    pos = np.concatenate(span + [np.zeros(0, np.int64)])
    np.testing.assert_array_equal(backend.get(out), np.concatenate([np.repeat(np.arange(m), lengths[rows])[None],
                                                                    indices[:, pos]]))
    np.testing.assert_array_equal(backend.get(vals), values[pos])


@pytest.mark.parametrize("m", [3, 5000])
@pytest.mark.parametrize("bad", [-1, 700, 10**12])
def test_take_rows_refuses_a_row_outside(m, bad):
    """The CPU layer checks the rows (short lists in NumPy, long ones in the spans pass); the GPU
    layer's gathers stay memory-safe and check them only when validating."""
    from coosparse._kernels.numba import layer as L

    ptr = np.arange(701, dtype=np.int64)
    rows = np.zeros(m, np.int64)
    rows[m // 2] = bad
    with pytest.raises(IndexError, match=f"row {bad} is outside the row pointer's 700 rows"):
        L.take_rows(ptr[None, :700], np.zeros((700, 1), np.uint64), ptr, rows)


@pytest.mark.parametrize("r", [1, 3, 4, 6])
@pytest.mark.parametrize("d, k", [(2, 1), (3, 2)])
def test_join_rows(r, d, k, backend):
    """Pieces sorted by row joined row by row (pieces in turn within a row), index row 1 shifted."""
    rng = np.random.default_rng(r * 10 + d)
    m = 30
    pieces, ptrs = [], []
    for t in range(r):
        n = 0 if t == 1 else int(rng.integers(1, 80))
        idx = rng.integers(0, 1 << 40, (d, n))
        idx[0] = np.sort(rng.integers(0, m, n))
        pieces.append((idx, rng.integers(0, 2**63, (n, k), dtype=np.uint64)))
        ptrs.append(np.searchsorted(idx[0], np.arange(m + 1)))
    shifts = np.cumsum([0] + [int(rng.integers(1, 1000)) for _ in range(r - 1)])
    total = sum(p[0].shape[1] for p in pieces)
    out_idx = backend.put(np.zeros((d, total), np.int64))
    out_val = backend.put(np.zeros((total, k), np.uint64))
    be = _be(backend, pieces[0][0])
    be.join_rows([backend.put(p[0]) for p in pieces], [backend.put(p[1]) for p in pieces],
                 backend.put(np.stack(ptrs)), shifts, 1, out_idx, out_val)
    idx = np.concatenate([p[0] + np.eye(d, dtype=np.int64)[1][:, None] * s for p, s in zip(pieces, shifts)], axis=1)
    order = np.argsort(idx[0], kind="stable")
    np.testing.assert_array_equal(backend.get(out_idx), idx[:, order])
    np.testing.assert_array_equal(backend.get(out_val), np.concatenate([p[1] for p in pieces])[order])


def test_join_rows_refuses_pointers_that_do_not_add_up():
    from coosparse._kernels.numba import layer

    idx = np.array([[0, 0, 1], [0, 1, 2]], np.int64)
    ptr = np.array([[0, 2, 5]], np.int64)  # claims 5 entries: the output holds 3
    with pytest.raises(IndexError, match="pointers"):
        layer.join_rows([idx], [np.ones((3, 1), np.uint64)], ptr, [0], 1, np.zeros((2, 3), np.int64),
                        np.zeros((3, 1), np.uint64))
