"""Linear algebra (SPEC 10): matmul, dot, tensordot, vecdot, einsum, outer, vdot, sampled_matmul.

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
                       ranges and scan the entries; GPU: a stable sort of the
                       rows first), same order, same bits.
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

Bad input (issue 10, docs/reliability.md): arrays built with ``check=False``
may hold indices outside their shape or flags that lie. Every index is
checked where it is read, in a pass the product makes anyway: a group of
several axes is fused by the checked ``linear_index`` row (one unsigned
compare per index), and a key that is a single axis's index row is checked
by the kernel that reads it (``row_offsets`` for the rows of a sorted
operand, the SpMV/SpMM/SDDMM loops for columns, ``spgemm``'s passes for
SpGEMM). On the CPU the kernel raises at once and :func:`_product` turns the
IndexError into the one message of ``coosparse._bounds`` (naming the operand's
dimension, position and value); on a GPU the kernels skip the entry and set
the error word (reported at the next synchronising call or by
``coosparse.check_device_errors()``). A ``sorted`` flag that lies is caught
where the order is relied on (``row_offsets``, SpGEMM's row keys): ValueError
(``coosparse._flags.lying_flag_error``).

Row offsets cache: the first SpMV/SpMM on a sorted COO computes its row
offsets (a CSR row pointer) and keeps them in a module-level table keyed by
the array's identity, released with the array (a weak reference). It is private
(no attribute of the COO, not pickled, invisible to flags and equality) and
assumes, as the COO type does, that ``indices`` are not modified in place.
"""
from __future__ import annotations

import numbers
import operator
import threading
import weakref

import numpy as np

from . import _dtypes
from ._backend import backend_for, is_device_array
from ._bounds import check_indices, first_out_of_bounds, raise_out_of_bounds
from ._coo import COO, _namespace
from ._dispatch import implements
from ._fill import require_zero_fill
from ._keys import INT64_LIMIT

# ----------------------------------------------------------------------------- operands


def _is_coo(x):
    return isinstance(x, COO)


def _xp_of(x):
    return _namespace(x.values if _is_coo(x) else x)


def _as_operand(x, op):
    """COO, NumPy/CuPy array (lists and scalars become NumPy arrays), else TypeError."""
    if _is_coo(x) or isinstance(x, np.ndarray) or is_device_array(x):
        return x
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
    (explicit zeros kept), so the flags carry over.
    """
    if a.dense_ndim == 0:
        return a
    xp = _namespace(a.indices)
    dshape = a.dense_shape
    d = int(np.prod(dshape))
    n = a.nnz
    grid = xp.stack([g.reshape(-1) for g in xp.meshgrid(*[xp.arange(s, dtype=np.int64) for s in dshape],
                                                      indexing="ij")]) if d else xp.zeros((len(dshape), 0), np.int64)
    indices = xp.concatenate([xp.repeat(a.indices, d, axis=1), xp.tile(grid, (1, n))], axis=0)
    values = xp.ascontiguousarray(a.values.reshape(n * d))
    return COO(xp.ascontiguousarray(indices), values, a.shape, sorted=a.is_sorted, unique=a.is_unique,
               check=False, fill_value=a.fill_value)


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


def _prod(sizes):
    p = 1
    for s in sizes:
        p *= int(s)
    return p


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
    total = _prod(sizes)
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
    total = _prod(bounds)
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
    xp = _namespace(a.indices)
    idx = a.indices
    n = a.nnz
    expanded = [d for d, ax in enumerate(batch_map)
                if batch_shape[d] != 1 and (ax is None or a.shape[ax] == 1)]
    reps = _prod(batch_shape[d] for d in expanded)
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
    xp = _namespace(x)
    present = [ax for ax in batch_map if ax is not None]
    xt = xp.transpose(x, present + list(row_axes) + list(col_axes)) if x.ndim else x
    r = _prod(x.shape[ax] for ax in row_axes)
    c = _prod(x.shape[ax] for ax in col_axes)
    bx = _prod(x.shape[ax] for ax in present)
    x2 = xp.ascontiguousarray(_to_acc(xt, acc).reshape(bx * r, c))
    nb = _prod(batch_shape)
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
_offsets_cache = {}
_offsets_lock = threading.Lock()


def _cached_offsets(be, source, lead, nrows, compute):
    """Row offsets of COO ``source`` over its first ``lead`` sparse axes, cached per array."""
    if source is None:
        return compute()
    key = (id(source), lead, nrows)
    with _offsets_lock:
        hit = _offsets_cache.get(key)
    if hit is not None and hit[0]() is source and hit[1] is source.indices:
        return hit[2]
    offsets = compute()

    def _drop(_, key=key):
        with _offsets_lock:
            _offsets_cache.pop(key, None)

    with _offsets_lock:
        _offsets_cache[key] = (weakref.ref(source, _drop), source.indices, offsets)
    return offsets


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
    # duplicates mean their sum in the array's own dtype (SPEC 1, issue 10): bool duplicates mean
    # "any", and an operand that promotion widens must sum (wrap, round) before it is widened, so
    # such an operand is coalesced first; same-dtype duplicates take part in the product as they are
    a0, b0 = a, b
    a, b = (x.coalesce() if _is_coo(x) and not x.is_unique and (x.dtype == np.bool_ or x.dtype != dtype) else x
            for x in (a, b))
    if not (_is_coo(a) or _is_coo(b)):
        return _dense_dense(a, amap, arows, acols, b, bmap, brows, bcols, batch_shape, dtype, out_shape)
    path = _sparse_sparse if _is_coo(a) and _is_coo(b) else (_sparse_dense if _is_coo(a) else _dense_sparse)
    try:
        return path(a, amap, arows, acols, b, bmap, brows, bcols, batch_shape, dtype, out_shape)
    except IndexError:
        name_bad_index(op, a0, b0)
        raise


def name_bad_index(op, *operands):
    """After a kernel refused an index: raise the IndexError of ``coosparse._bounds`` naming the first
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
        return xt.reshape(tuple(bshape) + (_prod(x.shape[ax] for ax in rows), _prod(x.shape[ax] for ax in cols)))

    out = xp.matmul(as3(a, amap, arows, acols).astype(dtype, copy=False),
                    as3(b, bmap, brows, bcols).astype(dtype, copy=False))
    return xp.ascontiguousarray(out.reshape(out_shape))


