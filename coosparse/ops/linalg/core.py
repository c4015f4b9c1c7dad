"""Linear algebra (SPEC 10), the core: every product as one batched contraction.

Every product reduces to one *batched contraction* ``out[b, i, j] = sum_k
A[b, i, k] * B[b, k, j]``, where ``b``, ``i``, ``k`` and ``j`` each stand for a
group of axes (batch axes broadcast as in NumPy). A COO operand is never
transposed or reshaped: each group's axes are fused into one int64 key per
entry (the index row itself for a single axis), so a transposed view
(``A.T @ G`` in a gradient) costs nothing. Hybrid operands (dense trailing
dimensions) first have their dense dimensions turned into index columns
(values are read once; flags kept).

Strategy (decided here, from the operand kinds and flags):

=====================  ========================================================
COO x dense            SpMV/SpMM over row segments: a COO sorted by its row
                       key gives row offsets (cached for the array, see
                       below); each output row is summed in stored order.
                       Unsorted: ``spmm_unsorted`` (CPU: threads own row
                       ranges and scan the entries); on a GPU a stable sort
                       of the rows, whose permutation and offsets are cached
                       for the array like the offsets; same order, same bits.
dense x COO            ``dense_spmm``: the COO is read column by column
                       through its stored order (CPU: threads own output rows;
                       GPU: a stable sort by column); the dense operand is
                       never transposed.
COO x COO              SpGEMM, result coalesced: CPU Gustavson (dense
                       accumulator per thread, two passes), GPU
                       expand-sort-compress; an output element is its first
                       product plus the next ones in the order (A's row in
                       grouped order) x (B's row in grouped order).
dense x dense          NumPy/CuPy (``xp.matmul``).
sampled_matmul         SDDMM over the mask's entries, eight interleaved lanes
                       per dot product (see :func:`sampled_matmul`).
=====================  ========================================================

Bad input (docs/reliability.md): arrays built with ``check=False``
may hold indices outside their shape or flags that lie. Every index is
checked where it is read, in a pass the product makes anyway: a group of
several axes is fused by the checked ``linear_index`` row (one unsigned
compare per index), and a key that is a single axis's index row is checked
by the kernel that reads it (``row_offsets`` for the rows of a sorted
operand, the SpMV/SpMM/SDDMM loops for columns, ``spgemm``'s passes for
SpGEMM). On the CPU the kernel raises at once and :func:`_product` turns the
IndexError into the one message of ``coosparse/_kernels/bounds.py`` (naming the operand's
dimension, position and value); on a GPU the kernels skip the entry and set
the error word (reported at the next synchronising call or by
``coosparse.check_device_errors()``). A ``sorted`` flag that lies is caught
where the order is relied on (``row_offsets``, SpGEMM's row keys): ValueError
(``coosparse._kernels.bounds.lying_flag_error``).

Row offsets cache: the first SpMV/SpMM on a sorted COO computes its row
offsets (a CSR row pointer) and keeps them with the array as one of its
companions (:meth:`COO.row_pointer` for a plain matrix: the same pointer the
row reductions and row gathers use; counted in ``nbytes``, not pickled,
invisible to flags and equality). It assumes, as the COO type does, that
``indices`` are not modified in place.
"""
from __future__ import annotations

import numbers
import operator

import numpy as np

from ..._core import dtypes as _dtypes
from ..._core.coo import COO
from ..._core.dispatch import sparse_operand
from ..._core.fill import require_zero_fill
from ..._core.keys import INT64_LIMIT
from ..._core.shapes import check_entries, prod
from ..._kernels.backend import array_namespace, backend_for, is_device_array
from ..._kernels.bounds import check_indices, first_out_of_bounds, raise_out_of_bounds
from ..broadcast import broadcast_shapes
from ..reduce.grouping import row_segments


# ----------------------------------------------------------------------------- operands


def _is_coo(x):
    return isinstance(x, COO)


def _xp_of(x):
    return array_namespace(x.values if _is_coo(x) else x)


def _as_operand(x, op):
    """COO, NumPy/CuPy array (lists and scalars become NumPy arrays; scipy.sparse and pydata/sparse
    arrays the COO they convert to), else TypeError."""
    x = sparse_operand(x)
    if _is_coo(x) or isinstance(x, np.ndarray) or is_device_array(x):
        return _dtypes.native(x) if not _is_coo(x) else x  # (a masked array is refused there)
    if isinstance(x, (numbers.Number, np.generic, list, tuple)):
        arr = np.asarray(x)
        if arr.dtype != object:
            return arr
    raise TypeError(f"{op}: unsupported operand type {type(x).__name__}; expected a COO or an array")


def _check_zero_fill(op, *xs):
    require_zero_fill(op, *[x for x in xs if _is_coo(x)])


def _result_dtype(*dtypes):
    return _dtypes.result_type(*dtypes)


