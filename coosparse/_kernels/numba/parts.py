"""Part geometry shared by the kernel families: the contiguous range of part ``t``.

Kernels run part by part (``threads.run_parts``): a part kernel ``fn(t, nparts, ...)``
works on ``part_range(t, nparts, n)`` (or ``chunk_bounds`` of fixed-size chunks), or cuts a
sorted array with ``lower_bound``.
The helpers are inlined into each kernel (no compilation of their own). ``prefetch``
hints a cache line of a later random read (a row reached through a row pointer).
"""
import llvmlite.ir as llir
import numba as nb
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _prefetch_codegen(locality):
    def codegen(context, builder, sig, args):
        aty = sig.args[0]
        a = context.make_array(aty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aty, a, [args[1]], wraparound=False)
        i8p = llir.IntType(8).as_pointer()
        i32 = llir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, llir.FunctionType(llir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), llir.Constant(i32, 0), llir.Constant(i32, locality),
                          llir.Constant(i32, 1)])
        return context.get_dummy_value()

    return codegen


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint the CPU to fetch the cache line of ``arr[idx]`` (``llvm.prefetch``, read, high locality).

    A prefetch never faults, and nothing is read into the program: an index past the end
    only wastes the hint.
    """
    return types.void(arr, idx), _prefetch_codegen(3)


@intrinsic
def prefetch_l2(typingctx, arr, idx):
    """:func:`prefetch` into the core's L2 only (``prefetcht1``): a miss waits in the L2's queue, which
    holds about three times the misses the L1's fill buffers do, so more lines come in at once.
    For lines written at random soon after (a scatter): the store then finds its line in L2 (held
    exclusively when no other core has it), and the scatter of a 2M-entry transpose measured 12%
    faster than with ``prefetchw`` into L1 (one process, two threads, medians of 41: 13.1 against
    11.5 ms; 32-128 entries ahead alike, 256 slower)."""
    return types.void(arr, idx), _prefetch_codegen(2)


def _copy_items_sig(dst, di, src, si, n):
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array) and dst.layout == "C"
            and getattr(dst.dtype, "bitwidth", None) is not None
            and dst.dtype.bitwidth == getattr(src.dtype, "bitwidth", None)
            and all(isinstance(v, types.Integer) for v in (di, si, n))):
        return None
    return types.void(dst, di, src, si, n)


@intrinsic
def copy_items(typingctx, dst, di, src, si, n):
    """``dst[di:di + n] = src[si:si + n]`` (items of the same size; rows of 2-D arrays of one item
    each) by ``llvm.memcpy``: the caller keeps both ranges inside their arrays, and apart.

    For short runs (a gathered row of ~15 items) the C library's copy beats a compiled loop,
    which LLVM guards with overlap tests and then mostly leaves to its scalar remainder.
    """
    def codegen(context, builder, sig, args):
        dty, _, sty, _, _ = sig.args
        i64 = llir.IntType(64)
        ptrs = []
        for ty, arr, at, aty in ((dty, args[0], args[1], sig.args[1]), (sty, args[2], args[3], sig.args[3])):
            a = context.make_array(ty)(context, builder, arr)
            idx = [context.cast(builder, at, aty, types.intp)] + [i64(0)] * (ty.ndim - 1)
            ptrs.append(builder.bitcast(cgutils.get_item_pointer(context, builder, ty, a, idx, wraparound=False),
                                        llir.IntType(8).as_pointer()))
        n = context.cast(builder, args[4], sig.args[4], types.intp)
        cgutils.raw_memcpy(builder, ptrs[0], ptrs[1], n, dty.dtype.bitwidth // 8)
        return context.get_dummy_value()

    return _copy_items_sig(dst, di, src, si, n), codegen


@intrinsic
def stream_store(typingctx, arr, idx, val):
    """``arr[idx] = val`` with a non-temporal hint for 8-byte integer and float items (others are
    plain stores): the line goes to memory through the write-combining buffers, without the read
    a cached store makes of it first. For output written once in order; the kernel ends with
    :func:`store_fence`. Each store is whole, so stores of two threads to one line stay correct."""
    if not (isinstance(arr, types.Array) and isinstance(idx, types.Integer)):
        return None
    sig = types.void(arr, idx, val)

    def codegen(context, builder, sig, args):
        aty = sig.args[0]
        a = context.make_array(aty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aty, a, [args[1]], wraparound=False)
        st = builder.store(context.cast(builder, args[2], sig.args[2], aty.dtype), ptr)
        if isinstance(aty.dtype, (types.Integer, types.Float)) and aty.dtype.bitwidth == 64:
            st.set_metadata("nontemporal", builder.module.add_metadata([llir.Constant(llir.IntType(32), 1)]))
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def stream_line(typingctx, dst, j0, src, r, i0):
    """dst[j0:j0 + L] = src[r, i0:i0 + L], L = 64 // itemsize (4- or 8-byte items of one dtype): one
    64-byte vector store with a non-temporal hint. dst[j0] must start a cache line; the source
    needs no alignment. Used to store a whole line gathered in cache (write-combining in software)."""
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array) and dst.dtype == src.dtype
            and isinstance(dst.dtype, (types.Integer, types.Float)) and dst.dtype.bitwidth in (32, 64)):
        return None
    sig = types.void(dst, j0, src, r, i0)

    def codegen(context, builder, sig, args):
        dty, sty = sig.args[0], sig.args[2]
        d = context.make_array(dty)(context, builder, args[0])
        a = context.make_array(sty)(context, builder, args[2])
        pd = cgutils.get_item_pointer(context, builder, dty, d, [args[1]], wraparound=False)
        ps = cgutils.get_item_pointer(context, builder, sty, a, [args[3], args[4]], wraparound=False)
        vty = llir.VectorType(context.get_value_type(dty.dtype), 512 // dty.dtype.bitwidth)
        v = builder.load(builder.bitcast(ps, vty.as_pointer()), align=dty.dtype.bitwidth // 8)
        st = builder.store(v, builder.bitcast(pd, vty.as_pointer()), align=64)
        st.set_metadata("nontemporal", builder.module.add_metadata([llir.Constant(llir.IntType(32), 1)]))
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def store_fence(typingctx):
    """A full fence (``mfence`` on x86): the streaming stores before it are ordered before any
    later access (they are weakly ordered; the part's end is then a point others may read at)."""
    def codegen(context, builder, sig, args):
        builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.void(), codegen


@nb.njit(cache=True, nogil=True, inline="always")
def prefetch_lines(arr, start, count, line):
    """Prefetch ``arr[start:start + count]`` one cache line (``line`` items) at a time: a hint
    only, it never faults. A while loop: a range() of a step unknown when compiling divides for
    its count (measured 5% of the SDDMM kernel)."""
    j = 0
    while j < count:
        prefetch(arr, np.uint64(start + j))
        j += line


@nb.njit(cache=True, nogil=True, inline="always")
def part_range(t, nparts, n):
    """[lo, hi): part t of nparts contiguous parts of range(n) (the last ones may be empty)."""
    c = (n + nparts - 1) // nparts
    lo = t * c
    hi = lo + c
    # conditional expressions, not min(): Numba compiles its min() for tuples separately
    return (n if lo > n else lo), (n if hi > n else hi)


@nb.njit(cache=True, nogil=True, inline="always")
def chunk_bounds(t, chunk, n):
    """Chunk t's range [t * chunk, t * chunk + chunk) clipped to n. Conditional expressions,
    not min(): Numba compiles min() on integers as a function of its own (a first call pays for it)."""
    lo = t * chunk if t * chunk < n else n
    return lo, (lo + chunk if lo + chunk < n else n)


@nb.njit(cache=True, nogil=True, inline="always")
def lower_bound(a, lo, hi, k):
    """The first i in [lo, hi) with a[i] >= k (hi if none), for a[lo:hi] ascending.

    ``np.searchsorted(a[lo:hi], k) + lo``, as a loop: Numba's searchsorted compiles
    its generic comparisons (complex and float orderings) as functions of their own.
    """
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < k:
            lo = mid + 1
        else:
            hi = mid
    return lo


@nb.njit(cache=True, nogil=True, inline="always")
def row_range(t, nparts, ap, bp):
    """[rlo, rhi): the rows of part t of a merge of two CSR matrices (row pointers ``ap``, ``bp``),
    cut where ``ap[r] + bp[r]`` (the entries before row r) crosses t / nparts of the total, so
    parts hold equal work whatever the row lengths (a row is never split)."""
    nrows = ap.shape[0] - 1
    c = (ap[nrows] + bp[nrows] + nparts - 1) // nparts
    return _row_cut(ap, bp, t * c), (nrows if t + 1 >= nparts else _row_cut(ap, bp, (t + 1) * c))


@nb.njit(cache=True, nogil=True, inline="always")
def _row_cut(ap, bp, w):
    """The first row r with ap[r] + bp[r] >= w (both pointers non-decreasing)."""
    lo = 0
    hi = ap.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if ap[mid] + bp[mid] < w:
            lo = mid + 1
        else:
            hi = mid
    return lo


# below this much work (multiply-adds or entries) a kernel runs as one part on the calling thread
SERIAL_WORK = 1 << 18


def nparts_for(work, nthreads, per_thread=4):
    """Fixed number of parts for ``work`` units (1 below SERIAL_WORK)."""
    if work < SERIAL_WORK or nthreads <= 1:
        return 1
    return per_thread * nthreads
