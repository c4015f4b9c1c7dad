"""Fused coalesce for narrow shapes: bucket by key, sort buckets in cache, ordered sums.

Thread mapping: each phase is a plain nogil kernel run once per part on a
small Python thread pool (``threads.run_parts``; 4 parts per thread, taken by
whichever thread is free). The histogram and MSD-scatter phases split the
entries into one contiguous chunk per part (per-part histograms keep the
scatter stable); the later phases split the MSD buckets into contiguous
ranges of about equal size, one per part. Equal keys never straddle two buckets, and each run of
equal keys is summed sequentially in original order, so nothing depends on
scheduling: results are bit-identical from run to run.

Routes (``coalesce_linear`` picks one): one bucket for small inputs, the bucketed route (values
move with their keys), the by-position route for value rows of whole cache lines (each row moves
once, input to output), and key/permutation pairs when a packed word cannot hold key and position.
"""
import numba as nb
import numpy as np

from . import linear_index as _li
from .. import scratch as _scratch
from . import segment as _seg
from . import sort as _sort
from ..bounds import raise_out_of_bounds, row_major_sizes, size_limits
from .parts import part_range, store_fence, stream_line, stream_store
from .threads import run_parts


def stride_shifts(strides):
    """log2 of each stride that is a power of two, else -1 (shifts instead of divisions)."""
    return np.array([int(s).bit_length() - 1 if s > 0 and (int(s) & (int(s) - 1)) == 0 else -1 for s in strides],
                    dtype=np.int64)


_BLOCK = 4096  # entries per block of keys computed at once (stays in L1)


@nb.njit(cache=True, nogil=True)
def _bucket_part(t, nparts, scatter, indices, strides, limits, top_shift, hist, bad, keybuf, sb, wide, dst32,
                 dst64, values, vdst, bucket_starts, lims, wbuf32, wbuf64, vbuf):
    """Chunk t of the entries, in two calls (one kernel: each compiled function costs a fixed
    share of Numba's compile time, and the key loop is compiled once).

    Keys are computed a block at a time (``keybuf[t]``, in L1) from the index rows, by simple loops
    the compiler vectorises.

    Without ``scatter``: ``hist[t]`` counts the top key digit (key >> top_shift); indices outside
    the shape (uint64(index) >= limit: negative or too large) are counted in bad[t] and their keys
    nowhere: the caller raises IndexError before the scatter writes anything.

    With ``scatter`` (``hist`` now holds chunk t's first slot in each bucket): the chunk moves in
    order to its slots (stable), writing the word (key's low bits << sb) | slot in bucket and the
    value row beside it: the bucket stands for the top key bits, the slot for the position order.
    With ``values`` None (``coalesce_by_position``), the word's low bits are the entry's position
    in the input and no value moves (Numba prunes the other branches for that type).
    Words go to ``dst64`` when ``wide``, else to ``dst32`` (both arrays are always passed, one
    empty, so that one compiled kernel serves both word sizes).

    The scatter's stores fall on one open line per bucket of each array, and each line a cached
    store touches is first read from memory. So the lines a chunk fills alone (slots
    lims[t, b, 0] <= j < lims[t, b, 1], whole groups of lines: see ``_write_groups``) are gathered
    in bucket b's row of the chunk's buffers (wbuf32 / wbuf64, vbuf) and stored whole, past the
    caches, when complete. The other slots take plain stores. 2M uniform entries, one thread:
    the scatter alone 14.9 -> 7.2 ms in a micro-benchmark. (Value rows of whole lines take
    ``coalesce_by_position``, which stores each row once, whole, at its output row.)
    """
    ndim = indices.shape[0]
    lo, hi = part_range(t, nparts, indices.shape[1])
    nbuckets = np.uint64(hist.shape[1])
    glim = lims[t]
    wb32 = wbuf32[t]
    wb64 = wbuf64[t]
    vb = vbuf[t]
    group = np.uint64(vb.shape[1])
    gmask = group - np.uint64(1)
    # values None (the by-position route): the words carry input positions, no value moves
    vline = 8 if values is None else 64 // values.itemsize
    h = hist[t]
    keys = keybuf[t]
    low_mask = (np.int64(1) << top_shift) - 1
    for b0 in range(lo, hi, _BLOCK):
        b1 = hi if hi < b0 + _BLOCK else b0 + _BLOCK
        m = b1 - b0
        if ndim == 0:
            for i in range(m):
                keys[i] = 0
        for d in range(ndim):
            row = indices[d, b0:b1]
            s = strides[d]
            if d == 0:
                for i in range(m):
                    keys[i] = row[i] * s
            else:
                for i in range(m):
                    keys[i] += row[i] * s
        if not scatter:
            # the bounds check in a loop of its own: inside the key loop above, it made the
            # scatter's keys (which skip it) ~15% slower
            for d in range(ndim):
                row = indices[d, b0:b1]
                lim = limits[d]
                nbad = 0
                for i in range(m):
                    nbad += np.uint64(row[i]) >= lim
                bad[t] += nbad
            for i in range(m):
                b = np.uint64(keys[i] >> top_shift)  # a negative key wraps above nbuckets
                if b < nbuckets:
                    h[b] += 1
            continue
        for q in range(m):
            key = keys[q]
            # buckets and slots unsigned: Numba tests a signed index for wraparound at each access
            b = np.uint64(key >> top_shift)
            j = h[b]
            h[b] = j + 1
            uj = np.uint64(j)
            if values is None:  # the entry's position in the input for the slot
                word = ((key & low_mask) << sb) | (b0 + q)
                if wide:
                    dst64[uj] = word
                else:
                    dst32[uj] = word
                continue
            word = ((key & low_mask) << sb) | (j - bucket_starts[b])
            if values.ndim == 1 and glim[b, 0] <= j < glim[b, 1]:
                # a group of whole lines of this chunk's own: gathered in the bucket's buffer,
                # stored in whole lines past the caches when complete
                r = uj & gmask
                if wide:
                    wb64[b, r] = word
                else:
                    wb32[b, r] = word
                vb[b, r] = values[b0 + q]
                if r == gmask:
                    j0 = uj - gmask
                    if wide:
                        for i in range(0, group, 8):
                            stream_line(dst64, j0 + i, wb64, b, i)
                    else:
                        for i in range(0, group, 16):
                            stream_line(dst32, j0 + i, wb32, b, i)
                    for i in range(0, group, vline):
                        stream_line(vdst, j0 + i, vb, b, i)
                continue
            if wide:
                dst64[uj] = word
            else:
                dst32[uj] = word
            if values.ndim == 1:
                vdst[uj] = values[b0 + q]
            else:
                for c in range(values.shape[1]):
                    vdst[uj, c] = values[b0 + q, c]
    if scatter:
        store_fence()


