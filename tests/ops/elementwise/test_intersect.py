"""multiply, sparse_mask, mask_projection and the matching kernels, against dense NumPy."""
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import coosparse
from coosparse import COO
from coosparse._kernels.backend import backend_for
from coosparse.ops.elementwise.intersect import choose_sides
from operands import DTYPES, FLAGS, close, make, pair
from reference import dense_of



# ----------------------------------------------------------------------------- examples
def test_sparse_mask_torch_example(backend):
    x = backend.put(COO([[2, 1, 2, 3]], np.array([5, 7, 6, 8]), (5,)))
    mask = backend.put(COO([[1, 0, 1, 2]], np.ones(4), (5,)))
    r = backend.get(coosparse.sparse_mask(x, mask))
    np.testing.assert_array_equal(r.values, [7, 0, 7, 11])
    np.testing.assert_array_equal(r.indices, [[1, 0, 1, 2]])
    assert not r.is_sorted and not r.is_unique


@pytest.mark.parametrize("accumulate, expected", [(True, [5, 14, 6, 0]), (False, [5, 7, 6, 0])])
def test_mask_projection_torch_example(backend, accumulate, expected):
    x = backend.put(COO([[1, 2, 3, 4]], np.array([5, 7, 6, 9]), (5,), sorted=True, unique=True))
    mask = backend.put(COO([[2, 1, 2, 3]], np.ones(4), (5,)))
    r = backend.get(coosparse.mask_projection(x, mask, accumulate=accumulate))
    np.testing.assert_array_equal(r.values, expected)
    np.testing.assert_array_equal(r.indices, [[1, 2, 3, 4]])
    assert r.is_coalesced


# ----------------------------------------------------------------------------- multiply
@pytest.mark.parametrize("fa, fb", list(itertools.product(FLAGS, FLAGS)))
@pytest.mark.parametrize("compact", [True, False])
@pytest.mark.parametrize("hybrid", [False, True])
def test_multiply_flags_layout(backend, fa, fb, compact, hybrid):
    shape, kw = ((6, 7, 3), {"sparse_ndim": 2}) if hybrid else ((6, 7), {})
    a, b = pair(fa, fb, shape, **kw)
    r = backend.get(coosparse.multiply(backend.put(a), backend.put(b), compact=compact))
    close(dense_of(r), dense_of(a) * dense_of(b), np.float64)
    src, _ = choose_sides(a, b)
    assert r.shape == a.shape
    assert (r.is_sorted, r.is_unique) == (src.is_sorted, src.is_unique)
    if compact:
        db = dense_of(b if src is a else a) != 0
        probe_has = (db.reshape(db.shape[:2] + (-1,)).any(-1) if hybrid else db)
        # an index stays iff the other side stores it (values may be zero; ours are non-zero
        # only where stored... use index membership instead)
        other = b if src is a else a
        okeys = set(map(tuple, other.indices.T))
        keep = [i for i, col in enumerate(src.indices.T) if tuple(col) in okeys]
        np.testing.assert_array_equal(r.indices, src.indices[:, keep])
        del probe_has
    else:
        np.testing.assert_array_equal(r.indices, src.indices)
        assert r.nnz == src.nnz


@pytest.mark.parametrize("fa, fb", [(x, y) for x, y in itertools.product(FLAGS, FLAGS) if x != y])
@pytest.mark.parametrize("compact", [True, False])
def test_multiply_symmetric(backend, fa, fb, compact):
    a, b = pair(fa, fb)
    r1 = backend.get(coosparse.multiply(backend.put(a), backend.put(b), compact=compact))
    r2 = backend.get(coosparse.multiply(backend.put(b), backend.put(a), compact=compact))
    np.testing.assert_array_equal(r1.indices, r2.indices)
    np.testing.assert_array_equal(r1.values, r2.values)
    assert (r1.is_sorted, r1.is_unique) == (r2.is_sorted, r2.is_unique)


def test_multiply_symmetric_same_flags_different_nnz(backend):
    a, b = pair("none", "none")
    assert a.nnz != b.nnz
    r1 = backend.get(coosparse.multiply(backend.put(a), backend.put(b), compact=False))
    r2 = backend.get(coosparse.multiply(backend.put(b), backend.put(a), compact=False))
    np.testing.assert_array_equal(r1.indices, r2.indices)
    np.testing.assert_array_equal(r1.values, r2.values)
    # the larger side is the source (the smaller one is sorted)
    assert r1.nnz == max(a.nnz, b.nnz)