def _mixed(c, cmap, crows, ccols, x, xmap, xrows, xcols, batch_shape, dtype, out_shape):
    """(be, sparsified COO, its _Side, dense 2-D x, its batch map, x's row and col sizes), or None
    when the (dense) result is all zeros."""
    be = backend_for(c.indices, x)
    if _prod(out_shape) == 0 or c.nnz == 0:
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
    a, s, x2, dmap, k, n = parts
    m = _prod(a.shape[ax] for ax in arows)
    nb = _prod(batch_shape)
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
        out = be.spmm(offsets, None, cols, s.values, x2, m, base, k)
    else:
        out = be.spmm_unsorted(rowkey, cols, s.values, x2, nrows, m, base, k)
    return _from_acc(out, dtype).reshape(out_shape)


def _dense_sparse(x, xmap, xrows, xcols, b, bmap, brows, bcols, batch_shape, dtype, out_shape):
    be, parts = _mixed(b, bmap, brows, bcols, x, xmap, xrows, xcols, batch_shape, dtype, out_shape)
    xp = be.xp
    if parts is None:
        return xp.zeros(out_shape, dtype=dtype)
    b, s, x2, dmap, m, k = parts
    nb = _prod(batch_shape)
    n = _prod(b.shape[ax] for ax in bcols)
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


def _sparse_sparse(a, amap, arows, acols, b, bmap, brows, bcols, batch_shape, dtype, out_shape):
    be = backend_for(a.indices, b.indices)
    xp = be.xp
    acc = _acc_dtype(dtype)
    sn = len(out_shape)
    if a.nnz == 0 or b.nnz == 0 or _prod(out_shape) == 0:
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
    if be.xp is not np and rowa.bound <= max(_DIRECT_ROWS, 4 * n_a):
        sk, a_perm = (arow_key, None) if sa.sorted else _sort(be, arow_key, rowa.bound)
        a_off, a_rows = be.row_offsets(sk, rowa.bound), None
    else:
        a_off, a_perm, a_rows = _segments(be, arow_key, rowa.bound, sa.sorted)
    if b_sorted:
        b_off, b_perm = be.row_offsets(brow_key, kbound), None
    else:
        sk, b_perm = _sort(be, brow_key, kbound)
        b_off = be.row_offsets(sk, kbound)
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
    try:
        return tuple(np.broadcast_shapes(tuple(sa), tuple(sb)))
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
    if not -ndim <= ax < ndim:
        raise ValueError(f"{op}: {name} {ax} is out of bounds for an array of dimension {ndim}")
    return ax % ndim


# ----------------------------------------------------------------------------- public functions
def matmul(a, b):
    """Matrix product ``a @ b`` with NumPy's rules; at least one operand may be a COO.

    Parameters
    ----------
    a, b : COO or array_like
        At least one dimension each (a 1-D operand is a vector: NumPy's
        promotion and removal rules). The last two dimensions are the
        matrices; leading (batch) dimensions broadcast. COO operands need
        ``fill_value`` 0 (``ValueError`` otherwise); hybrid COO are allowed
        (their dense dimensions take part like any other).

    Returns
    -------
    COO or ndarray
        dtype ``result_type(a.dtype, b.dtype)``. COO x COO gives a coalesced
        COO (both flags True; entries reached by a product are stored, even
        when they cancel to zero). Any dense operand gives a dense array (NumPy
        or CuPy, on the operands' device).

    Notes
    -----
    Deterministic: every output element is a sum in a defined order (see the
    module docstring and docs/linalg.md), bit-identical between runs and
    between the CPU and the GPU. COO x dense and dense x COO never
    synchronise on a GPU (unless an operand's shape is wide); COO x COO does
    (output size).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 0, 1], [0, 2, 1]], np.array([1.0, 2.0, 3.0]), (2, 3))
    >>> a @ np.array([1.0, 10.0, 100.0])
    array([201.,  30.])
    >>> np.array([1.0, 2.0]) @ a
    array([1., 6., 2.])
    >>> c = a @ a.to_dense().T.copy()
    >>> c
    array([[5., 0.],
           [0., 9.]])
    >>> s = coosparse.matmul(a, coosparse.COO([[0, 2], [1, 0]], np.array([4.0, 5.0]), (3, 2)))
    >>> s.to_dense(), s.is_coalesced
    (array([[10.,  4.],
           [ 0.,  0.]]), True)
    """
    a = _as_operand(a, "matmul")
    b = _as_operand(b, "matmul")
    for i, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(f"matmul: input operand {i} does not have enough dimensions (a 0-d array); "
                             "use multiply for scalars")
    _check_zero_fill("matmul", a, b)
    if not _is_coo(a) and not _is_coo(b):
        return backend_for(a, b).xp.matmul(a, b)
    na, nb = a.ndim, b.ndim
    arows, acols, abatch = ((na - 2,), (na - 1,), tuple(range(na - 2))) if na >= 2 else ((), (0,), ())
    brows, bcols, bbatch = ((nb - 2,), (nb - 1,), tuple(range(nb - 2))) if nb >= 2 else ((0,), (), ())
    if a.shape[acols[0]] != b.shape[brows[0]]:
        raise ValueError(
            f"matmul: shapes {a.shape} and {b.shape} do not match: the last dimension of the first "
            f"({a.shape[acols[0]]}) must equal the {'only' if nb == 1 else 'second-to-last'} dimension of the "
            f"second ({b.shape[brows[0]]})"
        )
    batch = _broadcast_batch("matmul", [a.shape[i] for i in abatch], [b.shape[i] for i in bbatch])
    return _product(a, _batch_map(len(batch), abatch), arows, acols,
                    b, _batch_map(len(batch), bbatch), brows, bcols, batch, "matmul")


