// Indexing kernels (a[key]): gather by mask, binary-search row ranges, range expansion.
//
// Memory safety (docs/cuda.md, "Out-of-range input"): every read or write
// through a data-dependent index is checked; what is out of range reads as
// zero or is not written, and a bit is ORed into the error word *err.
#include "coo_common.cuh"

// One thread per entry i: flags[i] = mask[i] (0 or 1); the caller scans flags
// (inclusive) into pos for coo_indexing_mask_write.
extern "C" __global__ void coo_indexing_mask_flag(
        const unsigned char* __restrict__ mask, i64 n, i64* __restrict__ flags) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    flags[i] = mask[i] != 0 ? 1 : 0;
}

// One thread per entry i: a kept entry writes its position to slot pos[i] - 1
// of out (m slots), so out lists the kept positions in ascending order. A slot
// outside [0, m) (pos not the scan of this mask) is skipped and reported.
extern "C" __global__ void coo_indexing_mask_write(
        const unsigned char* __restrict__ mask, const i64* __restrict__ pos, i64 n, i64 m,
        i64* __restrict__ out, u64* __restrict__ err) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    if (mask[i] == 0) return;
    i64 slot = pos[i] - 1;
    if (!coo_in_range(slot, m)) {
        coo_report(err, COO_ERR_SCATTER);
        return;
    }
    out[slot] = i;
}

// One thread per query range q: start[q] = lower bound of lo[q] in the sorted
// keys, stop[q] = lower bound of hi[q] (never before start[q]). The searches
// stay inside [0, n) whatever the keys hold (unsorted keys give wrong bounds,
// never a wild read).
extern "C" __global__ void coo_indexing_search_ranges(
        const i64* __restrict__ keys, i64 n, const i64* __restrict__ lo, const i64* __restrict__ hi,
        i64 m, i64* __restrict__ start, i64* __restrict__ stop) {
    i64 q = coo_thread_id();
    if (q >= m) return;
    i64 s = coo_lower_bound(keys, 0, n, lo[q]);
    start[q] = s;
    stop[q] = hi[q] > lo[q] ? coo_lower_bound(keys, s, n, hi[q]) : s;
}

// Range i holding output position p (ends: inclusive scan of the counts; the
// first i with ends[i] > p), and p's source row start[i] + p - (ends[i] - count[i]).
// Returns false (and reports) when no range holds p: negative counts make
// ends non-monotonic.
__device__ __forceinline__ bool coo_indexing_source(const i64* start, const i64* ends, i64 m, i64 p,
                                                     i64* owner, i64* src, u64* err) {
    i64 i = coo_upper_bound(ends, 0, m, p);
    if (!coo_in_range(i, m)) {
        coo_report(err, COO_ERR_GATHER);
        *owner = -1;
        *src = -1;
        return false;
    }
    *owner = i;
    *src = coo_add_wrap(start[i], p - (i > 0 ? ends[i - 1] : 0));
    return true;
}

// One thread per output position p: rows[p] = its source row, owner[p] = its range.
extern "C" __global__ void coo_indexing_expand(
        const i64* __restrict__ start, const i64* __restrict__ ends, i64 m, i64 total,
        i64* __restrict__ rows, i64* __restrict__ owner, u64* __restrict__ err) {
    i64 p = coo_thread_id();
    if (p >= total) return;
    i64 i, src;
    coo_indexing_source(start, ends, m, p, &i, &src, err);
    rows[p] = src;
    owner[p] = i;
}

// One thread per output position p (owner i and source row src as in
// coo_indexing_expand): out[0, p] = i, out[1 + r, p] = indices[r, src], and
// the k value words of row src. A source row outside [0, n) gives zeros and
// reports COO_ERR_GATHER.
template <typename T>
__global__ void coo_indexing_take_ranges(
        const i64* __restrict__ indices, i64 d, i64 n, const T* __restrict__ values, i64 k,
        const i64* __restrict__ start, const i64* __restrict__ ends, i64 m, i64 total,
        i64* __restrict__ out, T* __restrict__ vals, u64* __restrict__ err) {
    i64 p = coo_thread_id();
    if (p >= total) return;
    i64 i, src;
    bool ok = coo_indexing_source(start, ends, m, p, &i, &src, err);
    if (ok && !coo_in_range(src, n)) {
        coo_report(err, COO_ERR_GATHER);
        ok = false;
    }
    out[p] = i;
    for (i64 r = 0; r < d; ++r) out[(r + 1) * total + p] = ok ? indices[r * n + src] : 0;
    for (i64 c = 0; c < k; ++c) vals[p * k + c] = ok ? values[src * k + c] : T(0);
}