@nb.njit(cache=True, nogil=True)
def _reduce_part(t, nthreads, words, vals, bucket_starts, thread_buckets, sb, nbits, ucount, hists, scratches,
                 locals_, local_starts):
    """Bucket range t: sort each bucket's words, sum each run of equal keys in slot (= original)
    order, and compact: the bucket's u distinct low keys end in words[lo:lo+u], their sums in
    vals[lo:lo+u], and ucount[b] = u.

    The part's scratch buffers are its own: hists[t], scratches[t], and rows
    local_starts[t]:local_starts[t + 1] of locals_ (as many as its largest bucket) for a bucket's
    values; they stay in cache (a scratch range in a global array would cost memory traffic), and
    the driver allocates them (a kernel that allocates also compiles Numba's allocation routines).

    The bodies are written out here, not inlined helpers: Numba copies an inlined function's IR
    at every inlining, which cost more compile time than its code. The output copy is a kernel of
    its own (``_output_part``), compiled only for inputs that need buckets: one bucket's output is
    a few NumPy operations, and that loop was about a fifth of this kernel's compile time.
    """
    b0 = thread_buckets[t]
    b1 = thread_buckets[t + 1]
    hist = hists[t]
    scratch = scratches[t]
    local = locals_[local_starts[t]:local_starts[t + 1]]
    smask = (np.int64(1) << sb) - 1
    usb = np.uint64(sb)
    for b in range(b0, b1):
        lo = bucket_starts[b]
        m = bucket_starts[b + 1] - lo
        seg = words[lo:lo + m]
        # sort the bucket's words: sort.sort_bucket's radix sort, written out here rather than
        # inlined (Numba deep-copies an inlined helper's blocks, each with the helper's whole
        # variable scope, twice per call site: about 0.3 s of this kernel's compile; compiled as a
        # function of its own it cost as much). An LSD radix sort of the key bits above the slot,
        # all digit histograms in one pass; the sorted words are read from wherever the sort left
        # them. Small buckets take small digits rather than an insertion sort: that loop alone was
        # about a quarter of this kernel's compile time.
        in_tmp = False
        if m > 1:
            # the histograms' clear and prefix stay small next to m
            maxd = 4 if m <= 32 else (8 if m < 2048 else 10)
            npass = (nbits + maxd - 1) // maxd
            npass = npass if npass <= 8 else 8  # hists hold 8 digits of up to 10 bits
            digit = (nbits + npass - 1) // npass if npass else 1
            # digits and slots unsigned: a signed index costs a wraparound test per access
            dmask = (np.uint64(1) << np.uint64(digit)) - np.uint64(1)
            nb_ = np.uint64(1) << np.uint64(digit)
            for p in range(npass):
                for d in range(nb_):
                    hist[p, d] = 0
            for i in range(m):
                w = np.uint64(seg[i]) >> usb
                for p in range(npass):
                    hist[p, (w >> np.uint64(digit * p)) & dmask] += 1
            src = seg
            dst = scratch
            for p in range(npass):
                shift = np.uint64(sb + digit * p)
                h = hist[p]
                if h[(np.uint64(src[0]) >> shift) & dmask] == m:
                    continue  # every word has this digit: nothing moves
                run = 0
                for d in range(nb_):
                    c = h[d]
                    h[d] = run
                    run += c
                for i in range(m):
                    w = src[i]
                    d = (np.uint64(w) >> shift) & dmask
                    dst[np.uint64(h[d])] = w
                    h[d] += 1
                src, dst = dst, src
                in_tmp = not in_tmp
        srt = scratch if in_tmp else seg
        # a sequential copy of the bucket's values: the reads by slot below are then
        # L1 hits instead of one cache miss per line in random order
        # (unsigned positions: with signed ones Numba tests each for wraparound and LLVM
        # vectorises the copy with gather/scatter instructions, slow on AVX-512 machines)
        if vals.ndim == 1:
            ulo = np.uint64(lo)
            for j in range(np.uint64(m)):
                local[j] = vals[ulo + j]
        else:
            for j in range(m):
                for c in range(vals.shape[1]):
                    local[j, c] = vals[lo + j, c]
        u = 0
        j = 0
        while j < m:
            key = srt[j] >> sb
            slot = srt[j] & smask
            if vals.ndim == 1:
                vals[lo + u] = local[slot]
            else:
                for c in range(vals.shape[1]):
                    vals[lo + u, c] = local[slot, c]
            j += 1
            while j < m and (srt[j] >> sb) == key:
                slot = srt[j] & smask
                if vals.ndim == 1:
                    vals[lo + u] += local[slot]
                else:
                    for c in range(vals.shape[1]):
                        vals[lo + u, c] += local[slot, c]
                j += 1
            seg[u] = key  # u <= j: never overwrites a word still to be read from seg
            u += 1
        ucount[b] = u


