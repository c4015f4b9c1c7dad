"""The elementwise engine (SPEC 8, 9): every NumPy ufunc, the operators, broadcasting, fills.

Every result is compared with NumPy on the dense meaning (``a.to_dense()``,
itself tested against tests/reference.py), and every COO result's flags are
checked to be true.
"""
import operator
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coosparse
from coosparse import COO
from coosparse.ops.elementwise.fillrule import _probes
from strategies import values_of
from operands import FLAGS, dense, make, same

UFUNCS = sorted((getattr(np, n) for n in dir(np) if isinstance(getattr(np, n), np.ufunc)
                 and getattr(np, n).signature is None and n != "isnat"), key=lambda u: u.__name__)
UFUNCS = list({u.__name__: u for u in UFUNCS}.values())  # aliases (conj/conjugate, ...) once
UNARY = [u for u in UFUNCS if u.nin == 1]
BINARY = [u for u in UFUNCS if u.nin == 2]


def _dtype_for(u):
    """A dtype the ufunc has a loop for: float64, then int64, then bool."""
    for dt in (np.float64, np.int64, np.bool_):
        try:
            with np.errstate(all="ignore"):
                u(*([np.ones(2, dt)] * u.nin))
            return np.dtype(dt)
        except TypeError:
            continue
    return None


def _values(u, dt, n, dense_shape, seed):
    rng = np.random.default_rng(seed)
    v = values_of(rng, n, dense_shape, dt)
    if u in (np.power, np.float_power, np.ldexp, np.left_shift, np.right_shift) and dt.kind in "iu":
        v = np.abs(v) % 5  # no negative integer powers or shifts
    return v.astype(dt)


def _coo(u, dt, shape, nnz, flags, fill, seed, sparse_ndim=None):
    a = make(shape, nnz, flags, sparse_ndim=sparse_ndim, seed=seed)
    v = _values(u, dt, a.nnz, a.dense_shape, seed)
    if dt.kind in "iub" and fill is not None and not float(fill).is_integer():
        fill = 1
    return COO(a.indices, v, a.shape, sorted=a.is_sorted, unique=a.is_unique,
               fill_value=None if fill is None else np.asarray(fill).astype(dt)[()] if dt != bool
               else bool(fill))


def reference(f, *args, **kw):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*[dense(a) for a in args], **kw)


def run(f, *args, **kw):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*args, **kw)


FILLS = [0, 1.5, np.nan, -np.inf]


def gpu_lacks(backend, u):
    """CuPy has no such ufunc (``spacing``, ...): on a device backend the engine must refuse it clearly."""
    if backend.device == "cpu":
        return False
    if backend.name == "cuda-emulated":
        import emulation as strict

        return u.__name__ not in strict.surface()["namespace"]
    import cupy

    return not hasattr(cupy, u.__name__)


# ----------------------------------------------------------------------------- every ufunc
@pytest.mark.parametrize("u", UNARY, ids=lambda u: u.__name__)
@pytest.mark.parametrize("fill", FILLS)
def test_every_unary_ufunc(backend, u, fill):
    dt = _dtype_for(u)
    if dt is None:
        pytest.skip("no numeric loop")
    for flags, shape, sn in [("none", (5, 6), None), ("coalesced", (4, 3, 2), 2), ("sorted", (7,), None)]:
        a = _coo(u, dt, shape, 12, flags, fill, seed=len(flags), sparse_ndim=sn)
        if gpu_lacks(backend, u):
            with pytest.raises(TypeError, match=f"{u.__name__} is not available .* not on the GPU"):
                run(u, backend.put(a))
            continue
        r = run(u, backend.put(a))
        refs = reference(u, a)
        rs = r if isinstance(r, tuple) else (r,)
        refs = refs if isinstance(refs, tuple) else (refs,)
        assert len(rs) == u.nout
        for x, ref in zip(rs, refs):
            assert isinstance(x, COO)
            same(backend.get(x), ref)
            # one operand: its pattern (coalesced first unless f is linear)
            assert x.nnz == (a.nnz if a.is_unique or u in (np.negative, np.positive, np.conjugate)
                             else a.coalesce().nnz)


