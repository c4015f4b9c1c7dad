"""The fuzz table: every public function, with how to draw its arguments and check it.

Each :class:`Row` names a public function and gives

- ``valid``: a hypothesis strategy of :class:`Call` objects that must succeed;
- ``check(call, result)``: compares ``result`` with a reference computed
  without coosparse kernels (``Ref``: a dict from index tuple to the summed
  dense block, exact for integers and bool, so it works at every shape,
  2**63 elements and more included);
- ``invalid``: a strategy of calls that must raise one of ``errors`` (the
  documented exception types), before anything is modified.

``tests/test_fuzz.py`` runs every row the same way: inputs are snapshotted and
must be unchanged afterwards (read-only inputs are drawn too), every True flag
of every COO result is verified, and failures must be documented types.

Adding a function (e.g. a ufunc, a reduction, indexing, matmul) is one row::

    ROWS.append(Row(
        "sum",                                   # test id
        valid=st.builds(lambda a, ax: Call(coosparse.sum, a, axis=ax), coos(), axes()),
        check=lambda call, r: assert_same(r, ref(call.args[0]).sum(call.kwargs["axis"])),
        invalid=st.builds(lambda a: Call(coosparse.sum, a, axis=99), coos()),
        errors=(ValueError,),
    ))

Strategies to build on: :func:`coos` (random COO: 1-4 sparse and 0-2 dense
dims, sizes 0-6 or huge, nnz 0/1/many, duplicates, true flag hints,
every dtype, fill values, read-only/non-contiguous/big-endian parts),
:func:`coo_pair` (two COOs of one shape), :func:`dense_like`, and the
``bad_*`` strategies for invalid arguments. Set ``long=True`` on a row whose
calls are slow; ``subprocess=True`` on a row whose invalid calls could crash
the interpreter (they then run in a child process).
"""
from __future__ import annotations

import dataclasses
import itertools
from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st

import coosparse
from coosparse import COO, SUPPORTED_DTYPES
from strategies import full_range_values
from strategies import values_of as small_values_of

WIDE = 2**40  # two dims of this size: 2**80 elements, the wide (two-word key) path


@dataclasses.dataclass
class Call:
    func: Callable
    args: tuple = ()
    kwargs: dict = dataclasses.field(default_factory=dict)

    def __init__(self, func, *args, **kwargs):
        self.func, self.args, self.kwargs = func, args, kwargs

    def __call__(self):
        return self.func(*self.args, **self.kwargs)

    def __repr__(self):
        parts = [_short(a) for a in self.args] + [f"{k}={_short(v)}" for k, v in self.kwargs.items()]
        return f"{getattr(self.func, '__name__', self.func)}({', '.join(parts)})"


def _short(x):
    if isinstance(x, COO):
        return (f"COO(indices={x.indices.tolist()}, values={x.values.tolist()}, shape={x.shape}, "
                f"dtype={x.dtype}, sorted={x.is_sorted}, unique={x.is_unique}, fill={x.fill_value!r})")
    if isinstance(x, np.ndarray):
        return f"array({x.tolist()}, dtype={x.dtype.str}, shape={x.shape})" if x.size < 40 else f"array{x.shape}"
    return repr(x)


@dataclasses.dataclass
class Row:
    name: str
    valid: Any  # strategy of Call
    check: Callable  # (call, result) -> None, raises AssertionError
    invalid: Any = None  # strategy of Call
    errors: tuple = (TypeError, ValueError, IndexError)
    long: bool = False
    subprocess: bool = False


# ============================================================================ references
def _acc(dtype):
    dtype = np.dtype(dtype)
    return np.float32 if dtype == np.float16 else (np.int64 if dtype.kind in "biu" else dtype)


class Ref:
    """Dense meaning of a COO as {index tuple: block}, duplicates summed in the array's dtype."""

    def __init__(self, blocks, shape, sparse_ndim, dtype, fill=0):
        self.blocks, self.shape, self.sparse_ndim = blocks, tuple(shape), sparse_ndim
        self.dtype, self.fill = np.dtype(dtype), fill

    @classmethod
    def of(cls, a):
        a = a.to("cpu")
        dense_shape = a.dense_shape
        acc = {}
        for i in range(a.nnz):
            key = tuple(int(v) for v in a.indices[:, i])
            v = np.asarray(a.values[i]).astype(_acc(a.dtype))
            acc[key] = acc[key] + v if key in acc else v.copy()
        blocks = {k: _from_acc(v, a.dtype).reshape(dense_shape) for k, v in acc.items()}
        return cls(blocks, a.shape, a.sparse_ndim, a.dtype, a.fill_value)

    @classmethod
    def of_dense(cls, x, sparse_ndim):
        x = np.asarray(x)
        x = x.astype(x.dtype.newbyteorder("=")) if not x.dtype.isnative else x
        blocks = {}
        for idx in itertools.product(*(range(n) for n in x.shape[:sparse_ndim])):
            blocks[idx] = x[idx]
        return cls(blocks, x.shape, sparse_ndim, x.dtype)

    def get(self, key):
        if key in self.blocks:
            return self.blocks[key]
        return np.full(self.shape[self.sparse_ndim:], self.fill, dtype=self.dtype)

    def dense(self):
        out = np.full(self.shape, self.fill, dtype=self.dtype)
        for k, v in self.blocks.items():
            out[k] = v
        return out

    def nonzero(self):
        """The blocks that differ from zero (explicit zeros and absent entries mean the same)."""
        return {k: v for k, v in self.blocks.items() if np.any(v != 0) or np.any(np.isnan(v))}


