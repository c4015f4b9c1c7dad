// Segments of equal sorted keys, and deterministic segmented sums (no atomics).
#include "coo_common.cuh"

// One thread: out[0] = *err and *err = 0 in one atomic step, queued on the caller's stream
// behind its kernels. A separate read and clear would lose (or blame on the wrong call) a bit
// that a kernel of another stream ORs in between them.
extern "C" __global__ void coo_segment_take_errors(u64* __restrict__ err, u64* __restrict__ out) {
    if (coo_thread_id() == 0) out[0] = atomicExch(err, 0ULL);
}

// One thread per sorted key i: flags[i] = 1 where a new key starts, else 0.
// The caller scans flags (inclusive) into positions for coo_segment_starts_write.
extern "C" __global__ void coo_segment_starts_flag(
        const i64* __restrict__ sorted_keys, i64 n, i64* __restrict__ flags) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    flags[i] = (i == 0 || sorted_keys[i] != sorted_keys[i - 1]) ? 1 : 0;
}

// One thread per sorted key i: a segment head writes its position to
// starts[pos[i] - 1]; thread 0 also writes the end marker starts[nseg] = n.
extern "C" __global__ void coo_segment_starts_write(
        const i64* __restrict__ sorted_keys, const i64* __restrict__ pos,
        i64 n, i64 nseg, i64* __restrict__ starts) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    if (i == 0) starts[nseg] = n;
    if (i == 0 || sorted_keys[i] != sorted_keys[i - 1]) starts[pos[i] - 1] = i;
}

// One thread per (segment s, column c): out[s, c] = sum of values[perm[j], c],
// j from starts[s] to starts[s+1]-1, added sequentially in that order (bit-exact).
// A segment outside [0, n] or a perm entry outside [0, n) is reported and
// contributes nothing (the kernel never reads out of bounds).
template <typename T>
__global__ void coo_segment_sum_reduce(
        const T* __restrict__ values, i64 n, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ starts, i64 nseg, i64 k, T* __restrict__ out, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= nseg * k) return;
    i64 s = t / k, c = t - s * k;
    i64 lo = starts[s], hi = starts[s + 1];
    if (!(0 <= lo && lo < hi && hi <= n)) {
        if (c == 0) coo_report(err, COO_ERR_ORDER);
        out[t] = T(0);
        return;
    }
    bool any;
    out[t] = coo_ordered_sum(values, n, has_perm ? perm : nullptr, lo, hi, k, c, err, &any);
}