def test_tie_rule_second_argument_is_probe(backend):
    a = make((6, 7), 10, "unique", seed=3)
    b = make((6, 7), 10, "unique", seed=4)
    r = backend.get(coosparse.multiply(backend.put(a), backend.put(b), compact=False))
    np.testing.assert_array_equal(r.indices, a.indices)




@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("compact", [True, False])
@pytest.mark.parametrize("flags", [("unique", "sorted"), ("coalesced", "sorted")])
def test_multiply_dtypes(backend, dtype, compact, flags):
    a, b = pair(*flags)
    a, b = a.astype(dtype), b.astype(dtype)
    r = backend.get(coosparse.multiply(backend.put(a), backend.put(b), compact=compact))
    assert r.dtype == dtype
    close(dense_of(r), dense_of(a) * dense_of(b), dtype)


@pytest.mark.parametrize("da, db", [(np.int8, np.float32), (np.uint8, np.int8), (np.bool_, np.int16),
                                    (np.float16, np.complex64), (np.int64, np.uint64)])
def test_multiply_promotion(backend, da, db):
    # the probe's duplicates are summed in its own dtype, as its dense meaning says
    a, b = pair("unique", "sorted")
    a, b = a.astype(da), b.astype(db)
    r = backend.get(coosparse.multiply(backend.put(a), backend.put(b)))
    assert r.dtype == np.result_type(da, db)
    close(dense_of(r), dense_of(a).astype(r.dtype) * dense_of(b).astype(r.dtype), r.dtype)


@pytest.mark.parametrize("da, db", [(np.uint8, np.int16), (np.bool_, np.int8), (np.int8, np.float32),
                                    (np.float16, np.float32)])
@pytest.mark.parametrize("compact", [True, False])
@pytest.mark.parametrize("flags", [("none", "sorted"), ("sorted", "coalesced"), ("none", "none")])
def test_multiply_promotion_sums_duplicates_in_their_own_dtype(backend, da, db, compact, flags):
    # an element with duplicates is their sum in its own dtype (uint8 200 + 100 is 44, two Trues are
    # True), whichever side keeps its layout; summing the promoted duplicates instead gave 300 and 2
    big = {np.uint8: 200, np.bool_: True, np.int8: 100, np.float16: 60000.0}[da]
    a = COO([[0, 2, 0, 3, 2]], np.array([big, 1, big, 1, 1], dtype=da), (5,))
    if flags[0] == "sorted":
        a = COO(a.indices[:, [0, 2, 1, 4, 3]], a.values[[0, 2, 1, 4, 3]], (5,), sorted=True)
    b = COO([[0, 2, 3, 4]], np.array([3, 2, 5, 7], dtype=db), (5,), sorted=flags[1] != "none",
            unique=flags[1] == "coalesced")
    want = dense_of(a).astype(np.result_type(da, db)) * dense_of(b).astype(np.result_type(da, db))
    for x, y in ((a, b), (b, a)):
        r = backend.get(coosparse.multiply(backend.put(x), backend.put(y), compact=compact))
        assert r.dtype == want.dtype
        close(dense_of(r), want, r.dtype)


@pytest.mark.parametrize("shape, sparse_ndim", [((6, 7), 2), ((6, 7, 3), 2), ((4, 5, 6), 3), ((3,), 0)])
def test_fused_sorted_multiply(backend, shape, sparse_ndim):
    # both sorted + compact takes the fused merge over index columns; probe duplicates
    # are summed in order, source duplicates stay separate
    for fa, fb in [("coalesced", "coalesced"), ("sorted", "sorted"), ("coalesced", "sorted")]:
        if sparse_ndim == 0:
            a = COO(np.zeros((0, 2), np.int64), np.ones((2, 3)), shape, sorted=True)
            b = COO(np.zeros((0, 3), np.int64), np.arange(9.0).reshape(3, 3), shape, sorted=True)
        else:
            a, b = pair(fa, fb, shape, sparse_ndim=sparse_ndim)
        for x, y in [(a, b), (b, a)]:
            r = backend.get(coosparse.multiply(backend.put(x), backend.put(y)))
            src, _ = choose_sides(x, y)
            assert r.is_sorted and r.is_unique == src.is_unique
            close(dense_of(r) if sparse_ndim else r.values.sum(0),
                  dense_of(x) * dense_of(y) if sparse_ndim else x.values.sum(0) * y.values.sum(0),
                  np.float64)
            ref = backend.get(coosparse.multiply(backend.put(x), backend.put(y), compact=False))
            keep = [i for i, col in enumerate(src.indices.T) if tuple(col) in set(map(tuple, (y if src is x else x).indices.T))]
            if sparse_ndim:
                np.testing.assert_array_equal(r.indices, src.indices[:, keep])
                np.testing.assert_array_equal(r.values, ref.values[keep])


