"""``a[key]`` (SPEC 9): NumPy's indexing rules on a COO array.

Keys: integers (negative too), slices (any step), ``None``, ``...``, integer
arrays, boolean arrays (NumPy or CuPy, or a boolean COO), in any mix, with
NumPy's placement rule for the dimensions of the advanced (array) indices:
in place when the advanced indices (integers count as advanced once an array
is present) are adjacent, else first. Invalid keys raise what NumPy raises
(``IndexError`` for out-of-range integers, wrong types, too many indices,
mismatched boolean shapes or unbroadcastable arrays; ``ValueError`` for a
zero slice step).

How a key is answered:

1. A sorted array narrows its leading dimensions by binary search: integers
   on the leading sparse axes, then one slice with a positive step, each
   searched inside the range found so far (O(log nnz) each). A plain
   ``a[i]`` or ``a[i:j]`` of a sorted array goes straight there.
2. The remaining integer and slice conditions on sparse axes are evaluated
   over the candidate range in one pass and the survivors compacted
   (``mask_positions``).
3. Integer arrays on sparse axes: the broadcast index tuples ("points") are
   matched against the entries. A sorted array indexed by one array on its
   leading axis looks each point's rows up by binary search
   (``search_ranges``) and emits them point by point; otherwise the points
   are sorted and every candidate entry searches them (``match_search``),
   then the matches are expanded (``expand_ranges``).
4. Keys on dense (hybrid) dimensions index ``values`` directly. Array keys
   that mix sparse and dense dimensions (or that NumPy would move in front of
   sparse ones) first turn the dense dimensions involved into sparse ones.

Result flags: ``is_unique`` is always kept (every output entry comes from a
distinct (entry, point) pair). ``is_sorted`` is kept when the source is
sorted, no sparse slice has a negative step, and the advanced dimensions (if
any) come first in the result (then entries are emitted point by point);
otherwise False. Duplicates are never summed, except into the scalar that an
all-integer key returns (the fill value when nothing is stored there).
"""
from __future__ import annotations

import numbers

import numpy as np

from .._core import dtypes as _dtypes
from .._core import fill as _fill
from .._core.arrays import as_words, rows2d
from .._core.coo import COO
from .._core.dispatch import implements, operation
from .._core.keys import joint_keys
from .._core.shapes import prod
from .._kernels.backend import array_namespace, backend_for, is_device_array
from .coalesce import coalesce
from .shape import check_coo, gather_values, index_rows, result, to_hybrid

_VALID = (
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
    "boolean arrays are valid indices"
)


class _Item:
    """One normalised key item: kind 'int' | 'slice' | 'none' | 'array' | 'bool0'."""

    __slots__ = ("kind", "axis", "value", "before", "start", "stop", "step", "length", "slice")

    def __init__(self, kind, axis=None, value=None, before=0):
        self.kind = kind
        self.axis = axis  # the input axis consumed (None for 'none' and 'bool0')
        self.value = value  # int, or an int64 index array
        self.before = before  # input axes consumed before this item


def _scalar_of(vals, dtype, fill):
    """The element value: the sum of the stored entries (in the accumulation dtype), or the fill.

    Summed from the first entry on, in stored order, as coalesce and to_dense sum them (a
    reduction's pairwise or tree order could round differently, and its 0 start loses a -0.0)."""
    if vals.shape[0] == 0:
        return fill
    if is_device_array(vals):
        vals = vals.get()  # synchronize! (a scalar result lives on the host; the entries of one index)
    acc = _dtypes.to_accumulation(vals)
    with np.errstate(all="ignore"):  # (inf - inf is NaN, silently, as in to_dense)
        s = acc[:1] if acc.shape[0] == 1 else np.add.accumulate(acc, axis=0)[-1:]
    return np.asarray(_dtypes.from_accumulation(s, dtype)[0], dtype=dtype)[()]


