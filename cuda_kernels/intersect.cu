// Matching a source's keys against a sorted probe, and gathering what matched (SPEC 4).
//
// Reads through positions (rows, perm, first/count) are bounds-checked: a
// position outside its array contributes nothing, reports COO_ERR_GATHER in
// *err, and never reads out of bounds (a COO built with check=False, or
// lying flags, may give any position).
#include "coo_common.cuh"

// One thread per source entry i (any order): binary search of src_keys[i] in
// the sorted probe; first[i] = lower bound (insertion point), count[i] =
// matches, found by galloping from first[i] (a unique probe costs one probe
// read, a run of c equal keys about 2 log2(c)).
extern "C" __global__ void coo_intersect_match(
        const i64* __restrict__ src_keys, const i64* __restrict__ probe_keys,
        i64 n, i64 m, i64* __restrict__ first, i64* __restrict__ count) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    i64 k = src_keys[i];
    i64 f = coo_lower_bound(probe_keys, 0, m, k);
    first[i] = f;
    count[i] = coo_gallop_end(probe_keys, f, m, k) - f;
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

// The ordered sum of the probe rows values[perm[j]] (values[j] without perm),
// j = f .. f+cnt-1, column c, k columns; *ok false when nothing valid was read.
template <typename T>
__device__ __forceinline__ T coo_probe_run_sum(
        const T* __restrict__ values, i64 nprobe, const i64* __restrict__ perm, i64 has_perm,
        i64 f, i64 cnt, i64 k, i64 c, u64* __restrict__ err, bool* ok) {
    *ok = false;
    if (f < 0 || cnt < 0 || cnt > nprobe - f) {  // a run outside the probe
        coo_report(err, COO_ERR_GATHER);
        return coo_zero<T>();
    }
    return coo_ordered_sum(values, nprobe, has_perm ? perm : nullptr, f, f + cnt, k, c, err, ok);
}

// One thread per (output row i, column c): the sum of the matched probe rows
// values[perm[j]], j = first[i] .. first[i]+count[i]-1, added in that order.
// With owner (shared runs, see below) only the row that claimed its run sums it.
template <typename T>
__global__ void coo_intersect_probe_sum(
        const T* __restrict__ values, i64 nprobe, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ first, const i64* __restrict__ count, const i64* __restrict__ owner,
        i64 m, i64 k, T* __restrict__ out, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= m * k) return;
    i64 i = t / k, c = t - i * k;
    i64 f = first[i];
    if (owner && count[i] > 0 && coo_in_range(f, nprobe) && owner[f] != i) return;  // copied later
    bool ok;
    out[t] = coo_probe_run_sum(values, nprobe, perm, has_perm, f, count[i], k, c, err, &ok);
}

// One thread per (output row i, column c): out[i, c] = src[r, c] * (ordered sum
// of the matched probe rows), r = rows[i] (or i); zero where count[i] == 0.
// One type throughout; products are rounded alone (coo_mul: no FMA).
template <typename T>
__global__ void coo_intersect_multiply_matched(
        const T* __restrict__ src, i64 nsrc, const i64* __restrict__ rows, i64 has_rows,
        const T* __restrict__ probe, i64 nprobe, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ first, const i64* __restrict__ count, i64 m, i64 k, T* __restrict__ out,
        u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= m * k) return;
    i64 i = t / k, c = t - i * k;
    bool ok;
    T acc = coo_probe_run_sum(probe, nprobe, perm, has_perm, first[i], count[i], k, c, err, &ok);
    i64 r = has_rows ? rows[i] : i;
    if (!ok || !coo_in_range(r, nsrc)) {
        if (ok) coo_report(err, COO_ERR_GATHER);
        out[t] = coo_zero<T>();
        return;
    }
    out[t] = coo_mul(src[r * k + c], acc);
}

// ---- probe runs shared by several source rows (a source with duplicates):
// each run is summed once. Three launches, no atomics, deterministic results:
// 1. coo_intersect_claim_runs: row i with a match writes i into owner[first[i]]
//    (rows sharing a run race; any one wins, and the run's ordered sum is the
//    same whoever computes it);
// 2. coo_intersect_probe_sum (owner given): only the owner row sums the run;
// 3. coo_intersect_copy_runs: the other rows copy the owner's row.

// One thread per output row i: claims the run first[i] (count[i] > 0).
extern "C" __global__ void coo_intersect_claim_runs(
        const i64* __restrict__ first, const i64* __restrict__ count, i64 m, i64 nprobe,
        i64* __restrict__ owner) {
    i64 i = coo_thread_id();
    if (i >= m) return;
    i64 f = first[i];
    if (count[i] > 0 && coo_in_range(f, nprobe)) owner[f] = i;
}

// One thread per (output row i, column c) whose row did not compute its run:
// out[i, c] = out[owner of the run, c] (a bit copy); zero where count[i] == 0.
template <typename T>
__global__ void coo_intersect_copy_runs(
        const i64* __restrict__ owner, const i64* __restrict__ first, const i64* __restrict__ count,
        i64 m, i64 k, i64 nprobe, T* __restrict__ out) {
    i64 t = coo_thread_id();
    if (t >= m * k) return;
    i64 i = t / k, c = t - i * k;
    i64 f = first[i];
    if (count[i] <= 0 || !coo_in_range(f, nprobe)) return;  // written by the sum kernel already
    i64 o = owner[f];
    if (o != i && coo_in_range(o, m)) out[t] = out[o * k + c];
}

// One thread per (output row i, column c): out[i, c] = src[r, c] * sums[i, c]
// (r = rows[i] or i), zero where count[i] == 0: the product of a shared-run sum.
template <typename T>
__global__ void coo_intersect_multiply_sums(
        const T* __restrict__ src, i64 nsrc, const i64* __restrict__ rows, i64 has_rows,
        const T* __restrict__ sums, const i64* __restrict__ count, i64 m, i64 k, T* __restrict__ out,
        u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= m * k) return;
    i64 i = t / k, c = t - i * k;
    i64 r = has_rows ? rows[i] : i;
    if (count[i] <= 0 || !coo_in_range(r, nsrc)) {
        if (count[i] > 0 && c == 0) coo_report(err, COO_ERR_GATHER);
        out[t] = coo_zero<T>();
        return;
    }
    out[t] = coo_mul(src[r * k + c], sums[t]);
}
