// Sparse products (SPEC 10): SpMV/SpMM, dense x COO, SDDMM and SpGEMM's expansion.
//
// Every output element is computed by one thread, sequentially, in the order the
// kernel API defines (coosparse/_kernels/api.py), so results are bit-identical to
// the Numba layer: no atomics, no warp reductions (a tree reduction would change
// the order of the additions). Products are rounded on their own (coo_mul: no
// fused multiply-add). Types: unsigned long long (int64, modular), float,
// double, coo_complex<float>, coo_complex<double>.
//
// Memory safety (docs/cuda.md, "Out-of-range input"): every index of the COO
// (row and column keys: an index row, or a key fused by the checked linear_index)
// is compared (unsigned, one compare) with its bound in the pass that reads it;
// one outside contributes nothing (or zero) and ORs COO_ERR_INDEX into *err, so
// an index of a check=False array never aliases another row, column or batch.
// Keys that a sorted flag promised in order and that are not set COO_ERR_ORDER.
// Reads through internal arrays (positions from offsets, permutations, batch
// bases, addresses) are checked against the length of the array they read
// (COO_ERR_GATHER). Nothing synchronises for this: the word is read at the next
// synchronising point or by check_device_errors(). Nullable pointers (perm,
// base, batch offsets) stand for the identity / zero / one batch.
#include "coo_common.cuh"

// Threads t < max(nrows + 1, n). t <= nrows: out[t] = first position i with
// rows[i] >= t (rows non-decreasing): the CSR row pointer. t < n: rows[t] is
// checked (outside [0, nrows): COO_ERR_INDEX, the entry falls outside every row;
// rows[t] > rows[t + 1]: COO_ERR_ORDER, flags that say sorted lie).
extern "C" __global__ void coo_linalg_row_offsets(
        const i64* __restrict__ rows, i64 n, i64 nrows, i64* __restrict__ out, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t <= nrows) out[t] = coo_lower_bound(rows, 0, n, t);
    if (t < n) {
        i64 v = rows[t];
        if (!coo_in_range(v, nrows)) coo_report(err, COO_ERR_INDEX);
        else if (t + 1 < n && rows[t + 1] < v) coo_report(err, COO_ERR_ORDER);
    }
}

// [lo, hi) = offsets[r] .. offsets[r + 1] clipped to [0, n) (reported when clipped).
__device__ __forceinline__ bool coo_linalg_run(const i64* __restrict__ offsets, i64 r, i64 n, i64* lo, i64* hi) {
    i64 a = offsets[r], b = offsets[r + 1];
    bool ok = a >= 0 && b <= n;
    *lo = a < 0 ? 0 : a;
    *hi = b > n ? n : b;
    return ok;
}

// One thread per (row r, column j): out[r, j] = 0 + values[e] * dense[base + cols[e], j]
// over the row's positions p (e = perm[p] or p) in order; base = batch_base[r / rpb]
// (0 without batch_base). Adjacent threads read adjacent columns of a dense row
// (coalesced for wide rows). n entries, nd dense rows, nbase batch bases; cols[e]
// outside [0, kb) (unsigned: kb holds the bits of a u64) is skipped (COO_ERR_INDEX).
template <typename T>
__global__ void coo_linalg_spmm(
        const i64* __restrict__ offsets, i64 nrows, const i64* __restrict__ perm,
        const i64* __restrict__ cols, i64 kb, const T* __restrict__ values, i64 n,
        const T* __restrict__ dense, i64 nd, i64 ncols, i64 rpb, const i64* __restrict__ base, i64 nbase,
        T* __restrict__ out, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= nrows * ncols) return;
    i64 r = t / ncols, j = t - r * ncols;
    bool bad = false, bad_index = false;
    i64 db = 0;
    if (base) {
        i64 b = r / rpb;
        if (coo_in_range(b, nbase)) db = base[b];
        else bad = true;
    }
    T acc = coo_zero<T>();
    i64 lo, hi;
    if (!bad) {
        bad = !coo_linalg_run(offsets, r, n, &lo, &hi);
        for (i64 p = lo; p < hi; ++p) {
            i64 e = perm ? perm[p] : p;
            if (!coo_in_range(e, n)) { bad = true; continue; }
            i64 k = cols[e];
            if (!coo_in_range(k, kb)) { bad_index = true; continue; }
            i64 c = coo_add_wrap(db, k);
            if (!coo_in_range(c, nd)) { bad = true; continue; }
            acc = coo_add(acc, coo_mul(values[e], dense[c * ncols + j]));
        }
    }
    if (bad && j == 0) coo_report(err, COO_ERR_GATHER);
    if (bad_index && j == 0) coo_report(err, COO_ERR_INDEX);
    out[t] = acc;
}