def _search_pair(row, v, w):
    """(lower bound of v, lower bound of w) in the sorted index row ``row`` (host ints).

    On a device: both searches in one call, their positions read back in one
    copy (the keys are made on the device: nothing is uploaded).
    """
    top = np.iinfo(np.int64).max
    if w > top:  # a bound of 2**63 (an axis of that length) lies past every int64 index
        n = int(row.shape[0])
        return (n if v > top else _search_pair(row, v, v)[0]), n
    if isinstance(row, np.ndarray):
        lo, hi = row.searchsorted(np.array([v, w], dtype=np.int64))
    else:
        xp = backend_for(row).xp
        keys = xp.full(2, v, dtype=np.int64)
        keys[1] = w
        lo, hi = xp.searchsorted(row, keys).get()  # synchronize! (the range sizes the output)
    return int(lo), max(int(lo), int(hi))  # (a row whose sorted flag lies: never a negative range)


def _fast_leading(a, key):
    """``a[i]`` or ``a[i:j]`` (step 1) of a sorted array: binary search on the leading row."""
    n = a._shape[0]
    ind = a._indices
    row0 = ind[0]
    xp = np if isinstance(row0, np.ndarray) else backend_for(row0).xp
    if type(key) is int:
        i = key + n if key < 0 else key
        if not 0 <= i < n:
            raise IndexError(f"index {key} is out of bounds for axis 0 with size {n}")
        start, stop = i, i + 1
    else:
        start, stop, step = key.indices(n)
        if step != 1:
            return None
        stop = max(stop, start)
    if start == 0 and stop == n:
        lo, hi = 0, ind.shape[1]  # the whole axis: nothing to search (no read-back on a GPU)
    else:
        lo, hi = _search_pair(row0, start, stop)
    vals = a._values[lo:hi]
    if type(key) is int:
        if len(a._shape) == 1:
            return _scalar_of(vals, a.dtype, a.fill_value)
        return result(a, xp.ascontiguousarray(ind[1:, lo:hi]), vals, a._shape[1:], sorted=True,
                      unique=a._unique)
    indices = xp.empty((ind.shape[0], hi - lo), dtype=np.int64)
    if start:
        xp.subtract(row0[lo:hi], start, out=indices[0])
    else:
        indices[0] = row0[lo:hi]
    indices[1:] = ind[1:, lo:hi]
    return result(a, indices, vals, (stop - start,) + a._shape[1:], sorted=True, unique=a._unique)


def _fast_rows(a, key):
    """``a[rows]`` (a 1-D signed integer NumPy array of at least ROW_POINTER_MIN_QUERIES rows) of a
    sorted host array whose row pointer pays: the rows gathered whole through the pointer, as the
    general path's fused route does (the same result), without its key analysis (a fifth of the
    call for 10,000 rows). None where the general path is needed."""
    ind = a._indices
    if (not isinstance(ind, np.ndarray) or key.shape[0] < ROW_POINTER_MIN_QUERIES or not ind.shape[0]
            or not a._row_pointer_pays()):
        return None
    rows = key.astype(np.int64, copy=False)
    if int(rows.view(np.uint64).max()) >= a._shape[0]:  # (one pass: a negative row is huge unsigned)
        rows = _check_bounds(key, a._shape[0], 0, np)  # negative rows count from the end; others raise
    be = backend_for(ind)
    v2 = rows2d(a._values)
    out_idx, words = be.take_rows(ind[1:], as_words(v2), a._row_pointer(), rows)
    vals = words.view(v2.dtype).reshape((out_idx.shape[1],) + a.dense_shape)
    return result(a, out_idx, vals, (key.shape[0],) + a._shape[1:], sorted=True, unique=a._unique)


def _cached_pointer(a):
    return a._cached_companion(("row_pointer", 1, a.shape[0])) if a.sparse_ndim else None


ROW_POINTER_MIN_QUERIES = 64
"""Row gathers of at least this many rows build (once) and use a sorted array's row pointer."""


