"""Reductions (SPEC 9): the algorithms of sum prod min max mean var std any all count_nonzero
argmin argmax, the nan* forms, cumulative sums and products, diff (the public functions:
:mod:`.functions`; the grouping of entries: :mod:`.grouping`).

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
(``tests/sync_free_cases.py`` lists the cases the tests check).
"""
from __future__ import annotations

import builtins
import operator
import warnings

import numpy as np

from ..._core import dtypes as _dtypes
from ..._core import fill as _fill
from ..._core.coo import COO
from ..._core.keys import INT64_LIMIT, joint_keys
from ..._core.shapes import prod
from ..._kernels.backend import backend_for
from .grouping import (
    _NoValue, _Grouping, _check, _float_dtype, _kernel_dtype, _order_scalar, _single_axis, _size,
    _sum_dtype, _to_order, normalize_axes, row_sums,
)


# ---------------------------------------------------------------------------------- fills
def _scalar(value, dtype):
    """``value`` cast to ``dtype`` as NumPy casts (wrapping, rounding): a NumPy scalar."""
    with np.errstate(all="ignore"):
        return np.asarray(value).astype(dtype)[()]


def _wrap(value, dtype):
    """Python int ``value`` modulo 2**64 in integer ``dtype`` (two's complement)."""
    return np.asarray(value % 2**64, dtype=np.uint64).astype(dtype)[()]


def _times(count, fill, dtype):
    """``count * fill`` in ``dtype`` (count: a float array or scalar), part by part for complex values:
    a complex product would compute inf * 0 for the other part (NaN) where repeated sums give 0."""
    dt = np.dtype(dtype)
    if dt.kind != "c":
        return count * fill
    xp = backend_for(count).xp if hasattr(count, "shape") and count.shape else np
    part = np.dtype(np.float32 if dt == np.complex64 else np.float64)
    c = count.astype(part) if hasattr(count, "astype") else part.type(count)
    pair = xp.stack([c * part.type(fill.real), c * part.type(fill.imag)], axis=-1)
    return xp.ascontiguousarray(pair).view(dt).reshape(pair.shape[:-1])


def _fill_sum(fill, n, dtype):
    """The fill added n times, in ``dtype``; 0 when n == 0 (a NaN fill included)."""
    dt = np.dtype(dtype)
    if n == 0:
        return dt.type(0)
    f = _scalar(fill, dt)
    if dt.kind in "iu":
        return _wrap(int(f) * n, dt)
    with np.errstate(all="ignore"):
        return _scalar(_times(np.asarray(float(n)), f, dt), dt)


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
        m = g.bcast(g.missing(W if W.kind != "c" else vals.real.dtype), vals)
        return xp.where(mk, vals + _times(m, fill, W), vals)
    if op == "prod":
        p = g.bcast(_fill_power(g, fill, W), vals)
        if W.kind != "f" or not np.isfinite(fill):
            return xp.where(mk, vals * p, vals)
        # a finite fill's power that overflows is still a finite number: times a stored ±0 it is an
        # exact ±0 (the signs multiplied), not inf * 0 = NaN
        with np.errstate(invalid="ignore"):
            r = xp.where((vals == 0) & xp.isinf(p), vals * xp.sign(p), vals * p)
        return xp.where(mk, r, vals)
    f = {"max": xp.maximum, "min": xp.minimum, "any": xp.logical_or, "all": xp.logical_and}[op]
    return xp.where(mk, f(vals, fill), vals)