def tensordot(a, b, axes=2):
    """Sum of products over the given axes (``numpy.tensordot``); COO or dense operands.

    Parameters
    ----------
    a, b : COO or array_like
    axes : int or (sequence, sequence)
        An int ``N``: the last ``N`` axes of ``a`` with the first ``N`` of
        ``b``. A pair: the axes of ``a`` and of ``b`` to contract, paired in
        order (negative axes allowed).

    Returns
    -------
    COO or ndarray
        Shape: ``a``'s remaining axes then ``b``'s. COO x COO: a coalesced
        COO; otherwise dense. See :func:`matmul` for dtypes, fill values and
        determinism.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 1], [1, 0], [2, 0]], np.array([1.0, 2.0]), (2, 2, 3))
    >>> coosparse.tensordot(a, np.ones((2, 3)), axes=([1, 2], [0, 1]))
    array([1., 2.])
    """
    a = _as_operand(a, "tensordot")
    b = _as_operand(b, "tensordot")
    if isinstance(axes, numbers.Integral) or (isinstance(axes, np.ndarray) and axes.ndim == 0):
        n = operator.index(axes)
        if n < 0 or n > a.ndim or n > b.ndim:
            raise ValueError(f"tensordot: axes={n} is out of range for operands of {a.ndim} and {b.ndim} dimensions")
        ax_a, ax_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        try:
            ax_a, ax_b = axes
        except (TypeError, ValueError):
            raise TypeError(f"tensordot: axes must be an int or a pair of axis sequences; got {axes!r}") from None
        ax_a = [ax_a] if isinstance(ax_a, numbers.Integral) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, numbers.Integral) else list(ax_b)
        if len(ax_a) != len(ax_b):
            raise ValueError(f"tensordot: {len(ax_a)} axes of the first operand but {len(ax_b)} of the second")
        ax_a = [_normalize_axis(x, a.ndim, "tensordot") for x in ax_a]
        ax_b = [_normalize_axis(x, b.ndim, "tensordot") for x in ax_b]
        if len(set(ax_a)) != len(ax_a) or len(set(ax_b)) != len(ax_b):
            raise ValueError("tensordot: an axis is repeated")
    for x, y in zip(ax_a, ax_b):
        if a.shape[x] != b.shape[y]:
            raise ValueError(
                f"tensordot: shape-mismatch for sum: axis {x} of the first operand (shape {a.shape}) and "
                f"axis {y} of the second (shape {b.shape}) differ"
            )
    _check_zero_fill("tensordot", a, b)
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [i for i in range(b.ndim) if i not in ax_b]
    if not _is_coo(a) and not _is_coo(b):
        return backend_for(a, b).xp.tensordot(a, b, axes=(ax_a, ax_b))
    return _product(a, [], free_a, ax_a, b, [], ax_b, free_b, (), "tensordot")


def dot(a, b):
    """``numpy.dot`` semantics: scalar product, inner product, matrix product, or N-d sum-product.

    For N-d operands, ``dot(a, b)[i, j, k, m] = sum(a[i, j, :] * b[k, :, m])``.
    A 0-d operand multiplies elementwise (:func:`coosparse.multiply`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> v = coosparse.COO([[0, 2]], np.array([1.0, 2.0]), (3,))
    >>> coosparse.dot(v, np.array([3.0, 4.0, 5.0]))
    array(13.)
    """
    a = _as_operand(a, "dot")
    b = _as_operand(b, "dot")
    if a.ndim == 0 or b.ndim == 0:
        from ._intersect import multiply

        if _is_coo(a) or _is_coo(b):
            return multiply(a, b)
        return a * b
    if not _is_coo(a) and not _is_coo(b):
        return backend_for(a, b).xp.dot(a, b)
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2 if b.ndim >= 2 else 0]))


def inner(a, b):
    """``numpy.inner``: sum-product over the last axes of ``a`` and ``b``.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 1], [1, 0]], np.array([1.0, 2.0]), (2, 2))
    >>> coosparse.inner(a, np.array([[1.0, 1.0]]))
    array([[1.],
           [2.]])
    """
    a = _as_operand(a, "inner")
    b = _as_operand(b, "inner")
    if a.ndim == 0 or b.ndim == 0:
        return dot(a, b)
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


def _conj(x):
    if x.dtype.kind != "c":
        return x
    if _is_coo(x):
        return x._with(values=_namespace(x.values).conj(x.values), fill_value=np.conj(x.fill_value))
    return _namespace(x).conj(x)


def vecdot(x1, x2, /, *, axis=-1):
    """Dot product of vectors along ``axis`` (Array API ``vecdot``): ``sum(conj(x1) * x2, axis)``.

    The two operands broadcast in every other dimension; along ``axis`` they
    must have the same size (no broadcasting there). A positive ``axis``
    counts in the broadcast shape.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 1], [1, 0]], np.array([1.0, 2.0]), (2, 2))
    >>> coosparse.vecdot(a, np.array([10.0, 1.0]))
    array([ 1., 20.])
    """
    x1 = _as_operand(x1, "vecdot")
    x2 = _as_operand(x2, "vecdot")
    nd = max(x1.ndim, x2.ndim)
    if nd == 0:
        raise ValueError("vecdot: operands must have at least one dimension")
    try:
        ax = operator.index(axis)
    except TypeError:
        raise TypeError(f"vecdot: axis must be an integer; got {axis!r}") from None
    if ax >= 0:
        ax -= nd
    if not (-x1.ndim <= ax < 0 and -x2.ndim <= ax < 0) or x1.shape[ax] != x2.shape[ax]:
        raise ValueError(
            f"vecdot: Shapes must match along axis {axis}: got shapes {x1.shape} and {x2.shape}"
        )
    _check_zero_fill("vecdot", x1, x2)
    a1, a2 = x1.ndim + ax, x2.ndim + ax
    b1 = [i for i in range(x1.ndim) if i != a1]
    b2 = [i for i in range(x2.ndim) if i != a2]
    batch = _broadcast_batch("vecdot", [x1.shape[i] for i in b1], [x2.shape[i] for i in b2])
    return _product(_conj(x1), _batch_map(len(batch), b1), [], [a1],
                    x2, _batch_map(len(batch), b2), [a2], [], batch, "vecdot")