def row_pointer(a, be, nqueries=None):
    """The row pointer of sorted ``a`` (:meth:`COO.row_pointer`, cached with the array) when a
    gather of ``nqueries`` rows is worth it, else None (then rows are binary-searched).

    Only for arrays whose leading dimension is not much longer than nnz (the
    pointer stays small), and built by a gather of at least
    ROW_POINTER_MIN_QUERIES rows (or found already cached).
    """
    if nqueries is None or nqueries < ROW_POINTER_MIN_QUERIES:
        return _cached_pointer(a)
    if not a._row_pointer_pays():
        return None
    return a._row_pointer()


@operation()
def getitem(a, key):
    """``a[key]``: a COO, or a NumPy scalar for an all-integer key (see the module docstring)."""
    t = type(key)
    if t is tuple and not key:
        return a  # the Array API's a[()] (NumPy would give a 0-d array's scalar)
    if (t is int or t is slice) and a._sorted and a._indices.shape[0]:
        out = _fast_leading(a, key)
        if out is not None:
            return out
    if t is np.ndarray and key.ndim == 1 and key.dtype.kind == "i" and a._sorted:
        out = _fast_rows(a, key)
        if out is not None:
            return out
    items, scalar_ok = _normalize(a, key)
    return _index(a, items, scalar_ok)


# ---------------------------------------------------------------------- key normalisation
def _as_index_array(k, xp):
    if is_device_array(k):
        arr = k if xp is not np else k.get()  # synchronize! (a device key for a host array)
    else:
        arr = np.asarray(k)  # a ragged list raises ValueError, as in NumPy
        if arr.dtype.kind not in "biu" and arr.size == 0 and not isinstance(k, np.ndarray):
            arr = arr.astype(np.int64)  # an empty list is an empty integer index
        if xp is not np:
            arr = xp.asarray(arr)
    if arr.dtype.kind not in "biu":
        raise IndexError(_VALID if arr.dtype.kind not in "fc" or arr.ndim == 0 else
                         "arrays used as indices must be of integer (or boolean) type")
    return arr


