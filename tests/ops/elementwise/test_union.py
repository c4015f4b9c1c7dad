"""add / subtract against dense NumPy: merge, concatenation, dense results, dtypes, errors."""
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import coosparse
from coosparse import COO
from coosparse._kernels.backend import backend_for
from reference import dense_of
from operands import DTYPES, FLAGS, close, make, pair

OPS = {"add": (coosparse.add, np.add), "subtract": (coosparse.subtract, np.subtract)}


@pytest.mark.parametrize("fa, fb", list(itertools.product(FLAGS, FLAGS)))
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("hybrid", [False, True])
def test_union_flags_layout(backend, fa, fb, op, hybrid):
    fn, ref = OPS[op]
    shape, kw = ((6, 7, 2), {"sparse_ndim": 2}) if hybrid else ((6, 7), {})
    a, b = pair(fa, fb, shape, **kw)
    r = backend.get(fn(backend.put(a), backend.put(b)))
    close(dense_of(r), ref(dense_of(a), dense_of(b)), np.float64)
    if a.is_coalesced and b.is_coalesced:
        assert r.is_coalesced
        keys = np.ravel_multi_index(tuple(r.indices), shape[:2])
        assert np.all(np.diff(keys) > 0)
        assert r.nnz == len(set(map(tuple, a.indices.T)) | set(map(tuple, b.indices.T)))
    else:
        assert not r.is_sorted and not r.is_unique
        np.testing.assert_array_equal(r.indices, np.concatenate([a.indices, b.indices], axis=1))
    c = backend.get(fn(backend.put(a), backend.put(b), coalesce=True))
    assert c.is_coalesced
    close(dense_of(c), ref(dense_of(a), dense_of(b)), np.float64)


def test_operators(backend):
    a, b = pair("coalesced", "none")
    A, B = backend.put(a), backend.put(b)
    close(dense_of(backend.get(A + B)), dense_of(a) + dense_of(b), np.float64)
    close(dense_of(backend.get(A - B)), dense_of(a) - dense_of(b), np.float64)
    close(dense_of(backend.get(A * B)), dense_of(a) * dense_of(b), np.float64)


@pytest.mark.parametrize("dtype", [d for d in DTYPES], ids=str)
@pytest.mark.parametrize("op", list(OPS))
def test_union_dtypes(backend, dtype, op):
    fn, ref = OPS[op]
    a, b = pair("coalesced", "coalesced")
    a, b = a.astype(dtype), b.astype(dtype)
    if op == "subtract" and dtype == np.bool_:
        with pytest.raises(TypeError, match="boolean"):
            fn(backend.put(a), backend.put(b))
        return
    r = backend.get(fn(backend.put(a), backend.put(b)))
    assert r.dtype == dtype
    close(dense_of(r), ref(dense_of(a), dense_of(b)), dtype)
    r = backend.get(fn(backend.put(a), backend.put(b.coalesce()._with(sorted=False))))
    close(dense_of(r), ref(dense_of(a), dense_of(b)), dtype)


@pytest.mark.parametrize("da, db", [(np.int8, np.float32), (np.uint8, np.int8), (np.bool_, np.int16),
                                    (np.float16, np.complex64), (np.uint8, np.int16)])
@pytest.mark.parametrize("merge", [True, False])
def test_union_promotion(backend, da, db, merge):
    a, b = pair("coalesced", "coalesced" if merge else "unique")
    a, b = a.astype(da), b.astype(db)
    for fn, ref in OPS.values():
        r = backend.get(fn(backend.put(a), backend.put(b)))
        assert r.dtype == np.result_type(da, db)
        close(dense_of(r), ref(dense_of(a).astype(r.dtype), dense_of(b).astype(r.dtype)), r.dtype)


def test_union_hybrid_broadcast(backend):
    a = make((5, 4, 3), 3, "coalesced", sparse_ndim=1, seed=5)
    b = make((5, 4, 1), 3, "coalesced", sparse_ndim=1, seed=6)
    for merge in (True, False):
        bb = b if merge else b._with(sorted=False)
        r = backend.get(coosparse.add(backend.put(a), backend.put(bb)))
        assert r.shape == (5, 4, 3)
        close(dense_of(r), dense_of(a) + dense_of(b), np.float64)


