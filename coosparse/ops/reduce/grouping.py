"""Reductions, part 1: arguments (axes, ``out``/``where`` refusals, result dtypes), the kernels'
dtypes, and the grouping of entries by their index on the kept axes (see :mod:`.reductions`)."""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from ..._core import dtypes as _dtypes
from ..._core.coo import COO
from ..._core.dispatch import sparse_operand
from ..._core.keys import INT64_LIMIT, is_wide, joint_keys, unravel_keys
from ..._kernels.backend import backend_for, is_device_array
from ..device import asarray

_NoValue = np._NoValue
_SIGN = np.int64(-(2**63))  # xor with it maps uint64 order onto int64 order


# ---------------------------------------------------------------------------------- arguments
def _check(x, op):
    """``x`` as a COO: other libraries' sparse arrays through their bridges, and scalars (NumPy
    scalars, 0-d arrays, Python numbers: what a COO is indexed down to) through
    :func:`coosparse.asarray`; TypeError for anything else (a dense array is not densified into
    a reduction by accident: convert it with ``coosparse.asarray``)."""
    x = sparse_operand(x)
    if isinstance(x, COO):
        return x
    if isinstance(x, (np.generic, builtins.bool, int, float, complex)) or (
            (isinstance(x, np.ndarray) or is_device_array(x)) and x.ndim == 0):
        return asarray(x)
    raise TypeError(f"coosparse.{op} expects a COO array; got {type(x).__name__}")


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