def _normalize(a, key):
    """Items with axes assigned, bounds checked, arrays normalised; and whether a scalar may result."""
    if not isinstance(key, tuple):
        key = (key,)
    xp = backend_for(a.indices).xp
    raw = []
    ellipses = 0
    consumed = 0
    for k in key:
        if k is Ellipsis:
            raw.append(("ell", None))
            ellipses += 1
        elif k is None:
            raw.append(("none", None))
        elif isinstance(k, slice):
            raw.append(("slice", k))
            consumed += 1
        elif isinstance(k, (bool, np.bool_)):
            raw.append(("bool0", bool(k)))
        elif isinstance(k, numbers.Integral):
            raw.append(("int", int(k)))
            consumed += 1
        elif isinstance(k, COO):
            if k.dtype == np.bool_ and k.ndim == 0:
                raw.append(("bool0", bool(k.to_dense()[()])))
            elif k.dtype == np.bool_:
                raw.append(("boolarr", (nonzero(k), k.shape)))
                consumed += k.ndim
            else:
                raw.append(("arr", _as_index_array(k.to_dense(), xp)))
                consumed += 1
        elif isinstance(k, (str, bytes, dict, set, float, complex)) or k is NotImplemented:
            raise IndexError(_VALID)
        else:
            arr = _as_index_array(k, xp)
            if arr.dtype == np.bool_:
                if arr.ndim == 0:
                    raw.append(("bool0", bool(arr)))
                else:
                    raw.append(("boolarr", (xp.nonzero(arr), arr.shape)))
                    consumed += arr.ndim
            elif arr.ndim == 0:
                raw.append(("int", int(arr)))
                consumed += 1
            else:
                raw.append(("arr", arr))
                consumed += 1
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > a.ndim:
        raise IndexError(
            f"too many indices for array: array is {a.ndim}-dimensional, but {consumed} were indexed"
        )
    items = []
    ax = 0
    arrays = False

    def full(axis):
        it = _Item("slice", axis, before=axis)
        it.start, it.stop, it.step, it.length, it.slice = 0, a.shape[axis], 1, a.shape[axis], slice(None)
        return it

    for kind, v in raw:
        if kind == "ell":
            items.append(_Item("ellipsis", before=ax))  # separates advanced indices even when empty
            for _ in range(a.ndim - consumed):
                items.append(full(ax))
                ax += 1
        elif kind == "none":
            items.append(_Item("none", before=ax))
        elif kind == "bool0":
            arrays = True
            items.append(_Item("bool0", value=xp.zeros(1 if v else 0, dtype=np.int64), before=ax))
        elif kind == "int":
            n = a.shape[ax]
            if not -n <= v < n:
                raise IndexError(f"index {v} is out of bounds for axis {ax} with size {n}")
            items.append(_Item("int", ax, v + n if v < 0 else v, before=ax))
            ax += 1
        elif kind == "slice":
            n = a.shape[ax]
            if v.step == 0:
                raise ValueError("slice step cannot be zero")
            try:
                start, stop, step = v.indices(n)
            except TypeError:
                raise TypeError(
                    "slice indices must be integers or None or have an __index__ method"
                ) from None
            it = _Item("slice", ax, before=ax)
            it.start, it.stop, it.step, it.slice = start, stop, step, v
            # (len(range(...)) overflows ssize_t for an axis of 2**63)
            it.length = max(0, (stop - start + step + (-1 if step > 0 else 1)) // step)
            items.append(it)
            ax += 1
        elif kind == "arr":
            arrays = True
            items.append(_Item("array", ax, v.astype(np.int64, copy=False), before=ax))
            ax += 1
        else:  # boolarr
            arrays = True
            coords, bshape = v
            for j, m in enumerate(bshape):
                if ax + j >= a.ndim or a.shape[ax + j] != m and m != 0:  # NumPy lets a length-0 axis pass
                    size = a.shape[ax + j] if ax + j < a.ndim else 0
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {ax + j}; size of axis "
                        f"is {size} but size of corresponding boolean axis is {m}"
                    )
            for j in range(len(bshape)):
                items.append(_Item("array", ax + j, xp.asarray(coords[j]).astype(np.int64, copy=False),
                                   before=ax + j))
            ax += len(bshape)
    if not ellipses:
        while ax < a.ndim:
            items.append(full(ax))
            ax += 1
    if arrays:
        shapes = [tuple(it.value.shape) for it in items if it.kind in ("array", "bool0")]
        try:
            bshape = np.broadcast_shapes(*shapes)
        except ValueError:
            raise IndexError(
                "shape mismatch: indexing arrays could not be broadcast together with shapes "
                + " ".join(str(s) for s in shapes)
            ) from None
        if prod(bshape):  # NumPy visits (and bounds-checks) index elements only for a non-empty result
            for it in items:
                if it.kind == "array":
                    it.value = _check_bounds(it.value, a.shape[it.axis], it.axis, xp)
    return items, not ellipses and not arrays and any(kind == "int" for kind, _ in raw)


def _check_bounds(arr, n, axis, xp):
    arr = arr.astype(np.int64, copy=False)
    if arr.size:
        if isinstance(arr, np.ndarray):
            lo, hi = int(arr.min()), int(arr.max())
        else:
            lo, hi = (int(v) for v in xp.stack([arr.min(), arr.max()]).get())  # synchronize! (key bounds)
        if lo < -n or hi >= n:
            bad = lo if lo < -n else hi
            raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
        if lo < 0:
            arr = xp.where(arr < 0, arr + n, arr)
    return arr