def _ravel_1d(a, op):
    """A COO (or dense array) as 1-D in C order (COO: keys over its shape; narrow shapes only)."""
    if not _is_coo(a):
        return _namespace(a).ravel(a)
    a = sparsify(a)
    size = a.size
    if size >= INT64_LIMIT:
        raise ValueError(f"{op}: an array of shape {a.shape} has {size} elements, too many for a 1-D index")
    be = backend_for(a.indices)
    xp = be.xp
    if a.ndim == 1:
        return a
    key = be.linear_index(a.indices, np.array(_strides(a.shape), dtype=np.int64)) if a.nnz \
        else xp.zeros(0, np.int64)
    return COO(key.reshape(1, -1), a.values, (size,), sorted=a.is_sorted, unique=a.is_unique, check=False,
               fill_value=a.fill_value)


def outer(a, b):
    """Outer product of the flattened operands (``numpy.outer``): shape ``(a.size, b.size)``.

    COO x COO gives a COO with every pair of entries (sorted when both are
    sorted, unique when both are unique); a dense operand gives a dense array.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[1]], np.array([2.0]), (2,))
    >>> coosparse.outer(a, np.array([1.0, 3.0]))
    array([[0., 0.],
           [2., 6.]])
    """
    a = _as_operand(a, "outer")
    b = _as_operand(b, "outer")
    _check_zero_fill("outer", a, b)
    if not _is_coo(a) and not _is_coo(b):
        return backend_for(a, b).xp.outer(a, b)
    ra, rb = _ravel_1d(a, "outer"), _ravel_1d(b, "outer")
    dtype = _result_dtype(a.dtype, b.dtype)
    if not (_is_coo(ra) and _is_coo(rb)):
        xp = _xp_of(ra if not _is_coo(ra) else rb)
        da = ra.to_dense() if _is_coo(ra) else ra
        db = rb.to_dense() if _is_coo(rb) else rb
        return xp.outer(da.astype(dtype, copy=False), db.astype(dtype, copy=False))
    be = backend_for(ra.indices, rb.indices)
    xp = be.xp
    na, nb = ra.nnz, rb.nnz
    rows = xp.repeat(ra.indices[0], nb)
    cols = xp.tile(rb.indices[0], na)
    values = ra.values.astype(dtype, copy=False)[:, None] * rb.values.astype(dtype, copy=False)[None, :]
    return COO(xp.stack([rows, cols]), xp.ascontiguousarray(values.reshape(-1)), (ra.shape[0], rb.shape[0]),
               sorted=ra.is_sorted and rb.is_sorted, unique=ra.is_unique and rb.is_unique, check=False)


def vdot(a, b):
    """``numpy.vdot``: ``sum(conj(a.ravel()) * b.ravel())`` as a scalar (sizes must match).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 1], [1, 0]], np.array([1.0, 2.0]), (2, 2))
    >>> float(coosparse.vdot(a, np.arange(4.0)))
    5.0
    """
    a = _as_operand(a, "vdot")
    b = _as_operand(b, "vdot")
    if a.size != b.size:
        raise ValueError(f"vdot: operands of shapes {a.shape} and {b.shape} have different sizes")
    _check_zero_fill("vdot", a, b)
    if not _is_coo(a) and not _is_coo(b):
        return backend_for(a, b).xp.vdot(a, b)
    if a.shape != b.shape:
        a, b = _ravel_1d(a, "vdot"), _ravel_1d(b, "vdot")
    ax = list(range(a.ndim))
    r = _product(_conj(a), [], [], ax, b, [], ax, [], (), "vdot")
    if _is_coo(r):
        r = r.to_dense()
    return r[()]


