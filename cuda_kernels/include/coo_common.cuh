// Shared definitions of the coosparse CUDA kernels.
//
// Under NVRTC/nvcc this is plain CUDA. Compiled by a host C++ compiler (the
// emulated backend, COOSPARSE_HOST_EMULATION), the shim below maps the CUDA
// built-ins onto sequential loops; see coo_host_shim.cuh.
#ifndef COOSPARSE_COO_COMMON_CUH
#define COOSPARSE_COO_COMMON_CUH

#if defined(COOSPARSE_HOST_EMULATION)
#include "coo_host_shim.cuh"
#endif

typedef long long i64;
typedef unsigned long long u64;

// Global linear thread id of a 1-D launch (grids are 1-D everywhere).
__device__ __forceinline__ i64 coo_thread_id() {
    return (i64)blockIdx.x * (i64)blockDim.x + (i64)threadIdx.x;
}

// Lower bound: first position p in [lo, hi) with keys[p] >= key (hi if none).
__device__ __forceinline__ i64 coo_lower_bound(const i64* keys, i64 lo, i64 hi, i64 key) {
    while (lo < hi) {
        i64 mid = lo + ((hi - lo) >> 1);
        if (keys[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Upper bound: first position p in [lo, hi) with keys[p] > key (hi if none).
__device__ __forceinline__ i64 coo_upper_bound(const i64* keys, i64 lo, i64 hi, i64 key) {
    while (lo < hi) {
        i64 mid = lo + ((hi - lo) >> 1);
        if (keys[mid] <= key) lo = mid + 1; else hi = mid;
    }
    return lo;
}

#endif  // COOSPARSE_COO_COMMON_CUH