@pytest.mark.parametrize("u", BINARY, ids=lambda u: u.__name__)
def test_every_binary_ufunc(backend, u):
    dt = _dtype_for(u)
    if dt is None:
        pytest.skip("no numeric loop")
    nan = np.nan
    cases = [(0, 0, "coo"), (0, 0, "rev"), (1.5, 0, "coo"), (nan, 1.5, "coo"), (0, nan, "rev"),
             (1.5, 0, "self"), (1.5, 1.5, "scalar"), (0, 0, "rscalar"), (nan, 0, "dense"),
             (0, 1.5, "row")]
    for k, (fa, fb, kind) in enumerate(cases):
        flags = list(FLAGS)[k % 4], list(FLAGS)[(k // 4) % 4]
        a = _coo(u, dt, (5, 6), 12, flags[0], fa, seed=k)
        b = _coo(u, dt, (5, 6), 10, flags[1], fb, seed=k + 50)
        x, y = {"coo": (a, b), "rev": (b, a), "self": (a, a), "scalar": (a, dense(b)[0, 2]),
                "rscalar": (3, a), "dense": (a, dense(b)), "row": (a, b.to_dense()[:1])}[kind]
        try:
            ref = reference(u, x, y)
        except (TypeError, ValueError):
            continue
        if u is np.multiply and not all(np.isfinite(dense(v)).all() for v in (x, y)):
            continue  # SPEC 4: x * 0 is 0 outside the intersection (see test_stored_inf_times_zero)
        r = run(u, backend.put(x), backend.put(y))
        rs = r if isinstance(r, tuple) else (r,)
        refs = ref if isinstance(ref, tuple) else (ref,)
        for got, want in zip(rs, refs):
            same(backend.get(got), np.asarray(want))


# ----------------------------------------------------------------------------- hypothesis
OPS = [np.add, np.subtract, np.multiply, np.true_divide, np.maximum, np.minimum, np.power,
       np.equal, np.less, np.logical_and, np.logical_or, np.bitwise_and, np.hypot, np.arctan2,
       np.floor_divide, np.remainder]


@st.composite
def operand(draw, shape, dtype):
    """A COO of a shape that broadcasts to ``shape``: dims may be dropped or set to 1; hybrid too."""
    ndim = draw(st.integers(0, len(shape)))
    sub = list(shape[len(shape) - ndim:])
    for d in range(ndim):
        if draw(st.booleans()) and draw(st.booleans()):
            sub[d] = 1
    sub = tuple(sub)
    sn = draw(st.integers(0, ndim)) if ndim else 0
    total = int(np.prod(sub[:sn]))
    nnz = draw(st.integers(0, 12)) if total else 0
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    keys = rng.integers(0, max(total, 1), size=nnz)
    flags = draw(st.sampled_from(list(FLAGS)))
    sorted_, unique = FLAGS[flags]
    if unique:
        keys = np.unique(keys) if sorted_ else keys[np.sort(np.unique(keys, return_index=True)[1])]
    elif sorted_:
        keys = np.sort(keys)
    idx = (np.stack(np.unravel_index(keys, sub[:sn])).astype(np.int64) if sn
           else np.zeros((0, len(keys)), np.int64))
    vals = values_of(rng, len(keys), sub[sn:], dtype)
    fill = draw(st.sampled_from([0, 0, 1, 2.5, np.nan, np.inf]))
    if np.dtype(dtype).kind in "iub" and fill not in (0, 1):
        fill = 1
    return COO(idx, vals, sub, sorted=sorted_ and unique, unique=unique,
               fill_value=np.asarray(fill).astype(dtype)[()])


@settings(max_examples=60)
@given(data=st.data())
def test_hypothesis_binary_broadcasting(backend, data):
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=0, max_size=3)))
    u = data.draw(st.sampled_from(OPS))
    dt = np.dtype(data.draw(st.sampled_from([np.float64, np.float32, np.int32, np.bool_, np.complex128])))
    a = data.draw(operand(shape, dt))
    kind = data.draw(st.sampled_from(["coo", "coo", "scalar", "dense"]))
    if kind == "coo":
        dt2 = np.dtype(data.draw(st.sampled_from([dt, np.float64, np.int8])))
        b = data.draw(operand(shape, dt2))
    elif kind == "scalar":
        b = data.draw(st.sampled_from([0, 2, -1.5, True, np.float32(3), np.array(2, np.int16)]))
    else:
        b = values_of(np.random.default_rng(0), 1, shape, dt)[0]
    if data.draw(st.booleans()):
        a, b = b, a
    try:
        ref = reference(u, a, b)
    except (TypeError, ValueError, OverflowError) as e:
        with pytest.raises(type(e)):
            run(u, backend.put(a), backend.put(b))
        return
    r = run(u, backend.put(a), backend.put(b))
    same(backend.get(r), np.asarray(ref))


@settings(max_examples=40)
@given(data=st.data())
def test_hypothesis_unary(backend, data):
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=0, max_size=3)))
    dt = np.dtype(data.draw(st.sampled_from([np.float64, np.float16, np.int16, np.complex64])))
    a = data.draw(operand(shape, dt))
    u = data.draw(st.sampled_from([np.sqrt, np.exp, np.negative, np.absolute, np.sign, np.square,
                                   np.isnan, np.conjugate, np.positive, np.cos]))
    same(backend.get(run(u, backend.put(a))), np.asarray(reference(u, a)))


# ----------------------------------------------------------------------------- pattern rule
def _keys(r):
    return set(map(tuple, r.to("cpu").indices.T))


def test_pattern_rule_intersection_union_and_one_sided(backend):
    a = make((6, 7), 15, "coalesced", seed=1)
    b = make((6, 7), 15, "unique", seed=2)
    A, B = backend.put(a), backend.put(b)
    both, either = _keys(a) & _keys(b), _keys(a) | _keys(b)
    # fills 0: multiply and logical_and keep the intersection, maximum and add the union
    for u, want in [(np.multiply, both), (np.logical_and, both), (np.bitwise_and, None),
                    (np.maximum, either), (np.add, either), (np.not_equal, either)]:
        if want is None:
            continue
        r = backend.get(u(A, B))
        assert _keys(r) == want, u
        assert r.fill_value == u(a.fill_value, b.fill_value)
    # power: 0 ** 0 = 1 is the fill, x ** 0 = 1 whatever x, so the exponent's pattern only
    r = backend.get(run(np.power, A, B))
    assert r.fill_value == 1 and _keys(r) == _keys(b)
    # a NaN fill annihilates addition: NaN + y is NaN, so a's pattern only
    an = COO(a.indices, a.values, a.shape, sorted=True, unique=True, fill_value=np.nan)
    r = backend.get(backend.put(an) + B)
    assert np.isnan(r.fill_value) and _keys(r) == _keys(a)
    same(r, dense(an) + dense(b))
    # multiply with fills 0 and 2: a's fill annihilates (0 * y), b's does not (x * 2)
    b2 = COO(b.indices, b.values, b.shape, unique=True, fill_value=2.0)
    r = backend.get(A * backend.put(b2))
    assert _keys(r) == _keys(a) and r.fill_value == 0
    same(r, dense(a) * dense(b2))