def sampled_matmul(mask, x, y):
    """``x @ y`` evaluated only at ``mask``'s indices (SDDMM), never forming the dense product.

    Parameters
    ----------
    mask : COO
        Only its indices are used (values and fill ignored). Its shape is
        the shape of ``x @ y`` (NumPy matmul rules, batch dimensions
        broadcast). Hybrid masks are allowed: a dense trailing dimension
        samples the whole row (or block) of the product.
    x, y : array_like
        Dense operands, ``x @ y`` must have ``mask``'s shape.

    Returns
    -------
    COO
        ``mask``'s indices (order and duplicates kept) and flags; values
        ``(x @ y)[index]``, dtype ``result_type(x.dtype, y.dtype)``, fill 0.
        Never synchronises on a GPU.

    Notes
    -----
    Each value is a dot product over ``K`` (the contracted size) taken in
    a fixed order: eight interleaved partial sums (lane ``l`` adds
    ``x[.., j] * y[j, ..]`` for ``j = l, l + 8, ...`` in turn), combined as
    ``((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))``. The same on every
    device (bit-identical), and it lets the CPU overlap eight sums.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> mask = coosparse.COO([[1, 0, 1], [0, 1, 0]], np.ones(3), (2, 2))
    >>> x, y = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> r = coosparse.sampled_matmul(mask, x, y)
    >>> r.values, r.is_sorted
    (array([3., 2., 3.]), False)
    """
    if not _is_coo(mask):
        raise TypeError(f"sampled_matmul: mask must be a COO array; got {type(mask).__name__}")
    x = _as_operand(x, "sampled_matmul")
    y = _as_operand(y, "sampled_matmul")
    if _is_coo(x) or _is_coo(y):
        raise TypeError("sampled_matmul: x and y must be dense arrays (use matmul for sparse operands)")
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError("sampled_matmul: x and y must have at least one dimension")
    x2 = x if x.ndim >= 2 else x.reshape(1, -1)
    y2 = y if y.ndim >= 2 else y.reshape(-1, 1)
    if x2.shape[-1] != y2.shape[-2]:
        raise ValueError(f"sampled_matmul: x of shape {x.shape} and y of shape {y.shape} cannot be multiplied")
    batch = _broadcast_batch("sampled_matmul", x2.shape[:-2], y2.shape[:-2])
    shape = batch + ((x2.shape[-2],) if x.ndim >= 2 else ()) + ((y2.shape[-1],) if y.ndim >= 2 else ())
    if mask.shape != shape:
        raise ValueError(f"sampled_matmul: mask has shape {mask.shape} but x @ y has shape {shape}")
    dtype = _result_dtype(x.dtype, y.dtype)
    m = sparsify(mask)
    be = backend_for(m.indices, x, y)
    rows = [m.indices[i] for i in range(m.ndim)]
    if x.ndim == 1 or y.ndim == 1:
        zeros = be.xp.zeros(m.nnz, dtype=np.int64)
        if x.ndim == 1:
            rows.insert(len(batch), zeros)
        if y.ndim == 1:
            rows.append(zeros)
    try:
        if x2.shape[-1] == 0:  # no product reads the indices: check them here (the result keeps them)
            check_indices(m.indices, m.shape)
        values = sddmm_rows(be, rows, m.nnz, x2, y2, len(batch), dtype)
    except IndexError:
        name_bad_index("sampled_matmul", mask)
        raise
    return COO(mask.indices, values.reshape((mask.nnz,) + mask.dense_shape), mask.shape,
               sorted=mask.is_sorted, unique=mask.is_unique, check=False)


def sddmm_rows(be, rows, n, x, y, nbatch, dtype):
    """Values of ``x @ y`` at ``n`` entries given by index rows (batch..., m, j) of the product.

    ``x`` is (..., M, K) and ``y`` (..., K, N), any strides (transposed or
    conjugated views included); their batch dimensions broadcast to the
    ``nbatch`` leading rows. The kernel reads both through flat views, so
    nothing is transposed or copied unless a dtype cast is needed.

    Every index row is checked against its size (IndexError on the CPU, the
    error word on a GPU), by the kernel for a lone row or column index, by the
    checked ``linear_index`` where batch indices join in; batch dimensions that
    neither operand reads (both broadcast) join x's address with stride 0.
    """
    from ._dense import flat_view

    xp = be.xp
    k = x.shape[-1]
    if n == 0 or k == 0:
        return xp.zeros(n, dtype=dtype)
    xa = _to_acc(x, dtype)
    ya = _to_acc(y, dtype)
    # the kernel walks a row of x and a column of y: make both unit-stride when the
    # entries outnumber the rows/columns (one O(size) copy instead of strided reads)
    item = xa.dtype.itemsize
    if xa.strides[-1] != item and n >= xa.shape[-2] and 0 not in xa.strides:
        xa = xp.ascontiguousarray(xa)
    if ya.strides[-2] != item and n >= ya.shape[-1] and 0 not in ya.strides:
        ya = xp.swapaxes(xp.ascontiguousarray(xp.swapaxes(ya, -1, -2)), -1, -2)
    fx, basex, sx = flat_view(xa)
    fy, basey, sy = flat_view(ya)

    bsizes = (1,) * nbatch + tuple(np.broadcast_shapes(xa.shape[:-2], ya.shape[:-2]))
    bsizes = bsizes[len(bsizes) - nbatch:]

    def reads(arr, strides, d):
        off = nbatch - (arr.ndim - 2)
        return d >= off and arr.shape[d - off] != 1 and strides[d - off] != 0

    def terms(arr, strides, which, extra=()):
        """(index row, stride, size) of the dims that address ``arr``, then ``extra`` (stride 0)."""
        off = nbatch - (arr.ndim - 2)
        out = [(rows[d], strides[d - off], arr.shape[d - off]) for d in range(nbatch) if reads(arr, strides, d)]
        out += [(rows[d], 0, bsizes[d]) for d in extra]
        out.append((rows[nbatch + which], strides[-2] if which == 0 else strides[-1],
                    arr.shape[-2] if which == 0 else arr.shape[-1]))
        return out

    def resolve(ts, base):
        """(addresses or the index row, stride, bound the kernel checks: None when linear_index did)."""
        if len(ts) == 1 and base == 0:
            return ts[0][0], ts[0][1], ts[0][2]
        addr = be.linear_index(xp.ascontiguousarray(xp.stack([t[0] for t in ts])),
                               np.array([t[1] for t in ts], dtype=np.int64),  # host strides: by value
                               tuple(t[2] for t in ts))  # checked in the same pass
        if base:
            addr += base
        return addr, 1, None

    unread = [d for d in range(nbatch) if not reads(xa, sx, d) and not reads(ya, sy, d)]
    rx, rsx, bx = resolve(terms(xa, sx, 0, unread), basex)
    ry, rsy, by = resolve(terms(ya, sy, 1), basey)
    out = be.sddmm(rx, rsx, ry, rsy, fx, sx[-1], fy, sy[-2], k, bx, by)
    return _from_acc(out, dtype)