@pytest.mark.parametrize("flags", list(FLAGS))
@pytest.mark.parametrize("op", list(OPS))
def test_union_dense(backend, flags, op):
    fn, ref = OPS[op]
    a = make((6, 7, 2), 20, flags, sparse_ndim=2, seed=3)
    x = np.random.default_rng(0).random((6, 7, 2))
    for left, right, want in [(a, x, ref(dense_of(a), x)), (x, a, ref(x, dense_of(a)))]:
        r = backend.get(fn(backend.put(left), backend.put(right)))
        assert isinstance(r, np.ndarray) and r.shape == (6, 7, 2)
        close(r, want, np.float64)
    # dense broadcasting in the dense dimension, int COO with a float32 dense operand
    ai = make((6, 7, 2), 20, flags, sparse_ndim=2, seed=3, dtype=np.uint8)  # no wrap-around
    y = np.array([1.5, -2.0], dtype=np.float32)
    r = backend.get(fn(backend.put(y), backend.put(ai)))
    assert r.dtype == np.float32
    close(r, ref(np.broadcast_to(y, (6, 7, 2)), dense_of(ai).astype(np.float32)), np.float32)
    # the input is never modified
    x0 = x.copy()
    fn(backend.put(a), backend.put(x))
    np.testing.assert_array_equal(x, x0)


def test_dense_minus_unsigned_coo_widened(backend):
    a = COO([[1]], np.array([5], dtype=np.uint8), (3,))
    # (a dense operand of several values: the dense result of the union; SPEC 9)
    r = backend.get(coosparse.subtract(backend.put(np.array([0, 1, 2], np.int16)), backend.put(a)))
    np.testing.assert_array_equal(r, [0, -4, 2])
    assert r.dtype == np.int16


def test_union_errors():
    a = make((6, 7), 10, "coalesced")
    with pytest.raises(ValueError, match=r"\(6, 7\).*\(7, 6\)"):
        coosparse.add(a, make((7, 6), 10, "coalesced"))
    with pytest.raises(ValueError, match=r"\(6, 7\).*\(2, 7\)"):
        coosparse.add(a, np.ones((2, 7)))
    with pytest.raises(TypeError, match="coalesce"):
        coosparse.add(a, a, coalesce="yes")
    with pytest.raises(TypeError, match="COO"):
        coosparse.subtract(np.ones(3), np.ones(3))
    b = a.astype(bool)
    with pytest.raises(TypeError, match="boolean"):
        coosparse.subtract(b, b)
    with pytest.raises(TypeError, match="boolean"):
        coosparse.subtract(np.ones((6, 7), bool), b)


def test_union_broadcasts_and_takes_scalars(backend):
    # a dense operand may broadcast the COO to a larger shape; a scalar moves the fill (SPEC 8)
    a = make((6, 7), 10, "none")
    x = np.arange(2 * 6 * 7, dtype=np.float64).reshape(2, 6, 7)
    r = backend.get(coosparse.add(backend.put(a), backend.put(x)))
    close(r, dense_of(a) + x, np.float64)
    for r, ref in [(coosparse.add(backend.put(a), 1.0), dense_of(a) + 1.0),
                   (1 - backend.put(a), 1 - dense_of(a))]:
        r = backend.get(r)
        assert isinstance(r, COO) and r.is_coalesced and r.fill_value == 1.0
        close(r.to_dense(), ref, np.float64)


def test_union_empty(backend):
    e = COO(np.zeros((2, 0), np.int64), np.zeros(0), (4, 4), sorted=True, unique=True)
    a = make((4, 4), 5, "coalesced")
    for x, y in [(e, a), (a, e), (e, e)]:
        r = backend.get(coosparse.add(backend.put(x), backend.put(y)))
        assert r.is_coalesced
        np.testing.assert_array_equal(dense_of(r), dense_of(x) + dense_of(y))


def test_merge_union_kernel(backend):
    rng = np.random.default_rng(0)
    for n, m in [(0, 0), (0, 5), (5, 0), (1000, 3000), (30_000, 1000)]:
        ka = np.unique(rng.integers(0, 50_000, size=n))
        kb = np.unique(rng.integers(0, 50_000, size=m))
        be = backend_for(backend.put(ka))
        a_pos, b_pos = (backend.get(x) for x in be.merge_union(backend.put(ka), backend.put(kb)))
        union = np.union1d(ka, kb)
        got = np.where(a_pos >= 0, ka[np.maximum(a_pos, 0)] if n else 0,
                       kb[np.maximum(b_pos, 0)] if m else 0)
        np.testing.assert_array_equal(got, union)
        np.testing.assert_array_equal(a_pos >= 0, np.isin(union, ka))
        np.testing.assert_array_equal(b_pos >= 0, np.isin(union, kb))
        both = (a_pos >= 0) & (b_pos >= 0)
        np.testing.assert_array_equal(ka[a_pos[both]], kb[b_pos[both]])


@given(fa=st.sampled_from(list(FLAGS)), fb=st.sampled_from(list(FLAGS)),
       na=st.integers(0, 25), nb=st.integers(0, 25), seed=st.integers(0, 2**16),
       shape=st.sampled_from([(5,), (3, 4), (2, 3, 4)]), co=st.booleans())