# ---------------------------------------------------------------------- the engine
def _index(a, items, scalar_ok):
    s = a.sparse_ndim

    def dense_side(it):
        if it.axis is not None:
            return it.axis >= s
        return it.before >= s and a.dense_ndim > 0

    arr_items = [it for it in items if it.kind in ("array", "bool0")]
    front = False
    first_adv = None
    if arr_items:
        adv = [i for i, it in enumerate(items) if it.kind in ("array", "bool0", "int")]
        adjacent = adv == list(range(adv[0], adv[-1] + 1))
        front = not adjacent
        first_adv = items[adv[0]]
        sides = {dense_side(it) for it in arr_items}
        if sides == {True} and not adjacent or sides == {True, False}:
            # NumPy would put dense-dimension array results before sparse dimensions:
            # make every dimension an array indexes sparse first
            need = max(it.axis + 1 if it.axis is not None else it.before + 1 for it in arr_items)
            return _index(to_hybrid(a, max(0, min(a.dense_ndim, a.ndim - need))), items, scalar_ok)
        sparse_arrays = sides == {False}
    else:
        sparse_arrays = False
    sp_items = [it for it in items if not dense_side(it)]
    dn_items = [it for it in items if dense_side(it)]

    be = backend_for(a.indices)
    xp = be.xp
    indices = a.indices
    nnz = a.nnz

    # 1. narrow a sorted array's leading axes by binary search
    lo, hi = 0, nnz
    done = set()  # ids of items fully answered by the narrowing
    if a.is_sorted and nnz:
        for it in sp_items:
            if it.kind in ("none", "bool0", "ellipsis"):
                continue
            row = indices[it.axis]
            if it.kind == "int":
                b0, b1 = _search_pair(row[lo:hi], it.value, it.value + 1)
                lo, hi = lo + b0, lo + b1
                done.add(id(it))
                continue
            if it.kind == "slice" and not _is_full(it, a.shape):
                if it.step > 0:
                    kmin, kmax = it.start, max(it.stop, it.start)
                else:
                    kmin, kmax = it.stop + 1, max(it.start + 1, it.stop + 1)
                b0, b1 = _search_pair(row[lo:hi], kmin, kmax)
                lo, hi = lo + b0, lo + b1
                if abs(it.step) == 1:
                    done.add(id(it))
            break

    # the basic conditions still to test, and the advanced (array) items on sparse axes
    conds = [it for it in sp_items
             if it.kind in ("int", "slice") and id(it) not in done and not _is_full(it, a.shape)]
    sp_arrays = [it for it in sp_items if it.kind in ("array", "bool0")] if sparse_arrays else []
    bshape = ()
    if sp_arrays:
        bshape = tuple(np.broadcast_shapes(*[tuple(it.value.shape) for it in sp_arrays]))
    point_major = bool(sp_arrays) and a.is_sorted and (front or all(
        it.kind in ("int", "none", "ellipsis") for it in sp_items[: sp_items.index(first_adv)]))

    sel = None  # None: the range [lo, hi); else source positions
    pt = None  # point of each selected entry (array keys)
    ax_arrays = [it for it in sp_arrays if it.kind == "array"]
    npoints = prod(bshape)
    if sp_arrays and npoints == 0:
        sel = xp.zeros(0, dtype=np.int64)
        pt = sel
    elif (a.is_sorted and len(ax_arrays) == 1 and ax_arrays[0].axis == 0 and lo == 0 and hi == nnz
          and npoints):
        # 2a. one array on the leading axis of a sorted array: look the rows up
        p0 = xp.ascontiguousarray(xp.broadcast_to(ax_arrays[0].value, bshape).reshape(-1))
        rp = row_pointer(a, be, p0.shape[0])
        rest = [it for it in sp_items if it is not ax_arrays[0] and it.kind != "ellipsis"]
        whole = not conds and len(bshape) == 1 and all(it.kind == "slice" and it.step == 1 for it in rest)
        if rp is not None and not whole:
            start = rp[p0]
            count = rp[p0 + 1] - start
        elif rp is None:
            start, stop = be.search_ranges(indices[0], p0, p0 + 1)
            count = stop - start
        if whole:
            # rows whole, in order: one fused pass writes the point ids, the other index rows
            # and the values (no row list, no separate gathers); through the pointer, the rows'
            # spans are found in the same call
            v2 = rows2d(a.values)
            if rp is not None:
                out_idx, words = be.take_rows(indices[1:], as_words(v2), rp, p0)  # synchronize!
            else:
                out_idx, words = be.take_ranges(indices[1:], as_words(v2), start, count)  # synchronize!
            vals = words.view(v2.dtype).reshape((out_idx.shape[1],) + a.dense_shape)
            return _finish(a, out_idx, vals, bshape + a.sparse_shape[1:], dn_items, scalar_ok, a.is_sorted)
        sel, pt = be.expand_ranges(start, count)  # synchronize! (output size)
        if conds:
            keep = be.mask_positions(_conditions(conds, lambda ax: indices[ax][sel], xp))
            sel, pt = sel[keep], pt[keep]
    else:
        # 2b. the remaining basic conditions over the candidate range, in one pass
        if conds:
            mask = _conditions(conds, lambda ax: indices[ax, lo:hi], xp)
            sel = be.mask_positions(mask)  # synchronize! (output size)
            if lo:
                sel += lo
        if sp_arrays:
            sel, pt = _match_points(a, be, sel, lo, hi, sp_arrays, ax_arrays, bshape, point_major)

    # 3. the output
    if sel is None:
        cols = indices[:, lo:hi]
        vals = a.values[lo:hi]
        m = hi - lo
    else:
        m = sel.shape[0]
        cols = be.gather_columns(indices, sel) if s else xp.zeros((0, m), dtype=np.int64)
        vals = gather_values(be, a.values, sel)
    rows, shape = [], []
    reversed_axis = False

    def put_points():
        if not bshape:
            return
        if len(bshape) == 1:
            rows.append(pt)
            shape.append(bshape[0])
            return
        p = pt
        out = []
        for d in reversed(bshape):
            out.append(p % d if d > 1 else xp.zeros(m, dtype=np.int64))
            p = p // d if d > 1 else p
        rows.extend(reversed(out))
        shape.extend(bshape)

    if front:
        put_points()
    for it in sp_items:
        if it is first_adv and not front and sparse_arrays:
            put_points()
        if it.kind == "slice":
            r = cols[it.axis]
            if it.step > 0:
                r = r if it.start == 0 and it.step == 1 else (r - it.start) // it.step
            else:
                r = (it.start - r) // -it.step
                reversed_axis = reversed_axis or it.length > 1
            rows.append(r)
            shape.append(it.length)
        elif it.kind == "none":
            rows.append(None)
            shape.append(1)
    out_idx = xp.empty((len(rows), m), dtype=np.int64)
    for j, r in enumerate(rows):
        if r is None:
            out_idx[j] = 0
        else:
            out_idx[j] = r

    sorted_ = a.is_sorted and not reversed_axis and (not sp_arrays or point_major)
    return _finish(a, out_idx, vals, tuple(shape), dn_items, scalar_ok, sorted_)


