"""Stable sorts of int64 keys (0 <= key < bound), returning the permutation.

Two routes, chosen by :func:`packed_fits`:

* **Packed words** (the usual case). When ``bits(bound - 1) + bits(n - 1) <= 63``
  each entry becomes one int64 word ``key << ib | i``. Words are distinct, and
  sorting them sorts by key and, among equal keys, by original position: the
  stable order falls out of any correct sort, so the result cannot depend on
  thread scheduling. The sort is one parallel MSD pass on the top key digit
  (<= 12 bits, chosen so that a bucket holds about a thousand words and fits
  in L1), then each bucket is finished in cache: 8-bit LSD passes over the
  remaining key bits (passes whose digit is constant are skipped; 4-bit
  digits for tiny buckets). Buckets are split between threads by word
  count. Memory: two int64 arrays of n.
* **Key/permutation pairs** (fallback when the packed word would overflow):
  a parallel LSD radix sort over the key bits only, 11-bit digits, per-chunk
  histograms so that every chunk scatters into its own slots (stable).

"Parallel" means part by part on the library's threads (``threads.run_parts``):
each ``_..._part`` kernel handles one chunk of entries or one range of
buckets, and the functions without a leading underscore drive them from
Python. Plans, offsets and bucket splits are a few NumPy operations on the
histograms, not kernels of their own.
"""
import numba as nb
import numpy as np

from .parts import part_range
from .threads import plan, run_parts

_u = np.uint64  # an unsigned position: no wraparound test (see sort_segments_part)


def fits_packed(bound, n):
    """True when keys below ``bound`` and positions below ``n`` pack into one int64."""
    return max(int(bound) - 1, 0).bit_length() + max(int(n) - 1, 0).bit_length() <= 63


def packed_plan(bound, n):
    """(ib, kb, d1): position bits, key bits, bits of the MSD digit."""
    ib = max(int(n) - 1, 0).bit_length()
    kb = max(int(bound) - 1, 0).bit_length()
    d1 = int(n).bit_length() - 9  # about 500-1000 words per bucket
    d1 = max(0, min(d1, 12, kb))
    return ib, kb, d1


# ---------------------------------------------------------------- packed route
@nb.njit(cache=True, nogil=True)
def _pack_part(t, nparts, keys, ib, top_shift, words, hist):
    """words[i] = keys[i] << ib | i over chunk t, and its histogram of words >> top_shift."""
    lo, hi = part_range(t, nparts, keys.shape[0])
    nbuckets = hist.shape[1]
    h = hist[t]
    for i in range(lo, hi):
        w = (keys[i] << ib) | i
        words[i] = w
        b = w >> top_shift
        if 0 <= b < nbuckets:  # a key out of range is counted nowhere (see check_hist)
            h[b] += 1


def check_hist(hist, n):
    """Raise when some key fell outside [0, bound) (only possible with unchecked input)."""
    if int(hist.sum()) != n:
        raise IndexError("a linear index lies outside the sparse shape (indices out of bounds)")


@nb.njit(cache=True, nogil=True)
def _msd_scatter_part(t, nparts, src, dst, offsets, top_shift):
    # chunk t moves in order into its own slots of each bucket: stable
    lo, hi = part_range(t, nparts, src.shape[0])
    off = offsets[t]
    for i in range(lo, hi):
        w = src[i]
        b = w >> top_shift
        j = off[b]
        off[b] = j + 1
        dst[j] = w


