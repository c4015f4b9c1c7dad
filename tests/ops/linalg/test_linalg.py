"""Linear algebra (SPEC 10): every product against a dense NumPy reference, on every kernel layer.

Covers matmul (COO x dense, dense x COO, COO x COO; batched, broadcast, 1-D),
tensordot, dot, inner, vecdot, outer, vdot, einsum and sampled_matmul over
dtypes (integers, bool, float16, complex), flag states, duplicates, hybrid
operands, empty and wide shapes; determinism (same bits twice, Numba vs the
emulated CUDA kernels); fill values, errors and NumPy's dispatch.
"""
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coosparse
from coosparse import COO
from coosparse._kernels.backend import use_cpu_backend
from operands import check_flags
from reference import dense_of

DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.uint64, np.float16, np.float32, np.float64,
          np.complex64, np.complex128]
FLAGS = {"coalesced": (True, True), "sorted": (True, False), "unique": (False, True), "none": (False, False)}


def rand_coo(rng, shape, flags="none", dtype=np.float64, sparse_ndim=None, density=0.5, dups=True):
    """A COO of ``shape`` with exactly the given flags; duplicates present when not unique."""
    sorted_, unique = FLAGS[flags]
    sn = len(shape) if sparse_ndim is None else sparse_ndim
    sshape, dshape = tuple(shape[:sn]), tuple(shape[sn:])
    total = int(np.prod(sshape, dtype=object))
    n = max(int(total * density), 1) if total else 0
    keys = rng.choice(total, size=n, replace=False) if n else np.zeros(0, np.int64)
    if not unique and dups and n:
        keys = np.concatenate([keys, rng.choice(keys, size=max(1, n // 3))])
    keys = np.sort(keys) if sorted_ else rng.permutation(keys)
    if not sorted_ and keys.shape[0] > 1 and np.all(keys[1:] >= keys[:-1]):
        keys = keys[::-1].copy()
    idx = np.stack(np.unravel_index(keys, sshape)).astype(np.int64) if sn else np.zeros((0, keys.shape[0]), np.int64)
    vals = values(rng, (keys.shape[0],) + dshape, dtype)
    return COO(idx if sn == 0 else idx.reshape(sn, -1), vals, tuple(shape), sorted=sorted_, unique=unique)


def values(rng, shape, dtype):
    dtype = np.dtype(dtype)
    v = rng.integers(-4, 5, size=shape)
    if dtype == np.bool_:
        return v > 0
    if dtype.kind == "u":
        return np.abs(v).astype(dtype)
    if dtype.kind == "c":
        return (v + 1j * rng.integers(-3, 4, size=shape)).astype(dtype)
    return v.astype(dtype)


def dense(rng, shape, dtype):
    return values(rng, tuple(shape), dtype)


def reference(fn, *arrays):
    """``fn`` on dense versions, in a wide dtype for floats (exact for small integers), cast back."""
    ds = [dense_of(a) if isinstance(a, COO) else np.asarray(a) for a in arrays]
    rt = np.result_type(*[d.dtype for d in ds])
    if rt.kind in "fc":
        wide = np.complex128 if rt.kind == "c" else np.float64
        return np.asarray(fn(*[d.astype(wide) for d in ds])).astype(rt)
    return np.asarray(fn(*ds))


def check(got, want, sparse_out=None):
    if sparse_out in (True, "coo"):
        assert isinstance(got, COO), type(got)
        assert got.is_coalesced or sparse_out == "coo"
        got = dense_of(got)
    elif sparse_out is False:
        assert not isinstance(got, COO), type(got)
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "fc":
        tol = 2e-2 if want.dtype in (np.float16, np.complex64, np.float32) else 1e-9
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


def put(backend, *xs):
    return [backend.put(x) for x in xs]


# ----------------------------------------------------------------------------- matmul
@st.composite
def matmul_case(draw):
    nb = draw(st.integers(0, 2))
    batch = [draw(st.integers(1, 3)) for _ in range(nb)]
    ba = [b if draw(st.booleans()) else 1 for b in batch][draw(st.integers(0, nb)):]
    bb = [b if draw(st.booleans()) else 1 for b in batch][draw(st.integers(0, nb)):]
    m, k, n = (draw(st.integers(0, 5)) for _ in range(3))
    a_shape = tuple(ba) + (m, k) if draw(st.integers(0, 4)) else (k,)
    b_shape = tuple(bb) + (k, n) if draw(st.integers(0, 4)) else (k,)
    kinds = draw(st.sampled_from(["sd", "ds", "ss"]))
    flags = (draw(st.sampled_from(list(FLAGS))), draw(st.sampled_from(list(FLAGS))))
    dt = (draw(st.sampled_from(DTYPES)), draw(st.sampled_from(DTYPES)))
    hybrid = draw(st.integers(0, 1))
    return a_shape, b_shape, kinds, flags, dt, hybrid, draw(st.integers(0, 2**31))


@settings(max_examples=60)
@given(case=matmul_case())
def test_matmul_matches_numpy(backend, case):
    a_shape, b_shape, kinds, flags, dt, hybrid, seed = case
    rng = np.random.default_rng(seed)

    def make(shape, kind, fl, d):
        if kind == "d":
            return dense(rng, shape, d)
        sn = len(shape) - min(hybrid, len(shape) - 1)
        return rand_coo(rng, shape, fl, d, sparse_ndim=sn)

    a = make(a_shape, kinds[0], flags[0], dt[0])
    b = make(b_shape, kinds[1], flags[1], dt[1])
    want = reference(np.matmul, a, b)
    a, b = put(backend, a, b)
    got = coosparse.matmul(a, b)
    check(backend.get(got), want, sparse_out=kinds == "ss")
    check(backend.get(a @ b), want, sparse_out=kinds == "ss")


@pytest.mark.parametrize("flags", list(FLAGS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64, np.bool_, np.float16])
def test_spmv_spmm_dense_spmm(backend, flags, dtype):
    rng = np.random.default_rng(3)
    a = rand_coo(rng, (30, 20), flags, dtype, density=0.3)
    x, xm, y = dense(rng, (20,), dtype), dense(rng, (20, 7), dtype), dense(rng, (9, 30), dtype)
    wants = [reference(np.matmul, a, x), reference(np.matmul, a, xm), reference(np.matmul, y, a)]
    a, x, xm, y = put(backend, a, x, xm, y)
    for got, want in zip([a @ x, a @ xm, y @ a], wants):
        check(backend.get(got), want, sparse_out=False)


@pytest.mark.parametrize("fa", list(FLAGS))
@pytest.mark.parametrize("fb", list(FLAGS))
def test_spgemm_flags_and_layout(backend, fa, fb):
    rng = np.random.default_rng(4)
    a = rand_coo(rng, (12, 10), fa, np.float64, density=0.3)
    b = rand_coo(rng, (10, 8), fb, np.int32, density=0.3)
    want = reference(np.matmul, a, b)
    a, b = put(backend, a, b)
    c = backend.get(a @ b)
    check(c, want, sparse_out=True)
    # every stored entry is reached by a product; nothing else is stored
    reach = (dense_of(COO(a.to("cpu").indices, np.ones(a.nnz), a.shape)) != 0).astype(int) @ \
        (dense_of(COO(b.to("cpu").indices, np.ones(b.nnz), b.shape)) != 0).astype(int)
    assert c.nnz == int((reach != 0).sum())


def test_spgemm_keeps_cancelled_entries():
    a = COO([[0, 0], [0, 1]], np.array([1.0, 1.0]), (1, 2))
    b = COO([[0, 1], [0, 0]], np.array([1.0, -1.0]), (2, 1))
    c = a @ b
    assert c.nnz == 1 and c.values[0] == 0.0 and c.is_coalesced


def test_matmul_batched_broadcast_and_vectors(backend):
    rng = np.random.default_rng(5)
    for sa, sb in [((2, 1, 3, 4), (5, 4, 2)), ((4,), (2, 3, 4, 5)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (4, 2))]:
        for kinds in ("sd", "ds", "ss"):
            a = rand_coo(rng, sa, "none") if kinds[0] == "s" else dense(rng, sa, np.float64)
            b = rand_coo(rng, sb, "coalesced") if kinds[1] == "s" else dense(rng, sb, np.float64)
            want = reference(np.matmul, a, b)
            a, b = put(backend, a, b)
            check(backend.get(coosparse.matmul(a, b)), want, sparse_out=kinds == "ss")


def test_matmul_hybrid_operand(backend):
    rng = np.random.default_rng(6)
    a = rand_coo(rng, (3, 4, 5), "coalesced", sparse_ndim=2)   # dense trailing dim of 5
    b = dense(rng, (5, 2), np.float64)
    c = rand_coo(rng, (5, 2), "none")
    wants = [reference(np.matmul, a, b), reference(np.matmul, a, c), reference(np.matmul, dense(rng, (2, 4), np.float64), a)]
    d = dense(np.random.default_rng(6), (2, 4), np.float64)
    a, b, c = put(backend, a, b, c)
    check(backend.get(a @ b), wants[0], sparse_out=False)
    check(backend.get(a @ c), wants[1], sparse_out=True)
    want = reference(np.matmul, d, backend.get(a))
    check(backend.get(backend.put(d) @ a), want, sparse_out=False)


def test_empty_and_single_entry(backend):
    rng = np.random.default_rng(7)
    for shape_a, shape_b in [((0, 3), (3, 4)), ((3, 0), (0, 4)), ((3, 4), (4, 0)), ((2, 3), (3, 2))]:
        for nnz in (0, 1):
            if 0 in shape_a:
                nnz = 0
            a = COO(np.zeros((2, nnz), np.int64), np.full(nnz, 2.0), shape_a)
            b = dense(rng, shape_b, np.float64)
            s = rand_coo(rng, shape_b, "coalesced")
            want_d, want_s = reference(np.matmul, a, b), reference(np.matmul, a, s)
            ab, bb, sb = put(backend, a, b, s)
            check(backend.get(ab @ bb), want_d, sparse_out=False)
            check(backend.get(ab @ sb), want_s, sparse_out=True)
            v = dense(rng, (shape_a[0],), np.float64)
            check(backend.get(backend.put(v) @ ab), reference(np.matmul, v, a), sparse_out=False)


# ----------------------------------------------------------------------------- tensordot / dot / inner / vdot / outer
@pytest.mark.parametrize("axes,sb", [(0, (2, 2)), (1, (3, 2)), (2, (4, 3, 2)), (([1], [1]), (2, 4)),
                                     (([0, 1], [2, 1]), (2, 4, 3)), (([2, 0], [0, 2]), (3, 2, 3)),
                                     (([-1], [0]), (3, 5))])
@pytest.mark.parametrize("kinds", ["sd", "ds", "ss"])
def test_tensordot(backend, axes, sb, kinds):
    rng = np.random.default_rng(8)
    sa = (3, 4, 3)
    a = rand_coo(rng, sa, "unique") if kinds[0] == "s" else dense(rng, sa, np.float64)
    b = rand_coo(rng, sb, "sorted", np.complex64) if kinds[1] == "s" else dense(rng, sb, np.complex64)
    want = reference(lambda x, y: np.tensordot(x, y, axes), a, b)
    a, b = put(backend, a, b)
    check(backend.get(coosparse.tensordot(a, b, axes)), want, sparse_out=kinds == "ss")


def test_dot_inner_vdot_outer(backend):
    rng = np.random.default_rng(9)
    a3, b2 = rand_coo(rng, (2, 3, 4), "none"), rand_coo(rng, (4, 5), "coalesced", np.int64)
    v, w = rand_coo(rng, (6,), "coalesced", np.complex128), dense(rng, (6,), np.complex128)
    d2 = dense(rng, (3, 4), np.float32)
    cases = [
        (coosparse.dot, np.dot, a3, b2, True), (coosparse.dot, np.dot, a3, dense_of(b2), False),
        (coosparse.dot, np.dot, v, w, False), (coosparse.dot, np.dot, d2, b2, False),
        (coosparse.inner, np.inner, a3, d2, False), (coosparse.inner, np.inner, a3, b2.to_dense().T.copy(), False),
        (coosparse.outer, np.outer, a3, b2, "coo"), (coosparse.outer, np.outer, v, w, False),
    ]
    for ours, theirs, x, y, sp in cases:
        want = reference(theirs, x, y)
        x, y = put(backend, x, y)
        check(backend.get(ours(x, y)), want, sparse_out=sp)
    want = reference(np.vdot, v, w)
    got = coosparse.vdot(*put(backend, v, w))
    check(np.asarray(backend.get(got)), want)  # (a 0-d device array on a GPU, as CuPy's vdot)
    assert coosparse.vdot(v, v) == np.vdot(dense_of(v), dense_of(v))
    # dot with a 0-d operand multiplies
    check(dense_of(coosparse.dot(v, 2.0)), dense_of(v) * 2.0)


def test_outer_flags():
    a = COO([[0, 2]], np.array([1.0, 2.0]), (3,), sorted=True, unique=True)
    b = COO([[1, 0]], np.array([3.0, 4.0]), (2,), unique=True)
    o = coosparse.outer(a, a)
    assert o.is_sorted and o.is_unique
    o = coosparse.outer(a, b)
    assert not o.is_sorted and o.is_unique
    np.testing.assert_array_equal(o.to_dense(), np.outer(a.to_dense(), b.to_dense()))


def test_outer_duplicates(backend):
    # bool duplicates mean "any" and narrower duplicates sum in their own dtype before the product
    # widens them; a sorted first operand with a repeated entry repeats the second's pattern, unsorted
    a = COO([[1, 1, 0]], np.array([True, True, True]), (2,), sorted=False, unique=False)
    b = COO([[0, 2]], np.array([2, 3], dtype=np.int16), (3,), sorted=True, unique=True)
    i8 = COO([[0, 0]], np.array([100, 100], dtype=np.int8), (2,), sorted=True, unique=False)
    for x, y in [(a, b), (b, a), (i8, b), (b, i8), (i8, i8)]:
        r = backend.get(coosparse.outer(backend.put(x), backend.put(y)))
        ref = np.outer(x.to_dense(), y.to_dense())
        assert r.dtype == ref.dtype
        np.testing.assert_array_equal(r.to_dense(), ref)
        check_flags(r)
    s = COO([[0, 0, 1]], np.array([1.0, 2.0, 3.0]), (2,), sorted=True, unique=False)
    t = COO([[0, 1]], np.array([1.0, 1.0]), (2,), sorted=True, unique=True)
    r = coosparse.outer(s, t)
    check_flags(r)
    np.testing.assert_array_equal(r.to_dense(), np.outer(s.to_dense(), t.to_dense()))


VECDOT_VALID = [((2, 3, 4), (3, 4), -2), ((3, 4), (2, 3, 4), -1), ((3, 1, 4), (3, 2, 4), 2), ((1, 3, 4), (3, 4), -2),
                ((3, 4, 1), (3, 4, 2), 0), ((3, 1), (3, 4), -2), ((1, 4), (3, 4), 1)]
VECDOT_INVALID = [((2, 3, 4), (3, 4), 0), ((3, 4), (2, 3, 4), 0), ((3, 1, 4), (3, 2, 4), -2), ((1, 3, 4), (3, 4), -3),
                  ((3, 4, 1), (3, 4, 2), -1), ((3, 1), (3, 4), 1), ((1, 4), (3, 4), -2)]


@pytest.mark.parametrize("s1,s2,axis", VECDOT_VALID)
@pytest.mark.parametrize("kinds", ["ss", "sd"])
def test_vecdot_pydata_cases(backend, s1, s2, axis, kinds):
    rng = np.random.default_rng(10)
    x1 = rand_coo(rng, s1, "none", np.complex128)
    x2 = rand_coo(rng, s2, "coalesced", np.complex128) if kinds[1] == "s" else dense(rng, s2, np.complex128)

    def ref(a, b):
        n = max(a.ndim, b.ndim)
        return np.sum(np.conj(a) * b, axis=axis if axis < 0 else axis - n)

    want = reference(ref, x1, x2)
    x1, x2 = put(backend, x1, x2)
    check(backend.get(coosparse.vecdot(x1, x2, axis=axis)), want, sparse_out=kinds == "ss")


@pytest.mark.parametrize("s1,s2,axis", VECDOT_INVALID)
def test_vecdot_invalid_axis(s1, s2, axis):
    rng = np.random.default_rng(11)
    with pytest.raises(ValueError, match="Shapes must match along"):
        coosparse.vecdot(rand_coo(rng, s1), rand_coo(rng, s2), axis=axis)


# ----------------------------------------------------------------------------- einsum
EINSUM_CASES = ["ij,jk->ik", "ij,jk", "bij,bjk->bik", "ij->", "ii->i", "ij,ij->ij", "i,j->ij", "abc,cda->abd",
                "ab,ab,c->c", "ea,fb,abcd,gc,hd->efgh", "aab,bc->ac", "...ab,...b->...a", "abab->ba", "a,->a",
                ",ab,->ab", "bd,db,eac->ace", "ij,kj->ik"]


@pytest.mark.parametrize("spec", EINSUM_CASES)
def test_einsum(backend, spec):
    rng = np.random.default_rng(12)
    terms = spec.split("->")[0].split(",")
    arrays = [rand_coo(rng, (3,) * len(t), "none" if i % 2 else "coalesced", density=0.6) for i, t in enumerate(terms)]
    want = reference(lambda *xs: np.einsum(spec, *xs), *arrays)
    ops = put(backend, *arrays)
    check(backend.get(coosparse.einsum(spec, *ops)), want, sparse_out=True)
    # a dense operand makes the result dense
    mixed = [backend.put(dense_of(arrays[0]))] + ops[1:]
    got = backend.get(coosparse.einsum(spec, *mixed))
    check(dense_of(got) if isinstance(got, COO) else got, want)


def _einsum_dtype_operands():
    bool_dups = COO([[2, 2, 1, 0], [0, 0, 1, 2], [2, 2, 1, 0]], np.array([True, True, True, False]), (3, 3, 3))
    int8_dups = COO([[1, 1]], np.array([100, 100], dtype=np.int8), (2,))
    return [
        # a diagonal of a bool operand with duplicates, summed over in uint64: NumPy casts first, so
        # the diagonal counts (2), where a bool sum would saturate at True
        ("bab,a->", [bool_dups, np.arange(3, dtype=np.uint64)]),
        ("bab,a->a", [bool_dups, coosparse.asarray(np.ones(3, np.uint16))]),
        # int8 duplicates sum in int8 (their dense meaning), then the lone axis sums in int16
        ("i,j->j", [int8_dups, np.ones(1, np.int16)]),
        ("i,j->j", [COO([[0, 1]], np.array([100, 100], dtype=np.int8), (2,)), np.ones(1, np.int16)]),
        # a dense operand's lone axis sums in the result dtype (NumPy's sum widens int16 to int64)
        ("d,a->", [COO([[0, 1]], np.array([1, 0], dtype=np.int16), (3,)), np.array([-4, 3], np.int8)]),
        ("abb,,c->c", [np.ones((4, 3, 3), np.int8), COO(np.zeros((0, 1), np.int64), np.array([2.0], np.float32), ()),
                       COO([[0]], np.array([True]), (3,))]),
        # 0-d dense operands contracted together
        ("b,,b", [COO([[0, 2]], np.array([1, 2], np.uint64), (3,)), np.array(2, np.uint8), np.arange(3.0)]),
        (",d,d->", [COO(np.zeros((0, 1), np.int64), np.array([3], np.uint64), ()), np.arange(3, dtype=np.int16),
                    np.arange(3, dtype=np.int32)]),
        ("aaa,aa,", [np.ones((2, 2, 2), bool), COO([[1, 0], [1, 0]], np.array([-3, 2], np.int16), (2, 2)),
                     np.array(1, np.int8)]),
        # one operand: its duplicates come out coalesced
        ("ij->ij", [COO([[1, 0, 1], [1, 0, 1]], np.array([1.0, 2.0, 3.0]), (2, 2))]),
    ]


@pytest.mark.parametrize("case", range(len(_einsum_dtype_operands())))
def test_einsum_sums_in_the_result_dtype(backend, case):
    spec, ops = _einsum_dtype_operands()[case]
    want = np.asarray(np.einsum(spec, *[x.to_dense() if isinstance(x, COO) else x for x in ops]))
    got = backend.get(coosparse.einsum(spec, *[backend.put(x) for x in ops]))
    assert isinstance(got, COO) == all(isinstance(x, COO) for x in ops)
    if isinstance(got, COO):
        assert got.is_coalesced
        got = got.to_dense()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("axes", [([5], [0]), ([-3], [0]), ([0], [2]), 3])
def test_tensordot_axes_out_of_range_raise_numpys_index_error(axes):
    # NumPy's tensordot raises IndexError here; AxisError is that and the ValueError raised before
    a = coosparse.asarray(np.ones((2, 3)))
    for err in (IndexError, ValueError):
        with pytest.raises(err, match="out of"):
            coosparse.tensordot(a, np.ones((3, 2)), axes=axes)
    with pytest.raises(IndexError):
        np.tensordot(np.ones((2, 3)), np.ones((3, 2)), axes=axes)


def test_vecdot_of_dense_vectors_is_0d():
    r = coosparse.vecdot(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    assert r.shape == () and r == 11.0


def test_einsum_interleaved_and_dtype():
    rng = np.random.default_rng(13)
    x = rand_coo(rng, (4, 4), "coalesced")
    for sub in ([[0, 0]], [[0, Ellipsis]], [[Ellipsis, 1], [Ellipsis]], [[0, 1], [0]]):
        check(dense_of(coosparse.einsum(x, *sub)), np.einsum(dense_of(x), *sub))
    r = coosparse.einsum("ij,i->j", x, coosparse.from_dense(np.ones(4)), dtype=np.complex128)
    assert r.dtype == np.complex128


def test_einsum_casting_as_numpy():
    # dtype= and casting= were ignored: int64 operands summed as int8 wrapped silently where NumPy's
    # einsum (casting='safe' by default) raises TypeError
    a = COO([[0, 1], [1, 0]], np.array([100, 100]), (2, 2))
    x, b = a.to_dense(), np.ones(2)
    for casting in ("no", "equiv", "safe", "same_kind", "unsafe"):
        for kw in ({}, {"dtype": np.int8}, {"dtype": np.float32}, {"dtype": np.int64}):
            for ops in ((a, b), (a, a), (x, b)):
                try:
                    y = dense_of(ops[1]) if isinstance(ops[1], COO) else ops[1]
                    want = np.einsum("ij,jk", x, y.reshape(2, -1), casting=casting, **kw)
                except TypeError:
                    with pytest.raises(TypeError, match="cast"):
                        coosparse.einsum("ij,jk", ops[0], ops[1].reshape(2, -1), casting=casting, **kw)
                    continue
                got = coosparse.einsum("ij,jk", ops[0], ops[1].reshape(2, -1), casting=casting, **kw)
                got = dense_of(got) if isinstance(got, COO) else got
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="casting must be one of"):
        coosparse.einsum("ij->", a, casting="bogus")


@pytest.mark.parametrize("spec", ["a+b->c", "i->&", "i->ij", "ij->jij", "a..,a...", ".i...", "a,a->->"])
def test_einsum_invalid(spec):
    x = COO([[0]], np.ones(1), (2,))
    with pytest.raises(ValueError):
        coosparse.einsum(spec, x, x)


ELLIPSIS_CASES = [("...ij,...jk->ik", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk->ik", [(3, 4), (4, 5)]),
                  ("...ij,jk->ik", [(1, 3, 4), (4, 5)]), ("...ij->ij", [(1, 2, 2)]), ("ij...->ij", [(2, 2, 3)]),
                  ("...ij->...", [(2, 2, 3)]), ("...ij,...jk->...ik", [(2, 1, 3, 4), (3, 4, 2)]),
                  ("i...j,j...->i...", [(2, 3, 4), (4, 3)]), ("...ij,...jk", [(2, 3, 4), (2, 4, 5)]),
                  ("a...,a...->", [(2, 3), (2, 3)]), ("...->", [(2, 3)]), ("...,...->...", [(2, 1), (3,)])]


@pytest.mark.parametrize("spec, shapes", ELLIPSIS_CASES)
def test_einsum_ellipsis_follows_numpy(spec, shapes, backend):
    # an output without '...' may not drop the dimensions an input's '...' stands for (NumPy raises)
    rng = np.random.default_rng(15)
    arrays = [rand_coo(rng, s, "coalesced", density=0.6) for s in shapes]
    try:
        want = np.einsum(spec, *[dense_of(a) for a in arrays])
    except ValueError:
        with pytest.raises(ValueError, match="'...'"):
            coosparse.einsum(spec, *put(backend, *arrays))
        return
    check(backend.get(coosparse.einsum(spec, *put(backend, *arrays))), want, sparse_out=True)


def test_einsum_ellipsis_sublists_follow_numpy():
    x = rand_coo(np.random.default_rng(16), (2, 3, 3), "coalesced")
    with pytest.raises(ValueError):
        np.einsum(dense_of(x), [Ellipsis, 0, 1], [0, 1])
    with pytest.raises(ValueError, match="'...'"):
        coosparse.einsum(x, [Ellipsis, 0, 1], [0, 1])
    check(dense_of(coosparse.einsum(x, [Ellipsis, 0, 1], [Ellipsis, 1])),
          np.einsum(dense_of(x), [Ellipsis, 0, 1], [Ellipsis, 1]))


@pytest.mark.parametrize("first", [0, [0, 0]])
def test_einsum_type_error(first):
    x = COO([[0]], np.ones(1), (2,))
    with pytest.raises(TypeError):
        coosparse.einsum(first, x, x)


def test_einsum_shape_errors():
    x = rand_coo(np.random.default_rng(14), (2, 3, 4))
    with pytest.raises(ValueError):
        coosparse.einsum("aab", x)
    with pytest.raises(ValueError):
        coosparse.einsum("abc,acb", x, x)
    with pytest.raises(ValueError):
        coosparse.einsum()


# ----------------------------------------------------------------------------- sampled_matmul
@pytest.mark.parametrize("flags", list(FLAGS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex64, np.int32])
def test_sampled_matmul(backend, flags, dtype):
    rng = np.random.default_rng(15)
    mask = rand_coo(rng, (7, 6), flags, np.float32, density=0.4)
    for k in (0, 1, 5, 8, 19):
        x, y = dense(rng, (7, k), dtype), dense(rng, (k, 6), dtype)
        want = reference(np.matmul, x, y)[tuple(mask.indices)]
        m, xb, yb = put(backend, mask, x, y)
        r = backend.get(coosparse.sampled_matmul(m, xb, yb))
        np.testing.assert_array_equal(r.indices, mask.indices)
        assert (r.is_sorted, r.is_unique) == (mask.is_sorted, mask.is_unique)
        check(r.values, want)
        # transposed (strided) operands give the same bits
        r2 = backend.get(coosparse.sampled_matmul(m, backend.put(np.asfortranarray(x)), backend.put(np.asfortranarray(y))))
        assert r2.values.tobytes() == r.values.tobytes()


def test_sampled_matmul_batched_vectors_and_hybrid(backend):
    rng = np.random.default_rng(16)
    cases = [((2, 5, 4), (2, 5, 3), (3, 4)), ((2, 5, 4), (5, 3), (2, 3, 4)), ((4,), (3,), (3, 4)), ((5,), (5, 3), (3,))]
    for mshape, xs, ys in cases:
        mask = rand_coo(rng, mshape, "none")
        x, y = dense(rng, xs, np.float64), dense(rng, ys, np.float64)
        want = np.matmul(x, y)[tuple(mask.indices)]
        r = backend.get(coosparse.sampled_matmul(*put(backend, mask, x, y)))
        check(r.values, want)
    mask = rand_coo(rng, (5, 4), "coalesced", sparse_ndim=1)  # sample whole rows
    x, y = dense(rng, (5, 3), np.float64), dense(rng, (3, 4), np.float64)
    r = backend.get(coosparse.sampled_matmul(*put(backend, mask, x, y)))
    check(r.values, np.matmul(x, y)[mask.indices[0]])
    assert r.dense_shape == (4,)


def test_sampled_matmul_errors():
    mask = COO([[0], [0]], np.ones(1), (2, 3))
    with pytest.raises(ValueError, match="mask has shape"):
        coosparse.sampled_matmul(mask, np.ones((2, 2)), np.ones((2, 4)))
    with pytest.raises(TypeError):
        coosparse.sampled_matmul(np.ones((2, 3)), np.ones((2, 2)), np.ones((2, 3)))
    with pytest.raises(TypeError):
        coosparse.sampled_matmul(mask, mask, np.ones((3, 3)))


# ----------------------------------------------------------------------------- determinism
def _all_products(seed):
    rng = np.random.default_rng(seed)
    out = []
    for dtype in (np.float64, np.float32, np.complex64, np.int32, np.float16):
        for flags in ("coalesced", "none"):
            a = rand_coo(rng, (40, 30), flags, dtype, density=0.2)
            a3 = rand_coo(rng, (2, 40, 30), flags, dtype, density=0.2)
            b = rand_coo(rng, (30, 20), flags, dtype, density=0.2)
            x = (rng.standard_normal((30, 9)) * 3).astype(dtype) if np.dtype(dtype).kind in "fc" else dense(rng, (30, 9), dtype)
            y = (rng.standard_normal((6, 40)) * 3).astype(dtype) if np.dtype(dtype).kind in "fc" else dense(rng, (6, 40), dtype)
            mask = rand_coo(rng, (40, 9), flags, np.float64, density=0.3)
            xs = (rng.standard_normal((40, 21))).astype(dtype) if np.dtype(dtype).kind in "fc" else dense(rng, (40, 21), dtype)
            ys = (rng.standard_normal((21, 9))).astype(dtype) if np.dtype(dtype).kind in "fc" else dense(rng, (21, 9), dtype)
            c = a @ b
            out += [a @ x, a @ x[:, 0], y @ a, c.indices, c.values, a3 @ x, y @ a3, (a3 @ b).values,
                    coosparse.sampled_matmul(mask, xs, ys).values]
    return out


def test_same_bits_twice():
    r1, r2 = _all_products(1), _all_products(1)
    assert all(p.tobytes() == q.tobytes() for p, q in zip(r1, r2))


def test_numba_and_emulated_cuda_bit_identical():
    from coosparse._kernels.cuda import emulated

    if not emulated.available():
        pytest.skip("no host compiler for the emulated CUDA kernels")
    r1 = _all_products(2)
    with use_cpu_backend("cuda-emulated"):
        r2 = _all_products(2)
    for i, (p, q) in enumerate(zip(r1, r2)):
        assert p.dtype == q.dtype and p.shape == q.shape and p.tobytes() == q.tobytes(), i


def test_parallel_parts_do_not_change_bits():
    import numba

    rng = np.random.default_rng(17)
    a = rand_coo(rng, (3000, 2000), "coalesced", density=0.05)
    u = COO(a.indices[:, ::-1].copy(), a.values[::-1].copy(), a.shape)
    x = rng.standard_normal((2000, 3))
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        y = rng.standard_normal((5, 3000))
        one = [a @ x, u @ x, y @ a, y @ u]
        numba.set_num_threads(old)
        many = [a @ x, u @ x, y @ a, y @ u]
    finally:
        numba.set_num_threads(old)
    for p, q in zip(one, many):
        assert p.tobytes() == q.tobytes()



def _spgemm_operands(kind, rng):
    if kind == "very sparse":  # ~3 products per row over 60000 columns, and a long row of B
        n, nnz = 60_000, 200_000
        keys = np.unique(rng.integers(0, n * n, nnz))
        idx = np.stack(np.unravel_index(keys, (n, n))).astype(np.int64)
        idx[0, :3000] = 7  # a long row: the rows of A that reach it as B's row take the accumulator
        keys = np.unique(idx[0] * n + idx[1])
        a = COO(np.stack(np.unravel_index(keys, (n, n))).astype(np.int64), rng.standard_normal(keys.shape[0]),
                (n, n), sorted=True, unique=True)
        return a, a
    # merging: 75 products per row into at most 50 columns (the packed result is copied out)
    a = coosparse.random((20_000, 50), nnz=60_000, seed=int(rng.integers(1 << 30)), sorted=True)
    b = coosparse.random((50, 50), nnz=1_250, seed=int(rng.integers(1 << 30)), sorted=True)
    return a, b


@pytest.mark.parametrize("kind", ["very sparse", "merging"])
def test_spgemm_one_pass_two_passes_and_parts_same_bits(monkeypatch, kind):
    """Products large enough for several parts: one pass (rows packed in each part's room, the
    parts moved together) and two passes (count, then fill), on one thread and on several, give
    the same bits, and scipy's entries."""
    import numba
    import scipy.sparse as sp

    from coosparse._kernels.numba import spgemm as sg

    a, b = _spgemm_operands(kind, np.random.default_rng(18))
    old = numba.get_num_threads()
    results = []
    try:
        for threads, one_pass in ((old, True), (1, True), (old, False), (1, False)):
            numba.set_num_threads(threads)
            monkeypatch.setattr(sg, "_one_pass", (lambda p, e: True) if one_pass else (lambda p, e: False))
            results.append(a @ b)
    finally:
        numba.set_num_threads(old)
    first = results[0]
    assert first.is_sorted and first.is_unique
    for c in results[1:]:
        assert c.indices.tobytes() == first.indices.tobytes() and c.values.tobytes() == first.values.tobytes()
    csr = [sp.csr_array((x.values, (x.indices[0], x.indices[1])), shape=x.shape) for x in (a, b)]
    want = (csr[0] @ csr[1]).tocoo()
    order = np.lexsort((want.col, want.row))
    np.testing.assert_array_equal(first.indices, np.stack([want.row[order], want.col[order]]))
    np.testing.assert_allclose(first.values, want.data[order], rtol=1e-12, atol=1e-12)


def test_spgemm_count_pass_stamps_wrap(monkeypatch):
    """The two-pass count marks columns with a 16-bit row stamp, cleared every 65535 rows: a part
    of more rows (one thread) whose rows all meet the same few columns counts each row exactly
    (a stale stamp would undercount the row 65535 rows later), as scipy does."""
    import numba
    import scipy.sparse as sp

    from coosparse._kernels.numba import spgemm as sg

    rng = np.random.default_rng(23)
    n = 2 * sg.STAMP_ROWS + 100
    a = coosparse.random((n, 6), nnz=3 * n, seed=int(rng.integers(1 << 30)), sorted=True)
    b = coosparse.random((6, 9), nnz=30, seed=int(rng.integers(1 << 30)), sorted=True)
    monkeypatch.setattr(sg, "_one_pass", lambda p, e: False)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        c = a @ b
    finally:
        numba.set_num_threads(old)
    csr = [sp.csr_array((x.values, (x.indices[0], x.indices[1])), shape=x.shape) for x in (a, b)]
    want = (csr[0] @ csr[1]).tocoo()
    order = np.lexsort((want.col, want.row))
    np.testing.assert_array_equal(c.indices, np.stack([want.row[order], want.col[order]]))
    np.testing.assert_allclose(c.values, want.data[order], rtol=1e-12, atol=1e-12)


def _in_own_mapping(arr):
    """Whether ``arr``'s memory is an ``mmap`` of its own (the end of its base chain)."""
    import mmap

    owner = arr
    while isinstance(owner, np.ndarray) and owner.base is not None:
        owner = owner.base
    owner = owner.obj if isinstance(owner, memoryview) else owner
    return isinstance(owner, mmap.mmap)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64, np.bool_])
def test_product_output_in_its_own_pages_same_bits(monkeypatch, dtype):
    """With every SpGEMM two-pass output and SpMM output in a mapping of its own (the threshold
    lowered to one byte), the products are bit-identical to NumPy-allocated ones and to the dense
    reference, the result's memory outlives the call (read after a garbage collection), it pickles,
    and a single entry and an empty product work too."""
    import gc

    from coosparse._kernels.numba import linalg as la
    from coosparse._kernels.numba import spgemm as sg

    rng = np.random.default_rng(int(np.dtype(dtype).num))
    cases = [rand_coo(rng, (300, 80), "coalesced", dtype, density=0.3),
             rand_coo(rng, (80, 200), "coalesced", dtype, density=0.3)]
    one = COO([[2], [5]], np.ones(1, dtype), (4, 6))
    nothing = COO(np.zeros((2, 0), np.int64), np.zeros(0, dtype), (6, 3))
    pairs = [(cases[0], cases[1]), (one, COO([[5], [1]], np.ones(1, dtype), (6, 2))), (one, nothing)]
    for a, b in pairs:
        monkeypatch.setattr(sg, "_one_pass", lambda p, e: False)
        plain = a @ b
        with monkeypatch.context() as m:
            m.setattr(la, "OWN_PAGES_FROM", 1)
            own = a @ b
        want = reference(lambda x, y: x @ y, a, b)
        gc.collect()
        assert own.is_sorted and own.is_unique and own.dtype == plain.dtype
        # the mapping is the one the result reads (a bool product's values are cast from the accumulator's)
        assert _in_own_mapping(own.indices) == (own.nnz > 0)
        assert own.indices.tobytes() == plain.indices.tobytes() and own.values.tobytes() == plain.values.tobytes()
        check(own, want, sparse_out=True)
        check(pickle.loads(pickle.dumps(own)), want, sparse_out=True)
    a = cases[0]
    for x in (rng.random((80, 5)).astype(dtype), rng.random(80).astype(dtype), np.zeros((80, 0), dtype)):
        plain = a @ x
        with monkeypatch.context() as m:
            m.setattr(la, "OWN_PAGES_FROM", 1)
            own = a @ x
        gc.collect()
        assert own.dtype == plain.dtype and own.shape == plain.shape and own.tobytes() == plain.tobytes()
        # (a bool product is accumulated as int64 and cast into a new array afterwards)
        assert _in_own_mapping(own) == (own.size > 0 and dtype is not np.bool_)
        check(own, reference(lambda p, q: p @ q, a, x), sparse_out=False)


def test_fresh_output_mapping_and_its_fallbacks(monkeypatch):
    """``fresh`` is ``np.empty`` below the threshold, for no bytes, and where the platform has no
    private anonymous mappings (Windows); above it, an array over a mapping of its own."""
    from coosparse._kernels.numba import linalg as la

    monkeypatch.setattr(la, "OWN_PAGES_FROM", 64)
    for shape, dtype, mapped in (((3, 4), np.float32, False), ((2, 8), np.int64, True), ((0, 9), np.float64, False),
                                 (9, np.complex128, True)):
        out = la.fresh(shape, dtype)
        assert out.shape == (shape if isinstance(shape, tuple) else (shape,)) and out.dtype == dtype
        assert out.flags.c_contiguous and out.flags.writeable
        assert _in_own_mapping(out) == mapped, (shape, dtype)
        out[...] = 1
        assert (out == 1).all()
    monkeypatch.setattr(la, "_OWN_MAPPING", False)
    out = la.fresh((2, 8), np.int64)
    assert out.flags.owndata and out.shape == (2, 8)


# ----------------------------------------------------------------------------- fill values, errors, huge shapes
def test_nonzero_fill_is_refused():
    a = COO([[0], [1]], np.ones(1), (2, 2), fill_value=1.0)
    for fn in (lambda: a @ np.ones(2), lambda: np.ones(2) @ a, lambda: coosparse.tensordot(a, a),
               lambda: coosparse.einsum("ij,jk", a, a), lambda: coosparse.vecdot(a, a), lambda: coosparse.outer(a, a)):
        with pytest.raises(ValueError, match="fill_value"):
            fn()


def test_shape_errors():
    a = COO([[0], [1]], np.ones(1), (2, 3))
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        a @ np.ones((2, 2))
    with pytest.raises(ValueError, match="enough dimensions"):
        coosparse.matmul(COO(np.zeros((0, 1), np.int64), np.ones(1), ()), a)
    with pytest.raises(ValueError, match="broadcast"):
        coosparse.matmul(rand_coo(np.random.default_rng(0), (2, 2, 3)), np.ones((3, 3, 2)))
    with pytest.raises(ValueError, match="shape-mismatch"):
        coosparse.tensordot(a, np.ones((2, 3)), axes=([1], [0]))
    with pytest.raises(TypeError):
        coosparse.matmul(a, "x")


def test_wide_shapes():
    n = 2**40
    a = COO([[0, 5, n - 1], [3, n - 1, 3]], np.array([1.0, 2.0, 3.0]), (n, n), sorted=True, unique=True)
    c = a @ a
    assert c.shape == (n, n) and c.is_coalesced
    got = {tuple(c.indices[:, i]): c.values[i] for i in range(c.nnz)}
    # a[5, n-1] * a[n-1, 3]
    assert got == {(5, 3): 6.0}
    v = coosparse.vecdot(a, a, axis=0)  # wide contraction of length 2**40, batch 2**40
    assert {int(i): float(x) for i, x in zip(v.indices[0], v.values)} == {3: 10.0, n - 1: 4.0}
    t = coosparse.tensordot(a, a, axes=([0, 1], [0, 1]))  # contraction over a wide fused group
    assert float(t.to_dense()) == 14.0
    o = coosparse.tensordot(a, COO([[1]], np.array([2.0]), (3,)), axes=0)  # fused rows of 2**80
    assert o.shape == (n, n, 3) and o.nnz == 3 and o.is_coalesced
    x = np.arange(3.0)
    s = coosparse.sampled_matmul(COO([[0, n - 1], [n - 1, 2]], np.ones(2), (n, n)),
                                 np.broadcast_to(np.ones((1, 3)), (n, 3)), np.broadcast_to(x[:, None], (3, n)))
    np.testing.assert_array_equal(s.values, [3.0, 3.0])


def test_wide_batch_dimensions(backend):
    # batch dimensions of 2**80 elements (NumPy's broadcast_shapes refuses them: 'do not broadcast' was raised)
    n = 2**40
    a = COO([[n - 1, 1], [n - 1, 2], [0, 0], [1, 1]], np.array([2.0, 3.0]), (n, n, 2, 2))
    b = COO([[n - 1, 1], [n - 1, 2], [1, 1], [0, 1]], np.array([5.0, 7.0]), (n, n, 2, 2))
    for r in (coosparse.matmul(backend.put(a), backend.put(b)), coosparse.einsum("abij,abjk->abik", backend.put(a), backend.put(b))):
        r = backend.get(r)
        assert r.shape == (n, n, 2, 2) and r.is_coalesced
        assert {tuple(int(i) for i in r.indices[:, e]): float(r.values[e]) for e in range(r.nnz)} == {
            (1, 2, 0, 1): 21.0, (n - 1, n - 1, 0, 0): 10.0}
    v = backend.get(coosparse.vecdot(backend.put(a), backend.put(a)))
    assert v.shape == (n, n, 2)
    assert {tuple(int(i) for i in v.indices[:, e]): float(v.values[e]) for e in range(v.nnz)} == {
        (1, 2, 0): 9.0, (n - 1, n - 1, 0): 4.0}


def test_einsum_of_three_wide_operands():
    # NumPy cannot plan the contraction order of arrays of 2**63 elements ('iterator is too large'
    # was raised): they are contracted left to right
    n = 2**40
    a = COO([[0, n - 1], [5, n - 1]], np.array([2.0, 3.0]), (n, n))
    b = COO([[5, n - 1], [7, 1]], np.array([4.0, 5.0]), (n, n))
    c = COO([[7, 1], [0, 0]], np.array([1.0, 10.0]), (n, 1))
    r = coosparse.einsum("ij,jk,kl->il", a, b, c)
    assert r.shape == (n, 1) and r.is_coalesced
    assert r.indices.tolist() == [[0, n - 1], [0, 0]] and r.values.tolist() == [8.0, 150.0]


# ----------------------------------------------------------------------------- NumPy dispatch and the cache
def test_numpy_functions_dispatch():
    rng = np.random.default_rng(18)
    a, b = rand_coo(rng, (3, 4), "coalesced"), rand_coo(rng, (4, 2), "none")
    da, db = dense_of(a), dense_of(b)
    check(dense_of(np.dot(a, b)), np.dot(da, db))
    check(dense_of(np.tensordot(a, b, 1)), np.tensordot(da, db, 1))
    check(dense_of(np.einsum("ij,jk->ik", a, b)), np.einsum("ij,jk->ik", da, db))
    check(np.asarray(np.vdot(a, a)), np.asarray(np.vdot(da, da)))
    check(dense_of(np.outer(a, b)), np.outer(da, db))
    check(dense_of(np.inner(a, a)), np.inner(da, da))
    check(np.linalg.matmul(a, db), da @ db)
    check(dense_of(np.linalg.vecdot(a, a)), np.linalg.vecdot(da, da))
    check(np.asarray(da @ b), da @ db)  # ndarray @ COO defers to COO.__rmatmul__
    check(a.dot(db), da @ db)
    with pytest.raises(TypeError, match="out="):
        np.dot(a, db, out=np.empty((3, 2)))


def test_row_offsets_cached_with_the_array():
    """The offsets are a companion of the array: built once, counted in nbytes, not pickled."""
    rng = np.random.default_rng(19)
    a = rand_coo(rng, (50, 40), "coalesced", density=0.2)
    x = rng.standard_normal((40, 3))
    base = a.indices.nbytes + a.values.nbytes
    assert a.nbytes == base
    r1 = a @ x
    ptr = a.row_pointer()  # the same pointer the product built
    assert a.nbytes == base + ptr.nbytes
    np.testing.assert_array_equal(ptr, np.searchsorted(a.indices[0], np.arange(51)))
    r2 = a @ x  # served from the cached offsets
    assert r1.tobytes() == r2.tobytes()
    assert a.row_pointer().base is ptr.base  # the same cached array
    b = pickle.loads(pickle.dumps(a))
    assert b.nbytes == base  # companions do not travel
    assert (b @ x).tobytes() == r1.tobytes()
    a.drop_companions()
    assert a.nbytes == base
    assert (a @ x).tobytes() == r1.tobytes()


def test_unsorted_spmm_sorts_once_per_array_on_a_device():
    """On a GPU an unsorted COO's rows are grouped by a stable sort: once per array, then cached."""
    emulated = pytest.importorskip("coosparse._kernels.cuda.emulated")
    if not emulated.available():
        pytest.skip("emulated CUDA layer unavailable")
    import emulation as strict

    rng = np.random.default_rng(20)
    a = rand_coo(rng, (60, 40), "none", density=0.3)
    x = rng.standard_normal((40, 2))
    sorts = []
    real = emulated.sort_pairs  # (the layer module's row, which the operations call)

    def spy(*args, **kw):
        sorts.append(1)
        return real(*args, **kw)

    with strict.allow_transfers():
        da, dx = strict.to_device(a), strict.to_device(x)
    emulated.sort_pairs = spy
    try:
        r1 = da @ dx
        r2 = da @ dx
    finally:
        emulated.sort_pairs = real
    assert len(sorts) == 1
    with strict.allow_transfers():
        got1, got2 = strict.to_host(r1), strict.to_host(r2)
    assert got1.tobytes() == got2.tobytes() == (a @ x).tobytes()  # the CPU's bits (its scan, no sort)
    companions = da.__dict__.get("_companions") or {}  # the grouping is cached with the array
    grouped = [v for k, v in companions.items() if isinstance(k[1], tuple) and k[1][0] == "stable sort"]
    assert len(grouped) == 1
    assert da.nbytes == da.indices.nbytes + da.values.nbytes + sum(p.nbytes for p in grouped[0])


def test_sddmm_parts_same_bits():
    """One part on one thread, or several parts with prefetching across them: the same bits."""
    import numba

    rng = np.random.default_rng(20)
    mask = rand_coo(rng, (400, 300), "none", density=0.05)
    x, y = rng.standard_normal((400, 70)), rng.standard_normal((70, 300))
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = coosparse.sampled_matmul(mask, x, y).values
    finally:
        numba.set_num_threads(old)
    many = coosparse.sampled_matmul(mask, x, y).values
    assert one.tobytes() == many.tobytes()
    np.testing.assert_allclose(one, (x @ y)[tuple(mask.indices)])