def test_multiply_hybrid_broadcast(backend):
    a = make((5, 4, 3), 8, "unique", sparse_ndim=1, seed=5)
    b = make((5, 4, 1), 4, "coalesced", sparse_ndim=1, seed=6)
    for compact in (True, False):
        r = backend.get(coosparse.multiply(backend.put(a), backend.put(b), compact=compact))
        assert r.shape == (5, 4, 3)
        close(dense_of(r), dense_of(a) * dense_of(b), np.float64)


def test_multiply_compact_false_writes_zero_not_nan(backend):
    a = COO([[0, 1]], np.array([np.inf, 2.0]), (3,), sorted=True, unique=True)
    b = COO([[1, 2, 1]], np.array([3.0, 4.0, 5.0]), (3,))
    r = backend.get(coosparse.multiply(backend.put(b), backend.put(a), compact=False))
    # a (coalesced) is the probe; b keeps its layout
    np.testing.assert_array_equal(r.indices, [[1, 2, 1]])
    np.testing.assert_array_equal(r.values, [6.0, 0.0, 10.0])
    r = backend.get(coosparse.multiply(backend.put(a), backend.put(b.coalesce()), compact=False))
    np.testing.assert_array_equal(r.values, [0.0, 16.0])  # a is the source (tie: b probe)


def test_multiply_probe_duplicates_summed_in_order(backend):
    # float sums in stored order: (1e16 + 1) - 1e16 == 0 in float64, 1 if reordered
    # src ranks lower (not sorted) than probe (sorted), so probe really is the probe
    src = COO([[1, 0]], np.array([1.0, 1.0]), (2,))
    probe = COO([[0, 0, 0]], np.array([1e16, 1.0, -1e16]), (2,), sorted=True)
    for x, y in [(src, probe), (probe, src)]:
        r = backend.get(coosparse.multiply(backend.put(x), backend.put(y)))
        np.testing.assert_array_equal(r.indices, [[0]])
        assert r.values[0] == ((1e16 + 1.0) - 1e16) == 0.0


@pytest.mark.parametrize("flags", list(FLAGS))
def test_multiply_dense_and_scalar(backend, flags):
    a = make((6, 7, 2), 20, flags, sparse_ndim=2, seed=7)
    x = np.random.default_rng(0).random((6, 7, 2))
    for r in (coosparse.multiply(backend.put(a), backend.put(x)), backend.put(a) * backend.put(x),
              backend.put(x) * backend.put(a)):
        r = backend.get(r)
        np.testing.assert_array_equal(r.indices, a.indices)
        assert (r.is_sorted, r.is_unique) == (a.is_sorted, a.is_unique)
        close(dense_of(r), dense_of(a) * x, np.float64)
    # broadcasting in the dense dimension, and a scalar
    r = backend.get(backend.put(a) * backend.put(np.array([2.0, 3.0])))
    close(dense_of(r), dense_of(a) * np.array([2.0, 3.0]), np.float64)
    r = backend.get(3 * backend.put(a.astype(np.float32)))
    assert r.dtype == np.float32
    close(dense_of(r), 3 * dense_of(a), np.float32)


def test_multiply_broadcasts_and_mixes_sparse_ndim(backend):
    # operands of different sparse_ndim (the hybrid one is sparsified) and sparse broadcasting
    a = make((6, 7), 10, "unique")
    h = make((6, 7), 4, "none", sparse_ndim=1, seed=3)
    r = backend.get(coosparse.multiply(backend.put(a), backend.put(h)))
    close(dense_of(r), dense_of(a) * dense_of(h), np.float64)
    x = np.arange(2 * 6 * 7, dtype=np.float64).reshape(2, 6, 7)
    r = backend.get(coosparse.multiply(backend.put(a), backend.put(x)))
    assert isinstance(r, COO) and r.shape == (2, 6, 7) and r.nnz == 2 * a.nnz
    close(dense_of(r), dense_of(a) * x, np.float64)


def test_multiply_dense_strided(backend):
    a = make((6, 7), 20, "unique", seed=8)
    x = np.random.default_rng(0).random((7, 12))[:, ::2].T  # non-contiguous
    r = backend.get(coosparse.multiply(backend.put(a), backend.put(x)))
    close(dense_of(r), dense_of(a) * x, np.float64)