# ---------------------------------------------------------------------------------- sum-like
def _reduce(x, axis, keepdims, op, dtype=None, initial=_NoValue, nan=False):
    """sum / prod / max / min (``nan``: ignoring NaNs) of COO ``x`` as a COO."""
    if op == "sum" and not nan and dtype is None and not keepdims and initial is _NoValue:
        r = row_sums(x, axis)  # (None unless a sorted CPU float matrix's row sums)
        if r is not None:
            return r
    name = ("nan" if nan else "") + op
    a = _check(x, name)
    axes = normalize_axes(axis, a.ndim, name)
    if op in ("sum", "prod"):
        W = _sum_dtype(a.dtype) if dtype is None else _dtypes.check_dtype(dtype, "result")
    else:
        W = a.dtype
        _kernel_dtype(op, W)  # TypeError for complex before any work
    nan = nan and a.dtype.kind in "fc"
    if op == "prod" and W == np.bool_:
        # NumPy casts each element to the dtype first, and a product of bools is their logical and
        r = _logical(a.astype(np.bool_), axes, keepdims, False)
        if initial is not _NoValue and not bool(_scalar(initial, W)):
            r = r._with(values=_zeros_like(r.values), fill_value=np.False_)
        return r
    # float16 sums and products run in float32 until the end, as NumPy's float16 loops do: a partial
    # product beyond float16's range is not inf (then times a fill of 0: NaN) when the result is not
    out_W, W = W, (np.dtype(np.float32) if W == np.float16 and op in ("sum", "prod") else W)
    ufunc = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}[op]
    if nan and op in ("max", "min"):
        ufunc = "f" + ufunc[:3]  # NumPy's nanmax is fmax.reduce: a NaN initial is left out too
    if initial is not _NoValue:
        # converted as NumPy's reduction converts it, with its errors (inf or NaN to an integer,
        # a Python int out of range), before any work
        with np.errstate(all="ignore"):
            init = _scalar(getattr(np, ufunc).reduce(np.empty(0, out_W), dtype=out_W, initial=initial), W)
    counts_implicit = builtins.any(d < a.sparse_ndim for d in axes) and not (op == "sum" and _fill.is_zero(a.fill_value))
    if op != "sum" or nan or counts_implicit or out_W != a.dtype:
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
    if out_W != W:  # the elements are float16 values (a wider input may overflow to inf there) ...
        with np.errstate(over="ignore"):
            values, fill = values.astype(out_W, copy=False), _scalar(fill, out_W)
    fW = _scalar(fill, W)  # ... computed in float32
    vals = _implicit(g, g.reduce(values.astype(W, copy=False), op), fW, op)
    out_fill = {"sum": _fill_sum, "prod": _fill_prod}[op](fW, g.n, W) if op in ("sum", "prod") else fW
    if initial is not _NoValue:
        vals = getattr(xp, ufunc)(vals, init).astype(W, copy=False)
        # the fill is a host scalar on every device
        with np.errstate(all="ignore"):
            out_fill = init if g.n == 0 else _scalar(getattr(np, ufunc)(out_fill, init), W)
    if nan and op in ("max", "min") and (initial is _NoValue or bool(np.isnan(init))):
        # all-NaN selections are NaN (their -inf/+inf stand-ins are not), with NumPy's warning; a
        # (non-NaN) initial is their answer, as fmax.reduce's
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
    if out_W != W:
        with np.errstate(over="ignore"):
            vals, out_fill = vals.astype(out_W), _scalar(out_fill, out_W)
    return g.assemble(vals, out_fill, keepdims)


def _zeros_like(values):
    """False (zero) values of the same shape, dtype and device."""
    return backend_for(values).xp.zeros_like(values)


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
    nonzero_fill = bool(a.fill_value != 0)
    n = prod(a.shape[d] for d in axes)
    if nonzero_fill and n >= INT64_LIMIT:
        # an output storing nothing counts every element (the result's fill): a wrapped int64 would
        # be a wrong count, not NumPy's modular sum
        raise ValueError(f"count_nonzero: a count over {n} elements with the non-zero fill {a.fill_value!r} "
                         f"does not fit int64")
    a = a if a.is_coalesced else a.coalesce()
    b = a._with(values=(a.values != 0).astype(np.int64), fill_value=int(nonzero_fill))
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
    W = _float_dtype(a.dtype) if dtype is None else _inexact(dtype, name)
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