def test_sparse_with_dense(backend):
    a = make((6, 7), 15, "none", seed=3)
    x = np.random.default_rng(0).standard_normal((6, 7))
    A, X = backend.put(a), backend.put(x)
    # the dense operand's values fill the background -> dense; 0 * x is 0 -> sparse with a's layout;
    # 0 == x is False for every (non-zero) x -> sparse, fill False (SPEC 9: decided over x's values)
    for u in (np.add, np.maximum, np.arctan2):
        r = backend.get(run(u, A, X))
        assert not isinstance(r, COO)
        same(r, reference(u, a, x))
    for u in (np.multiply, np.logical_and, np.equal):
        r = backend.get(run(u, A, X))
        assert isinstance(r, COO)
        same(r, reference(u, a, x))
    r = backend.get(A * X)
    np.testing.assert_array_equal(r.indices, a.indices)  # linear: duplicates kept
    # a size-1 dense array is a constant (a sparse result)
    r = backend.get(A + backend.put(np.ones((1, 1))))
    assert isinstance(r, COO) and r.fill_value == 1.0
    same(r, dense(a) + 1.0)


def test_linear_functions_keep_uncoalesced_layout(backend):
    a = make((6, 7), 20, "none", dtype=np.complex128, seed=4)
    A = backend.put(a)
    for r in (-A, +A, np.conjugate(A), A * 2, A / 4, 3 * A, coosparse.real(A), coosparse.imag(A),
              A * backend.put(np.arange(42.0).reshape(6, 7))):
        r = backend.get(r)
        np.testing.assert_array_equal(r.indices, a.indices)
        assert (r.is_sorted, r.is_unique) == (a.is_sorted, a.is_unique)
    # not linear, or a dtype change (int8 sums wrap): coalesced first
    i8 = make((6, 7), 20, "none", dtype=np.int8, seed=4)
    for r in (np.sqrt(backend.put(a)), backend.put(i8) * 2.5, backend.put(a) + 1):
        r = backend.get(r)
        assert r.is_coalesced


def test_a_nan_beside_an_infinite_fill_propagates(backend):
    # minimum(-inf, x) is -inf for every finite x, so a fill of -inf looked annihilating and the NaN
    # stored in (or held by) the other operand was lost; only multiply keeps the finite probes (SPEC 4)
    a = COO([[0]], np.array([1.0]), (3,), fill_value=-np.inf)
    b = COO([[1, 2]], np.array([np.nan, 3.0]), (3,))
    x = np.array([2.0, np.nan, 3.0])
    for f in (np.minimum, np.maximum, np.fmin, np.less_equal, np.greater, np.power):
        for other, want_other in ((backend.put(b), dense(b)), (backend.put(x), x)):
            got = backend.get(f(backend.put(a), other))
            got = got.to("cpu").to_dense() if isinstance(got, COO) else np.asarray(got)
            with np.errstate(all="ignore"):
                want = f(dense(a), want_other)
            np.testing.assert_array_equal(got, want)
    # multiply keeps SPEC 4's rule: a fill of 0 times a stored inf is 0 outside the intersection
    c = COO([[0]], np.array([2.0]), (3,))
    r = backend.get(backend.put(c) * backend.put(COO([[0, 1]], np.array([3.0, np.inf]), (3,))))
    np.testing.assert_array_equal(r.to("cpu").to_dense(), [6.0, 0.0, 0.0])


def test_a_complex_nan_fill_is_compared_part_by_part(backend):
    # a fill of nan+1j plus 5j is nan+6j: a NaN in either part made every value with a NaN part count as
    # the fill, so the operand "annihilated" and b's stored 5j was lost (the result all nan+1j)
    a = COO(np.zeros((1, 0), np.int64), np.zeros(0, np.complex128), (3,), fill_value=complex(np.nan, 1.0))
    b = COO([[1]], np.array([5j]), (3,))
    A = backend.put(a)
    for other, x in ((backend.put(b), dense(b)), (backend.put(np.array([0, 5j, 0])), np.array([0, 5j, 0])),
                     (backend.put(np.full(3, 5j)), np.full(3, 5j))):
        got = backend.get(A + other)
        got = got.to("cpu").to_dense() if isinstance(got, COO) else np.asarray(got)
        want = dense(a) + x
        np.testing.assert_array_equal(np.isnan(got.real), np.isnan(want.real))
        np.testing.assert_array_equal(got.imag, want.imag)


def test_float16_duplicates_are_summed_before_scaling(backend):
    # float16 duplicates sum in float32 (40000 - 39000 = 1000); scaled one by one, 40000 * 2
    # overflowed float16 and inf - inf gave NaN where the dense meaning's product is 2000
    a = COO([[0, 0, 1, 3, 3]], np.array([40000.0, -39000.0, 3.0, -40000.0, 39500.0], np.float16), (5,))
    b = COO([[0, 1, 3]], np.array([2.0, 2.0, 2.0], np.float16), (5,), sorted=True, unique=True)
    A = backend.put(a)
    want = dense(a) * np.float16(2)
    for r in (A * 2, 2 * A, A / 0.5, A * np.float16(2), A * backend.put(np.full(5, 2.0, np.float16)),
              coosparse.multiply(A, backend.put(b)), coosparse.multiply(backend.put(b), A, compact=False)):
        r = backend.get(r)
        assert r.dtype == np.float16
        np.testing.assert_array_equal(r.to_dense(), want)
    np.testing.assert_array_equal(backend.get(-A).indices, a.indices)  # negation is exact: layout kept


