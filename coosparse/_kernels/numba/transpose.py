"""The dense transpose (the linalg family's ``dense_transpose``): a.T copied in tiles.

Tiles of 8 rows x ``TRANSPOSE_TILE`` columns of ``a``: each reads 8 runs of a row and writes a
cache line of each of the tile's output rows (NumPy's strided copy walks a whole column of
``a`` per output row, a cache miss per element). Items move as unsigned integers of their
width (``backend.bits_view``; 16-byte items as complex128): one kernel per width serves every
dtype. When ``a``'s rows are unit-stride and its items 1-8 bytes wide, each 8 x 8 block moves as
eight vector loads, three rounds of shuffles and eight vector stores (``_block8``) instead of 64 scalar copies: 14 against 22 ms
of one thread for 64 x 131072 float64. With 8-byte items into an ``out`` whose rows start on
cache lines, each store is a whole line and streams past the caches (``_block8_stream``: no read
of the line before it is written): 7 ms, and SDDMM, which reads the copy back at random, went
73 -> 57 ms of CPU a call. Either way the copy is exact.
"""
import llvmlite.ir as llir
import numba as nb
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from ..backend import bits_view
from .parts import nparts_for, store_fence
from .threads import run_parts

TRANSPOSE_TILE = 64  # columns of a per tile: 64 output rows of one cache line per 8 rows of a
# a dense transpose of fewer elements is NumPy's strided copy (measured as fast: it stays in cache)
TRANSPOSE_NUMPY_BELOW = 1 << 16

_u = np.uint64


def _out_row(rowmap, c):
    """The output row of a's column c: c itself (``rowmap`` None), else rowmap[c] (negative: none)."""


@overload(_out_row)
def _out_row_impl(rowmap, c):
    if isinstance(rowmap, types.NoneType):
        return lambda rowmap, c: c
    return lambda rowmap, c: rowmap[c]


