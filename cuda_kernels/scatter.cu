// Strided scatter into a flat buffer (to_dense, dense + COO, as_strided_scatter).
//
// Element addresses are stably sorted first (CuPy/NumPy primitive), so equal
// addresses form runs in original order; one thread owns a run, which makes
// duplicates deterministic without atomics: add sums the run in order onto
// the old value, set writes only the run's last element (last writer wins).
#include "coo_common.cuh"

// One thread per sorted element j; the first element of each run of equal
// addresses sums the whole run in order: target[a] = ((target[a] + v0) + v1) ...
// Addresses >= limit (skipped entries, sorted last) write nothing.
template <typename T>
__global__ void coo_scatter_add_runs(
        T* __restrict__ target, const i64* __restrict__ sorted_addr,
        const i64* __restrict__ perm, const T* __restrict__ values, i64 n, i64 limit) {
    i64 j = coo_thread_id();
    if (j >= n) return;
    i64 a = sorted_addr[j];
    if (a >= limit || (j > 0 && sorted_addr[j - 1] == a)) return;
    T acc = target[a];
    for (i64 q = j; q < n && sorted_addr[q] == a; ++q) acc += values[perm[q]];
    target[a] = acc;
}

// One thread per sorted element j; only the last element of each run of
// equal addresses writes (it is the last writer in the original order).
// Addresses >= limit (skipped entries, sorted last) write nothing.
template <typename T>
__global__ void coo_scatter_set_runs(
        T* __restrict__ target, const i64* __restrict__ sorted_addr,
        const i64* __restrict__ perm, const T* __restrict__ values, i64 n, i64 limit) {
    i64 j = coo_thread_id();
    if (j >= n) return;
    i64 a = sorted_addr[j];
    if (a >= limit || (j + 1 < n && sorted_addr[j + 1] == a)) return;
    target[a] = values[perm[j]];
}

// Address of view element e (C order) for dims (sizes, strides), last dim fastest.
__device__ __forceinline__ i64 coo_view_address(i64 e, i64 base, const i64* sizes,
                                                const i64* strides, i64 d) {
    i64 a = base;
    for (i64 x = d - 1; x >= 0; --x) {
        i64 n = sizes[x];
        i64 q = e / n;
        a += (e - q * n) * strides[x];
        e = q;
    }
    return a;
}

// One thread per view element e of a view that does not overlap itself:
// out[offset + i.strides] = src[src_base + i.src_strides] for the C-order index i of e.
// params = (sizes[d], strides[d], src_strides[d]); w words per element (16-byte items: 2).
template <typename T>
__global__ void coo_scatter_view_set(
        T* __restrict__ out, const T* __restrict__ src, const i64* __restrict__ params,
        i64 d, i64 offset, i64 src_base, i64 total, i64 w) {
    i64 e = coo_thread_id();
    if (e >= total) return;
    i64 a = coo_view_address(e, offset, params, params + d, d);
    i64 s = coo_view_address(e, src_base, params, params + 2 * d, d);
    for (i64 q = 0; q < w; ++q) out[a * w + q] = src[s * w + q];
}

// One thread per view element e: its output and source addresses, for the
// ordered (overlapping) path that then sorts out_addr and lets the last writer win.
extern "C" __global__ void coo_scatter_view_addresses(
        const i64* __restrict__ params, i64 d, i64 offset, i64 src_base, i64 total,
        i64* __restrict__ out_addr, i64* __restrict__ src_addr) {
    i64 e = coo_thread_id();
    if (e >= total) return;
    out_addr[e] = coo_view_address(e, offset, params, params + d, d);
    src_addr[e] = coo_view_address(e, src_base, params, params + 2 * d, d);
}

// One thread per view element e of a view whose addresses strictly increase
// in C order: writes out[a(e)] = src[s(e)] and copies inp into the gap up to
// the next element's address, so [a(0), a(last)] is written once, in one pass.
// The caller bounds the gaps (they are host metadata) and copies head and tail.
template <typename T>
__global__ void coo_scatter_view_fill(
        T* __restrict__ out, const T* __restrict__ inp, const T* __restrict__ src,
        const i64* __restrict__ params, i64 d, i64 offset, i64 src_base, i64 total, i64 w) {
    i64 e = coo_thread_id();
    if (e >= total) return;
    i64 a = coo_view_address(e, offset, params, params + d, d);
    i64 s = coo_view_address(e, src_base, params, params + 2 * d, d);
    i64 next = e + 1 < total ? coo_view_address(e + 1, offset, params, params + d, d) : a + 1;
    for (i64 q = 0; q < w; ++q) out[a * w + q] = src[s * w + q];
    for (i64 q = (a + 1) * w; q < next * w; ++q) out[q] = inp[q];
}
