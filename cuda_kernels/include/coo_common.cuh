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

// A block's shared array. On the host (coo_host_shim.cuh) its storage is
// poisoned at the start of every block; there, plain __shared__ is undefined.
#if !defined(COOSPARSE_HOST_EMULATION)
#define COO_SHARED(T, name, N) __shared__ T name[N]
#endif

// ---- small parameters travel by value (coosparse/_kernels/cuda/base.py: CudaLayer.dims)
// Strides, sizes and the like are host metadata: they are passed as one struct
// argument instead of a device array, so a launch copies nothing from the host
// (a host-to-device copy would break CUDA-graph capture). The layer fills the
// first ndim entries; NumPy's limit on dimensions is 64 as well.
#define COO_MAX_DIMS 64
struct coo_dims {
    i64 v[COO_MAX_DIMS];
};

// ---- the per-device error word (docs/cuda.md, "Out-of-range input")
// Kernels never read or write out of bounds, whatever the input (a COO built
// with check=False may hold any index, its flags may lie). Where an index,
// key or output slot is out of range a kernel writes a zero (or skips the
// write) and ORs a bit into *err; the host reads the word at the next point
// where the operation synchronises anyway (or in coosparse.check_device_errors).
#define COO_ERR_GATHER 1ULL   // a gather read outside its source: zero written
#define COO_ERR_SCATTER 2ULL  // a scatter element outside its target: not written
#define COO_ERR_KEY 4ULL      // a key outside [0, bound): clamped
#define COO_ERR_ORDER 8ULL    // keys not sorted / unique as their flags say: output slot skipped
#define COO_ERR_INDEX 16ULL   // an index outside its dimension: the entry's key made out of range

__device__ __forceinline__ void coo_report(u64* err, u64 code) {
    atomicOr(err, code);
}

// a + b with two's-complement wrap-around (no signed-overflow UB on garbage input).
__device__ __forceinline__ i64 coo_add_wrap(i64 a, i64 b) {
    return (i64)((u64)a + (u64)b);
}

// 0 <= i < n, with one comparison (negative i wraps to a huge unsigned value).
__device__ __forceinline__ bool coo_in_range(i64 i, i64 n) {
    return (u64)i < (u64)n;
}

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

// End of the run of keys equal to `key` that starts at f (keys sorted, f the
// lower bound): galloping (f+1, f+2, f+4, ...) then a binary search in the
// last step, so a run of c keys costs O(log c) reads and a unique key one.
__device__ __forceinline__ i64 coo_gallop_end(const i64* keys, i64 f, i64 m, i64 key) {
    if (f >= m || keys[f] != key) return f;
    i64 lo = f + 1, step = 1;  // keys[lo - 1] == key
    while (lo < m && keys[lo] == key) {
        i64 hi = m - lo > step ? lo + step : m;
        if (keys[hi - 1] != key) return coo_upper_bound(keys, lo, hi - 1, key);
        lo = hi;
        step <<= 1;
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

// The ordered sum of values[row(j) * k + c] for j in [lo, hi), row(j) = perm[j]
// (j when perm is null), added strictly in j order (bit-identical to a plain
// loop). Loads are issued COO_SUM_BATCH at a time before they are added, so a
// long run keeps several memory requests in flight per thread. A row outside
// [0, n) is skipped and reported. *any: false when nothing was added (the
// result is then zero).
#define COO_SUM_BATCH 8
template <typename T>
__device__ __forceinline__ T coo_ordered_sum(const T* __restrict__ values, i64 n, const i64* __restrict__ perm,
                                             i64 lo, i64 hi, i64 k, i64 c, u64* __restrict__ err, bool* any) {
    T acc = coo_zero<T>();
    bool first = true;
    for (i64 j0 = lo; j0 < hi; j0 += COO_SUM_BATCH) {
        T v[COO_SUM_BATCH];
        bool ok[COO_SUM_BATCH];
#pragma unroll
        for (int b = 0; b < COO_SUM_BATCH; ++b) {
            i64 j = j0 + b;
            i64 r = j < hi ? (perm ? perm[j] : j) : 0;
            ok[b] = j < hi && coo_in_range(r, n);
            if (j < hi && !ok[b]) coo_report(err, COO_ERR_GATHER);
            v[b] = ok[b] ? values[r * k + c] : coo_zero<T>();
        }
#pragma unroll
        for (int b = 0; b < COO_SUM_BATCH; ++b) {
            if (ok[b]) {
                acc = first ? v[b] : coo_add(acc, v[b]);
                first = false;
            }
        }
    }
    *any = !first;
    return acc;
}

#endif  // COOSPARSE_COO_COMMON_CUH
