"""Host kernels of the file bridge: zlib's CRC-32 by carry-less multiplication, and a file's
index rows widened to int64 with their bounds and order checked in the same pass.

zlib 1.2's ``crc32`` runs at 1-2 GB/s here, slower than the rest of writing or
reading an ``.npz`` put together. Folding the input 64 bytes at a time with the
CPU's carry-less multiply (PCLMULQDQ, on every x86-64 CPU since 2010), as
Intel's white paper "Fast CRC Computation for Generic Polynomials Using
PCLMULQDQ" and Linux's ``crc32-pclmul`` do, runs at memory speed. The folding
constants are Linux's for the reflected polynomial 0xEDB88320; the folded
128 bits are finished by the byte table, whose result is the same register.
Without the instruction (another architecture, or Numba told to compile for a
CPU without it) the layer's ``crc32`` row is zlib's.
"""
from __future__ import annotations

import functools
import platform
import zlib

import llvmlite.binding as llb
import llvmlite.ir as llir
import numba as nb
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ..bounds import size_limits
from .threads import run_parts


def _byte_table():
    t = np.arange(256, dtype=np.uint64)
    for _ in range(8):
        t = np.where(t & 1, (t >> np.uint64(1)) ^ np.uint64(0xEDB88320), t >> np.uint64(1))
    return t


TABLE = _byte_table()

# the folding constants of Linux's crc32-pclmul_asm.S: (R1, R2) fold 64 bytes ahead, (R3, R4) 16
_R1, _R2 = np.uint64(0x154442BD4), np.uint64(0x1C6E41596)
_R3, _R4 = np.uint64(0x1751997D0), np.uint64(0x0CCAA009E)
_MASK32 = np.uint64(0xFFFFFFFF)