def _from_acc(v, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return v != 0
    with np.errstate(all="ignore"):
        return v.astype(dtype)


def assert_values_equal(got, want, dtype):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if np.dtype(dtype).kind in "fc":
        # by the width of a real part: complex64 rounds as float32
        part = np.dtype(dtype).itemsize // (2 if np.dtype(dtype).kind == "c" else 1)
        tol = {2: 2e-2, 4: 1e-4, 8: 1e-10}[part]
        np.testing.assert_allclose(got.astype(np.complex128), want.astype(np.complex128), rtol=tol, atol=tol,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def assert_same_meaning(result, want: Ref):
    """A COO result has ``want``'s shape, dtype, fill and dense meaning."""
    assert isinstance(result, COO), type(result)
    assert result.shape == want.shape, (result.shape, want.shape)
    assert result.dtype == want.dtype, (result.dtype, want.dtype)
    got = Ref.of(result)
    g, w = got.nonzero(), want.nonzero()
    keys = set(g) | set(w)
    for k in keys:
        assert_values_equal(got.get(k), want.get(k), want.dtype)


def verify_flags(a):
    """Every True flag of COO ``a`` is true (SPEC 1)."""
    if a.nnz <= 1:
        return
    idx = a.to("cpu").indices
    cols = [tuple(int(v) for v in idx[:, i]) for i in range(a.nnz)]
    if a.is_sorted:
        assert all(cols[i] <= cols[i + 1] for i in range(len(cols) - 1)), "sorted=True is false"
    if a.is_unique:
        assert len(set(cols)) == len(cols), "unique=True is false"


# ============================================================================ strategies
DTYPES = list(SUPPORTED_DTYPES)


def values_of(rng, n, dense_shape, dtype):
    """``strategies.values_of``; sometimes over the whole integer range (sums wrap) or with inf/NaN."""
    dtype = np.dtype(dtype)
    shape = (n,) + tuple(dense_shape)
    if dtype.kind in "iu" and rng.random() < 0.2:
        return full_range_values(rng, shape, dtype)
    x = small_values_of(rng, n, dense_shape, dtype)
    if dtype.kind in "fc" and x.size and rng.random() < 0.1:
        x.reshape(-1)[rng.integers(0, x.size)] = rng.choice([np.inf, -np.inf, np.nan])
    return x


@st.composite
def shapes(draw, min_sparse=1, max_sparse=4, max_dense=2, allow_wide=True):
    sparse_ndim = draw(st.integers(min_sparse, max_sparse))
    if allow_wide and sparse_ndim >= 2 and draw(st.integers(0, 9)) == 0:
        sparse = tuple(draw(st.sampled_from([WIDE, 3, 2**62])) for _ in range(sparse_ndim))
    else:
        sparse = tuple(draw(st.lists(st.integers(0, 6), min_size=sparse_ndim, max_size=sparse_ndim)))
    dense = tuple(draw(st.lists(st.integers(0, 3), min_size=0, max_size=max_dense)))
    return sparse, dense


def _layout(draw, rng, arr, allow_odd):
    """The array as given by a user: maybe read-only, non-contiguous, big-endian or a list."""
    if not allow_odd:
        return arr
    kind = draw(st.sampled_from(["plain"] * 5 + ["readonly", "noncontig", "bigendian"]))
    if kind == "readonly":
        arr = arr.copy()
        arr.flags.writeable = False
    elif kind == "noncontig" and arr.ndim:
        big = np.empty((arr.shape[0] * 2,) + arr.shape[1:], dtype=arr.dtype)
        big[::2] = arr
        arr = big[::2]
    elif kind == "bigendian" and arr.dtype.itemsize > 1 and arr.dtype.kind != "b":
        arr = arr.astype(arr.dtype.newbyteorder(">"))
    return arr


@st.composite
def coos(draw, shape=None, dtype=None, fill=True, allow_odd=True, allow_wide=True, min_sparse=1,
         max_nnz=30, check=None):
    """A random valid COO; flags passed as hints are true."""
    if shape is None:
        sparse_shape, dense_shape = draw(shapes(min_sparse=min_sparse, allow_wide=allow_wide))
    else:
        sparse_shape, dense_shape = shape
    dtype = np.dtype(dtype if dtype is not None else draw(st.sampled_from(DTYPES)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    total = 1
    for n in sparse_shape:
        total *= n
    nnz = 0 if total == 0 else draw(st.sampled_from([0, 1, 2, draw(st.integers(0, max_nnz))]))
    pool = max(1, min(total, nnz if draw(st.booleans()) else max(1, nnz // 3)))
    if total == 0:
        pool = 0
    cols = np.stack([rng.integers(0, min(n, 2**62), size=pool) for n in sparse_shape]) if sparse_shape \
        else np.zeros((0, pool), np.int64)
    pick = rng.integers(0, max(pool, 1), size=nnz)
    idx = cols[:, pick] if nnz else np.zeros((len(sparse_shape), 0), np.int64)
    make_unique = draw(st.booleans())
    make_sorted = draw(st.booleans())
    if make_unique and nnz:
        _, first = np.unique(idx.T, axis=0, return_index=True)
        idx = idx[:, np.sort(first)]
    if make_sorted and idx.shape[1]:
        idx = idx[:, np.lexsort(idx[::-1])]
    n = idx.shape[1]
    values = values_of(rng, n, dense_shape, dtype)
    fill_value = None
    if fill and draw(st.integers(0, 7)) == 0:
        fill_value = values_of(rng, 1, (), dtype)[0]
    idx_dtype = draw(st.sampled_from([np.int64, np.int64, np.int32, np.uint64]))
    if idx_dtype == np.int32 and any(s > 2**31 for s in sparse_shape):
        idx_dtype = np.int64
    indices = _layout(draw, rng, idx.astype(idx_dtype), allow_odd)
    values = _layout(draw, rng, values, allow_odd)
    check = draw(st.booleans()) if check is None else check
    return COO(indices, values, sparse_shape + dense_shape, sorted=make_sorted and draw(st.booleans()),
               unique=make_unique and draw(st.booleans()), check=check, fill_value=fill_value)


@st.composite
def coo_pair(draw, same_dtype=False, **kw):
    sparse_shape, dense_shape = draw(shapes())
    a = draw(coos(shape=(sparse_shape, dense_shape), **kw))
    b_dense = dense_shape
    if dense_shape and draw(st.integers(0, 3)) == 0:  # broadcast in the dense dims
        b_dense = tuple(1 if draw(st.booleans()) else n for n in dense_shape)
    b = draw(coos(shape=(sparse_shape, b_dense), dtype=a.dtype if same_dtype else None, **kw))
    return a, b


@st.composite
def dense_like(draw, a, dtype=None, broadcast=True):
    """A dense array broadcastable to COO ``a`` (small shapes only)."""
    dtype = np.dtype(dtype if dtype is not None else draw(st.sampled_from(DTYPES)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    shape = list(a.shape)
    if broadcast:
        shape = [1 if draw(st.integers(0, 4)) == 0 else n for n in shape]
        if shape and draw(st.integers(0, 4)) == 0:
            shape = shape[draw(st.integers(0, len(shape))):]  # fewer leading dims
    x = values_of(rng, 1, tuple(shape), dtype)[0]
    return _layout(draw, rng, np.asarray(x), True)


def small(a):
    """A COO whose dense form is small enough to materialise."""
    return a.size <= 4096


def promotes_duplicates(a, dtype):
    """True when ``a``'s duplicates would be promoted before summing (multiply keeps them apart)."""
    return not a.is_unique and a.nnz > 1 and a.dtype != dtype and len(Ref.of(a).blocks) < a.nnz


# ---------------------------------------------------------------------------- bad inputs
BAD_SCALARS = [None, "a", object(), [1, "x"], {"a": 1}]


@st.composite
def bad_coo_parts(draw):
    """(indices, values, shape, kwargs) that COO(..., check=True) must refuse."""
    kind = draw(st.sampled_from(["float_idx", "ndim", "length", "range", "negative", "dense_shape",
                                 "dtype", "shape", "flag_sorted", "flag_unique", "fill"]))
    idx = np.array([[0, 1, 1], [2, 0, 0]])
    val = np.array([1.0, 2.0, 3.0])
    shape, kw = (3, 3), {}
    if kind == "float_idx":
        idx = idx.astype(float)
    elif kind == "ndim":
        idx = idx[0]
    elif kind == "length":
        val = val[:2]
    elif kind == "range":
        idx = idx.copy()
        idx[1, 1] = draw(st.sampled_from([3, 10**9, 2**62]))
    elif kind == "negative":
        idx = idx.copy()
        idx[0, 2] = -draw(st.integers(1, 2**62))
    elif kind == "dense_shape":
        val = np.ones((3, 2))
    elif kind == "dtype":
        val = np.array(["a", "b", "c"]) if draw(st.booleans()) else np.ones(3, dtype=object)
    elif kind == "shape":
        shape = draw(st.sampled_from([(3, -1), ("a", 3), None, (3,)]))
    elif kind == "flag_sorted":
        kw["sorted"] = True  # columns (0,2) (1,0) (1,0): sorted, not unique; reversed: unsorted
        idx = idx[:, ::-1].copy()
    elif kind == "flag_unique":
        kw["unique"] = True
    elif kind == "fill":
        val = np.array([1, 2, 3])
        kw["fill_value"] = draw(st.sampled_from([0.5, "x", np.ones(2)]))
    return idx, val, shape, kw


@st.composite
def unchecked_out_of_range(draw):
    """A COO built with check=False whose indices leave the shape (the crash-prone input)."""
    a = draw(coos(allow_wide=False, fill=False, allow_odd=False, check=True,
                  shape=(tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))),
                         tuple(draw(st.lists(st.integers(1, 2), max_size=1))))))
    if a.nnz == 0:
        return None
    idx = a.indices.copy()
    d = draw(st.integers(0, a.sparse_ndim - 1))
    j = draw(st.integers(0, a.nnz - 1))
    idx[d, j] = draw(st.sampled_from([a.sparse_shape[d], a.sparse_shape[d] + 7, 10**9, 2**40, -1,
                                      -(10**9)]))
    return COO(idx, a.values, a.shape, check=False)


# ============================================================================ the table
def _check_coalesce(call, r):
    a = call.args[0]
    assert r.is_sorted and r.is_unique
    assert_same_meaning(r, Ref.of(a) if not call.kwargs.get("prune") else Ref.of(a))
    if call.kwargs.get("prune") and r.nnz:
        # pruned: entries equal to the fill (NaN to a NaN fill) are dropped; the rest differ from it
        blocks = r.values.reshape(r.nnz, -1)
        fill = a.fill_value
        differ = ~np.isnan(blocks) if blocks.dtype.kind in "fc" and np.isnan(fill) else blocks != fill
        assert blocks.size == 0 or np.all(np.any(differ, axis=1))


def _check_to_dense(call, r):
    a = call.args[0]
    want = Ref.of(a).dense()
    assert r.dtype == a.dtype and r.shape == a.shape
    assert_values_equal(r, want, a.dtype)


def _check_from_dense(call, r):
    x = np.asarray(call.args[0])
    sn = call.kwargs.get("sparse_ndim", x.ndim)
    assert r.is_sorted and r.is_unique
    assert_values_equal(r.to_dense(), x, x.dtype)
    assert_same_meaning(r, Ref.of_dense(x, sn))


def _mul(x, y, dtype):
    with np.errstate(all="ignore"):
        return np.asarray(x).astype(dtype) * np.asarray(y).astype(dtype)


def _check_multiply_sparse(call, r):
    # SPEC 4: the probe (documented side rule) contributes the sum of its duplicates,
    # the source's duplicates stay separate entries (which matters once a product overflows)
    from coosparse.ops.elementwise.intersect import choose_sides

    src, probe = choose_sides(*call.args)
    dtype = np.result_type(src.dtype, probe.dtype)
    rp = Ref.of(probe)
    dense = r.dense_shape
    keys, vals = [], []
    for i in range(src.nnz):
        k = tuple(int(v) for v in src.indices[:, i])
        if k in rp.blocks:
            keys.append(k)
            vals.append(_mul(np.broadcast_to(src.values[i], dense), np.broadcast_to(rp.blocks[k], dense), dtype))
    want = COO(np.array(keys, dtype=np.int64).T.reshape(src.sparse_ndim, len(keys)),
               np.array(vals, dtype=dtype).reshape((len(keys),) + tuple(dense)), r.shape, check=False)
    assert_same_meaning(r, Ref.of(want))


def _check_multiply_dense(call, r):
    a, x = call.args
    x = np.asarray(x)
    dtype = np.result_type(a.dtype, x.dtype)
    xb = np.broadcast_to(x, a.shape)
    ra = Ref.of(a)
    want = {k: _mul(v, xb[k], dtype) for k, v in ra.blocks.items()}
    assert_same_meaning(r, Ref(want, a.shape, a.sparse_ndim, dtype))
    if r.dtype != a.dtype and not a.is_unique:
        # promotion: duplicates are summed in their own dtype first (SPEC 1), so the pattern is coalesced
        assert r.is_coalesced
        return
    assert np.array_equal(r.indices, a.indices.astype(np.int64))
    assert (r.is_sorted, r.is_unique) == (a.is_sorted, a.is_unique)


def _check_multiply_scalar(call, r):
    a, s = call.args
    dtype = r.dtype
    with np.errstate(all="ignore"):
        want = {k: (np.asarray(v) * s).astype(dtype) for k, v in Ref.of(a).blocks.items()}
    assert_same_meaning(r, Ref(want, a.shape, a.sparse_ndim, dtype))


def _check_sparse_mask(call, r):
    x, mask = call.args
    assert r.indices.shape == mask.indices.shape and np.array_equal(r.indices, mask.indices.astype(np.int64))
    assert (r.is_sorted, r.is_unique) == (mask.is_sorted, mask.is_unique)
    ref = Ref.of(x) if isinstance(x, COO) else Ref.of_dense(x, mask.sparse_ndim)
    dt = x.dtype if x.dtype.isnative else x.dtype.newbyteorder("=")
    for j in range(mask.nnz):
        key = tuple(int(v) for v in mask.indices[:, j])
        assert_values_equal(r.values[j], ref.get(key), dt)


def _check_mask_projection(call, r):
    x, mask = call.args
    acc = call.kwargs.get("accumulate", False)
    assert np.array_equal(r.indices, x.indices.astype(np.int64))
    assert (r.is_sorted, r.is_unique) == (x.is_sorted, x.is_unique)
    counts = {}
    for j in range(mask.nnz):
        key = tuple(int(v) for v in mask.indices[:, j])
        counts[key] = counts.get(key, 0) + 1
    for j in range(x.nnz):
        key = tuple(int(v) for v in x.indices[:, j])
        c = counts.get(key, 0)
        v = np.asarray(x.values[j])
        with np.errstate(all="ignore"):
            want = np.zeros_like(v) if c == 0 else (v * np.asarray(c).astype(x.dtype) if acc else v)
        assert_values_equal(r.values[j], want.astype(x.dtype), x.dtype)


def _check_union(call, r):
    a, b = call.args
    negate = call.func is coosparse.subtract
    dtype = np.result_type(a.dtype, b.dtype)
    if isinstance(b, COO) and isinstance(a, COO):
        ra, rb = Ref.of(a), Ref.of(b)
        dense = r.dense_shape
        want = {}
        with np.errstate(all="ignore"):
            for k in set(ra.blocks) | set(rb.blocks):
                va = np.broadcast_to(ra.get(k), dense).astype(dtype)
                vb = np.broadcast_to(rb.get(k), dense).astype(dtype)
                want[k] = va - vb if negate else va + vb
        assert_same_meaning(r, Ref(want, r.shape, r.sparse_ndim, dtype))
        if a.is_coalesced and b.is_coalesced or call.kwargs.get("coalesce"):
            assert r.is_coalesced
        return
    coo, x = (a, b) if isinstance(a, COO) else (b, a)
    da = Ref.of(coo).dense().astype(dtype)
    xd = np.broadcast_to(np.asarray(x), coo.shape).astype(dtype)
    with np.errstate(all="ignore"):
        want = (da - xd if isinstance(a, COO) else xd - da) if negate else da + xd
    if isinstance(r, COO):
        # SPEC 9: sparse only where the dense operand's own values make one background
        with np.errstate(all="ignore"):
            fill, xs = np.asarray(coo.fill_value).astype(dtype), np.asarray(x).astype(dtype)
            bg = (fill - xs if isinstance(a, COO) else xs - fill) if negate else fill + xs
        assert np.unique(bg.reshape(-1)).size <= 1, (x, coo.fill_value, r)
        r = Ref.of(r).dense()
    assert_values_equal(r, want, dtype)


def _check_ass(call, r):
    inp, src, size, stride, offset = call.args
    want = np.array(inp, order="C", copy=True).astype(inp.dtype.newbyteorder("="))
    flat = want.reshape(-1)
    for i in itertools.product(*(range(n) for n in size)):
        flat[offset + sum(a * s for a, s in zip(i, stride))] = np.asarray(src)[i]
    assert_values_equal(r, want, want.dtype)


def _check_random(call, r):
    verify_flags(r)
    assert r.shape == tuple(call.args[0]) and r.nnz == call.kwargs["nnz"]
    assert r.is_unique == (not call.kwargs.get("duplicates", False)) or r.nnz <= 1
    idx = r.indices
    for d, n in enumerate(r.sparse_shape):
        assert idx.shape[1] == 0 or (idx[d].min() >= 0 and idx[d].max() < n)


def _check_ctor(call, r):
    idx, val, shape = call.args
    assert r.shape == tuple(shape) and r.indices.dtype == np.int64 and r.indices.flags.c_contiguous
    np.testing.assert_array_equal(r.indices, np.asarray(idx).astype(np.int64))


def _check_scipy_roundtrip(call, r):
    a = call.args[0]
    back = coosparse.from_scipy(r)
    assert_same_meaning(back, Ref.of(a))


def _check_torch_roundtrip(call, r):
    from coosparse.interop.torch import from_torch

    a = call.args[0]
    back = from_torch(r)
    assert_same_meaning(back, Ref.of(a))
    assert r.is_coalesced() == a.is_coalesced


def _zero_fill(a):
    return a if a.fill_value == 0 else a._with(fill_value=0)


def _native(x):
    return x.astype(x.dtype.newbyteorder("=")) if not x.dtype.isnative else x


@st.composite
def _mul_dense_call(draw):
    a = _zero_fill(draw(coos(allow_wide=False)))
    if not small(a):
        a = draw(coos(allow_wide=False, shape=((2, 3), ())))
        a = _zero_fill(a)
    x = draw(dense_like(a))
    dtype = np.result_type(a.dtype, _native(x).dtype)
    if dtype not in SUPPORTED_DTYPES or promotes_duplicates(a, dtype):
        a = a.coalesce()
    return Call(coosparse.multiply, a, x)


@st.composite
def _mul_sparse_call(draw):
    a, b = draw(coo_pair())
    a, b = _zero_fill(a), _zero_fill(b)
    dtype = np.result_type(a.dtype, b.dtype)
    if promotes_duplicates(a, dtype):
        a = a.coalesce()
    if promotes_duplicates(b, dtype):
        b = b.coalesce()
    return Call(coosparse.multiply, a, b, compact=draw(st.booleans()))


@st.composite
def _mul_scalar_call(draw):
    a = draw(coos())
    s = draw(st.sampled_from([0, 1, -2, 2.5, True, np.float32(1.5), np.int8(3), 1 + 2j]))
    dtype = np.result_type(a.dtype, s)
    if dtype not in SUPPORTED_DTYPES or (a.dtype.kind in "biu" and isinstance(s, int) and s < 0
                                         and a.dtype.kind == "u"):
        s = 1
    if promotes_duplicates(a, np.result_type(a.dtype, s)):
        a = a.coalesce()
    return Call(coosparse.multiply, a, s)


@st.composite
def _sparse_mask_call(draw):
    mask = _zero_fill(draw(coos(allow_wide=False)))
    if draw(st.booleans()):
        x = draw(coos(shape=(mask.sparse_shape, mask.dense_shape)))
        return Call(coosparse.sparse_mask, _zero_fill(x), mask)
    if not small(mask):
        mask = _zero_fill(draw(coos(shape=((3, 2), ()), allow_wide=False)))
    x = draw(dense_like(mask, broadcast=False))
    return Call(coosparse.sparse_mask, x, mask)


@st.composite
def _mask_projection_call(draw):
    x = _zero_fill(draw(coos()))
    mask = draw(coos(shape=(x.sparse_shape, ())))
    return Call(coosparse.mask_projection, x, mask, accumulate=draw(st.booleans()))


@st.composite
def _union_call(draw):
    op = draw(st.sampled_from([coosparse.add, coosparse.subtract]))
    if draw(st.booleans()):
        a, b = draw(coo_pair())
        a, b = _zero_fill(a), _zero_fill(b)
        if op is coosparse.subtract and np.result_type(a.dtype, b.dtype) == np.bool_:
            a = a.astype(np.int8)
        return Call(op, a, b, coalesce=draw(st.booleans()))
    a = _zero_fill(draw(coos(allow_wide=False)))
    if not small(a):
        a = _zero_fill(draw(coos(shape=((3, 2), (2,)), allow_wide=False)))
    x = draw(dense_like(a))
    x = np.broadcast_to(x, a.shape) if draw(st.booleans()) else np.array(np.broadcast_to(x, a.shape))
    if op is coosparse.subtract and np.result_type(a.dtype, _native(x).dtype) == np.bool_:
        x = x.astype(np.int8)
    return Call(op, *((a, x) if draw(st.booleans()) else (x, a)))


@st.composite
def _ass_call(draw):
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=3)))
    inp = _layout(draw, rng, np.asarray(values_of(rng, 1, shape, dtype)[0]), True)
    n = int(np.prod(shape))
    d = draw(st.integers(0, 3))
    size = tuple(draw(st.lists(st.integers(0, 3), min_size=d, max_size=d)))
    stride = tuple(draw(st.lists(st.integers(-3, 3), min_size=d, max_size=d)))
    lo = sum((k - 1) * s for k, s in zip(size, stride) if s < 0 and k)
    hi = sum((k - 1) * s for k, s in zip(size, stride) if s > 0 and k)
    total = int(np.prod(size))
    if total and (hi - lo >= n):
        size = tuple(min(k, 1) for k in size)
        lo = hi = 0
    if n == 0:
        d = max(d, 1)
        size, stride = (0,) + size[1:] if size else (0,), stride if stride else (1,)
        size, stride = size[:d], (stride + (1,) * d)[:d]
    offset = -lo if not total or n == 0 else draw(st.integers(-lo, max(-lo, n - 1 - hi)))
    src = values_of(rng, 1, size, dtype)[0]
    return Call(coosparse.as_strided_scatter, inp, np.asarray(src), size, stride, offset)


@st.composite
def _bad_ass_call(draw):
    inp = np.zeros((3, 3))
    kind = draw(st.sampled_from(["oob", "neg_offset", "len", "src_shape", "src_dtype", "dtype", "types"]))
    if kind == "oob":
        return Call(coosparse.as_strided_scatter, inp, np.ones(2), (2,), (draw(st.integers(8, 2**62)),), 1)
    if kind == "neg_offset":
        return Call(coosparse.as_strided_scatter, inp, np.ones(1), (1,), (1,), -1)
    if kind == "len":
        return Call(coosparse.as_strided_scatter, inp, np.ones(2), (2,), (1, 1), 0)
    if kind == "src_shape":
        return Call(coosparse.as_strided_scatter, inp, np.ones(3), (2,), (1,), 0)
    if kind == "src_dtype":
        return Call(coosparse.as_strided_scatter, inp.astype(np.int8), np.ones(2), (2,), (1,), 0)
    if kind == "dtype":
        return Call(coosparse.as_strided_scatter, inp.astype(object), np.ones(2), (2,), (1,), 0)
    return Call(coosparse.as_strided_scatter, inp, np.ones(2), "ab", (1,), 0)


@st.composite
def _bad_binary_call(draw, func):
    a = _zero_fill(draw(coos(allow_wide=False, shape=((3, 2), ()))))
    # (a non-zero fill is valid: the result's fill is the op of the fills)
    # (operands of different layouts are aligned by the engine: not an error)
    kind = draw(st.sampled_from(["type", "shape", "dense_shape", "kw"]))
    if kind == "type":
        return Call(func, a, draw(st.sampled_from(BAD_SCALARS)))
    if kind == "shape":
        return Call(func, a, draw(coos(shape=((4, 2), ()))))
    if kind == "dense_shape":
        return Call(func, a, np.ones((2, 3, 3)))  # (3, 2) and (3, 3) do not broadcast
    kw = "compact" if func is coosparse.multiply else "coalesce"
    return Call(func, a, a, **{kw: "yes"})


@st.composite
def _bad_mask_call(draw, func):
    a = _zero_fill(draw(coos(allow_wide=False, shape=((3, 2), ()))))
    kind = draw(st.sampled_from(["mask_type", "shape", "fill", "accumulate"]))
    if kind == "mask_type":
        return Call(func, a, draw(st.sampled_from(BAD_SCALARS + [np.ones((3, 2))])))
    if kind == "shape":
        return Call(func, a, draw(coos(shape=((2, 3), ()))))
    if kind == "fill":
        return Call(func, COO(a.indices, a.values, a.shape, fill_value=1), a)
    if func is coosparse.mask_projection:
        return Call(func, a, a, accumulate="yes")
    return Call(func, draw(st.sampled_from(BAD_SCALARS)), a)


@st.composite
def _unchecked_call(draw):
    a = draw(unchecked_out_of_range())
    if a is None:
        a = COO(np.array([[0, 7]]), np.ones(2), (3,), check=False)
    if a.nnz == 1:  # nnz <= 1 arrays are coalesced: coalesce returns them without reading them
        a = COO(np.repeat(a.indices, 2, axis=1), np.repeat(a.values, 2, axis=0), a.shape, check=False)
    good = COO(np.zeros((a.sparse_ndim, 0), np.int64), np.zeros((0,) + a.dense_shape), a.shape)
    other = draw(coos(shape=(a.sparse_shape, a.dense_shape), dtype=a.dtype, fill=False, check=True))
    ops = [
        Call(coosparse.coalesce, a),
        Call(coosparse.to_dense, a),
        Call(coosparse.sparse_mask, np.ones(a.shape, a.dtype), a),
        Call(coosparse.sparse_mask, a, other),
        Call(coosparse.sparse_mask, other, a) if other.nnz else Call(coosparse.coalesce, a),
        # (a dense operand of one element is a constant: it reads no index, so it is not one of these)
        Call(coosparse.multiply, a, np.ones(a.shape)) if a.size > 1 else Call(coosparse.coalesce, a),
        Call(coosparse.multiply, a, other, compact=False) if other.nnz else Call(coosparse.to_dense, a),
        Call(coosparse.mask_projection, a, other),
        Call(coosparse.add, a, np.ones(a.shape)) if a.size > 1 else Call(coosparse.to_dense, a),
        Call(coosparse.add, a, good, coalesce=True),
    ] + _unchecked_products(a)
    return draw(st.sampled_from(ops))


def _unchecked_products(a):
    """matmul in every role of ``a`` (SpMV/SpMM, dense x COO, SpGEMM as A and as B) and sampled_matmul."""
    n = a.shape[-1]
    lead = np.ones((2, a.shape[-2])) if a.ndim >= 2 else np.ones((2, n))
    x = np.ones(a.shape[:-1] + (2,)) if a.ndim >= 2 else np.ones(2)
    y = np.ones(a.shape[:-2] + (2, n))
    return [
        Call(coosparse.matmul, a, np.ones((n, 2))),
        Call(coosparse.matmul, a, np.ones(n)),
        Call(coosparse.matmul, lead if a.ndim >= 2 else np.ones(n), a),
        Call(coosparse.matmul, a, coosparse.from_dense(np.ones((n, 2)))),
        Call(coosparse.matmul, coosparse.from_dense(lead), a),
        Call(coosparse.sampled_matmul, a, x, y),
    ]


# ---------------------------------------------------------------------------- linear algebra
def _finite(a):
    """``a`` with inf/NaN values replaced by 1: a dense reference multiplies them by the zeros a COO
    never stores (0 * inf), which the sparse product rightly never forms."""
    if a.dtype.kind not in "fc" or a.nnz == 0:
        return a
    v = np.asarray(a.values)
    v = np.where(np.isfinite(v), v, np.ones((), v.dtype)).astype(v.dtype)
    return COO(a.indices, v, a.shape, sorted=a.is_sorted, unique=a.is_unique, check=False, fill_value=a.fill_value)


def _dense_of(x):
    return Ref.of(x).dense() if isinstance(x, COO) else _native(np.asarray(x))


def _product_dims(draw):
    """(batch, m, k, n) of a product: 0-2 batch dims of size 1-2, matrix sizes 0-4."""
    batch = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))
    return (batch,) + tuple(draw(st.integers(0, 4)) for _ in range(3))


def _operand(draw, shape, sparse):
    """A COO (hybrid sometimes, zero fill, finite values) or a dense array (odd layouts) of ``shape``."""
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    if sparse:
        sd = draw(st.integers(1, len(shape)))
        return _finite(_zero_fill(draw(coos(shape=(shape[:sd], shape[sd:]), dtype=dtype, allow_wide=False))))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = small_values_of(rng, 1, shape, dtype)[0] if shape else np.asarray(small_values_of(rng, 1, (), dtype)[0])
    return _layout(draw, rng, np.asarray(x, dtype=dtype), True)


@st.composite
def _matmul_call(draw):
    batch, m, k, n = _product_dims(draw)
    kind = draw(st.sampled_from(["coo@dense", "dense@coo", "coo@coo", "vector"]))
    if kind == "vector":  # a 1-D operand on one side (NumPy's promotion and removal)
        left = draw(st.booleans())
        sa = (k,) if left else batch + (m, k)
        sb = batch + (k, n) if left else (k,)
        sparse_a = draw(st.booleans())
        return Call(coosparse.matmul, _operand(draw, sa, sparse_a), _operand(draw, sb, not sparse_a))
    # the second operand may lack the batch dims (broadcast)
    sb = (batch if draw(st.booleans()) else ()) + (k, n)
    a = _operand(draw, batch + (m, k), kind != "dense@coo")
    b = _operand(draw, sb, kind != "coo@dense")
    return Call(coosparse.matmul, a, b)


def _check_matmul(call, r):
    a, b = call.args
    dtype = np.result_type(a.dtype, b.dtype)
    assert r.dtype == dtype, (r.dtype, dtype)
    acc = _acc(dtype)
    with np.errstate(all="ignore"):
        want = _from_acc(np.matmul(_dense_of(a).astype(acc), _dense_of(b).astype(acc)), dtype)
    if isinstance(a, COO) and isinstance(b, COO):
        assert isinstance(r, COO) and r.is_sorted and r.is_unique
        assert_values_equal(Ref.of(r).dense(), want, dtype)
    else:
        assert isinstance(r, np.ndarray), type(r)
        assert_values_equal(r, want, dtype)


@st.composite
def _sampled_matmul_call(draw):
    batch, m, k, n = _product_dims(draw)
    mask = draw(coos(shape=draw(st.sampled_from([(batch + (m, n), ()), (batch + (m,), (n,))])),
                     allow_wide=False))
    x = _operand(draw, (batch if draw(st.booleans()) else ()) + (m, k), False)
    y = _operand(draw, batch + (k, n), False)
    return Call(coosparse.sampled_matmul, mask, x, y)


def _check_sampled_matmul(call, r):
    mask, x, y = call.args
    dtype = np.result_type(x.dtype, y.dtype)
    assert r.dtype == dtype and r.shape == mask.shape, (r.dtype, dtype, r.shape)
    assert np.array_equal(r.indices, mask.indices) and (r.is_sorted, r.is_unique) == (mask.is_sorted, mask.is_unique)
    acc = _acc(dtype)
    with np.errstate(all="ignore"):
        full = _from_acc(np.matmul(_dense_of(x).astype(acc), _dense_of(y).astype(acc)), dtype)
    full = np.broadcast_to(full, mask.shape)
    for i in range(r.nnz):
        assert_values_equal(r.values[i], full[tuple(int(v) for v in r.indices[:, i])], dtype)


@st.composite
def _bad_product_call(draw):
    a = _zero_fill(draw(coos(allow_wide=False, shape=((3, 2), ()))))
    kind = draw(st.sampled_from(["shape", "fill", "scalar", "type", "mask_type", "mask_shape", "sparse_factor"]))
    if kind == "shape":
        return Call(coosparse.matmul, a, draw(st.sampled_from([np.ones((3, 2)), np.ones(3), a])))
    if kind == "fill":
        return Call(coosparse.matmul, COO(a.indices, a.values, a.shape, fill_value=1), np.ones((2, 2)))
    if kind == "scalar":
        return Call(coosparse.matmul, a, draw(st.sampled_from([2.0, np.float64(2.0), np.ones(())])))
    if kind == "type":
        return Call(coosparse.matmul, a, draw(st.sampled_from(BAD_SCALARS)))
    if kind == "mask_type":
        return Call(coosparse.sampled_matmul, np.ones((3, 2)), np.ones((3, 4)), np.ones((4, 2)))
    if kind == "mask_shape":
        return Call(coosparse.sampled_matmul, a, np.ones((2, 4)), np.ones((4, 3)))
    return Call(coosparse.sampled_matmul, a, a, np.ones((2, 2)))


def _never(call, r):
    raise AssertionError(f"expected an IndexError, got {r!r}")


def _ctor_valid():
    @st.composite
    def call(draw):
        a = draw(coos(check=True))
        idx = a.indices if not draw(st.booleans()) else a.indices.tolist()
        return Call(COO, idx, a.values, a.shape, sorted=a.is_sorted, unique=a.is_unique,
                    check=draw(st.booleans()))
    return call()


@st.composite
def _bad_ctor(draw):
    idx, val, shape, kw = draw(bad_coo_parts())
    return Call(COO, idx, val, shape, **kw)


@st.composite
def _coalesce_call(draw):
    return Call(coosparse.coalesce, draw(coos()), prune=draw(st.booleans()))


@st.composite
def _to_dense_call(draw):
    a = draw(coos(allow_wide=False))
    if not small(a):
        a = draw(coos(shape=((3, 4), (2,))))
    return Call(coosparse.to_dense, a, order=draw(st.sampled_from(["C", "F"])))


@st.composite
def _from_dense_call(draw):
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=4)))
    x = values_of(rng, 1, shape, dtype)[0]
    x = np.where(rng.random(shape) < 0.6, np.zeros((), dtype), x) if shape else np.asarray(x)
    x = _layout(draw, rng, np.asarray(x, dtype=dtype), True)
    return Call(coosparse.from_dense, x, sparse_ndim=draw(st.integers(0, len(shape))))