def _extreme(dtype, lowest):
    """The lowest (``lowest``) or highest value of real ``dtype``: the identity of max (min)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return not lowest
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return info.min if lowest else info.max
    return -np.inf if lowest else np.inf


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
    """Segment reduction ``op`` (the blocked order) of 2-D values already in a kernel dtype."""
    return _kernel(be, op, values2d, lambda v: be.segment_reduce(v, perm, starts, op))


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


def _nonempty_rows(ptr, nnz):
    """(rows, starts) of the non-empty rows of host row pointer ``ptr``; two empty arrays when none is
    empty (the pointer is then the starts)."""
    nonempty = ptr[1:] != ptr[:-1]
    if nonempty.all():
        return np.empty(0, np.int64), np.empty(0, np.int64)
    rows = np.flatnonzero(nonempty)
    starts = np.empty(rows.shape[0] + 1, dtype=np.int64)
    starts[:-1] = ptr[rows]
    starts[-1] = nnz
    return rows, starts


def row_segments(a, ptr):
    """(non-empty rows, their segments' starts) of sorted CPU array ``a`` with row pointer ``ptr``:
    the ``row_segments`` companion; (None, ptr) when no row is empty (the pointer is the starts)."""
    rows, starts = a._companion(("row_segments", 1, a.shape[0]), lambda be: _nonempty_rows(ptr, a.nnz))
    return (None, ptr) if starts.shape[0] == 0 else (rows, starts)


def _output_rows(a, ptr):
    """(output row numbers, segment starts) of a sorted CPU array's row reductions. With no empty
    row the row numbers are every row's, cached too (``("row numbers", nrows)``): np.arange of
    131,072 rows took 35-160 us of a 2 ms row sum. Results' indices view these rows: a COO's index
    arrays are read-only views, so the cache is never written."""
    rows, starts = row_segments(a, ptr)
    if rows is None:
        rows = a._companion(("row numbers", a.shape[0]), lambda be: np.arange(a.shape[0], dtype=np.int64))
    return rows, starts


def row_sums(x, axis):
    """``x.sum(axis=1)`` (no dtype, keepdims or initial) of a sorted 2-D CPU COO of float32 or
    float64 values and fill +0.0 that stores something; None for any other call.

    What the general route gives (the pointer strategy, then a fill of 0 adds nothing, and the
    result's fill is +0.0): the same kernel on the same segments, the same result, without the
    general grouping and fill steps (~0.1 ms of Python per call, more with the caches cold after
    the kernel: the whole call measured 0.1-0.2 ms above its kernel on the 2 ms benchmark sums).
    """
    if not (type(axis) is int and axis in (1, -1) and isinstance(x, COO)):
        return None
    # the stored attributes, not the properties: the call runs with the caches cold after the
    # previous kernel (the benchmark's regime), where every Python step costs several times its
    # warm time (the checks and the result's construction took ~0.15 ms of a 2.2 ms row sum)
    values = x._values
    if not (type(values) is np.ndarray and values.ndim == 1 and len(x._shape) == 2 and values.dtype.char in "fd"
            and values.shape[0] and x._row_pointer_pays()):
        return None
    fill = x._fill
    if fill != 0 or math.copysign(1.0, fill) < 0:  # (+0.0 only: -0.0 and NaN take the general route)
        return None
    rows, starts = _output_rows(x, x._row_pointer())
    out = backend_for(values).segment_reduce(np.ascontiguousarray(values).reshape(-1, 1), None, starts, "sum")
    return COO._trusted(rows.reshape(1, -1), out.reshape(-1), (x._shape[0],), True, True, fill)


class _Grouping:
    """How the entries of ``a`` map onto the output indices of a reduction over ``axes``.

    Strategies for reduced sparse axes (R) with kept sparse axes K:

    - ``pointer``: K is the leading axis alone and ``a`` is sorted with a
      leading dimension not much longer than nnz: each output row is a
      segment of the array's row pointer (:meth:`COO.row_pointer`, cached
      with the array), reduced by the ordered segment kernels; the index
      rows are not read at all once the pointer exists;
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
        if K == [0] and (order is None or a.sparse_ndim == 2) and a._row_pointer_pays() and n:
            # the leading axis kept: each output row is a segment of the array's row pointer
            # (a companion cached with the array), reduced in stored order like every strategy;
            # a matrix's columns ascend within each row, the order arg-min/max visit them in
            self._pointer_plan(a._row_pointer())
            if order is not None:
                self.sub = a.indices[1]
            return
        rows = K + ([order] if order is not None else [])
        shape = tuple(a.shape[d] for d in rows)
        prefix = rows == list(range(len(rows)))
        if len(rows) == 1:
            idx = a.indices[rows[0]].reshape(1, n)  # a row of a C-contiguous array: a view
        else:
            idx = xp.ascontiguousarray(a.indices[: len(rows)] if prefix else a.indices[rows])
        self.kshape = tuple(a.shape[d] for d in K)
        self.keys_sorted = a.is_sorted and prefix  # a leading run of axes of a sorted array is sorted
        if order is None and len(rows) == 1:
            okeys, bound = idx[0], shape[0]  # one kept axis: its index is the key
        elif order is not None and self.keys_sorted:
            okeys, bound = None, None  # (not needed: no sort, and the segments come from the kept axes)
        else:
            (okeys,), bound = joint_keys([idx], shape)
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

    def _pointer_plan(self, ptr):
        xp = self.xp
        a = self.a
        self.kshape = (a.shape[0],)
        if xp is np:
            # the non-empty rows and their segments' starts, cached with the array beside its
            # pointer (a row sum of the 2M-entry R-MAT graph spent ~0.3 ms of its ~3 finding them
            # at every call); with no empty row (the common case when nnz is several times the
            # rows) the pointer is the starts as it is and the rows every row number (_output_rows)
            rows, starts = _output_rows(a, ptr)
        else:  # (on a GPU the general path keeps to one read)
            rows = xp.flatnonzero(ptr[1:] != ptr[:-1])  # synchronize! (the number of output rows)
            starts = xp.empty(rows.shape[0] + 1, dtype=np.int64)
            starts[:-1] = ptr[rows]
            starts[-1] = a.nnz
        self.strategy = "pointer"
        self.perm, self.starts = None, starts
        self.out_indices = xp.ascontiguousarray(rows.astype(np.int64, copy=False).reshape(1, -1))
        self._nout = rows.shape[0]

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
        implicit elements take part when ``fill_ok``. The counts are int64, or
        float64 (rounded, not wrapped) when a count can reach 2**63.
        """
        dt = np.dtype(np.int64 if self.n < INT64_LIMIT else np.float64)
        cnt = self.reduce(ok.astype(np.int64), "sum").astype(dt, copy=False)
        miss = self.has_missing() if fill_ok else None
        if miss is not None:
            cnt = cnt + self.bcast(self.xp.where(miss, self.missing(dt), dt.type(0)), cnt)
        return cnt, (self.n if fill_ok else 0)

    def reduce(self, values, op):
        """Stored part of the reduction ``op`` of ``values`` (n, *dense): (nout, *dense_keepdims).

        ``values`` are in the result dtype; the arithmetic runs in the kernel
        dtype of ``op`` and the result comes back in the values' dtype.
        """
        dt = values.dtype
        if op in ("max", "min") and self.n_dense == 0 and self.value_axes:
            # an empty dense axis reduces to the identity (max/min without one raised before: here
            # any/all and initial= give the answer), not to the namespace's zero-size ValueError
            shape = tuple(1 if d in self.value_axes else s for d, s in enumerate(values.shape))
            values = self.xp.full(shape, _extreme(dt, op == "max"), dtype=dt)
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
