// Sparse products (SPEC 10): SpMV/SpMM, dense x COO, SDDMM and SpGEMM's expansion.
//
// Every output element is computed in the order the kernel API defines
// (coosparse/_kernels/api.py), so results are bit-identical to the Numba layer: no
// atomics. Sums run in one thread, except SDDMM's eight lanes, whose fixed
// combination (xor shuffles 1, 2, 4) is the Numba kernel's. Products are rounded on their own (coo_mul: no
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

// Few dense columns (ncols <= 8): the rows' entries are staged through shared
// memory. A block of 256 threads takes 256 / lanes consecutive rows (lanes: ncols
// rounded up to a power of two); thread (row r, column j) as above. The block's
// entries, offsets[r0] .. offsets[r1], go through shared memory COO_SPMM_TILE at
// a time, loaded by all its threads together (consecutive threads, consecutive
// positions: the column indices and values are read in coalesced runs, not by
// 32 threads walking 32 rows); then each thread adds its row's entries of the
// tile, in position order, exactly as coo_linalg_spmm does (the same bits). A
// position whose perm entry is out of range is staged as COO_SPMM_BAD (it adds
// nothing; COO_ERR_GATHER). Every thread of the block takes part in the loads
// and the barriers, those past the last row or column too. Cooperative
// (cuda_kernels.COOPERATIVE).
#define COO_SPMM_TILE 1024
#define COO_SPMM_BAD (-9223372036854775807LL - 1)