@st.composite
def _random_call(draw):
    sparse_shape, dense_shape = draw(shapes(allow_wide=True))
    total = int(np.prod(sparse_shape, dtype=object))
    dup = draw(st.booleans())
    nnz = draw(st.integers(0, min(total, 30))) if total else 0
    return Call(coosparse.random, sparse_shape + dense_shape, nnz=nnz, duplicates=dup,
                sorted=draw(st.booleans()), dtype=draw(st.sampled_from(DTYPES)),
                sparse_ndim=len(sparse_shape), seed=draw(st.integers(0, 2**32 - 1)))


@st.composite
def _bad_random_call(draw):
    kind = draw(st.sampled_from(["nnz_float", "too_many", "density", "both", "neg", "dtype", "sparse_ndim"]))
    if kind == "nnz_float":
        return Call(coosparse.random, (5,), nnz=2.7)
    if kind == "too_many":
        return Call(coosparse.random, (2, 2), nnz=5)
    if kind == "density":
        return Call(coosparse.random, (5,), density=1.5)
    if kind == "both":
        return Call(coosparse.random, (5,), nnz=1, density=0.1)
    if kind == "neg":
        return Call(coosparse.random, (5,), nnz=-1)
    if kind == "dtype":
        return Call(coosparse.random, (5,), nnz=1, dtype="U3")
    return Call(coosparse.random, (5,), nnz=1, sparse_ndim=3)