def test_hypothesis_union(fa, fb, na, nb, seed, shape, co):
    total = int(np.prod(shape))
    pool = np.random.default_rng(seed).choice(total, size=max(1, total // 2), replace=False)
    a = make(shape, na, fa, seed=seed, pool=pool)
    b = make(shape, nb, fb, seed=seed + 1, pool=pool)
    for fn, ref in OPS.values():
        r = fn(a, b, coalesce=co)
        close(dense_of(r), ref(dense_of(a), dense_of(b)), np.float64)
        if co or (a.is_coalesced and b.is_coalesced):
            assert r.is_coalesced


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    for g, w in ([(got.real, want.real), (got.imag, want.imag)] if want.dtype.kind == "c" else [(got, want)]):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        ok = ~np.isnan(w)
        np.testing.assert_array_equal(g[ok], w[ok])
        np.testing.assert_array_equal(np.signbit(g[ok]), np.signbit(w[ok]))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.complex128], ids=str)
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("hybrid", [False, True])
def test_union_dense_float_is_numpys_answer_bit_for_bit(backend, dtype, op, hybrid):
    # where nothing is stored the result is fill (op) x: 0.0 + -0.0 and 0.0 - 0.0 are +0.0
    # (a copy of x, or -x, gave -0.0); duplicates are summed before the function: x + (v1 + v2),
    # so 1 + (1e308 - 1e308) is 1, not (1 + 1e308) - 1e308 = 0, nor inf (overflow)
    fn, ref = OPS[op]
    big = float(np.finfo(dtype).max)
    shape = (4, 3, 2) if hybrid else (4, 3)
    idx = np.array([[1, 1, 2, 2, 3, 0, 3], [0, 0, 1, 1, 2, 2, 2]])
    vals = np.array([big, -big, big, big, -0.0, 2.0, -0.0])
    if hybrid:
        vals = np.stack([vals, -vals], axis=1)
    a = COO(idx, vals.astype(dtype), shape)
    x = np.array([[0.0, -0.0, 1.0], [1.0, -0.0, 0.0], [-0.0, -big, np.inf], [3.0, 0.0, -0.0]])
    if hybrid:
        x = np.stack([x, -x], axis=2)
    x = x.astype(dtype)
    if dtype in (np.complex64, np.complex128):
        x = x + (x[::-1] * 1j).astype(dtype)
    c = a.coalesce()
    no_negative_zero = c._with(values=np.where(c.values == 0, 0, c.values).astype(dtype))
    for a in (a, c, no_negative_zero):  # duplicates; unique with and without stored -0.0
        d = a.to_dense()  # (bit-exact sums: tests/ops/dense/test_signed_zeros.py)
        for left, right, want in [(a, x, ref(d, x)), (x, a, ref(x, d))]:
            with np.errstate(all="ignore"):
                r = backend.get(fn(backend.put(left), backend.put(right)))
            _same_bits(r, want)


def test_union_dense_float_random_hostile_values(backend):
    # signed zeros, infinities, NaN and overflowing pairs, duplicates or not, hybrid,
    # broadcast and F-ordered dense operands: bit for bit NumPy's f(a.to_dense(), x)
    rng = np.random.default_rng(20261203)
    special = np.array([0.0, -0.0, 1.0, -1.0, 1e308, -1e308, np.inf, np.nan])
    for _ in range(150):
        sn = int(rng.integers(0, 3))
        nnz = int(rng.integers(0, 7)) if sn else int(rng.integers(0, 2))
        idx = np.stack([rng.integers(0, 4, size=nnz), rng.integers(0, 3, size=nnz)])[:sn]
        a = COO(idx.reshape(sn, nnz), special[rng.integers(0, 8, size=(nnz,) + (4, 3)[sn:])], (4, 3))
        if rng.random() < 0.5:
            a = a.coalesce()
        x = special[rng.integers(0, 8, size=[(3,), (4, 1), (4, 3), (2, 4, 3)][rng.integers(0, 4)])]
        if x.ndim > 1 and rng.random() < 0.3:
            x = np.asfortranarray(x)
        d = a.to_dense()
        for op in OPS:
            fn, ref = OPS[op]
            with np.errstate(all="ignore"):
                cases = [(a, x, ref(d, x)), (x, a, ref(x, d))]
            for left, right, want in cases:
                with np.errstate(all="ignore"):
                    r = backend.get(fn(backend.put(left), backend.put(right)))
                if isinstance(r, COO):  # one background value: its sign is not guaranteed (docs/reliability.md)
                    np.testing.assert_array_equal(r.to_dense(), want)
                else:
                    _same_bits(r, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.complex128], ids=str)
