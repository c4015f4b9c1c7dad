"""Fuzz rows of hostile input (appended to ``fuzz_table.ROWS``): the classes of docs/reliability.md.

- shape arithmetic near 2**63: pad, kron, tile, repeat, concatenate and
  broadcast_to with dimensions next to the limit (results checked element by
  element with exact Python ints; beyond the limit a ValueError, an entry
  count no memory holds a MemoryError, both raised before any work);
- signed zeros: stored -0.0 and fills of -0.0 through to_dense, full and
  where, compared bit for bit (the sign of zero included);
- every dtype, float16 and bool included, through every reduction with
  ``dtype=`` (NumPy on the dense meaning; the statistics refuse an integer
  or bool dtype with TypeError);
- operands of other libraries (torch tensors, masked arrays, memoryviews,
  None, str) through every operator and ufunc: TypeError (``==`` and ``!=``
  too, never Python's identity answer); scipy.sparse and pydata/sparse
  operands: NumPy's answer on the dense meaning;
- einsum subscripts with ellipses: NumPy's answer, or ValueError where NumPy
  raises one.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

import coosparse
from coosparse import COO
from fuzz_table import Call, Ref, Row, _assert_elements, _elements, _finite, assert_values_equal, coos
from reference import assert_bits, dense_meaning

FLOATS = [np.float16, np.float32, np.float64, np.complex64, np.complex128]
BIG = 2**61


# ============================================================================ shape arithmetic near 2**63
@st.composite
def _huge_coo(draw, ndim=None, fill=True):
    """A COO whose dimensions are small or next to 2**62 (few entries: the result is checked exactly)."""
    ndim = ndim or draw(st.integers(1, 2))
    shape = tuple(draw(st.sampled_from([1, 3, BIG - 1, BIG, 2 * BIG, 2**62 + 3])) for _ in range(ndim))
    return draw(coos(shape=(shape, ()), allow_wide=True, fill=fill, max_nnz=6))


def _limit_ops(draw, a, valid):
    """One call of a shape-computing operation on ``a``, whose result fits int64 indices (``valid``) or not."""
    op = draw(st.sampled_from(["pad", "kron", "tile", "repeat", "concatenate", "broadcast_to"]))
    ax = draw(st.integers(0, a.ndim - 1))
    n = a.shape[ax]
    room = 2**63 - n  # what the axis may still grow by
    if op == "kron" and not valid and n <= 1:
        op = "tile"  # (a size-1 axis is carried over by kron: its partner's size alone, never wrapped)
    if op == "pad":
        pw = [(0, 0)] * a.ndim
        if valid:
            p0 = draw(st.integers(0, room))
            pw[ax] = (p0, draw(st.integers(0, room - p0)))
        else:
            p0 = draw(st.integers(0, 2**64))
            pw[ax] = (p0, max(room - p0, 0) + draw(st.integers(1, 2**64)))
        return Call(coosparse.pad, a, pw, constant_values=a.fill_value)
    if op == "kron":
        b_shape = [1] * a.ndim
        most = 2**63 // max(n, 1)
        b_shape[ax] = draw(st.integers(1, max(most, 1))) if valid else most + draw(st.integers(1, 2**40))
        b = draw(coos(shape=(tuple(b_shape), ()), dtype=a.dtype, fill=False, max_nnz=3))
        return Call(coosparse.kron, a._with(fill_value=0), b)
    if op == "tile":
        reps = [1] * a.ndim
        reps[ax] = draw(st.integers(2, max(2, min(40, 2**63 // max(n, 1))))) if valid else \
            2**63 // max(n, 1) + draw(st.integers(1, 5))
        if valid and n * reps[ax] > 2**63:
            reps[ax] = 1
        return Call(coosparse.tile, a, tuple(reps))
    if op == "repeat":
        r = draw(st.integers(0, max(0, min(50, 2**63 // max(n, 1))))) if valid else \
            2**63 // max(n, 1) + draw(st.integers(1, 5))
        if n == 0:
            r = 0 if valid else r
        return Call(coosparse.repeat, a, r, axis=ax)
    if op == "concatenate":
        other = list(a.shape)
        other[ax] = draw(st.integers(0, room)) if valid else room + draw(st.integers(1, 2**40))
        b = draw(coos(shape=(tuple(other), ()), dtype=a.dtype, fill=False, max_nnz=3))
        return Call(coosparse.concatenate, [a._with(fill_value=0), b], axis=ax)
    # broadcast_to: a new leading dimension (nothing stored: any size up to 2**63; else few copies)
    lead = draw(st.integers(0, 2**63)) if valid and a.nnz == 0 else draw(st.integers(0, 5)) if valid else \
        draw(st.sampled_from([2**63 + 1, 2**64] + ([2**50] if a.nnz else [])))
    return Call(coosparse.broadcast_to, a, (lead,) + a.shape)


@st.composite
def _limit_call(draw):
    return _limit_ops(draw, draw(_huge_coo()), True)


@st.composite
def _bad_limit_call(draw):
    return _limit_ops(draw, draw(_huge_coo()), False)


def _check_limit(call, r):
    f, args, kw = call.func, call.args, call.kwargs
    if f is coosparse.concatenate:
        pieces, ax = args[0], kw["axis"]
        dtype = np.result_type(*[p.dtype for p in pieces])
        want, off = {}, 0
        for p in pieces:
            for k, v in _elements(Ref.of(p.astype(dtype))).items():
                want[k[:ax] + (k[ax] + off,) + k[ax + 1:]] = v
            off += p.shape[ax]
        shape = pieces[0].shape[:ax] + (off,) + pieces[0].shape[ax + 1:]
        return _assert_elements(r, want, shape, dtype, dtype.type(0))
    a = args[0]
    el = _elements(Ref.of(a))
    if f is coosparse.pad:
        pw = args[1]
        want = {tuple(i + p[0] for i, p in zip(k, pw)): v for k, v in el.items()}
        shape = tuple(n + p[0] + p[1] for n, p in zip(a.shape, pw))
        return _assert_elements(r, want, shape, a.dtype, a.fill_value)
    if f is coosparse.kron:
        b = args[1]
        dtype = np.result_type(a.dtype, b.dtype)
        want = {}
        with np.errstate(all="ignore"):
            for ka, va in el.items():
                for kb, vb in _elements(Ref.of(b)).items():
                    key = tuple(i * q + j for i, q, j in zip(ka, b.shape, kb))
                    want[key] = np.asarray(va).astype(dtype) * np.asarray(vb).astype(dtype)
        shape = tuple(p * q for p, q in zip(a.shape, b.shape))
        return _assert_elements(r, want, shape, dtype, dtype.type(0))
    if f is coosparse.tile:
        reps = args[1]
        want = {}
        for k, v in el.items():
            for c in np.ndindex(*reps):
                want[tuple(i + ci * n for i, ci, n in zip(k, c, a.shape))] = v
        return _assert_elements(r, want, tuple(n * t for n, t in zip(a.shape, reps)), a.dtype, a.fill_value)
    if f is coosparse.repeat:
        rep, ax = args[1], kw["axis"]
        want = {k[:ax] + (k[ax] * rep + j,) + k[ax + 1:]: v for k, v in el.items() for j in range(rep)}
        shape = a.shape[:ax] + (a.shape[ax] * rep,) + a.shape[ax + 1:]
        return _assert_elements(r, want, shape, a.dtype, a.fill_value)
    lead = args[1][0]  # broadcast_to
    want = {(i,) + k: v for k, v in el.items() for i in range(lead)}
    return _assert_elements(r, want, args[1], a.dtype, a.fill_value)


# ============================================================================ signed zeros
@st.composite
def _signed_coo(draw):
    dtype = np.dtype(draw(st.sampled_from(FLOATS)))
    sparse = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    dense = tuple(draw(st.lists(st.integers(1, 2), max_size=1)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    nnz = draw(st.integers(0, 3 * int(np.prod(sparse))))
    idx = np.stack([rng.integers(0, n, nnz) for n in sparse])
    pool = np.array([0.0, -0.0, -0.0, 1.5, -1.5, np.inf, np.nan])
    vals = rng.choice(pool, (nnz,) + dense).astype(complex if dtype.kind == "c" else float)
    if dtype.kind == "c":
        vals.imag = rng.choice(pool, vals.shape)
    kw = {}
    if nnz and draw(st.booleans()):
        _, first = np.unique(idx.T, axis=0, return_index=True)
        first = np.sort(first)
        idx, vals = idx[:, first], vals[first]
        kw["unique"] = True
    if nnz and draw(st.booleans()):
        order = np.lexsort(idx[::-1])
        idx, vals = idx[:, order], vals[order]
        kw["sorted"] = True
    fill = draw(st.sampled_from([0.0, -0.0]))
    if dtype.kind == "c":
        fill = complex(fill, draw(st.sampled_from([0.0, -0.0])))
    with np.errstate(all="ignore"):
        vals = vals.astype(dtype)
    return COO(idx, vals, sparse + dense, fill_value=fill, **kw)


@st.composite
def _signed_call(draw):
    a = draw(_signed_coo())
    kind = draw(st.sampled_from(["to_dense", "to_dense F", "full", "where", "where dense"]))
    if kind == "full":
        return Call(lambda s, v: coosparse.full(s, v).to_dense(), a.shape, a.fill_value)
    if kind.startswith("where"):
        x = (a if a.dtype.kind == "f" else a.real).coalesce()  # (see docs: negation of duplicates)
        cond = x > 0
        if kind == "where dense":
            cond = cond.to_dense()
        return Call(lambda c, x: coosparse.where(c, x, -x), cond, x)
    return Call(COO.to_dense, a, order="F" if kind.endswith("F") else "C")


def _check_signed(call, r):
    if isinstance(r, COO):
        r = r.to_dense()
    args = call.args
    if isinstance(args[0], tuple):  # full
        return assert_bits(r, np.full(args[0], args[1]))
    if len(args) == 2:  # where
        d = dense_meaning(args[1])
        with np.errstate(invalid="ignore"):
            return assert_bits(r, np.where(d > 0, d, -d))
    assert_bits(r, dense_meaning(args[0]))


# ============================================================================ reductions with dtype=
DTYPES = [np.dtype(t) for t in coosparse.SUPPORTED_DTYPES]
SUMS = [np.sum, np.prod, np.nansum, np.nanprod, np.cumsum, np.cumprod]
STATS = [np.mean, np.nanmean, np.var, np.std, np.nanvar, np.nanstd]


@st.composite
def _reduce_call(draw, valid=True):
    a = draw(coos(allow_wide=False, max_nnz=12, shape=(tuple(draw(st.lists(st.integers(1, 4), min_size=1,
                                                                             max_size=2))), ())))
    if valid:
        f = draw(st.sampled_from(SUMS + STATS))
        dt = draw(st.sampled_from([None] + [d for d in DTYPES if f in SUMS or d.kind in "fc"]))
    else:
        f = draw(st.sampled_from(STATS))
        dt = draw(st.sampled_from([d for d in DTYPES if d.kind not in "fc"]))
    axis = draw(st.sampled_from([None] + list(range(a.ndim))))
    return Call(f, a, axis=axis, dtype=dt)


def _check_reduce(call, r):
    f, a = call.func, call.args[0]
    d = Ref.of(a).dense()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.asarray(f(d, **call.kwargs))
        if f in (np.var, np.std, np.nanvar, np.nanstd):
            # the statistic of the exact values, rounded (NumPy squares float16 in float16 and
            # overflows; a complex dtype= gives NumPy a complex variance with a zero imaginary part)
            src = d if call.kwargs["dtype"] is None else d.astype(call.kwargs["dtype"])  # (NumPy casts first)
            wide = src.astype(np.complex128 if src.dtype.kind == "c" else np.float64)
            want = np.asarray(f(wide, axis=call.kwargs["axis"])).astype(want.real.dtype)
    got = r.to_dense() if isinstance(r, COO) else np.asarray(r)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if f in (np.prod, np.nanprod) and want.dtype.kind == "c":
        # NumPy multiplies from the identity 1+0j, so a product that overflows gets a NaN part
        # ((1+0j) * (inf+0j) is inf+nanj); coosparse's product of the factors alone may keep the
        # exact part (inf+0j): an overflowed product is accepted when both overflowed
        over = ~np.isfinite(want) & ~np.isfinite(got)
        want = np.where(over, got, want)
    # (NumPy's own order of summation differs from the stored order: within rounding)
    assert_values_equal(got, want, want.dtype)


# ============================================================================ other libraries' operands
OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
             operator.pow, operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge,
             operator.and_, operator.or_, operator.xor]
UFUNCS = [np.add, np.subtract, np.multiply, np.divide, np.maximum, np.minimum, np.arctan2, np.hypot,
          np.equal, np.less, np.logical_and, np.logical_xor, np.copysign, np.fmod, np.power]


def _foreign_kinds():
    return ["torch", "torch sparse", "masked", "memoryview", "None", "str"]


def _foreign(kind, d):
    if kind.startswith("torch"):
        import torch

        t = torch.from_numpy(np.ascontiguousarray(d))
        return t.to_sparse() if kind == "torch sparse" else t
    if kind == "masked":
        return np.ma.masked_array(d, mask=np.arange(d.size).reshape(d.shape) % 2 == 0)
    if kind == "memoryview":
        return memoryview(np.ascontiguousarray(d))
    return {"None": None, "str": "x"}[kind]


@st.composite
def _foreign_call(draw):
    a = draw(coos(allow_wide=False, allow_odd=False, fill=False, dtype=draw(st.sampled_from(
        [np.float64, np.int64, np.bool_, np.float32])), shape=(tuple(draw(st.lists(st.integers(1, 3), min_size=1,
                                                                                  max_size=2))), ())))
    kind = draw(st.sampled_from(_foreign_kinds()))
    op = draw(st.sampled_from(OPERATORS + UFUNCS))
    if kind == "str" and op in (operator.mod, operator.mul, operator.add):
        op = operator.sub  # ("x" % a, "x" * a: the str's own operators)
    f = _foreign(kind, a.to_dense())
    return Call(op, *((a, f) if draw(st.booleans()) else (f, a)))


@st.composite
def _scipy_operand_call(draw):
    a = draw(coos(allow_wide=False, allow_odd=False, fill=False, dtype=np.float64,
                  shape=(tuple(draw(st.lists(st.integers(1, 4), min_size=2, max_size=2))), ())))
    b = draw(coos(shape=(a.shape, ()), allow_odd=False, fill=False, dtype=np.float64))
    fmt = draw(st.sampled_from(["coo", "csr", "csc"] + (["pydata"] if _has_pydata() else [])))
    op = draw(st.sampled_from([operator.add, operator.sub, operator.mul, operator.lt, np.maximum, np.hypot,
                               np.add, np.multiply]))
    b = _finite(b)
    if fmt == "pydata":
        import sparse

        return Call(op, _finite(a), sparse.COO.from_numpy(Ref.of(b).dense()))
    return Call(op, _finite(a), b.to_scipy(fmt))


def _has_pydata():
    try:
        import sparse  # noqa: F401  (pydata/sparse, when installed)
    except ImportError:
        return False
    return True


def _check_scipy_operand(call, r):
    a, s = call.args
    with np.errstate(all="ignore"):
        want = call.func(Ref.of(a).dense(), s.todense() if hasattr(s, "fill_value") else s.toarray())
    got = r.to_dense() if isinstance(r, COO) else np.asarray(r)
    assert_values_equal(got, want, want.dtype)


# ============================================================================ einsum with ellipses
@st.composite
def _ellipsis_spec(draw):
    """(spec, shapes): two operands with '...' (1-2 broadcast dims, sizes 1-2) and two letters each."""
    nb = [draw(st.integers(0, 2)) for _ in range(2)]
    letters = [draw(st.permutations("ijk"))[:2] for _ in range(2)]
    terms, shapes = [], []
    sizes = {"i": 2, "j": 3, "k": 2}
    for n, ls in zip(nb, letters):
        at = draw(st.integers(0, 2))
        t = ls[:at] + ["..."] + ls[at:]
        terms.append("".join(t))
        bshape = [draw(st.sampled_from([1, 2])) for _ in range(n)]
        shapes.append(tuple(sizes[c] for c in ls[:at]) + tuple(bshape) + tuple(sizes[c] for c in ls[at:]))
    out = draw(st.sampled_from(["", "...", "...i", "i...", "ik", "ki...", None]))
    spec = ",".join(terms) + ("" if out is None else "->" + out)
    return spec, shapes


def _einsum_numpy(spec, shapes):
    try:
        np.einsum(spec, *[np.ones(s) for s in shapes])
        return True
    except ValueError:
        return False


@st.composite
def _einsum_call(draw, valid=True):
    spec, shapes = draw(_ellipsis_spec())
    assume(_einsum_numpy(spec, shapes) == valid)
    ops = [_finite(draw(coos(shape=(s, ()), fill=False, allow_odd=False, dtype=np.float64))) for s in shapes]
    return Call(coosparse.einsum, spec, *ops)


def _check_einsum(call, r):
    spec, *ops = call.args
    want = np.einsum(spec, *[Ref.of(o).dense() for o in ops])
    got = r.to_dense() if isinstance(r, COO) else np.asarray(r)
    assert_values_equal(got, want, np.float64)


ROWS = [
    Row("shape arithmetic near 2**63", _limit_call(), _check_limit, _bad_limit_call(), (ValueError, MemoryError)),
    Row("signed zeros (to_dense, full, where)", _signed_call(), _check_signed),
    Row("reductions with every dtype=", _reduce_call(), _check_reduce, _reduce_call(valid=False), (TypeError,)),
    Row("operators and ufuncs with other libraries' arrays", st.nothing(), lambda c, r: None, _foreign_call(),
        (TypeError,)),
    Row("scipy.sparse and pydata/sparse operands", _scipy_operand_call(), _check_scipy_operand),
    Row("einsum with ellipses", _einsum_call(), _check_einsum, _einsum_call(valid=False), (ValueError,)),
]