@st.composite
def _to_scipy_call(draw):
    a = _zero_fill(draw(coos(allow_wide=False, shape=(tuple(draw(st.lists(st.integers(1, 6), min_size=2,
                                                                            max_size=2))), ()))))
    if a.dtype == np.float16:
        a = a.astype(np.float32)
    return Call(coosparse.COO.to_scipy, a, format=draw(st.sampled_from(["coo", "csr", "csc"])))


@st.composite
def _to_torch_call(draw):
    from coosparse.interop.torch import to_torch

    a = _zero_fill(draw(coos(allow_wide=False, allow_odd=False)))
    return Call(to_torch, a)


ROWS = [
    Row("COO", _ctor_valid(), _check_ctor, _bad_ctor(), (TypeError, ValueError, IndexError)),
    Row("coalesce", _coalesce_call(), _check_coalesce,
        st.builds(lambda x: Call(coosparse.coalesce, x), st.sampled_from(BAD_SCALARS + [np.ones(3)])),
        (TypeError,)),
    Row("to_dense", _to_dense_call(), _check_to_dense,
        st.builds(lambda x: Call(coosparse.to_dense, x), st.sampled_from(BAD_SCALARS + [np.ones(3)])),
        (TypeError,)),
    Row("from_dense", _from_dense_call(), _check_from_dense,
        st.sampled_from([Call(coosparse.from_dense, np.ones((2, 2)), sparse_ndim=3),
                         Call(coosparse.from_dense, np.array(["a"])),
                         Call(coosparse.from_dense, np.ones(2), sparse_ndim=1.5)]),
        (TypeError, ValueError)),
    Row("multiply(COO, COO)", _mul_sparse_call(), _check_multiply_sparse,
        _bad_binary_call(coosparse.multiply), (TypeError, ValueError)),
    Row("multiply(COO, dense)", _mul_dense_call(), _check_multiply_dense,
        _bad_binary_call(coosparse.multiply), (TypeError, ValueError)),
    Row("multiply(COO, scalar)", _mul_scalar_call(), _check_multiply_scalar),
    Row("sparse_mask", _sparse_mask_call(), _check_sparse_mask, _bad_mask_call(coosparse.sparse_mask),
        (TypeError, ValueError)),
    Row("mask_projection", _mask_projection_call(), _check_mask_projection,
        _bad_mask_call(coosparse.mask_projection), (TypeError, ValueError)),
    Row("add/subtract", _union_call(), _check_union, _bad_binary_call(coosparse.add),
        (TypeError, ValueError)),
    Row("as_strided_scatter", _ass_call(), _check_ass, _bad_ass_call(), (TypeError, ValueError, IndexError)),
    Row("random", _random_call(), _check_random, _bad_random_call(), (TypeError, ValueError)),
    Row("to_scipy/from_scipy", _to_scipy_call(), _check_scipy_roundtrip,
        st.builds(lambda a: Call(coosparse.COO.to_scipy, a, format="dia"), coos(shape=((2, 2), ()))),
        (ValueError,)),
    Row("to_torch/from_torch", _to_torch_call(), _check_torch_roundtrip),
    Row("unchecked out-of-range indices", st.nothing(), _never, _unchecked_call(), (IndexError,),
        subprocess=True),
    # ---- linear algebra
    Row("matmul", _matmul_call(), _check_matmul, _bad_product_call(), (TypeError, ValueError)),
    Row("sampled_matmul", _sampled_matmul_call(), _check_sampled_matmul, _bad_product_call(),
        (TypeError, ValueError)),
]


