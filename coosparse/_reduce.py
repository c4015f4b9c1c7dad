"""Reductions (SPEC 9): sum prod min max mean var std any all count_nonzero argmin argmax,
the nan* forms, cumulative sums and products, diff; and NumPy's ufunc methods on COO.

Every reduction means the reduction of the dense array: implicit entries take
part with the fill value (the max of a row of negatives with an unstored entry
is the fill). How each kind of axis is reduced:

===========================  ====================================================================
axes reduced                 algorithm
===========================  ====================================================================
dense (hybrid) axes          the values array is reduced along them (the namespace's own
                             reduction); indices and flags are kept
sparse axes R (kept K)       entries are grouped by their index on the kept sparse axes K: a
                             stable sort of the K key (skipped when the array is sorted and K is
                             a leading run of axes, e.g. ``sum(axis=1)`` of a sorted matrix),
                             segment heads, then an ordered segment reduction (kernels
                             ``segment_sum/prod/minmax/arg``: each output is reduced sequentially
                             in stored order, no atomics, bit-identical on every layer)
implicit entries             an output index whose group stores ``c`` of its ``n`` positions
                             combines the stored result with the fill repeated ``n - c`` times
                             (``+ fill*(n-c)``, ``* fill**(n-c)``, ``maximum(., fill)``...); an
                             output index with no stored entry holds the result's fill
===========================  ====================================================================

Duplicates: ``sum`` of a fill-0 array in its own dtype needs no coalescing
(duplicates are summed where they fall); every other reduction, ``sum`` of a
non-zero fill over sparse axes (it counts the implicit positions) and a sum
into another dtype (an element is the sum of its duplicates in the input
dtype, e.g. wrapping int8) coalesce first.

Results
-------
- A reduction over some sparse axes is a COO over the other axes, coalesced
  (both flags True); one over dense axes only keeps the input's indices and
  flags (its coalesced copy's, for the reductions that coalesce).
- The result's fill is the reduction of the fill over the reduced count ``n``
  (product of the reduced axes' lengths): ``sum``: ``fill*n``, ``prod``:
  ``fill**n``, ``max``/``min``/``any``/``all``: the fill, ``mean``: the fill,
  ``var``/``std``: 0 (NaN for a non-finite fill or ``n <= correction``),
  ``count_nonzero``: ``n`` or 0, ``argmax``/``argmin``: 0; with ``n == 0``
  the identity (0 for sums, 1 for products, False/True for any/all) and an
  error for max/min/argmax/argmin, as NumPy.
- A reduction over every axis is a 0-d COO (the Array API's 0-d array; NumPy
  would give a scalar): its value is stored as one entry, or is the fill of an
  array that stores nothing. ``float(r)``, ``int(r)``, ``bool(r)`` read it.
- dtypes follow NumPy (= the Array API): sums and products of bool and signed
  integers are int64, of unsigned integers uint64, of floating and complex
  types their own dtype (float16 accumulates in float32); ``mean``/``var``/
  ``std`` of integers are float64, ``var``/``std`` of complex are real.
- ``min``/``max``/``argmin``/``argmax`` of complex arrays raise ``TypeError``
  (the Array API leaves the order of complex numbers unspecified).

Cumulative sums and products, and ``diff``, along a dense (hybrid) axis work
on the values alone where the fill allows it; otherwise they go through the
dense form (the fill makes most of such a result dense anyway): memory of the
dense array, result a COO storing the entries that differ from its fill.

Synchronisation on a GPU: grouping over sparse axes sizes its output, so it
synchronises once (``segment_starts``; the dense table by key, which would
read the device twice, is not used for device arrays); a coalesce first adds
one for uncoalesced input; a non-zero fill's implicit entries add no
synchronisation; ``argmin``/``argmax`` over every axis compare on the host.
Reductions over dense axes only, and over every axis (but ``argmin``/
``argmax``, and the ``nan*`` forms' all-NaN check for NumPy's warning), are
sync-free: sums of any array, the others of a coalesced one
(``coosparse/_cuda/sync_free.py`` lists the cases the tests check).
"""
from __future__ import annotations

import builtins
import operator
import warnings

import numpy as np

from . import _dtypes, _fill
from ._backend import backend_for, is_device_array
from ._coo import COO
from ._dispatch import implements
from ._keys import INT64_LIMIT, is_wide, joint_keys, unravel_keys

_NoValue = np._NoValue
_SIGN = np.int64(-(2**63))  # xor with it maps uint64 order onto int64 order


# ---------------------------------------------------------------------------------- arguments
def _check(x, op):
    if not isinstance(x, COO):
        raise TypeError(f"coosparse.{op} expects a COO array; got {type(x).__name__}")
    return x


def normalize_axes(axis, ndim, op):
    """Sorted tuple of distinct non-negative axes; ``None`` means every axis.

    Raises ``numpy.exceptions.AxisError`` (a ValueError and IndexError) for an
    axis out of range and ValueError for a repeated one, as NumPy does.
    """
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for ax in items:
        try:
            ax = operator.index(ax)
        except TypeError:
            raise TypeError(f"{op}: axis must be None, an integer or a tuple of integers; got {axis!r}") from None
        if not -ndim <= ax < ndim:
            raise np.exceptions.AxisError(ax, ndim, f"{op}: axis {ax} is out of bounds for array of dimension {ndim}")
        ax %= ndim
        if ax in out:
            raise ValueError(f"{op}: duplicate value in axis {axis!r}")
        out.append(ax)
    return tuple(sorted(out))


def _single_axis(axis, ndim, op):
    try:
        ax = operator.index(axis)
    except TypeError:
        raise TypeError(f"{op}: axis must be None or an integer; got {axis!r}") from None
    if not -ndim <= ax < ndim:
        raise np.exceptions.AxisError(ax, ndim, f"{op}: axis {ax} is out of bounds for array of dimension {ndim}")
    return ax % ndim


def _refuse_out(out, op):
    if out is not None and not (isinstance(out, tuple) and builtins.all(o is None for o in out)):
        raise TypeError(f"{op}: out= is not supported (COO arrays are immutable; use the returned array)")


def _refuse_where(where, op):
    if where is not True and not (isinstance(where, (bool, np.bool_)) and bool(where)):
        raise TypeError(f"{op}: where= is not supported for COO arrays (mask the input first)")


def _sum_dtype(dtype):
    """NumPy's (= the Array API's) default dtype of a sum or product."""
    dt = np.dtype(dtype)
    if dt.kind == "b" or (dt.kind == "i" and dt.itemsize < 8):
        return np.dtype(np.int64)
    if dt.kind == "u" and dt.itemsize < 8:
        return np.dtype(np.uint64)
    return dt


def _float_dtype(dtype):
    """dtype of a mean: float64 for bool and integers, else the dtype itself."""
    dt = np.dtype(dtype)
    return np.dtype(np.float64) if dt.kind in "biu" else dt