@nb.njit(cache=True, nogil=True, inline="always")
def sort_bucket(a, tmp, lo, hi, shift_lo, nbits, hist):
    """Sort a[lo:hi] (words that agree above shift_lo + nbits and arrive in position order).

    ``hist`` is an (8, 1024) scratch array. Returns True when the sorted words
    ended up in tmp[lo:hi] instead of a[lo:hi].
    """
    m = hi - lo
    if m <= 1:
        return False
    # digits of at most 8 bits for small buckets, 10 bits for larger ones, 4 bits for buckets of
    # at most 32 words (the histogram's clear and prefix cost must stay small next to m); an
    # insertion sort for those cost 0.1-0.15 s of each calling kernel's compile (of 0.7-0.8 s)
    maxd = 4 if m <= 32 else (8 if m < 2048 else 10)
    npass = (nbits + maxd - 1) // maxd
    npass = npass if npass <= 8 else 8  # hist holds 8 digits of up to 10 bits
    digit = (nbits + npass - 1) // npass if npass else 1
    dmask = (np.int64(1) << digit) - 1
    nb_ = np.int64(1) << digit
    for p in range(npass):
        for b in range(nb_):
            hist[p, b] = 0
    for i in range(lo, hi):  # every digit's histogram in one pass
        w = a[i] >> shift_lo
        for p in range(npass):
            hist[p, (w >> (digit * p)) & dmask] += 1
    src = a
    dst = tmp
    in_tmp = False
    for p in range(npass):
        shift = shift_lo + digit * p
        h = hist[p]
        if h[(src[lo] >> shift) & dmask] == m:
            continue  # every word has this digit: nothing moves
        run = lo
        for b in range(nb_):
            c = h[b]
            h[b] = run
            run += c
        for i in range(lo, hi):
            w = src[i]
            d = (w >> shift) & dmask
            dst[h[d]] = w
            h[d] += 1
        src, dst = dst, src
        in_tmp = not in_tmp
    return in_tmp


@nb.njit(cache=True, nogil=True, inline="always")
def sort_bucket_in_place(a, tmp, lo, hi, shift_lo, nbits, hist):
    """:func:`sort_bucket`, with the result always in a[lo:hi]."""
    if sort_bucket(a, tmp, lo, hi, shift_lo, nbits, hist):
        for i in range(lo, hi):
            a[i] = tmp[i]


# the scratch (tmp, hists) comes from the driver: a kernel that allocates also compiles Numba's
# allocation routines for each shape (0.1-0.2 s of a first call)
@nb.njit(cache=True, nogil=True)
def _sort_buckets_part(t, nparts, a, tmp, bucket_starts, part_buckets, shift_lo, nbits, hists):
    hist = hists[t]
    for b in range(part_buckets[t], part_buckets[t + 1]):
        sort_bucket_in_place(a, tmp, bucket_starts[b], bucket_starts[b + 1], shift_lo, nbits, hist)


@nb.njit(cache=True, nogil=True)
def _sort_one_bucket(words, tmp, ib, kb, hist):
    sort_bucket_in_place(words, tmp, 0, words.shape[0], ib, kb, hist)


def bucket_offsets(hist):
    """(offsets[t, b], bucket_starts[b]): where chunk t's words of bucket b go (stable).

    Buckets in order, and within a bucket the chunks in order: an exclusive
    prefix sum of the histogram read bucket by bucket.
    """
    nchunks, nbuckets = hist.shape
    if nchunks == 1:  # the common small case, in fewer NumPy calls
        bucket_starts = np.zeros(nbuckets + 1, dtype=np.int64)
        np.cumsum(hist[0], out=bucket_starts[1:])
        # a copy: the scatter passes advance the offsets in place
        return bucket_starts[:nbuckets].reshape(1, nbuckets).copy(), bucket_starts
    flat = np.ascontiguousarray(hist.T, dtype=np.int64).reshape(-1)
    excl = np.cumsum(flat) - flat
    by_bucket = excl.reshape(nbuckets, nchunks)
    offsets = np.ascontiguousarray(by_bucket.T)
    bucket_starts = np.empty(nbuckets + 1, dtype=np.int64)
    bucket_starts[:nbuckets] = by_bucket[:, 0] if nchunks else 0
    bucket_starts[nbuckets] = int(flat.sum())
    return offsets, bucket_starts


def split_buckets(bucket_starts, nparts):
    """Contiguous bucket ranges, one per part, of about equal word counts: int64[nparts + 1].

    Part t ends at the first bucket that ends above t/nparts of the words.
    """
    nbuckets = bucket_starts.shape[0] - 1
    if nparts == 1:
        return np.array([0, nbuckets], dtype=np.int64)
    n = int(bucket_starts[nbuckets])
    out = np.empty(nparts + 1, dtype=np.int64)
    out[0] = 0
    targets = (n * np.arange(1, nparts, dtype=np.int64)) // nparts
    out[1:nparts] = np.searchsorted(bucket_starts[1:], targets, side="right")
    out[nparts] = nbuckets
    return out