# ============================================================================ shape, indexing and joining
def _elements(ref):
    """{full index tuple (sparse + dense): value} of the stored elements of a ``Ref`` (exact at any size)."""
    dense_shape = ref.shape[ref.sparse_ndim:]
    out = {}
    for k, block in ref.blocks.items():
        b = np.asarray(block).reshape(dense_shape)
        for j in itertools.product(*(range(n) for n in dense_shape)):
            out[k + j] = b[j]
    return out


def _assert_elements(r, want, shape, dtype, fill):
    """COO ``r`` has ``shape``/``dtype``/``fill`` and the elements ``want`` (unstored ones are ``fill``)."""
    assert isinstance(r, COO), type(r)
    assert r.shape == tuple(shape) and r.dtype == dtype, (r.shape, r.dtype, shape, dtype)
    assert_values_equal(r.fill_value, fill, dtype)
    got = _elements(Ref.of(r))
    for k in set(got) | set(want):
        assert_values_equal(got.get(k, fill), want.get(k, fill), dtype)


def _flat(index, shape):
    f = 0
    for i, n in zip(index, shape):
        f = f * n + i
    return f


def _unflat(f, shape):
    out = []
    for n in reversed(shape):
        out.append(f % n if n else 0)
        f = f // n if n else 0
    return tuple(reversed(out))


