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
// column 0 also writes gap[s] = the smallest non-negative sub missing. A
// segment longer than skip_above is left to coo_reduce_arg_tree (below).
template <typename T>
__global__ void coo_reduce_segment_arg(
        const T* __restrict__ values, i64 n, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ starts, const i64* __restrict__ sub, i64 nseg, i64 k, i64 is_max,
        i64 skip_above, T* __restrict__ best, i64* __restrict__ pos, i64* __restrict__ gap, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= nseg * k) return;
    i64 s = t / k, c = t - s * k, lo, hi;
    T acc = T(0);
    i64 at = 0, g = 0;
    bool good = coo_reduce_segment(starts, s, c, n, &lo, &hi, err);
    if (good && hi - lo > skip_above) return;  // (a long segment: coo_reduce_arg_tree's)
    if (good) {
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

// ---- the blocked order of the reductions (docs/design/determinism.md, "Reductions")
//
// A segment of at most COO_TREE_LEAF entries is reduced left to right, in perm
// order (the loop above). A longer one is cut into pieces of COO_TREE_LEAF
// consecutive entries, each reduced left to right; the piece results, in order,
// are cut into groups of COO_TREE_FAN, each reduced left to right, and so on
// until one value remains. The Numba layer computes the same tree
// (coosparse/_kernels/numba/reduce.py: _tree_arith, _tree_order), so the bits
// match. Integer sums and products (modular) and min/max (the first NaN in
// perm order wins, ties keep the earlier value) give the same result in any
// grouping; float sums and products are defined by this tree.
//
// Thread mapping: coo_reduce_short<Op<T> > takes the short segments, one
// thread per (segment, column); coo_reduce_tree<Op<T> > takes the pieces of the
// long ones, one thread per (piece, column), and the last piece of a group to
// finish (an integer arrival counter per node and column) reduces the group,
// then climbs: one launch for the whole tree, and the order of every
// combination is fixed whichever thread performs it. The emulation runs the
// threads one after another, so the last piece of a group is simply the one
// with the highest index: the same combinations in the same order.
#define COO_TREE_LEAF 256
#define COO_TREE_FAN 32

// The reductions, each over its value type T (a kernel's one template argument).
template <typename T>
struct coo_op_sum {
    typedef T type;
    __device__ static __forceinline__ T apply(T a, T b) { return coo_add(a, b); }
};
template <typename T>
struct coo_op_prod {
    typedef T type;
    __device__ static __forceinline__ T apply(T a, T b) { return coo_mul(a, b); }
};
// a (the earlier value) is kept unless it is not NaN and b is NaN or beyond it (wins)
template <typename T>
struct coo_op_max {
    typedef T type;
    __device__ static __forceinline__ bool wins(T a, T b) { return a == a && (b != b || b > a); }
    __device__ static __forceinline__ T apply(T a, T b) { return wins(a, b) ? b : a; }
};
template <typename T>
struct coo_op_min {
    typedef T type;
    __device__ static __forceinline__ bool wins(T a, T b) { return a == a && (b != b || b < a); }
    __device__ static __forceinline__ T apply(T a, T b) { return wins(a, b) ? b : a; }
};

// A load that bypasses L1 (which is not coherent between multiprocessors): the
// partial values a group's last thread reads were written by other blocks.
template <typename T>
__device__ __forceinline__ T coo_load_cg(const T* p) { return __ldcg(p); }
template <typename R>
__device__ __forceinline__ coo_complex<R> coo_load_cg(const coo_complex<R>* p) {
    coo_complex<R> z;
    z.re = __ldcg(&p->re);
    z.im = __ldcg(&p->im);
    return z;
}

// Entries [lo, hi) of column c reduced left to right, rows perm[j] (j without perm);
// loads issued eight at a time before they are combined in order. A row outside
// [0, n) is skipped and reported (by the column-0 thread).
template <typename Op, typename T = typename Op::type>
__device__ __forceinline__ T coo_tree_leaf(const T* __restrict__ values, i64 n, const i64* __restrict__ perm,
                                           i64 lo, i64 hi, i64 k, i64 c, u64* __restrict__ err) {
    T acc = coo_zero<T>();
    bool first = true;
    for (i64 j0 = lo; j0 < hi; j0 += COO_SUM_BATCH) {
        T v[COO_SUM_BATCH];
        bool ok[COO_SUM_BATCH];
#pragma unroll
        for (int b = 0; b < COO_SUM_BATCH; ++b) {
            i64 j = j0 + b;
            i64 r = j < hi ? (perm ? perm[j] : j) : 0;
            ok[b] = j < hi && coo_in_range(r, n);
            if (j < hi && !ok[b] && c == 0) coo_report(err, COO_ERR_GATHER);
            v[b] = ok[b] ? values[r * k + c] : coo_zero<T>();
        }
#pragma unroll
        for (int b = 0; b < COO_SUM_BATCH; ++b) {
            if (ok[b]) {
                acc = first ? v[b] : Op::apply(acc, v[b]);
                first = false;
            }
        }
    }
    return acc;
}

// The nodes of a segment of L entries: every level of its tree (the pieces, the
// groups of pieces, ..., the root), 0 for a segment that is one piece.
__device__ __forceinline__ i64 coo_tree_nodes(i64 L) {
    if (L <= COO_TREE_LEAF) return 0;
    i64 c = (L + COO_TREE_LEAF - 1) / COO_TREE_LEAF, t = 1;  // (the root)
    for (; c > 1; c = (c + COO_TREE_FAN - 1) / COO_TREE_FAN) t += c;
    return t;
}

// One thread per segment s: pieces[s] = its pieces when it is longer than one
// piece (else 0), nodes[s] = coo_tree_nodes of its length (0 for a bad segment).
extern "C" __global__ void coo_reduce_tree_plan(
        const i64* __restrict__ starts, i64 nseg, i64 n, i64* __restrict__ pieces, i64* __restrict__ nodes) {
    i64 s = coo_thread_id();
    if (s >= nseg) return;
    i64 lo = starts[s], hi = starts[s + 1];
    i64 L = (0 <= lo && lo < hi && hi <= n) ? hi - lo : 0;
    pieces[s] = L > COO_TREE_LEAF ? (L + COO_TREE_LEAF - 1) / COO_TREE_LEAF : 0;
    nodes[s] = coo_tree_nodes(L);
}

// One thread per (segment s, column c) of a segment of at most one piece: its
// reduction left to right. Long segments are left to coo_reduce_tree.
template <typename Op>
__global__ void coo_reduce_short(
        const typename Op::type* __restrict__ values, i64 n, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ starts, i64 nseg, i64 k, typename Op::type* __restrict__ out,
        u64* __restrict__ err) {
    typedef typename Op::type T;
    i64 t = coo_thread_id();
    if (t >= nseg * k) return;
    i64 s = t / k, c = t - s * k, lo, hi;
    if (!coo_reduce_segment(starts, s, c, n, &lo, &hi, err)) {
        out[t] = coo_zero<T>();
        return;
    }
    if (hi - lo > COO_TREE_LEAF) return;
    out[t] = coo_tree_leaf<Op>(values, n, has_perm ? perm : nullptr, lo, hi, k, c, err);
}

// One thread per (piece g, column c) of the long segments: piece_end and node_end
// are the inclusive running totals of coo_reduce_tree_plan's pieces and nodes.
// The piece's value goes to its node; the last of a group of COO_TREE_FAN to
// arrive (arrived[], zeroed by the caller) reduces the group in order and
// climbs; the root's value goes to out[s, c]. partial and arrived have a row of
// k per node (every segment's nodes, from node_end).
template <typename Op>
__global__ void coo_reduce_tree(
        const typename Op::type* __restrict__ values, i64 n, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ starts, i64 nseg, i64 k, const i64* __restrict__ piece_end,
        const i64* __restrict__ node_end, typename Op::type* partial, unsigned int* arrived,
        typename Op::type* __restrict__ out, u64* __restrict__ err) {
    typedef typename Op::type T;
    i64 t = coo_thread_id();
    if (nseg <= 0 || t >= piece_end[nseg - 1] * k) return;
    i64 g = t / k, c = t - g * k;
    i64 s = coo_upper_bound(piece_end, 0, nseg, g);  // the segment of piece g (piece_end[s] > g)
    i64 i = g - (s ? piece_end[s - 1] : 0);
    i64 lo = starts[s], hi = starts[s + 1];  // (checked by coo_reduce_tree_plan: only good segments have pieces)
    i64 cnt = (hi - lo + COO_TREE_LEAF - 1) / COO_TREE_LEAF;  // nodes of the current level
    i64 a = lo + i * COO_TREE_LEAF;
    T v = coo_tree_leaf<Op>(values, n, has_perm ? perm : nullptr, a, hi < a + COO_TREE_LEAF ? hi : a + COO_TREE_LEAF,
                            k, c, err);
    i64 level = s ? node_end[s - 1] : 0;  // the first node of the current level
    for (;;) {
        partial[(level + i) * k + c] = v;
        i64 j = i / COO_TREE_FAN, up = (cnt + COO_TREE_FAN - 1) / COO_TREE_FAN;
        i64 c0 = j * COO_TREE_FAN, c1 = c0 + COO_TREE_FAN < cnt ? c0 + COO_TREE_FAN : cnt;
        __threadfence();  // the value is visible before the arrival is counted
        unsigned int before = atomicAdd(&arrived[(level + cnt + j) * k + c], 1u);
        if (before != (unsigned int)(c1 - c0 - 1)) return;  // not the last of the group
        __threadfence();
        T acc = coo_load_cg(&partial[(level + c0) * k + c]);
        for (i64 q = c0 + 1; q < c1; ++q) acc = Op::apply(acc, coo_load_cg(&partial[(level + q) * k + c]));
        if (up == 1) {
            out[s * k + c] = acc;
            return;
        }
        level += cnt;
        cnt = up;
        i = j;
        v = acc;
    }
}

// ---- arg-extremes of long segments (segment_arg), by the same tree
//
// Which entry is the extreme does not depend on the grouping (the left value
// is kept unless it is not NaN and the right one is NaN or strictly beyond it,
// and positions ascend left to right, so the first occurrence wins as in a
// left-to-right visit), nor does the smallest missing sub (the first position
// j of the segment whose sub is not j: a minimum over the pieces). Short
// segments: coo_reduce_segment_arg (one thread, left to right); long ones:
// one thread per (piece, column) and the tree above. Column 0 also carries the
// gap: a piece's first mismatch, or the segment's length when none.

// (best, pos) after (v, s) joins (*best, *pos) on its right.
template <typename Op, typename T>
__device__ __forceinline__ void coo_arg_join(T* best, i64* pos, T v, i64 s) {
    if (Op::wins(*best, v)) {
        *best = v;
        *pos = s;
    }
}

// Entries [a, b) of segment [lo, ...) for column c: the extreme and its sub (first occurrence),
// and (column 0) the first position j of the segment in [a, b) with sub != j - lo, else no_gap.
template <typename Op, typename T = typename Op::type>
__device__ __forceinline__ void coo_arg_leaf(const T* __restrict__ values, i64 n, const i64* __restrict__ perm,
                                             const i64* __restrict__ sub, i64 lo, i64 a, i64 b, i64 k, i64 c,
                                             T* best, i64* pos, i64* gap, i64 no_gap, u64* __restrict__ err) {
    bool first = true;
    *best = T(0);
    *pos = 0;
    *gap = no_gap;
    for (i64 j = a; j < b; ++j) {
        i64 r = perm ? perm[j] : j;
        if (!coo_in_range(r, n)) {
            if (c == 0) coo_report(err, COO_ERR_GATHER);
            continue;
        }
        i64 s = sub[r];
        if (c == 0 && *gap == no_gap && s != j - lo) *gap = j - lo;
        T v = values[r * k + c];
        if (first) {
            *best = v;
            *pos = s;
            first = false;
        } else {
            coo_arg_join<Op>(best, pos, v, s);
        }
    }
}

// One thread per (piece g, column c) of the long segments (as coo_reduce_tree); part_best,
// part_pos: k per node; part_gap: one per node (column 0's).
template <typename Op>
__global__ void coo_reduce_arg_tree(
        const typename Op::type* __restrict__ values, i64 n, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ starts, const i64* __restrict__ sub, i64 nseg, i64 k,
        const i64* __restrict__ piece_end, const i64* __restrict__ node_end, typename Op::type* part_best,
        i64* part_pos, i64* part_gap, unsigned int* arrived, typename Op::type* __restrict__ best,
        i64* __restrict__ pos, i64* __restrict__ gap, u64* __restrict__ err) {
    typedef typename Op::type T;
    i64 t = coo_thread_id();
    if (nseg <= 0 || t >= piece_end[nseg - 1] * k) return;
    i64 g = t / k, c = t - g * k;
    i64 s = coo_upper_bound(piece_end, 0, nseg, g);
    i64 i = g - (s ? piece_end[s - 1] : 0);
    i64 lo = starts[s], hi = starts[s + 1];
    i64 L = hi - lo, cnt = (L + COO_TREE_LEAF - 1) / COO_TREE_LEAF;
    i64 a = lo + i * COO_TREE_LEAF;
    T vb;
    i64 vp, vg;
    coo_arg_leaf<Op>(values, n, has_perm ? perm : nullptr, sub, lo, a, hi < a + COO_TREE_LEAF ? hi : a + COO_TREE_LEAF,
                     k, c, &vb, &vp, &vg, L, err);
    i64 level = s ? node_end[s - 1] : 0;
    for (;;) {
        part_best[(level + i) * k + c] = vb;
        part_pos[(level + i) * k + c] = vp;
        if (c == 0) part_gap[level + i] = vg;
        i64 j = i / COO_TREE_FAN, up = (cnt + COO_TREE_FAN - 1) / COO_TREE_FAN;
        i64 c0 = j * COO_TREE_FAN, c1 = c0 + COO_TREE_FAN < cnt ? c0 + COO_TREE_FAN : cnt;
        __threadfence();
        unsigned int before = atomicAdd(&arrived[(level + cnt + j) * k + c], 1u);
        if (before != (unsigned int)(c1 - c0 - 1)) return;
        __threadfence();
        vb = coo_load_cg(&part_best[(level + c0) * k + c]);
        vp = __ldcg(&part_pos[(level + c0) * k + c]);
        vg = c == 0 ? __ldcg(&part_gap[level + c0]) : 0;
        for (i64 q = c0 + 1; q < c1; ++q) {
            coo_arg_join<Op>(&vb, &vp, coo_load_cg(&part_best[(level + q) * k + c]),
                             __ldcg(&part_pos[(level + q) * k + c]));
            if (c == 0) {
                i64 qg = __ldcg(&part_gap[level + q]);
                vg = qg < vg ? qg : vg;
            }
        }
        if (up == 1) {
            best[s * k + c] = vb;
            pos[s * k + c] = vp;
            if (c == 0) gap[s] = vg;
            return;
        }
        level += cnt;
        cnt = up;
        i = j;
    }
}
