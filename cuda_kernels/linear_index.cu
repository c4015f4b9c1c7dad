// Linear index ("hash", SPEC 2): row-major key of each index column and its inverse.
#include "coo_common.cuh"

// One thread per stored entry i: keys[i] = sum_d indices[d, i] * strides.v[d].
// Reads are coalesced along i for every d (indices is (ndim, n), C order).
// The strides travel by value (coo_dims): a launch copies nothing from the host.
extern "C" __global__ void coo_linear_index_compute(
        const i64* __restrict__ indices, coo_dims strides, i64 ndim, i64 n, i64* __restrict__ keys) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    i64 h = 0;
    for (i64 d = 0; d < ndim; ++d) h += indices[d * n + i] * strides.v[d];
    keys[i] = h;
}

// linear_index with bounds (the kernel-API row's ``sizes``): as above, and an entry
// with an index outside its dimension (limits.v[d] = min(size, 2**63) as the bits of
// a u64, compared unsigned: negative indices are huge) gets the key COO_BAD_KEY,
// which every consumer treats as out of range (a gather reads zero, a scatter
// skips it, a sort clamps it), and is reported (COO_ERR_INDEX). Without this an
// index such as (0, 5) in a (3, 3) shape would alias the valid entry (1, 2).
#define COO_BAD_KEY (-(1LL << 62))
extern "C" __global__ void coo_linear_index_checked(
        const i64* __restrict__ indices, coo_dims strides, coo_dims limits, i64 ndim, i64 n,
        i64* __restrict__ keys, u64* __restrict__ err) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    i64 h = 0;
    bool bad = false;
    for (i64 d = 0; d < ndim; ++d) {
        i64 v = indices[d * n + i];
        bad |= (u64)v >= (u64)limits.v[d];
        h = coo_add_wrap(h, (i64)((u64)v * (u64)strides.v[d]));
    }
    if (bad) {
        h = COO_BAD_KEY;
        coo_report(err, COO_ERR_INDEX);
    }
    keys[i] = h;
}

// One thread per key i: out[d, i] = (keys[i] mod strides[d-1]) / strides[d].
// Writes are coalesced along i for every d; a zero stride (empty dim) gives 0.
extern "C" __global__ void coo_linear_index_unravel(
        const i64* __restrict__ keys, coo_dims strides, i64 ndim, i64 n, i64* __restrict__ out) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    i64 r = keys[i];
    for (i64 d = 0; d < ndim; ++d) {
        i64 s = strides.v[d];
        i64 q = s != 0 ? r / s : 0;
        out[d * n + i] = q;
        r -= q * s;
    }
}
