"""Linear index ("hash") kernels: row-major key of each index column and its inverse.

Each kernel fills one part (a contiguous range of columns) and runs part by
part on the library's threads (``threads.run_parts``); the functions without
a leading underscore allocate the output and drive the parts.
"""
import numba as nb
import numpy as np

from .parts import part_range
from .threads import plan, run_parts


@nb.njit(cache=True, nogil=True)
def _linear_index_part(t, nparts, indices, strides, keys):
    ndim, n = indices.shape
    lo, hi = part_range(t, nparts, n)
    for i in range(lo, hi):
        h = np.int64(0)
        for d in range(ndim):
            h += indices[d, i] * strides[d]
        keys[i] = h


@nb.njit(cache=True, nogil=True)
def _unravel_part(t, nparts, keys, strides, out):
    ndim = strides.shape[0]
    lo, hi = part_range(t, nparts, keys.shape[0])
    for i in range(lo, hi):
        r = keys[i]
        for d in range(ndim):
            s = strides[d]
            q = r // s
            out[d, i] = q
            r -= q * s


@nb.njit(cache=True, nogil=True)
def _linear_index_checked_part(t, nparts, indices, strides, limits, keys, bad):
    ndim, n = indices.shape
    lo, hi = part_range(t, nparts, n)
    count = 0
    # unsigned positions: a signed one is tested for wraparound at every access, and LLVM
    # vectorised the loop with scatter instructions for the keys on that account (slow on
    # AVX-512 machines)
    for i in range(lo, hi):
        h = np.int64(0)
        o = np.int64(0)
        for d in range(ndim):
            v = indices[d, np.uint64(i)]
            o |= np.int64(np.uint64(v) >= limits[d])  # no branch: the loop stays as fast as the unchecked one
            h += v * strides[d]
        keys[np.uint64(i)] = h
        count += o
    bad[t] = count


def linear_index(indices, strides, nthreads):
    """keys[i] = sum_d indices[d, i] * strides[d]  (caller guarantees no int64 overflow)."""
    keys = np.empty(indices.shape[1], dtype=np.int64)
    nparts, nthreads = plan(indices.shape[1], nthreads)
    run_parts(_linear_index_part, nparts, nthreads, indices, strides, keys)
    return keys


def unravel_index(keys, strides, nthreads):
    """Inverse of linear_index: (ndim, n) row-major indices of each key."""
    out = np.empty((strides.shape[0], keys.shape[0]), dtype=np.int64)
    nparts, nthreads = plan(keys.shape[0], nthreads)
    run_parts(_unravel_part, nparts, nthreads, keys, strides, out)
    return out


def linear_index_checked(indices, strides, limits, nthreads):
    """:func:`linear_index` that also counts indices outside the shape, in the same pass.

    ``limits[d]`` is ``min(size_d, 2**63)`` as uint64 (``coosparse/_kernels/bounds.py``):
    ``uint64(index) >= limit`` is "negative or too large". Returns
    ``(keys, number of bad indices)``; keys of bad entries are meaningless.
    """
    keys = np.empty(indices.shape[1], dtype=np.int64)
    nparts, nthreads = plan(indices.shape[1], nthreads)
    bad = np.zeros(nparts, dtype=np.int64)
    run_parts(_linear_index_checked_part, nparts, nthreads, indices, strides, limits, keys, bad)
    return keys, int(bad.sum())
