// Strided scatter into a flat buffer (to_dense, dense + COO, as_strided_scatter).
//
// Element addresses are stably sorted first (CuPy/NumPy primitive), so equal
// addresses form runs in original order; one thread owns a run, which makes
// duplicates deterministic without atomics: add sums the run in order onto
// the old value, set writes only the run's last element (last writer wins).
// When the caller knows the addresses are already non-decreasing (a sorted COO
// into a C-ordered target) the sort is skipped (has_perm = 0) and the order is
// checked; when it knows they are distinct (a unique COO) each element is written
// directly (add: old value plus element, read first) and read back.
#include "coo_common.cuh"

// One thread per word t of element (i, c) of entry i's block (w words per
// element: 16-byte items are two 8-byte words): its word address
// (addresses[i] + inner[c]) * w + q, or the sentinel span * w when entry i's
// block would leave the target (block address outside [lo, hi)): such an
// entry is skipped (memory safety for COOs built with check=False) and reported.
extern "C" __global__ void coo_scatter_elements(
        const i64* __restrict__ addresses, const i64* __restrict__ inner_dev, coo_dims inner_val,
        i64 n, i64 k, i64 w, i64 lo, i64 hi, i64 span, i64* __restrict__ addr_out, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= n * k * w) return;
    i64 e = t / w, q = t - e * w;
    i64 i = e / k, c = e - i * k;
    i64 a = addresses[i];
    if (a < lo || a >= hi) {
        if (c == 0 && q == 0) coo_report(err, COO_ERR_SCATTER);
        addr_out[t] = span * w;
        return;
    }
    addr_out[t] = (a + (inner_dev ? inner_dev[c] : inner_val.v[c])) * w + q;
}

// The additive identity of a sum type: -0.0 for floats ((-0.0) + x is x, -0.0 included), 0 for
// the unsigned words of the integer sums.
template <typename T> __device__ __forceinline__ T coo_minus_zero() { return T(0); }
template <> __device__ __forceinline__ float coo_minus_zero<float>() { return -0.0f; }
template <> __device__ __forceinline__ double coo_minus_zero<double>() { return -0.0; }

// One thread per sorted element j; the first element of each run of equal
// addresses sums the whole run in order: target[a] = ((target[a] + v0) + v1) ...
// (replace: from -0.0 instead of target[a], the Numba layer's replace mode).
// Addresses >= limit (skipped entries, sorted last) write nothing.
template <typename T>
__global__ void coo_scatter_add_runs(
        T* __restrict__ target, const i64* __restrict__ sorted_addr,
        const i64* __restrict__ perm, i64 has_perm, const T* __restrict__ values, i64 n, i64 limit,
        i64 replace) {
    i64 j = coo_thread_id();
    if (j >= n) return;
    i64 a = sorted_addr[j];
    if (!coo_in_range(a, limit) || (j > 0 && sorted_addr[j - 1] == a)) return;
    T acc = replace ? coo_minus_zero<T>() : target[a];
    for (i64 q = j; q < n && sorted_addr[q] == a; ++q) acc += values[has_perm ? perm[q] : q];
    target[a] = acc;
}

// One thread per sorted element j; only the last element of each run of
// equal addresses writes (it is the last writer in the original order).
// Addresses outside [0, limit) (skipped entries) write nothing.
template <typename T>
__global__ void coo_scatter_set_runs(
        T* __restrict__ target, const i64* __restrict__ sorted_addr,
        const i64* __restrict__ perm, i64 has_perm, const T* __restrict__ values, i64 n, i64 limit) {
    i64 j = coo_thread_id();
    if (j >= n) return;
    i64 a = sorted_addr[j];
    if (!coo_in_range(a, limit) || (j + 1 < n && sorted_addr[j + 1] == a)) return;
    target[a] = values[has_perm ? perm[j] : j];
}

// One thread per element j of distinct addresses (the caller's guarantee: a
// unique COO): target[addr[j]] = values[j]; no sort, no run detection.
template <typename T>
__global__ void coo_scatter_set_direct(
        T* __restrict__ target, const i64* __restrict__ addr, const T* __restrict__ values, i64 n, i64 limit) {
    i64 j = coo_thread_id();
    if (j >= n) return;
    i64 a = addr[j];
    if (coo_in_range(a, limit)) target[a] = values[j];
}