# ----------------------------------------------------------------------------- einsum
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_ELLIPSIS_BASE = 1000  # symbols of broadcast (ellipsis) dims: _ELLIPSIS_BASE + position from the right


def _parse_term(term, what):
    """'ab...c' -> list of ints and Ellipsis."""
    out = []
    i = 0
    while i < len(term):
        ch = term[i]
        if ch == ".":
            if term[i:i + 3] != "..." or Ellipsis in out:
                raise ValueError(f"einsum: invalid ellipsis in {what} {term!r}")
            out.append(Ellipsis)
            i += 3
            continue
        if ch not in _LETTERS:
            raise ValueError(f"einsum: invalid subscript {ch!r} in {what} {term!r}; use letters a-z, A-Z")
        out.append(_LETTERS.index(ch))
        i += 1
    return out


def _parse_einsum(args):
    """(input terms, output term or None, operands) from either calling convention."""
    if not args:
        raise ValueError("einsum: no operands given")
    if isinstance(args[0], str):
        spec = args[0].replace(" ", "")
        arrays = list(args[1:])
        if spec.count("->") > 1 or ("-" in spec.replace("->", "")) or (">" in spec.replace("->", "")):
            raise ValueError(f"einsum: invalid subscripts {args[0]!r}")
        lhs, arrow, rhs = spec.partition("->")
        terms = [_parse_term(t, "input") for t in lhs.split(",")]
        out = _parse_term(rhs, "output") if arrow else None
        return terms, out, arrays
    if not (_is_coo(args[0]) or isinstance(args[0], np.ndarray) or is_device_array(args[0])):
        raise TypeError(
            f"einsum: the first argument must be a subscripts string or an operand; got {type(args[0]).__name__}"
        )
    arrays, terms = [], []
    rest = list(args)
    while len(rest) >= 2:
        arrays.append(rest.pop(0))
        terms.append(_check_sublist(rest.pop(0)))
    out = _check_sublist(rest.pop(0)) if rest else None
    return terms, out, arrays


def _check_sublist(sub):
    try:
        items = list(sub)
    except TypeError:
        raise TypeError(f"einsum: a subscript list must be a sequence of ints and Ellipsis; got {sub!r}") from None
    out = []
    for s in items:
        if s is Ellipsis:
            if Ellipsis in out:
                raise ValueError("einsum: a subscript list holds Ellipsis twice")
            out.append(Ellipsis)
            continue
        try:
            v = operator.index(s)
        except TypeError:
            raise TypeError(f"einsum: subscripts must be ints in [0, 52); got {s!r}") from None
        if not 0 <= v < 52:
            raise ValueError(f"einsum: subscript {v} is outside [0, 52)")
        out.append(v)
    return out


def _expand_ellipsis(term, ndim, what):
    """Replace Ellipsis by the broadcast symbols of its dimensions (right-aligned across operands)."""
    letters = [s for s in term if s is not Ellipsis]
    if Ellipsis not in term:
        if len(letters) != ndim:
            raise ValueError(f"einsum: {what} has {len(letters)} subscripts but the operand has {ndim} dimensions")
        return letters, 0
    ne = ndim - len(letters)
    if ne < 0:
        raise ValueError(f"einsum: {what} has more subscripts than the operand's {ndim} dimensions")
    i = term.index(Ellipsis)
    ell = [_ELLIPSIS_BASE + (ne - 1 - j) for j in range(ne)]
    return term[:i] + ell + term[i + 1:], ne


def _take_diagonal(x, syms):
    """Operand ``x`` with repeated symbols reduced to their diagonal: (x, unique symbols in order)."""
    keep = []
    for s in syms:
        if s not in keep:
            keep.append(s)
    if len(keep) == len(syms):
        return x, syms
    first = [syms.index(s) for s in keep]
    for s in keep:
        pos = [i for i, t in enumerate(syms) if t == s]
        if len({x.shape[i] for i in pos}) > 1:
            raise ValueError(f"einsum: a repeated subscript labels dimensions of sizes {[x.shape[i] for i in pos]}")
    if not _is_coo(x):
        xp = _namespace(x)
        letters = "".join(_LETTERS[i % 52] for i in range(len(keep)))
        src = "".join(letters[keep.index(s)] for s in syms)
        return xp.einsum(f"{src}->{letters}", x), keep
    x = sparsify(x)
    xp = _namespace(x.indices)
    ok = xp.ones(x.nnz, dtype=bool)
    for i, s in enumerate(syms):
        j = syms.index(s)
        if j != i:
            ok &= x.indices[i] == x.indices[j]
    pos = xp.nonzero(ok)[0]  # synchronize! (the number of diagonal entries)
    idx = _index_rows(xp, x.indices, first)[:, pos]
    shape = tuple(x.shape[i] for i in first)
    # restricting to i == j and dropping j keeps row-major order and uniqueness
    return COO(xp.ascontiguousarray(idx), x.values[pos], shape, sorted=x.is_sorted, unique=x.is_unique,
               check=False), keep


def _index_rows(xp, indices, which):
    """Rows ``which`` (host ints) of ``indices``, stacked: no host index array, so nothing is uploaded."""
    if not len(which):
        return xp.zeros((0, indices.shape[1]), dtype=np.int64)
    return xp.stack([indices[i] for i in which])


def _sum_axes(x, axes):
    """``x`` summed over ``axes`` (COO: the other index rows, duplicates summed by coalesce)."""
    if not axes:
        return x
    if not _is_coo(x):
        return _namespace(x).sum(x, axis=tuple(axes))
    from ._coalesce import coalesce

    x = sparsify(x)
    rest = [i for i in range(x.ndim) if i not in axes]
    xp = _namespace(x.indices)
    out = COO(_index_rows(xp, x.indices, rest), x.values, tuple(x.shape[i] for i in rest), check=False)
    return coalesce(out)