def sort_packed(words, hist, ib, kb, d1, nthreads):
    """Sort the packed words (from the pack pass with this plan); returns the sorted array.

    ``words`` is used as scratch (its contents are undefined afterwards).
    """
    n = words.shape[0]
    nchunks, nbuckets = hist.shape
    if n <= 1:
        return words
    if nbuckets == 1:
        _sort_one_bucket(words, np.empty(n, dtype=np.int64), ib, kb, np.empty((8, 1024), dtype=np.int64))
        return words
    offsets, bucket_starts = bucket_offsets(hist)
    out = np.empty(n, dtype=np.int64)
    run_parts(_msd_scatter_part, nchunks, nthreads, words, out, offsets, ib + kb - d1)
    part_buckets = split_buckets(bucket_starts, nchunks)
    run_parts(_sort_buckets_part, nchunks, nthreads, out, words, bucket_starts, part_buckets, ib, kb - d1,
              np.empty((nchunks, 8, 1024), dtype=np.int64))
    return out


@nb.njit(cache=True, nogil=True)
def _unpack_part(t, nparts, words, ib, keys, perm):
    lo, hi = part_range(t, nparts, words.shape[0])
    mask = (np.int64(1) << ib) - 1
    for i in range(lo, hi):
        w = words[i]
        keys[i] = w >> ib
        perm[i] = w & mask


def unpack(words, ib, nthreads):
    """(keys, perm) of sorted packed words."""
    n = words.shape[0]
    keys = np.empty(n, dtype=np.int64)
    perm = np.empty(n, dtype=np.int64)
    nparts, nthreads = plan(n, nthreads)
    run_parts(_unpack_part, nparts, nthreads, words, ib, keys, perm)
    return keys, perm


# ---------------------------------------------------------------- pair route
def _digit_plan(bound, n):
    """(digit_bits, passes) for keys below ``bound``."""
    bits = max(int(bound) - 1, 0).bit_length()
    if bits == 0:
        return 1, 0
    # 11-bit digits keep the histogram in L1 and the scatter fan-out TLB-friendly;
    # small inputs prefer fewer buckets.
    max_bits = 11 if n > (1 << 16) else 8
    passes = (bits + max_bits - 1) // max_bits
    digit = (bits + passes - 1) // passes
    return digit, passes


@nb.njit(cache=True, nogil=True)
def hist_part(t, nparts, keys, shift, mask, hist):
    lo, hi = part_range(t, nparts, keys.shape[0])
    h = hist[t]
    for i in range(lo, hi):
        h[(keys[i] >> shift) & mask] += 1


# _msd_scatter_part's loop for (key, perm) pairs: kept apart so each hot loop moves only its own arrays
@nb.njit(cache=True, nogil=True)
def _scatter_part(t, nparts, src_keys, src_perm, dst_keys, dst_perm, offsets, shift, mask, identity):
    lo, hi = part_range(t, nparts, src_keys.shape[0])
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


def sort_pairs_lsd(keys, bound, nthreads):
    """Return (sorted_keys, perm) with sorted_keys = keys[perm], perm stable."""
    n = keys.shape[0]
    digit, passes = _digit_plan(bound, n)
    mask = (1 << digit) - 1
    nparts, nthreads = plan(n, nthreads)
    cur_keys = keys
    cur_perm = np.empty(0, dtype=np.int64)
    buf_keys = np.empty(n, dtype=np.int64)
    buf_perm = np.empty(n, dtype=np.int64)
    identity = True
    for p in range(passes):
        shift = p * digit
        hist = np.zeros((nparts, mask + 1), dtype=np.int64)
        run_parts(hist_part, nparts, nthreads, cur_keys, shift, mask, hist)
        if int(hist.sum(axis=0).max()) == n:  # every key has the same digit: nothing moves
            continue
        offsets, _ = bucket_offsets(hist)
        run_parts(_scatter_part, nparts, nthreads, cur_keys, cur_perm, buf_keys, buf_perm, offsets, shift, mask,
                  identity)
        if identity:
            # second buffer pair is needed only once something moved
            cur_keys, cur_perm = buf_keys, buf_perm
            buf_keys, buf_perm = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
            identity = False
        else:
            cur_keys, buf_keys = buf_keys, cur_keys
            cur_perm, buf_perm = buf_perm, cur_perm
    if identity:
        return keys.copy(), np.arange(n, dtype=np.int64)
    return cur_keys, cur_perm