def test_duplicates_summed_before_nonlinear(backend):
    a = COO([[1, 1, 3]], np.array([-4.0, 13.0, 4.0]), (5,))
    r = backend.get(np.sqrt(backend.put(a)))
    np.testing.assert_array_equal(r.to_dense(), [0.0, 3.0, 0.0, 2.0, 0.0])
    b = COO([[1, 3, 3]], np.array([2.0, -1.0, 2.0]), (5,))
    r = backend.get(np.maximum(backend.put(a), backend.put(b)))
    np.testing.assert_array_equal(r.to_dense(), [0.0, 9.0, 0.0, 4.0, 0.0])
    r = backend.get(np.logical_and(backend.put(a), backend.put(b)))
    np.testing.assert_array_equal(r.to_dense(), [False, True, False, True, False])


def test_three_operand_engine(backend):
    # np.clip's ufunc form has three operands: unions and intersections of several COOs
    from coosparse.ops.elementwise.engine import elementwise

    a = make((5, 6), 12, "none", seed=5)
    lo = make((5, 6), 8, "unique", seed=6)
    hi = make((5, 6), 9, "coalesced", seed=7)
    hi = COO(hi.indices, hi.values + 10, hi.shape, sorted=True, unique=True, fill_value=3.0)
    for f in (np.clip, lambda x, y, z: x * y * z, lambda x, y, z: x + y * z):
        r = backend.get(elementwise(f, (backend.put(a), backend.put(lo), backend.put(hi)), name="clip"))
        same(r, reference(f, a, lo, hi))


def test_stored_inf_times_zero_convention(backend):
    # SPEC 4: x * 0 is 0 outside the intersection, although inf * 0 is NaN densely
    a = COO([[0, 1]], np.array([np.inf, 1.0]), (3,), sorted=True, unique=True)
    b = COO([[1]], np.array([2.0]), (3,))
    r = backend.get(backend.put(a) * backend.put(b))
    np.testing.assert_array_equal(r.to_dense(), [0.0, 2.0, 0.0])


def test_probe_values_are_finite_and_of_the_dtype():
    for dt in coosparse.SUPPORTED_DTYPES:
        p = _probes(dt)
        assert p.dtype == dt and len(p) >= 2
        if dt.kind in "fc":
            assert np.isfinite(p).all() and 0 in p and (p < 0).any() if dt.kind == "f" else True


# ----------------------------------------------------------------------------- nout, 0-d, empty
def test_two_outputs(backend):
    a = make((5, 6), 10, "none", seed=8)
    b = COO(make((5, 6), 10, "unique", seed=9).indices, np.arange(1.0, 11.0), (5, 6), unique=True,
            fill_value=3.0)
    for r, ref in [(divmod(backend.put(a), backend.put(b)), reference(np.divmod, a, b)),
                   (np.modf(backend.put(a)), reference(np.modf, a)),
                   (np.frexp(backend.put(a)), reference(np.frexp, a))]:
        assert isinstance(r, tuple) and len(r) == 2
        for x, y in zip(r, ref):
            same(backend.get(x), y)


def test_zero_d_and_empty(backend):
    z = COO(np.zeros((0, 2), np.int64), np.array([1.5, 2.0]), ())
    e = COO(np.zeros((0, 0), np.int64), np.zeros(0), (), fill_value=4.0)
    a = make((3, 4), 5, "none", seed=1)
    for x, y in [(z, e), (z, a), (a, z), (e, a), (z, 2.0)]:
        for u in (np.add, np.multiply, np.maximum):
            r = backend.get(u(backend.put(x), backend.put(y)))
            same(r, reference(u, x, y))
    assert backend.get(np.sqrt(backend.put(z))).shape == ()
    empty = COO(np.zeros((2, 0), np.int64), np.zeros(0), (0, 4), fill_value=1.0)
    for r in (empty + 1, np.exp(empty), empty * backend.put(a)[:0] if False else empty * 2,
              coosparse.maximum(empty, COO(np.zeros((2, 0), np.int64), np.zeros(0), (1, 4)))):
        r = backend.get(r)
        assert r.shape == (0, 4) and r.nnz == 0
    nz = COO(np.zeros((2, 0), np.int64), np.zeros(0), (3, 4), sorted=True, unique=True)
    for u in (np.add, np.multiply, np.maximum):
        same(backend.get(u(backend.put(nz), backend.put(a))), reference(u, nz, a))


def test_wide_shape(backend):
    shape = (2**40, 2**40)
    a = COO([[5, 2**39, 2**40 - 1], [7, 3, 2**40 - 1]], np.array([1.0, 2.0, 3.0]), shape)
    b = COO([[2**39, 1], [3, 1]], np.array([10.0, 20.0]), shape, sorted=False, unique=True)
    r = backend.get(np.maximum(backend.put(a), backend.put(b)))
    assert r.is_coalesced and r.nnz == 4
    assert dict(zip(map(tuple, r.indices.T), r.values)) == {
        (5, 7): 1.0, (2**39, 3): 10.0, (2**40 - 1, 2**40 - 1): 3.0, (1, 1): 20.0}
    r = backend.get(np.logical_and(backend.put(a), backend.put(b)))
    assert _keys(r) == {(2**39, 3)}
    r = backend.get(np.exp(backend.put(a)))
    assert r.fill_value == 1.0 and r.nnz == 3


