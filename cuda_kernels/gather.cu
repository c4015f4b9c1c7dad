// Row gather: out[i, :] = values[rows[i], :], by element width (a bit copy).
#include "coo_common.cuh"

// One thread per output element (row i, column c); consecutive threads read
// consecutive columns of one source row, so wide rows are read coalesced.
template <typename T>
__global__ void coo_gather_rows_copy(
        const T* __restrict__ values, const i64* __restrict__ rows,
        i64 m, i64 k, T* __restrict__ out) {
    i64 t = coo_thread_id();
    if (t >= m * k) return;
    i64 i = t / k, c = t - i * k;
    out[t] = values[rows[i] * k + c];
}

// One thread per output element (row i, column c): out[i, c] = values[rows[i], c],
// or all-zero bits where rows[i] < 0 (the side of a union that lacks the key).
template <typename T>
__global__ void coo_gather_rows_or_zero(
        const T* __restrict__ values, const i64* __restrict__ rows,
        i64 m, i64 k, T* __restrict__ out) {
    i64 t = coo_thread_id();
    if (t >= m * k) return;
    i64 i = t / k, c = t - i * k;
    i64 r = rows[i];
    out[t] = r >= 0 ? values[r * k + c] : T(0);
}

// One thread per output element (entry i, element c of its block):
// out[i, c] = source[addresses[i] + inner[c]] (the gather twin of scatter_set).
template <typename T>
__global__ void coo_gather_strided(
        const T* __restrict__ source, const i64* __restrict__ addresses, const i64* __restrict__ inner,
        i64 n, i64 k, T* __restrict__ out) {
    i64 t = coo_thread_id();
    if (t >= n * k) return;
    i64 i = t / k, c = t - i * k;
    out[t] = source[addresses[i] + inner[c]];
}
