"""coalesce's Numba routes agree bit for bit: one bucket (inputs below 32,768 entries, words and
output by NumPy) and the bucketed route (histogram, scatter, per-bucket sort, output kernels),
both against a stable sort with sums in original order.

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


def _check(idx, vals, shape):
    want_idx, want_vals = _reference(idx, vals, shape)
    for route, (got_idx, got_vals) in _routes(idx, vals, shape):
        np.testing.assert_array_equal(got_idx, want_idx, err_msg=route)
        assert got_idx.dtype == np.int64 and got_idx.flags.c_contiguous, route
        assert got_vals.dtype == vals.dtype and got_vals.shape == want_vals.shape, route
        assert got_vals.tobytes() == want_vals.tobytes(), route


@pytest.mark.parametrize("shape", [(3000, 3000), (64, 48, 64), (2**24, 2**24), (7,), (1, 5), ()])
@pytest.mark.parametrize("n", [0, 1, 2, 31, 33, 2100, 9000])
@pytest.mark.parametrize("k", [1, 3])
def test_routes_match_a_stable_sort(shape, n, k):
    rng = np.random.default_rng(n * 7 + k)
    idx = np.array([rng.integers(0, s, n) for s in shape], dtype=np.int64).reshape(len(shape), n)
    vals = rng.standard_normal((n, k)).astype(np.float32 if k == 3 else np.float64)
    _check(idx, vals, shape)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 400), st.sampled_from([(40, 50), (2**26, 2**26), (5, 6, 7)]))
def test_routes_match_on_random_duplicates(seed, n, shape):
    rng = np.random.default_rng(seed)
    # few distinct keys: long runs of equal keys, small buckets
    pool = [rng.integers(0, s, rng.integers(1, 20)) for s in shape]
    idx = np.array([rng.choice(p, n) for p in pool], dtype=np.int64)
    _check(idx, rng.standard_normal((n, 1)), shape)


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