def _finish(a, out_idx, vals, sparse_shape, dn_items, scalar_ok, sorted_):
    """Apply the keys on dense dimensions to the values; the result (or its scalar)."""
    if dn_items:
        dkey = [slice(None)]
        for it in dn_items:
            if it.kind == "int":
                dkey.append(it.value)
            elif it.kind == "slice":
                dkey.append(it.slice)
            elif it.kind == "none":
                dkey.append(None)
            elif it.kind == "bool0":
                dkey.append(np.bool_(it.value.shape[0] == 1))
            elif it.kind == "ellipsis":
                continue
            else:
                dkey.append(it.value)
        vals = vals[tuple(dkey)]
    shape = tuple(sparse_shape) + tuple(vals.shape[1:])
    if not shape and scalar_ok:
        return _scalar_of(vals, a.dtype, a.fill_value)
    return result(a, out_idx, vals, shape, sorted=sorted_, unique=a.is_unique)


def _is_full(it, shape):
    """A slice that keeps every index of its axis (forwards or backwards): no entry is dropped."""
    return it.kind == "slice" and abs(it.step) == 1 and it.length == shape[it.axis]


def _conditions(conds, row_of, xp):
    """Mask of the candidates that satisfy every int / slice item in ``conds``."""
    mask = None
    for it in conds:
        r = row_of(it.axis)
        if it.kind == "int":
            c = r == it.value
        elif it.step > 0:
            c = (r >= it.start) & (r < it.stop)
            if it.step > 1:
                c &= (r - it.start) % it.step == 0
        else:
            c = (r <= it.start) & (r > it.stop)
            if it.step < -1:
                c &= (it.start - r) % -it.step == 0
        mask = c if mask is None else mask & c
    return mask


