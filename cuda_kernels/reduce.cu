// Ordered segment reductions for the reductions (SPEC 9): products, min/max, arg-min/max.
// No atomics: one thread owns one (segment, column) and visits the segment's
// entries in perm order, the same loop as coosparse/_numba/reduce.py, so the
// results are bit-identical to the Numba layer's.
#include "coo_common.cuh"

// One thread per (segment s, column c): out[s, c] = product of values[perm[j], c],
// j from starts[s] to starts[s+1]-1, multiplied sequentially in that order.
template <typename T>
__global__ void coo_reduce_segment_prod(
        const T* __restrict__ values, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ starts, i64 nseg, i64 k, T* __restrict__ out) {
    i64 t = coo_thread_id();
    if (t >= nseg * k) return;
    i64 s = t / k, c = t - s * k;
    i64 lo = starts[s], hi = starts[s + 1];
    T acc = values[(has_perm ? perm[lo] : lo) * k + c];
    for (i64 j = lo + 1; j < hi; ++j) acc = coo_mul(acc, values[(has_perm ? perm[j] : j) * k + c]);
    out[t] = acc;
}

// One thread per (segment s, column c): the max (is_max) or min of the segment,
// visited in perm order; the first NaN met is the result (NumPy's rule).
template <typename T>
__global__ void coo_reduce_segment_minmax(
        const T* __restrict__ values, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ starts, i64 nseg, i64 k, i64 is_max, T* __restrict__ out) {
    i64 t = coo_thread_id();
    if (t >= nseg * k) return;
    i64 s = t / k, c = t - s * k;
    i64 lo = starts[s], hi = starts[s + 1];
    T acc = values[(has_perm ? perm[lo] : lo) * k + c];
    if (acc == acc) {
        for (i64 j = lo + 1; j < hi; ++j) {
            T v = values[(has_perm ? perm[j] : j) * k + c];
            if (v != v) { acc = v; break; }
            if (is_max ? (v > acc) : (v < acc)) acc = v;
        }
    }
    out[t] = acc;
}

// One thread per (segment s, column c), visiting the segment in perm order
// (its subs are distinct and ascending): best[s, c] = max (min) value,
// pos[s, c] = sub of its first occurrence (the first NaN wins); the thread of
// column 0 also writes gap[s] = the smallest non-negative sub missing.
template <typename T>
__global__ void coo_reduce_segment_arg(
        const T* __restrict__ values, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ starts, const i64* __restrict__ sub, i64 nseg, i64 k, i64 is_max,
        T* __restrict__ best, i64* __restrict__ pos, i64* __restrict__ gap) {
    i64 t = coo_thread_id();
    if (t >= nseg * k) return;
    i64 s = t / k, c = t - s * k;
    i64 lo = starts[s], hi = starts[s + 1];
    if (c == 0) {
        i64 g = 0;
        for (i64 j = lo; j < hi; ++j) {
            if (sub[has_perm ? perm[j] : j] != g) break;
            ++g;
        }
        gap[s] = g;
    }
    i64 r = has_perm ? perm[lo] : lo;
    T acc = values[r * k + c];
    i64 at = sub[r];
    if (acc == acc) {
        for (i64 j = lo + 1; j < hi; ++j) {
            r = has_perm ? perm[j] : j;
            T v = values[r * k + c];
            if (v != v || (is_max ? (v > acc) : (v < acc))) {
                acc = v;
                at = sub[r];
                if (v != v) break;
            }
        }
    }
    best[t] = acc;
    pos[t] = at;
}
