// Sparse products (SPEC 10): SpMV/SpMM, dense x COO, SDDMM and SpGEMM's expansion.
//
// Every output element is computed by one thread, sequentially, in the order the
// kernel API defines (coosparse/_kernel_api.py), so results are bit-identical to
// the Numba layer: no atomics, no warp reductions (a tree reduction would change
// the order of the additions). Products are rounded on their own (coo_mul: no
// fused multiply-add). Types: unsigned long long (int64, modular), float,
// double, coo_complex<float>, coo_complex<double>.
#include "coo_common.cuh"

// One thread per row r in [0, nrows]: out[r] = first position i with rows[i] >= r
// (rows non-decreasing): the CSR row pointer.
extern "C" __global__ void coo_linalg_row_offsets(
        const i64* __restrict__ rows, i64 n, i64 nrows, i64* __restrict__ out) {
    i64 r = coo_thread_id();
    if (r > nrows) return;
    out[r] = coo_lower_bound(rows, 0, n, r);
}

// One thread per (row r, column j): out[r, j] = 0 + values[e] * dense[base + cols[e], j]
// over the row's positions p (e = perm[p] or p) in order; base = batch_base[r / rpb].
// Adjacent threads read adjacent columns of a dense row (coalesced for j-wide rows).
template <typename T>
__global__ void coo_linalg_spmm(
        const i64* __restrict__ offsets, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ cols, const T* __restrict__ values, const T* __restrict__ dense,
        i64 ncols, i64 nrows, i64 rpb, const i64* __restrict__ base, i64 has_base, T* __restrict__ out) {
    i64 t = coo_thread_id();
    if (t >= nrows * ncols) return;
    i64 r = t / ncols, j = t - r * ncols;
    i64 db = has_base ? base[r / rpb] : 0;
    T acc = coo_zero<T>();
    for (i64 p = offsets[r]; p < offsets[r + 1]; ++p) {
        i64 e = has_perm ? perm[p] : p;
        acc = coo_add(acc, coo_mul(values[e], dense[(db + cols[e]) * ncols + j]));
    }
    out[t] = acc;
}

// One thread per grouped position p: key[p] = b * ncols + cols[e], b the batch whose
// range [boff[b], boff[b+1]) holds p (e = perm[p] or p). A stable sort of these keys
// groups every (batch, column) in the order of the positions.
extern "C" __global__ void coo_linalg_batch_col_key(
        const i64* __restrict__ boff, i64 nbatch, const i64* __restrict__ perm, i64 has_perm,
        const i64* __restrict__ cols, i64 n, i64 ncols, i64* __restrict__ key) {
    i64 p = coo_thread_id();
    if (p >= n) return;
    i64 b = coo_upper_bound(boff, 0, nbatch + 1, p) - 1;
    i64 e = has_perm ? perm[p] : p;
    key[p] = b * ncols + cols[e];
}

// One thread per output element (row rr = b * rpb + m, column c): the entries of
// (batch b, column c), positions goff[b*ncols + c] .. in order (e = order[q]):
// out = 0 + dense[base[b] + m, krow[e]] * values[e].
template <typename T>
__global__ void coo_linalg_dense_spmm(
        const T* __restrict__ dense, i64 k, const i64* __restrict__ base, i64 rpb,
        const i64* __restrict__ goff, const i64* __restrict__ order, const i64* __restrict__ krow,
        const T* __restrict__ values, i64 nrows, i64 ncols, T* __restrict__ out) {
    i64 t = coo_thread_id();
    if (t >= nrows * ncols) return;
    i64 rr = t / ncols, c = t - rr * ncols;
    i64 b = rr / rpb, m = rr - b * rpb;
    const T* arow = dense + (base[b] + m) * k;
    i64 g = b * ncols + c;
    T acc = coo_zero<T>();
    for (i64 q = goff[g]; q < goff[g + 1]; ++q) {
        i64 e = order[q];
        acc = coo_add(acc, coo_mul(arow[krow[e]], values[e]));
    }
    out[t] = acc;
}

// One thread per entry e: the dot product of x[rows[e]*rs + j*xj] and
// y[cols[e]*cs + j*yj], j < k, as eight interleaved lanes (lane l adds j = l, l+8, ...
// from 0), combined ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)) -- the Numba kernel's order.
template <typename T>
__global__ void coo_linalg_sddmm(
        const i64* __restrict__ rows, i64 rs, const i64* __restrict__ cols, i64 cs,
        const T* __restrict__ x, i64 xj, const T* __restrict__ y, i64 yj, i64 k, i64 n, T* __restrict__ out) {
    i64 e = coo_thread_id();
    if (e >= n) return;
    i64 xa = rows[e] * rs, ya = cols[e] * cs;
    T s[8];
#pragma unroll
    for (int l = 0; l < 8; ++l) s[l] = coo_zero<T>();
    i64 j = 0;
    for (; j + 8 <= k; j += 8) {
#pragma unroll
        for (int l = 0; l < 8; ++l) s[l] = coo_add(s[l], coo_mul(x[xa + (j + l) * xj], y[ya + (j + l) * yj]));
    }
#pragma unroll
    for (int l = 0; l < 7; ++l)
        if (j + l < k) s[l] = coo_add(s[l], coo_mul(x[xa + (j + l) * xj], y[ya + (j + l) * yj]));
    out[e] = coo_add(coo_add(coo_add(s[0], s[1]), coo_add(s[2], s[3])),
                     coo_add(coo_add(s[4], s[5]), coo_add(s[6], s[7])));
}

// One thread per grouped A position p: count[p] = length of B's row a_cols[e].
extern "C" __global__ void coo_linalg_spgemm_count(
        const i64* __restrict__ a_perm, i64 has_a_perm, const i64* __restrict__ a_cols,
        const i64* __restrict__ b_offsets, i64 na, i64* __restrict__ count) {
    i64 p = coo_thread_id();
    if (p >= na) return;
    i64 e = has_a_perm ? a_perm[p] : p;
    i64 k = a_cols[e];
    count[p] = b_offsets[k + 1] - b_offsets[k];
}

// One thread per grouped A position p (row r: a_offsets[r] <= p < a_offsets[r+1]):
// writes the products with B's row a_cols[e], in B's grouped order, at start[p]..:
// out_row = r, out_col = b_cols[f], prod = a_values[e] * b_values[f]. Expansion
// order = (A position, B position), which the stable sort by (row, col) keeps.
template <typename T>
__global__ void coo_linalg_spgemm_expand(
        const i64* __restrict__ a_offsets, i64 nrows, const i64* __restrict__ a_perm, i64 has_a_perm,
        const i64* __restrict__ a_cols, const T* __restrict__ a_values,
        const i64* __restrict__ b_offsets, const i64* __restrict__ b_perm, i64 has_b_perm,
        const i64* __restrict__ b_cols, const T* __restrict__ b_values, const i64* __restrict__ start,
        i64 na, i64* __restrict__ out_row, i64* __restrict__ out_col, T* __restrict__ prod) {
    i64 p = coo_thread_id();
    if (p >= na) return;
    i64 r = coo_upper_bound(a_offsets, 0, nrows + 1, p) - 1;
    i64 e = has_a_perm ? a_perm[p] : p;
    i64 k = a_cols[e];
    T av = a_values[e];
    i64 o = start[p];
    for (i64 q = b_offsets[k]; q < b_offsets[k + 1]; ++q, ++o) {
        i64 f = has_b_perm ? b_perm[q] : q;
        out_row[o] = r;
        out_col[o] = b_cols[f];
        prod[o] = coo_mul(av, b_values[f]);
    }
}