# ----------------------------------------------------------------------------- operators, dtypes
BINOPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
          operator.mod, operator.pow, operator.and_, operator.or_, operator.xor, operator.lshift,
          operator.rshift, operator.lt, operator.le, operator.gt, operator.ge, operator.eq,
          operator.ne]
INPLACE = {operator.add: operator.iadd, operator.sub: operator.isub, operator.mul: operator.imul,
           operator.truediv: operator.itruediv, operator.floordiv: operator.ifloordiv,
           operator.mod: operator.imod, operator.pow: operator.ipow, operator.and_: operator.iand,
           operator.or_: operator.ior, operator.xor: operator.ixor, operator.lshift: operator.ilshift,
           operator.rshift: operator.irshift}


@pytest.mark.parametrize("op", BINOPS, ids=lambda o: o.__name__)
def test_operators_with_every_operand_kind(backend, op):
    dt = np.int64 if op in (operator.and_, operator.or_, operator.xor, operator.lshift,
                            operator.rshift) else np.float64
    a = make((4, 5), 8, "none", dtype=dt, seed=1)
    b = make((4, 5), 7, "coalesced", dtype=dt, seed=2)
    if dt == np.int64:
        a = COO(a.indices, np.abs(a.values) % 7, a.shape)
        b = COO(b.indices, np.abs(b.values) % 7, b.shape, sorted=True, unique=True)
    others = [b, 2, np.array(3, dt), dense(b), dense(b)[:1], COO([[1]], np.array([2], dt), (5,))]
    for other in others:
        for x, y in [(a, other), (other, a)]:
            ref = reference(op, x, y)
            r = run(op, backend.put(x), backend.put(y))
            same(backend.get(r), np.asarray(ref))
            if op in INPLACE and isinstance(x, COO):
                if isinstance(r, COO) and r.shape == x.shape and np.can_cast(r.dtype, x.dtype, "same_kind"):
                    X = backend.put(x)
                    r2 = run(INPLACE[op], X, backend.put(y))
                    assert r2 is not X and r2.dtype == x.dtype
                    same(backend.get(r2), np.asarray(ref).astype(x.dtype))
                    same(backend.get(X), dense(x))  # unchanged


def test_unary_operators(backend):
    a = make((4, 5), 8, "none", dtype=np.int32, seed=3)
    A = backend.put(a)
    for op in (operator.neg, operator.pos, operator.abs, operator.invert):
        same(backend.get(op(A)), op(dense(a)))
    b = backend.put(a.astype(bool))
    same(backend.get(~b), ~dense(a).astype(bool))
    with pytest.raises(TypeError):
        -b


def test_nep50_promotion():
    a32 = make((3, 4), 5, "none", dtype=np.float32)
    i8 = make((3, 4), 5, "none", dtype=np.int8)
    u8 = make((3, 4), 5, "coalesced", dtype=np.uint8)
    assert (a32 * 2.0).dtype == np.float32
    assert (a32 + np.float64(1)).dtype == np.float64
    assert (i8 + 1).dtype == np.int8 and (i8 + 1).fill_value.dtype == np.int8
    assert (i8 + np.int16(1)).dtype == np.int16
    assert (i8 / 2).dtype == np.float64
    assert (u8 > 0).dtype == np.bool_
    assert (i8 * a32).dtype == np.float32
    with pytest.raises(OverflowError):
        u8 + 300
    assert np.add(a32, a32, dtype=np.float64).dtype == np.float64


def test_inplace_rules():
    a = make((3, 4), 5, "none", dtype=np.int64)
    b = a
    b += 1
    assert b is not a and b.fill_value == 1 and a.fill_value == 0
    with pytest.raises(TypeError, match="same_kind"):
        b /= 2
    with pytest.raises(ValueError, match="shape"):
        b += COO([[0], [0], [0]], np.array([1]), (2, 3, 4))
    with pytest.raises(TypeError, match="dense"):
        b -= np.arange(12, dtype=np.int64).reshape(3, 4)  # varying values: a dense result
    c = b
    c -= np.ones((3, 4), np.int64)  # one value over the operand: still sparse (SPEC 9)
    assert isinstance(c, COO) and c.fill_value == 0
    f = make((3, 4), 5, "none", dtype=np.float32)
    f *= 2.5
    assert f.dtype == np.float32


def test_comparisons_make_unhashable_and_bool():
    a = make((3, 4), 5, "none")
    with pytest.raises(TypeError):
        hash(a)
    assert (a == a).dtype == bool
    with pytest.raises(TypeError, match="NoneType"):  # never Python's identity fallback (a scalar False)
        a == None  # noqa: E711, B015
    with pytest.raises(ValueError, match="ambiguous"):
        bool(a > 0)
    assert bool(COO([[0]], np.array([2.0]), (1,)) > 1)
    assert not bool(COO(np.zeros((1, 0), np.int64), np.zeros(0), (1,)))


