"""Merging sorted runs: a concatenation whose pieces are each sorted, put in order.

``merge_take(keys, offsets, indices, values)`` moves the entries of ``r``
consecutive sorted runs of keys into the stable sort order (ties go to the
earlier run, then the earlier position), copying their index columns and
value rows as it goes. Concatenating sorted arrays along a non-leading axis
and ``roll`` produce such runs; a merge reads them sequentially instead of
sorting and gathering.

Parallel split: ``nparts - 1`` splitter keys are taken from a sample of every
run; part ``p`` takes, from each run, the keys in ``[split[p-1], split[p])``
(``lower_bound`` on both sides, so equal keys never straddle parts) and
merges them one distinct key at a time (ties: lowest run). A part's output
offset is the number of keys below its lower splitter in all runs. Parts run
through ``threads.run_parts`` (see ``indexing.py`` for why not ``prange``).
More than ``MAX_MERGE_RUNS`` runs are sorted instead (the wrapper decides);
the permutation is the same.
"""
import numba as nb
import numpy as np

from ..bounds import raise_out_of_bounds
from .intersect import _lower_bound
from .parts import lower_bound, part_range, prefetch_l2, store_fence, stream_store
from .sort import hist_part
from .threads import run_parts

_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

MAX_MERGE_RUNS = 16


@nb.njit(cache=True, nogil=True)
def merge_cuts(keys, offsets, splitters):
    """(cut, out0): cut[p, t] = first position of run t in part p; out0[p] = part p's output offset."""
    r = offsets.shape[0] - 1
    nparts = splitters.shape[0] + 1
    cut = np.empty((nparts + 1, r), dtype=np.int64)
    for t in range(r):
        cut[0, t] = offsets[t]
        cut[nparts, t] = offsets[t + 1]
    for p in range(1, nparts):
        k = splitters[p - 1]
        for t in range(r):
            cut[p, t] = _lower_bound(keys, offsets[t], offsets[t + 1], k)
    out0 = np.zeros(nparts + 1, dtype=np.int64)
    for p in range(nparts):
        s = 0
        for t in range(r):
            s += cut[p + 1, t] - cut[p, t]
        out0[p + 1] = out0[p] + s
    return cut, out0


@nb.njit(cache=True, nogil=True)
def merge_take_part(p, nparts, keys, cut, out0, indices, values, out_idx, out_val, bad):
    """Part p of the merge into out[:, out0[p]:out0[p + 1]]: one distinct key at a time (the
    smallest head key k, then every run's block of keys equal to k, in run order), copying
    each entry's index column and value row as it is taken.

    Concatenations repeat keys (the key is a prefix of the index: a row has
    entries in every piece), so whole blocks move per selection; every run is
    read sequentially and the output written sequentially.

    Keys not sorted within a run (a ``sorted`` flag that lies): a block is
    followed by a smaller key, which sets ``bad[p]``; writes stay inside the
    part's slice whatever the keys hold (the caller raises)."""
    r = cut.shape[1]
    d = indices.shape[0]
    k = values.shape[1]
    head = cut[p].copy()
    end = cut[p + 1]
    o = out0[p]
    stop = out0[p + 1]
    while o < stop:
        best = -1
        bk = 0
        for t in range(r):
            if head[t] < end[t]:
                key = keys[head[t]]
                if best < 0 or key < bk:
                    best = t
                    bk = key
        if best < 0:  # runs exhausted before the slice is full: cuts of unsorted keys
            bad[p] = 1
            break
        for t in range(best, r):
            h = head[t]
            e = h
            stop_t = end[t]
            while e < stop_t and keys[e] == bk:
                e += 1
            if e < stop_t and keys[e] < bk:
                bad[p] = 1
            n = min(e - h, stop - o)
            if n:
                for j in range(d):  # block copies: row by row, then the value rows
                    src = indices[j]
                    dst = out_idx[j]
                    for q in range(n):
                        dst[o + q] = src[h + q]
                for q in range(n):
                    for c in range(k):
                        out_val[o + q, c] = values[h + q, c]
                o += n
            head[t] = e


