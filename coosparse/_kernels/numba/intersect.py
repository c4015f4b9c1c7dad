"""Matching a source's keys against a sorted probe, and gathering what matched.

The matching primitive (SPEC 4) answers, for every source entry ``i``, where
its key first occurs in the sorted probe (``first[i]``) and how often
(``count[i]``). Two ways to get there:

- ``match_merge``: the source is sorted too. Each thread takes a contiguous
  chunk of the source, finds its start in the probe by one binary search and
  walks both arrays forward.
- ``match_search``: the source is in any order. Random binary searches into
  a probe of megabytes miss the cache on almost every step (2M searches into
  2M keys: ~1 s). For large probes the source is instead *partitioned* by the
  high bits of its keys (one radix-scatter pass of packed (low key bits,
  position) words), so that the probe range belonging to one partition is a
  few KiB; each partition's range is indexed by a small table on the next
  bits and searched through it, and the answers are written back to the
  source's original positions. The source's layout is never changed.
  Measured on 2M x 2M uniform keys (2 threads): binary search 0.25-0.97 s,
  a lookup table on the probe's high bits 0.12-0.28 s, partitioning 0.05-0.07 s
  (then ~128 keys per partition and binary searches inside; the table search
  inside ~1024-key partitions halved it again).
- ``multiply_search``: ``match_search`` with the source values carried through
  the partition, so the product is written straight to the source position:
  one random stream (the write-back) instead of two (first/count written back,
  then a random gather of the probe values by ``first``).

Large outputs are allocated by NumPy (in the wrappers) and passed in: NumPy
asks the kernel for transparent huge pages, Numba's allocator does not, and
the page faults of a freshly allocated 50 MB array cost several times the
kernel itself (measured: 70-80 ms vs 12 ms to allocate and fill 72 MB).

Everything here is deterministic: each output element is written by exactly
one thread, and probe duplicates are summed sequentially in probe order.
"Parallel" means part by part on the library's threads (``threads.run_parts``):
each ``_..._part`` kernel handles one chunk (or one range of partitions), and
the functions without a leading underscore drive them from Python. Chunk
loops used by one part kernel are inlined into it.
"""
import numba as nb
import numpy as np

from ..bounds import lying_flag_error, row_major_sizes, size_limits
from .parts import lower_bound as _lower_bound
from .parts import part_range
from .rowmerge import raise_merge_flags
from .rowmerge import row_mask_values, row_multiply  # noqa: F401 (rows of this family: the layer calls them here)
from .sort import bucket_offsets, split_buckets
from .threads import plan, run_parts

# below this many probe keys (256 KiB) the probe sits in L2: plain binary search
_SEARCH_IN_CACHE = 1 << 15
# partitions are sized so that one partition's probe range holds ~1024 keys (8 KiB): few
# enough partitions for the scatter to stream, each range indexed by a table in L1
_KEYS_PER_PARTITION = 1024
_MAX_PARTITION_BITS = 12


@nb.njit(cache=True, nogil=True)
def _match_merge_part(t, nparts, src_keys, probe_keys, first, count):
    m = probe_keys.shape[0]
    lo, hi = part_range(t, nparts, src_keys.shape[0])
    if lo >= hi:
        return
    j = _lower_bound(probe_keys, 0, m, src_keys[lo])
    prev = src_keys[lo] - 1
    f = 0
    c = 0
    for i in range(lo, hi):
        k = src_keys[i]
        if k != prev:
            while j < m and probe_keys[j] < k:
                j += 1
            e = j
            while e < m and probe_keys[e] == k:
                e += 1
            f = j
            c = e - j
            prev = k
        first[i] = f
        count[i] = c


def match_merge(src_keys, probe_keys, nthreads, first, count):
    """(first, count) for a sorted source against a sorted probe (linear merge per chunk)."""
    nparts, nthreads = plan(src_keys.shape[0], nthreads)
    run_parts(_match_merge_part, nparts, nthreads, src_keys, probe_keys, first, count)
    return first, count


