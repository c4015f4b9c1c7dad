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
