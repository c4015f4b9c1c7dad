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