@nb.njit(cache=True, nogil=True)
def _binary_search_part(t, nparts, src_keys, probe_keys, first, count):
    m = probe_keys.shape[0]
    lo, hi = part_range(t, nparts, src_keys.shape[0])
    for i in range(lo, hi):
        k = src_keys[i]
        f = _lower_bound(probe_keys, 0, m, k)
        e = f
        while e < m and probe_keys[e] == k:
            e += 1
        first[i] = f
        count[i] = e - f


def _binary_search_all(src_keys, probe_keys, first, count, nthreads):
    nparts, nthreads = plan(src_keys.shape[0], nthreads)
    run_parts(_binary_search_part, nparts, nthreads, src_keys, probe_keys, first, count)
    return first, count


# ---- partitioned search ------------------------------------------------------------
# The source is scattered by the high bits of (key - lowest probe key) into P
# partitions, plus one below the probe's range (bucket 0) and one above it
# (bucket P + 1). Each entry travels as one int64 word, (low key bits) << ib | position,
# so the scatter writes one stream (two with the values of a fused multiply). Each
# partition's probe range is then indexed by a small table on the next bits (about one
# probe key per slot, in L1): a search is a table read and a step or two instead of a
# binary search of mispredicted branches. The answers go back to the source positions.
def partition_geometry(probe_keys, pbits, ib):
    """(lo_key, span, shift, P) of the partitions; P = 0 when a word cannot hold (low bits, position)."""
    lo_key = int(probe_keys[0])
    span = int(probe_keys[-1]) - lo_key  # >= 0 (the caller checked the probe's ends)
    shift = max(span.bit_length() - pbits, 0)
    if shift + ib > 63:
        return lo_key, span, shift, 0
    return lo_key, span, shift, (span >> shift) + 1


@nb.njit(cache=True, nogil=True, inline="always")
def _bucket(d, span, shift, P):
    """Bucket of key offset d: 0 below the probe, 1..P inside, P + 1 above."""
    if d < 0:
        return np.int64(0)
    if d > span:
        return P + 1
    return (d >> shift) + 1


@nb.njit(cache=True, nogil=True)
def _partition_hist_part(t, nparts, src_keys, lo_key, span, shift, P, hist):
    lo, hi = part_range(t, nparts, src_keys.shape[0])
    h = hist[t]
    for i in range(lo, hi):
        h[_bucket(src_keys[i] - lo_key, span, shift, P)] += 1


@nb.njit(cache=True, nogil=True)
def _partition_scatter_part(t, nparts, src_keys, lo_key, span, shift, P, ib, offsets, words, src_values,
                            part_values):
    """words[j] = (low key bits) << ib | i, chunk by chunk (stable); part_values[j] = src_values[i] (k may be 0)."""
    lo, hi = part_range(t, nparts, src_keys.shape[0])
    low = (np.int64(1) << shift) - 1
    kc = part_values.shape[1]
    off = offsets[t]
    for i in range(lo, hi):
        d = src_keys[i] - lo_key
        b = _bucket(d, span, shift, P)
        j = off[b]
        off[b] = j + 1
        words[j] = ((d & low) << ib) | i
        for c in range(kc):
            part_values[j, c] = src_values[i, c]


@nb.njit(cache=True, nogil=True)
def _probe_bounds_part(t, nparts, probe_keys, lo_key, shift, pbound):
    """pbound[b] for the buckets b of part t of 1..P: the first probe position of bucket b."""
    m = probe_keys.shape[0]
    lo, hi = part_range(t, nparts, pbound.shape[0] - 3)
    for b in range(lo + 1, hi + 1):
        pbound[b] = _lower_bound(probe_keys, 0, m, lo_key + (np.int64(b - 1) << shift))


def _probe_bounds(probe_keys, lo_key, shift, P, nthreads):
    """pbound[b]: first probe position of bucket b (buckets 0 and P + 1 are empty, at 0 and m)."""
    m = probe_keys.shape[0]
    pbound = np.empty(P + 3, dtype=np.int64)
    pbound[0] = 0
    pbound[P + 1] = m
    pbound[P + 2] = m
    nparts, nthreads = plan(P, nthreads, serial_below=256)
    run_parts(_probe_bounds_part, nparts, nthreads, probe_keys, lo_key, shift, pbound)
    return pbound


