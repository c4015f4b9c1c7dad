"""SDDMM on the CPU (the linalg family's ``sddmm``): ``out[e]`` is the dot product of row
``r_e`` of ``x`` and column ``c_e`` of ``y``, for the entries of a sampling mask.

Parts are ranges of entries, each entry written by one part; the sum's order is fixed (below),
so results are bit-identical from run to run and to the CUDA layer. Indices are checked in the
pass that reads them and counted in ``flags`` (see ``linalg.py``).
"""
import llvmlite.ir as llir
import numba as nb
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from .parts import nparts_for, prefetch_lines
from .threads import run_parts

_u = np.uint64
_NO_FLAGS = np.zeros((1, 2), dtype=np.int64)

# SDDMM fetches the rows of the entry this many positions ahead
SDDMM_PREFETCH = 8


# ---------------------------------------------------------------------------- SDDMM
# A dot product of length k is taken as eight interleaved partial sums (lane l adds the
# terms j = l, l + 8, ... in turn, each from 0), combined ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)).
# The order is fixed, so results are bit-identical everywhere (the CUDA kernel does the
# same in one thread), and the eight independent sums keep the CPU's adders busy.
@nb.njit(cache=True, nogil=True, inline="always")
def _dot8(x, xa, xj, y, ya, yj, k, zero):
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = zero
    k8 = k - k % 8
    for j in range(0, k8, 8):
        p = xa + j * xj
        q = ya + j * yj
        s0 += x[_u(p + 0 * xj)] * y[_u(q + 0 * yj)]
        s1 += x[_u(p + 1 * xj)] * y[_u(q + 1 * yj)]
        s2 += x[_u(p + 2 * xj)] * y[_u(q + 2 * yj)]
        s3 += x[_u(p + 3 * xj)] * y[_u(q + 3 * yj)]
        s4 += x[_u(p + 4 * xj)] * y[_u(q + 4 * yj)]
        s5 += x[_u(p + 5 * xj)] * y[_u(q + 5 * yj)]
        s6 += x[_u(p + 6 * xj)] * y[_u(q + 6 * yj)]
        s7 += x[_u(p + 7 * xj)] * y[_u(q + 7 * yj)]
    r = k - k8
    p = xa + k8 * xj
    q = ya + k8 * yj
    if r > 0:
        s0 += x[_u(p + 0 * xj)] * y[_u(q + 0 * yj)]
    if r > 1:
        s1 += x[_u(p + 1 * xj)] * y[_u(q + 1 * yj)]
    if r > 2:
        s2 += x[_u(p + 2 * xj)] * y[_u(q + 2 * yj)]
    if r > 3:
        s3 += x[_u(p + 3 * xj)] * y[_u(q + 3 * yj)]
    if r > 4:
        s4 += x[_u(p + 4 * xj)] * y[_u(q + 4 * yj)]
    if r > 5:
        s5 += x[_u(p + 5 * xj)] * y[_u(q + 5 * yj)]
    if r > 6:
        s6 += x[_u(p + 6 * xj)] * y[_u(q + 6 * yj)]
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))