def _inexact(dtype, name):
    """A floating or complex ``dtype=`` of a statistic, else TypeError naming it.

    (NumPy accepts an integer or bool dtype there and sums, squares and
    divides in it, truncating: a result no user means; coosparse refuses it.)
    """
    dt = _dtypes.check_dtype(dtype, "result")
    if dt.kind not in "fc":
        raise TypeError(f"{name}: dtype {dt} is not a floating-point or complex dtype; the {name} is computed "
                        "in floating point (pass float32, float64, ... or cast the result)")
    return dt


def _abs2(z):
    return z.real * z.real + z.imag * z.imag if z.dtype.kind == "c" else z * z


def _var(x, axis, keepdims, dtype, correction, nan=False, name="var", root=False):
    """The variance (``root``: the standard deviation), computed in ``work`` and rounded to the
    result dtype at the end (a float16 standard deviation is the root of the float32 variance)."""
    a = _check(x, name)
    nan = nan and a.dtype.kind in "fc"  # (NumPy's nanvar of integers is var: d / 0 is inf there)
    axes = normalize_axes(axis, a.ndim, name)
    correction = _correction(correction, name)
    src = _float_dtype(a.dtype if dtype is None else _inexact(dtype, name))
    if dtype is not None and a.dtype != src:
        a = a.astype(src)  # NumPy casts the elements to dtype= first (a float16 dtype can overflow them)
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
        if m.ok is not None:  # NumPy's nanvar: no degrees of freedom is NaN (var's d / 0 is inf)
            var = xp.where(m.cnt - correction <= 0, real.type(np.nan), var)
        # the fill's own variance: that of cnt_fill equal values
        f0 = real.type(0) if np.isfinite(m.fill) else real.type(np.nan)
        fvar = f0 / real.type(builtins.max(m.cnt_fill - correction, 0)) if m.cnt_fill else real.type(np.nan)
    few = (m.cnt - correction <= 0) if isinstance(m.cnt, int) else bool((m.cnt - correction <= 0).any())  # synchronize!
    if few or (m.cnt_fill - correction <= 0 and g.has_unstored_outputs()):
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
    if root:
        with np.errstate(invalid="ignore"):
            var, fvar = xp.sqrt(var), np.sqrt(fvar)
    return g.assemble(var.astype(out_dt, copy=False), _scalar(fvar, out_dt), keepdims)


def _correction(correction, name):
    if isinstance(correction, bool) or not isinstance(correction, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: correction (ddof) must be a number; got {correction!r}")
    if correction < 0:
        raise ValueError(f"{name}: correction (ddof) must be non-negative; got {correction}")
    return correction


# ---------------------------------------------------------------------------------- argmin / argmax
def _arg(x, axis, keepdims, is_max, nan=False):
    name = ("nan" if nan else "") + ("argmax" if is_max else "argmin")
    a = _check(x, name)
    if a.dtype.kind == "c":
        raise TypeError(f"{name} of complex arrays is not supported (complex numbers are unordered)")
    src = a if a.is_coalesced else a.coalesce()
    values, fill = src.values, src.fill_value
    if nan and a.dtype.kind == "f":
        _nan_check_all(src, axis, name)
        values, fill = _nan_to(values, fill, -np.inf if is_max else np.inf)
    a = src._with(values=values, fill_value=fill)
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
    g = _Grouping(src, (ax,), order=ax)  # (the indices' companions, the row pointer, are cached with src)
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
    diff = _fill.differs(xp, d, f)  # (-0.0 against 0.0 differs; a complex NaN fill part by part)
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
    # (a product of -0.0 fills alternates in sign: -0, 0, -0, ...; not one fill)
    on_values = (not flatten and ax >= a.sparse_ndim and not include_initial and
                 ((_fill.is_zero(fill) and (is_sum or _fill.zero_bits(fill))) or (not is_sum and _fill.equal(fill, 1))))
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