# ----------------------------------------------------------------------------- protocol, errors
def test_array_ufunc_errors():
    a = make((3, 4), 5, "none")
    with pytest.raises(TypeError, match="out="):
        np.add(a, a, out=np.empty((3, 4)))
    with pytest.raises(TypeError, match="out="):
        x = np.ones((3, 4))
        x += a
    with pytest.raises(TypeError, match="where="):
        np.add(a, a, where=np.ones((3, 4), bool))
    if hasattr(np, "matvec"):  # NumPy >= 2.2
        with pytest.raises(TypeError, match="not supported"):
            np.matvec(a, np.ones(4))  # a generalized ufunc without an implementation
    with pytest.raises(ValueError, match="matmul: shapes"):
        np.matmul(a, a)  # implemented by the linear algebra: its own shape error
    with pytest.raises(TypeError, match="isnat|not supported"):
        np.isnat(a)
    with pytest.raises(TypeError):
        a + "x"
    with pytest.raises(TypeError):
        a + object()
    with pytest.raises(TypeError, match="bitwise_and"):
        np.bitwise_and(a, a)
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(2, 4\)"):
        a + make((2, 4), 3, "none")
    # order and subok mean nothing for a COO result; dtype and casting are NumPy's
    assert isinstance(np.add(a, a, order="F", subok=True), COO)
    with pytest.raises(TypeError):
        np.add(a, a, dtype=np.int64, casting="safe")


def test_values_errors_are_numpys(backend):
    a = COO([[0, 1]], np.array([2, 3]), (3,))
    b = COO([[0, 1]], np.array([-1, 2]), (3,))
    with pytest.raises(ValueError, match="negative"):
        backend.get(np.power(backend.put(a), backend.put(b)))


def test_devices_must_agree():
    a = make((3, 4), 5, "none")
    assert isinstance(a + a, COO)


# ----------------------------------------------------------------------------- broadcasting
def _bcast_case(shape, target, flags, sparse_ndim=None, seed=0):
    a = make(shape, 6, flags, sparse_ndim=sparse_ndim, seed=seed)
    r = coosparse.broadcast_to(a, target)
    same(r, np.broadcast_to(dense(a), target))
    return a, r


@pytest.mark.parametrize("flags", list(FLAGS))
def test_broadcast_to(backend, flags):
    for shape, target, sorted_kept in [((3, 1), (3, 4), True), ((1, 4), (3, 4), True),
                                       ((4,), (2, 3, 4), True), ((3, 1, 4), (3, 5, 4), False),
                                       ((1, 1), (2, 3), True), ((3, 4), (3, 4), True),
                                       ((2, 1, 1), (2, 1, 5), True)]:
        a = make(shape, 6, flags)
        r = backend.get(coosparse.broadcast_to(backend.put(a), target))
        same(r, np.broadcast_to(dense(a), target))
        assert r.is_unique == a.is_unique
        aligned = (None,) * (len(target) - len(shape)) + shape
        kept = [d for d, n in enumerate(aligned) if n == target[d]]
        inner = bool(kept) and any(d > kept[0] and n != target[d] for d, n in enumerate(aligned))
        assert r.is_sorted == (a.is_sorted and (sorted_kept or a.nnz <= 1 or r.nnz <= 1)
                               and (a.is_unique or not inner or r.nnz <= 1))
        assert r.sparse_ndim == a.sparse_ndim + len(target) - len(shape)
        assert r.fill_value == a.fill_value
    # hybrid: dense dims broadcast in the values; fill kept
    h = COO([[0, 2]], np.array([[1.0], [2.0]]), (3, 1), fill_value=5.0)
    r = coosparse.broadcast_to(h, (2, 3, 4))
    assert r.sparse_ndim == 2 and r.values.shape == (4, 4)
    same(r, np.broadcast_to(h.to_dense(), (2, 3, 4)))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        coosparse.broadcast_to(h, (2, 2))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        coosparse.broadcast_to(h, (1,))
    with pytest.raises(TypeError):
        coosparse.broadcast_to(np.ones(3), (2, 3))
    assert coosparse.broadcast_to(h, (0, 3, 1)).nnz == 0


def test_broadcast_arrays_and_numpy_functions(backend):
    a = make((3, 1), 3, "coalesced")
    b = make((1, 4), 3, "none", seed=1)
    x, y, z = coosparse.broadcast_arrays(backend.put(a), backend.put(b), backend.put(np.arange(4.0)))
    assert x.shape == y.shape == z.shape == (3, 4) and not isinstance(z, COO)
    same(backend.get(x), np.broadcast_to(dense(a), (3, 4)))
    # NumPy's functions with a COO beside a device array reach COO.__array_function__ (as with CuPy)
    x, y, z = np.broadcast_arrays(backend.put(a), backend.put(b), backend.put(np.arange(4.0)))
    assert isinstance(x, COO) and y.shape == (3, 4) and z.shape == (3, 4)
    assert np.broadcast_to(backend.put(a), (2, 3, 4)).shape == (2, 3, 4)
    r = np.isclose(backend.put(a), backend.put(np.ones((3, 4))))
    np.testing.assert_array_equal(dense(backend.get(r)), np.isclose(dense(a), np.ones((3, 4))))


def test_sparse_broadcasting_in_ops(backend):
    a = make((3, 1), 3, "coalesced")
    b = make((1, 4), 3, "none", seed=1)
    for u in (np.add, np.multiply, np.maximum, np.less):
        same(backend.get(u(backend.put(a), backend.put(b))), reference(u, a, b))
    h = make((3, 4, 2), 5, "none", sparse_ndim=1, seed=2)  # hybrid: dense (4, 2)
    s = make((4, 1), 3, "unique", seed=3)                 # sparse over the hybrid's dense dims
    for u in (np.add, np.multiply, np.maximum):
        same(backend.get(u(backend.put(h), backend.put(s))), reference(u, h, s))
        same(backend.get(u(backend.put(s), backend.put(h))), reference(u, s, h))


