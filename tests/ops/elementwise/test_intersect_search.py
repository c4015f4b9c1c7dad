"""The partitioned search and the fused multiply_search row, on every layer.

``multiply_search`` must equal ``multiply_matched(match_search(...))`` exactly:
the CPU layer carries the source values through its partition, so these
tests take the partitioned path (probe > 32768 keys, source >= 4096 entries)
and its edges: keys below and above the probe, probe duplicates, a probe
crowded into one partition, a permuted probe, hybrid rows, and key spans too
wide for a packed word (the direct-search fallback).
"""
import numpy as np
import pytest

import coosparse
from coosparse._kernels.backend import backend_for
from reference import dense_of


def _data(n, m, span, seed, crowd=False):
    rng = np.random.default_rng(seed)
    lo = span // 4
    probe = np.sort(rng.integers(lo, span, size=m))
    if crowd:  # most of the probe in a narrow range: one partition holds most keys
        probe = np.sort(np.concatenate([probe[: m // 8], lo + rng.integers(0, 4 * m, size=m - m // 8)]))
    probe[m // 2: m // 2 + 7] = probe[m // 2]  # a run of probe duplicates
    src = np.concatenate([rng.integers(0, lo, n // 8),                  # below the probe
                          rng.integers(span, 2 * span, n // 8),         # above it
                          rng.integers(lo, span, n // 4),               # mostly misses
                          rng.choice(probe, n - n // 8 - n // 8 - n // 4)])
    src[0] = probe[-1]
    src[1] = probe[0]
    return rng.permutation(src).astype(np.int64), probe.astype(np.int64)


def _reference(src, probe, sv, pv_sorted):
    f = np.searchsorted(probe, src, side="left")
    e = np.searchsorted(probe, src, side="right")
    out = np.zeros_like(sv)
    for i in np.flatnonzero(e > f):
        acc = pv_sorted[f[i]].copy()
        for j in range(f[i] + 1, e[i]):
            acc = acc + pv_sorted[j]
        with np.errstate(invalid="ignore"):  # inf * complex
            out[i] = sv[i] * acc
    return f, e - f, out


@pytest.mark.parametrize("n, m, span, crowd, k, permuted", [
    (6000, 40_000, 2**40, False, 1, False),
    (20_000, 70_000, 2**34, False, 2, True),
    (5000, 40_000, 2**25, True, 1, False),
    (5000, 40_000, 2**61, False, 1, True),   # (low bits, position) no longer fit a word: direct search
    (3000, 40_000, 2**40, False, 1, False),  # small source: direct search
])
def test_multiply_search_equals_composition(backend, n, m, span, crowd, k, permuted):
    src, probe = _data(n, m, span, seed=n + k, crowd=crowd)
    rng = np.random.default_rng(3)
    sv = rng.standard_normal((n, k))
    pv = rng.standard_normal((m, k))
    perm = rng.permutation(m).astype(np.int64) if permuted else None
    stored = pv.copy()
    if permuted:
        stored[perm] = pv  # stored order differs; sorted position j reads stored[perm[j]]
    want_f, want_c, want = _reference(src, probe, sv, pv)
    be = backend_for(backend.put(src))
    dsrc, dprobe = backend.put(src), backend.put(probe)
    first, count = be.match_search(dsrc, dprobe)
    np.testing.assert_array_equal(backend.get(first), want_f)
    np.testing.assert_array_equal(backend.get(count), want_c)
    dperm = None if perm is None else backend.put(perm)
    got = backend.get(be.multiply_search(dsrc, backend.put(sv), dprobe, backend.put(stored), dperm))
    np.testing.assert_array_equal(got, want)
    comp = backend.get(be.multiply_matched(backend.put(sv), None, backend.put(stored), dperm, first, count))
    np.testing.assert_array_equal(got, comp)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128])
def test_multiply_search_dtypes_and_nonfinite(backend, dtype):
    src, probe = _data(5000, 40_000, 2**36, seed=7)
    rng = np.random.default_rng(1)
    sv = (rng.standard_normal((5000, 1)) * 100).astype(dtype)
    pv = (rng.standard_normal((40_000, 1)) * 100).astype(dtype)
    if dtype != np.int64:
        sv[:50] = np.inf  # unmatched: 0, not inf * 0
    want = _reference(src, probe, sv, pv)[2]
    be = backend_for(backend.put(src))
    with np.errstate(invalid="ignore"):
        got = backend.get(be.multiply_search(backend.put(src), backend.put(sv), backend.put(probe),
                                             backend.put(pv), None))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_multiply_search_empty(backend):
    be = backend_for(backend.put(np.zeros(0, np.int64)))
    e = backend.put(np.zeros(0, np.int64))
    keys = backend.put(np.arange(5, dtype=np.int64))
    assert backend.get(be.multiply_search(e, backend.put(np.zeros((0, 1))), keys,
                                          backend.put(np.ones((5, 1))), None)).shape == (0, 1)
    np.testing.assert_array_equal(
        backend.get(be.multiply_search(keys, backend.put(np.ones((5, 1))), e, backend.put(np.zeros((0, 1))), None)),
        np.zeros((5, 1)))


@pytest.mark.parametrize("fb", ["coalesced", "unsorted_probe"])
@pytest.mark.parametrize("hybrid", [False, True])
def test_multiply_uncoalesced_source_large(backend, fb, hybrid):
    # multiply(u, c, compact=False) takes multiply_search; the result keeps the source's layout
    rng = np.random.default_rng(5)
    shape = (3000, 3000) + ((3,) if hybrid else ())
    pool = rng.choice(3000 * 3000, 80_000, replace=False)
    ka = np.unique(rng.choice(pool, 60_000))
    kb = rng.choice(pool, 50_000)  # random order, duplicates
    va = rng.standard_normal((ka.size,) + shape[2:])
    vb = rng.standard_normal((kb.size,) + shape[2:])
    a = coosparse.COO(np.stack(np.unravel_index(ka, (3000, 3000))), va, shape, sorted=True, unique=True)
    if fb == "unsorted_probe":  # probe unique but stored in random order: sorted through a permutation
        p = rng.permutation(ka.size)
        a = coosparse.COO(a.indices[:, p], va[p], shape, unique=True)
    b = coosparse.COO(np.stack(np.unravel_index(kb, (3000, 3000))), vb, shape)
    r = backend.get(coosparse.multiply(backend.put(b), backend.put(a), compact=False))
    np.testing.assert_array_equal(r.indices, b.indices)
    assert (r.is_sorted, r.is_unique) == (False, False)
    # source duplicates stay separate products: a*b1 + a*b2 rounds unlike a*(b1 + b2)
    np.testing.assert_allclose(dense_of(r), dense_of(a) * dense_of(b), rtol=1e-12, atol=1e-12)


def test_multiply_search_sync_free():
    emulated = pytest.importorskip("coosparse._kernels.cuda.emulated")
    if not emulated.available():
        pytest.skip("emulated CUDA layer unavailable")
    import emulation as strict

    rng = np.random.default_rng(6)
    keys = strict.to_device(np.sort(rng.integers(0, 50, 40)).astype(np.int64))
    vals = strict.to_device(rng.standard_normal((40, 2)))
    emulated.multiply_search(keys, vals, keys, vals, None)
    with strict.sync_free():
        emulated.multiply_search(keys, vals, keys, vals, None)
        emulated.multiply_search(keys, vals, keys, vals, None, shared_runs=True)