template <typename T>
__global__ void coo_linalg_spmm_staged(
        const i64* __restrict__ offsets, i64 nrows, const i64* __restrict__ perm,
        const i64* __restrict__ cols, i64 kb, const T* __restrict__ values, i64 n,
        const T* __restrict__ dense, i64 nd, i64 ncols, i64 lanes, i64 rpb, const i64* __restrict__ base,
        i64 nbase, T* __restrict__ out, u64* __restrict__ err) {
    COO_SHARED(i64, stage_cols, COO_SPMM_TILE);
    COO_SHARED(T, stage_values, COO_SPMM_TILE);
    i64 block_rows = (i64)blockDim.x / lanes;
    i64 r0 = (i64)blockIdx.x * block_rows;
    i64 r1 = r0 + block_rows < nrows ? r0 + block_rows : nrows;
    i64 rl = (i64)threadIdx.x / lanes;
    i64 r = r0 + rl, j = (i64)threadIdx.x - rl * lanes;
    bool mine = r < nrows && j < ncols;
    bool bad = false, bad_index = false;
    i64 p0, p1, lo = 0, hi = 0, db = 0;
    coo_linalg_run(offsets, r0, n, &p0, &hi);  // (the block's first position; hi unused)
    coo_linalg_run(offsets, r1 - 1, n, &lo, &p1);  // (... and its end)
    if (mine) {
        if (base) {
            i64 b = r / rpb;
            if (coo_in_range(b, nbase)) db = base[b];
            else bad = true;
        }
        if (!bad) {
            bad = !coo_linalg_run(offsets, r, n, &lo, &hi);
            if (lo < p0 || hi > p1) bad = true;  // (offsets that are not monotonic: only the block's part)
        } else {
            lo = hi = 0;
        }
    }
    T acc = coo_zero<T>();
    for (i64 t0 = p0; t0 < p1; t0 += COO_SPMM_TILE) {
        i64 m = p1 - t0 < COO_SPMM_TILE ? p1 - t0 : COO_SPMM_TILE;
        for (i64 q = threadIdx.x; q < m; q += blockDim.x) {
            i64 p = t0 + q;
            i64 e = perm ? perm[p] : p;
            if (coo_in_range(e, n)) {
                stage_cols[q] = cols[e];
                stage_values[q] = values[e];
            } else {
                stage_cols[q] = COO_SPMM_BAD;
                stage_values[q] = coo_zero<T>();
            }
        }
        __syncthreads();
        if (mine) {
            i64 a = lo > t0 ? lo : t0, b = hi < t0 + m ? hi : t0 + m;
            for (i64 p = a; p < b; ++p) {
                i64 k = stage_cols[p - t0];
                if (k == COO_SPMM_BAD) { bad = true; continue; }
                if (!coo_in_range(k, kb)) { bad_index = true; continue; }
                i64 c = coo_add_wrap(db, k);
                if (!coo_in_range(c, nd)) { bad = true; continue; }
                acc = coo_add(acc, coo_mul(stage_values[p - t0], dense[c * ncols + j]));
            }
        }
        __syncthreads();
    }
    if (mine) {
        if (bad && j == 0) coo_report(err, COO_ERR_GATHER);
        if (bad_index && j == 0) coo_report(err, COO_ERR_INDEX);
        out[r * ncols + j] = acc;
    }
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

// Eight lanes per entry e (threads 8e .. 8e + 7, in one warp): the dot product of
// x[rows[e]*rs + j*xj] and y[cols[e]*cs + j*yj], j < k. Lane l adds the terms
// j = l, l + 8, ... to 0 in turn (the Numba kernel's lane l: neighbouring lanes
// read neighbouring terms, so a warp's load touches 4 entries' rows, not 32);
// __shfl_xor_sync 1, 2, 4 then give lane 0 ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)),
// the Numba kernel's combination (an addition's operands commute bit for bit, so
// lane 1's s1 + s0 is lane 0's s0 + s1). Every lane of the warp takes part in the
// shuffles, those past the last entry with zeros. rows[e] outside [0, rb) or
// cols[e] outside [0, cb) (unsigned; rb, cb hold the bits of a u64) gives 0
// (COO_ERR_INDEX). x has nx elements, y ny: an entry whose first or last address
// leaves them (the addresses of one entry are an arithmetic progression) gives 0
// (COO_ERR_GATHER). Cooperative (cuda_kernels.COOPERATIVE): the emulation runs
// each lane as a fiber and exchanges the values when the warp's lanes all wait.
template <typename T>
__device__ __forceinline__ T coo_shfl_xor(T v, int lane_mask) {
    return __shfl_xor_sync(0xffffffffu, v, lane_mask);
}
template <typename R>
__device__ __forceinline__ coo_complex<R> coo_shfl_xor(coo_complex<R> v, int lane_mask) {
    coo_complex<R> z;
    z.re = __shfl_xor_sync(0xffffffffu, v.re, lane_mask);
    z.im = __shfl_xor_sync(0xffffffffu, v.im, lane_mask);
    return z;
}

template <typename T>
__global__ void coo_linalg_sddmm(
        const i64* __restrict__ rows, i64 rs, i64 rb, const i64* __restrict__ cols, i64 cs, i64 cb,
        const T* __restrict__ x, i64 nx, i64 xj, const T* __restrict__ y, i64 ny, i64 yj,
        i64 k, i64 n, T* __restrict__ out, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    i64 e = t >> 3;
    int l = (int)(t & 7);
    T s = coo_zero<T>();
    u64 bad = 0;
    if (e < n && k > 0) {
        i64 ri = rows[e], ci = cols[e];
        i64 xa = (i64)((u64)ri * (u64)rs), ya = (i64)((u64)ci * (u64)cs);
        if (!(coo_in_range(ri, rb) && coo_in_range(ci, cb))) bad = COO_ERR_INDEX;
        else if (!(coo_in_range(xa, nx) && coo_in_range(coo_add_wrap(xa, (k - 1) * xj), nx)
                   && coo_in_range(ya, ny) && coo_in_range(coo_add_wrap(ya, (k - 1) * yj), ny)))
            bad = COO_ERR_GATHER;
        else
            for (i64 j = l; j < k; j += 8) s = coo_add(s, coo_mul(x[xa + j * xj], y[ya + j * yj]));
    }
    s = coo_add(s, coo_shfl_xor(s, 1));
    s = coo_add(s, coo_shfl_xor(s, 2));
    s = coo_add(s, coo_shfl_xor(s, 4));
    if (e < n && l == 0) {
        if (bad) coo_report(err, bad);
        out[e] = bad ? coo_zero<T>() : s;
    }
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
