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

from .parts import chunk_bounds, row_range
from .threads import run_parts
from .union import _PAST


@nb.njit(cache=True, nogil=True)
def _merge_gather_part(t, nparts, a_idx, b_idx, strides, sizes, blo, chunk, a_words, b_words, a_fill, b_fill,
                       out_idx, out_a, out_b):
    """Chunk t merges a[t*chunk:(t+1)*chunk] with b[blo[t]:blo[t+1]] into out[sizes[t]:].

    The merge of union._merge_add_idx_part (its loop written out here too: an inlined helper
    is copied whole into each call site by Numba), writing each side's words or its fill.
    """
    d = a_idx.shape[0]
    n = a_idx.shape[1]
    ka = a_words.shape[1]
    kb = b_words.shape[1]
    i, ie = chunk_bounds(t, chunk, n)
    j = blo[t]
    je = blo[t + 1]
    u = sizes[t]
    key_a = key_b = _PAST
    ta = tb = True
    while True:
        if ta:
            key_a = _PAST
            if i < ie:
                key_a = np.int64(0)
                for x in range(d):
                    key_a += a_idx[x, i] * strides[x]
        if tb:
            key_b = _PAST
            if j < je:
                key_b = np.int64(0)
                for x in range(d):
                    key_b += b_idx[x, j] * strides[x]
        if i >= ie and j >= je:
            break
        ta = key_a <= key_b
        tb = key_b <= key_a
        p = i if ta else j
        for x in range(d):
            out_idx[x, u] = a_idx[x, p] if ta else b_idx[x, p]
        for c in range(ka):
            out_a[u, c] = a_words[i, c] if ta else a_fill[c]
        for c in range(kb):
            out_b[u, c] = b_words[j, c] if tb else b_fill[c]
        i += ta
        j += tb
        u += 1


def merge_gather_write(a_idx, b_idx, strides, sizes, blo, chunk, a_words, b_words, a_fill, b_fill,
                       out_idx, out_a, out_b, nthreads):
    run_parts(_merge_gather_part, sizes.shape[0] - 1, nthreads, a_idx, b_idx, strides, sizes, blo, chunk,
              a_words, b_words, a_fill, b_fill, out_idx, out_a, out_b)


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