@st.composite
def _index_keys(draw, shape):
    """A valid NumPy key for ``shape``: integers (negative too), slices (any step), None, an
    Ellipsis, and either up to two integer arrays of one shape or one boolean array."""
    mode = draw(st.sampled_from(["basic", "basic", "ints", "bool"]))
    n_int_arrays = draw(st.integers(1, 2)) if mode == "ints" else 0
    arr_shape = draw(st.sampled_from([(0,), (1,), (3,), (2, 2)]))
    bool_axis = draw(st.integers(0, len(shape) - 1)) if mode == "bool" and shape else None
    items = []
    for ax, n in enumerate(shape):
        kinds = ["full", "slice", "slice"] + (["int"] if n else [])
        if n_int_arrays and (n or arr_shape == (0,)):
            kinds += ["array"] * 3
        kind = "bool" if ax == bool_axis else draw(st.sampled_from(kinds))
        if kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            bound = st.none() | st.integers(-n - 2, n + 2)
            items.append(slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, -1, -2, 3]))))
        elif kind == "full":
            items.append(slice(None))
        elif kind == "array":
            n_int_arrays -= 1
            vals = draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(arr_shape)),
                                 max_size=int(np.prod(arr_shape)))) if n else []
            items.append(np.array(vals, dtype=np.int64).reshape(arr_shape))
        else:
            items.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool))
        if draw(st.integers(0, 6)) == 0:
            items.append(None)
    if items and draw(st.booleans()):  # some items left to an Ellipsis (or dropped from the end)
        i = draw(st.integers(0, len(items)))
        j = draw(st.integers(i, len(items)))
        items[i:j] = [] if j == len(items) and draw(st.booleans()) else [Ellipsis]
    return tuple(items)


