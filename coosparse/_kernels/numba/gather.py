"""Gathers: rows of values, columns of indices, strided elements, rows or zeros.

A gather moves bits and computes nothing, so values of every dtype travel as
unsigned words of their item width (16-byte items as two words): four
specialisations of each kernel serve all dtypes. Each kernel fills one part
(a contiguous range of the output) and runs part by part on the library's
threads (``threads.run_parts``), as one part on the calling thread below
``SERIAL_BELOW`` elements, where waking threads costs more than the copy.
Each output element is written once; no result depends on the schedule.
"""
import numba as nb
import numpy as np

from .parts import part_range
from .threads import plan, run_parts

SERIAL_BELOW = 1 << 20  # elements moved

_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}


def words(values):
    """A C-contiguous 2-D array as unsigned words of its item width (16-byte items: two per item)."""
    if values.dtype.kind == "u" or not values.flags.c_contiguous or values.ndim != 2:
        return values
    return values.view(_WORDS[values.dtype.itemsize])


@nb.njit(cache=True, nogil=True)
def _rows_part(t, nparts, values, rows, out):
    k = values.shape[1]
    lo, hi = part_range(t, nparts, rows.shape[0])
    for i in range(lo, hi):
        r = rows[i]
        for c in range(k):
            out[i, c] = values[r, c]


@nb.njit(cache=True, nogil=True)
def _columns_part(t, nparts, indices, rows, out):
    lo, hi = part_range(t, nparts, rows.shape[0])
    for d in range(indices.shape[0]):
        src = indices[d]
        dst = out[d]
        for i in range(lo, hi):
            dst[i] = src[rows[i]]


@nb.njit(cache=True, nogil=True)
def _strided_part(t, nparts, source, addresses, inner, out):
    k = inner.shape[0]
    lo, hi = part_range(t, nparts, addresses.shape[0])
    for i in range(lo, hi):
        a = addresses[i]
        for c in range(k):
            out[i, c] = source[a + inner[c]]


@nb.njit(cache=True, nogil=True)
def _indexed_part(t, nparts, source, indices, strides, limits, base, inner, out, bad):
    # the address and its bounds check in the pass that gathers: no address array is written
    # and read back (a dense operand read at 2M indices spent about a fifth of its time on it)
    ndim, n = indices.shape
    k = inner.shape[0]
    lo, hi = part_range(t, nparts, n)
    count = 0
    for i in range(lo, hi):
        a = base
        o = np.int64(0)
        for d in range(ndim):
            v = indices[d, i]
            o |= np.int64(np.uint64(v) >= limits[d])
            a += v * strides[d]
        if o:  # never read through a bad index; the row raises once the parts are done
            count += 1
            continue
        for c in range(k):
            out[i, c] = source[a + inner[c]]
    bad[t] = count


@nb.njit(cache=True, nogil=True)
def _or_zero_part(t, nparts, values, rows, out):
    k = values.shape[1]
    lo, hi = part_range(t, nparts, rows.shape[0])
    for i in range(lo, hi):
        r = rows[i]
        if r >= 0:
            for c in range(k):
                out[i, c] = values[r, c]
        else:
            for c in range(k):
                out[i, c] = 0


def _run(kernel, n, k, nthreads, *args):
    nparts, nthreads = plan(n * max(k, 1), nthreads, SERIAL_BELOW)
    run_parts(kernel, nparts, nthreads, *args)


def gather_rows(values, rows, nthreads):
    """values[rows] for 2-D values."""
    w = words(values)
    out = np.empty((rows.shape[0], w.shape[1]), dtype=w.dtype)
    _run(_rows_part, rows.shape[0], w.shape[1], nthreads, w, rows, out)
    return out.view(values.dtype)


def gather_columns(indices, rows, nthreads):
    """indices[:, rows], C-contiguous (d, m)."""
    out = np.empty((indices.shape[0], rows.shape[0]), dtype=np.int64)
    _run(_columns_part, rows.shape[0], indices.shape[0], nthreads, indices, rows, out)
    return out


def gather_strided(source, addresses, inner, nthreads):
    """out[i, c] = source[addresses[i] + inner[c]] (the gather twin of scatter_set)."""
    src = source
    if source.dtype.kind != "u" and source.dtype.itemsize <= 8 and source.strides == (source.dtype.itemsize,):
        src = source.view(_WORDS[source.dtype.itemsize])
    out = np.empty((addresses.shape[0], inner.shape[0]), dtype=src.dtype)
    _run(_strided_part, addresses.shape[0], inner.shape[0], nthreads, src, addresses, inner, out)
    return out.view(source.dtype)


def gather_indexed(source, indices, strides, limits, base, inner, nthreads):
    """(out, number of bad columns): out[i, c] = source[base + sum_d indices[d, i] * strides[d] + inner[c]].

    ``limits`` as in ``linear_index_checked``: a column with an index outside them is counted and
    its output row left unwritten (nothing is read through it).
    """
    src = source
    if source.dtype.kind != "u" and source.dtype.itemsize <= 8 and source.strides == (source.dtype.itemsize,):
        src = source.view(_WORDS[source.dtype.itemsize])
    n = indices.shape[1]
    out = np.empty((n, inner.shape[0]), dtype=src.dtype)
    nparts, nthreads = plan(n * max(inner.shape[0], 1), nthreads, SERIAL_BELOW)
    bad = np.zeros(nparts, dtype=np.int64)
    run_parts(_indexed_part, nparts, nthreads, src, indices, strides, limits, np.int64(base), inner, out, bad)
    return out.view(source.dtype), int(bad.sum())


def gather_or_zero(values, rows, nthreads):
    """values[rows[i]], or zeros where rows[i] < 0 (2-D values; zero bits are every dtype's zero)."""
    w = words(values)
    out = np.empty((rows.shape[0], w.shape[1]), dtype=w.dtype)
    _run(_or_zero_part, rows.shape[0], w.shape[1], nthreads, w, rows, out)
    return out.view(values.dtype)