@nb.njit(cache=True, nogil=True)
def _transpose_part(t, nparts, a, out, rowmap):
    """out[d, k] = a[k, c] for part t's blocks of TRANSPOSE_TILE columns c, element by element;
    d = _out_row(rowmap, c): c, or the column's row in ``rowmap`` (a negative one: not copied)."""
    kk, nn = a.shape
    nblocks = (nn + TRANSPOSE_TILE - 1) // TRANSPOSE_TILE
    for b in range(nblocks * t // nparts, nblocks * (t + 1) // nparts):
        c0 = b * TRANSPOSE_TILE
        c1 = c0 + TRANSPOSE_TILE if c0 + TRANSPOSE_TILE < nn else nn
        for k0 in range(0, kk, 8):
            k1 = k0 + 8 if k0 + 8 < kk else kk
            for c in range(c0, c1):
                d = _out_row(rowmap, c)
                if d >= 0:
                    for k in range(k0, k1):
                        out[_u(d), _u(k)] = a[_u(k), _u(c)]


def _shuffle(builder, x, y, mask):
    i32 = llir.IntType(32)
    return builder.shuffle_vector(x, y, llir.Constant(llir.VectorType(i32, 8), [i32(m) for m in mask]))


def _block8_codegen(context, builder, sig, args, streaming):
    aty, oty, mty = sig.args[0], sig.args[3], sig.args[4]
    arr = context.make_array(aty)(context, builder, args[0])
    dst = context.make_array(oty)(context, builder, args[3])
    mapped = not isinstance(mty, types.NoneType)
    if mapped:  # column c goes to out's row rowmap[c], nowhere when that is negative
        rowmap = context.make_array(mty)(context, builder, args[4])
    k0, c0 = args[1], args[2]
    i64 = llir.IntType(64)
    vty = llir.VectorType(context.get_value_type(aty.dtype), 8)
    align = aty.dtype.bitwidth // 8
    rows = []
    for i in range(8):
        p = cgutils.get_item_pointer(context, builder, aty, arr, [builder.add(k0, i64(i)), c0], wraparound=False)
        rows.append(builder.load(builder.bitcast(p, vty.as_pointer()), align=align))
    # rows r_i = a[k0 + i, c0:c0 + 8] -> columns: pairs of rows interleaved, then pairs of
    # pairs, then halves (the textbook 8 x 8 transpose in three rounds of shuffles)
    s = [None] * 8
    for i in (0, 2, 4, 6):
        s[i] = _shuffle(builder, rows[i], rows[i + 1], [0, 8, 2, 10, 4, 12, 6, 14])
        s[i + 1] = _shuffle(builder, rows[i], rows[i + 1], [1, 9, 3, 11, 5, 13, 7, 15])
    u = [None] * 8
    for b in (0, 4):
        for o in (0, 1):
            u[b + o] = _shuffle(builder, s[b + o], s[b + o + 2], [0, 1, 8, 9, 4, 5, 12, 13])
            u[b + o + 2] = _shuffle(builder, s[b + o], s[b + o + 2], [2, 3, 10, 11, 6, 7, 14, 15])
    for j in range(4):
        for jj, mask in ((j, [0, 1, 2, 3, 8, 9, 10, 11]), (j + 4, [4, 5, 6, 7, 12, 13, 14, 15])):
            col = _shuffle(builder, u[j], u[j + 4], mask)
            if not mapped:
                _store_col(context, builder, oty, dst, builder.add(c0, i64(jj)), k0, col, vty, streaming, align)
                continue
            mp = cgutils.get_item_pointer(context, builder, mty, rowmap, [builder.add(c0, i64(jj))],
                                          wraparound=False)
            d = builder.load(mp)
            d = builder.sext(d, i64) if d.type != i64 else d
            with builder.if_then(builder.icmp_signed(">=", d, i64(0))):
                _store_col(context, builder, oty, dst, d, k0, col, vty, streaming, align)
    return context.get_dummy_value()


def _store_col(context, builder, oty, dst, row, k0, col, vty, streaming, align):
    p = cgutils.get_item_pointer(context, builder, oty, dst, [row, k0], wraparound=False)
    if streaming:  # past the caches (no read of the line first); the caller checked alignment
        st = builder.store(col, builder.bitcast(p, vty.as_pointer()), align=64)
        st.set_metadata("nontemporal", builder.module.add_metadata([llir.Constant(llir.IntType(32), 1)]))
    else:
        builder.store(col, builder.bitcast(p, vty.as_pointer()), align=align)


def _block8_sig(a, k0, c0, out, rowmap):
    if not (isinstance(a.dtype, (types.Float, types.Integer)) and a.dtype == out.dtype
            and isinstance(k0, types.Integer) and isinstance(c0, types.Integer)
            and (isinstance(rowmap, types.NoneType)
                 or (isinstance(rowmap, types.Array) and isinstance(rowmap.dtype, types.Integer)))):
        return None
    return types.void(a, k0, c0, out, rowmap)


@intrinsic
def _block8(typingctx, a, k0, c0, out, rowmap):
    """out[d, k0 + i] = a[k0 + i, c0 + j] for i, j < 8, d = _out_row(rowmap, c0 + j) (rowmap None:
    the column itself; a negative row: not stored): rows of ``a`` and ``out`` unit-stride (the
    caller checks ``a``'s; ``out`` is C-contiguous), the block inside both."""
    return _block8_sig(a, k0, c0, out, rowmap), lambda c, b, sig, args: _block8_codegen(c, b, sig, args, False)


@intrinsic
def _block8_stream(typingctx, a, k0, c0, out, rowmap):
    """_block8 with non-temporal stores: each of the eight stores must be a whole aligned cache
    line (64-byte items x 8, ``out`` 64-byte aligned with rows of a multiple of 64 bytes)."""
    return _block8_sig(a, k0, c0, out, rowmap), lambda c, b, sig, args: _block8_codegen(c, b, sig, args, True)


@nb.njit(cache=True, nogil=True, inline="always")
def _transpose_blocks(t, nparts, a, out, rowmap, stream):
    """_transpose_part for ``a`` with unit-stride rows and a real or integer dtype: whole 8 x 8
    blocks by vectors (_block8, or _block8_stream when ``stream``: a constant at each call, so each
    part kernel compiles one of them), the ragged edges element by element."""
    kk, nn = a.shape
    nblocks = (nn + TRANSPOSE_TILE - 1) // TRANSPOSE_TILE
    for b in range(nblocks * t // nparts, nblocks * (t + 1) // nparts):
        c0 = b * TRANSPOSE_TILE
        c1 = c0 + TRANSPOSE_TILE if c0 + TRANSPOSE_TILE < nn else nn
        c8 = c0 + (c1 - c0) // 8 * 8
        for k0 in range(0, kk, 8):
            k1 = k0 + 8 if k0 + 8 < kk else kk
            ce = c0
            if k1 - k0 == 8:
                for c in range(c0, c8, 8):
                    if stream:
                        _block8_stream(a, np.int64(k0), np.int64(c), out, rowmap)
                    else:
                        _block8(a, np.int64(k0), np.int64(c), out, rowmap)
                ce = c8
            for c in range(ce, c1):
                d = _out_row(rowmap, c)
                if d >= 0:
                    for k in range(k0, k1):
                        out[_u(d), _u(k)] = a[_u(k), _u(c)]


@nb.njit(cache=True, nogil=True)
def _transpose_rows_part(t, nparts, a, out, rowmap):
    """_transpose_part by vector 8 x 8 blocks (unit-stride rows of plain numbers)."""
    _transpose_blocks(t, nparts, a, out, rowmap, False)


@nb.njit(cache=True, nogil=True)
def _transpose_stream_part(t, nparts, a, out, rowmap):
    """_transpose_rows_part with streaming stores (8-byte items, ``out`` aligned for them)."""
    _transpose_blocks(t, nparts, a, out, rowmap, True)
    store_fence()


# ------------------------------------------------------------- the sampled columns only
@nb.njit(cache=True, nogil=True)
def _number_first(cols, n, rowmap, out):
    """rowmap[c] = the order of column c's first entry among the distinct columns in [0, n)
    (rowmap -1 on entry, left so for columns no entry names); out[e] = rowmap[cols[e]], -1 for a
    column outside [0, n). Returns the number of distinct columns. One pass, in order: the
    numbers depend on what came before."""
    j = 0
    for e in range(cols.shape[0]):
        c = cols[_u(e)]
        if _u(c) < _u(n):
            d = rowmap[_u(c)]
            if d < 0:
                d = j
                rowmap[_u(c)] = j
                j += 1
            out[_u(e)] = d
        else:
            out[_u(e)] = -1
    return j


def _rows_ok(a, out):
    """Vector 8 x 8 blocks fit: unit-stride rows of plain numbers (every item width but 16 bytes,
    viewed as unsigned integers), both arrays aligned."""
    return (a.dtype.kind in "fiu" and a.strides[1] == a.itemsize and out.strides[1] == out.itemsize
            and a.flags.aligned and out.flags.aligned)


def _stream_ok(a, out):
    """Streaming stores fit as well: 8-byte items into whole aligned cache lines."""
    return _rows_ok(a, out) and a.itemsize == 8 and out.ctypes.data % 64 == 0 and out.strides[0] % 64 == 0


def _transpose_kernel(a, out):
    """The part kernel for a.T into ``out``: vector blocks where they fit (streaming their stores
    where those fit too), else element by element."""
    if not _rows_ok(a, out):
        return _transpose_part
    return _transpose_stream_part if _stream_ok(a, out) else _transpose_rows_part


def number_columns(cols, nn, cols_out=None):
    """(cols2, rowmap, m): the m distinct columns in [0, nn) that ``cols`` names, numbered in the
    order of their first entry; cols2[e] the number of cols[e] (-1 outside [0, nn); int32 below
    2**31 columns, into ``cols_out`` when given), rowmap[c] the number of column c (-1: unnamed).
    One serial pass: a number depends on the entries before it."""
    rowmap = np.full(nn, -1, dtype=np.int32 if nn < 2**31 else np.int64)
    cols2 = np.empty(cols.shape[0], dtype=rowmap.dtype) if cols_out is None else cols_out
    return cols2, rowmap, int(_number_first(cols, nn, rowmap, cols2))


def sampled_transpose(a, cols, nthreads, out=None, numbering=None):
    """(out, cols2, m): the columns of 2-D ``a`` that ``cols`` names, as rows 0..m-1 of ``out``
    (C-contiguous [N, K] of a's dtype, not overlapping ``a``; rows m.. untouched) in the order of
    their first entry, and cols2 (``number_columns``) the row of each entry's column, -1 for a
    column outside [0, N). ``numbering``: number_columns' result for these ``cols``, kept from an
    earlier call (the mask's companion), so the pass is not run again. SDDMM reads only these
    rows: a graph's mask names part of the columns (59% for the R-MAT graph), so fewer lines are
    written, and the rows it gathers at random are packed together in the order it first needs
    them (its products 49 -> 42 ms on one thread)."""
    kk, nn = a.shape
    if out is None:
        out = np.empty((nn, kk), dtype=a.dtype)
    cols2, rowmap, m = number_columns(cols, nn) if numbering is None else numbering
    if m:
        a2, out2 = bits_view(a), bits_view(out)  # (a copy of bits: one kernel per item width)
        run_parts(_transpose_kernel(a2, out2), nparts_for(a.size, nthreads), nthreads, a2, out2, rowmap)
    return out, cols2, m


def dense_transpose(a, nthreads, out=None):
    """A C-contiguous copy of ``a.T`` (``a`` 2-D, any strides), written into ``out`` when given (a
    C-contiguous array of ``a.T``'s shape and ``a``'s dtype, not overlapping ``a``)."""
    if a.size < TRANSPOSE_NUMPY_BELOW:
        if out is None:
            return np.ascontiguousarray(a.T)
        out[...] = a.T
        return out
    if out is None:
        out = np.empty((a.shape[1], a.shape[0]), dtype=a.dtype)
    if a.size:
        # vectors for 8 x 8 blocks when the rows are unit-stride and the items plain numbers; with
        # 8-byte items into whole aligned cache lines, stores that skip the caches (no line read
        # first: 67 MB transposed in half the time, and SDDMM, which reads it back, faster in all)
        # (a copy of bits: one kernel per item width serves every dtype)
        a2, out2 = bits_view(a), bits_view(out)
        run_parts(_transpose_kernel(a2, out2), nparts_for(a.size, nthreads), nthreads, a2, out2, None)
    return out
