// Strided scatter into a flat buffer (to_dense, dense + COO, as_strided_scatter).
//
// Element addresses are stably sorted first (CuPy/NumPy primitive), so equal
// addresses form runs in original order; one thread owns a run, which makes
// duplicates deterministic without atomics: add sums the run in order onto
// the old value, set writes only the run's last element (last writer wins).
#include "coo_common.cuh"

// One thread per sorted element j; the first element of each run of equal
// addresses sums the whole run in order: target[a] = ((target[a] + v0) + v1) ...
template <typename T>
__global__ void coo_scatter_add_runs(
        T* __restrict__ target, const i64* __restrict__ sorted_addr,
        const i64* __restrict__ perm, const T* __restrict__ values, i64 n) {
    i64 j = coo_thread_id();
    if (j >= n) return;
    i64 a = sorted_addr[j];
    if (j > 0 && sorted_addr[j - 1] == a) return;
    T acc = target[a];
    for (i64 q = j; q < n && sorted_addr[q] == a; ++q) acc += values[perm[q]];
    target[a] = acc;
}

// One thread per sorted element j; only the last element of each run of
// equal addresses writes (it is the last writer in the original order).
template <typename T>
__global__ void coo_scatter_set_runs(
        T* __restrict__ target, const i64* __restrict__ sorted_addr,
        const i64* __restrict__ perm, const T* __restrict__ values, i64 n) {
    i64 j = coo_thread_id();
    if (j >= n) return;
    i64 a = sorted_addr[j];
    if (j + 1 < n && sorted_addr[j + 1] == a) return;
    target[a] = values[perm[j]];
}
