// The sorted union of two strictly increasing key arrays (merge by ranks, SPEC 4 add).
//
// Entry a[i] lands at union position i + lb_b(a[i]) - common(< a[i]); an
// unmatched b[j] at j + lb_a(b[j]) - common(< b[j]), where common(< x) is an
// exclusive scan of a's match flags. No thread depends on another's output.
// Keys that are not strictly increasing (a check=False COO whose flags lie)
// can make a slot fall outside [0, m): such a write is skipped and reported
// (COO_ERR_ORDER), and the readers below check every position they follow.
#include "coo_common.cuh"

// One thread per a-entry i: lb[i] = lower bound of a[i] in b; matched[i] = 1
// when b holds a[i] (the caller scans matched into common, length na + 1).
extern "C" __global__ void coo_union_rank(
        const i64* __restrict__ a_keys, const i64* __restrict__ b_keys,
        i64 na, i64 nb, i64* __restrict__ lb, i64* __restrict__ matched) {
    i64 i = coo_thread_id();
    if (i >= na) return;
    i64 k = a_keys[i];
    i64 p = coo_lower_bound(b_keys, 0, nb, k);
    lb[i] = p;
    matched[i] = (p < nb && b_keys[p] == k) ? 1 : 0;
}

// One thread per a-entry i: writes its union slot (a_pos = i, b_pos = the
// matching b position or -1). common[i] = matched a-entries before i.
extern "C" __global__ void coo_union_write_a(
        const i64* __restrict__ lb, const i64* __restrict__ matched, const i64* __restrict__ common,
        i64 na, i64 m, i64* __restrict__ a_pos, i64* __restrict__ b_pos, u64* __restrict__ err) {
    i64 i = coo_thread_id();
    if (i >= na) return;
    i64 u = i + lb[i] - common[i];
    if (!coo_in_range(u, m)) {
        coo_report(err, COO_ERR_ORDER);
        return;
    }
    a_pos[u] = i;
    b_pos[u] = matched[i] ? lb[i] : -1;
}

// One thread per b-entry j: an entry absent from a writes its own union slot
// (a_pos = -1, b_pos = j); entries present in a were written by coo_union_write_a.
extern "C" __global__ void coo_union_write_b(
        const i64* __restrict__ a_keys, const i64* __restrict__ b_keys, const i64* __restrict__ common,
        i64 na, i64 nb, i64 m, i64* __restrict__ a_pos, i64* __restrict__ b_pos, u64* __restrict__ err) {
    i64 j = coo_thread_id();
    if (j >= nb) return;
    i64 k = b_keys[j];
    i64 p = coo_lower_bound(a_keys, 0, na, k);
    if (p < na && a_keys[p] == k) return;
    i64 u = j + p - common[p];
    if (!coo_in_range(u, m)) {
        coo_report(err, COO_ERR_ORDER);
        return;
    }
    a_pos[u] = -1;
    b_pos[u] = j;
}

// A union slot's source: true when (p, q) name a valid a-entry (p >= 0) or,
// failing that, a valid b-entry; false (reported) for a slot nobody wrote right.
__device__ __forceinline__ bool coo_union_slot_ok(i64 p, i64 q, i64 na, i64 nb) {
    return p >= 0 ? p < na && q < nb : coo_in_range(q, nb);
}

// One thread per (sparse dim x, union entry u): the index column from a where
// a_pos[u] >= 0, else from b; writes coalesced along u.
extern "C" __global__ void coo_union_columns(
        const i64* __restrict__ a_idx, const i64* __restrict__ b_idx,
        const i64* __restrict__ a_pos, const i64* __restrict__ b_pos,
        i64 d, i64 na, i64 nb, i64 m, i64* __restrict__ out, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= d * m) return;
    i64 x = t / m, u = t - x * m;
    i64 p = a_pos[u], q = b_pos[u];
    if (!coo_union_slot_ok(p, q, na, nb)) {
        if (x == 0) coo_report(err, COO_ERR_ORDER);
        out[t] = 0;
        return;
    }
    out[t] = p >= 0 ? a_idx[x * na + p] : b_idx[x * nb + q];
}

// One thread per (union entry u, column c): (a[a_pos[u]] or 0) + (b[b_pos[u]] or 0),
// or minus with negate; a missing side contributes nothing (-b, not 0 - b).
template <typename T>
__global__ void coo_union_values(
        const T* __restrict__ a_vals, const T* __restrict__ b_vals,
        const i64* __restrict__ a_pos, const i64* __restrict__ b_pos,
        i64 negate, i64 na, i64 nb, i64 m, i64 k, T* __restrict__ out, u64* __restrict__ err) {
    i64 t = coo_thread_id();
    if (t >= m * k) return;
    i64 u = t / k, c = t - u * k;
    i64 p = a_pos[u], q = b_pos[u];
    if (!coo_union_slot_ok(p, q, na, nb)) {
        if (c == 0) coo_report(err, COO_ERR_ORDER);
        out[t] = T(0);
        return;
    }
    if (p >= 0 && q >= 0) {
        T x = a_vals[p * k + c], y = b_vals[q * k + c];
        out[t] = negate ? T(x - y) : T(x + y);
    } else if (p >= 0) {
        out[t] = a_vals[p * k + c];
    } else {
        T y = b_vals[q * k + c];
        out[t] = negate ? T(-y) : y;
    }
}