@st.composite
def _getitem_call(draw):
    a = draw(coos(allow_wide=False))
    if not small(a):
        a = draw(coos(shape=((4, 3), (2,))))
    key = draw(_index_keys(a.shape))
    return Call(COO.__getitem__, a, key)


def _check_getitem(call, r):
    a, key = call.args
    want = Ref.of(a).dense()[key]
    if not isinstance(r, COO):  # an all-integer key: the element
        assert_values_equal(np.asarray(r), want, a.dtype)
        return
    assert r.shape == want.shape and r.dtype == a.dtype, (r.shape, want.shape, r.dtype)
    assert_values_equal(r.fill_value, a.fill_value, a.dtype)
    assert_values_equal(Ref.of(r).dense(), want, a.dtype)


@st.composite
def _bad_getitem_call(draw):
    a = draw(coos(allow_wide=False, shape=((3, 4), ())))
    key = draw(st.sampled_from([
        (3,), (0, -5), (0, 0, 0), (1.5,), (slice(None, None, 0),), (Ellipsis, Ellipsis),
        (np.array([True, False]),), (np.array([0, 3]),), (np.array([0, 1]), np.array([0, 1, 2])),
        ("a",), (np.array([0.5]),), ([0, "x"],),
    ]))
    return Call(COO.__getitem__, a, key)


