"""Indexing kernels: gather by mask, binary-search row ranges, expansion of ranges.

The passes of ``a[key]`` (``coosparse/_indexing.py``) that are not plain
array arithmetic:

- ``mask_positions``: the ascending positions of the True entries of a mask
  (which stored entries a basic key keeps). Fixed chunks: a count pass, an
  exclusive scan of the per-chunk counts, a write pass.
- ``search_ranges``: for query ranges ``[lo, hi)`` of key values, the range of
  positions they occupy in a sorted key array (a sorted array's rows, for
  ``a[rows]``). Random binary searches into megabytes of keys miss the cache
  on most steps (10k queries into 2M keys: ~10 ms), so the queries are
  visited in sorted order and each search gallops from where the previous one
  ended: the keys are then read almost sequentially (measured ~0.3 ms).
- ``expand_ranges``: ``(start, count)`` pairs to the concatenated positions
  ``start[i] .. start[i] + count[i] - 1`` and their owner ``i``. The output is
  split in equal parts, each finding its first owner by binary search in the
  offsets, so one huge range does not serialise the work.

Every output element is written by one thread; no result depends on the
schedule.
"""
import numba as nb
import numpy as np


@nb.njit(cache=True, parallel=True, nogil=True)
def mask_positions(mask, nchunks):
    """Ascending positions i with mask[i] True: int64[m].

    Branch-free loops (a random mask defeats branch prediction: 4x slower).
    """
    n = mask.shape[0]
    chunk = (n + nchunks - 1) // nchunks if n else 1
    counts = np.zeros(nchunks + 1, dtype=np.int64)
    for t in nb.prange(nchunks):
        c = 0
        for i in range(t * chunk, min(n, (t + 1) * chunk)):
            c += np.int64(mask[i])
        counts[t + 1] = c
    for t in range(nchunks):
        counts[t + 1] += counts[t]
    out = np.empty(counts[nchunks], dtype=np.int64)
    for t in nb.prange(nchunks):
        lo = t * chunk
        last = min(n, lo + chunk) - 1
        while last >= lo and not mask[last]:  # stop at the chunk's last True: the writes
            last -= 1                         # below never reach the next chunk's slots
        j = counts[t]
        for i in range(lo, last + 1):
            out[j] = i
            j += np.int64(mask[i])
    return out


@nb.njit(cache=True, nogil=True, inline="always")
def _gallop_lower_bound(keys, pos, n, k):
    """First position p >= pos with keys[p] >= k (keys sorted), searching outward from pos."""
    if pos >= n or keys[pos] >= k:
        # the answer lies at or before pos: gallop backwards
        hi = pos
        step = 1
        lo = pos - step
        while lo > 0 and keys[lo] >= k:
            hi = lo
            step <<= 1
            lo = pos - step
        if lo < 0:
            lo = 0
    else:
        lo = pos + 1
        step = 1
        hi = pos + step
        while hi < n and keys[hi] < k:
            lo = hi + 1
            step <<= 1
            hi = pos + step
        if hi > n:
            hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < k:
            lo = mid + 1
        else:
            hi = mid
    return lo


@nb.njit(cache=True, parallel=True, nogil=True)
def search_ranges(sorted_keys, lo, hi, order, nchunks, start, stop):
    """start[i] = lower_bound(lo[i]), stop[i] = max(start[i], lower_bound(hi[i])).

    ``order`` visits the queries by increasing ``lo``. Each search starts at
    a guess (the previous answer plus the key distance times the average
    density of the keys) and gallops from there, so it touches a few cache
    lines near the answer; ``stop`` is found by a short linear scan first
    (ranges are usually rows of a few entries).
    """
    n = sorted_keys.shape[0]
    m = lo.shape[0]
    chunk = (m + nchunks - 1) // nchunks if m else 1
    if n == 0:
        for q in range(m):
            start[q] = 0
            stop[q] = 0
        return start, stop
    k0 = sorted_keys[0]
    density = n / (float(sorted_keys[n - 1] - k0) + 1.0)
    for t in nb.prange(nchunks):
        pos = 0
        prev = k0
        for j in range(t * chunk, min(m, (t + 1) * chunk)):
            q = order[j]
            k = lo[q]
            step = (float(k) - float(prev)) * density
            if step < 0.0:
                step = 0.0
            if step > n:
                step = float(n)
            guess = min(pos + np.int64(step), n - 1)
            pos = _gallop_lower_bound(sorted_keys, guess, n, k)
            prev = k
            e = pos
            kk = hi[q]
            if kk > k:
                c = 0
                while e < n and c < 16 and sorted_keys[e] < kk:
                    e += 1
                    c += 1
                if c == 16:
                    e = _gallop_lower_bound(sorted_keys, e, n, kk)
            start[q] = pos
            stop[q] = e
    return start, stop


@nb.njit(cache=True, parallel=True, nogil=True)
def expand_ranges(start, ends, total, nchunks, rows, owner):
    """rows/owner of the concatenated ranges; ``ends`` is the inclusive scan of the counts."""
    m = start.shape[0]
    chunk = (total + nchunks - 1) // nchunks if total else 1
    for t in nb.prange(nchunks):
        p0 = t * chunk
        p1 = min(total, p0 + chunk)
        if p0 >= p1:
            continue
        # owner of p0: first i with ends[i] > p0
        a = 0
        b = m
        while a < b:
            mid = (a + b) >> 1
            if ends[mid] <= p0:
                a = mid + 1
            else:
                b = mid
        i = a
        p = p0
        while p < p1:
            begin = ends[i - 1] if i > 0 else 0
            stop = min(ends[i], p1)
            base = start[i] - begin
            for q in range(p, stop):
                rows[q] = base + q
                owner[q] = i
            p = stop
            i += 1
    return rows, owner