def test_multiply_errors():
    a = make((6, 7), 10, "unique")
    with pytest.raises(ValueError, match=r"\(6, 7\).*\(7, 6\)"):
        coosparse.multiply(a, make((7, 6), 10, "unique"))
    with pytest.raises(ValueError, match=r"\(6, 7\).*\(2, 7\)"):
        coosparse.multiply(a, np.ones((2, 7)))
    with pytest.raises(TypeError, match="compact"):
        coosparse.multiply(a, a, compact=1)
    with pytest.raises(TypeError, match="COO"):
        coosparse.multiply(np.ones(3), np.ones(3))
    with pytest.raises(TypeError):
        coosparse.multiply(a, "x")


def test_multiply_empty_and_single(backend):
    e = COO(np.zeros((2, 0), np.int64), np.zeros(0), (4, 4))
    a = make((4, 4), 5, "none")
    for x, y in [(e, a), (a, e), (e, e)]:
        for compact in (True, False):
            r = backend.get(coosparse.multiply(backend.put(x), backend.put(y), compact=compact))
            assert r.shape == (4, 4)
            np.testing.assert_array_equal(dense_of(r), 0)
    one = COO([[1], [2]], np.array([3.0]), (4, 4))
    r = backend.get(coosparse.multiply(backend.put(one), backend.put(a)))
    assert r.is_coalesced
    close(dense_of(r), dense_of(one) * dense_of(a), np.float64)


def test_multiply_zero_sparse_dims(backend):
    a = COO(np.zeros((0, 3), np.int64), np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), (2,))
    b = COO(np.zeros((0, 1), np.int64), np.array([[2.0, 1.0]]), (2,))
    r = backend.get(coosparse.multiply(backend.put(a), backend.put(b)))
    close(r.values.sum(axis=0), a.values.sum(axis=0) * b.values.sum(axis=0), np.float64)


