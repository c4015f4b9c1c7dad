"""coalesce's Numba routes agree bit for bit: one bucket (inputs below 32,768 entries, words and
output by NumPy), the bucketed route (histogram, scatter, per-bucket sort, output kernels) and,
for value rows of whole cache lines, the by-position route (values moved once, by output row),
all against a stable sort with sums in original order.

The op tests (tests/ops/coalesce) reach each route through its size; here both routes run on the
same inputs, including the radix sort's small buckets (4-bit digits, at most 8 passes however
many key bits).
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coosparse._kernels.bounds import row_major_sizes, size_limits
from coosparse._kernels.numba import coalesce as nbco
from coosparse._kernels.numba.sort import fits_packed


def _strides(shape):
    strides, s = [], 1
    for size in reversed(shape):
        strides.append(s)
        s *= size
    return np.array(strides[::-1], dtype=np.int64), s


def _reference(idx, vals, shape):
    """(unique indices, sums in original order) by a stable argsort and sequential adds."""
    ndim, n = idx.shape
    keys = np.ravel_multi_index(tuple(idx), shape) if ndim else np.zeros(n, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    uniq, first = np.unique(keys[order], return_index=True)
    sums = np.zeros((uniq.size,) + vals.shape[1:], dtype=vals.dtype)
    seg = np.repeat(np.arange(uniq.size), np.diff(np.append(first, n)))
    np.add.at(sums, seg, vals[order])  # unbuffered: sequential, in the given order
    out = np.array(np.unravel_index(uniq, shape) if ndim else (), dtype=np.int64).reshape(ndim, uniq.size)
    return out, sums


def _routes(idx, vals, shape):
    strides, bound = _strides(shape)
    limits = size_limits(row_major_sizes(strides, bound))
    assert fits_packed(bound, idx.shape[1])  # the condition under which coalesce takes these routes
    yield "one bucket", nbco.coalesce_one_bucket(idx, strides, bound, vals, limits)
    if idx.shape[1] > 1:
        for nthreads in (1, 3):
            yield f"bucketed x{nthreads}", nbco.coalesce_bucketed(idx, strides, bound, vals, nthreads, limits)
            if nbco.rows_move_whole(vals):
                yield f"by position x{nthreads}", nbco.coalesce_by_position(idx, strides, bound, vals, nthreads,
                                                                             limits)


def _check(idx, vals, shape):
    want_idx, want_vals = _reference(idx, vals, shape)
    for route, (got_idx, got_vals) in _routes(idx, vals, shape):
        np.testing.assert_array_equal(got_idx, want_idx, err_msg=route)
        assert got_idx.dtype == np.int64 and got_idx.flags.c_contiguous, route
        assert got_vals.dtype == vals.dtype and got_vals.shape == want_vals.shape, route
        assert got_vals.tobytes() == want_vals.tobytes(), route


@pytest.mark.parametrize("shape", [(3000, 3000), (64, 48, 64), (2**24, 2**24), (7,), (1, 5), ()])
@pytest.mark.parametrize("n", [0, 1, 2, 31, 33, 2100, 9000])
@pytest.mark.parametrize("k, dtype", [(1, np.float64), (3, np.float32), (8, np.float64), (16, np.int32)])
def test_routes_match_a_stable_sort(shape, n, k, dtype):
    rng = np.random.default_rng(n * 7 + k)
    idx = np.array([rng.integers(0, s, n) for s in shape], dtype=np.int64).reshape(len(shape), n)
    vals = (rng.standard_normal((n, k)) * 1e3).astype(dtype)
    _check(idx, vals, shape)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 400), st.sampled_from([(40, 50), (2**26, 2**26), (5, 6, 7)]))
def test_routes_match_on_random_duplicates(seed, n, shape):
    rng = np.random.default_rng(seed)
    # few distinct keys: long runs of equal keys, small buckets
    pool = [rng.integers(0, s, rng.integers(1, 20)) for s in shape]
    idx = np.array([rng.choice(p, n) for p in pool], dtype=np.int64)
    _check(idx, rng.standard_normal((n, 1)), shape)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint32])
def test_by_position_takes_rows_of_whole_lines(dtype):
    # the route coalesce takes for such rows above the one-bucket size, with runs of duplicates
    # (summed in _place_part) beside entries alone in their run (moved by _move_rows_part)
    rng = np.random.default_rng(11)
    n, k = 40_000, 64 // np.dtype(dtype).itemsize
    shape = (5000, 300)
    idx = np.array([rng.integers(0, 100, n), rng.integers(0, 300, n)], dtype=np.int64)
    alone = rng.random(n) < 0.5
    idx[0, alone] = rng.integers(100, 5000, int(alone.sum()))
    vals = (rng.standard_normal((n, k)) * 100).astype(dtype)
    assert nbco.rows_move_whole(vals) and not nbco.rows_move_whole(np.asfortranarray(vals))
    assert not nbco.rows_move_whole(vals[:, :k - 1]) and not nbco.rows_move_whole(vals.astype(np.complex128))
    _check(idx, vals, shape)
    strides, bound = _strides(shape)
    got_idx, got_vals = nbco.coalesce_linear(idx, strides, bound, vals, 2)
    want_idx, want_vals = _reference(idx, vals, shape)
    np.testing.assert_array_equal(got_idx, want_idx)
    assert got_vals.tobytes() == want_vals.tobytes() and got_vals.flags.c_contiguous


def test_by_position_checks_indices_before_writing():
    rng = np.random.default_rng(2)
    n = 40_000
    idx = np.array([rng.integers(0, 50, n), rng.integers(0, 60, n)], dtype=np.int64)
    idx[1, 31_234] = 60
    vals = rng.standard_normal((n, 8))
    before = vals.copy()
    strides, bound = _strides((50, 60))
    with pytest.raises(IndexError, match="out of bounds"):
        nbco.coalesce_by_position(idx, strides, bound, vals, 2, size_limits((50, 60)))
    np.testing.assert_array_equal(vals, before)


def test_small_buckets_with_many_key_bits():
    # 41 key bits below the bucket digit and buckets of a few words: the 4-bit digits would need
    # 11 passes, capped at 8 (of 6 bits); most words sit in one big bucket
    rng = np.random.default_rng(3)
    n = 40_000
    shape = (2**23, 2**23)
    flat = np.where(rng.random(n) < 0.97, rng.integers(0, 2**20, n), rng.integers(0, 2**46, n))
    idx = np.array(np.unravel_index(flat, shape), dtype=np.int64)
    _check(idx, rng.standard_normal((n, 1)), shape)


def test_one_bucket_checks_every_dimension_before_writing():
    # column 5 of a 3 x 4 shape: its linear key (5) lies inside the bound, the index does not
    for bad in ([0, 5], [-1, 0], [3, 0]):
        idx = np.array([[0, 1, bad[0], 2], [0, 1, bad[1], 3]], dtype=np.int64)
        vals = np.ones((4, 1))
        strides, bound = _strides((3, 4))
        with pytest.raises(IndexError, match="out of bounds"):
            nbco.coalesce_one_bucket(idx, strides, bound, vals, size_limits((3, 4)))
        assert vals.tolist() == [[1.0]] * 4  # the input is never written


def test_one_bucket_leaves_its_input_alone():
    idx = np.array([[2, 0, 2, 1]], dtype=np.int64)
    vals = np.array([[1.0], [2.0], [3.0], [4.0]])
    before = (idx.copy(), vals.copy())
    out_idx, out_vals = nbco.coalesce_one_bucket(idx, np.array([1]), 3, vals, size_limits((3,)))
    assert out_idx.tolist() == [[0, 1, 2]] and out_vals.tolist() == [[2.0], [4.0], [4.0]]
    np.testing.assert_array_equal(idx, before[0])
    np.testing.assert_array_equal(vals, before[1])