@nb.njit(cache=True, nogil=True)
def _sort_part(t, nthreads, words, bucket_starts, thread_buckets, sb, nbits, ucount, hists, scratches):
    """Bucket range t of the bucketed route: sort each bucket's words in place (words[lo:lo+m])
    and count its distinct keys (ucount[b]); ``_output_part`` sums each run as it writes it, so
    the sums skip a write and a read of every value row.

    The sort is ``_reduce_part``'s, written out again: one kernel with both endings (a branch
    Numba prunes per route) cost the one-bucket route's first call ~50 ms more compile (fresh
    caches, seven pairs: 0.79 -> 0.84 s), and an inlined shared helper costs more than its code
    (see ``_reduce_part``).
    """
    b0 = thread_buckets[t]
    b1 = thread_buckets[t + 1]
    hist = hists[t]
    scratch = scratches[t]
    usb = np.uint64(sb)
    for b in range(b0, b1):
        lo = bucket_starts[b]
        m = bucket_starts[b + 1] - lo
        seg = words[lo:lo + m]
        # sort the bucket's words: sort.sort_bucket's radix sort, written out here rather than
        # inlined (Numba deep-copies an inlined helper's blocks, each with the helper's whole
        # variable scope, twice per call site: about 0.3 s of this kernel's compile; compiled as a
        # function of its own it cost as much). An LSD radix sort of the key bits above the slot,
        # all digit histograms in one pass; the sorted words are read from wherever the sort left
        # them. Small buckets take small digits rather than an insertion sort: that loop alone was
        # about a quarter of this kernel's compile time.
        in_tmp = False
        if m > 1:
            # the histograms' clear and prefix stay small next to m
            maxd = 4 if m <= 32 else (8 if m < 2048 else 10)
            npass = (nbits + maxd - 1) // maxd
            npass = npass if npass <= 8 else 8  # hists hold 8 digits of up to 10 bits
            digit = (nbits + npass - 1) // npass if npass else 1
            # digits and slots unsigned: a signed index costs a wraparound test per access
            dmask = (np.uint64(1) << np.uint64(digit)) - np.uint64(1)
            nb_ = np.uint64(1) << np.uint64(digit)
            for p in range(npass):
                for d in range(nb_):
                    hist[p, d] = 0
            for i in range(m):
                w = np.uint64(seg[i]) >> usb
                for p in range(npass):
                    hist[p, (w >> np.uint64(digit * p)) & dmask] += 1
            src = seg
            dst = scratch
            for p in range(npass):
                shift = np.uint64(sb + digit * p)
                h = hist[p]
                if h[(np.uint64(src[0]) >> shift) & dmask] == m:
                    continue  # every word has this digit: nothing moves
                run = 0
                for d in range(nb_):
                    c = h[d]
                    h[d] = run
                    run += c
                for i in range(m):
                    w = src[i]
                    d = (np.uint64(w) >> shift) & dmask
                    dst[np.uint64(h[d])] = w
                    h[d] += 1
                src, dst = dst, src
                in_tmp = not in_tmp
        u = 0
        prev = np.int64(-1)
        if in_tmp:  # the count and the copy back in one pass
            for j in range(m):
                w = scratch[j]
                seg[j] = w
                key = np.int64(w >> sb)
                u += key != prev
                prev = key
        else:
            for j in range(m):
                key = np.int64(seg[j] >> sb)
                u += key != prev
                prev = key
        ucount[b] = u