// ---- flags that lie. The runs kernels trust a 'sorted' hint and set_direct a 'distinct'
// one (a sorted or unique COO); a COO built with check=False may carry flags that lie, and
// then two threads would write one word in an order nobody chose. These kernels find it
// (COO_ERR_ORDER, read at the next synchronising call), as the merges' order checks do.

// One thread per adjacent pair of element addresses: a step down breaks the 'sorted' hint.
// Addresses >= limit (skipped entries, already reported) are not compared.
extern "C" __global__ void coo_scatter_check_sorted(
        const i64* __restrict__ addr, i64 n, i64 limit, u64* __restrict__ err) {
    i64 j = coo_thread_id();
    if (j + 1 >= n) return;
    i64 a = addr[j], b = addr[j + 1];
    if (coo_in_range(a, limit) && coo_in_range(b, limit) && a > b) coo_report(err, COO_ERR_ORDER);
}

// One thread per element j of distinct addresses (a scatter-add under the 'distinct' hint):
// sums[j] = target[addr[j]] + values[j], read before anything is written (the next launch
// writes them with coo_scatter_set_direct), so each sum is the old value plus one element.
template <typename T>
__global__ void coo_scatter_add_values(
        const T* __restrict__ target, const i64* __restrict__ addr, const T* __restrict__ values, i64 n,
        i64 limit, i64 replace, T* __restrict__ sums) {
    i64 j = coo_thread_id();
    if (j >= n) return;
    i64 a = addr[j];
    T v = values[j];
    if (coo_in_range(a, limit)) v = (replace ? coo_minus_zero<T>() : target[a]) + v;
    sums[j] = v;
}

// One thread per element j written by coo_scatter_set_direct: its word must hold what it
// wrote. Another word there means an element with another value shared the address (the
// 'distinct' hint lies), so which one stayed depended on the schedule: reported. Equal
// values sharing an address leave the same word whatever the order.
template <typename T>
__global__ void coo_scatter_check_direct(
        const T* __restrict__ target, const i64* __restrict__ addr, const T* __restrict__ values, i64 n,
        i64 limit, u64* __restrict__ err) {
    i64 j = coo_thread_id();
    if (j >= n) return;
    i64 a = addr[j];
    if (coo_in_range(a, limit) && target[a] != values[j]) coo_report(err, COO_ERR_ORDER);
}

// ---- strided views (as_strided_scatter). sizes/strides travel by value.
//
// Thread mapping of the view kernels: the view is rows of its last dimension
// (n_last = sizes[d-1] elements, address step s_last). A group of `lanes`
// threads (a power of two, at most 32: the host picks the smallest that covers
// a row, so short rows do not leave most of a warp idle) shares a chunk of
// COO_VIEW_CHUNK * lanes consecutive elements of one row, lane j taking the
// chunk's elements j, j + lanes, j + 2 lanes, ...: neighbouring lanes touch
// neighbouring elements, so one warp instruction reads and writes runs of
// consecutive elements instead of 32 places COO_VIEW_CHUNK elements apart. A
// thread computes its first address once (one unravel of the row index over
// the other d-1 dims: the only divisions) and then steps by lanes * s_last.
// Every element is written by one thread, so the mapping changes no result.

#define COO_VIEW_CHUNK 8

// Address of row r (the C-order index over dims 0..d-2) for strides st: base + sum i_x * st[x].
__device__ __forceinline__ i64 coo_row_address(i64 r, i64 base, const coo_dims& sizes,
                                               const coo_dims& st, i64 d) {
    i64 a = base;
    for (i64 x = d - 2; x >= 0; --x) {
        i64 n = sizes.v[x];
        i64 q = r / n;
        a += (r - q * n) * st.v[x];
        r = q;
    }
    return a;
}

// A thread's walk over its elements: row, element e (the next one) up to e1 (the
// chunk's end) by `step`, and the current output/source addresses with their steps.
struct coo_view_walk {
    i64 row, e, e1, step, a, s, da, ds;
};