def _size(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n


# ---------------------------------------------------------------------------------- kernel dtypes
def _to_order(values):
    """Values in an order-preserving kernel dtype (int64, float32, float64) for min/max/arg."""
    dt = values.dtype
    if dt.kind == "c":
        raise TypeError("min/max/argmin/argmax of complex arrays are not supported (complex numbers are unordered)")
    if dt == np.uint64:
        return values.view(np.int64) ^ _SIGN
    if dt.kind in "biu":
        return values.astype(np.int64)
    if dt == np.float16:
        return values.astype(np.float32)
    return values


def _from_order(values, dtype):
    dt = np.dtype(dtype)
    if values.dtype == dt:
        return values
    if dt == np.uint64:
        return (values ^ _SIGN).view(np.uint64)
    if dt == np.bool_:
        return values != 0
    return values.astype(dt)


def _order_scalar(fill, dtype):
    """The fill in the kernel dtype of :func:`_to_order` (a NumPy scalar)."""
    return _to_order(np.asarray(fill, dtype=dtype).reshape(1))[0]


def _kernel(be, op, values2d, call):
    """Run ``call(values2d)`` (a kernel on 2-D values in a kernel dtype) with complex sums split.

    A complex sum is the sums of its parts: the float kernels serve it on a
    (n, 2k) float view, and the result is viewed back. ``call`` returns the
    reduced array, or a tuple whose last item it is.
    """
    xp = be.xp
    values2d = xp.ascontiguousarray(values2d)
    cdt = values2d.dtype if op == "sum" and values2d.dtype.kind == "c" else None
    if cdt is not None:
        values2d = values2d.view(np.float32 if cdt == np.complex64 else np.float64)
    out = call(values2d)
    if cdt is None:
        return out
    if isinstance(out, tuple):
        return out[:-1] + (xp.ascontiguousarray(out[-1]).view(cdt),)
    return xp.ascontiguousarray(out).view(cdt)


def _segment(be, op, values2d, perm, starts):
    """Ordered segment reduction ``op`` of 2-D values already in a kernel dtype."""
    def call(v):
        if op == "sum":
            return be.segment_sum(v, perm, starts)
        if op == "prod":
            return be.segment_prod(v, perm, starts)
        return be.segment_minmax(v, perm, starts, op == "max")
    return _kernel(be, op, values2d, call)


def _dense_reduce(xp, values, op, axes):
    """Reduce the value axes ``axes`` (keepdims) with the namespace's own reduction."""
    if not axes:
        return values
    f = {"sum": xp.sum, "prod": xp.prod, "max": xp.max, "min": xp.min}[op]
    return f(values, axis=axes, keepdims=True)


def _kernel_dtype(op, dtype):
    dt = np.dtype(dtype)
    if op in ("sum", "prod"):
        return _dtypes.accumulation_dtype(dt)
    if dt.kind == "c":
        raise TypeError("min/max of complex arrays are not supported (complex numbers are unordered)")
    return np.dtype(np.float32) if dt == np.float16 else (dt if dt.kind == "f" else np.dtype(np.int64))


def _to_kernel(op, values):
    if op in ("sum", "prod"):
        return _dtypes.to_accumulation(values)
    return _to_order(values)


def _from_kernel(op, values, dtype):
    if op in ("sum", "prod"):
        return _dtypes.from_accumulation(values, dtype)
    return _from_order(values, dtype)


# ---------------------------------------------------------------------------------- grouping
_BY_KEY_MIN = 1 << 16


def _by_key_fits(bound, n):
    """Kept key spaces up to max(nnz, 2**16) keys are reduced into a dense table (no sort)."""
    return bound <= builtins.max(n, _BY_KEY_MIN)


class _Grouping:
    """How the entries of ``a`` map onto the output indices of a reduction over ``axes``.

    Strategies for reduced sparse axes (R) with kept sparse axes K:

    - ``bykey``: the kept key space is small (at most max(nnz, 2**16) keys)
      and the array is on the CPU: ``reduce_by_key`` accumulates in stored
      order into a dense table (in parallel runs when the keys are sorted);
      the keys present are the output indices;
    - ``sorted``: a larger key space, but ``a`` is sorted and K is a leading
      run of its axes, so the K keys are sorted already: ``reduce_sorted``
      finds the runs and reduces them in one call;
    - ``sort``: otherwise a stable sort of the K keys, segment heads, and the
      ordered segment kernels. ``order`` (a sparse axis not in K) orders each
      group by that axis too (argmin/argmax always take this route).

    Every strategy reduces each output index's entries sequentially in
    stored order, so the three give identical bits. Internal results keep
    the reduced dense axes as size-1 axes until :meth:`assemble`.
    """

    def __init__(self, a, axes, order=None):
        self.a = a
        sn = a.sparse_ndim
        self.axes = axes
        self.R = [d for d in axes if d < sn]
        self.K = [d for d in range(sn) if d not in axes]
        self.value_axes = tuple(d - sn + 1 for d in axes if d >= sn)
        self.n_sparse = _size(a.shape[d] for d in self.R)
        self.n_dense = _size(a.shape[d] for d in axes if d >= sn)
        self.n = self.n_sparse * self.n_dense
        self.be = backend_for(a.indices)
        self.xp = self.be.xp
        self.perm = None
        self.starts = None
        self.strategy = None
        self._known = True  # output indices known (the fused strategies learn them at their first reduction)
        if self.R:
            self._plan(order)
            self.sorted = self.unique = True
        else:
            self.out_indices = a.indices
            self._nout = a.nnz
            self.sorted, self.unique = a.is_sorted, a.is_unique

    def _plan(self, order):
        a, be, xp, K = self.a, self.be, self.xp, self.K
        n = a.nnz
        if not K and order is None:
            # one group holding every entry (in stored order)
            self.strategy = "sort"
            self.starts = xp.zeros(2 if n else 1, dtype=np.int64)
            if n:
                self.starts[1] = n
            self._nout = 1 if n else 0
            self.out_indices = xp.zeros((0, self._nout), dtype=np.int64)
            return
        rows = K + ([order] if order is not None else [])
        shape = tuple(a.shape[d] for d in rows)
        prefix = rows == list(range(len(rows)))
        if len(rows) == 1:
            idx = a.indices[rows[0]].reshape(1, n)  # a row of a C-contiguous array: a view
        else:
            idx = xp.ascontiguousarray(a.indices[: len(rows)] if prefix else a.indices[rows])
        self.kshape = tuple(a.shape[d] for d in K)
        if order is None and len(rows) == 1:
            okeys, bound = idx[0], shape[0]  # one kept axis: its index is the key
        else:
            (okeys,), bound = joint_keys([idx], shape)
        self.keys_sorted = a.is_sorted and prefix  # a leading run of axes of a sorted array is sorted
        # one pass into a table beats finding the runs first (two passes), measured on the
        # 2M-entry benchmark arrays; sorted keys let the table be filled in parallel. On a GPU
        # the table is itself a sort and a segment reduction (no atomics) and finding its keys
        # would read the device a second time: the sort strategies synchronise once.
        if order is None and not is_wide(shape) and _by_key_fits(bound, n) and not is_device_array(okeys):
            self.strategy, self.keys, self.bound, self._known = "bykey", okeys, bound, False
            return
        if order is None and self.keys_sorted:
            self.strategy, self.keys, self._known = "sorted", okeys, False
            return
        self.strategy = "sort"
        if self.keys_sorted:
            skeys, perm = okeys, None
        else:
            skeys, perm = be.sort_pairs(okeys, bound)
        if order is not None:
            if K:
                kidx = xp.ascontiguousarray(idx[:-1])
                (kkeys,), _ = joint_keys([kidx], self.kshape)
                skeys = kkeys if perm is None else kkeys[perm]
            else:
                skeys = xp.zeros(n, dtype=np.int64)
            self.sub = idx[-1]
        starts = be.segment_starts(skeys)  # synchronize! (the number of output indices)
        firsts = starts[:-1]
        if not K:
            out_indices = xp.zeros((0, firsts.shape[0]), dtype=np.int64)
        elif order is not None or is_wide(self.kshape):
            first_rows = firsts if perm is None else perm[firsts]
            out_indices = xp.ascontiguousarray(idx[: len(K)][:, first_rows])
        else:
            out_indices = self._unravel(skeys[firsts])
        self.perm, self.starts = perm, starts
        self.out_indices = out_indices
        self._nout = firsts.shape[0]

    def _unravel(self, keys):
        if len(self.K) == 1:
            return self.xp.ascontiguousarray(keys.reshape(1, -1))
        return unravel_keys(keys, self.kshape)

    def _ensure(self):
        """Output indices known (the fused strategies learn them at their first reduction)."""
        if self._known:
            return
        if self.strategy == "sorted":
            self._sorted_outputs(self.be.segment_starts(self.keys))  # synchronize!
        else:
            empty = self.xp.zeros((self.a.nnz, 0), np.int64)  # no columns: the counts alone
            counts, _ = self.be.reduce_by_key(self.keys, empty, self.bound, "sum", self.keys_sorted)
            self._bykey_outputs(counts)

    def _sorted_outputs(self, starts):
        self.starts = starts
        self._known = True
        self._nout = starts.shape[0] - 1
        self.out_indices = self._unravel(self.keys[starts[:-1]])

    def _bykey_outputs(self, counts):
        xp = self.xp
        present = xp.nonzero(counts)[0]  # synchronize! (the number of output indices)
        self.present = present
        self._counts = counts[present]
        self._known = True
        self._nout = present.shape[0]
        self.out_indices = self._unravel(present.astype(np.int64, copy=False))

    @property
    def nout(self):
        self._ensure()
        return self._nout

    # -------------------------------------------------------------- per-output quantities
    def counts(self):
        """Entries per output index (int64[nout]; stored positions when ``a`` is unique); groups only."""
        self._ensure()
        if self.strategy == "bykey":
            return self._counts
        return self.starts[1:] - self.starts[:-1]

    def has_missing(self):
        """bool[nout]: the output index has implicit elements (None when none can have)."""
        if not self.R or self.n == 0:
            return None
        if self.n_sparse >= INT64_LIMIT:
            return self.xp.ones(self.nout, dtype=bool)
        return self.counts() < self.n_sparse

    def missing(self, dtype):
        """Implicit elements per output index, in ``dtype`` (modular for integers, rounded for floats)."""
        xp = self.xp
        c = self.counts()
        dt = np.dtype(dtype)
        if self.n < INT64_LIMIT:
            m = (self.n_sparse - c) * self.n_dense
            return m.astype(dt)
        if dt.kind in "fc":
            return (float(self.n) - c.astype(np.float64) * float(self.n_dense)).astype(dt)
        m = xp.subtract(np.uint64(self.n % 2**64), c.astype(np.uint64) * np.uint64(self.n_dense % 2**64))
        return m.astype(dt)

    def bcast(self, per_out, like):
        """``per_out`` (nout,) shaped to broadcast against ``like`` (nout, ...)."""
        return per_out.reshape(per_out.shape + (1,) * (like.ndim - 1))

    def out_size(self):
        """Number of elements of the result (Python int)."""
        return _size(s for d, s in enumerate(self.a.shape) if d not in self.axes)

    def has_unstored_outputs(self):
        """True when some output element holds the result's fill (no entry maps onto it)."""
        kept_dense = _size(s for d, s in enumerate(self.a.dense_shape) if d + 1 not in self.value_axes)
        return self.nout * kept_dense < self.out_size()

    def count_where(self, ok, fill_ok):
        """Elements taking part per output index: (counts (nout, *dense_keepdims), count behind the fill).

        ``ok`` marks the stored elements that take part (bool, values' shape);
        implicit elements take part when ``fill_ok``.
        """
        cnt = self.reduce(ok.astype(np.int64), "sum")
        miss = self.has_missing() if fill_ok else None
        if miss is not None:
            cnt = cnt + self.bcast(self.xp.where(miss, self.missing(np.int64), 0), cnt)
        return cnt, (self.n if fill_ok else 0)

    def reduce(self, values, op):
        """Stored part of the reduction ``op`` of ``values`` (n, *dense): (nout, *dense_keepdims).

        ``values`` are in the result dtype; the arithmetic runs in the kernel
        dtype of ``op`` and the result comes back in the values' dtype.
        """
        dt = values.dtype
        kv = _to_kernel(op, values)
        kv = _dense_reduce(self.xp, kv, op, self.value_axes)
        if self.R:
            shape = kv.shape[1:]
            v2 = kv.reshape(kv.shape[0], _size(shape))
            be = self.be
            if self.strategy == "sorted" and not self._known:
                starts, kv = _kernel(be, op, v2, lambda v: be.reduce_sorted(self.keys, v, op))
                self._sorted_outputs(starts)
            elif self.strategy == "bykey":
                def call(v):
                    return be.reduce_by_key(self.keys, v, self.bound, op, self.keys_sorted)
                counts, kv = _kernel(be, op, v2, call)
                if not self._known:
                    self._bykey_outputs(counts)
                kv = kv[self.present]
            else:
                kv = _segment(be, op, v2, self.perm, self.starts)
            kv = kv.reshape((self._nout,) + shape)
        return _from_kernel(op, kv, dt)

    def expand(self, per_out):
        """Per-entry copy of an output-aligned array (the output index of each entry)."""
        if not self.R:
            return per_out
        self._ensure()
        xp = self.xp
        n = self.a.nnz
        if self.strategy == "bykey":
            slot = xp.zeros(self.bound, dtype=np.int64)
            slot[self.present] = xp.arange(self._nout, dtype=np.int64)
            return per_out[slot[self.keys]]
        heads = xp.zeros(n, dtype=np.int64)
        if self.nout > 1:
            heads[self.starts[1:-1]] = 1
        ids_sorted = xp.cumsum(heads)
        if self.perm is None:
            ids = ids_sorted
        else:
            ids = xp.empty(n, dtype=np.int64)
            ids[self.perm] = ids_sorted
        return per_out[ids]

    # -------------------------------------------------------------- result
    def assemble(self, values, fill, keepdims):
        """The result COO from output values (nout, *dense_keepdims) and its fill."""
        a, xp = self.a, self.xp
        if keepdims:
            shape = tuple(1 if d in self.axes else s for d, s in enumerate(a.shape))
            if self.R:
                idx = xp.zeros((a.sparse_ndim, self.nout), dtype=np.int64)
                if self.K:
                    idx[self.K] = self.out_indices
            else:
                idx = self.out_indices
        else:
            shape = tuple(s for d, s in enumerate(a.shape) if d not in self.axes)
            idx = self.out_indices
            if self.value_axes:
                values = values.reshape((values.shape[0],) + shape[len(self.K):])
        return COO(idx, values, shape, sorted=self.sorted, unique=self.unique, check=False,
                   fill_value=fill)


# ---------------------------------------------------------------------------------- fills
def _scalar(value, dtype):
    """``value`` cast to ``dtype`` as NumPy casts (wrapping, rounding): a NumPy scalar."""
    with np.errstate(all="ignore"):
        return np.asarray(value).astype(dtype)[()]


def _wrap(value, dtype):
    """Python int ``value`` modulo 2**64 in integer ``dtype`` (two's complement)."""
    return np.asarray(value % 2**64, dtype=np.uint64).astype(dtype)[()]


def _fill_sum(fill, n, dtype):
    """The fill added n times, in ``dtype``; 0 when n == 0 (a NaN fill included)."""
    dt = np.dtype(dtype)
    if n == 0:
        return dt.type(0)
    f = _scalar(fill, dt)
    if dt.kind in "iu":
        return _wrap(int(f) * n, dt)
    with np.errstate(all="ignore"):
        return _scalar(f * dt.type(float(n)), dt)


def _fill_prod(fill, n, dtype):
    """The fill multiplied n times, in ``dtype``; 1 when n == 0."""
    dt = np.dtype(dtype)
    if n == 0:
        return dt.type(1)
    f = _scalar(fill, dt)
    if dt.kind in "iu":
        return _wrap(pow(int(f) % 2**64, n, 2**64), dt)
    with np.errstate(all="ignore"):
        return _scalar(np.power(f, dt.type(float(n))), dt)


def _fill_power(g, fill, dtype):
    """fill ** (implicit elements) per output index, in ``dtype`` (integers modulo 2**64)."""
    xp = g.xp
    dt = np.dtype(dtype)
    with np.errstate(all="ignore"):
        # the fill goes in as a scalar operand (passed by value): no host-to-device copy
        if dt.kind not in "iu":
            return xp.power(_scalar(fill, dt), g.missing(dt))
        c = g.counts()
        if g.n < INT64_LIMIT:
            e = (g.n_sparse - c) * g.n_dense
        elif int(fill) % 2 == 0:  # an even base to a power >= 64 vanishes modulo 2**64
            return xp.zeros(c.shape, dtype=dt)
        else:  # odd bases have multiplicative orders dividing 2**62 modulo 2**64
            mod = 2**62
            e = (((g.n_sparse % mod) - c) * (g.n_dense % mod)) & (mod - 1)
        return xp.power(_scalar(fill, np.int64), e).astype(dt)


def _implicit(g, vals, fill, op):
    """Combine the stored part ``vals`` with each output index's implicit elements."""
    if (op == "sum" and _fill.is_zero(fill)) or (op == "prod" and _fill.equal(fill, 1)):
        return vals  # the identity changes nothing
    miss = g.has_missing()
    if miss is None:
        return vals
    xp = g.xp
    mk = g.bcast(miss, vals)
    W = vals.dtype
    if op == "sum":
        return xp.where(mk, vals + g.bcast(g.missing(W), vals) * fill, vals)
    if op == "prod":
        return xp.where(mk, vals * g.bcast(_fill_power(g, fill, W), vals), vals)
    f = {"max": xp.maximum, "min": xp.minimum, "any": xp.logical_or, "all": xp.logical_and}[op]
    return xp.where(mk, f(vals, fill), vals)


# ---------------------------------------------------------------------------------- sum-like
def _reduce(x, axis, keepdims, op, dtype=None, initial=_NoValue, nan=False):
    """sum / prod / max / min (``nan``: ignoring NaNs) of COO ``x`` as a COO."""
    name = ("nan" if nan else "") + op
    a = _check(x, name)
    axes = normalize_axes(axis, a.ndim, name)
    if op in ("sum", "prod"):
        W = _sum_dtype(a.dtype) if dtype is None else _dtypes.check_dtype(dtype, "result")
    else:
        W = a.dtype
        _kernel_dtype(op, W)  # TypeError for complex before any work
    nan = nan and a.dtype.kind in "fc"
    counts_implicit = builtins.any(d < a.sparse_ndim for d in axes) and not (op == "sum" and _fill.is_zero(a.fill_value))
    if op != "sum" or nan or counts_implicit or W != a.dtype:
        # duplicates summed (in the input's dtype: that is an element's value) before anything
        # non-linear, before counting implicit elements, and before a cast
        a = a if a.is_coalesced else a.coalesce()
    values, fill = a.values, a.fill_value
    if nan:
        values, fill = _nan_to(values, fill, {"sum": 0, "prod": 1, "max": -np.inf, "min": np.inf}[op])
    g = _Grouping(a, axes)
    if g.n == 0 and op in ("max", "min") and initial is _NoValue:
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    xp = g.xp
    fW = _scalar(fill, W)
    vals = _implicit(g, g.reduce(values.astype(W, copy=False), op), fW, op)
    out_fill = {"sum": _fill_sum, "prod": _fill_prod}[op](fW, g.n, W) if op in ("sum", "prod") else fW
    if initial is not _NoValue:
        init = _scalar(initial, W)
        f = {"sum": xp.add, "prod": xp.multiply, "max": xp.maximum, "min": xp.minimum}[op]
        vals = f(vals, init).astype(W, copy=False)
        out_fill = init if g.n == 0 else _scalar(f(out_fill, init), W)
    if nan and op in ("max", "min"):
        # all-NaN selections are NaN (their -inf/+inf stand-ins are not), with NumPy's warning
        cnt, cnt_fill = g.count_where(~xp.isnan(a.values), not bool(np.isnan(a.fill_value)))
        empty = cnt == 0
        warn = bool(empty.any())  # synchronize! (NumPy's warning)
        if warn:
            vals = xp.where(empty, W.type(np.nan), vals)
        if cnt_fill == 0 and g.n:
            out_fill = W.type(np.nan)
            warn = warn or g.has_unstored_outputs()
        if warn:
            warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
    return g.assemble(vals, out_fill, keepdims)


def _nan_to(values, fill, ident):
    """NaNs of the values and the fill replaced by ``ident`` (nansum, nanprod, nanmax...)."""
    xp = backend_for(values).xp
    t = values.dtype.type(ident)
    values = xp.where(xp.isnan(values), t, values)
    return values, (t if bool(np.isnan(fill)) else fill)


def _logical(x, axis, keepdims, is_any):
    name = "any" if is_any else "all"
    a = _check(x, name)
    axes = normalize_axes(axis, a.ndim, name)
    a = a if a.is_coalesced else a.coalesce()
    b = a._with(values=a.values != 0, fill_value=bool(a.fill_value != 0))
    g = _Grouping(b, axes)
    vals = _implicit(g, g.reduce(b.values, "max" if is_any else "min"), b.fill_value, name)
    out_fill = b.fill_value if g.n else np.bool_(not is_any)
    return g.assemble(vals, out_fill, keepdims)


def _count_nonzero(x, axis, keepdims):
    a = _check(x, "count_nonzero")
    axes = normalize_axes(axis, a.ndim, "count_nonzero")
    a = a if a.is_coalesced else a.coalesce()
    b = a._with(values=(a.values != 0).astype(np.int64), fill_value=int(bool(a.fill_value != 0)))
    return _reduce(b, axes, keepdims, "sum")


# ---------------------------------------------------------------------------------- statistics
class _Moments:
    """Sums and element counts per output index for mean / var (``nan``: NaNs left out).

    ``vals`` are the coalesced values in the working dtype (NaNs zeroed),
    ``ok`` marks the elements taking part (None: all), ``cnt`` is an array of
    counts per output index or the Python int ``g.n``, ``cnt_fill`` the
    count behind the result's fill.
    """

    def __init__(self, a, axes, work, nan):
        a = a if a.is_coalesced else a.coalesce()
        self.g = g = _Grouping(a, axes)
        xp = g.xp
        vals = a.values.astype(work)
        fill = _scalar(a.fill_value, work)
        nan = nan and work.kind in "fc"
        self.fill_ok = not (nan and bool(np.isnan(fill)))
        if nan:
            self.ok = ~xp.isnan(vals)
            vals = xp.where(self.ok, vals, work.type(0))
            self.cnt, self.cnt_fill = g.count_where(self.ok, self.fill_ok)
        else:
            self.ok = None
            self.cnt = self.cnt_fill = g.n
        self.vals = vals
        self.fill = fill if self.fill_ok else work.type(0)
        self.sums = g.reduce(vals, "sum")
        if self.fill_ok:
            self.sums = _implicit(g, self.sums, self.fill, "sum")
        self.work = work

    def mean(self):
        with np.errstate(all="ignore"):
            return (self.sums / self.cnt).astype(self.work, copy=False)

    def fill_mean(self):
        return self.fill if self.cnt_fill else self.work.type(np.nan)

    def any_empty(self):
        """True when some output index has no element taking part (NumPy warns)."""
        if isinstance(self.cnt, int):
            return self.cnt == 0
        return bool((self.cnt == 0).any()) or (self.cnt_fill == 0 and self.g.has_unstored_outputs())  # synchronize!


def _mean(x, axis, keepdims, dtype, nan=False):
    name = "nanmean" if nan else "mean"
    a = _check(x, name)
    axes = normalize_axes(axis, a.ndim, name)
    W = _float_dtype(a.dtype) if dtype is None else _dtypes.check_dtype(dtype, "result")
    acc = np.dtype(np.float32) if W == np.float16 else (W if W.kind in "fc" else np.dtype(np.float64))
    if nan and a.dtype.kind in "fc":
        m = _Moments(a, axes, acc, True)
        values, fill = m.mean().astype(W, copy=False), _scalar(m.fill_mean(), W)
        if m.any_empty():
            warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=3)
        return m.g.assemble(values, fill, keepdims)
    s = _reduce(a, axes, keepdims, "sum", dtype=acc)
    n = _size(a.shape[d] for d in axes)
    if n == 0:
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=3)
    with np.errstate(all="ignore"):
        values = (s.values / n).astype(W, copy=False)
        fill = _scalar(s.fill_value / acc.type(n), W)
    return s._with(values=values, fill_value=fill)