@nb.njit(cache=True, nogil=True, inline="always")
def _dot8_pair(x, xa, xb, y, ya, yb, k8, zero):
    """(_dot8 of x's row at xa with y's at ya, _dot8 of x's row at xb with y's at yb): unit
    strides, k8 a multiple of 8. The sixteen sums are independent: one entry's eight measured
    bound by the adders' latency, not by memory (and a sorted mask's pairs share x's row)."""
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = zero
    t0 = t1 = t2 = t3 = t4 = t5 = t6 = t7 = zero
    for j in range(0, k8, 8):
        p = xa + j
        o = xb + j
        q = ya + j
        w = yb + j
        s0 += x[_u(p)] * y[_u(q)]
        s1 += x[_u(p + 1)] * y[_u(q + 1)]
        s2 += x[_u(p + 2)] * y[_u(q + 2)]
        s3 += x[_u(p + 3)] * y[_u(q + 3)]
        s4 += x[_u(p + 4)] * y[_u(q + 4)]
        s5 += x[_u(p + 5)] * y[_u(q + 5)]
        s6 += x[_u(p + 6)] * y[_u(q + 6)]
        s7 += x[_u(p + 7)] * y[_u(q + 7)]
        t0 += x[_u(o)] * y[_u(w)]
        t1 += x[_u(o + 1)] * y[_u(w + 1)]
        t2 += x[_u(o + 2)] * y[_u(w + 2)]
        t3 += x[_u(o + 3)] * y[_u(w + 3)]
        t4 += x[_u(o + 4)] * y[_u(w + 4)]
        t5 += x[_u(o + 5)] * y[_u(w + 5)]
        t6 += x[_u(o + 6)] * y[_u(w + 6)]
        t7 += x[_u(o + 7)] * y[_u(w + 7)]
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)), ((t0 + t1) + (t2 + t3)) + ((t4 + t5) + (t6 + t7))


# The lanes as one vector each: Numba's scalar code of the eight sums is not vectorised by LLVM
# (sixteen scalar multiplies and adds per step of a pair: compute-bound with every row in cache),
# while lane l of a vector adds exactly lane l's terms in the same order, so the bits are the
# ones above. No fused multiply-add (the IR asks for none): products are rounded on their own.
def _lanes_codegen(context, builder, sig, args, m):
    """Lane sums of ``m`` dot products (x[xo_i + j] * y[yo_i + j], lane j % 8, j < k8) as a tuple."""
    xty, yty = sig.args[0], sig.args[1 + m]
    xdata = context.make_array(xty)(context, builder, args[0]).data
    ydata = context.make_array(yty)(context, builder, args[1 + m]).data
    xoffs, yoffs, k8 = args[1:1 + m], args[2 + m:2 + 2 * m], args[-1]
    is_float = isinstance(xty.dtype, types.Float)
    vty = llir.VectorType(context.get_value_type(xty.dtype), 8)
    align = xty.dtype.bitwidth // 8
    accs = [cgutils.alloca_once_value(builder, llir.Constant(vty, None)) for _ in range(m)]
    i64 = llir.IntType(64)
    with cgutils.for_range(builder, builder.lshr(k8, i64(3))) as loop:
        off = builder.shl(loop.index, i64(3))
        for i in range(m):
            vx = builder.load(builder.bitcast(builder.gep(xdata, [builder.add(xoffs[i], off)]), vty.as_pointer()),
                              align=align)
            vy = builder.load(builder.bitcast(builder.gep(ydata, [builder.add(yoffs[i], off)]), vty.as_pointer()),
                              align=align)
            acc = builder.load(accs[i])
            acc = builder.fadd(acc, builder.fmul(vx, vy)) if is_float else builder.add(acc, builder.mul(vx, vy))
            builder.store(acc, accs[i])
    lanes = []
    for i in range(m):
        v = builder.load(accs[i])
        lanes += [builder.extract_element(v, llir.Constant(llir.IntType(32), lane)) for lane in range(8)]
    return context.make_tuple(builder, sig.return_type, lanes)


def _lanes_sig(x, offsets, y, k8, m):
    ints = all(isinstance(t, types.Integer) and t.bitwidth == 64 for t in (*offsets, k8))
    if not (ints and isinstance(x.dtype, (types.Float, types.Integer)) and x.dtype == y.dtype
            and x.dtype.bitwidth in (32, 64)):
        return None
    return types.UniTuple(x.dtype, 8 * m)(x, *offsets[:m], y, *offsets[m:], k8)


@intrinsic
def _lanes8(typingctx, x, xa, y, ya, k8):
    """The eight lane sums of x[xa:xa + k8] . y[ya:ya + k8] (k8 a multiple of 8; int64 offsets)."""
    sig = _lanes_sig(x, (xa, ya), y, k8, 1)
    return sig, (lambda context, builder, sig, args: _lanes_codegen(context, builder, sig, args, 1))