_TABLE_BITS = 12  # at most 4097 table slots per partition (32 KiB per thread)


@nb.njit(cache=True, nogil=True, inline="always")
def _fill_table(probe_keys, plo, phi, base, shift, table):
    """table[s] = first position p in [plo, phi] with (probe_keys[p] - base) >> ss >= s; returns ss."""
    c = phi - plo
    sb = 0
    while (c >> sb) > 0 and sb < _TABLE_BITS:
        sb += 1
    ss = max(shift - sb, 0)
    nsub = (((np.int64(1) << shift) - 1) >> ss) + 1
    p = plo
    for s in range(nsub + 1):
        while p < phi and ((probe_keys[p] - base) >> ss) < s:
            p += 1
        table[s] = p
    return ss


@nb.njit(cache=True, nogil=True, inline="always")
def _find(probe_keys, table, ss, phi, base, dl):
    """(first, end) of the probe run equal to key base + dl inside its partition."""
    k = base + dl
    s = dl >> ss
    f = _lower_bound(probe_keys, table[s], table[s + 1], k)
    e = f
    while e < phi and probe_keys[e] == k:
        e += 1
    return f, e


@nb.njit(cache=True, nogil=True)
def _partition_search_part(t, nparts, probe_keys, lo_key, shift, ib, pbound, pstart, thread_parts, words, fused,
                           first, count, probe_values, perm, has_perm, part_values, out):
    """Search the partitions of part t in their probe range, writing back to the source positions:
    first/count, or with ``fused`` out[i] = part_values[q] * ordered probe sum (0 unmatched)."""
    P = pbound.shape[0] - 3
    pmask = (np.int64(1) << ib) - 1
    kc = out.shape[1]
    table = np.empty((1 << _TABLE_BITS) + 2, dtype=np.int64)
    for b in range(thread_parts[t], thread_parts[t + 1]):
        outside = b == 0 or b == P + 1  # below or above the probe's range: no match
        base = lo_key + (np.int64(b - 1) << shift)
        ss = 0 if outside else _fill_table(probe_keys, pbound[b], pbound[b + 1], base, shift, table)
        for q in range(pstart[b], pstart[b + 1]):
            w = words[q]
            i = w & pmask
            f = e = pbound[b]
            if not outside:
                f, e = _find(probe_keys, table, ss, pbound[b + 1], base, w >> ib)
            if not fused:
                first[i] = f
                count[i] = e - f
                continue
            for c in range(kc):
                if e == f:
                    out[i, c] = 0
                else:
                    out[i, c] = part_values[q, c] * _ordered_sum(probe_values, perm, has_perm, f, e - f, c)