@nb.njit(cache=True, nogil=True, inline="always")
def _store_key(flat_idx, o, n_out, r, strides, shifts):
    """Output entry o's index: the linear key r unravelled (a shift where the stride is a power
    of two), dimension d streamed to flat_idx[d * n_out + o]."""
    row = o
    for d in range(strides.shape[0]):
        sh = shifts[d]
        if sh >= 0:
            x = r >> sh
            r -= x << sh
        else:
            x = r // strides[d]
            r -= x * strides[d]
        stream_store(flat_idx, row, x)
        row += n_out


NO_ROW = np.uint32(0xFFFFFFFF)
"""``dest`` of an entry ``_place_part`` summed (the by-position route needs n < 2**32 - 1)."""


@nb.njit(cache=True, nogil=True)
def _output_part(t, nthreads, words, vals, bucket_starts, thread_buckets, out_starts, low_bits, strides, shifts,
                 sb, locals_, local_starts, out_idx, out_val):
    """Bucket range t: each bucket b's sorted words (``_sort_part``: words[lo:lo+m],
    m = bucket_starts[b + 1] - lo) summed run by run in slot (= original) order, as
    ``_reduce_part`` sums them, and written from out_starts[b]: the key (bucket bits restored,
    unravelled) to out_idx, the sum to out_val. The bucket's values are first copied in order to
    the part's rows of locals_ (reads by slot are then cache hits).

    The output is written once, in order, and not read again here: streaming stores skip the read
    of each line that a cached store makes first (2M uniform entries, one thread: this phase
    ~1 ms faster of ~6). They go through flat views (row d of out_idx from d * n_out). A value row
    is summed in place in its first slot's local row, then stored."""
    n_out = np.uint64(out_idx.shape[1])
    flat_idx = out_idx.reshape(out_idx.size)
    flat_val = out_val.reshape(out_val.size)
    k = np.uint64(1 if vals.ndim == 1 else vals.shape[1])
    local = locals_[local_starts[t]:local_starts[t + 1]]
    smask = (np.int64(1) << sb) - 1
    one = np.uint64(1)  # uint64 + int64 is float64 in Numba
    for b in range(thread_buckets[t], thread_buckets[t + 1]):
        lo = np.uint64(bucket_starts[b])  # unsigned positions (see _reduce_part's bucket copy)
        m = np.uint64(bucket_starts[b + 1]) - lo
        if vals.ndim == 1:
            for j in range(m):
                local[j] = vals[lo + j]
        else:
            for j in range(m):
                for c in range(k):
                    local[j, c] = vals[lo + j, c]
        o = np.uint64(out_starts[b])
        high = np.int64(b) << low_bits
        j = np.uint64(0)
        while j < m:
            key = np.int64(words[lo + j] >> sb)
            s0 = np.int64(words[lo + j]) & smask
            j += one
            if vals.ndim == 1:
                acc = local[s0]
                while j < m and np.int64(words[lo + j] >> sb) == key:
                    acc += local[np.int64(words[lo + j]) & smask]
                    j += one
                stream_store(flat_val, o, acc)
            else:
                while j < m and np.int64(words[lo + j] >> sb) == key:
                    s1 = np.int64(words[lo + j]) & smask
                    for c in range(k):
                        local[s0, c] += local[s1, c]
                    j += one
                for c in range(k):
                    stream_store(flat_val, o * k + c, local[s0, c])
            _store_key(flat_idx, o, n_out, high | key, strides, shifts)
            o += one
    store_fence()