@intrinsic
def _clmul(typingctx, a, b):
    """The carry-less product of two uint64 as (low 64 bits, high 64 bits)."""
    sig = types.UniTuple(types.uint64, 2)(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        i64, i32 = llir.IntType(64), llir.IntType(32)
        v2 = llir.VectorType(i64, 2)
        zero = llir.Constant(v2, [i64(0), i64(0)])
        va = builder.insert_element(zero, args[0], i32(0))
        vb = builder.insert_element(zero, args[1], i32(0))
        fn = cgutils.get_or_insert_function(builder.module, llir.FunctionType(v2, [v2, v2, llir.IntType(8)]),
                                            "llvm.x86.pclmulqdq")
        r = builder.call(fn, [va, vb, llir.IntType(8)(0)])
        return context.make_tuple(builder, signature.return_type,
                                  [builder.extract_element(r, i32(0)), builder.extract_element(r, i32(1))])

    return sig, codegen


@nb.njit(cache=True, nogil=True)
def _fold(lo, hi, k_lo, k_hi, next_lo, next_hi):
    a_lo, a_hi = _clmul(lo, k_lo)
    b_lo, b_hi = _clmul(hi, k_hi)
    return a_lo ^ b_lo ^ next_lo, a_hi ^ b_hi ^ next_hi


@nb.njit(cache=True, nogil=True)
def _table_word(r, w, table):
    for j in range(8):
        r = table[(r ^ (w >> np.uint64(8 * j))) & np.uint64(0xFF)] ^ (r >> np.uint64(8))
    return r


@intrinsic
def _fold_blocks(typingctx, w, x, nblocks):
    """The first ``8 * nblocks`` words of uint64 array ``w`` (``nblocks >= 1``; its first word
    xored with ``x``) folded into 128 bits (lo, hi): four lanes, each folded 64 bytes ahead, then
    into one. The lanes stay in vector registers (16-byte loads, PCLMULQDQ on both halves): the
    same folds as ``_fold`` on scalar halves, which moved every operand between the scalar and
    vector registers (14 against 28 GB/s on a 256 KiB buffer in cache)."""
    sig = types.UniTuple(types.uint64, 2)(w, types.uint64, types.int64)

    def codegen(context, builder, signature, args):
        i64, i32, i8 = llir.IntType(64), llir.IntType(32), llir.IntType(8)
        v2 = llir.VectorType(i64, 2)
        arr = context.make_array(signature.args[0])(context, builder, args[0])
        blocks = builder.bitcast(arr.data, v2.as_pointer())
        clmul = cgutils.get_or_insert_function(builder.module, llir.FunctionType(v2, [v2, v2, i8]),
                                               "llvm.x86.pclmulqdq")

        def load(q):  # the q-th 16 bytes
            return builder.load(builder.gep(blocks, [q]), align=8)

        def fold(x, k, nxt):
            lo = builder.call(clmul, [x, k, i8(0x00)])  # x's low half times k's low half
            hi = builder.call(clmul, [x, k, i8(0x11)])  # and the high halves
            return builder.xor(builder.xor(lo, hi), nxt)

        ahead64 = llir.Constant(v2, [i64(int(_R1)), i64(int(_R2))])
        ahead16 = llir.Constant(v2, [i64(int(_R3)), i64(int(_R4))])
        first = builder.insert_element(llir.Constant(v2, [i64(0), i64(0)]), args[1], i32(0))
        lanes = [cgutils.alloca_once(builder, v2) for _ in range(4)]  # registers, after mem2reg
        for j in range(4):
            v = load(i64(j))
            builder.store(builder.xor(v, first) if j == 0 else v, lanes[j])
        with cgutils.for_range(builder, builder.sub(args[2], i64(1))) as loop:
            q = builder.mul(builder.add(loop.index, i64(1)), i64(4))
            for j in range(4):
                builder.store(fold(builder.load(lanes[j]), ahead64, load(builder.add(q, i64(j)))), lanes[j])
        x = builder.load(lanes[0])
        for j in range(1, 4):
            x = fold(x, ahead16, builder.load(lanes[j]))
        return context.make_tuple(builder, signature.return_type,
                                  [builder.extract_element(x, i32(0)), builder.extract_element(x, i32(1))])

    return sig, codegen


@nb.njit(cache=True, nogil=True)
def crc32_folded(buf, crc, table):
    """zlib's ``crc32(buf, crc)`` of a 16-byte-aligned uint8 array of at least 64 bytes."""
    r = (~np.uint64(crc)) & _MASK32
    n = buf.shape[0]
    w = buf[:n - n % 16].view(np.uint64)
    nw = w.shape[0]
    nblocks = nw // 8
    xl, xh = _fold_blocks(w, r, nblocks)
    i = 8 * nblocks
    while i + 2 <= nw:
        xl, xh = _fold(xl, xh, _R3, _R4, w[i], w[i + 1])
        i += 2
    r = _table_word(np.uint64(0), xl, table)  # the folded 128 bits leave the register they stand for
    r = _table_word(r, xh, table)
    for p in range(8 * i, n):
        r = table[(r ^ np.uint64(buf[p])) & np.uint64(0xFF)] ^ (r >> np.uint64(8))
    return (~r) & _MASK32


@functools.cache
def folding_available():
    """Whether Numba compiles for a CPU with PCLMULQDQ (an x86-64 host, its own features)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    if nb.config.CPU_NAME or nb.config.CPU_FEATURES:  # compiling for another CPU: it may lack the instruction
        return False
    return bool(llb.get_host_cpu_features().get("pclmul", False))


_WIDEN_PIECE = 4096  # entries per piece: its keys (32 KB) stay in L1 between the passes over it


@nb.njit(cache=True, nogil=True)
def widen_part(t, nparts, src, out, limits, strides, found):
    """Part t of the widening pass: ``out[:, lo:hi] = src[:, lo:hi]`` (a file's index rows, (ndim,
    n) of a narrower integer type, into int64) and, in the same pass, ``found[t]`` = (some index
    outside ``limits`` (``uint64(i) < limit`` is ``0 <= i < size``), the first position whose
    linear key (``strides``) is below its predecessor's, the first that equals it; -1: none). The
    keys mean something only when every index is in bounds.

    Piece by piece, each step a plain loop over the piece (vectorised): the copy and bounds test
    per row, the keys, one compare of each key with the one before; a piece with a step down or a
    repeat is scanned again for the first of each.
    """
    ndim, n = src.shape
    u = np.uint64
    lo_part = n * t // nparts
    hi_part = n * (t + 1) // nparts
    outside = False
    decrease = -1
    repeat = -1
    keys = np.empty(_WIDEN_PIECE + 1, dtype=np.int64)
    keys[0] = -1  # below every key: the first entry has no predecessor
    if lo_part > 0:  # the part's first entry is compared with the entry before the part
        keys[0] = 0
        for d in range(ndim):
            keys[0] += np.int64(src[d, lo_part - 1]) * strides[d]
    for lo in range(lo_part, hi_part, _WIDEN_PIECE):
        m = min(_WIDEN_PIECE, hi_part - lo)
        for j in range(m):
            keys[u(j + 1)] = 0
        for d in range(ndim):
            lim = limits[d]
            st = strides[d]
            bad = False
            for j in range(m):
                v = np.int64(src[u(d), u(lo + j)])
                out[u(d), u(lo + j)] = v
                bad |= u(v) >= lim
                keys[u(j + 1)] += v * st
            outside |= bad
        if not outside and (decrease < 0 or repeat < 0):  # else settled (or meaningless): only copy
            stepped = False
            for j in range(m):
                stepped |= keys[u(j + 1)] <= keys[u(j)]
            if stepped:
                for j in range(m):
                    if keys[j + 1] < keys[j] and decrease < 0:
                        decrease = lo + j
                    elif keys[j + 1] == keys[j] and repeat < 0:
                        repeat = lo + j
        keys[0] = keys[m]
    found[t, 0] = 1 if outside else 0
    found[t, 1] = decrease
    found[t, 2] = repeat


def crc32(a, crc):
    """``zlib.crc32(a, crc)`` of a writeable uint8 array: folded where the CPU has the instruction."""
    if not folding_available():
        return zlib.crc32(a, crc)
    head = -a.ctypes.data % 16  # the kernel loads aligned 16-byte blocks
    if head:
        crc = zlib.crc32(a[:head], crc)
    return int(crc32_folded(a[head:], crc & 0xFFFFFFFF, TABLE))


def widen_indices(src, sizes, nparts, nthreads):
    """The layer's ``widen_indices`` row in ``nparts`` parts: (int64 copy, outside, first step down,
    first repeat)."""
    out = np.empty(src.shape, dtype=np.int64)
    strides, acc = [], 1
    for n in reversed(sizes):
        strides.append(acc)
        acc *= int(n)
    found = np.empty((nparts, 3), dtype=np.int64)
    run_parts(widen_part, nparts, nthreads, src, out, size_limits(sizes), np.array(strides[::-1], dtype=np.int64),
              found)
    if found[:, 0].any():
        return out, True, -1, -1
    return out, False, _first_found(found[:, 1]), _first_found(found[:, 2])


def _first_found(positions):
    """The first of the parts' positions (-1: none found in any part)."""
    hit = positions[positions >= 0]
    return int(hit.min()) if hit.size else -1