def _match_points(a, be, sel, lo, hi, sp_arrays, ax_arrays, bshape, point_major):
    """(selected positions, point ids) of the candidates matching the broadcast index points."""
    xp = be.xp
    cand = xp.arange(lo, hi, dtype=np.int64) if sel is None else sel
    npoints = prod(bshape)
    if not ax_arrays:  # only boolean scalars: one point (a new axis of length 1)
        return cand, xp.zeros(cand.shape[0], dtype=np.int64)
    axes = [it.axis for it in ax_arrays]
    points = xp.stack([xp.broadcast_to(it.value, bshape).reshape(-1) for it in ax_arrays])
    points = xp.ascontiguousarray(points.astype(np.int64, copy=False))
    entries = be.gather_columns(index_rows(a.indices, axes), cand)
    (ek, pk), bound = joint_keys([entries, points], tuple(a.shape[ax] for ax in axes))
    spk, sperm = be.sort_pairs(pk, bound)
    first, count = be.match_search(ek, spk)
    rows, owner = be.expand_ranges(first, count)  # synchronize! (output size)
    sel = cand[owner]
    pt = sperm[rows]
    if point_major and sel.shape[0] > 1:
        _, order = be.sort_pairs(pt, max(npoints, 1))
        sel, pt = sel[order], pt[order]
    return sel, pt


# ---------------------------------------------------------------------- nonzero / argwhere
# (a boolean index is its nonzero(), as in NumPy)
@implements(np.nonzero)
def nonzero(x, /):
    """Indices of the non-zero elements: a tuple of int64 arrays, one per dimension, C order.

    Duplicates are summed first (an index whose entries cancel is zero). A
    non-zero fill makes every unstored element non-zero: the answer is then
    computed densely (its size is the array's). 0-d arrays raise ValueError.
    """
    x = check_coo(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero of a 0-d array is not supported; use atleast_1d first")
    xp = array_namespace(x.values)
    if not _fill.is_zero(x.fill_value):
        return tuple(i.astype(np.int64, copy=False) for i in xp.nonzero(x.to_dense()))
    c = coalesce(x)
    be = backend_for(c.indices)
    nz = c.values != 0
    if c.dense_ndim == 0:
        keep = be.mask_positions(nz)  # synchronize! (output size)
        cols = be.gather_columns(c.indices, keep)
        return tuple(cols[d] for d in range(c.ndim))
    parts = xp.nonzero(nz)
    cols = be.gather_columns(c.indices, xp.ascontiguousarray(parts[0].astype(np.int64)))
    return tuple(cols[d] for d in range(c.sparse_ndim)) + tuple(p.astype(np.int64) for p in parts[1:])


@implements(np.argwhere)
def argwhere(x):
    """Indices of the non-zero elements as a dense int64 array of shape (N, ndim)."""
    x = check_coo(x, "argwhere")
    xp = array_namespace(x.values)
    if x.ndim == 0:
        return xp.zeros((int(bool(x.to_dense() != 0)), 0), dtype=np.int64)
    return xp.stack(nonzero(x), axis=-1)
