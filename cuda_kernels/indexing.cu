// Indexing kernels (a[key]): gather by mask, binary-search row ranges, range expansion.
#include "coo_common.cuh"

// One thread per entry i: flags[i] = mask[i] (0 or 1); the caller scans flags
// (inclusive) into pos for coo_indexing_mask_write.
extern "C" __global__ void coo_indexing_mask_flag(
        const unsigned char* __restrict__ mask, i64 n, i64* __restrict__ flags) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    flags[i] = mask[i] != 0 ? 1 : 0;
}

// One thread per entry i: a kept entry writes its position to slot pos[i] - 1,
// so out lists the kept positions in ascending order.
extern "C" __global__ void coo_indexing_mask_write(
        const unsigned char* __restrict__ mask, const i64* __restrict__ pos, i64 n, i64* __restrict__ out) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    if (mask[i] != 0) out[pos[i] - 1] = i;
}

// One thread per query range q: start[q] = lower bound of lo[q] in the sorted
// keys, stop[q] = lower bound of hi[q] (never before start[q]).
extern "C" __global__ void coo_indexing_search_ranges(
        const i64* __restrict__ keys, i64 n, const i64* __restrict__ lo, const i64* __restrict__ hi,
        i64 m, i64* __restrict__ start, i64* __restrict__ stop) {
    i64 q = coo_thread_id();
    if (q >= m) return;
    i64 s = coo_lower_bound(keys, 0, n, lo[q]);
    start[q] = s;
    stop[q] = hi[q] > lo[q] ? coo_lower_bound(keys, s, n, hi[q]) : s;
}

// One thread per output position p: its owner i is the first range with
// ends[i] > p (ends: inclusive scan of the counts), rows[p] = start[i] + p - (ends[i] - count[i]).
// Range i holding output position p, and p's source row start[i] + p - (ends[i] - count[i]).
__device__ __forceinline__ i64 coo_indexing_source(const i64* start, const i64* ends, i64 m, i64 p, i64* owner) {
    i64 i = coo_upper_bound(ends, 0, m, p);
    *owner = i;
    return start[i] + (p - (i > 0 ? ends[i - 1] : 0));
}

extern "C" __global__ void coo_indexing_expand(
        const i64* __restrict__ start, const i64* __restrict__ ends, i64 m, i64 total,
        i64* __restrict__ rows, i64* __restrict__ owner) {
    i64 p = coo_thread_id();
    if (p >= total) return;
    i64 i;
    rows[p] = coo_indexing_source(start, ends, m, p, &i);
    owner[p] = i;
}

// One thread per output position p (owner i by binary search in ends, as in
// coo_indexing_expand): out[0, p] = i, out[1 + r, p] = indices[r, src], and
// the k value words of row src, src = start[i] + p - (ends[i] - count[i]).
template <typename T>
__global__ void coo_indexing_take_ranges(
        const i64* __restrict__ indices, i64 d, i64 n, const T* __restrict__ values, i64 k,
        const i64* __restrict__ start, const i64* __restrict__ ends, i64 m, i64 total,
        i64* __restrict__ out, T* __restrict__ vals) {
    i64 p = coo_thread_id();
    if (p >= total) return;
    i64 i;
    i64 src = coo_indexing_source(start, ends, m, p, &i);
    out[p] = i;
    for (i64 r = 0; r < d; ++r) out[(r + 1) * total + p] = indices[r * n + src];
    for (i64 c = 0; c < k; ++c) vals[p * k + c] = values[src * k + c];
}
