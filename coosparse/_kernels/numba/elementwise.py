"""Kernels of the elementwise engine (coosparse/ops/elementwise/engine.py).

``merge_gather_write``: the sorted union of two coalesced operands over their
index columns (keys computed on the fly, as ``merge_add``), writing the union's
index columns and, per entry, each operand's value or its fill. Values travel
as unsigned words of one size (a bit copy), so four specialisations serve
every dtype. The chunking is ``merge_add``'s: ``union.union_offsets_idx``
gives each chunk of ``a`` its range of ``b`` and its output offset; chunks
are parts of ``threads.run_parts``.
"""
import numba as nb
import numpy as np

from .intersect import _key
from .parts import chunk_bounds, row_range
from .threads import run_parts
from .union import _union_size_idx


# the take_a/take_b choice repeats union._merge_add_idx_chunk's; the two loops differ in
# what they write (a sum there, two gathered rows with fills here)
@nb.njit(cache=True, nogil=True, inline="always")
def _merge_gather_chunk(a_idx, i, ie, b_idx, j, je, strides, a_words, b_words, a_fill, b_fill,
                        out_idx, out_a, out_b, u):
    d = a_idx.shape[0]
    ka = a_words.shape[1]
    kb = b_words.shape[1]
    key_a = _key(a_idx, strides, i) if i < ie else 0
    key_b = _key(b_idx, strides, j) if j < je else 0
    while i < ie or j < je:
        if j >= je:
            take_a = True
            take_b = False
        elif i >= ie:
            take_a = False
            take_b = True
        else:
            take_a = key_a <= key_b
            take_b = key_b <= key_a
        if take_a:
            for x in range(d):
                out_idx[x, u] = a_idx[x, i]
            for c in range(ka):
                out_a[u, c] = a_words[i, c]
        else:
            for x in range(d):
                out_idx[x, u] = b_idx[x, j]
            for c in range(ka):
                out_a[u, c] = a_fill[c]
        if take_b:
            for c in range(kb):
                out_b[u, c] = b_words[j, c]
        else:
            for c in range(kb):
                out_b[u, c] = b_fill[c]
        if take_a:
            i += 1
            if i < ie:
                key_a = _key(a_idx, strides, i)
        if take_b:
            j += 1
            if j < je:
                key_b = _key(b_idx, strides, j)
        u += 1


@nb.njit(cache=True, nogil=True)
def _merge_gather_part(t, nparts, a_idx, b_idx, strides, sizes, blo, chunk, a_words, b_words, a_fill, b_fill,
                       out_idx, out_a, out_b):
    """Chunk t merges a[t*chunk:(t+1)*chunk] with b[blo[t]:blo[t+1]] into out[sizes[t]:]."""
    n = a_idx.shape[1]
    i, hi = chunk_bounds(t, chunk, n)
    _merge_gather_chunk(a_idx, i, hi, b_idx, blo[t], blo[t + 1], strides,
                        a_words, b_words, a_fill, b_fill, out_idx, out_a, out_b, sizes[t])


def merge_gather_write(a_idx, b_idx, strides, sizes, blo, chunk, a_words, b_words, a_fill, b_fill,
                       out_idx, out_a, out_b, nthreads):
    run_parts(_merge_gather_part, sizes.shape[0] - 1, nthreads, a_idx, b_idx, strides, sizes, blo, chunk,
              a_words, b_words, a_fill, b_fill, out_idx, out_a, out_b)


@nb.njit(cache=True, nogil=True)
def merge_gather_serial(a_idx, b_idx, strides, limits, flags, a_words, b_words, a_fill, b_fill):
    """The same on one thread: small inputs skip the thread pool's wake-up (milliseconds under load).

    Indices outside ``limits`` and keys out of order are counted in ``flags[0]`` as in
    the parallel pass; the caller raises on them before reading the output.
    """
    na = a_idx.shape[1]
    nb_ = b_idx.shape[1]
    m = _union_size_idx(a_idx, 0, na, b_idx, 0, nb_, strides, limits, flags[0])
    out_idx = np.empty((a_idx.shape[0], m), dtype=np.int64)
    out_a = np.empty((m, a_words.shape[1]), dtype=a_words.dtype)
    out_b = np.empty((m, b_words.shape[1]), dtype=b_words.dtype)
    if flags[0, 0] == 0 and flags[0, 1] == 0:  # a bad index must not be read past
        _merge_gather_chunk(a_idx, 0, na, b_idx, 0, nb_, strides, a_words, b_words, a_fill, b_fill,
                            out_idx, out_a, out_b, 0)
    return out_idx, out_a, out_b


_PAST = np.int64(2**63 - 1)  # above every column (columns are below a size <= 2**63 - 1)


# the per-row union of rowmerge._row_add_part (two CSR matrices through their row pointers, only
# the columns read), writing each side's words or its fill instead of a sum; unsigned indices and
# 1-D views of one-word values, as there (a wrap-around of signed indices and an inner loop per
# step cost about as much as the rest of the step)
@nb.njit(cache=True, nogil=True)
def _row_gather_part(t, nparts, ap, bp, acol, bcol, sizes, a_words, b_words, a_fill, b_fill, out_idx, out_a,
                     out_b):
    rlo, rhi = row_range(t, nparts, ap, bp)
    u = np.uint64(sizes[t])
    one = np.uint64(1)
    ka = a_words.shape[1]
    kb = b_words.shape[1]
    aw, bw, oa, ob = a_words[:, 0], b_words[:, 0], out_a[:, 0], out_b[:, 0]
    rows, cols = out_idx[0], out_idx[1]
    for r in range(rlo, rhi):
        i, ie, j, je = np.uint64(ap[r]), np.uint64(ap[r + 1]), np.uint64(bp[r]), np.uint64(bp[r + 1])
        row = np.int64(r)
        while i < ie or j < je:
            # past a side's end its column reads as larger than any (branch-free inside the row)
            ca = acol[i] if i < ie else _PAST
            cb = bcol[j] if j < je else _PAST
            ta = ca <= cb
            tb = cb <= ca
            rows[u] = row
            cols[u] = ca if ta else cb
            if ka == 1:
                oa[u] = aw[i] if ta else a_fill[0]
            else:
                for c in range(ka):
                    out_a[u, c] = a_words[i, c] if ta else a_fill[c]
            if kb == 1:
                ob[u] = bw[j] if tb else b_fill[0]
            else:
                for c in range(kb):
                    out_b[u, c] = b_words[j, c] if tb else b_fill[c]
            i += np.uint64(ta)
            j += np.uint64(tb)
            u += one


def row_gather_write(a_idx, b_idx, ap, bp, sizes, a_words, b_words, a_fill, b_fill, out_idx, out_a, out_b,
                     nthreads):
    run_parts(_row_gather_part, sizes.shape[0] - 1, nthreads, ap, bp, a_idx[1], b_idx[1], sizes, a_words, b_words,
              a_fill, b_fill, out_idx, out_a, out_b)