// One thread per grouped position p: key[p] = b * ncols + cols[e], b the batch whose
// range [boff[b], boff[b+1]) holds p (b = 0 without boff), e = perm[p] or p. A
// stable sort of these keys groups every (batch, column) in the order of the
// positions. An entry that cannot be placed (batch or perm out of range:
// COO_ERR_GATHER; column outside [0, ncols): COO_ERR_INDEX) gets the sentinel key
// nbatch * ncols, which sorts last and joins no group.
extern "C" __global__ void coo_linalg_batch_col_key(
        const i64* __restrict__ boff, i64 nbatch, const i64* __restrict__ perm,
        const i64* __restrict__ cols, i64 n, i64 ncols, i64* __restrict__ key, u64* __restrict__ err) {
    i64 p = coo_thread_id();
    if (p >= n) return;
    i64 b = boff ? coo_upper_bound(boff, 0, nbatch + 1, p) - 1 : 0;
    i64 e = perm ? perm[p] : p;
    bool placed = coo_in_range(e, n) && coo_in_range(b, nbatch);
    i64 c = placed ? cols[e] : -1;
    if (!placed || !coo_in_range(c, ncols)) {
        coo_report(err, placed ? COO_ERR_INDEX : COO_ERR_GATHER);
        key[p] = nbatch * ncols;
        return;
    }
    key[p] = b * ncols + c;
}

// One thread per output element (row rr = b * rpb + m, column c): the entries of
// (batch b, column c), positions goff[b*ncols + c] .. in order (e = order[q]):
// out = 0 + dense[base[b] + m, krow[e]] * values[e] (base 0 without base; a batch
// outside the nbase bases, or a dense row outside [0, nd): zero, COO_ERR_GATHER).
// dense has nd rows of k elements; n entries; krow[e] outside [0, k): COO_ERR_INDEX.
template <typename T>
__global__ void coo_linalg_dense_spmm(
        const T* __restrict__ dense, i64 nd, i64 k, const i64* __restrict__ base, i64 nbase, i64 rpb,
        const i64* __restrict__ goff, const i64* __restrict__ order, const i64* __restrict__ krow,
        const T* __restrict__ values, i64 n, i64 nrows, i64 ncols, T* __restrict__ out, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= nrows * ncols) return;
    i64 rr = t / ncols, c = t - rr * ncols;
    i64 b = rr / rpb, m = rr - b * rpb;
    bool based = !base || coo_in_range(b, nbase);
    i64 drow = based ? coo_add_wrap(base ? base[b] : 0, m) : -1;
    T acc = coo_zero<T>();
    bool bad = !coo_in_range(drow, nd), bad_index = false;
    if (!bad) {
        const T* arow = dense + drow * k;
        i64 lo, hi;
        bad = !coo_linalg_run(goff, b * ncols + c, n, &lo, &hi);
        for (i64 q = lo; q < hi; ++q) {
            i64 e = order[q];
            if (!coo_in_range(e, n)) { bad = true; continue; }
            i64 kk = krow[e];
            if (!coo_in_range(kk, k)) { bad_index = true; continue; }
            acc = coo_add(acc, coo_mul(arow[kk], values[e]));
        }
    }
    if (bad && m == 0) coo_report(err, COO_ERR_GATHER);
    if (bad_index && m == 0) coo_report(err, COO_ERR_INDEX);
    out[t] = acc;
}

// One thread per entry e: the dot product of x[rows[e]*rs + j*xj] and
// y[cols[e]*cs + j*yj], j < k, as eight interleaved lanes (lane l adds j = l, l+8, ...
// from 0), combined ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)) -- the Numba kernel's order.
// rows[e] outside [0, rb) or cols[e] outside [0, cb) (unsigned; rb, cb hold the bits
// of a u64) gives 0 (COO_ERR_INDEX). x has nx elements, y ny: an entry whose first
// or last address leaves them (the addresses of one entry are an arithmetic
// progression) gives 0 (COO_ERR_GATHER).
template <typename T>
__global__ void coo_linalg_sddmm(
        const i64* __restrict__ rows, i64 rs, i64 rb, const i64* __restrict__ cols, i64 cs, i64 cb,
        const T* __restrict__ x, i64 nx, i64 xj, const T* __restrict__ y, i64 ny, i64 yj,
        i64 k, i64 n, T* __restrict__ out, u64* __restrict__ err) {
    i64 e = coo_thread_id();
    if (e >= n) return;
    i64 ri = rows[e], ci = cols[e];
    if (k > 0 && !(coo_in_range(ri, rb) && coo_in_range(ci, cb))) {
        coo_report(err, COO_ERR_INDEX);
        out[e] = coo_zero<T>();
        return;
    }
    i64 xa = (i64)((u64)ri * (u64)rs), ya = (i64)((u64)ci * (u64)cs);
    if (k > 0 && !(coo_in_range(xa, nx) && coo_in_range(coo_add_wrap(xa, (k - 1) * xj), nx)
                   && coo_in_range(ya, ny) && coo_in_range(coo_add_wrap(ya, (k - 1) * yj), ny))) {
        coo_report(err, COO_ERR_GATHER);
        out[e] = coo_zero<T>();
        return;
    }
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

// B's run for A entry e (grouped position p): [lo, hi) in B's grouped positions, clipped
// to [0, nb). Returns 0, or the error bit (nothing to expand): COO_ERR_GATHER when e is
// out of range, COO_ERR_INDEX when a_cols[e] (B's row) is outside [0, nbrows).
__device__ __forceinline__ u64 coo_linalg_b_run(
        const i64* __restrict__ a_perm, const i64* __restrict__ a_cols, i64 na, i64 p,
        const i64* __restrict__ b_offsets, i64 nbrows, i64 nb, i64* e, i64* lo, i64* hi) {
    *e = a_perm ? a_perm[p] : p;
    if (!coo_in_range(*e, na)) return COO_ERR_GATHER;
    i64 kk = a_cols[*e];
    if (!coo_in_range(kk, nbrows)) return COO_ERR_INDEX;
    bool ok = coo_linalg_run(b_offsets, kk, nb, lo, hi);
    if (*hi < *lo) *hi = *lo;
    return ok ? 0 : COO_ERR_GATHER;
}

// Threads t < n: keys[t] outside [0, bound) (unsigned; bound holds the bits of a
// u64): COO_ERR_INDEX; with ``increasing`` (A's distinct row keys), keys[t + 1] <=
// keys[t] (a sorted flag that lies): COO_ERR_ORDER. Reads only.
extern "C" __global__ void coo_linalg_check_keys(
        const i64* __restrict__ keys, i64 n, i64 bound, i64 increasing, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= n) return;
    i64 v = keys[t];
    if (!coo_in_range(v, bound)) coo_report(err, COO_ERR_INDEX);
    if (increasing && t + 1 < n && keys[t + 1] <= v) coo_report(err, COO_ERR_ORDER);
}