def sort_pairs(keys, bound, nthreads):
    """Stable sort: (sorted_keys, perm) with sorted_keys = keys[perm].

    The route is chosen in Python so that only the kernels it needs compile.
    """
    n = keys.shape[0]
    if n > 1 and fits_packed(bound, n):
        ib, kb, d1 = packed_plan(bound, n)
        nparts, nthreads = plan(n, nthreads)
        words = np.empty(n, dtype=np.int64)
        hist = np.zeros((nparts, 1 << d1), dtype=np.int64)
        run_parts(_pack_part, nparts, nthreads, keys, ib, ib + kb - d1, words, hist)
        check_hist(hist, n)
        return unpack(sort_packed(words, hist, ib, kb, d1, nthreads), ib, nthreads)
    return sort_pairs_lsd(keys, bound, nthreads)



# ---- values sorted within segments (a sort along the last axis, row by row) ------------------
@nb.njit(cache=True, nogil=True, inline="always")
def _after(x, v):
    """x sorts after v: greater, or NaN where v is not (NaN last, as NumPy); false for equal."""
    return x > v or (x != x and v == v)


@nb.njit(cache=True, nogil=True)
def _merge_sort(out, lo, hi, tmp):
    """Stable bottom-up merge sort of out[lo:hi] (runs of 16 by insertion first), NaN last."""
    n = hi - lo
    for s in range(lo, hi, 16):
        e = min(s + 16, hi)
        for i in range(s + 1, e):
            v = out[i]
            j = i - 1
            while j >= s and _after(out[j], v):
                out[j + 1] = out[j]
                j -= 1
            out[j + 1] = v
    width = 16
    while width < n:
        for s in range(lo, hi, 2 * width):
            m = min(s + width, hi)
            e = min(s + 2 * width, hi)
            if m >= e:
                continue
            for i in range(s, m):
                tmp[i - lo] = out[i]
            i = s
            j = m
            k = s
            while i < m and j < e:
                if _after(tmp[i - lo], out[j]):  # take from the right only when strictly before
                    out[k] = out[j]
                    j += 1
                else:
                    out[k] = tmp[i - lo]
                    i += 1
                k += 1
            while i < m:
                out[k] = tmp[i - lo]
                i += 1
                k += 1
        width *= 2


@nb.njit(cache=True, nogil=True)
def sort_segments_part(t, nparts, bounds, offsets, values, out):
    """Segments bounds[t]:bounds[t + 1] of ``values`` sorted (stable, NaN last) into ``out``."""
    s0 = bounds[t]
    s1 = bounds[t + 1]
    longest = 0
    for s in range(s0, s1):
        longest = max(longest, offsets[s + 1] - offsets[s])
    tmp = np.empty(longest, dtype=values.dtype)
    for s in range(s0, s1):
        lo = offsets[s]
        hi = offsets[s + 1]
        # unsigned positions in this copy: signed ones are tested for wraparound and LLVM
        # vectorises the loop with gather/scatter instructions (slow on AVX-512 machines; the
        # same change in the lane count and the longest-segment loop measured 0.08-0.1 s more
        # compile CPU for both kernels, so those stay signed)
        for i in range(lo, hi):
            out[_u(i)] = values[_u(i)]
        if hi - lo > 1:
            _merge_sort(out, lo, hi, tmp)