def _permute(x, order):
    """``x`` with its axes in ``order`` (COO: index rows reordered, then coalesced)."""
    if list(order) == list(range(x.ndim)):
        return x
    if not _is_coo(x):
        return _namespace(x).transpose(x, order)
    from ._coalesce import coalesce

    x = sparsify(x)
    xp = _namespace(x.indices)
    out = COO(_index_rows(xp, x.indices, order), x.values, tuple(x.shape[i] for i in order), check=False)
    return coalesce(out)


def _pair(x, xs, y, ys, keep, op):
    """Contract operands x (symbols xs) and y (ys), keeping the symbols in ``keep``."""
    shared = [s for s in xs if s in ys]
    # a shared broadcast dimension of size 1 on one side: sum the other side over it if it is
    # contracted; a batch dimension broadcasts in _product
    for s in list(shared):
        nx, ny = x.shape[xs.index(s)], y.shape[ys.index(s)]
        if nx != ny and s not in keep:
            if nx != 1 and ny != 1:
                raise ValueError(f"einsum: subscript {_sym_name(s)} labels dimensions of sizes {nx} and {ny}")
            if nx == 1:
                y, ys = _sum_axes(y, [ys.index(s)]), [t for t in ys if t != s]
                x, xs = _sum_axes(x, [xs.index(s)]), [t for t in xs if t != s]
            else:
                x, xs = _sum_axes(x, [xs.index(s)]), [t for t in xs if t != s]
                y, ys = _sum_axes(y, [ys.index(s)]), [t for t in ys if t != s]
            shared.remove(s)
        elif nx != ny and nx != 1 and ny != 1:
            raise ValueError(f"einsum: subscript {_sym_name(s)} labels dimensions of sizes {nx} and {ny}")
    batch = [s for s in shared if s in keep]
    con = [s for s in shared if s not in keep]
    fx = [s for s in xs if s not in shared]
    fy = [s for s in ys if s not in shared]
    sizes = {}
    for s in batch:
        sizes[s] = max(x.shape[xs.index(s)], y.shape[ys.index(s)])
    bshape = tuple(sizes[s] for s in batch)
    r = _product(x, [xs.index(s) for s in batch], [xs.index(s) for s in fx], [xs.index(s) for s in con],
                 y, [ys.index(s) for s in batch], [ys.index(s) for s in con], [ys.index(s) for s in fy],
                 bshape, op)
    return r, batch + fx + fy


def _contraction_order(ops, out_syms):
    """Pairs (i, j) of positions to contract, NumPy's greedy path (the result goes last)."""
    if len(ops) < 2:
        return []
    names = {}
    for _, t in ops:
        for v in t:
            names.setdefault(v, _LETTERS[len(names)] if len(names) < 52 else None)
    if None in names.values() or len(ops) == 2:
        return [(0, 1)] + [(0, 1)] * (len(ops) - 2)
    spec = ",".join("".join(names[v] for v in t) for _, t in ops) + "->" + "".join(names[v] for v in out_syms)
    dummies = [np.broadcast_to(np.zeros((), dtype=np.float64), x.shape) for x, _ in ops]
    path, _ = np.einsum_path(spec, *dummies, optimize="greedy")
    out = []
    for step in path[1:]:
        if len(step) == 2:
            out.append(tuple(sorted(step)))
        else:  # a single operand or more than two at once: fall back to pairs of the first ones
            for _ in range(len(step) - 1):
                out.append((0, 1))
            break
    while len(out) < len(ops) - 1:
        out.append((0, 1))
    return out


def _sym_name(s):
    return _LETTERS[s] if s < 52 else "..."