// One thread per grouped A position p: count[p] = length of B's row a_cols[e]
// (B: nbrows rows over nb entries).
extern "C" __global__ void coo_linalg_spgemm_count(
        const i64* __restrict__ a_perm, const i64* __restrict__ a_cols, i64 na,
        const i64* __restrict__ b_offsets, i64 nbrows, i64 nb, i64* __restrict__ count, u64* __restrict__ err) {
    i64 p = coo_thread_id();
    if (p >= na) return;
    i64 e, lo = 0, hi = 0;
    u64 bad = coo_linalg_b_run(a_perm, a_cols, na, p, b_offsets, nbrows, nb, &e, &lo, &hi);
    if (bad) coo_report(err, bad);
    count[p] = hi - lo;
}

// One thread per grouped A position p (row r: a_offsets[r] <= p < a_offsets[r+1]):
// writes the products with B's row a_cols[e], in B's grouped order, at start[p]..:
// out_row = r, out_col = b_cols[f], prod = a_values[e] * b_values[f]. Expansion
// order = (A position, B position), which the stable sort by (row, col) keeps.
// A B entry out of range (perm: COO_ERR_GATHER, column outside [0, ncols):
// COO_ERR_INDEX) writes a zero product at column 0; every slot of
// [start[p], start[p] + count[p]) is written.
template <typename T>
__global__ void coo_linalg_spgemm_expand(
        const i64* __restrict__ a_offsets, i64 nrows, const i64* __restrict__ a_perm,
        const i64* __restrict__ a_cols, const T* __restrict__ a_values, i64 na,
        const i64* __restrict__ b_offsets, i64 nbrows, const i64* __restrict__ b_perm,
        const i64* __restrict__ b_cols, const T* __restrict__ b_values, i64 nb, i64 ncols,
        const i64* __restrict__ start, i64 total, i64* __restrict__ out_row, i64* __restrict__ out_col,
        T* __restrict__ prod, u64* __restrict__ err) {
    i64 p = coo_thread_id();
    if (p >= na) return;
    i64 r = coo_upper_bound(a_offsets, 0, nrows + 1, p) - 1;
    bool bad = !coo_in_range(r, nrows), bad_index = false;
    r = r < 0 ? 0 : (r >= nrows ? nrows - 1 : r);
    i64 e, lo = 0, hi = 0;
    u64 code = coo_linalg_b_run(a_perm, a_cols, na, p, b_offsets, nbrows, nb, &e, &lo, &hi);
    if (code == COO_ERR_INDEX) bad_index = true;
    else if (code) bad = true;
    i64 o = start[p];
    if (hi > lo && !(coo_in_range(o, total) && hi - lo <= total - o)) {
        coo_report(err, COO_ERR_GATHER);
        return;
    }
    for (i64 q = lo; q < hi; ++q, ++o) {
        i64 f = b_perm ? b_perm[q] : q;
        bool placed = coo_in_range(f, nb);
        i64 c = placed ? b_cols[f] : -1;
        out_row[o] = r;
        if (!coo_in_range(c, ncols)) {
            if (placed) bad_index = true;
            else bad = true;
            out_col[o] = 0;
            prod[o] = coo_zero<T>();
            continue;
        }
        out_col[o] = c;
        prod[o] = coo_mul(a_values[e], b_values[f]);
    }
    if (bad) coo_report(err, COO_ERR_GATHER);
    if (bad_index) coo_report(err, COO_ERR_INDEX);
}