def _abs2(z):
    return z.real * z.real + z.imag * z.imag if z.dtype.kind == "c" else z * z


def _var(x, axis, keepdims, dtype, correction, nan=False, name="var"):
    a = _check(x, name)
    axes = normalize_axes(axis, a.ndim, name)
    correction = _correction(correction, name)
    src = _float_dtype(a.dtype if dtype is None else _dtypes.check_dtype(dtype, "result"))
    work = np.dtype(np.float32) if src == np.float16 else src
    real = np.dtype(np.float32) if work in (np.float32, np.complex64) else np.dtype(np.float64)
    out_dt = src if src == np.float16 else real
    m = _Moments(a, axes, work, nan)
    g, xp = m.g, m.g.xp
    with np.errstate(all="ignore"):
        mean = m.mean()
        sq = _abs2(m.vals - g.expand(mean)).astype(real, copy=False)
        if m.ok is not None:
            sq = xp.where(m.ok, sq, real.type(0))
        d = g.reduce(sq, "sum")
        miss = g.has_missing() if m.fill_ok else None
        if miss is not None:
            fd = _abs2(mean - m.fill).astype(real, copy=False)
            d = xp.where(g.bcast(miss, d), d + fd * g.bcast(g.missing(real), d), d)
        if isinstance(m.cnt, int):
            var = d / real.type(builtins.max(m.cnt - correction, 0))
        else:
            var = d / xp.maximum(m.cnt - correction, 0)
        # the fill's own variance: that of cnt_fill equal values
        f0 = real.type(0) if np.isfinite(m.fill) else real.type(np.nan)
        fvar = f0 / real.type(builtins.max(m.cnt_fill - correction, 0)) if m.cnt_fill else real.type(np.nan)
    few = (m.cnt - correction <= 0) if isinstance(m.cnt, int) else bool((m.cnt - correction <= 0).any())  # synchronize!
    if few or (m.cnt_fill - correction <= 0 and g.has_unstored_outputs()):
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
    return g.assemble(var.astype(out_dt, copy=False), _scalar(fvar, out_dt), keepdims)


