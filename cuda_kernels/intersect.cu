// Matching a source's keys against a sorted probe, and gathering what matched (SPEC 4).
#include "coo_common.cuh"

// One thread per source entry i (any order): binary search of src_keys[i] in
// the sorted probe; first[i] = lower bound (insertion point), count[i] = matches.
extern "C" __global__ void coo_intersect_match(
        const i64* __restrict__ src_keys, const i64* __restrict__ probe_keys,
        i64 n, i64 m, i64* __restrict__ first, i64* __restrict__ count) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    i64 k = src_keys[i];
    i64 f = coo_lower_bound(probe_keys, 0, m, k);
    first[i] = f;
    count[i] = coo_upper_bound(probe_keys, f, m, k) - f;
}

// One thread per entry i: flags[i] = (count[i] != 0); the caller scans flags
// (inclusive) into pos for coo_intersect_compact.
extern "C" __global__ void coo_intersect_flag(
        const i64* __restrict__ count, i64 n, i64* __restrict__ flags) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    flags[i] = count[i] != 0 ? 1 : 0;
}

// One thread per entry i: a matched entry writes (i, first[i], count[i]) to
// slot pos[i] - 1, so rows lists the matched positions in ascending order.
extern "C" __global__ void coo_intersect_compact(
        const i64* __restrict__ first, const i64* __restrict__ count, const i64* __restrict__ pos,
        i64 n, i64* __restrict__ rows, i64* __restrict__ first_out, i64* __restrict__ count_out) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    if (count[i] == 0) return;
    i64 u = pos[i] - 1;
    rows[u] = i;
    first_out[u] = first[i];
    count_out[u] = count[i];
}

// One thread per (output row i, column c): the sum of the matched probe rows
// values[perm[j]], j = first[i] .. first[i]+count[i]-1, added in that order.
template <typename T>
__global__ void coo_intersect_probe_sum(
        const T* __restrict__ values, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ first, const i64* __restrict__ count,
        i64 m, i64 k, T* __restrict__ out) {
    i64 t = coo_thread_id();
    if (t >= m * k) return;
    i64 i = t / k, c = t - i * k;
    i64 f = first[i], cnt = count[i];
    if (cnt == 0) { out[t] = T(0); return; }
    T acc = values[(has_perm ? perm[f] : f) * k + c];
    for (i64 j = f + 1; j < f + cnt; ++j) acc += values[(has_perm ? perm[j] : j) * k + c];
    out[t] = acc;
}

// One thread per (output row i, column c): out[i, c] = src[r, c] * (ordered sum
// of the matched probe rows), r = rows[i] (or i); zero where count[i] == 0.
// One type throughout; products are rounded alone (coo_mul: no FMA).
template <typename T>
__global__ void coo_intersect_multiply_matched(
        const T* __restrict__ src, const i64* __restrict__ rows, i64 has_rows,
        const T* __restrict__ probe, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ first, const i64* __restrict__ count, i64 m, i64 k, T* __restrict__ out) {
    i64 t = coo_thread_id();
    if (t >= m * k) return;
    i64 i = t / k, c = t - i * k;
    i64 f = first[i], cnt = count[i];
    if (cnt == 0) { out[t] = coo_zero<T>(); return; }
    T acc = probe[(has_perm ? perm[f] : f) * k + c];
    for (i64 j = f + 1; j < f + cnt; ++j) acc = coo_add(acc, probe[(has_perm ? perm[j] : j) * k + c]);
    i64 r = has_rows ? rows[i] : i;
    out[t] = coo_mul(src[r * k + c], acc);
}

// One thread per (sparse dim a, output column i): out[a, i] = indices[a, rows[i]];
// writes are coalesced along i.
extern "C" __global__ void coo_intersect_gather_columns(
        const i64* __restrict__ indices, const i64* __restrict__ rows,
        i64 d, i64 n, i64 m, i64* __restrict__ out) {
    i64 t = coo_thread_id();
    if (t >= d * m) return;
    i64 a = t / m, i = t - a * m;
    out[t] = indices[a * n + rows[i]];
}