def einsum(*operands, dtype=None, out=None, optimize=False, order="K", casting="safe"):
    """Einstein summation (``numpy.einsum``) over COO and dense operands.

    Both calling conventions are accepted (``einsum("ij,jk->ik", a, b)`` and
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``), with ``...`` broadcasting.
    Repeated subscripts take diagonals, subscripts of one operand that are not
    in the output are summed first, then the operands are contracted pairwise,
    left to right: two COO operands by SpGEMM, a COO and a dense one by SpMM,
    two dense ones by NumPy (CuPy).

    Parameters
    ----------
    dtype : dtype, optional
        The operands are cast to it first.
    out, optimize, order, casting
        Accepted for NumPy compatibility: ``out`` must be None; the others are
        ignored (the contraction order is left to right).

    Returns
    -------
    COO or ndarray
        A COO (coalesced) when every operand is a COO, else dense. Only
        ``fill_value`` 0 operands are accepted.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 1], [1, 0]], np.array([1.0, 2.0]), (2, 2))
    >>> coosparse.einsum("ij,jk->ik", a, np.eye(2))
    array([[0., 1.],
           [2., 0.]])
    >>> coosparse.einsum("ij->", a).to_dense()
    array(3.)
    """
    if out is not None:
        raise TypeError("einsum: out= is not supported for COO operands")
    terms, out_term, arrays = _parse_einsum(operands)
    if len(terms) != len(arrays):
        raise ValueError(f"einsum: {len(terms)} subscript terms for {len(arrays)} operands")
    arrays = [_as_operand(a, "einsum") for a in arrays]
    if dtype is not None:
        dt = _dtypes.check_dtype(dtype, "einsum dtype")
        arrays = [a.astype(dt) for a in arrays]
    _check_zero_fill("einsum", *arrays)
    all_sparse = all(_is_coo(a) for a in arrays)
    if not any(_is_coo(a) for a in arrays):
        xp = backend_for(*arrays).xp
        return xp.einsum(*operands, dtype=dtype, optimize=optimize) if isinstance(operands[0], str) else \
            xp.einsum(*operands, dtype=dtype)
    syms, nell = [], 0
    for i, (t, a) in enumerate(zip(terms, arrays)):
        s, ne = _expand_ellipsis(t, a.ndim, f"operand {i}'s subscripts")
        syms.append(s)
        nell = max(nell, ne)
    counts = {}
    for s in syms:
        for v in s:
            counts[v] = counts.get(v, 0) + 1
    ell = [_ELLIPSIS_BASE + j for j in range(nell - 1, -1, -1)]
    if out_term is None:
        out_syms = ell + sorted(v for v, c in counts.items() if c == 1 and v < _ELLIPSIS_BASE)
    else:
        if Ellipsis in out_term:
            i = out_term.index(Ellipsis)
            out_syms = out_term[:i] + ell + out_term[i + 1:]
        else:
            out_syms = list(out_term)
        if len(set(out_syms)) != len(out_syms):
            raise ValueError("einsum: an output subscript is repeated")
        missing = [v for v in out_syms if v not in counts]
        if missing:
            raise ValueError(f"einsum: output subscript {_sym_name(missing[0])} does not occur in the inputs")
    # sizes agree (broadcast dims may be 1)
    sizes = {}
    for s, a in zip(syms, arrays):
        for v, n in zip(s, a.shape):
            m = sizes.setdefault(v, n)
            if n != m and (v < _ELLIPSIS_BASE or (n != 1 and m != 1)):
                raise ValueError(f"einsum: subscript {_sym_name(v)} labels dimensions of sizes {m} and {n}")
            sizes[v] = max(m, n) if v >= _ELLIPSIS_BASE else m
    # per operand: diagonals, then sums over subscripts nobody else needs
    ops = []
    for i, (s, a) in enumerate(zip(syms, arrays)):
        a, s = _take_diagonal(a, list(s))
        others = set(out_syms)
        for j, t in enumerate(syms):
            if j != i:
                others.update(t)
        drop = [k for k, v in enumerate(s) if v not in others]
        a = _sum_axes(a, drop)
        s = [v for k, v in enumerate(s) if k not in drop]
        ops.append((a, s))
    for i, j in _contraction_order(ops, out_syms):
        (x, xs), (y, ys) = ops[i], ops[j]
        rest = [op for k, op in enumerate(ops) if k not in (i, j)]
        keep = set(out_syms)
        for _, t in rest:
            keep.update(t)
        ops = rest + [_pair(x, xs, y, ys, keep, "einsum")]
    cur, cs = ops[0]
    # broadcast ellipsis dims of size 1 that the output lacks were summed; sum any left
    extra = [k for k, v in enumerate(cs) if v not in out_syms]
    if extra:
        cur = _sum_axes(cur, extra)
        cs = [v for v in cs if v in out_syms]
    for v in out_syms:
        if v not in cs:  # an ellipsis dim absent from every operand (size 1)
            cur = _expand_dims(cur, len(cs))
            cs = cs + [v]
    cur = _permute(cur, [cs.index(v) for v in out_syms])
    if all_sparse and not _is_coo(cur):  # all-sparse inputs always give a COO
        from ._dense import from_dense

        cur = from_dense(cur)
    return cur


def _expand_dims(x, axis):
    if not _is_coo(x):
        return _namespace(x).expand_dims(x, axis)
    x = sparsify(x)
    xp = _namespace(x.indices)
    idx = xp.concatenate([x.indices[:axis], xp.zeros((1, x.nnz), np.int64), x.indices[axis:]])
    return COO(idx, x.values, x.shape[:axis] + (1,) + x.shape[axis:], sorted=x.is_sorted,
               unique=x.is_unique, check=False)


# ----------------------------------------------------------------------------- NumPy's functions
def _no_out(name, out):
    if out is not None:
        raise TypeError(f"numpy.{name}: out= is not supported for COO operands")


@implements(np.dot)
def _np_dot(a, b, out=None):
    _no_out("dot", out)
    return dot(a, b)


@implements(np.tensordot, np.linalg.tensordot)
def _np_tensordot(a, b, axes=2):
    return tensordot(a, b, axes=axes)


@implements(np.inner)
def _np_inner(a, b):
    return inner(a, b)


@implements(np.vdot)
def _np_vdot(a, b):
    return vdot(a, b)


@implements(np.outer)
def _np_outer(a, b, out=None):
    _no_out("outer", out)
    return outer(a, b)


@implements(np.linalg.outer)
def _np_linalg_outer(x1, x2, /):
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"numpy.linalg.outer: operands must be 1-D; got shapes {x1.shape} and {x2.shape}")
    return outer(x1, x2)


@implements(np.einsum)
def _np_einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    return einsum(*operands, out=out, dtype=dtype, order=order, casting=casting, optimize=optimize)


@implements(np.linalg.matmul)
def _np_linalg_matmul(x1, x2, /):
    return matmul(x1, x2)


@implements(np.linalg.vecdot)
def _np_linalg_vecdot(x1, x2, /, *, axis=-1):
    return vecdot(x1, x2, axis=axis)


# np.matmul and np.vecdot are generalized ufuncs: COO.__array_ufunc__ (coosparse/_ufunc.py)
# finds them here after dropping out=/where= (refused there) and the ignored keywords
@implements(np.matmul)
def _np_matmul(x1, x2, /, **kwargs):
    _no_gufunc_keywords("matmul", kwargs)
    return matmul(x1, x2)


@implements(np.vecdot)
def _np_vecdot(x1, x2, /, *, axis=-1, **kwargs):
    _no_gufunc_keywords("vecdot", kwargs)
    return vecdot(x1, x2, axis=axis)


def _no_gufunc_keywords(name, kwargs):
    if kwargs:
        raise TypeError(f"numpy.{name}: keyword(s) {sorted(kwargs)} not supported for COO operands")


def binary_operand(x):
    """True when ``x`` can be the other operand of ``COO @ x`` (else the operator defers)."""
    return _is_coo(x) or isinstance(x, (np.ndarray, np.generic, numbers.Number, list, tuple)) or is_device_array(x)