@nb.njit(cache=True, nogil=True)
def sort_lanes_count_part(t, nparts, bounds, offsets, values, fill, sorted_values, kept):
    """Lanes bounds[t]:bounds[t + 1]: values sorted into ``sorted_values``; kept[s] = the lane's
    values that differ from the fill (NaN differs)."""
    sort_segments_part(t, nparts, bounds, offsets, values, sorted_values)
    for s in range(bounds[t], bounds[t + 1]):
        c = 0
        for i in range(offsets[s], offsets[s + 1]):
            v = sorted_values[i]
            c += not (v == fill)
        kept[s] = c


@nb.njit(cache=True, nogil=True)
def sort_lanes_write_part(t, nparts, bounds, offsets, indices, sorted_values, fill, length, out_offsets,
                          out_idx, out_vals):
    """Lanes of part t written out: the kept values in order, the lane's leading indices, and the
    last index of each value in the sorted dense lane (values below the fill first, the rest last)."""
    d = indices.shape[0]
    for s in range(bounds[t], bounds[t + 1]):
        lo = offsets[s]
        q = out_offsets[s]
        total = out_offsets[s + 1] - q
        rank = 0
        for i in range(offsets[s], offsets[s + 1]):
            v = sorted_values[i]
            if v == fill:
                continue
            for r in range(d - 1):
                out_idx[r, q] = indices[r, lo]
            out_idx[d - 1, q] = rank if v < fill else length - (total - rank)
            out_vals[q] = v
            q += 1
            rank += 1


def sort_lanes(values, offsets, indices, fill, length, nparts, nthreads, bounds):
    """The layer's ``sort_lanes`` on contiguous arrays, lanes split into parts at ``bounds``."""
    nseg = offsets.shape[0] - 1
    fill = values.dtype.type(fill)
    sorted_values = np.empty_like(values)
    kept = np.zeros(nseg, np.int64)
    run_parts(sort_lanes_count_part, nparts, nthreads, bounds, offsets, values, fill, sorted_values, kept)
    out_offsets = np.zeros(nseg + 1, np.int64)
    np.cumsum(kept, out=out_offsets[1:])
    m = int(out_offsets[-1])
    out_idx = np.empty((indices.shape[0], m), np.int64)
    out_vals = np.empty(m, values.dtype)
    run_parts(sort_lanes_write_part, nparts, nthreads, bounds, offsets, indices, sorted_values, fill, int(length),
              out_offsets, out_idx, out_vals)
    return out_idx, out_vals


@nb.njit(cache=True, nogil=True)
def _ranks_before(a, b, largest):
    """Value ``a`` ranks strictly before ``b``: largest first with NaN first, or smallest first
    with NaN last (zeros of both signs equal)."""
    if largest:  # bitwise, not short-circuit: no branches
        return ((a != a) & (b == b)) | (a > b)
    return ((b != b) & (a == a)) | (a < b)


@nb.njit(cache=True, nogil=True)
def _select(buf, m, j, largest):
    """Rearrange buf[:m] so that buf[j] holds the value of rank j (:func:`_ranks_before`'s order): a
    quickselect with pseudo-random pivots (expected linear time whatever the order of the values)
    and a branch-free three-way partition: before the pivot, equal to it, after it."""
    lo = 0
    hi = m  # the range still to search: buf[lo:hi]
    state = np.uint64(0x9E3779B97F4A7C15)
    while hi - lo > 1:
        state ^= state << np.uint64(13)
        state ^= state >> np.uint64(7)
        state ^= state << np.uint64(17)
        p = buf[lo + np.int64(state % np.uint64(hi - lo))]
        e = lo  # values before p to the front, then those equal to p
        for i in range(lo, hi):
            v = buf[i]
            before = _ranks_before(v, p, largest)
            buf[i] = buf[e]
            buf[e] = v
            e += before
        f = e
        for i in range(e, hi):
            v = buf[i]
            eq = not _ranks_before(p, v, largest)
            buf[i] = buf[f]
            buf[f] = v
            f += eq
        if j < e:
            hi = e
        elif j >= f:
            lo = f
        else:
            return


_BUFFER_MAX = 16  # selections of up to this many entries insert into a sorted buffer; more use _select
_SHORT = 32  # lanes of up to this many entries (and k >= 4) count each value's rank instead: no branches