def _partition(src_keys, probe_keys, nthreads, src_values=None):
    """Partition the source (see above): (geometry, words, part_values, pbound, pstart, thread_parts,
    nthreads), or None.

    Without ``src_values``, part_values is an empty int64 (0, 0) array.

    None: the probe fits in cache, the source is small, or a word cannot hold
    (low key bits, position): the caller searches directly.
    """
    n = src_keys.shape[0]
    m = probe_keys.shape[0]
    if m <= _SEARCH_IN_CACHE or n < 4096:
        return None
    ib = (n - 1).bit_length()
    pbits = min(_MAX_PARTITION_BITS, max(1, (m // _KEYS_PER_PARTITION).bit_length()))
    lo_key, span, shift, P = partition_geometry(probe_keys, pbits, ib)
    if P == 0:
        return None
    nparts, nthreads = plan(n, nthreads, per_thread=1)
    hist = np.zeros((nparts, P + 2), dtype=np.int64)
    run_parts(_partition_hist_part, nparts, nthreads, src_keys, lo_key, span, shift, P, hist)
    offsets, pstart = bucket_offsets(hist)
    words = np.empty(n, dtype=np.int64)
    if src_values is None:
        src_values = part_values = np.empty((0, 0), dtype=np.int64)
    else:
        part_values = np.empty(src_values.shape, dtype=src_values.dtype)
    run_parts(_partition_scatter_part, nparts, nthreads, src_keys, lo_key, span, shift, P, ib, offsets, words,
              src_values, part_values)
    pbound = _probe_bounds(probe_keys, lo_key, shift, P, nthreads)
    return (lo_key, shift, ib), words, part_values, pbound, pstart, split_buckets(pstart, nparts), nthreads


def match_search(src_keys, probe_keys, nthreads):
    """(first, count) for a source in any order against a sorted probe."""
    n = src_keys.shape[0]
    m = probe_keys.shape[0]
    if m == 0 or n == 0:
        return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    count = np.empty(n, dtype=np.int64)
    parts = _partition(src_keys, probe_keys, nthreads)
    if parts is None:
        return _binary_search_all(src_keys, probe_keys, first, count, nthreads)
    (lo_key, shift, ib), words, none, pbound, pstart, thread_parts, nthreads = parts
    run_parts(_partition_search_part, thread_parts.shape[0] - 1, nthreads, probe_keys, lo_key, shift, ib, pbound,
              pstart, thread_parts, words, False, first, count, none, src_keys[:0], False, none, none)
    return first, count


def multiply_search(src_keys, src_values, probe_keys, probe_values, perm, nthreads):
    """match_search and multiply_matched in one: the source values travel through the partition.

    Returns out[n, k]: src_values[i] * (ordered sum of the matched probe rows),
    0 where nothing matches. Each answer is written to its source position once
    (one random stream) instead of first/count there and a random gather of the
    probe values afterwards.
    """
    n, k = src_values.shape
    out = np.empty((n, k), dtype=src_values.dtype)
    m = probe_keys.shape[0]
    empty = src_keys[:0]
    has_perm = perm is not None
    perm = empty if perm is None else perm
    if m == 0 or n == 0:
        out[...] = 0
        return out
    parts = _partition(src_keys, probe_keys, nthreads, src_values)
    if parts is None:
        first, count = _binary_search_all(src_keys, probe_keys, np.empty(n, np.int64), np.empty(n, np.int64),
                                          nthreads)
        return multiply_matched(src_values, empty, False, probe_values, perm, has_perm, first, count, out, nthreads)
    (lo_key, shift, ib), words, part_values, pbound, pstart, thread_parts, nthreads = parts
    run_parts(_partition_search_part, thread_parts.shape[0] - 1, nthreads, probe_keys, lo_key, shift, ib, pbound,
              pstart, thread_parts, words, True, empty, empty, probe_values, perm, has_perm, part_values, out)
    return out


@nb.njit(cache=True, nogil=True)
def _nonzero_part(t, nparts, count, per):
    lo, hi = part_range(t, nparts, count.shape[0])
    c = 0
    for i in range(lo, hi):
        if count[i] != 0:
            c += 1
    per[t + 1] = c


@nb.njit(cache=True, nogil=True)
def _compact_part(t, nparts, first, count, per, rows, f_out, c_out):
    lo, hi = part_range(t, nparts, count.shape[0])
    j = per[t]
    for i in range(lo, hi):
        if count[i] != 0:
            rows[j] = i
            f_out[j] = first[i]
            c_out[j] = count[i]
            j += 1


def compact_matches(first, count, nthreads):
    """(rows, first[rows], count[rows]) for the ascending rows with count != 0."""
    nparts, nthreads = plan(count.shape[0], nthreads)
    per = np.zeros(nparts + 1, dtype=np.int64)
    run_parts(_nonzero_part, nparts, nthreads, count, per)
    np.cumsum(per, out=per)
    total = int(per[-1])
    rows, f_out, c_out = (np.empty(total, dtype=np.int64) for _ in range(3))
    run_parts(_compact_part, nparts, nthreads, first, count, per, rows, f_out, c_out)
    return rows, f_out, c_out


@nb.njit(cache=True, nogil=True, inline="always")
def _ordered_sum(values, perm, has_perm, f, c, col):
    """values[p(f), col] + ... + values[p(f + c - 1), col] in that order, p = perm or identity (c >= 1)."""
    src = f
    if has_perm:
        src = perm[f]
    acc = values[src, col]
    for j in range(f + 1, f + c):
        src = j
        if has_perm:
            src = perm[j]
        acc += values[src, col]
    return acc


@nb.njit(cache=True, nogil=True)
def _probe_sum_part(t, nparts, values, perm, has_perm, first, count, out):
    k = values.shape[1]
    lo, hi = part_range(t, nparts, first.shape[0])
    for i in range(lo, hi):
        f = first[i]
        c = count[i]
        for col in range(k):
            if c == 0:
                out[i, col] = 0
            else:
                out[i, col] = _ordered_sum(values, perm, has_perm, f, c, col)


def probe_sum(values, perm, has_perm, first, count, out, nthreads):
    """out[i] = sum over j in [first[i], first[i] + count[i]) of values[perm[j]].

    Sequential in probe order; zero rows where count is 0. ``values`` is 2-D
    in its accumulation dtype.
    """
    nparts, nthreads = plan(first.shape[0], nthreads)
    run_parts(_probe_sum_part, nparts, nthreads, values, perm, has_perm, first, count, out)
    return out


@nb.njit(cache=True, nogil=True)
def _merge_match_part(t, nparts, src_keys, probe_keys, rows_tmp, first_tmp, per):
    """Matches of chunk t, written from the chunk's start on; per[t + 1] = how many."""
    m = probe_keys.shape[0]
    lo, hi = part_range(t, nparts, src_keys.shape[0])
    if lo >= hi:
        return
    j = _lower_bound(probe_keys, 0, m, src_keys[lo])
    u = lo
    for i in range(lo, hi):
        k = src_keys[i]
        while j < m and probe_keys[j] < k:
            j += 1
        if j < m and probe_keys[j] == k:
            rows_tmp[u] = i
            first_tmp[u] = j
            u += 1
    per[t + 1] = u - lo


@nb.njit(cache=True, nogil=True)
def _merge_match_pack_part(t, nparts, rows_tmp, first_tmp, per, chunk, probe_keys, rows, first, count):
    m = probe_keys.shape[0]
    lo = t * chunk
    off = per[t]
    for q in range(per[t + 1] - off):
        f = first_tmp[lo + q]
        rows[off + q] = rows_tmp[lo + q]
        first[off + q] = f
        k = probe_keys[f]
        e = f + 1
        while e < m and probe_keys[e] == k:
            e += 1
        count[off + q] = e - f


def merge_matches(src_keys, probe_keys, nthreads):
    """Matched rows only: (rows, first, count) of a sorted source in a sorted probe.

    One merge pass writes each chunk's matches from the chunk's own start in
    scratch arrays (only the slots used are touched); a second, cheap pass
    packs them at the prefix-summed offsets and counts probe duplicates.
    """
    n = src_keys.shape[0]
    rows_tmp = np.empty(n, dtype=np.int64)
    first_tmp = np.empty(n, dtype=np.int64)
    nparts, nthreads = plan(n, nthreads)
    per = np.zeros(nparts + 1, dtype=np.int64)
    run_parts(_merge_match_part, nparts, nthreads, src_keys, probe_keys, rows_tmp, first_tmp, per)
    np.cumsum(per, out=per)
    total = int(per[-1])
    rows, first, count = (np.empty(total, dtype=np.int64) for _ in range(3))
    chunk = (n + nparts - 1) // nparts
    run_parts(_merge_match_pack_part, nparts, nthreads, rows_tmp, first_tmp, per, chunk, probe_keys, rows, first,
              count)
    return rows, first, count


@nb.njit(cache=True, nogil=True)
def _multiply_matched_part(t, nparts, src_values, rows, has_rows, probe_values, perm, has_perm, first, count,
                           out):
    k = src_values.shape[1]
    lo, hi = part_range(t, nparts, first.shape[0])
    for i in range(lo, hi):
        r = np.int64(i)
        if has_rows:
            r = rows[i]
        f = first[i]
        c = count[i]
        for col in range(k):
            if c == 0:
                out[i, col] = 0
            else:
                out[i, col] = src_values[r, col] * _ordered_sum(probe_values, perm, has_perm, f, c, col)


def multiply_matched(src_values, rows, has_rows, probe_values, perm, has_perm, first, count, out, nthreads):
    """out[i] = src_values[r] * (ordered sum of the matched probe rows), r = rows[i] or i.

    One dtype throughout (its own accumulation dtype); rows with count 0 give 0.
    """
    nparts, nthreads = plan(first.shape[0], nthreads)
    run_parts(_multiply_matched_part, nparts, nthreads, src_values, rows, has_rows, probe_values, perm, has_perm,
              first, count, out)
    return out


# ---- fused multiply of two sorted operands (keys computed on the fly) ---------
@nb.njit(cache=True, nogil=True, inline="always")
def _key(indices, strides, i):
    h = np.int64(0)
    for d in range(indices.shape[0]):
        h += indices[d, i] * strides[d]
    return h


@nb.njit(cache=True, nogil=True, inline="always")
def _lower_bound_idx(indices, strides, lo, hi, k):
    while lo < hi:
        mid = (lo + hi) >> 1
        if _key(indices, strides, mid) < k:
            lo = mid + 1
        else:
            hi = mid
    return lo


# The two part kernels of the fused product hold their loops written out, with no helper: Numba
# copies an inlined helper's whole IR into each call site, which cost more compile time than the
# kernels' own code (a key is a short loop over the index columns, written where it is needed).
@nb.njit(cache=True, nogil=True)
def _merge_idx_part(t, nparts, src_idx, probe_idx, strides, limits, rows_tmp, first_tmp, per, flags):
    """The matches of part t's source entries (source position, first probe position), written from
    the part's start; per[t + 1]: how many.

    flags[t]: (an index outside the limits, keys out of order: a lying flag), both counted on the
    columns this part reads anyway, in the loop that computes their keys. Counted in locals and
    stored once: every part's flags share one cache line, and a store per entry there made the
    two threads' merges fight over it (1.3-1.5x slower in wall time than the merge alone).
    """
    d = src_idx.shape[0]
    n = src_idx.shape[1]
    m = probe_idx.shape[1]
    c = (n + nparts - 1) // nparts
    lo = t * c if t * c < n else n
    hi = lo + c if lo + c < n else n
    if lo >= hi:
        return
    k0 = np.int64(0)
    for x in range(d):
        k0 += src_idx[x, lo] * strides[x]
    j = 0
    h = m
    while j < h:  # the first probe key >= the part's first key
        mid = (j + h) >> 1
        km = np.int64(0)
        for x in range(d):
            km += probe_idx[x, mid] * strides[x]
        if km < k0:
            j = mid + 1
        else:
            h = mid
    bad = down = np.int64(0)
    kp = np.int64(0)
    if j < m:
        for x in range(d):
            v = probe_idx[x, j]
            bad |= np.int64(np.uint64(v) >= limits[x])
            kp += v * strides[x]
    u = lo
    prev = k0
    for i in range(lo, hi):
        k = np.int64(0)
        for x in range(d):
            v = src_idx[x, i]
            bad |= np.int64(np.uint64(v) >= limits[x])
            k += v * strides[x]
        down |= np.int64(k < prev)
        prev = k
        while j < m and kp < k:
            j += 1
            if j < m:
                kn = np.int64(0)
                for x in range(d):
                    v = probe_idx[x, j]
                    bad |= np.int64(np.uint64(v) >= limits[x])
                    kn += v * strides[x]
                down |= np.int64(kn < kp)  # the probe's order too, where the merge walks it
                kp = kn
        if j < m and kp == k:
            rows_tmp[u] = i
            first_tmp[u] = j
            u += 1
    per[t + 1] = u - lo
    flags[t, 0] = bad
    flags[t, 1] = down


@nb.njit(cache=True, nogil=True)
def _merge_multiply_pack_part(t, nparts, rows_tmp, first_tmp, per, chunk, src_idx, src_vals, probe_idx,
                              probe_vals, strides, out_idx, out_vals):
    """Part t's matches packed at per[t]: the source's index column, and its value times the
    ordered sum of the probe's run of equal keys (a sorted probe may repeat a key)."""
    m = probe_idx.shape[1]
    d = src_idx.shape[0]
    kk = src_vals.shape[1]
    lo = t * chunk
    off = per[t]
    for q in range(per[t + 1] - off):
        i = rows_tmp[lo + q]
        f = first_tmp[lo + q]
        u = off + q
        key = np.int64(0)
        for x in range(d):
            out_idx[x, u] = src_idx[x, i]
            key += probe_idx[x, f] * strides[x]
        e = f + 1
        while e < m:
            ke = np.int64(0)
            for x in range(d):
                ke += probe_idx[x, e] * strides[x]
            if ke != key:
                break
            e += 1
        for c in range(kk):
            acc = probe_vals[f, c]
            for j in range(f + 1, e):
                acc += probe_vals[j, c]
            out_vals[u, c] = src_vals[i, c] * acc


def merge_limits(strides, sizes=None):
    """Index limits of the fused merges (coosparse/_kernels/bounds.py): of ``sizes``, or from the strides alone.

    From the strides, ``sizes[d] = strides[d - 1] // strides[d]`` for d >= 1 and the
    first dimension's size is unknown, so only its negative indices are caught.
    """
    return size_limits(sizes if sizes is not None else row_major_sizes(strides))


def boundaries_in_order(indices, strides, cuts, strict):
    """The keys on both sides of each cut (a chunk boundary) are in order: O(len(cuts)).

    The merge chunks check the order inside themselves; this closes the gaps.
    """
    st = np.asarray(strides, dtype=np.int64)
    n = indices.shape[1]
    for c in cuts:
        c = int(c)
        if 0 < c < n:
            k0 = int(indices[:, c - 1] @ st)
            k1 = int(indices[:, c] @ st)
            if k1 < k0 or (strict and k1 == k0):
                return False
    return True


def ends_in_order(first_key, last_key, operand=None):
    """O(1) test of a sorted flag: a sorted array cannot end below its start.

    Only arrays built with ``check=False`` can carry a false flag; this catches the
    lie where it is free (the kernels stay memory-safe either way). With
    ``operand`` a lie raises ValueError naming it; otherwise the answer is returned.
    """
    ok = int(last_key) >= int(first_key)
    if not ok and operand is not None:
        raise lying_flag_error(operand)
    return ok


def _key_at(indices, strides, i):
    return int(indices[:, i] @ np.asarray(strides, dtype=np.int64))


def merge_multiply(src_idx, src_vals, probe_idx, probe_vals, strides, nthreads, sizes=None):
    """Fused compact multiply of a sorted source and a sorted probe (narrow shapes)."""
    n = src_idx.shape[1]
    rows_tmp = np.empty(n, dtype=np.int64)
    first_tmp = np.empty(n, dtype=np.int64)
    limits = merge_limits(strides, sizes)
    nparts, nthreads = plan(n + probe_idx.shape[1], nthreads)
    per = np.zeros(nparts + 1, dtype=np.int64)
    flags = np.zeros((nparts, 2), dtype=np.int64)
    run_parts(_merge_idx_part, nparts, nthreads, src_idx, probe_idx, strides, limits, rows_tmp, first_tmp, per,
              flags)
    np.cumsum(per, out=per)
    chunk = (n + nparts - 1) // nparts
    m = probe_idx.shape[1]
    # the probe is read only where the source reaches it: its ends are checked too (O(1)),
    # which covers its first dimension when its order holds
    in_order = (boundaries_in_order(src_idx, strides, range(chunk, n, chunk or 1), False)
                and (m < 2 or ends_in_order(_key_at(probe_idx, strides, 0), _key_at(probe_idx, strides, m - 1))))
    if m and bool((probe_idx[:, [0, m - 1]].astype(np.uint64) >= limits[:, None]).any()):
        flags = flags.copy()
        flags[0, 0] += 1
    raise_merge_flags(flags, limits, src_idx, probe_idx, in_order=in_order)
    total = int(per[-1])
    out_idx = np.empty((src_idx.shape[0], total), dtype=np.int64)
    out_vals = np.empty((total, src_vals.shape[1]), dtype=src_vals.dtype)
    run_parts(_merge_multiply_pack_part, nparts, nthreads, rows_tmp, first_tmp, per, chunk, src_idx, src_vals,
              probe_idx, probe_vals, strides, out_idx, out_vals)
    return out_idx, out_vals