# ----------------------------------------------------------------------------- Array API names
API_UNARY = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil", "conj",
             "cos", "cosh", "exp", "expm1", "floor", "imag", "isfinite", "isinf", "isnan", "log",
             "log1p", "log2", "log10", "logical_not", "negative", "positive", "real", "reciprocal",
             "round", "sign", "signbit", "sin", "sinh", "sqrt", "square", "tan", "tanh", "trunc"]
API_BINARY = ["add", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
              "bitwise_xor", "copysign", "divide", "equal", "floor_divide", "greater", "greater_equal",
              "hypot", "less", "less_equal", "logaddexp", "logical_and", "logical_or", "logical_xor",
              "maximum", "minimum", "multiply", "nextafter", "not_equal", "pow", "remainder", "subtract"]
NUMPY_NAME = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh", "atan": "arctan",
              "atanh": "arctanh", "atan2": "arctan2", "bitwise_invert": "invert", "conj": "conjugate",
              "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift", "pow": "power",
              "divide": "true_divide", "abs": "absolute"}


def _api_dtype(name):
    if name.startswith("bitwise"):
        return np.int32
    if name.startswith("logical"):
        return np.bool_
    if name in ("conj", "real", "imag"):
        return np.complex128
    return np.float64


@pytest.mark.parametrize("name", API_UNARY + API_BINARY)
def test_array_api_functions(name):
    fn = getattr(coosparse, name)
    ref = getattr(np, NUMPY_NAME.get(name, name))
    dt = _api_dtype(name)
    a = make((4, 5), 8, "none", dtype=dt, seed=1)
    b = make((4, 5), 7, "coalesced", dtype=dt, seed=2)
    if dt == np.int32:
        a = COO(a.indices, np.abs(a.values) % 7, a.shape)
        b = COO(b.indices, np.abs(b.values) % 7, b.shape, sorted=True, unique=True)
    if name in API_UNARY:
        same(run(fn, a), np.asarray(reference(ref, a)))
        with pytest.raises(TypeError):
            fn(np.ones(3))
        return
    for x, y in [(a, b), (a, 2), (3, b)]:
        same(run(fn, x, y), np.asarray(reference(ref, x, y)))


def test_array_api_keywords_kept():
    a = make((4, 5), 8, "none", seed=1)
    b = make((4, 5), 7, "none", seed=2)
    assert not coosparse.multiply(a, b, compact=False).is_unique
    assert coosparse.add(a, b, coalesce=True).is_coalesced
    assert coosparse.subtract(a, b, coalesce=True).is_coalesced


def test_clip_with_a_dense_min_and_a_scalar_max(backend):
    # a dense min makes maximum(x, min) dense; the max step then refused it (no COO operand left)
    a = COO([[0, 1, 1, 3]], np.array([1, -20, 3, 9], np.int16), (4,), fill_value=1)
    lo = np.array([0, 2, 5, -1], np.int16)
    for hi in (np.int16(3), 4, np.array([1, 2, 3, 4], np.int16)):
        got = backend.get(np.clip(backend.put(a), backend.put(lo), backend.put(hi)))
        got = got.to("cpu").to_dense() if isinstance(got, COO) else np.asarray(got)
        want = np.clip(dense(a), lo, hi)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_round_clip_real_imag_and_numpy_functions():
    a = COO([[0, 1, 3]], np.array([1.26, -3.5, 7.0]), (5,), fill_value=0.5)
    same(coosparse.round(a), np.round(a.to_dense()))
    same(np.round(a, 1), np.round(a.to_dense(), 1))
    same(np.around(a), np.around(a.to_dense()))
    same(a.round(), np.round(a.to_dense()))
    for lo, hi in [(-1, 5), (None, 2), (0, None), (None, None)]:
        same(coosparse.clip(a, lo, hi), np.clip(a.to_dense(), lo, hi))
        same(a.clip(lo, hi), np.clip(a.to_dense(), lo, hi))
    same(np.clip(a, -1, 5), np.clip(a.to_dense(), -1, 5))
    bound = COO([[1]], np.array([-1.0]), (5,))
    same(coosparse.clip(a, bound, 3.0), np.clip(a.to_dense(), bound.to_dense(), 3.0))
    i8 = make((3, 4), 5, "none", dtype=np.int8)
    assert coosparse.clip(i8, np.int16(-2), np.int16(3)).dtype == np.int8
    with pytest.raises(TypeError, match="out="):
        np.clip(a, 0, 1, out=np.empty(5))
    c = COO([[0, 1, 1]], np.array([1 + 2j, 3 - 1j, 1j]), (3,))
    for f in (np.real, np.imag, np.angle, np.iscomplex, np.isreal, np.fix if False else np.real):
        same(f(c), f(c.to_dense()))
    same(c.real, c.to_dense().real)
    same(c.imag, c.to_dense().imag)
    same(c.conj(), c.to_dense().conj())
    same(np.conj(c), np.conj(c.to_dense()))
    assert c.real.is_coalesced is False  # linear: layout kept
    f = COO([[0, 1]], np.array([np.inf, -np.inf]), (3,), fill_value=np.nan)
    for fn in (np.isposinf, np.isneginf, np.nan_to_num, np.fix):
        same(fn(f), fn(f.to_dense()))
    same(np.isclose(a, a + 1e-9), np.isclose(a.to_dense(), a.to_dense() + 1e-9))
    with pytest.raises(TypeError, match="not supported"):
        np.unwrap(a)