@nb.njit(cache=True, nogil=True)
def _buffer_insert(buf, j, v, largest):
    """Insert v into buf[:j + 1] (best first), after the values equal to it, from slot j down."""
    while j > 0 and _ranks_before(v, buf[j - 1], largest):
        buf[j] = buf[j - 1]
        j -= 1
    buf[j] = v


@nb.njit(cache=True, nogil=True)
def topk_lanes_count_part(t, nparts, bounds, offsets, values, fill, length, k, largest, side, cut, quota, kept):
    """Lanes bounds[t]:bounds[t + 1]: which entries rank among the lane's first k (the lane holds
    ``length`` elements, the unstored ones equal to the fill). Entries before the fill rank first,
    then the fill's elements, then the entries after it. side[s]: the side of the fill whose entries
    are cut (0: only some of those before it kept; 1: all of those, and some after it). Of that
    side the entries that rank strictly before cut[s] are kept, and the first quota[s] (in stored
    order: ties rank by position) of those equal to it; quota -1: the whole side, -2: none of it.
    kept[s]: the lane's count. The r-th best value of the side: in a lane of at most _SHORT
    entries (k >= 4) each value's count of values ranking before it (branch-free), else a sorted
    buffer of the best r values for r <= _BUFFER_MAX (filled in the pass that counts the sides,
    for the side before the fill), else a quickselect of the side's values."""
    longest = 0
    for s in range(bounds[t], bounds[t + 1]):
        longest = max(longest, offsets[s + 1] - offsets[s])
    buf = np.empty(longest, dtype=values.dtype)
    for s in range(bounds[t], bounds[t + 1]):
        lo = offsets[s]
        hi = offsets[s + 1]
        short = hi - lo <= _SHORT and k >= 4  # ranks counted below, not a buffer
        rb = k if k <= _BUFFER_MAX and hi - lo >= k and not short else 0  # (0: no buffer)
        nb_ = 0
        na = 0
        if rb == 0:
            for i in range(lo, hi):
                v = values[i]
                nb_ += _ranks_before(v, fill, largest)
                na += _ranks_before(fill, v, largest)
        else:
            worst = fill
            for i in range(lo, hi):
                v = values[i]
                b = _ranks_before(v, fill, largest)
                na += _ranks_before(fill, v, largest)
                if b:
                    if nb_ < rb:
                        _buffer_insert(buf, nb_ + 0, v, largest)  # (+ 0: an int64, not the literal 0)
                        if nb_ == rb - 1:
                            worst = buf[rb - 1]
                    elif _ranks_before(v, worst, largest):
                        _buffer_insert(buf, rb - 1, v, largest)
                        worst = buf[rb - 1]
                    nb_ += 1
        if k <= nb_:
            sd, r, have, base = 0, k, nb_, 0
        else:  # every entry before the fill, then the fill's elements, then the best after it
            sd, r, have, base = 1, max(min(k - (length - na), na), 0), na, nb_
        side[s] = sd
        kept[s] = base + r
        cut[s] = fill
        if r == 0 or r >= have:
            quota[s] = -2 if r == 0 else -1
            continue
        m = 0
        if short or r > _BUFFER_MAX:  # the side's values into buf (the rank count and the quickselect)
            for i in range(lo, hi):
                v = values[i]
                if _ranks_before(v, fill, largest) if sd == 0 else _ranks_before(fill, v, largest):
                    buf[m] = v
                    m += 1
        if short:  # c: the last of the side's values preceded by fewer than r
            top = -1
            c = fill
            for j in range(m):
                a = buf[j]
                ahead = 0
                for i in range(m):  # branch-free
                    ahead += _ranks_before(buf[i], a, largest)
                if ahead < r and ahead > top:
                    top = ahead
                    c = a
        elif r <= _BUFFER_MAX:  # buf[:r]: the side's best values, best first (equal ones in order)
            if sd == 1:
                m = 0
                for i in range(lo, hi):
                    v = values[i]
                    if not _ranks_before(fill, v, largest):
                        continue
                    if m < r:
                        _buffer_insert(buf, m + 0, v, largest)
                        m += 1
                    elif _ranks_before(v, buf[r - 1], largest):
                        _buffer_insert(buf, r - 1, v, largest)
            c = buf[r - 1]
            m = r  # the side's entries that rank strictly before c are all among the best r
        else:  # the r-th best of the side's values: a quickselect
            _select(buf, m + 0, r - 1, largest)  # (m + 0: an int64, where m alone may type as the literal 0)
            c = buf[r - 1]
        better = 0
        for j in range(m):
            better += _ranks_before(buf[j], c, largest)
        cut[s] = c
        quota[s] = r - better