@intrinsic
def _lanes8x2(typingctx, x, xa, xb, y, ya, yb, k8):
    """The lane sums of two dot products (entries xa.ya and xb.yb): sixteen independent sums."""
    sig = _lanes_sig(x, (xa, xb, ya, yb), y, k8, 2)
    return sig, (lambda context, builder, sig, args: _lanes_codegen(context, builder, sig, args, 2))


def _dot_unit(x, xa, y, ya, k, zero):
    """_dot8 with unit strides (vector lanes for real and integer dtypes)."""


@overload(_dot_unit, jit_options={"cache": True, "nogil": True})
def _dot_unit_impl(x, xa, y, ya, k, zero):
    if isinstance(x.dtype, types.Complex):
        return lambda x, xa, y, ya, k, zero: _dot8(x, xa, 1, y, ya, 1, k, zero)

    def impl(x, xa, y, ya, k, zero):
        k8 = k - k % 8
        s0, s1, s2, s3, s4, s5, s6, s7 = _lanes8(x, xa, y, ya, k8)
        r = k - k8
        p = xa + k8
        q = ya + k8
        if r > 0:
            s0 += x[_u(p)] * y[_u(q)]
        if r > 1:
            s1 += x[_u(p + 1)] * y[_u(q + 1)]
        if r > 2:
            s2 += x[_u(p + 2)] * y[_u(q + 2)]
        if r > 3:
            s3 += x[_u(p + 3)] * y[_u(q + 3)]
        if r > 4:
            s4 += x[_u(p + 4)] * y[_u(q + 4)]
        if r > 5:
            s5 += x[_u(p + 5)] * y[_u(q + 5)]
        if r > 6:
            s6 += x[_u(p + 6)] * y[_u(q + 6)]
        return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))

    return impl


def _dot_pair(x, xa, xb, y, ya, yb, k8, zero):
    """_dot8_pair (vector lanes for real and integer dtypes)."""


@overload(_dot_pair, jit_options={"cache": True, "nogil": True})
def _dot_pair_impl(x, xa, xb, y, ya, yb, k8, zero):
    if isinstance(x.dtype, types.Complex):
        return lambda x, xa, xb, y, ya, yb, k8, zero: _dot8_pair(x, xa, xb, y, ya, yb, k8, zero)

    def impl(x, xa, xb, y, ya, yb, k8, zero):
        s = _lanes8x2(x, xa, xb, y, ya, yb, k8)
        return (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])),
                ((s[8] + s[9]) + (s[10] + s[11])) + ((s[12] + s[13]) + (s[14] + s[15])))

    return impl


# three kernels, chosen in Python: a call compiles only the layout it has
@nb.njit(cache=True, nogil=True)
def _sddmm_pairs_part(t, nparts, rows, rs, rb, cols, cs, cb, x, xj, y, yj, k, zero, out, flags):
    # unit strides and k % 8 == 0: entries two at a time (the last one of a part with itself); a
    # bad entry reads its partner's rows instead and is written 0
    n = rows.shape[0]
    lo = n * t // nparts
    hi = n * (t + 1) // nparts
    z = zero[0]
    bad = 0
    line = 64 // x.itemsize if x.itemsize <= 64 else 1  # not max(): a function of its own
    last = -1  # x's row fetched last: a sorted mask's entries share it (not fetched again)
    for e in range(lo, hi, 2):
        g = e + 1 if e + 1 < hi else e
        f = e + SDDMM_PREFETCH
        if f + 1 < hi:  # the rows of later entries: random reads (prefetching measured 2.5x)
            xa = rows[_u(f)] * rs
            xb = rows[_u(f + 1)] * rs
            ya = cols[_u(f)] * cs
            yb = cols[_u(f + 1)] * cs
            prefetch_lines(y, ya, k, line)
            prefetch_lines(y, yb, k, line)
            if xa != last:
                prefetch_lines(x, xa, k, line)
            if xb != xa:
                prefetch_lines(x, xb, k, line)
            last = xb
        r, c, r2, c2 = rows[_u(e)], cols[_u(e)], rows[_u(g)], cols[_u(g)]
        ok = _u(r) < rb and _u(c) < cb
        ok2 = _u(r2) < rb and _u(c2) < cb
        if not ok:
            bad += 1
            r, c = r2, c2
        if not ok2:
            bad += g > e
            r2, c2 = r, c
        if ok or ok2:
            v, w = _dot_pair(x, r * rs, r2 * rs, y, c * cs, c2 * cs, k, z)
        else:
            v = w = z
        out[e] = v if ok else z
        out[g] = w if ok2 else z
    flags[t, 0] = bad