def test_public_names_exported():
    for name in API_UNARY + API_BINARY + ["clip", "broadcast_to", "broadcast_arrays"]:
        assert name in coosparse.__all__ and callable(getattr(coosparse, name))


# ----------------------------------------------------------------------------- kernel
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float16, np.bool_, np.int32])
@pytest.mark.parametrize("dense_shape", [(), (2, 3)])
def test_merge_gather_kernel(backend, dtype, dense_shape):
    from coosparse._kernels.backend import backend_for
    from coosparse.ops.elementwise.engine import _bits2d, _fill_words

    be = backend_for(backend.put(np.zeros(1)))
    for na, nb, seed in [(30, 25, 0), (0, 5, 1), (7, 0, 2), (0, 0, 3), (400, 300, 4)]:
        a = make((20, 30) + dense_shape, na, "coalesced", sparse_ndim=2, dtype=dtype, seed=seed)
        b = make((20, 30) + dense_shape, nb, "coalesced", sparse_ndim=2, dtype=dtype, seed=seed + 9)
        fa, fb = np.asarray(1).astype(dtype)[()], np.asarray(0).astype(dtype)[()]
        a = COO(a.indices, a.values, a.shape, sorted=True, unique=True, fill_value=fa)
        (aw, adt), (bw, _) = _bits2d(a.values), _bits2d(b.values)
        strides = np.array([30, 1], dtype=np.int64)
        idx, va, vb = be.merge_gather(*map(backend.put, (a.indices, b.indices, aw, bw)), strides,
                                      _fill_words(a, aw), _fill_words(b, bw))  # host metadata
        idx, va, vb = (backend.get(x) for x in (idx, va, vb))
        keys_a = {tuple(c): i for i, c in enumerate(a.indices.T)}
        keys_b = {tuple(c): i for i, c in enumerate(b.indices.T)}
        union = sorted(set(keys_a) | set(keys_b))
        np.testing.assert_array_equal(idx.T.tolist() if idx.size else [], [list(u) for u in union])
        va = va.view(adt).reshape((len(union),) + dense_shape)
        vb = vb.view(adt).reshape((len(union),) + dense_shape)
        for u, key in enumerate(union):
            np.testing.assert_array_equal(va[u], a.values[keys_a[key]] if key in keys_a else fa)
            np.testing.assert_array_equal(vb[u], b.values[keys_b[key]] if key in keys_b else fb)


def test_merge_gather_parallel_path(backend):
    # above the serial threshold the Numba layer splits the merge into chunks
    from coosparse._kernels.backend import backend_for
    from coosparse.ops.elementwise.engine import _bits2d

    be = backend_for(backend.put(np.zeros(1)))
    a = make((300, 300), 25000, "coalesced", seed=1)
    b = make((300, 300), 20000, "coalesced", seed=2)
    (aw, _), (bw, _) = _bits2d(a.values), _bits2d(b.values)
    fill = np.full(1, 7.0).view(np.uint64)
    strides = np.array([300, 1], dtype=np.int64)
    idx, va, vb = (backend.get(x) for x in be.merge_gather(
        *map(backend.put, (a.indices, b.indices, aw, bw)), strides, fill, fill))
    ka, kb = a.indices[0] * 300 + a.indices[1], b.indices[0] * 300 + b.indices[1]
    union = np.union1d(ka, kb)
    np.testing.assert_array_equal(idx[0] * 300 + idx[1], union)
    want_a = np.full(len(union), 7.0)
    want_a[np.searchsorted(union, ka)] = a.values
    want_b = np.full(len(union), 7.0)
    want_b[np.searchsorted(union, kb)] = b.values
    np.testing.assert_array_equal(va.view(np.float64)[:, 0], want_a)
    np.testing.assert_array_equal(vb.view(np.float64)[:, 0], want_b)


# ----------------------------------------------------------------------------- bench cases
@pytest.mark.parametrize("device", ["cpu", "cuda-emulated"])
def test_bench_cases_run_on_each_device(device):
    # coosparse/bench/cases_ufunc.py on small arrays: every impl runs on the device asked for
    # (the values floor is NumPy's or the namespace's own ufunc), coosparse's results as on the CPU
    from coosparse.bench import cases_ufunc

    if device != "cpu":
        pytest.importorskip("coosparse._kernels.cuda.emulated")
    a = make((30, 40), 60, "coalesced", seed=1)
    b = make((30, 40), 50, "coalesced", seed=2)
    cases = cases_ufunc._cases_on(a, b, "small", lambda lib: lib != "pydata", device)
    assert [c.op for c in cases] == ["sqrt", "greater (a > 0)", "maximum"]
    floor = "numpy-values" if device == "cpu" else "cupy-values"
    assert [i.library for i in cases[0].impls] == ["coosparse", floor]
    refs = run(lambda: (np.sqrt(a), a > 0, np.maximum(a, b)))
    import emulation as strict

    for case, ref in zip(cases, refs):
        for impl in case.impls:
            r = run(impl.fn)
            if impl.library == "coosparse":
                assert r.device == device
                same(strict.to_host(r), dense(ref))
