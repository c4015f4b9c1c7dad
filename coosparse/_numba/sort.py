"""Stable LSD radix sort of int64 keys (0 <= key < bound), returning the permutation.

Digit passes the key range does not need are never run, and a pass whose
digit is the same for every key is skipped after its histogram. Each pass is
parallel over contiguous chunks (one per thread): per-chunk histograms, then
each chunk scatters into its own slots, which keeps the sort stable.
"""
import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def _digit_plan(bound, n):
    """(digit_bits, passes) for keys below ``bound``."""
    bits = 0
    b = bound - 1
    while b > 0:
        bits += 1
        b >>= 1
    if bits == 0:
        return 1, 0
    # 11-bit digits keep the histogram in L1 and the scatter fan-out TLB-friendly;
    # small inputs prefer fewer buckets.
    max_bits = 11 if n > (1 << 16) else 8
    passes = (bits + max_bits - 1) // max_bits
    digit = (bits + passes - 1) // passes
    return digit, passes


@nb.njit(cache=True, parallel=True, nogil=True)
def _histograms(keys, shift, mask, nchunks):
    n = keys.shape[0]
    nb_ = mask + 1
    hist = np.zeros((nchunks, nb_), dtype=np.int64)
    chunk = (n + nchunks - 1) // nchunks
    for t in nb.prange(nchunks):
        lo = t * chunk
        hi = min(n, lo + chunk)
        h = hist[t]
        for i in range(lo, hi):
            h[(keys[i] >> shift) & mask] += 1
    return hist


@nb.njit(cache=True, parallel=True, nogil=True)
def _scatter(src_keys, src_perm, dst_keys, dst_perm, offsets, shift, mask, identity):
    n = src_keys.shape[0]
    nchunks = offsets.shape[0]
    chunk = (n + nchunks - 1) // nchunks
    for t in nb.prange(nchunks):
        lo = t * chunk
        hi = min(n, lo + chunk)
        off = offsets[t]
        for i in range(lo, hi):
            k = src_keys[i]
            dgt = (k >> shift) & mask
            j = off[dgt]
            off[dgt] = j + 1
            dst_keys[j] = k
            if identity:
                dst_perm[j] = i
            else:
                dst_perm[j] = src_perm[i]


@nb.njit(cache=True, nogil=True)
def sort_pairs(keys, bound, nchunks):
    """Return (sorted_keys, perm) with sorted_keys = keys[perm], perm stable."""
    n = keys.shape[0]
    digit, passes = _digit_plan(bound, n)
    mask = (np.int64(1) << digit) - 1
    cur_keys = keys
    cur_perm = np.empty(0, dtype=np.int64)
    buf_keys = np.empty(n, dtype=np.int64)
    buf_perm = np.empty(n, dtype=np.int64)
    alt_keys = np.empty(0, dtype=np.int64)
    alt_perm = np.empty(0, dtype=np.int64)
    identity = True
    for p in range(passes):
        shift = p * digit
        hist = _histograms(cur_keys, shift, mask, nchunks)
        total = hist.sum(axis=0)
        if total.max() == n:  # every key has the same digit: nothing moves
            continue
        offsets = np.empty_like(hist)
        run = 0
        for b in range(mask + 1):
            for t in range(nchunks):
                offsets[t, b] = run
                run += hist[t, b]
        _scatter(cur_keys, cur_perm, buf_keys, buf_perm, offsets, shift, mask, identity)
        if identity:
            # second buffer pair is needed only once something moved
            alt_keys = np.empty(n, dtype=np.int64)
            alt_perm = np.empty(n, dtype=np.int64)
            cur_keys, cur_perm = buf_keys, buf_perm
            buf_keys, buf_perm = alt_keys, alt_perm
            identity = False
        else:
            cur_keys, buf_keys = buf_keys, cur_keys
            cur_perm, buf_perm = buf_perm, cur_perm
    if identity:
        return keys.copy(), np.arange(n, dtype=np.int64)
    return cur_keys, cur_perm