def _correction(correction, name):
    if isinstance(correction, bool) or not isinstance(correction, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: correction (ddof) must be a number; got {correction!r}")
    if correction < 0:
        raise ValueError(f"{name}: correction (ddof) must be non-negative; got {correction}")
    return correction


def _sqrt(v):
    return v._with(values=backend_for(v.values).xp.sqrt(v.values), fill_value=np.sqrt(v.fill_value))


# ---------------------------------------------------------------------------------- argmin / argmax
def _arg(x, axis, keepdims, is_max, nan=False):
    name = ("nan" if nan else "") + ("argmax" if is_max else "argmin")
    a = _check(x, name)
    if a.dtype.kind == "c":
        raise TypeError(f"{name} of complex arrays is not supported (complex numbers are unordered)")
    a = a if a.is_coalesced else a.coalesce()
    values, fill = a.values, a.fill_value
    if nan and a.dtype.kind == "f":
        _nan_check_all(a, axis, name)
        values, fill = _nan_to(values, fill, -np.inf if is_max else np.inf)
    a = a._with(values=values, fill_value=fill)
    if axis is None:
        return _arg_flat(a, keepdims, is_max, name)
    ax = _single_axis(axis, a.ndim, name)
    if a.shape[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    be = backend_for(a.indices)
    xp = be.xp
    sn = a.sparse_ndim
    if ax >= sn:  # a dense axis: the values alone
        f = xp.argmax if is_max else xp.argmin
        vals = f(a.values, axis=ax - sn + 1).astype(np.int64)
        if keepdims:
            vals = xp.expand_dims(vals, ax - sn + 1)
        shape = tuple(1 if d == ax else s for d, s in enumerate(a.shape)) if keepdims else \
            tuple(s for d, s in enumerate(a.shape) if d != ax)
        return COO(a.indices, vals, shape, sorted=a.is_sorted, unique=a.is_unique, check=False, fill_value=0)
    g = _Grouping(a, (ax,), order=ax)
    kv = _to_order(a.values)
    k = _size(a.dense_shape)
    best, pos, gap = be.segment_arg(xp.ascontiguousarray(kv.reshape(a.nnz, k)), g.perm, g.starts, g.sub, is_max)
    f = _order_scalar(fill, a.dtype)
    miss = (g.counts() < a.shape[ax])[:, None]
    gapc = gap[:, None]
    if isinstance(f, np.floating) and np.isnan(f):
        wins = ~xp.isnan(best) | (gapc < pos)
    else:
        beats = (best < f) if is_max else (best > f)
        wins = beats | ((best == f) & (gapc < pos))
        if kv.dtype.kind == "f":
            wins &= ~xp.isnan(best)
    res = xp.where(miss & wins, gapc, pos).reshape((g.nout,) + a.dense_shape)
    return g.assemble(res, np.int64(0), keepdims)


def _arg_flat(a, keepdims, is_max, name):
    """argmin/argmax over the flattened array: the first extreme element's C-order index."""
    be = backend_for(a.indices)
    xp = be.xp
    size = a.size
    if size == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    if size >= INT64_LIMIT:
        raise ValueError(f"{name}: the flat index of an array of {size} elements does not fit int64")
    f = _order_scalar(a.fill_value, a.dtype)
    k = _size(a.dense_shape)
    best = None
    if a.nnz and k:
        (keys,), _ = joint_keys([a.indices], a.sparse_shape)
        kv = xp.ascontiguousarray(_to_order(a.values).reshape(a.nnz, k))
        starts = xp.zeros(2, dtype=np.int64)
        starts[1] = a.nnz
        b, p, gap = be.segment_arg(kv, None, starts, keys, is_max)
        b, p, gap = _host(b[0]), _host(p[0]), int(_host(gap)[0])  # synchronize! (a scalar result)
        flat = p * k + np.arange(k)
        best, at = _pick(b, flat, is_max)
        n_sparse = _size(a.sparse_shape)
        if gap < n_sparse:
            best, at = _pick(np.array([best, f]), np.array([at, gap * k]), is_max)
        result = at
    else:
        result = 0  # every element is the fill
    out = np.int64(result)
    shape = (1,) * a.ndim if keepdims else ()
    sn = a.sparse_ndim if keepdims else 0
    idx = xp.zeros((sn, 1), dtype=np.int64)
    values = xp.full((1,) + shape[sn:], out, dtype=np.int64)
    return COO(idx, values, shape, sorted=True, unique=True, check=False, fill_value=0)


def _pick(vals, pos, is_max):
    """(value, position) of the first extreme of ``vals`` (NaN first), ties to the lower position."""
    order = np.argsort(pos, kind="stable")
    v, p = vals[order], pos[order]
    nan = np.isnan(v) if v.dtype.kind == "f" else np.zeros(v.shape, bool)
    if nan.any():
        i = int(np.argmax(nan))
    else:
        i = int(np.argmax(v) if is_max else np.argmin(v))
    return v[i], int(p[i])


def _host(x):
    """A device array's values on the host (NumPy arrays as they are)."""
    return np.asarray(x) if isinstance(x, np.ndarray) else x.get()  # synchronize!


def _nan_check_all(a, axis, name):
    """nanargmax/nanargmin raise ValueError on an all-NaN selection, as NumPy (``a`` coalesced)."""
    g = _Grouping(a, normalize_axes(None if axis is None else _single_axis(axis, a.ndim, name), a.ndim, name))
    cnt, cnt_fill = g.count_where(~g.xp.isnan(a.values), not bool(np.isnan(a.fill_value)))
    if bool((cnt == 0).any()) or (cnt_fill == 0 and g.has_unstored_outputs()):  # synchronize!
        raise ValueError("All-NaN slice encountered")


# ---------------------------------------------------------------------------------- cumulative
def _dense_to_coo(d, sparse_ndim, fill):
    """COO of dense ``d`` storing the entries (blocks) that differ from ``fill`` (sorted, unique)."""
    xp = backend_for(d).xp
    sparse_ndim = builtins.min(sparse_ndim, d.ndim)
    f = _scalar(fill, d.dtype)
    diff = d != f
    if d.dtype.kind in "fc":
        if bool(np.isnan(f)):
            diff = ~xp.isnan(d)
        else:  # -0.0 and 0.0 compare equal; keep the bits
            diff |= xp.signbit(d.real) != np.signbit(f.real)
    mask = diff.reshape(d.shape[:sparse_ndim] + (-1,)).any(axis=-1) if d.size else \
        xp.zeros(d.shape[:sparse_ndim], dtype=bool)
    if sparse_ndim == 0:
        nnz = int(bool(mask))  # synchronize!
        return COO(xp.zeros((0, nnz), dtype=np.int64), d.reshape((1,) + d.shape)[:nnz].copy(), d.shape,
                   sorted=True, unique=True, check=False, fill_value=f)
    nz = xp.nonzero(mask)
    indices = xp.ascontiguousarray(xp.stack(nz).astype(np.int64, copy=False))
    return COO(indices, d[nz], d.shape, sorted=True, unique=True, check=False, fill_value=f)


def _cumulative(x, axis, dtype, include_initial, is_sum, name, flatten=False):
    a = _check(x, name)
    if flatten or (axis is None and a.ndim <= 1):
        if a.ndim != 1 and not flatten:
            raise ValueError(f"{name}: axis must be given for arrays of {a.ndim} dimensions")
        if a.ndim == 0:
            raise ValueError(f"{name}: a 0-d array has no axis to accumulate along")
        ax = 0
    elif axis is None:
        raise ValueError(f"{name}: axis must be given for arrays of {a.ndim} dimensions")
    else:
        ax = _single_axis(axis, a.ndim, name)
    W = _sum_dtype(a.dtype) if dtype is None else _dtypes.check_dtype(dtype, "result")
    xp = backend_for(a.indices).xp
    fill = a.fill_value
    on_values = (not flatten and ax >= a.sparse_ndim and not include_initial and
                 (_fill.is_zero(fill) or (not is_sum and _fill.equal(fill, 1))))
    if on_values:
        # along a dense axis with a fill that stays the fill: the values alone
        c = a if a.is_unique else a.coalesce()
        f = xp.cumsum if is_sum else xp.cumprod
        vals = f(c.values.astype(W, copy=False), axis=ax - c.sparse_ndim + 1, dtype=W)
        return c._with(values=vals, fill_value=_scalar(fill, W))
    d = a.to_dense()
    if flatten:
        d = d.reshape(-1)
    f = xp.cumsum if is_sum else xp.cumprod
    r = f(d.astype(W, copy=False), axis=ax, dtype=W)
    if include_initial:
        shape = list(r.shape)
        shape[ax] = 1
        r = xp.concatenate([xp.full(shape, 0 if is_sum else 1, dtype=W), r], axis=ax)
    return _dense_to_coo(r, 1 if flatten else a.sparse_ndim, _scalar(fill, W))


def _diff(x, n, axis, prepend, append):
    a = _check(x, "diff")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative; got {n}")
    if a.ndim == 0:
        raise ValueError("diff requires an input of at least one dimension")
    ax = _single_axis(axis, a.ndim, "diff")
    if n == 0 and prepend is None and append is None:
        return a
    xp = backend_for(a.indices).xp
    if prepend is None and append is None and ax >= a.sparse_ndim and n <= a.shape[ax]:
        # along a dense axis: the fill's differences are 0 (or NaN) wherever nothing is stored
        c = a if a.is_unique else a.coalesce()
        vals = xp.diff(c.values, n=n, axis=ax - c.sparse_ndim + 1)
        with np.errstate(all="ignore"):
            f = np.diff(np.full(n + 1, c.fill_value), n=n)[0] if a.shape[ax] else c.fill_value
        shape = tuple(vals.shape[1:])
        return COO(c.indices, vals, c.sparse_shape + shape, sorted=c.is_sorted, unique=c.is_unique,
                   check=False, fill_value=f)
    d = a.to_dense()
    kw = {}
    for key, v in (("prepend", prepend), ("append", append)):
        if v is not None:
            kw[key] = v.to_dense() if isinstance(v, COO) else v
    r = xp.diff(d, n=n, axis=ax, **kw)
    with np.errstate(all="ignore"):
        f = np.diff(np.full(n + 1, a.fill_value), n=n)[0] if n else a.fill_value
    return _dense_to_coo(r, a.sparse_ndim, _scalar(f, r.dtype))


# ---------------------------------------------------------------------------------- Array API functions
def sum(x, /, *, axis=None, dtype=None, keepdims=False):
    """Sum of the elements over ``axis`` (Array API ``sum``; NumPy's dtype rules).

    Parameters
    ----------
    x : COO
    axis : None, int or tuple of int
        Axes to reduce (negative counts from the end); None reduces all.
    dtype : dtype, optional
        Accumulation and result dtype. Default: int64 for bool and signed
        integers, uint64 for unsigned integers, else the input dtype.
    keepdims : bool
        Keep the reduced axes as axes of length 1.

    Returns
    -------
    COO
        Over the remaining axes (0-d for a full reduction); fill ``fill * n``.
        Each output element is summed sequentially in stored order, then the
        fill's share for its implicit elements is added.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1, 0, 2], [0, 0, 3]]))
    >>> a.sum(axis=1).to_dense()
    array([3, 3])
    >>> float(coosparse.sum(a))
    6.0
    """
    return _reduce(x, axis, keepdims, "sum", dtype=dtype)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """Product of the elements over ``axis`` (Array API ``prod``; dtypes as :func:`sum`).

    Unstored elements are the fill: with fill 0 a product over a line with an
    implicit element is 0. The result's fill is ``fill ** n``.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1, 2], [3, 0]]))
    >>> coosparse.prod(a, axis=1).to_dense()
    array([2, 0])
    """
    return _reduce(x, axis, keepdims, "prod", dtype=dtype)


def max(x, /, *, axis=None, keepdims=False):
    """Maximum over ``axis`` (Array API ``max``); implicit elements are the fill.

    NaN propagates (NumPy's rule). A zero-size reduction raises ValueError.
    Complex arrays raise TypeError.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[-1, 0, -3], [-2, -5, -4]]))
    >>> coosparse.max(a, axis=1).to_dense()   # row 0 has an unstored 0
    array([ 0, -2])
    """
    return _reduce(x, axis, keepdims, "max")


def min(x, /, *, axis=None, keepdims=False):
    """Minimum over ``axis`` (Array API ``min``); see :func:`max`.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1, 0, 3], [2, 5, 4]]))
    >>> coosparse.min(a, axis=1).to_dense()
    array([0, 2])
    """
    return _reduce(x, axis, keepdims, "min")


def mean(x, /, *, axis=None, keepdims=False):
    """Arithmetic mean over ``axis`` (Array API ``mean``; integers give float64).

    The mean of an empty selection is NaN with NumPy's RuntimeWarning.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1.0, 0.0], [0.0, 3.0]]))
    >>> coosparse.mean(a, axis=0).to_dense()
    array([0.5, 1.5])
    """
    return _mean(x, axis, keepdims, None)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Variance over ``axis`` (Array API ``var``): ``sum(|x - mean|**2) / (n - correction)``.

    Two passes (the mean per output index, then the squared deviations,
    implicit elements included). Complex input gives a real result;
    ``n - correction <= 0`` gives NaN/inf with NumPy's RuntimeWarning.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 0.0]]))
    >>> coosparse.var(a, axis=1).to_dense()
    array([0.66666667, 0.        ])
    """
    return _var(x, axis, keepdims, None, correction)


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Standard deviation over ``axis`` (Array API ``std``): the square root of :func:`var`.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([0.0, 2.0]))
    >>> float(coosparse.std(a))
    1.0
    """
    return _sqrt(_var(x, axis, keepdims, None, correction, name="std"))


def any(x, /, *, axis=None, keepdims=False):
    """Whether any element over ``axis`` is non-zero (Array API ``any``; NaN counts as True).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[0, 0], [0, 4]]))
    >>> coosparse.any(a, axis=1).to_dense()
    array([False,  True])
    """
    return _logical(x, axis, keepdims, True)


def all(x, /, *, axis=None, keepdims=False):
    """Whether every element over ``axis`` is non-zero (Array API ``all``).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1, 2], [0, 4]]))
    >>> coosparse.all(a, axis=1).to_dense()
    array([ True, False])
    """
    return _logical(x, axis, keepdims, False)


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """Number of non-zero elements over ``axis`` (Array API ``count_nonzero``; int64).

    Explicitly stored zeros do not count; an implicit element counts when the
    fill is non-zero.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 0, 1]], np.array([1.0, 0.0, 2.0]), (3,))
    >>> int(coosparse.count_nonzero(a))
    2
    """
    return _count_nonzero(x, axis, keepdims)


def argmax(x, /, *, axis=None, keepdims=False):
    """Index of the first maximum along ``axis`` (flat C-order index for None); int64.

    Implicit elements take part: where the fill is the maximum, the first
    unstored position along the axis is the answer if it comes first. The
    first NaN wins (NumPy's rule). Over every axis the comparison of the
    candidates runs on the host (synchronises on a GPU).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[-1, 0, -3], [2, 5, 0]]))
    >>> coosparse.argmax(a, axis=1).to_dense()
    array([1, 1])
    """
    return _arg(x, axis, keepdims, True)


def argmin(x, /, *, axis=None, keepdims=False):
    """Index of the first minimum along ``axis``; see :func:`argmax`.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1, 0, 3], [2, 5, 4]]))
    >>> coosparse.argmin(a, axis=1).to_dense()
    array([1, 0])
    """
    return _arg(x, axis, keepdims, False)


def nansum(x, /, *, axis=None, dtype=None, keepdims=False):
    """:func:`sum` with NaNs counted as zero (``numpy.nansum``).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> float(coosparse.nansum(coosparse.asarray(np.array([1.0, np.nan, 2.0]))))
    3.0
    """
    return _reduce(x, axis, keepdims, "sum", dtype=dtype, nan=True)


def nanprod(x, /, *, axis=None, dtype=None, keepdims=False):
    """:func:`prod` with NaNs counted as one (``numpy.nanprod``).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> float(coosparse.nanprod(coosparse.asarray(np.array([2.0, np.nan, 3.0]))))
    6.0
    """
    return _reduce(x, axis, keepdims, "prod", dtype=dtype, nan=True)


def nanmax(x, /, *, axis=None, keepdims=False):
    """:func:`max` ignoring NaNs; an all-NaN selection gives NaN and NumPy's RuntimeWarning.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> float(coosparse.nanmax(coosparse.asarray(np.array([1.0, np.nan, -2.0]))))
    1.0
    """
    return _reduce(x, axis, keepdims, "max", nan=True)


def nanmin(x, /, *, axis=None, keepdims=False):
    """:func:`min` ignoring NaNs (see :func:`nanmax`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> float(coosparse.nanmin(coosparse.asarray(np.array([1.0, np.nan, -2.0]))))
    -2.0
    """
    return _reduce(x, axis, keepdims, "min", nan=True)


def nanmean(x, /, *, axis=None, keepdims=False):
    """:func:`mean` of the non-NaN elements (``numpy.nanmean``).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> float(coosparse.nanmean(coosparse.asarray(np.array([1.0, np.nan, 3.0]))))
    2.0
    """
    return _mean(x, axis, keepdims, None, nan=True)


def nanvar(x, /, *, axis=None, correction=0.0, keepdims=False):
    """:func:`var` of the non-NaN elements (``numpy.nanvar``; ``correction`` is NumPy's ddof).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> float(coosparse.nanvar(coosparse.asarray(np.array([1.0, np.nan, 3.0]))))
    1.0
    """
    return _var(x, axis, keepdims, None, correction, nan=True, name="nanvar")


def nanstd(x, /, *, axis=None, correction=0.0, keepdims=False):
    """:func:`std` of the non-NaN elements (``numpy.nanstd``).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> float(coosparse.nanstd(coosparse.asarray(np.array([1.0, np.nan, 3.0]))))
    1.0
    """
    return _sqrt(_var(x, axis, keepdims, None, correction, nan=True, name="nanstd"))


def nanargmax(x, /, *, axis=None, keepdims=False):
    """:func:`argmax` ignoring NaNs; an all-NaN selection raises ValueError (NumPy's rule).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> int(coosparse.nanargmax(coosparse.asarray(np.array([1.0, np.nan, 3.0]))))
    2
    """
    return _arg(x, axis, keepdims, True, nan=True)


def nanargmin(x, /, *, axis=None, keepdims=False):
    """:func:`argmin` ignoring NaNs (see :func:`nanargmax`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> int(coosparse.nanargmin(coosparse.asarray(np.array([1.0, np.nan, -3.0]))))
    2
    """
    return _arg(x, axis, keepdims, False, nan=True)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sum along ``axis`` (Array API ``cumulative_sum``; dtypes as :func:`sum`).

    ``axis`` may be omitted for 1-D input only. Along a dense (hybrid) axis of
    a fill-0 array the stored values are accumulated in place (same indices,
    same flags). Otherwise the result is computed on the dense form and
    returned as a COO (sorted, unique) storing the elements that differ from
    the input's fill: a cumulative sum along a sparse axis stores everything
    after a line's first non-zero, so its result is mostly dense.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([0, 2, 0, 3]))
    >>> coosparse.cumulative_sum(a).to_dense()
    array([0, 2, 2, 5])
    """
    return _cumulative(x, axis, dtype, include_initial, True, "cumulative_sum")


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative product along ``axis`` (Array API ``cumulative_prod``); see :func:`cumulative_sum`.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([1, 2, 3]))
    >>> coosparse.cumulative_prod(a).to_dense()
    array([1, 2, 6])
    """
    return _cumulative(x, axis, dtype, include_initial, False, "cumulative_prod")


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """n-th discrete difference along ``axis`` (Array API ``diff``).

    Along a dense (hybrid) axis the stored values are differenced in place
    (same indices and flags; the fill's differences are 0). Along a sparse
    axis the result is computed on the dense form and returned as a COO
    storing the entries that differ from its fill (0, or NaN for a NaN fill).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([1, 1, 4, 0]))
    >>> coosparse.diff(a).to_dense()
    array([ 0,  3, -4])
    """
    return _diff(x, n, axis, prepend, append)


# ---------------------------------------------------------------------------------- NumPy signatures
# np.sum(a, ...) and a.sum(...) arrive here with NumPy's keywords.
def _np_reducer(op, nan=False, has_dtype=True):
    def f(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
        name = ("nan" if nan else "") + op
        _refuse_out(out, name)
        _refuse_where(where, name)
        if keepdims is _NoValue:
            keepdims = False
        return _reduce(a, axis, keepdims, op, dtype=dtype if has_dtype else None, initial=initial, nan=nan)
    return f


np_sum = implements(np.sum)(_np_reducer("sum"))
np_prod = implements(np.prod)(_np_reducer("prod"))
np_nansum = implements(np.nansum)(_np_reducer("sum", nan=True))
np_nanprod = implements(np.nanprod)(_np_reducer("prod", nan=True))


def _np_minmax(op, nan=False):
    def f(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
        name = ("nan" if nan else "") + op
        _refuse_out(out, name)
        _refuse_where(where, name)
        return _reduce(a, axis, bool(keepdims) if keepdims is not _NoValue else False, op, initial=initial, nan=nan)
    return f


np_max = implements(np.max, np.amax)(_np_minmax("max"))
np_min = implements(np.min, np.amin)(_np_minmax("min"))
np_nanmax = implements(np.nanmax)(_np_minmax("max", nan=True))
np_nanmin = implements(np.nanmin)(_np_minmax("min", nan=True))


def _np_mean(nan):
    def f(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
        _refuse_out(out, "mean")
        _refuse_where(where, "mean")
        return _mean(a, axis, bool(keepdims) if keepdims is not _NoValue else False, dtype, nan=nan)
    return f


np_mean = implements(np.mean)(_np_mean(False))
np_nanmean = implements(np.nanmean)(_np_mean(True))


def _np_var(nan, is_std):
    name = ("nan" if nan else "") + ("std" if is_std else "var")

    def f(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=_NoValue,
          correction=_NoValue):
        _refuse_out(out, name)
        _refuse_where(where, name)
        if mean is not _NoValue:
            raise TypeError(f"{name}: mean= is not supported for COO arrays")
        if correction is not _NoValue:
            if ddof != 0:
                raise ValueError(f"{name}: ddof and correction can't be provided simultaneously")
            ddof = correction
        v = _var(a, axis, bool(keepdims) if keepdims is not _NoValue else False, dtype, ddof, nan=nan, name=name)
        return _sqrt(v) if is_std else v
    return f


np_var = implements(np.var)(_np_var(False, False))
np_std = implements(np.std)(_np_var(False, True))
np_nanvar = implements(np.nanvar)(_np_var(True, False))
np_nanstd = implements(np.nanstd)(_np_var(True, True))


def _np_logical(is_any):
    def f(a, axis=None, out=None, keepdims=False, *, where=True):
        _refuse_out(out, "any" if is_any else "all")
        _refuse_where(where, "any" if is_any else "all")
        return _logical(a, axis, bool(keepdims) if keepdims is not _NoValue else False, is_any)
    return f


np_any = implements(np.any)(_np_logical(True))
np_all = implements(np.all)(_np_logical(False))


@implements(np.count_nonzero)
def np_count_nonzero(a, axis=None, *, keepdims=False):
    return _count_nonzero(a, axis, keepdims)


def _np_arg(is_max, nan):
    def f(a, axis=None, out=None, *, keepdims=False):
        _refuse_out(out, "argmax" if is_max else "argmin")
        return _arg(a, axis, bool(keepdims) if keepdims is not _NoValue else False, is_max, nan=nan)
    return f


np_argmax = implements(np.argmax)(_np_arg(True, False))
np_argmin = implements(np.argmin)(_np_arg(False, False))
np_nanargmax = implements(np.nanargmax)(_np_arg(True, True))
np_nanargmin = implements(np.nanargmin)(_np_arg(False, True))


def _np_cum(is_sum, nan=False):
    name = ("nan" if nan else "") + ("cumsum" if is_sum else "cumprod")

    def f(a, axis=None, dtype=None, out=None):
        _refuse_out(out, name)
        x = a
        if nan:
            _check(a, name)
            if a.dtype.kind in "fc":
                vals, fill = _nan_to(a.values, a.fill_value, 0 if is_sum else 1)
                x = a._with(values=vals, fill_value=fill)
        return _cumulative(x, axis, dtype, False, is_sum, name, flatten=axis is None)
    return f


np_cumsum = implements(np.cumsum)(_np_cum(True))
np_cumprod = implements(np.cumprod)(_np_cum(False))
np_nancumsum = implements(np.nancumsum)(_np_cum(True, True))
np_nancumprod = implements(np.nancumprod)(_np_cum(False, True))

if hasattr(np, "cumulative_sum"):  # NumPy >= 2.1
    @implements(np.cumulative_sum)
    def np_cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        _refuse_out(out, "cumulative_sum")
        return cumulative_sum(x, axis=axis, dtype=dtype, include_initial=include_initial)

    @implements(np.cumulative_prod)
    def np_cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        _refuse_out(out, "cumulative_prod")
        return cumulative_prod(x, axis=axis, dtype=dtype, include_initial=include_initial)


@implements(np.diff)
def np_diff(a, n=1, axis=-1, prepend=_NoValue, append=_NoValue):
    return _diff(a, n, axis, None if prepend is _NoValue else prepend, None if append is _NoValue else append)


# ---------------------------------------------------------------------------------- ufunc methods
_REDUCE_UFUNCS = {
    np.add: ("sum", False), np.multiply: ("prod", False),
    np.maximum: ("max", False), np.minimum: ("min", False),
    np.fmax: ("max", True), np.fmin: ("min", True),
}


def ufunc_method(ufunc, method, *inputs, **kwargs):
    """NumPy ufunc methods other than ``__call__`` on COO arrays (``COO.__array_ufunc__``).

    ``reduce`` is the matching reduction (``np.add.reduce`` is :func:`sum`,
    ``np.multiply`` :func:`prod`, ``np.maximum``/``np.minimum`` :func:`max`/
    :func:`min`, ``np.fmax``/``np.fmin`` their NaN-ignoring forms,
    ``np.logical_and``/``np.logical_or`` :func:`all`/:func:`any`), with
    NumPy's ``axis`` (default 0), ``dtype``, ``keepdims`` and ``initial``.
    ``accumulate`` is :func:`cumulative_sum` for ``np.add``,
    :func:`cumulative_prod` for ``np.multiply``, and the dense route for
    other binary ufuncs. ``out=`` and ``where=`` raise TypeError, as do
    ``reduceat``, ``outer`` and ``at``.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1, 0], [2, 3]]))
    >>> np.add.reduce(a).to_dense()
    array([3, 3])
    """
    name = getattr(ufunc, "__name__", repr(ufunc))
    if method not in ("reduce", "accumulate"):
        raise TypeError(
            f"numpy.{name}.{method} is not supported for coosparse.COO arrays (reduce and accumulate "
            "are); convert with .to_dense() first"
        )
    if len(inputs) != 1 or not isinstance(inputs[0], COO):
        raise TypeError(f"numpy.{name}.{method}: expected one COO array as input")
    a = inputs[0]
    _refuse_out(kwargs.pop("out", None), f"numpy.{name}.{method}")
    _refuse_where(kwargs.pop("where", True), f"numpy.{name}.{method}")
    axis = kwargs.pop("axis", 0)
    dtype = kwargs.pop("dtype", None)
    if method == "accumulate":
        if kwargs:
            raise TypeError(f"numpy.{name}.accumulate: unsupported arguments {sorted(kwargs)}")
        if axis is None:
            raise TypeError(f"numpy.{name}.accumulate: axis must be an integer")
        if ufunc is np.add or ufunc is np.multiply:
            return _cumulative(a, axis, dtype, False, ufunc is np.add, f"numpy.{name}.accumulate")
        if ufunc.nin != 2:
            raise TypeError(f"numpy.{name}.accumulate is only defined for binary ufuncs")
        ax = _single_axis(axis, a.ndim, f"numpy.{name}.accumulate")
        r = ufunc.accumulate(a.to_dense(), axis=ax, dtype=dtype)
        return _dense_to_coo(r, a.sparse_ndim, _scalar(a.fill_value, r.dtype))
    keepdims = bool(kwargs.pop("keepdims", False))
    initial = kwargs.pop("initial", _NoValue)
    if kwargs:
        raise TypeError(f"numpy.{name}.reduce: unsupported arguments {sorted(kwargs)}")
    if ufunc in (np.logical_and, np.logical_or):
        if initial is not _NoValue:
            raise TypeError(f"numpy.{name}.reduce: initial= is not supported for COO arrays")
        r = _logical(a, axis, keepdims, ufunc is np.logical_or)
        return r if dtype is None else r.astype(dtype)
    spec = _REDUCE_UFUNCS.get(ufunc)
    if spec is None:
        supported = ", ".join(f"numpy.{u.__name__}" for u in (*_REDUCE_UFUNCS, np.logical_and, np.logical_or))
        raise TypeError(f"numpy.{name}.reduce is not supported for coosparse.COO arrays; supported: {supported}")
    op, nan = spec
    if op in ("max", "min") and dtype is not None:
        r = _reduce(a, axis, keepdims, op, initial=initial)
        return r.astype(dtype)
    if nan:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # fmax.reduce of all-NaN is NaN, silently
            return _reduce(a, axis, keepdims, op, initial=initial, nan=True)
    return _reduce(a, axis, keepdims, op, dtype=dtype, initial=initial)
