// Ordered segment reductions for the reductions (SPEC 9): products, min/max, arg-min/max.
// No atomics: one thread owns one (segment, column) and visits the segment's
// entries in perm order, the same loop as coosparse/_kernels/numba/reduce.py, so the
// results are bit-identical to the Numba layer's.
//
// Memory safety (docs/cuda.md, "Out-of-range input"): a segment whose bounds
// are not 0 <= lo < hi <= n is reported (COO_ERR_ORDER) and its output is
// zero; a perm entry outside [0, n) is reported (COO_ERR_GATHER) and skipped.
// Nothing is read or written out of bounds, whatever starts and perm hold.
#include "coo_common.cuh"

// The segment [lo, hi) of thread (s, c), checked; false (reported once per
// segment, by its column-0 thread) when the bounds are not 0 <= lo < hi <= n.
__device__ __forceinline__ bool coo_reduce_segment(const i64* __restrict__ starts, i64 s, i64 c, i64 n,
                                                   i64* lo, i64* hi, u64* __restrict__ err) {
    *lo = starts[s];
    *hi = starts[s + 1];
    if (0 <= *lo && *lo < *hi && *hi <= n) return true;
    if (c == 0) coo_report(err, COO_ERR_ORDER);
    return false;
}

// Visits the segment in order: f(r, values[r * k + c]) for r = perm[j] (j when
// perm is null), j = lo .. hi-1, until f returns false. A row outside [0, n)
// is skipped and reported by the column-0 thread (every column meets it).
template <typename T, typename F>
__device__ __forceinline__ void coo_reduce_visit(const T* __restrict__ values, i64 n, const i64* __restrict__ perm,
                                                 i64 lo, i64 hi, i64 k, i64 c, u64* __restrict__ err, F f) {
    for (i64 j = lo; j < hi; ++j) {
        i64 r = perm ? perm[j] : j;
        if (!coo_in_range(r, n)) {
            if (c == 0) coo_report(err, COO_ERR_GATHER);
            continue;
        }
        if (!f(r, values[r * k + c])) return;
    }
}

// One thread per (segment s, column c): out[s, c] = product of values[perm[j], c],
// j from starts[s] to starts[s+1]-1, multiplied sequentially in that order.
template <typename T>
__global__ void coo_reduce_segment_prod(
        const T* __restrict__ values, i64 n, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ starts, i64 nseg, i64 k, T* __restrict__ out, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= nseg * k) return;
    i64 s = t / k, c = t - s * k, lo, hi;
    T acc = coo_zero<T>();
    bool first = true;
    if (coo_reduce_segment(starts, s, c, n, &lo, &hi, err)) {
        coo_reduce_visit(values, n, has_perm ? perm : nullptr, lo, hi, k, c, err, [&](i64, T v) {
            acc = first ? v : coo_mul(acc, v);
            first = false;
            return true;
        });
    }
    out[t] = acc;
}

// One thread per (segment s, column c): the max (is_max) or min of the segment,
// visited in perm order; the first NaN met is the result (NumPy's rule).
template <typename T>
__global__ void coo_reduce_segment_minmax(
        const T* __restrict__ values, i64 n, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ starts, i64 nseg, i64 k, i64 is_max, T* __restrict__ out,
        u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= nseg * k) return;
    i64 s = t / k, c = t - s * k, lo, hi;
    T acc = T(0);
    bool first = true;
    if (coo_reduce_segment(starts, s, c, n, &lo, &hi, err)) {
        coo_reduce_visit(values, n, has_perm ? perm : nullptr, lo, hi, k, c, err, [&](i64, T v) {
            if (first || v != v || (is_max ? (v > acc) : (v < acc))) acc = v;
            first = false;
            return v == v;  // a NaN ends the visit
        });
    }
    out[t] = acc;
}

// One thread per (segment s, column c), visiting the segment in perm order
// (its subs are distinct and ascending): best[s, c] = max (min) value,
// pos[s, c] = sub of its first occurrence (the first NaN wins); the thread of
// column 0 also writes gap[s] = the smallest non-negative sub missing.
template <typename T>
__global__ void coo_reduce_segment_arg(
        const T* __restrict__ values, i64 n, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ starts, const i64* __restrict__ sub, i64 nseg, i64 k, i64 is_max,
        T* __restrict__ best, i64* __restrict__ pos, i64* __restrict__ gap, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= nseg * k) return;
    i64 s = t / k, c = t - s * k, lo, hi;
    T acc = T(0);
    i64 at = 0, g = 0;
    if (coo_reduce_segment(starts, s, c, n, &lo, &hi, err)) {
        bool counting = c == 0, first = true, done = false;
        coo_reduce_visit(values, n, has_perm ? perm : nullptr, lo, hi, k, c, err, [&](i64 r, T v) {
            if (counting) {
                if (sub[r] == g) ++g; else counting = false;
            }
            if (!done && (first || v != v || (is_max ? (v > acc) : (v < acc)))) {
                acc = v;
                at = sub[r];
                first = false;
                done = v != v;  // the first NaN wins
            }
            return counting || !done;
        });
    }
    if (c == 0) gap[s] = g;
    best[t] = acc;
    pos[t] = at;
}