@nb.njit(cache=True, nogil=True)
def _sddmm_unit_part(t, nparts, rows, rs, rb, cols, cs, cb, x, xj, y, yj, k, zero, out, flags):
    # xj == yj == 1: the same sums, with unit strides the compiler can see
    n = rows.shape[0]
    lo = n * t // nparts
    hi = n * (t + 1) // nparts
    z = zero[0]
    bad = 0
    # the rows of a later entry are fetched ahead: the entries' y rows (x rows too, for an
    # unsorted mask) are random reads, which measured 2.5x faster with prefetching
    line = 64 // x.itemsize if x.itemsize <= 64 else 1  # not max(): a function of its own
    last = -1  # x's row fetched last (a sorted mask's entries share it)
    for e in range(lo, hi):
        f = e + SDDMM_PREFETCH
        if f < hi:
            xa = rows[_u(f)] * rs
            ya = cols[_u(f)] * cs
            prefetch_lines(y, ya, k, line)
            if xa != last:
                prefetch_lines(x, xa, k, line)
            last = xa
        r = rows[_u(e)]
        c = cols[_u(e)]
        if _u(r) >= rb or _u(c) >= cb:
            bad += 1
            out[e] = z
            continue
        out[e] = _dot_unit(x, r * rs, y, c * cs, k, z)
    flags[t, 0] = bad


@nb.njit(cache=True, nogil=True)
def _sddmm_strided_part(t, nparts, rows, rs, rb, cols, cs, cb, x, xj, y, yj, k, zero, out, flags):
    n = rows.shape[0]
    lo = n * t // nparts
    hi = n * (t + 1) // nparts
    z = zero[0]
    bad = 0
    for e in range(lo, hi):
        r = rows[_u(e)]
        c = cols[_u(e)]
        if _u(r) >= rb or _u(c) >= cb:
            bad += 1
            out[e] = z
            continue
        out[e] = _dot8(x, r * rs, xj, y, c * cs, yj, k, z)
    flags[t, 0] = bad


def sddmm(rows, row_stride, row_bound, cols, col_stride, col_bound, x, x_inner, y, y_inner, k, nthreads):
    """(out, flags): flags[:, 0] counts entries with rows[e] outside [0, row_bound) or cols[e]
    outside [0, col_bound) (their value is 0, nothing read). With k == 0 nothing is read."""
    n = rows.shape[0]
    if n == 0 or k == 0:
        return np.zeros(n, dtype=x.dtype), _NO_FLAGS
    out = np.empty(n, dtype=x.dtype)  # every kernel writes every entry (a bad one 0)
    nparts = nparts_for(n * int(k), nthreads)
    flags = np.zeros((nparts, 2), dtype=np.int64)
    if int(x_inner) == 1 and int(y_inner) == 1:
        kernel = _sddmm_pairs_part if int(k) % 8 == 0 else _sddmm_unit_part
    else:
        kernel = _sddmm_strided_part
    run_parts(kernel, nparts, nthreads, rows, int(row_stride), _u(row_bound), cols, int(col_stride),
              _u(col_bound), x, int(x_inner), y, int(y_inner), int(k), np.zeros(1, dtype=x.dtype), out, flags)
    return out, flags