@nb.njit(cache=True, nogil=True)
def _place_part(t, nthreads, words, bucket_starts, thread_buckets, out_starts, low_bits, strides, shifts, sb,
                values, dest, out_idx, out_val):
    """By-position route, bucket range t: each bucket's sorted words (key's low bits << sb | input
    position, ``_sort_part``) give each run of equal keys its output row o, from out_starts[b]:
    the key (bucket bits restored, unravelled) goes to out_idx. An entry alone in its run gets
    dest[i] = o, and ``_move_rows_part`` moves its row; a run of several is summed here from the
    input rows, in input order (the order ``_output_part`` sums in), into out_val[o], and its
    entries get dest[i] = NO_ROW. dest (uint32) is written at random: 4 bytes an entry, not a row."""
    n_out = np.uint64(out_idx.shape[1])
    flat_idx = out_idx.reshape(out_idx.size)
    k = values.shape[1]
    pmask = (np.int64(1) << sb) - 1
    one = np.uint64(1)
    for b in range(thread_buckets[t], thread_buckets[t + 1]):
        lo = np.uint64(bucket_starts[b])
        m = np.uint64(bucket_starts[b + 1]) - lo
        o = np.uint64(out_starts[b])
        high = np.int64(b) << low_bits
        j = np.uint64(0)
        while j < m:
            w = np.int64(words[lo + j])
            key = w >> sb
            i0 = w & pmask
            j += one
            if j < m and (np.int64(words[lo + j]) >> sb) == key:
                for c in range(k):
                    out_val[o, c] = values[i0, c]
                dest[i0] = NO_ROW
                while j < m and (np.int64(words[lo + j]) >> sb) == key:
                    i1 = np.int64(words[lo + j]) & pmask
                    for c in range(k):
                        out_val[o, c] += values[i1, c]
                    dest[i1] = NO_ROW
                    j += one
            else:
                dest[i0] = o
            _store_key(flat_idx, o, n_out, high | key, strides, shifts)
            o += one
    store_fence()


@nb.njit(cache=True, nogil=True)
def _move_rows_part(t, nparts, values, dest, out_val):
    """By-position route, chunk t of the input: row i of ``values`` to row dest[i] of out_val
    (runs of one entry; dest[i] = NO_ROW marks a row ``_place_part`` summed). Every row is whole
    cache lines and out_val starts a line, so each line is one non-temporal vector store: the
    stores land at random rows, and no line is read before it is written."""
    lo, hi = part_range(t, nparts, values.shape[0])
    k = np.uint64(values.shape[1])
    line = 64 // values.itemsize
    flat = out_val.reshape(out_val.size)
    for i in range(lo, hi):
        d = dest[i]
        if d != NO_ROW:
            base = np.uint64(d) * k
            for c in range(0, values.shape[1], line):
                stream_line(flat, base + np.uint64(c), values, i, c)
    store_fence()


_SERIAL_BELOW = 1 << 15  # smaller inputs run as one part on the calling thread
_BUCKET_BITS = 12  # about 2**12 entries per MSD bucket (see coalesce_bucketed)
_PARTS_PER_THREAD = 4


