"""The Numba layer's plumbing: part plans, thread counts, bucket offsets and splits (NumPy now),
the in-kernel integer sort, word views of gathers, lazy family loading.

References are the loops the helpers replaced (or NumPy); every kernel row itself is
tested against NumPy by the op and kernel tests on both layers.
"""
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coosparse._kernels.numba import gather, layer, sort, threads
from coosparse._kernels.numba.parts import part_range


def _offsets_loop(hist):
    nchunks, nbuckets = hist.shape
    offsets = np.empty_like(hist)
    starts = np.empty(nbuckets + 1, np.int64)
    run = 0
    for b in range(nbuckets):
        starts[b] = run
        for t in range(nchunks):
            offsets[t, b] = run
            run += hist[t, b]
    starts[nbuckets] = run
    return offsets, starts


def _split_loop(starts, nparts):
    nbuckets = starts.shape[0] - 1
    n = starts[nbuckets]
    out = np.empty(nparts + 1, np.int64)
    out[0] = 0
    b = 0
    for t in range(1, nparts):
        target = (n * t) // nparts
        while b < nbuckets and starts[b + 1] <= target:
            b += 1
        out[t] = max(b, out[t - 1])
    out[nparts] = nbuckets
    return out


@given(nchunks=st.integers(1, 9), nbuckets=st.integers(0, 40), empty=st.floats(0, 1), seed=st.integers(0, 2**31))
def test_bucket_offsets_and_splits_match_the_loops(nchunks, nbuckets, empty, seed):
    rng = np.random.default_rng(seed)
    hist = rng.integers(0, 50, (nchunks, nbuckets)) * (rng.random((nchunks, nbuckets)) > empty)
    offsets, starts = sort.bucket_offsets(hist)
    want_offsets, want_starts = _offsets_loop(hist)
    np.testing.assert_array_equal(offsets, want_offsets)
    np.testing.assert_array_equal(starts, want_starts)
    assert offsets.flags.c_contiguous and offsets.dtype == starts.dtype == np.int64
    for nparts in (1, 2, 3, 8, nbuckets + 5):
        np.testing.assert_array_equal(sort.split_buckets(starts, nparts), _split_loop(starts, nparts))


@given(n=st.integers(0, 100), nparts=st.integers(1, 12))
def test_part_ranges_cover_once(n, nparts):
    seen = np.zeros(n, np.int64)
    for t in range(nparts):
        lo, hi = part_range(t, nparts, n)
        assert 0 <= lo <= hi <= n
        seen[lo:hi] += 1
    assert (seen == 1).all()


def test_plan_and_count():
    assert threads.plan(10, 8) == (1, 1)  # small work: the calling thread alone
    assert threads.plan(1 << 20, 1) == (1, 1)
    assert threads.plan(1 << 20, 2) == (8, 2)
    assert threads.plan(1 << 20, 3, per_thread=1) == (3, 3)
    assert threads.count() >= 1


def test_count_does_not_start_a_threading_layer():
    out = subprocess.run([sys.executable, "-c", (
        "import numba, coosparse; from coosparse._kernels.numba import threads; n = threads.count(); "
        "a = coosparse.random((300, 300), nnz=40_000, duplicates=True, seed=1); a.coalesce(); a.to_dense(); "
        "from numba.np.ufunc import parallel; print(n == numba.config.NUMBA_NUM_THREADS, parallel._is_initialized)")],
        capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False"]


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int32, np.float32, np.float64, np.complex64,
                                   np.complex128])
@pytest.mark.parametrize("m", [0, 5, 300_000])
def test_gathers_move_bits_of_every_dtype(dtype, m):
    rng = np.random.default_rng(3)
    raw = rng.integers(0, 256, (1000, 3 * np.dtype(dtype).itemsize), dtype=np.uint8)
    values = raw.view(dtype)  # every bit pattern: NaN payloads, negative zeros, any bool byte
    rows = rng.integers(0, 1000, m)
    got = layer.gather_rows(values, rows)
    assert got.dtype == values.dtype and got.shape == (m, 3)
    np.testing.assert_array_equal(got.view(np.uint8), values[rows].view(np.uint8))
    holes = np.where(rows % 3 == 0, -1, rows)
    got = layer.gather_or_zero(values, holes)
    want = values[np.maximum(holes, 0)].copy()
    want[holes < 0] = 0
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    flat = values.reshape(-1)
    if flat.dtype.itemsize <= 8:
        addr = rng.integers(0, flat.shape[0] - 4, m)
        got = layer.gather_strided(flat, addr, np.array([0, 1, 3]))
        np.testing.assert_array_equal(got.view(np.uint8), flat[addr[:, None] + np.array([0, 1, 3])].view(np.uint8))


def test_words_view_only_contiguous_2d():
    v = np.zeros((4, 3), np.complex128)
    assert gather.words(v).dtype == np.uint64 and gather.words(v).shape == (4, 6)
    assert gather.words(v[:, :2]).dtype == np.complex128  # not contiguous: gathered as it is
    assert gather.words(np.zeros((2, 2), np.uint32)).dtype == np.uint32


def test_an_operation_without_kernels_imports_no_numba():
    out = subprocess.run([sys.executable, "-c", (
        "import sys, numpy as np, coosparse; "
        "a = coosparse.COO(np.array([[0, 1], [1, 2]]), np.array([1.0, 4.0]), (3, 3), sorted=True, unique=True, "
        "check=False); "
        "r = np.sqrt(a); import coosparse._kernels.numba.layer; "
        "print(r.values.tolist(), 'numba' in sys.modules); a.to_dense(); "
        "print(sorted(m.rpartition('.')[2] for m in sys.modules if m.startswith('coosparse._kernels.numba.')))")],
        capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[1.0, 2.0] False"
    loaded = set(eval(out[1]))  # the families to_dense needs, not every family
    assert {"linear_index", "scatter"} <= loaded and not loaded & {"intersect", "union", "linalg", "reduce"}


@pytest.mark.parametrize("n, bits, skew", [(2, 20, 0), (20, 40, 0), (33, 24, 0), (300, 50, 0), (5000, 49, 0.95),
                                           (40_000, 46, 0.97), (40_000, 20, 0)])
def test_packed_sort_matches_a_stable_argsort(n, bits, skew):
    """The packed route's bucket sort: one bucket or many, buckets of a few words (4-bit digits,
    at most 8 passes however many key bits), long runs of equal keys."""
    rng = np.random.default_rng(n + bits)
    keys = rng.integers(0, 1 << bits, n)
    keys = np.where(rng.random(n) < skew, rng.integers(0, 64, n), keys)
    assert sort.fits_packed(1 << bits, n)
    for nthreads in (1, 3):
        s, p = sort.sort_pairs(keys, 1 << bits, nthreads)
        want = np.argsort(keys, kind="stable")
        np.testing.assert_array_equal(p, want)
        np.testing.assert_array_equal(s, keys[want])