@nb.njit(cache=True, nogil=True)
def topk_lanes_write_part(t, nparts, bounds, offsets, values, fill, largest, side, cut, quota, out_offsets, out):
    """Lanes of part t: the positions of their kept entries, in stored order. With a cut, an entry
    is kept when it ranks before the cut, or equals it within the quota (entries before the fill
    rank before a cut after it)."""
    for s in range(bounds[t], bounds[t + 1]):
        q = out_offsets[s]
        sd = side[s]
        c = cut[s]
        left = quota[s]
        lo = offsets[s]
        hi = offsets[s + 1]
        end = out_offsets[s + 1]  # (the count pass's figure, reached exactly: a guard only)
        if left >= 0 and hi - lo <= 3 * (end - q) <= 2 * (hi - lo):
            # a third to two thirds kept (a branch would mispredict often): branch-free, every
            # position written and kept by moving on (the lane's slots full: done, nothing past them)
            for i in range(lo, hi):
                if q >= end:
                    break
                v = values[i]
                before = _ranks_before(v, c, largest)
                # (a cut after the fill: the entries equal to the fill rank before it, not kept)
                ahead = before & ((sd == 0) | _ranks_before(v, fill, largest) | _ranks_before(fill, v, largest))
                tie = (left > 0) & (not before) & (not _ranks_before(c, v, largest))
                left -= tie
                out[q] = i
                q += ahead | tie
        elif left >= 0:
            for i in range(lo, hi):
                v = values[i]
                if _ranks_before(v, c, largest):
                    # (a cut after the fill: the entries equal to the fill rank before it, not kept)
                    keep = sd == 0 or _ranks_before(v, fill, largest) or _ranks_before(fill, v, largest)
                elif left > 0 and not _ranks_before(c, v, largest):
                    keep = True
                    left -= 1
                else:
                    keep = False
                if keep and q < end:
                    out[q] = i
                    q += 1
        elif sd == 1 or left == -1:  # whole sides: those before the fill; with sd 1 and -1, those after it too
            both = sd == 1 and left == -1
            for i in range(lo, hi):
                v = values[i]
                if (_ranks_before(v, fill, largest) | (both & _ranks_before(fill, v, largest))) and q < end:
                    out[q] = i
                    q += 1


def topk_lanes(values, offsets, fill, length, k, largest, nparts, nthreads, bounds):
    """The layer's ``topk_lanes`` on contiguous arrays, lanes split into parts at ``bounds``: the
    count pass, the output offsets, the write pass."""
    nseg = offsets.shape[0] - 1
    side, cut, quota, kept = (np.empty(nseg, np.uint8), np.empty(nseg, values.dtype), np.empty(nseg, np.int64),
                              np.empty(nseg, np.int64))
    args = (offsets, values, values.dtype.type(fill))
    run_parts(topk_lanes_count_part, nparts, nthreads, bounds, *args, int(length), int(k), bool(largest), side, cut,
              quota, kept)
    out_offsets = np.zeros(nseg + 1, np.int64)
    np.cumsum(kept, out=out_offsets[1:])
    out = np.full(int(out_offsets[-1]), -1, np.int64)
    run_parts(topk_lanes_write_part, nparts, nthreads, bounds, *args, bool(largest), side, cut, quota, out_offsets,
              out)
    if out.shape[0] and out.min() < 0:  # the two passes disagree: a bug, not bad input
        raise RuntimeError("topk_lanes: the selection pass and the write pass disagree")
    return out
