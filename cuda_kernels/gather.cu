// Row gather: out[i, :] = values[rows[i], :], by element width (a bit copy).
//
// Every read through an index is bounds-checked: a row or address outside the
// source gives zero bits and sets COO_ERR_GATHER in *err (never a wild read).
#include "coo_common.cuh"

// One thread per output element (row i, column c); consecutive threads read
// consecutive columns of one source row, so wide rows are read coalesced.
template <typename T>
__global__ void coo_gather_rows_copy(
        const T* __restrict__ values, i64 nrows, const i64* __restrict__ rows,
        i64 m, i64 k, T* __restrict__ out, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= m * k) return;
    i64 i = t / k, c = t - i * k;
    i64 r = rows[i];
    if (!coo_in_range(r, nrows)) {
        if (c == 0) coo_report(err, COO_ERR_GATHER);
        out[t] = T(0);
        return;
    }
    out[t] = values[r * k + c];
}

// One thread per output element (row i, column c): out[i, c] = values[rows[i], c],
// or all-zero bits where rows[i] < 0 (the side of a union that lacks the key).
template <typename T>
__global__ void coo_gather_rows_or_zero(
        const T* __restrict__ values, i64 nrows, const i64* __restrict__ rows,
        i64 m, i64 k, T* __restrict__ out, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= m * k) return;
    i64 i = t / k, c = t - i * k;
    i64 r = rows[i];
    if (r >= nrows) {
        if (c == 0) coo_report(err, COO_ERR_GATHER);
        r = -1;
    }
    out[t] = r >= 0 ? values[r * k + c] : T(0);
}

// One thread per output element (entry i, element c of its block):
// out[i, c] = source[addresses[i] + inner[c]] (the gather twin of scatter_set).
// inner travels by value (inner_val) unless the block has more than
// COO_MAX_DIMS elements, when inner_dev points to it on the device.
template <typename T>
__global__ void coo_gather_strided(
        const T* __restrict__ source, i64 nsource, const i64* __restrict__ addresses,
        const i64* __restrict__ inner_dev, coo_dims inner_val,
        i64 n, i64 k, T* __restrict__ out, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= n * k) return;
    i64 i = t / k, c = t - i * k;
    i64 a = coo_add_wrap(addresses[i], inner_dev ? inner_dev[c] : inner_val.v[c]);
    if (!coo_in_range(a, nsource)) {
        coo_report(err, COO_ERR_GATHER);
        out[t] = T(0);
        return;
    }
    out[t] = source[a];
}

// One thread per (sparse dim a, output column i): out[a, i] = indices[a, rows[i]];
// writes are coalesced along i.
extern "C" __global__ void coo_gather_columns(
        const i64* __restrict__ indices, const i64* __restrict__ rows,
        i64 d, i64 n, i64 m, i64* __restrict__ out, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= d * m) return;
    i64 a = t / m, i = t - a * m;
    i64 r = rows[i];
    if (!coo_in_range(r, n)) {
        if (a == 0) coo_report(err, COO_ERR_GATHER);
        out[t] = 0;
        return;
    }
    out[t] = indices[a * n + r];
}
