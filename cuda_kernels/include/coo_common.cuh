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

// Arithmetic of the value kernels. Products round each operation on its own
// (the *_rn intrinsics: no fused multiply-add), so complex products are
// (ac - bd) + i(ad + bc) exactly as NumPy and Numba compute them.
template <typename R>
struct coo_complex {
    R re, im;
};

__device__ __forceinline__ float coo_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double coo_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ u64 coo_mul(u64 a, u64 b) { return a * b; }
__device__ __forceinline__ coo_complex<float> coo_mul(coo_complex<float> x, coo_complex<float> y) {
    coo_complex<float> z;
    z.re = __fsub_rn(__fmul_rn(x.re, y.re), __fmul_rn(x.im, y.im));
    z.im = __fadd_rn(__fmul_rn(x.re, y.im), __fmul_rn(x.im, y.re));
    return z;
}
__device__ __forceinline__ coo_complex<double> coo_mul(coo_complex<double> x, coo_complex<double> y) {
    coo_complex<double> z;
    z.re = __dsub_rn(__dmul_rn(x.re, y.re), __dmul_rn(x.im, y.im));
    z.im = __dadd_rn(__dmul_rn(x.re, y.im), __dmul_rn(x.im, y.re));
    return z;
}

template <typename T>
__device__ __forceinline__ T coo_add(T a, T b) { return a + b; }
template <typename R>
__device__ __forceinline__ coo_complex<R> coo_add(coo_complex<R> a, coo_complex<R> b) {
    coo_complex<R> z;
    z.re = a.re + b.re;
    z.im = a.im + b.im;
    return z;
}

template <typename T>
__device__ __forceinline__ T coo_zero() { return T(0); }
template <>
__device__ __forceinline__ coo_complex<float> coo_zero<coo_complex<float> >() { coo_complex<float> z = {0.0f, 0.0f}; return z; }
template <>
__device__ __forceinline__ coo_complex<double> coo_zero<coo_complex<double> >() { coo_complex<double> z = {0.0, 0.0}; return z; }

#endif  // COOSPARSE_COO_COMMON_CUH