# ---- counting sort: entries into the order of a small key (a transpose into row order) -------
@nb.njit(cache=True, nogil=True)
def counting_hist_part(t, nparts, keys, bound, shift, hist, bad):
    """hist[t, b] = how many keys of part t have k >> shift == b (shift 0: equal b; the split sort
    counts its buckets by the high bits); bad[t] = keys of part t outside [0, bound)."""
    lo, hi = part_range(t, nparts, keys.shape[0])
    h = hist[t]
    lim = np.uint64(bound)
    nbad = 0
    for i in range(lo, hi):
        k = keys[i]
        if np.uint64(k) < lim:
            h[k >> shift] += 1
        else:
            nbad += 1
    bad[t] = nbad


def slot_starts(hist):
    """(starts, pos) of a counting sort from its per-part histograms ``hist[t, b]``: starts[b] =
    the first slot of bucket b (starts[-1] = the total), pos[t, b] = part t's first slot in it."""
    starts = np.zeros(hist.shape[1] + 1, np.int64)
    np.cumsum(hist.sum(axis=0), out=starts[1:])
    pos = np.cumsum(hist, axis=0)
    pos -= hist
    pos += starts[:-1]
    return starts, pos


@nb.njit(cache=True, nogil=True)
def counting_scatter_part(t, nparts, keys, indices, values, pos, out_idx, out_val):
    """Part t moves its entries to their slots: ``pos[t, k]`` is the next slot of key k for part t
    (parts in order, entries in order within a part: a stable sort)."""
    lo, hi = part_range(t, nparts, keys.shape[0])
    p = pos[t]
    d = indices.shape[0]
    kk = values.shape[1]
    for i in range(lo, hi):
        key = keys[i]
        q = p[key]
        p[key] = q + 1
        for r in range(d):
            out_idx[r, q] = indices[r, i]
        for c in range(kk):
            out_val[q, c] = values[i, c]


@nb.njit(cache=True, nogil=True)
def radix_scatter_part(t, nparts, words, values, shift, mask, pos, out_words, out_values):
    """Part t moves its (word, value row) pairs to their digit's next slots, in order (stable)."""
    lo, hi = part_range(t, nparts, words.shape[0])
    p = pos[t]
    kk = values.shape[1]
    for i in range(lo, hi):
        w = words[i]
        d = (w >> shift) & mask
        q = p[d]
        p[d] = q + 1
        out_words[q] = w
        for c in range(kk):
            out_values[q, c] = values[i, c]


@nb.njit(cache=True, nogil=True)
def pack_part(t, nparts, keys, other, bound, shift, words, bad):
    """words[i] = keys[i] << shift | other[i] for part t; bad[t] = keys outside [0, bound)."""
    lo, hi = part_range(t, nparts, keys.shape[0])
    lim = np.uint64(bound)
    nbad = 0
    for i in range(lo, hi):
        k = keys[i]
        nbad += np.uint64(k) >= lim
        words[i] = (k << shift) | other[i]
    bad[t] = nbad


@nb.njit(cache=True, nogil=True)
def unpack_part(t, nparts, words, shift, out_idx):
    """out_idx[0] = words >> shift, out_idx[1] = the low bits, for part t."""
    lo, hi = part_range(t, nparts, words.shape[0])
    low = (np.int64(1) << shift) - 1
    for i in range(lo, hi):
        w = words[i]
        out_idx[0, i] = w >> shift
        out_idx[1, i] = w & low


# ---- split sort: a transpose's counting sort in two cache-sized passes --------------------------
# A counting sort by a key of 2**17 values writes to as many streams (a cache miss per entry);
# an LSD radix sort in 9-bit digits needs two full passes plus packing, unpacking and a search
# for the key offsets. Here: one pass splits (packed word, value) pairs into at most 512
# buckets by the key's high bits (streams that stay in cache), then each bucket, a few
# thousand entries, is counting-sorted by the low bits where it lies in cache, writing the
# final index rows, values and the key offsets. Both passes keep entry order: stable.
@nb.njit(cache=True, nogil=True)
def split_scatter_part(t, nparts, keys, other, values, shift, ob, pos, out_words, out_values, wide):
    """Part t's (key << ob | other, value) pairs to their bucket's next slots, in order;
    wide[t] = the part's ``other`` values outside [0, 2**ob) (their words are not usable: the
    caller then sorts otherwise)."""
    lo, hi = part_range(t, nparts, keys.shape[0])
    p = pos[t]
    lim = np.uint64(1) << np.uint64(ob)
    nwide = 0
    for i in range(lo, hi):
        k = keys[i]
        b = k >> shift
        q = p[b]
        p[b] = q + 1
        o = other[i]
        nwide += np.uint64(o) >= lim
        out_words[q] = (k << ob) | o
        out_values[q] = values[i]
    wide[t] = nwide