_acc_dtype = _dtypes.accumulation_dtype


def _to_acc(x, dtype):
    """``x`` (values or a dense operand) in the accumulation dtype of result ``dtype``."""
    acc = _acc_dtype(dtype)
    if x.dtype == acc:
        return x
    if x.dtype == np.uint64 and acc == np.int64:
        return x.view(np.int64)  # same bits; modular products and sums agree
    return x.astype(acc)


def _from_acc(x, dtype):
    return _dtypes.from_accumulation(x, dtype)


def sparsify(a):
    """``a`` with its dense (hybrid) dimensions turned into index columns: sparse_ndim == ndim.

    Each entry's dense block becomes ``prod(dense_shape)`` entries in C order
    (explicit zeros kept), so the flags carry over, except ``is_sorted`` of an
    array with duplicates: their blocks interleave.
    """
    if a.dense_ndim == 0:
        return a
    xp = array_namespace(a.indices)
    dshape = a.dense_shape
    d = int(np.prod(dshape))
    n = a.nnz
    grid = xp.stack([g.reshape(-1) for g in xp.meshgrid(*[xp.arange(s, dtype=np.int64) for s in dshape],
                                                      indexing="ij")]) if d else xp.zeros((len(dshape), 0), np.int64)
    indices = xp.concatenate([xp.repeat(a.indices, d, axis=1), xp.tile(grid, (1, n))], axis=0)
    values = xp.ascontiguousarray(a.values.reshape(n * d))
    return COO(xp.ascontiguousarray(indices), values, a.shape, sorted=a.is_sorted and (a.is_unique or d <= 1),
               unique=a.is_unique, check=False, fill_value=a.fill_value)