def test_multiply_65536_squared_uncoalesced(backend):
    # torch 2.13 dies with SIGFPE here (a 32-bit product of the shape)
    shape = (65536, 65536)
    a = make(shape, 3000, "none", seed=1, pool=np.arange(0, 2**32, 2**32 // 1500))
    b = make(shape, 2000, "none", seed=2, pool=np.arange(0, 2**32, 2**32 // 1500))
    for compact in (True, False):
        r = backend.get(coosparse.multiply(backend.put(a), backend.put(b), compact=compact))
        got = r.coalesce()
        ca, cb = a.coalesce(), b.coalesce()
        ka = dict(zip(map(tuple, ca.indices.T), ca.values))
        want = {k: v * ka[k] for k, v in zip(map(tuple, cb.indices.T), cb.values) if k in ka}
        got = {k: v for k, v in zip(map(tuple, got.indices.T), got.values) if v != 0}
        want = {k: v for k, v in want.items() if v != 0}
        assert len(want) > 100 and set(got) == set(want)
        for k in want:
            assert got[k] == pytest.approx(want[k])


def test_wide_shape(backend):
    # 2**64 elements: no int64 linear index exists
    shape = (2**32, 2**32)
    idx_a = np.array([[5, 2**32 - 1, 7, 5], [9, 2**32 - 2, 0, 9]])
    idx_b = np.array([[2**32 - 1, 5, 3], [2**32 - 2, 9, 3]])
    a = COO(idx_a, np.array([1.0, 2.0, 3.0, 4.0]), shape)
    b = COO(idx_b, np.array([10.0, 20.0, 30.0]), shape, unique=True)
    r = backend.get(coosparse.multiply(backend.put(a), backend.put(b)))
    # b (unique) is the probe; a keeps its layout
    np.testing.assert_array_equal(r.indices, idx_a[:, [0, 1, 3]])
    np.testing.assert_array_equal(r.values, [20.0, 20.0, 80.0])
    m = backend.get(coosparse.sparse_mask(backend.put(a), backend.put(b)))
    np.testing.assert_array_equal(m.values, [2.0, 5.0, 0.0])
    p = backend.get(coosparse.mask_projection(backend.put(a), backend.put(b)))
    np.testing.assert_array_equal(p.values, [1.0, 2.0, 0.0, 4.0])
    s = backend.get(coosparse.add(backend.put(a.coalesce()), backend.put(b.coalesce())))
    assert s.is_coalesced and s.nnz == 4
    np.testing.assert_array_equal(s.values, [30.0, 25.0, 3.0, 12.0])


# ----------------------------------------------------------------------------- sparse_mask
@pytest.mark.parametrize("fx, fm", list(itertools.product(FLAGS, FLAGS)))
@pytest.mark.parametrize("hybrid", [False, True])
def test_sparse_mask_sparse(backend, fx, fm, hybrid):
    shape, kw = ((6, 7, 2), {"sparse_ndim": 2}) if hybrid else ((6, 7), {})
    x, mask = pair(fx, fm, shape, **kw)
    r = backend.get(coosparse.sparse_mask(backend.put(x), backend.put(mask)))
    np.testing.assert_array_equal(r.indices, mask.indices)
    assert (r.is_sorted, r.is_unique) == (mask.is_sorted, mask.is_unique)
    assert r.shape == x.shape and r.dtype == x.dtype
    close(r.values, dense_of(x)[tuple(mask.indices)], np.float64)


@pytest.mark.parametrize("fm", list(FLAGS))
@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.bool_, np.int8, np.complex64], ids=str)
def test_sparse_mask_dense(backend, fm, dtype):
    x = (np.random.default_rng(0).random((6, 7, 3)) * 10).astype(dtype)
    mask = make((6, 7), 30, fm, seed=4)
    r = backend.get(coosparse.sparse_mask(backend.put(x), backend.put(mask)))
    np.testing.assert_array_equal(r.indices, mask.indices)
    assert r.shape == (6, 7, 3) and r.dtype == dtype
    assert (r.is_sorted, r.is_unique) == (mask.is_sorted, mask.is_unique)
    np.testing.assert_array_equal(r.values, x[tuple(mask.indices)])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sparse_mask_dtypes(backend, dtype):
    x, mask = pair("none", "unique")
    x = x.astype(dtype)
    r = backend.get(coosparse.sparse_mask(backend.put(x), backend.put(mask)))
    assert r.dtype == dtype
    close(r.values, dense_of(x)[tuple(mask.indices)], dtype)


def test_sparse_mask_errors():
    x = make((6, 7), 10, "unique")
    with pytest.raises(TypeError, match="mask"):
        coosparse.sparse_mask(x, np.ones((6, 7)))
    with pytest.raises(ValueError, match=r"\(6, 8\).*\(6, 7\)"):
        coosparse.sparse_mask(make((6, 8), 10, "unique"), x)
    with pytest.raises(ValueError, match=r"\(7, 6\)"):
        coosparse.sparse_mask(np.ones((7, 6)), x)


# ----------------------------------------------------------------------------- mask_projection
def _count_at(x, mask):
    counts = {}
    for col in mask.indices.T:
        counts[tuple(col)] = counts.get(tuple(col), 0) + 1
    return np.array([counts.get(tuple(col), 0) for col in x.indices.T])


@pytest.mark.parametrize("fx, fm", list(itertools.product(FLAGS, FLAGS)))
@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("hybrid", [False, True])
def test_mask_projection(backend, fx, fm, accumulate, hybrid):
    shape, kw = ((6, 7, 2), {"sparse_ndim": 2}) if hybrid else ((6, 7), {})
    x, mask = pair(fx, fm, shape, **kw)
    r = backend.get(coosparse.mask_projection(backend.put(x), backend.put(mask), accumulate=accumulate))
    np.testing.assert_array_equal(r.indices, x.indices)
    assert (r.is_sorted, r.is_unique) == (x.is_sorted, x.is_unique)
    c = _count_at(x, mask)
    factor = c if accumulate else (c > 0)
    want = x.values * factor.reshape((-1,) + (1,) * x.dense_ndim)
    np.testing.assert_array_equal(r.values, want)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float16, np.complex128], ids=str)
def test_mask_projection_dtypes(backend, dtype):
    x, mask = pair("unique", "none")
    x = x.astype(dtype)
    for acc in (False, True):
        r = backend.get(coosparse.mask_projection(backend.put(x), backend.put(mask), accumulate=acc))
        assert r.dtype == dtype
        c = _count_at(x, mask)
        want = x.values * (c if acc else c > 0).astype(dtype)
        np.testing.assert_array_equal(r.values, want.astype(dtype))


def test_mask_projection_errors():
    x = make((6, 7), 10, "unique")
    with pytest.raises(ValueError, match=r"\(6, 7\).*\(7, 6\)"):
        coosparse.mask_projection(x, make((7, 6), 10, "unique"))
    with pytest.raises(TypeError, match="x must be a COO"):
        coosparse.mask_projection(np.ones((6, 7)), x)
    with pytest.raises(TypeError, match="accumulate"):
        coosparse.mask_projection(x, x, accumulate=None)