@nb.njit(cache=True, nogil=True)
def split_local_part(t, nparts, bucket_starts, shift, ob, bound, offsets, out_idx, out_values, counts, scratch_w,
                     scratch_v):
    """Part t's buckets (cut where the entry count reaches t/nparts of the total), each sorted by
    the key's low ``shift`` bits in place: on entry out_idx[0] holds the split pass's words and
    out_values its values; on exit out_idx[0] = key, out_idx[1] = other, the values moved, and
    offsets[key] = the key's first position, for every key of the bucket. A bucket is copied
    to the part's scratch first (it is written over where it lies)."""
    nbk = bucket_starts.shape[0] - 1
    n = bucket_starts[nbk]
    b0 = lower_bound(bucket_starts, 0, nbk, (t * n + nparts - 1) // nparts)
    b1 = nbk if t == nparts - 1 else lower_bound(bucket_starts, 0, nbk, ((t + 1) * n + nparts - 1) // nparts)
    c = counts[t]
    sw = scratch_w[t]
    sv = scratch_v[t]
    keymask = (np.int64(1) << shift) - 1
    low = (np.int64(1) << ob) - 1
    words = out_idx[0]
    for b in range(b0, b1):
        lo = bucket_starts[b]
        m = bucket_starts[b + 1] - lo
        kfirst = b << shift
        kn = bound - kfirst if bound - kfirst < keymask + 1 else keymask + 1
        for j in range(kn):
            c[j] = 0
        for i in range(m):
            w = words[lo + i]
            sw[i] = w
            sv[i] = out_values[lo + i]
            c[(w >> ob) & keymask] += 1
        run = lo
        for j in range(kn):
            cnt = c[j]
            c[j] = run
            offsets[kfirst + j] = run
            run += cnt
        for i in range(m):
            w = sw[i]
            j = (w >> ob) & keymask
            q = c[j]
            c[j] = q + 1
            out_idx[1, q] = w & low
            out_values[q] = sv[i]
        for j in range(kn):
            for q in range(offsets[kfirst + j], c[j]):
                out_idx[0, q] = kfirst + j


DIRECT_MIN_ENTRIES = 1 << 16
"""From this many entries a transpose of at most DIRECT_MAX_KEYS keys takes the direct sort below
(smaller ones keep the split sort: no extra kernels compiled for them)."""
DIRECT_MAX_KEYS = 1 << 18
"""Keys up to 2**18: a part's table of next slots (4 B per key) stays in its core's L2 cache."""
DIRECT_PREFETCH = 64
"""Entries ahead whose two slots the scatter fetches into L2 (``prefetch_l2``): a slot's line is
rarely in cache (one line per key and array, 16 MB at 2**17 keys)."""
DIRECT_SLOTS32_BELOW = 1 << 32
"""Below this many entries the slot table holds uint32 (half the cache lines of int64)."""


@nb.njit(cache=True, nogil=True)
def direct_scatter_part(t, nparts, keys, other, vals, pos, out_other, out_vals):
    """Part t moves its (other, value word) pairs to their key's next slot, in order: a stable
    counting sort in one pass, two 8 B stores per entry. ``pos[t, k]`` (uint32 below 2**32
    entries: half the table, 10% faster) is part t's next slot of key k."""
    lo, hi = part_range(t, nparts, keys.shape[0])
    p = pos[t]
    ahead = hi - DIRECT_PREFETCH if hi - DIRECT_PREFETCH > lo else lo
    for i in range(lo, ahead):
        # the slot of the entry DIRECT_PREFETCH on (stale if its key repeats before: a hint only)
        f = np.uint64(p[keys[i + DIRECT_PREFETCH]])
        prefetch_l2(out_other, f)
        prefetch_l2(out_vals, f)
        k = keys[i]
        q = p[k]
        p[k] = q + 1
        out_other[q] = other[i]
        out_vals[q] = vals[i]
    for i in range(ahead, hi):
        k = keys[i]
        q = p[k]
        p[k] = q + 1
        out_other[q] = other[i]
        out_vals[q] = vals[i]


@nb.njit(cache=True, nogil=True)
def fill_keys_part(t, nparts, offsets, out):
    """out[q] = k for every q in offsets[k]:offsets[k + 1] of part t's slots: the sorted keys
    written sequentially from the counts, not scattered with the entries; streaming stores (the
    lines are written whole: no read of them first, 1.6 against 2.6 ms for 2M entries)."""
    nk = offsets.shape[0] - 1
    lo, hi = part_range(t, nparts, offsets[nk])
    if lo >= hi:
        return
    k = lower_bound(offsets, 0, nk + 1, lo + 1) - 1  # the key of slot lo
    q = lo
    while q < hi:
        e = offsets[k + 1] if offsets[k + 1] < hi else hi
        while q < e:
            stream_store(out, np.uint64(q), k)
            q += 1
        k += 1
    store_fence()


@nb.njit(cache=True, nogil=True)
def direct_slots(counts, offsets):
    """Per-part key counts ``counts[t, k]`` turned in place into part t's first slot of key k
    (keys in order, parts in order within a key: stable), and offsets[k] = key k's first slot."""
    nparts, nk = counts.shape
    run = 0
    for k in range(nk):
        offsets[k] = run
        for t in range(nparts):
            c = counts[t, k]
            counts[t, k] = run
            run += c
    offsets[nk] = run


def direct_take(keys, bound, other, values, nparts):
    """counting_take of two index rows (keys, other) and one value word per entry, for at most
    DIRECT_MAX_KEYS keys: per-part key counts, then each part scatters its (other, value) pairs
    straight to their slots in the result (a CSR transpose's bytes: 16 B scattered per entry) and
    the sorted key row is filled from the counts. The split sort below moves every entry twice.
    IndexError for a key outside [0, bound), before anything is moved."""
    n = keys.shape[0]
    pos = np.zeros((nparts, bound), np.uint32 if n < DIRECT_SLOTS32_BELOW else np.int64)
    bad = np.zeros(nparts, np.int64)
    run_parts(counting_hist_part, nparts, nparts, keys, bound, 0, pos, bad)
    if bad.any():
        raise_out_of_bounds(keys.reshape(1, -1), (bound,))
    offsets = np.empty(bound + 1, np.int64)
    direct_slots(pos, offsets)
    vals = values.view(_WORDS[values.dtype.itemsize])[:, 0]  # moved as bits
    out_idx = np.empty((2, n), np.int64)
    out_val = np.empty((n, 1), values.dtype)
    run_parts(direct_scatter_part, nparts, nparts, keys, other, vals, pos, out_idx[1],
              out_val.view(vals.dtype)[:, 0])
    run_parts(fill_keys_part, nparts, nparts, offsets, out_idx[0])
    return offsets, out_idx, out_val


SPLIT_BUCKET_BITS = 9
"""At most 512 buckets: the split pass's streams stay in cache."""
SPLIT_MAX_BITS = 25
"""Key spaces up to 2**25: a bucket's keys (2**16 at most) are counted in a cache-sized table."""


def split_take(keys, bound, other, values, nparts, kb, ob):
    """counting_take of two index rows (keys, other) and one value word per entry by the split
    sort: (offsets, out_idx, out_val), or None when it does not apply (a key space over
    SPLIT_MAX_BITS, or a bucket holding much of the keys: its scratch would be large), or False
    for an ``other`` value outside [0, 2**ob) (found by the split pass); the caller sorts
    otherwise.
    IndexError for a key outside [0, bound), before anything is moved."""
    n = keys.shape[0]
    if kb > SPLIT_MAX_BITS or values.dtype.itemsize not in _WORDS:
        return None
    shift = max(kb - SPLIT_BUCKET_BITS, 0)
    nbk = ((bound - 1) >> shift) + 1
    hist = np.zeros((nparts, nbk), np.int64)
    bad = np.zeros(nparts, np.int64)
    run_parts(counting_hist_part, nparts, nparts, keys, bound, shift, hist, bad)
    if bad.any():
        raise_out_of_bounds(keys.reshape(1, -1), (bound,))
    bucket_starts, pos = slot_starts(hist)
    lparts = 4 * nparts if nparts > 1 else 1
    longest = int((bucket_starts[1:] - bucket_starts[:-1]).max())
    if longest * lparts > n // 4 + 65536:
        return None
    vals = values.view(_WORDS[values.dtype.itemsize])[:, 0]  # moved as bits
    # the split pass writes into the result's memory (fresh pages cost as much as a pass)
    out_idx = np.empty((2, n), np.int64)
    out_val = np.empty((n, 1), values.dtype)
    out_words = out_val.view(vals.dtype)[:, 0]
    wide = np.zeros(nparts, np.int64)
    run_parts(split_scatter_part, nparts, nparts, keys, other, vals, shift, ob, pos, out_idx[0], out_words, wide)
    if wide.any():
        return False
    offsets = np.empty(bound + 1, np.int64)
    offsets[bound] = n
    counts = np.empty((lparts, 1 << shift), np.int64)
    scratch_w, scratch_v = np.empty((lparts, longest), np.int64), np.empty((lparts, longest), vals.dtype)
    run_parts(split_local_part, lparts, nparts, bucket_starts, shift, ob, bound, offsets, out_idx, out_words,
              counts, scratch_w, scratch_v)
    return offsets, out_idx, out_val


# ---- joining rows: concatenation along the second axis through row pointers -------------------
@nb.njit(cache=True, nogil=True)
def join_rows_part(t, nparts, i0, i1, i2, i3, v0, v1, v2, v3, ptrs, base, shifts, axis, out_idx, out_val, bad):
    """Part t of the rows: output row i at base[i] gets row i of pieces 0..3 in turn (entries
    ptrs[g, i]:ptrs[g, i + 1] of piece g, index row ``axis`` + shifts[g]). Every output row is
    written once, sequentially; every piece read sequentially. A row that would leave the
    output (pointers that do not match the output) is not written and counted in bad[t]."""
    lo, hi = part_range(t, nparts, base.shape[0])
    pieces = (i0, i1, i2, i3)  # one loop over a homogeneous tuple: one copy of the code to compile
    words = (v0, v1, v2, v3)
    total = out_idx.shape[1]
    d = out_idx.shape[0]
    k = out_val.shape[1]
    matrix = d == 2 and k == 1 and axis == 1
    nbad = 0
    for i in range(lo, hi):
        o = base[i]
        n = 0
        for g in range(4):
            n += ptrs[g, i + 1] - ptrs[g, i]
        if o < 0 or n < 0 or o + n > total:
            nbad += 1
            continue
        for g in range(4):
            idx = pieces[g]
            val = words[g]
            shift = shifts[g]
            s = ptrs[g, i]
            e = ptrs[g, i + 1]
            if matrix:  # a matrix of scalars: one loop, no inner loops over rows and words
                for j in range(s, e):
                    out_idx[0, o] = idx[0, j]
                    out_idx[1, o] = idx[1, j] + shift
                    out_val[o, 0] = val[j, 0]
                    o += 1
                continue
            for j in range(s, e):
                for q in range(d):
                    out_idx[q, o] = idx[q, j] + (shift if q == axis else 0)
                for c in range(k):
                    out_val[o, c] = val[j, c]
                o += 1
    bad[t] = nbad

def _writeable_piece(x, dtype):
    """``x`` C-contiguous, and a copy where its memory is read-only: the four pieces travel as one
    tuple, whose arrays must share one Numba type, and read-only memory (``np.frombuffer`` of
    bytes, a read-only memory map) beside a writeable piece would not type (TypingError)."""
    x = np.ascontiguousarray(x, dtype=dtype)
    return x if x.flags.writeable else x.copy()


def join_rows(indices, values, pointers, shifts, axis, out_idx, out_val, nparts, nthreads):
    """Pieces sorted by row joined row by row: output row i = row i of every piece in turn (index
    row ``axis`` + shifts[t]) from the rows' total before it on. Four pieces per pass (a fixed
    signature: no compilation per piece count). IndexError when the pointers do not add up to
    the output (nothing written for those rows)."""
    r = len(indices)
    m = pointers.shape[1] - 1
    lens = pointers[:, 1:] - pointers[:, :-1]
    base = np.zeros(m, np.int64)
    if m > 1:
        np.cumsum(lens.sum(axis=0)[:-1], out=base[1:])
    none_i = np.zeros((out_idx.shape[0], 0), np.int64)
    none_v = np.zeros((0, out_val.shape[1]), out_val.dtype)
    zero = np.zeros(m + 1, np.int64)
    for g in range(0, r, 4):
        grp = range(g, min(g + 4, r))
        idx = [_writeable_piece(indices[t], np.int64) for t in grp] + [none_i] * (4 - len(grp))
        val = [_writeable_piece(values[t], None) for t in grp] + [none_v] * (4 - len(grp))
        ptr = np.stack([pointers[t] for t in grp] + [zero] * (4 - len(grp)))
        sh = np.array([shifts[t] for t in grp] + [0] * (4 - len(grp)), np.int64)
        bad = np.zeros(nparts, np.int64)
        run_parts(join_rows_part, nparts, nthreads, *idx, *val, ptr, base, sh, int(axis), out_idx, out_val, bad)
        if bad.any():
            raise IndexError("join_rows: the row pointers do not add up to the output")
        base += lens[g:g + 4].sum(axis=0)


# ---- the layer's drivers of the sorts above
WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def radix_take(keys, bound, indices, values, nparts, kb, ob):
    """``counting_take`` of two index rows whose key (``kb`` bits) and second row (``ob`` bits) pack
    into one word: an LSD radix sort of (word, value bits) in digits of at most 9 bits."""
    n = keys.shape[0]
    words = np.empty(n, np.int64)
    bad = np.zeros(nparts, np.int64)
    run_parts(pack_part, nparts, nparts, keys, indices[1], bound, ob, words, bad)
    if bad.any():
        raise_out_of_bounds(keys.reshape(1, -1), (bound,))
    vals = values.view(WORDS[values.dtype.itemsize])  # moved as bits: one specialisation per width
    tmp_w, tmp_v = np.empty_like(words), np.empty_like(vals)
    npass = -(-kb // 9)
    width = -(-kb // npass)
    shift = ob
    for p in range(npass):
        if p == 1:
            tmp_v = np.empty_like(vals)  # the input values are never written
        mask = (1 << width) - 1
        hist = np.zeros((nparts, mask + 1), np.int64)
        run_parts(hist_part, nparts, nparts, words, shift, mask, hist)  # (the sort's digit histogram)
        # slots digit-major, part-minor: stable
        starts = np.cumsum(hist.T.reshape(-1)) - hist.T.reshape(-1)
        pos = np.ascontiguousarray(starts.reshape(mask + 1, nparts).T)
        run_parts(radix_scatter_part, nparts, nparts, words, vals, shift, mask, pos, tmp_w, tmp_v)
        words, tmp_w, vals, tmp_v = tmp_w, words, tmp_v, vals
        shift += width
    out_idx = np.empty((2, n), np.int64)
    run_parts(unpack_part, nparts, nparts, words, ob, out_idx)
    offsets = np.searchsorted(out_idx[0], np.arange(bound + 1, dtype=np.int64)).astype(np.int64, copy=False)
    return offsets, out_idx, vals.view(values.dtype)


def merge_splitters(keys, offsets, nparts):
    """nparts - 1 non-decreasing splitter keys from a sample of every run (in proportion to its length)."""
    if nparts <= 1:
        return np.zeros(0, np.int64)
    samples = []
    n = keys.shape[0]
    for t in range(offsets.shape[0] - 1):
        lo, hi = int(offsets[t]), int(offsets[t + 1])
        if hi > lo:
            num = min(hi - lo, max(1, (hi - lo) * 256 * nparts // n))
            samples.append(keys[np.linspace(lo, hi - 1, num=num).astype(np.int64)])
    s = np.sort(np.concatenate(samples))
    return np.ascontiguousarray(s[(np.arange(1, nparts) * s.shape[0]) // nparts])