@pytest.mark.parametrize("negate", [False, True])
@pytest.mark.parametrize("dense_shape", [(), (3,)])
@pytest.mark.parametrize("sizes", [(30_000, 25_000), (40, 9), (0, 50), (50, 0)])
@pytest.mark.parametrize("rows", [False, True])
def test_nd_coalesced_union_bits(backend, dtype, negate, dense_shape, sizes, rows):
    """The N-D merges of 3 sparse axes, over whole keys (chunks in parallel from 32,768 entries) and,
    with the row pointers cached (``rows``; CPU), row by row over the trailing axes' keys: each
    key's value is a's, b's (negated for subtract) or their sum/difference, bit for bit; a -0.0 on
    one side alone stays -0.0; a side that ends early (tails) and an empty side included."""
    shape = (40, 50, 60)
    total = int(np.prod(shape))
    rng = np.random.default_rng(sum(sizes) + len(dense_shape))
    pool = rng.choice(total, size=sizes[0] + sizes[1] // 2, replace=False)
    ka = np.sort(pool[: sizes[0]])
    kb = np.sort(np.concatenate([rng.choice(ka, size=min(sizes[1] // 2, ka.size), replace=False),
                                 pool[sizes[0]:]])[: sizes[1]])
    if ka.size > 5:
        ka = ka[: -5]  # b's last keys lie past a's: b ends alone

    def values(n):
        v = rng.standard_normal((n,) + dense_shape) * 4
        v = v + 1j * rng.standard_normal(v.shape) if np.dtype(dtype).kind == "c" else v
        v = v.astype(dtype)
        if np.dtype(dtype).kind in "fc" and n:
            v[rng.integers(0, n, max(n // 10, 1))] = -0.0
        return v

    va, vb = values(ka.size), values(kb.size)
    a = COO(np.stack(np.unravel_index(ka, shape)), va, shape + dense_shape, sorted=True, unique=True)
    b = COO(np.stack(np.unravel_index(kb, shape)), vb, shape + dense_shape, sorted=True, unique=True)
    a, b = backend.put(a), backend.put(b)
    if rows:
        a.row_pointer(), b.row_pointer()
    fn = coosparse.subtract if negate else coosparse.add
    r = backend.get(fn(a, b))
    keys = np.union1d(ka, kb)
    in_a, in_b = np.isin(keys, ka), np.isin(keys, kb)
    want = np.zeros((keys.size,) + dense_shape, dtype=dtype)
    pa, pb = np.searchsorted(ka, keys), np.searchsorted(kb, keys)
    want[in_a & ~in_b] = va[pa[in_a & ~in_b]]
    alone_b = vb[pb[in_b & ~in_a]]
    want[in_b & ~in_a] = -alone_b if negate else alone_b
    both = in_a & in_b
    want[both] = va[pa[both]] - vb[pb[both]] if negate else va[pa[both]] + vb[pb[both]]
    assert r.is_coalesced and r.dtype == dtype
    np.testing.assert_array_equal(np.ravel_multi_index(tuple(r.indices), shape), keys)
    _same_bits(r.values, want)


@pytest.mark.parametrize("bad", ["trailing index", "negative index", "order within a row", "repeat"])
def test_nd_row_union_refuses_lying_operands(bad):
    """The row-by-row N-D union (pointers cached) checks what its flags and check=False skipped:
    an index outside the shape raises IndexError, keys out of order or repeated within a row (a
    sorted or unique flag that lies) ValueError, before anything is written."""
    shape = (200, 30, 40)
    rng = np.random.default_rng(5)
    keys = np.sort(rng.choice(int(np.prod(shape)), size=70_000, replace=False))
    idx = np.stack(np.unravel_index(keys, shape)).astype(np.int64)
    good = COO(idx, np.ones(keys.size), shape, sorted=True, unique=True)
    row = int(idx[0, 500])
    first = int(np.searchsorted(idx[0], row))
    if bad == "trailing index":
        idx[2, first] = 40
    elif bad == "negative index":
        idx[1, first + 1] = -1
    elif bad == "order within a row":
        idx[1, first], idx[1, first + 1] = idx[1, first + 1], idx[1, first]
        idx[2, first], idx[2, first + 1] = idx[2, first + 1], idx[2, first]
    else:
        idx[1:, first + 1] = idx[1:, first]
    lying = COO(idx, np.ones(keys.size), shape, sorted=True, unique=True, check=False)
    lying.row_pointer(), good.row_pointer()
    with pytest.raises(IndexError if "index" in bad else ValueError):
        coosparse.add(lying, good)
    with pytest.raises(IndexError if "index" in bad else ValueError):
        coosparse.subtract(good, lying)