@st.composite
def _new_shapes(draw, shape):
    """A shape of the same size: adjacent dimensions merged (never above 2**63) or split into 1s, a -1."""
    dims = list(shape)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["merge", "one", "drop_one"]))
        if op == "merge" and len(dims) >= 2:
            i = draw(st.integers(0, len(dims) - 2))
            if dims[i] * dims[i + 1] <= 2**63:
                dims[i:i + 2] = [dims[i] * dims[i + 1]]
        elif op == "one":
            dims.insert(draw(st.integers(0, len(dims))), 1)
        elif op == "drop_one" and 1 in dims:
            dims.remove(1)
    if dims and 0 not in dims and draw(st.booleans()):
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    return tuple(dims)


@st.composite
def _reshape_call(draw):
    a = draw(coos())
    return Call(coosparse.reshape, a, draw(_new_shapes(a.shape)))


def _check_reshape(call, r):
    a, new = call.args
    new = tuple(int(np.prod(a.shape, dtype=object) // -int(np.prod(new, dtype=object))) if n == -1 else n
                for n in new)
    want = {_unflat(_flat(k, a.shape), new): v for k, v in _elements(Ref.of(a)).items()}
    _assert_elements(r, want, new, a.dtype, a.fill_value)
    # sorted kept, unless dense dimensions became sparse: the blocks of duplicates then interleave
    assert not a.is_sorted or a.nnz <= 1 or r.is_sorted or r.sparse_ndim != a.sparse_ndim or (
        a.dense_ndim and not a.is_unique and r.dense_ndim < a.dense_ndim)


@st.composite
def _transpose_call(draw):
    a = draw(coos())
    perm = draw(st.permutations(range(a.ndim)))
    return Call(coosparse.permute_dims, a, tuple(perm))


def _check_transpose(call, r):
    a, perm = call.args
    want = {tuple(k[p] for p in perm): v for k, v in _elements(Ref.of(a)).items()}
    _assert_elements(r, want, tuple(a.shape[p] for p in perm), a.dtype, a.fill_value)


@st.composite
def _concatenate_call(draw):
    sparse_shape, dense_shape = draw(shapes(max_sparse=3, max_dense=1))
    shape = sparse_shape + dense_shape
    axis = draw(st.integers(0, len(shape) - 1))
    pieces, joined = [], 0
    for _ in range(draw(st.integers(1, 3))):
        s = list(shape)
        s[axis] = draw(st.sampled_from([shape[axis], 0, 1, 3]))
        if joined + s[axis] > 2**63:  # (a joined length beyond 2**63 is refused: the hostile rows try it)
            s[axis] = 0
        joined += s[axis]
        ns = len(sparse_shape)
        pieces.append(draw(coos(shape=(tuple(s[:ns]), tuple(s[ns:])), fill=False)))
    return Call(coosparse.concatenate, pieces, axis=draw(st.sampled_from([axis, axis - len(shape)])))


def _check_concatenate(call, r):
    pieces = call.args[0]
    ndim = pieces[0].ndim
    axis = call.kwargs["axis"] % ndim
    dtype = np.result_type(*[p.dtype for p in pieces])
    want, off = {}, 0
    for p in pieces:  # each piece in the result dtype: its duplicates sum there
        for k, v in _elements(Ref.of(p.astype(dtype))).items():
            want[k[:axis] + (k[axis] + off,) + k[axis + 1:]] = v
        off += p.shape[axis]
    shape = pieces[0].shape[:axis] + (off,) + pieces[0].shape[axis + 1:]
    _assert_elements(r, want, shape, dtype, np.zeros((), dtype)[()])
    if all(p.is_sorted for p in pieces) and pieces[0].sparse_ndim == r.sparse_ndim and axis < r.sparse_ndim:
        assert r.is_sorted or len(pieces) == 1 and not pieces[0].is_sorted


@st.composite
def _bad_concatenate_call(draw):
    a = draw(coos(shape=((3, 2), ()), fill=False))
    kind = draw(st.sampled_from(["shape", "ndim", "fill", "type", "axis", "empty", "zero_d"]))
    if kind == "shape":
        return Call(coosparse.concatenate, [a, draw(coos(shape=((3, 4), ())))], axis=0)
    if kind == "ndim":
        return Call(coosparse.concatenate, [a, draw(coos(shape=((3,), ())))], axis=0)
    if kind == "fill":
        return Call(coosparse.concatenate, [a, COO(a.indices, a.values, a.shape, fill_value=1)], axis=0)
    if kind == "type":
        # (a dense piece of a fitting shape is converted, as np.concatenate does: not an error)
        return Call(coosparse.concatenate, [a, draw(st.sampled_from(BAD_SCALARS))], axis=0)
    if kind == "axis":
        return Call(coosparse.concatenate, [a, a], axis=draw(st.sampled_from([2, -3, 10])))
    if kind == "empty":
        return Call(coosparse.concatenate, [], axis=0)
    z = COO(np.zeros((0, 1), np.int64), np.ones(1), ())
    return Call(coosparse.concatenate, [z, z], axis=0)


ROWS += [
    Row("getitem (random keys)", _getitem_call(), _check_getitem, _bad_getitem_call(),
        (IndexError, ValueError, TypeError)),
    Row("reshape", _reshape_call(), _check_reshape,
        st.builds(lambda a, s: Call(coosparse.reshape, a, s), coos(shape=((3, 4), ())),
                  st.sampled_from([(5,), (-1, -1), (-2, 6), ("a",), (2**64, 0)])),
        (ValueError, TypeError)),
    Row("permute_dims", _transpose_call(), _check_transpose,
        st.builds(lambda a, p: Call(coosparse.permute_dims, a, p), coos(shape=((3, 4), ())),
                  st.sampled_from([(0,), (0, 0), (0, 2), ("a", 1)])),
        (ValueError, TypeError)),
    Row("concatenate", _concatenate_call(), _check_concatenate, _bad_concatenate_call(),
        (ValueError, TypeError)),
]


# ---- hostile input: shape arithmetic near 2**63, signed zeros, dtype=, other libraries' operands, einsum
from fuzz_hostile import ROWS as _HOSTILE_ROWS  # noqa: E402  (it builds on the helpers above)

ROWS += _HOSTILE_ROWS