# ----------------------------------------------------------------------------- keys of axis groups
class _Key:
    """One int64 key per entry for a group of axes, and the way back to index rows.

    Narrow groups (``prod(sizes) < 2**63``) use the row-major linear index;
    wide ones the dense rank of the index tuple (``table`` holds the distinct
    tuples' part keys in increasing order). Both preserve order and equality.
    ``key`` is None for an empty group (every entry has key 0).
    """

    def __init__(self, key, bound, sizes, parts=None, table=None):
        self.key = key
        self.bound = bound
        self.sizes = tuple(sizes)
        self.parts = parts  # fused: the _Key parts, in order
        self.table = table  # wide: list of part-key arrays, one per part (or index rows)

    def unravel(self, be, keys):
        """Index rows (list of 1-D arrays, one per axis) of the given keys of this group."""
        xp = be.xp
        if not self.sizes:
            return []
        if self.parts is not None:
            if self.table is not None:
                sub = [t[keys] for t in self.table]
            else:
                sub, rest = [], keys
                for p in reversed(self.parts):
                    sub.append(rest % p.bound if len(sub) < len(self.parts) - 1 else rest)
                    rest = rest // p.bound
                sub = sub[::-1]
            out = []
            for p, k in zip(self.parts, sub):
                out.extend(p.unravel(be, k))
            return out
        if self.table is not None:
            return [t[keys] for t in self.table]
        if len(self.sizes) == 1:
            return [keys]
        strides = _strides(self.sizes)
        if keys.shape[0] < _SMALL:
            return [(keys // st) % sz if i else keys // st for i, (st, sz) in enumerate(zip(strides, self.sizes))]
        idx = be.unravel_index(xp.ascontiguousarray(keys, dtype=np.int64),
                               np.array(strides, dtype=np.int64))  # host strides: passed by value
        return [idx[i] for i in range(len(self.sizes))]


# below this many entries, sorts (NumPy only) and unravels run as array-namespace calls (no
# kernel launch or thread-pool wake-up; the stable permutation is unique, so the result is the same)
_SMALL = 1 << 15


def _sort(be, keys, bound):
    """Stable sort of int64 keys in [0, bound): (sorted_keys, perm).

    Small NumPy inputs use NumPy's stable argsort (no thread-pool wake-up); the
    stable permutation is unique, so the result is the kernel's.
    """
    if be.xp is np and keys.shape[0] < _SMALL:
        perm = np.argsort(keys, kind="stable")
        return keys[perm], perm
    return be.sort_pairs(keys, bound)


def _strides(sizes):
    out, acc = [], 1
    for s in reversed(sizes):
        out.append(acc)
        acc *= int(s)
    return out[::-1]


def _rank(xp, columns):
    """Dense ranks of the tuples ``columns`` (list of equal-length int64 arrays), lexicographic.

    Returns (ranks, bound, table) with table = the distinct tuples in order
    (one array per column). Synchronises on a GPU (the number of distinct tuples).
    """
    n = columns[0].shape[0]
    if n == 0:
        return xp.zeros(0, np.int64), 1, [c[:0] for c in columns]
    order = xp.lexsort(xp.stack(columns[::-1]))
    s = [c[order] for c in columns]
    new = xp.zeros(n, dtype=bool)
    new[0] = True
    for c in s:
        new[1:] |= c[1:] != c[:-1]
    ranks_sorted = xp.cumsum(new, dtype=np.int64) - 1
    ranks = xp.empty(n, dtype=np.int64)
    ranks[order] = ranks_sorted
    bound = int(ranks_sorted[-1]) + 1  # synchronize! (wide shapes only)
    return ranks, bound, [c[new] for c in s]


def _group_keys(be, rows_lists, sizes):
    """Keys of one axis group for several operands jointly: list of _Key (same meaning across them).

    ``rows_lists[i]`` is the list of index rows (1-D int64, one per axis) of
    operand i.
    """
    xp = be.xp
    sizes = tuple(int(s) for s in sizes)
    total = prod(sizes)
    if not sizes:
        return [_Key(None, 1, ()) for _ in rows_lists]
    if total < INT64_LIMIT:
        out = []
        strides = np.array(_strides(sizes), dtype=np.int64)
        for rows in rows_lists:
            if len(rows) == 1:
                key = rows[0]  # the index row itself: the kernel that reads it checks it
            else:  # fused and bounds-checked in one pass (host strides and sizes: by value)
                key = be.linear_index(xp.ascontiguousarray(xp.stack(rows)), strides, sizes)
            out.append(_Key(key, max(total, 1), sizes))
        return out
    cols = [xp.concatenate([rows[d] for rows in rows_lists]) for d in range(len(sizes))]
    check_indices(xp.stack(cols), sizes)  # wide shapes: ranked by a sort, checked first
    ranks, bound, table = _rank(xp, cols)
    out, start = [], 0
    for rows in rows_lists:
        n = rows[0].shape[0]
        out.append(_Key(ranks[start:start + n], bound, sizes, table=table))
        start += n
    return out


def _fuse(be, parts_lists):
    """Fuse key parts (lists of _Key, per operand, same structure) into joint _Keys (row-major)."""
    xp = be.xp
    first = parts_lists[0]
    live = [i for i, p in enumerate(first) if p.sizes]
    if not live:
        return [_Key(None, 1, ()) for _ in parts_lists]
    sizes = tuple(s for p in first for s in p.sizes)
    if len(live) == 1:
        return [parts[live[0]] for parts in parts_lists]
    bounds = [first[i].bound for i in live]
    total = prod(bounds)
    out = []
    if total < INT64_LIMIT:
        strides = np.array(_strides(bounds), dtype=np.int64)
        for parts in parts_lists:
            # part keys may be raw index rows: fused and bounds-checked in one pass
            key = be.linear_index(xp.ascontiguousarray(xp.stack([parts[i].key for i in live])), strides, bounds)
            out.append(_Key(key, total, sizes, parts=[parts[i] for i in live]))
        return out
    cols = [xp.concatenate([parts[i].key for parts in parts_lists]) for i in live]
    check_indices(xp.stack(cols), bounds)  # wide: ranked by a sort, checked first
    ranks, bound, table = _rank(xp, cols)
    start = 0
    for parts in parts_lists:
        n = parts[live[0]].key.shape[0]
        out.append(_Key(ranks[start:start + n], bound, sizes, parts=[parts[i] for i in live], table=table))
        start += n
    return out


# ----------------------------------------------------------------------------- the operand views
class _Side:
    """A COO operand seen as a batch of matrices: per-entry keys of (batch, row, col) groups.

    ``rows`` holds the index rows of each group (lists), after broadcasting
    replication of the batch; ``sorted`` says the entries are ordered by
    (batch, row, col) keys.
    """

    __slots__ = ("batch", "row", "col", "values", "sorted", "n", "source", "lead")


def _sparse_side(a, batch_map, row_axes, col_axes, batch_shape, acc):
    """The _Side of COO ``a`` (already sparsified) for a product (keys not computed yet)."""
    xp = array_namespace(a.indices)
    idx = a.indices
    n = a.nnz
    expanded = [d for d, ax in enumerate(batch_map)
                if batch_shape[d] != 1 and (ax is None or a.shape[ax] == 1)]
    reps = prod(batch_shape[d] for d in expanded)
    order_axes = [ax for ax in batch_map if ax is not None] + list(row_axes) + list(col_axes)
    canonical = order_axes == list(range(a.ndim))
    prefix = expanded == list(range(len(expanded)))
    s = _Side()
    s.sorted = bool(a.is_sorted and canonical and prefix)
    s.source = a if (reps == 1 and canonical) else None
    s.lead = len(order_axes) - len(col_axes)
    values = _to_acc(a.values, acc)
    brows = []
    for d, ax in enumerate(batch_map):
        if d in expanded:
            brows.append(None)
        else:
            brows.append(idx[ax] if ax is not None else None)
    rrows = [idx[ax] for ax in row_axes]
    crows = [idx[ax] for ax in col_axes]
    if reps > 1:
        # broadcast batch dimensions replicate every entry: refused at once when memory cannot hold that
        check_entries(n * reps, "product (an operand broadcast over the batch)", 8 * (a.ndim + 1) + values.itemsize)
        dropped = [batch_map[d] for d in expanded if batch_map[d] is not None]
        if dropped:  # size-1 axes broadcast by replication: their index is never read, so check it here
            check_indices(idx[dropped], (1,) * len(dropped))
        ex_sizes = [batch_shape[d] for d in expanded]
        grid = [g.reshape(-1) for g in xp.meshgrid(*[xp.arange(sz, dtype=np.int64) for sz in ex_sizes],
                                                   indexing="ij")]
        for d, g in zip(expanded, grid):
            brows[d] = xp.repeat(g, n)
        brows = [b if d in expanded else (xp.tile(b, reps) if b is not None else None)
                 for d, b in enumerate(brows)]
        rrows = [xp.tile(r, reps) for r in rrows]
        crows = [xp.tile(c, reps) for c in crows]
        values = xp.tile(values, reps)
        n *= reps
    zeros = None
    for d in range(len(brows)):
        if brows[d] is None:  # size-1 output batch dim that a lacks
            zeros = xp.zeros(n, dtype=np.int64) if zeros is None else zeros
            brows[d] = zeros
    s.batch, s.row, s.col = brows, rrows, crows
    s.values = xp.ascontiguousarray(values)
    s.n = n
    return s


def _dense_2d(x, batch_map, row_axes, col_axes, batch_shape, acc):
    """Dense ``x`` as a C-contiguous (Bx * R, C) array in ``acc`` and its batch map.

    Returns (x2, dmap, R, C): output batch b reads x's batch ``dmap[b]`` (an
    int64 device array, broadcast dims read batch 0), or dmap None when there
    is one batch.
    """
    xp = array_namespace(x)
    present = [ax for ax in batch_map if ax is not None]
    xt = xp.transpose(x, present + list(row_axes) + list(col_axes)) if x.ndim else x
    r = prod(x.shape[ax] for ax in row_axes)
    c = prod(x.shape[ax] for ax in col_axes)
    bx = prod(x.shape[ax] for ax in present)
    x2 = xp.ascontiguousarray(_to_acc(xt, acc).reshape(bx * r, c))
    nb = prod(batch_shape)
    if bx == 1:
        return x2, None, r, c
    dmap = xp.zeros(nb, dtype=np.int64)
    lin = xp.arange(nb, dtype=np.int64)
    ostr = _strides(batch_shape)
    xsizes = [x.shape[ax] for ax in present]
    xstr = _strides(xsizes)
    j = 0
    for d, ax in enumerate(batch_map):
        if ax is None:
            continue
        if x.shape[ax] != 1:
            dmap += ((lin // ostr[d]) % batch_shape[d]) * xstr[j]
        j += 1
    return x2, dmap, r, c


# ----------------------------------------------------------------------------- row offsets cache
def _cached_offsets(be, source, lead, nrows, compute):
    """Row offsets of COO ``source`` over its first ``lead`` sparse axes: one of its cached
    companions (:meth:`COO.row_pointer` is the one over the leading axis)."""
    if source is None:
        return compute()
    return source._companion(("row_pointer", lead, nrows), lambda _be: compute())


# SpMV on the CPU reads a 32-bit copy of the column index row of a sorted operand with at least
# this many entries and fewer than 2**31 columns, cached with it: 12 bytes per entry read (4 column
# + 8 value, the row pointer aside) instead of 16 (measured 1.25-1.33x on the R-MAT graph's SpMV);
# one pass to build, 4 bytes per entry kept. SpMM uses the copy when it is there but does not build
# it: with 64 dense values read per entry, 4 bytes fewer measured within the noise
# (24-bit and 16-bit-per-block copies measured no faster in the benchmark's regime: not bound by bytes)
NARROW_COLUMNS_MIN = 1 << 16
_INT32_BOUND = 2**31


def _narrow_columns(src, n, cols, k, build):
    """``cols`` (the last index row of ``src``, an operand of ``n`` entries) as int32, cached with
    ``src`` (a companion), where that pays (``build``: make it if it is not cached yet); else ``cols``.

    Only an index row checked to lie in ``[0, k)`` is narrowed (exactly); one with
    a bad index (``check=False``) stays int64, so the kernel refuses it as before.
    """
    if (src is None or n < NARROW_COLUMNS_MIN or k >= _INT32_BOUND or is_device_array(cols)
            or cols.dtype != np.int64 or not cols.flags.c_contiguous):
        return cols
    key = ("int32 index", src.ndim - 1)
    hit = src._cached_companion(key)
    if hit is not None:
        return hit
    if not build or int(cols.view(np.uint64).max()) >= k:  # negative (as unsigned: huge) or too large
        return cols
    return src._companion(key, lambda _be: cols.astype(np.int32))


def spmv_sorted(a, x):
    """``a @ x`` of a sorted 2-D CPU COO ``a`` (no dense dimension, fill 0, at least
    ``NARROW_COLUMNS_MIN`` entries) and a C-contiguous 1-D NumPy ``x`` of the same float dtype, or
    None for any other operands.

    The same as :func:`_sparse_dense` gives (the same kernel on the same row pointer and int32
    columns: the same bits) without its general grouping of batch, row and column keys, which cost
    0.1-0.15 ms of a 3 ms SpMV of the R-MAT graph (one thread, same process). The caller has checked
    the fill and the shapes.
    """
    # the stored attributes, not the properties, and plain type tests: the call meets the caches
    # cold after the previous kernel, where each Python step costs several times its warm time
    values = a._values
    if not (type(x) is np.ndarray and type(values) is np.ndarray and x.ndim == 1 and values.ndim == 1
            and len(a._shape) == 2 and a._sorted and values.shape[0] >= NARROW_COLUMNS_MIN
            and x.dtype == values.dtype and x.dtype.char in "fd" and x.flags.c_contiguous):
        return None
    be = backend_for(values)
    m, k = a._shape
    offsets = a._row_pointer()
    cols = a._cached_companion(("int32 index", 1))  # (the int32 copy _narrow_columns made before)
    if cols is None:
        cols = _narrow_columns(a, values.shape[0], a.indices[1], k, True)
    # with empty rows, the non-empty ones alone (the row reductions' cached list): an empty row
    # cost the kernel a mispredicted branch (R-MAT SpMV, kernel alone: 2.74 -> 2.33 ms)
    rows, starts = row_segments(a, offsets)
    if rows is None:
        out = be.spmm(offsets, None, cols, values, x.reshape(k, 1), m, None, k)
    else:
        out = be.spmm(starts, None, cols, values, x.reshape(k, 1), m, None, k, out_rows=rows, out_nrows=m)
    return out.reshape(m)


def _grouped_rows(be, rowkey, nrows):
    """(row offsets, stable permutation) of unsorted row keys: spmm_unsorted's grouping on a GPU."""
    sorted_rows, perm = be.sort_pairs(rowkey, max(nrows, 1))
    return be.row_offsets(sorted_rows, nrows), perm


# ----------------------------------------------------------------------------- the four paths
def _product(a, amap, arows, acols, b, bmap, brows, bcols, batch_shape, op):
    """Batched contraction of ``a`` and ``b`` (COO or dense); groups as in the module docstring.

    ``amap``/``bmap``: for each output batch dimension, the axis of the
    operand (or None where it lacks one); ``arows``: a's output-row axes;
    ``acols``/``brows``: the contracted axes (paired in order); ``bcols``: b's
    output-column axes. Returns an array of shape ``batch_shape + a's row
    sizes + b's col sizes``: dense unless both operands are COO.
    """
    dtype = _result_dtype(a.dtype, b.dtype)
    out_shape = (tuple(batch_shape) + tuple(a.shape[ax] for ax in arows)
                 + tuple(b.shape[ax] for ax in bcols))
    for x, y in zip(acols, brows):
        if a.shape[x] != b.shape[y]:
            raise ValueError(
                f"{op}: shapes {a.shape} and {b.shape} do not match: axis {x} of the first has size "
                f"{a.shape[x]} but axis {y} of the second has size {b.shape[y]}"
            )
    # duplicates mean their sum in the array's own dtype (SPEC 1): bool duplicates mean
    # "any", and an operand that promotion widens must sum (wrap, round) before it is widened, so
    # such an operand is coalesced first; same-dtype duplicates take part in the product as they are
    a0, b0 = a, b
    a, b = sum_duplicates_first(a, dtype), sum_duplicates_first(b, dtype)
    if not (_is_coo(a) or _is_coo(b)):
        return _dense_dense(a, amap, arows, acols, b, bmap, brows, bcols, batch_shape, dtype, out_shape)
    try:
        if _is_coo(a) and _is_coo(b):
            return _sparse_sparse(a, amap, arows, acols, b, bmap, brows, bcols, batch_shape, dtype, out_shape, op)
        path = _sparse_dense if _is_coo(a) else _dense_sparse
        return path(a, amap, arows, acols, b, bmap, brows, bcols, batch_shape, dtype, out_shape)
    except IndexError:
        name_bad_index(op, a0, b0)
        raise


def sum_duplicates_first(x, dtype):
    """``x`` coalesced when it is a COO whose duplicates cannot take part in a product of ``dtype`` as
    they are: bool duplicates mean "any", and an operand that promotion widens sums (wraps, rounds) in
    its own dtype first (SPEC 1); other operands unchanged."""
    if _is_coo(x) and not x.is_unique and (x.dtype == np.bool_ or x.dtype != dtype):
        return x.coalesce()
    return x


def name_bad_index(op, *operands):
    """After a kernel refused an index: raise the IndexError of ``coosparse._kernels.bounds`` naming the first
    operand's bad index (dimension, position, value), if some COO operand has one (error path only)."""
    for x in operands:
        if _is_coo(x):
            sizes = x.shape[:x.sparse_ndim]
            if first_out_of_bounds(x.indices, sizes) is not None:  # synchronize! (error path only)
                try:
                    raise_out_of_bounds(x.indices, sizes, op)
                except IndexError as exc:
                    err = exc
                raise err from None


def _dense_dense(a, amap, arows, acols, b, bmap, brows, bcols, batch_shape, dtype, out_shape):
    xp = backend_for(a, b).xp

    def as3(x, bm, rows, cols):
        present = [ax for ax in bm if ax is not None]
        xt = xp.transpose(x, present + list(rows) + list(cols)) if x.ndim else x
        bshape = [x.shape[ax] if ax is not None else 1 for ax in bm]
        return xt.reshape(tuple(bshape) + (prod(x.shape[ax] for ax in rows), prod(x.shape[ax] for ax in cols)))

    out = xp.matmul(as3(a, amap, arows, acols).astype(dtype, copy=False),
                    as3(b, bmap, brows, bcols).astype(dtype, copy=False))
    return xp.ascontiguousarray(out).reshape(out_shape)  # (ascontiguousarray makes a 0-d array 1-d)


def _mixed(c, cmap, crows, ccols, x, xmap, xrows, xcols, batch_shape, dtype, out_shape):
    """(be, sparsified COO, its _Side, dense 2-D x, its batch map, x's row and col sizes), or None
    when the (dense) result is all zeros."""
    be = backend_for(c.indices, x)
    if prod(out_shape) == 0 or c.nnz == 0:
        return be, None
    acc = _acc_dtype(dtype)
    c = sparsify(c)
    return be, (c, _sparse_side(c, cmap, crows, ccols, batch_shape, acc)) + _dense_2d(
        x, xmap, xrows, xcols, batch_shape, acc)


def _sparse_dense(a, amap, arows, acols, x, xmap, xrows, xcols, batch_shape, dtype, out_shape):
    be, parts = _mixed(a, amap, arows, acols, x, xmap, xrows, xcols, batch_shape, dtype, out_shape)
    xp = be.xp
    if parts is None:
        return xp.zeros(out_shape, dtype=dtype)
    kept = a.dense_ndim == 0  # (a hybrid operand is sparsified into a temporary: nothing to keep on it)
    a, s, x2, dmap, k, n = parts
    m = prod(a.shape[ax] for ax in arows)
    nb = prod(batch_shape)
    bkey, rkey, ckey = (_fuse(be, [_group_keys(be, [s.batch], batch_shape)])[0],
                        _group_keys(be, [s.row], [a.shape[ax] for ax in arows])[0],
                        _group_keys(be, [s.col], [a.shape[ax] for ax in acols])[0])
    rowkey = _fuse(be, [[bkey, rkey]])[0].key
    if rowkey is None:
        rowkey = xp.zeros(s.n, dtype=np.int64)
    cols = ckey.key if ckey.key is not None else xp.zeros(s.n, dtype=np.int64)
    base = None if dmap is None else dmap * k
    nrows = nb * m
    if s.sorted:
        offsets = _cached_offsets(be, s.source, s.lead, nrows, lambda: be.row_offsets(rowkey, nrows))
        if len(acols) == 1:
            cols = _narrow_columns(s.source, s.n, cols, k, kept and x2.shape[1] == 1)
        out = be.spmm(offsets, None, cols, s.values, x2, m, base, k)
    elif is_device_array(rowkey):
        # a GPU groups the rows by a stable sort (spmm_unsorted's own way): done once per array and
        # kept with its row offsets, so repeated products (an iterative solver, a training loop) do
        # not sort again; the same grouping, the same bits
        offsets, perm = _cached_offsets(be, s.source, ("stable sort", s.lead), nrows,
                                        lambda: _grouped_rows(be, rowkey, nrows))
        out = be.spmm(offsets, perm, cols, s.values, x2, m, base, k)
    else:
        out = be.spmm_unsorted(rowkey, cols, s.values, x2, nrows, m, base, k)
    return _from_acc(out, dtype).reshape(out_shape)


def _dense_sparse(x, xmap, xrows, xcols, b, bmap, brows, bcols, batch_shape, dtype, out_shape):
    be, parts = _mixed(b, bmap, brows, bcols, x, xmap, xrows, xcols, batch_shape, dtype, out_shape)
    xp = be.xp
    if parts is None:
        return xp.zeros(out_shape, dtype=dtype)
    b, s, x2, dmap, m, k = parts
    nb = prod(batch_shape)
    n = prod(b.shape[ax] for ax in bcols)
    krow = _group_keys(be, [s.row], [b.shape[ax] for ax in brows])[0].key
    cols = _group_keys(be, [s.col], [b.shape[ax] for ax in bcols])[0].key
    zeros = xp.zeros(s.n, dtype=np.int64) if krow is None or cols is None else None
    krow = zeros if krow is None else krow
    cols = zeros if cols is None else cols
    boff = perm = None
    if nb > 1:
        bkey = _group_keys(be, [s.batch], batch_shape)[0].key
        if s.sorted:
            boff = be.row_offsets(bkey, nb)
        else:
            sk, perm = _sort(be, bkey, nb)
            boff = be.row_offsets(sk, nb)
    elif s.batch:  # batch dims of size 1 only: no kernel reads their indices, so check them here
        check_indices(xp.stack(s.batch), (1,) * len(s.batch))
    base = None if dmap is None else dmap * m
    out = be.dense_spmm(x2, base, m, boff, perm, krow, cols, s.values, n)
    return _from_acc(out, dtype).reshape(out_shape)


def _segments(be, key, bound, is_sorted):
    """(offsets over the distinct keys, perm or None, distinct keys) of an entry key."""
    xp = be.xp
    if key is None:
        return None
    if is_sorted:
        sk, perm = key, None
    else:
        sk, perm = _sort(be, key, bound)
    starts = be.segment_starts(sk)  # synchronize! (number of distinct rows)
    return starts, perm, xp.ascontiguousarray(sk[starts[:-1]])


# B's rows are indexed directly (a CSR row pointer over the contraction space) up to this many
# rows or 4 per stored entry; a larger, sparser contraction space is ranked first (one sort)
_DIRECT_ROWS = 1 << 20


def _check_product_size(xp, arow_key, acol_key, b_offsets, ncols, size, acc, op):
    """Refuse at once (MemoryError naming the sizes) a COO x COO product that memory cannot hold.

    Before SpGEMM's kernels and its counting pass (O(products)), with NumPy
    alone: each entry of A meets the entries of one row of B (the lengths of
    B's row pointer ``b_offsets``, built in O(nnz(B)) and cached with a sorted
    operand), so the result holds at most that many products; where even that
    passes the memory, the bound is tightened to each row of A's products, at
    most ``ncols`` (one sort of A's row keys) before the product is refused.
    Sums are float64 (they may pass 2**63; only their size matters). Host
    arrays only: a GPU's SpGEMM counts its products in O(nnz) and checks that
    count (its expansion holds every product) before it allocates, with no
    synchronisation added here.
    """
    kbound = b_offsets.shape[0] - 1
    if xp is not np or acol_key.shape[0] == 0 or kbound == 0:
        return
    item = 16 + np.dtype(acc).itemsize
    lengths = np.diff(b_offsets)
    try:
        # every entry of A times B's longest row: when that fits, so does the sum below (an
        # O(nnz(A)) gather, a tenth of a product of ~2 products per row, uniform 200k)
        check_entries(int(min(float(acol_key.shape[0]) * float(lengths.max()), float(size))), op, item)
        return
    except MemoryError:
        pass
    # (a key outside its bound is reported by the kernel that reads it; here it only bounds the size)
    per_entry = lengths.take(acol_key, mode="clip").astype(np.float64)
    bound = min(float(per_entry.sum()), float(size))
    try:
        check_entries(int(bound), op, item, "entries at most (each entry of A times its row of B)")
    except MemoryError:
        _, rows = np.unique(arow_key, return_inverse=True)
        per_row = np.bincount(rows.reshape(-1), weights=per_entry)
        bound = min(float(np.minimum(per_row, float(ncols)).sum()), float(size))
        check_entries(int(bound), op, item, "entries at most (each row: its products, up to its columns)")


def _sparse_sparse(a, amap, arows, acols, b, bmap, brows, bcols, batch_shape, dtype, out_shape, op="matmul"):
    be = backend_for(a.indices, b.indices)
    xp = be.xp
    acc = _acc_dtype(dtype)
    sn = len(out_shape)
    if a.nnz == 0 or b.nnz == 0 or prod(out_shape) == 0:
        return COO(xp.zeros((sn, 0), dtype=np.int64), xp.zeros(0, dtype=dtype), out_shape,
                   sorted=True, unique=True, check=False)
    a, b = sparsify(a), sparsify(b)
    sa = _sparse_side(a, amap, arows, acols, batch_shape, acc)
    sb = _sparse_side(b, bmap, brows, bcols, batch_shape, acc)
    ksizes = [a.shape[ax] for ax in acols]
    ba, bb = _group_keys(be, [sa.batch, sb.batch], batch_shape)
    ra = _group_keys(be, [sa.row], [a.shape[ax] for ax in arows])[0]
    ka, kb = _group_keys(be, [sa.col, sb.row], ksizes)
    cb = _group_keys(be, [sb.col], [b.shape[ax] for ax in bcols])[0]
    rowa = _fuse(be, [[ba, ra]])[0]
    conta, contb = _fuse(be, [[ba, ka], [bb, kb]])
    n_a, n_b = sa.n, sb.n
    zeros = None

    def keyof(k, n):
        nonlocal zeros
        if k.key is not None:
            return k.key
        zeros = xp.zeros(max(n_a, n_b), dtype=np.int64) if zeros is None else zeros
        return zeros[:n]

    arow_key = keyof(rowa, n_a)
    acol_key, brow_key = keyof(conta, n_a), keyof(contb, n_b)
    bcol_key = keyof(cb, n_b)
    kbound = conta.bound
    if kbound > max(_DIRECT_ROWS, 4 * (n_a + n_b)):
        # a huge contraction space: rank the keys that occur (one sort; the keys checked first)
        both = xp.concatenate([acol_key, brow_key])
        check_indices(both.reshape(1, -1), (kbound,))
        ranks, kbound, _ = _rank(xp, [both])
        acol_key, brow_key = ranks[:n_a], ranks[n_a:]
        b_sorted = False
    else:
        b_sorted = sb.sorted
    # A grouped by its rows: on the CPU compressed to the distinct rows (Gustavson's parts balance
    # over them); on a GPU a row pointer over every row while that is small (no synchronisation)
    # the operands' cached row pointers on the CPU (a pointer no longer than the entries); a GPU
    # builds them per product, so that each product reports a sorted flag that lies (a pointer
    # cached from such an array would be reused silently, its report already consumed)
    host = be.xp is np
    if host and sa.sorted and rowa.bound <= 2 * n_a + 1024:
        a_off = _cached_offsets(be, sa.source, sa.lead, rowa.bound, lambda: be.row_offsets(arow_key, rowa.bound))
        a_perm = a_rows = None
    elif be.xp is not np and rowa.bound <= max(_DIRECT_ROWS, 4 * n_a):
        sk, a_perm = (arow_key, None) if sa.sorted else _sort(be, arow_key, rowa.bound)
        a_off, a_rows = be.row_offsets(sk, rowa.bound), None
    else:
        a_off, a_perm, a_rows = _segments(be, arow_key, rowa.bound, sa.sorted)
    if b_sorted:
        b_off = _cached_offsets(be, sb.source if host and kbound == conta.bound else None, sb.lead, kbound,
                                lambda: be.row_offsets(brow_key, kbound))
        b_perm = None
    else:
        sk, b_perm = _sort(be, brow_key, kbound)
        b_off = be.row_offsets(sk, kbound)
    _check_product_size(xp, arow_key, acol_key, b_off, cb.bound, prod(out_shape), acc, op)
    rc, values = be.spgemm(a_off, a_rows, a_perm, acol_key, sa.values, b_off, b_perm, bcol_key, sb.values,
                           cb.bound, rowa.bound)  # synchronize! (output size)
    if len(rowa.sizes) == 1 and rowa.table is None and len(cb.sizes) == 1 and cb.table is None:
        indices = rc  # a plain matrix product: the kernel wrote the index rows
    else:
        index_rows = rowa.unravel(be, rc[0]) + cb.unravel(be, rc[1])
        indices = xp.stack(index_rows) if index_rows else xp.zeros((0, values.shape[0]), dtype=np.int64)
    return COO(xp.ascontiguousarray(indices, dtype=np.int64), _from_acc(values, dtype), out_shape,
               sorted=True, unique=True, check=False)


# ----------------------------------------------------------------------------- shapes and axes
def _broadcast_batch(op, sa, sb):
    try:  # (pure Python: NumPy's refuses batches of 2**63 elements or more, which keys of their own handle)
        return broadcast_shapes(tuple(sa), tuple(sb))
    except ValueError:
        raise ValueError(f"{op}: batch dimensions {tuple(sa)} and {tuple(sb)} do not broadcast") from None


def _batch_map(nbatch, x_batch_axes):
    """Align an operand's batch axes to the right of ``nbatch`` output batch dims."""
    pad = nbatch - len(x_batch_axes)
    return [None] * pad + list(x_batch_axes)


def _normalize_axis(ax, ndim, op, name="axis"):
    try:
        ax = operator.index(ax)
    except TypeError:
        raise TypeError(f"{op}: {name} must be an integer; got {ax!r}") from None
    if not -ndim <= ax < ndim:  # (AxisError: a ValueError, and the IndexError NumPy's tensordot raises)
        raise np.exceptions.AxisError(f"{op}: {name} {ax} is out of bounds for an array of dimension {ndim}")
    return ax % ndim