// Thread t of a view launch (rows * chunks per row * lanes threads) starts its walk.
__device__ __forceinline__ coo_view_walk coo_view_start(i64 t, const coo_dims& sizes, const coo_dims& strides,
                                                        const coo_dims& src_strides, i64 d, i64 offset,
                                                        i64 src_base, i64 lanes) {
    coo_view_walk w;
    i64 n_last = sizes.v[d - 1];
    i64 span = COO_VIEW_CHUNK * lanes;
    i64 cpr = (n_last + span - 1) / span;
    i64 g = t / lanes, j = t - g * lanes;
    w.row = cpr == 1 ? g : g / cpr;
    i64 c0 = (g - w.row * cpr) * span;
    w.e = c0 + j;
    w.e1 = c0 + span < n_last ? c0 + span : n_last;
    w.step = lanes;
    i64 so = strides.v[d - 1], ss = src_strides.v[d - 1];
    w.da = lanes * so;
    w.ds = lanes * ss;
    w.a = coo_row_address(w.row, offset, sizes, strides, d) + w.e * so;
    w.s = coo_row_address(w.row, src_base, sizes, src_strides, d) + w.e * ss;
    return w;
}

// One thread per (chunk, lane) of a view that does not overlap itself:
// out[offset + i.strides] = src[src_base + i.src_strides] for its elements i;
// w words per element (16-byte items: 2).
template <typename T>
__global__ void coo_scatter_view_set(
        T* __restrict__ out, const T* __restrict__ src, coo_dims sizes, coo_dims strides, coo_dims src_strides,
        i64 d, i64 offset, i64 src_base, i64 nthreads, i64 lanes, i64 w) {
    i64 t = coo_thread_id();
    if (t >= nthreads) return;
    coo_view_walk v = coo_view_start(t, sizes, strides, src_strides, d, offset, src_base, lanes);
    for (; v.e < v.e1; v.e += v.step, v.a += v.da, v.s += v.ds)
        for (i64 q = 0; q < w; ++q) out[v.a * w + q] = src[v.s * w + q];
}

// One thread per (chunk, lane): the output and source addresses of its elements, for
// the ordered (overlapping) path that then sorts out_addr and lets the last writer win.
extern "C" __global__ void coo_scatter_view_addresses(
        coo_dims sizes, coo_dims strides, coo_dims src_strides, i64 d, i64 offset, i64 src_base,
        i64 nthreads, i64 lanes, i64* __restrict__ out_addr, i64* __restrict__ src_addr) {
    i64 t = coo_thread_id();
    if (t >= nthreads) return;
    coo_view_walk v = coo_view_start(t, sizes, strides, src_strides, d, offset, src_base, lanes);
    for (i64 pos = v.row * sizes.v[d - 1] + v.e; v.e < v.e1; v.e += v.step, pos += v.step, v.a += v.da, v.s += v.ds) {
        out_addr[pos] = v.a;
        src_addr[pos] = v.s;
    }
}

// One thread per (chunk, lane) of a view whose addresses strictly increase in C
// order: writes out[a(e)] = src[s(e)] and copies inp into the gap up to the
// next element's address, so [a(0), a(last)] is written once, in one pass.
// The caller bounds the gaps (they are host metadata) and copies head and tail.
template <typename T>
__global__ void coo_scatter_view_fill(
        T* __restrict__ out, const T* __restrict__ inp, const T* __restrict__ src,
        coo_dims sizes, coo_dims strides, coo_dims src_strides,
        i64 d, i64 offset, i64 src_base, i64 nthreads, i64 lanes, i64 rows, i64 w) {
    i64 t = coo_thread_id();
    if (t >= nthreads) return;
    coo_view_walk v = coo_view_start(t, sizes, strides, src_strides, d, offset, src_base, lanes);
    i64 n_last = sizes.v[d - 1], so = strides.v[d - 1];
    for (; v.e < v.e1; v.e += v.step, v.a += v.da, v.s += v.ds) {
        // the next element's address: along the row, or the next row's first
        i64 next = v.e + 1 < n_last ? v.a + so
                 : v.row + 1 < rows ? coo_row_address(v.row + 1, offset, sizes, strides, d)
                 : v.a + 1;
        for (i64 q = 0; q < w; ++q) out[v.a * w + q] = src[v.s * w + q];
        for (i64 q = (v.a + 1) * w; q < next * w; ++q) out[q] = inp[q];
    }
}