# ----------------------------------------------------------------------------- kernels
def _reference_match(src, probe):
    first = np.searchsorted(probe, src, side="left")
    last = np.searchsorted(probe, src, side="right")
    return first, last - first


@pytest.mark.parametrize("n, m", [(0, 10), (10, 0), (50, 40), (5000, 40_000), (40_000, 70_000)])
def test_match_kernels(backend, n, m):
    rng = np.random.default_rng(n + m)
    probe = np.sort(rng.integers(10, 2**40, size=m))
    if m:
        probe[m // 2: m // 2 + 5] = probe[m // 2]  # probe duplicates
    src = np.concatenate([rng.integers(0, 2**41, size=n - n // 2), rng.choice(probe, n // 2)
                          if m else rng.integers(0, 9, n // 2)])
    if n:
        src[0] = 0  # below the probe range
    src = rng.permutation(src).astype(np.int64)
    be = backend_for(backend.put(src))
    want_first, want_count = _reference_match(src, probe)
    first, count = be.match_search(backend.put(src), backend.put(probe))
    np.testing.assert_array_equal(backend.get(first), want_first)
    np.testing.assert_array_equal(backend.get(count), want_count)
    ssrc = np.sort(src)
    first, count = be.match_merge(backend.put(ssrc), backend.put(probe))
    wf, wc = _reference_match(ssrc, probe)
    np.testing.assert_array_equal(backend.get(first), wf)
    np.testing.assert_array_equal(backend.get(count), wc)
    keep = np.flatnonzero(wc)
    rows, first, count = (backend.get(x) for x in be.merge_matches(backend.put(ssrc), backend.put(probe)))
    np.testing.assert_array_equal(rows, keep)
    np.testing.assert_array_equal(first, wf[keep])
    np.testing.assert_array_equal(count, wc[keep])
    keep = np.flatnonzero(want_count)
    rows, first, count = (backend.get(x) for x in be.compact_matches(
        backend.put(want_first), backend.put(want_count)))
    np.testing.assert_array_equal(rows, keep)
    np.testing.assert_array_equal(first, want_first[keep])
    np.testing.assert_array_equal(count, want_count[keep])


def test_partitioned_multiply_large(backend):
    # big enough to take the partitioned search (probe > 32768 keys)
    shape = (1000, 1000)
    pool = np.arange(0, 10**6, 7)
    a = make(shape, 60_000, "coalesced", seed=1, pool=pool)
    b = make(shape, 50_000, "none", seed=2, pool=pool)
    r = backend.get(coosparse.multiply(backend.put(a), backend.put(b), compact=False))
    np.testing.assert_array_equal(r.indices, b.indices)
    close(dense_of(r), dense_of(a) * dense_of(b), np.float64)


# ----------------------------------------------------------------------------- hypothesis
FLAG_NAMES = st.sampled_from(list(FLAGS))


@given(fa=FLAG_NAMES, fb=FLAG_NAMES, na=st.integers(0, 30), nb=st.integers(0, 30),
       seed=st.integers(0, 2**16), compact=st.booleans(),
       shape=st.sampled_from([(5,), (3, 4), (2, 3, 4), (4, 3, 2)]))
def test_hypothesis_intersection(fa, fb, na, nb, seed, compact, shape):
    sparse_ndim = 2 if shape == (4, 3, 2) else len(shape)
    total = int(np.prod(shape[:sparse_ndim]))
    pool = np.random.default_rng(seed).choice(total, size=max(1, total // 2), replace=False)
    a = make(shape, na, fa, sparse_ndim=sparse_ndim, seed=seed, pool=pool)
    b = make(shape, nb, fb, sparse_ndim=sparse_ndim, seed=seed + 1, pool=pool)
    da, db = dense_of(a), dense_of(b)
    r = coosparse.multiply(a, b, compact=compact)
    close(dense_of(r), da * db, np.float64)
    m = coosparse.sparse_mask(a, b)
    np.testing.assert_array_equal(m.indices, b.indices)
    close(m.values, da[tuple(b.indices)], np.float64)
    p = coosparse.mask_projection(a, b, accumulate=True)
    np.testing.assert_array_equal(p.values, a.values * _count_at(a, b).reshape((-1,) + (1,) * a.dense_ndim))