def _aligned_empty(shape, dtype):
    """An uninitialised array whose first item starts a cache line."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(nbytes + 64, dtype=np.uint8)
    off = -raw.ctypes.data % 64
    return raw[off:off + nbytes].view(dtype).reshape(shape)


def _write_groups(offsets, bucket_starts, words, vals):
    """(lims, word buffers, value buffers) for the scatter's write-combining.

    Entry slots go in groups of whole cache lines of both the words and the values (16 slots
    with a 4-byte array, else 8). A chunk gathers its entries of a group it fills alone
    (slots lims[t, b, 0] <= j < lims[t, b, 1]) in bucket b's row of its buffers and stores the
    group with non-temporal stores once complete; the other slots are plain stores. With value
    rows, items of another size or arrays that do not start a line: no groups (empty lims).
    """
    nparts, nbuckets = offsets.shape
    size = min(words.itemsize, vals.itemsize)
    if (vals.ndim != 1 or vals.itemsize not in (4, 8) or words.ctypes.data % 64 or vals.ctypes.data % 64):
        return (np.zeros((nparts, nbuckets, 2), dtype=np.int64), np.empty((nparts, 0, 0), dtype=words.dtype),
                np.empty((nparts, 0, 0), dtype=vals.dtype))
    group = 64 // size
    ends = np.empty_like(offsets)
    ends[:-1] = offsets[1:]
    ends[-1] = bucket_starts[1:]
    lims = np.empty((nparts, nbuckets, 2), dtype=np.int64)
    lims[:, :, 0] = (offsets + (group - 1)) & -group
    lims[:, :, 1] = ends & -group
    return (lims, _aligned_empty((nparts, nbuckets, group), words.dtype),
            _aligned_empty((nparts, nbuckets, group), vals.dtype))


def _histogram(indices, strides, bound, values, vdst, nthreads, limits):
    """Step 1 of both bucketed routes: (nparts, low_bits, keybuf, offsets, bucket_starts, bad).

    Counts each chunk's entries per bucket (the top ``d1`` key bits) and checks the indices
    (IndexError before anything is written); ``values`` and ``vdst`` are passed through to
    ``_bucket_part`` only to pick the specialisation the scatter uses too.
    """
    n = indices.shape[1]
    # a few parts per thread, so that a thread the OS delays is covered by the others
    nparts = 1 if n < _SERIAL_BELOW else _PARTS_PER_THREAD * nthreads
    _, kb, _ = _sort.packed_plan(bound, n)
    # ~2000-4000 entries per bucket, not the sort's ~500-1000: fewer buckets make the MSD
    # scatter's write streams fit the caches, and the per-bucket sorts still run in L2
    # (2M uniform entries, 1 thread: scatter + reduce 72 -> 58 ms at ~2000; ~4000 a further
    # 2-3% of the call on the Xeon, 512 buckets)
    d1 = max(0, min(max(n - 1, 0).bit_length() - _BUCKET_BITS, 12, kb))
    low_bits = kb - d1
    hist = np.zeros((nparts, 1 << d1), dtype=np.int64)
    bad = np.zeros(nparts, dtype=np.int64)
    # scratch is allocated here, one slice per part: kernels that allocate compile Numba's
    # allocation routines too (a cold-cache cost); each part still works in its own buffers
    keybuf = np.empty((nparts, _BLOCK), dtype=np.int64)
    run_parts(_bucket_part, nparts, nthreads, False, indices, strides, limits, low_bits, hist, bad, keybuf, 0, False,
              _NO_WORDS32, _NO_WORDS64, values, vdst, _NO_WORDS64, _no_lims(nparts), _no_buf(nparts, np.uint32),
              _no_buf(nparts, np.int64), _no_buf(nparts, np.float64 if values is None else values.dtype))
    if bad.any():
        raise_out_of_bounds(indices, row_major_sizes(strides, bound))
    _sort.check_hist(hist, n)
    offsets, bucket_starts = _sort.bucket_offsets(hist)
    return nparts, low_bits, keybuf, offsets, bucket_starts, bad


_NO_WORDS32, _NO_WORDS64 = np.empty(0, dtype=np.uint32), np.empty(0, dtype=np.int64)


def _no_lims(nparts):
    return np.zeros((nparts, 0, 2), dtype=np.int64)


def _no_buf(nparts, dtype):
    return np.empty((nparts, 0, 0), dtype=dtype)


def _sort_buckets(sorted_words, bucket_starts, largest, nparts, nthreads, sb, low_bits):
    """Step 3 of both bucketed routes: each bucket's words sorted in place by key, in parallel.
    ``largest``: the largest bucket's size (each part's scratch holds it).

    Returns (part_buckets, out_starts): each part's bucket range, and where each bucket's
    distinct keys start in the output (out_starts[-1] is their count)."""
    nbuckets = bucket_starts.shape[0] - 1
    part_buckets = _sort.split_buckets(bucket_starts, nparts)
    ucount = np.zeros(nbuckets, dtype=np.int64)
    hists = np.empty((nparts, 8, 1024), dtype=np.int64)
    scratches = np.empty((nparts, largest), dtype=sorted_words.dtype)
    run_parts(_sort_part, nparts, nthreads, sorted_words, bucket_starts, part_buckets, sb, low_bits, ucount,
              hists, scratches)
    out_starts = np.zeros(nbuckets + 1, dtype=np.int64)
    np.cumsum(ucount, out=out_starts[1:])
    return part_buckets, out_starts


def coalesce_bucketed(indices, strides, bound, values, nthreads, limits):
    """The bucketed route: values travel with their keys, so no random gathers.

    1. histogram the top ``d1`` key bits (keys computed from the index rows);
    2. MSD scatter, stable: each entry's word ``(low key bits) << sb | slot in
       bucket`` and its value row go to the same slot. The bucket stands for
       the top key bits, the slot for the original order. Words are 32 bits
       when that fits, else 64;
    3. per bucket, in cache: sort the words and count the distinct keys;
    4. per bucket: sum each run of equal keys in slot (= original) order as it
       is written to the output, the keys unravelled.
    Keys never straddle buckets, so every phase splits by chunks or buckets.
    """
    n = indices.shape[1]
    k = values.shape[1]
    # one value per entry (the common case) travels as a 1-D array: the kernels' loops over a
    # value row's k columns are then not compiled (a fifth of their compile time), and k > 1
    # (complex pairs, dense dimensions) compiles the 2-D specialisation when first met
    def vshape(rows):
        return (rows,) if k == 1 else (rows, k)

    values = values.reshape(vshape(n))
    nparts, low_bits, keybuf, offsets, bucket_starts, bad = _histogram(
        indices, strides, bound, values, np.empty(vshape(0), dtype=values.dtype), nthreads, limits)
    sizes = np.diff(bucket_starts)
    biggest = int(sizes.max())
    sb = max(biggest - 1, 0).bit_length()
    wide = low_bits + sb > 32
    # the two temporaries as large as the input: reused memory, not fresh pages (scratch.py)
    sorted_words = _scratch.take(n, np.int64 if wide else np.uint32)
    vals = _scratch.take(vshape(n), values.dtype)
    lims, wbuf, vbuf = _write_groups(offsets, bucket_starts, sorted_words, vals)
    no_buf32, no_buf64 = _no_buf(nparts, np.uint32), _no_buf(nparts, np.int64)
    run_parts(_bucket_part, nparts, nthreads, True, indices, strides, limits, low_bits, offsets, bad, keybuf, sb, wide,
              _NO_WORDS32 if wide else sorted_words, sorted_words if wide else _NO_WORDS64, values, vals,
              bucket_starts, lims, no_buf32 if wide else wbuf, wbuf if wide else no_buf64, vbuf)
    part_buckets, out_starts = _sort_buckets(sorted_words, bucket_starts, biggest, nparts, nthreads, sb, low_bits)
    # each part's value buffer holds its own largest bucket (the sum over parts is at most n)
    local_starts = np.zeros(nparts + 1, dtype=np.int64)
    for t in range(nparts):
        b0, b1 = part_buckets[t], part_buckets[t + 1]
        local_starts[t + 1] = local_starts[t] + (int(sizes[b0:b1].max()) if b1 > b0 else 0)
    locals_ = np.empty(vshape(int(local_starts[nparts])), dtype=values.dtype)
    ndim = strides.shape[0]
    m = int(out_starts[-1])
    out_idx = np.empty((ndim, m), dtype=np.int64)
    out_val = np.empty(vshape(m), dtype=values.dtype)
    run_parts(_output_part, nparts, nthreads, sorted_words, vals, bucket_starts, part_buckets, out_starts, low_bits,
              strides, stride_shifts(strides), sb, locals_, local_starts, out_idx, out_val)
    _scratch.give(sorted_words, vals)
    return out_idx, out_val.reshape(m, k)


def rows_move_whole(values):
    """Whether ``coalesce_by_position`` takes these (n, k) values: rows of whole cache lines
    (k * itemsize a multiple of 64) of 4- or 8-byte integers or floats, unit-stride within a row,
    fewer than 2**32 - 1 of them (``dest`` is uint32)."""
    return (values.ndim == 2 and values.dtype.kind in "iuf" and values.itemsize in (4, 8)
            and values.shape[1] * values.itemsize % 64 == 0 and values.strides[1] == values.itemsize
            and values.shape[0] < NO_ROW)


def coalesce_by_position(indices, strides, bound, values, nthreads, limits):
    """The bucketed route for value rows of whole cache lines (``rows_move_whole``): each row
    moves once, input to output.

    The bucketed route moves every value row twice (to its bucket, then to the output), and
    for wide rows those moves are most of the memory traffic. Here the scatter moves only the
    words, whose low bits are the entry's position in the input instead of its slot (the
    scatter is stable, so a bucket's positions still rise); the buckets are sorted as there;
    ``_place_part`` writes the keys and each entry's output row (``dest``), summing runs of
    equal keys itself, in input order; and ``_move_rows_part`` reads the input rows in order
    and stores each whole, past the caches, at its output row. Bit-identical to the bucketed
    route. The caller checks that keys and positions pack into 63 bits (``fits_packed``).
    """
    n = indices.shape[1]
    k = values.shape[1]
    nparts, low_bits, keybuf, offsets, bucket_starts, bad = _histogram(
        indices, strides, bound, None, _NO_WORDS64, nthreads, limits)
    sb = max(n - 1, 0).bit_length()
    wide = low_bits + sb > 32
    sorted_words = _scratch.take(n, np.int64 if wide else np.uint32)
    run_parts(_bucket_part, nparts, nthreads, True, indices, strides, limits, low_bits, offsets, bad, keybuf, sb, wide,
              _NO_WORDS32 if wide else sorted_words, sorted_words if wide else _NO_WORDS64, None, _NO_WORDS64,
              bucket_starts, _no_lims(nparts), _no_buf(nparts, np.uint32), _no_buf(nparts, np.int64),
              _no_buf(nparts, np.float64))
    part_buckets, out_starts = _sort_buckets(sorted_words, bucket_starts, int(np.diff(bucket_starts).max()), nparts,
                                             nthreads, sb, low_bits)
    m = int(out_starts[-1])
    out_idx = np.empty((strides.shape[0], m), dtype=np.int64)
    out_val = _aligned_empty((m, k), values.dtype)  # rows start lines: each line one whole store
    dest = _scratch.take(n, np.uint32)
    run_parts(_place_part, nparts, nthreads, sorted_words, bucket_starts, part_buckets, out_starts, low_bits,
              strides, stride_shifts(strides), sb, values, dest, out_idx, out_val)
    run_parts(_move_rows_part, nparts, nthreads, values, dest, out_val)
    _scratch.give(sorted_words, dest)
    return out_idx, out_val


def coalesce_one_bucket(indices, strides, bound, values, limits):
    """The bucketed route for inputs too small to split (one part): all entries in one bucket.

    The words ``key << sb | position`` come from a few NumPy operations (with the
    bounds check), and so does the output (the distinct keys unravelled), so the
    call compiles only ``_reduce_part``: the histogram and scatter kernel and the
    output kernel, about 55% of the bucketed route's compile time, are for
    inputs that need buckets. The sort and the ordered sums are the bucketed
    route's own (bit-identical results), and small inputs run faster this way
    (no histogram, no scatter, fewer driver steps).
    """
    ndim, n = indices.shape
    k = values.shape[1]
    vshape = (lambda rows: (rows,)) if k == 1 else (lambda rows: (rows, k))
    # uint64(index) >= limit: negative or too large, checked before anything is written
    if n and ndim and bool((indices.view(np.uint64).max(axis=1) >= limits).any()):
        raise_out_of_bounds(indices, row_major_sizes(strides, bound))
    kb = max(int(bound) - 1, 0).bit_length()
    sb = max(n - 1, 0).bit_length()
    words = np.zeros(n, dtype=np.int64) if ndim == 0 else indices[0] * strides[0]
    for d in range(1, ndim):
        words += indices[d] if strides[d] == 1 else indices[d] * strides[d]
    words <<= sb
    words |= np.arange(n, dtype=np.int64)
    # the kernel sums in place, over its input: a copy (values may be the caller's array)
    vals = values.reshape(vshape(n)).copy()
    bucket_starts = np.array([0, n], dtype=np.int64)  # also the part's rows of the value scratch
    ucount = np.zeros(1, dtype=np.int64)
    run_parts(_reduce_part, 1, 1, words, vals, bucket_starts, np.array([0, 1], dtype=np.int64), sb, kb, ucount,
              np.empty((1, 8, 1024), dtype=np.int64), np.empty((1, n), dtype=np.int64),
              np.empty(vshape(n), dtype=values.dtype), bucket_starts)
    m = int(ucount[0])
    # the distinct keys are words[:m] (ascending), their sums vals[:m]: unravel the keys in NumPy
    out_idx = np.empty((ndim, m), dtype=np.int64)
    r = words[:m]  # the remainder, in place
    for d in range(ndim - 1):
        s = int(strides[d])
        np.floor_divide(r, s, out=out_idx[d])
        np.multiply(out_idx[d], s, out=out_idx[d + 1])  # the next row as scratch
        np.subtract(r, out_idx[d + 1], out=r)
    if ndim and strides[ndim - 1] != 1:  # never for the strides of a shape; kept general
        np.floor_divide(r, strides[ndim - 1], out=out_idx[ndim - 1])
    elif ndim:
        out_idx[ndim - 1] = r
    out_val = vals if m == n else vals[:m].copy()  # a copy: no hold on the larger buffer
    return out_idx, out_val.reshape(m, k)


def coalesce_linear(indices, strides, bound, values, nthreads):
    """(indices, values) sorted by linear index with duplicates summed in original order.

    ``values`` is 2-D (n, k) in its accumulation dtype; ``bound`` the exclusive
    bound of the linear index. The route is chosen here, in Python, so that only
    the kernels a call needs are compiled. An index outside the shape (an array
    built with ``check=False``) raises IndexError before anything is written.
    """
    n = indices.shape[1]
    limits = size_limits(row_major_sizes(strides, bound))
    # a word holds the key bits below the bucket and the slot bits: at most
    # bits(bound - 1) + bits(n - 1), the packed-word condition
    if _sort.fits_packed(bound, n):
        if n < _SERIAL_BELOW:
            return coalesce_one_bucket(indices, strides, bound, values, limits)
        if rows_move_whole(values):
            return coalesce_by_position(indices, strides, bound, values, nthreads, limits)
        return coalesce_bucketed(indices, strides, bound, values, nthreads, limits)
    out_idx, sums, bad = coalesce_pairs(indices, strides, bound, values, nthreads, limits)
    if bad:
        raise_out_of_bounds(indices, row_major_sizes(strides, bound))
    return out_idx, sums


def coalesce_pairs(indices, strides, bound, values, nthreads, limits):
    """The fallback when keys and positions do not pack into 63 bits: (indices, sums, bad)."""
    ndim = indices.shape[0]
    keys, bad = _li.linear_index_checked(indices, strides, limits, nthreads)
    if bad:
        return np.empty((ndim, 0), dtype=np.int64), np.empty((0, values.shape[1]), values.dtype), bad
    sorted_keys, perm = _sort.sort_pairs_lsd(keys, bound, nthreads)
    starts = _seg.segment_starts(sorted_keys)
    sums = _seg.segment_sum(values, perm, starts, True, nthreads)
    return _li.unravel_index(sorted_keys[starts[:-1]], strides, nthreads), sums, bad
