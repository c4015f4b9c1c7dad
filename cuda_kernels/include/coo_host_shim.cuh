// Host emulation of the CUDA execution model, for the `cuda-emulated` backend.
//
// The .cu files are compiled by g++ with COOSPARSE_HOST_EMULATION defined.
// threadIdx/blockIdx/blockDim/gridDim become thread_local variables and a
// launch (coo_host::launch) runs every thread of every block in order, one
// function call each: block 0 threads 0..B-1, then block 1, ... This is a
// valid CUDA schedule only for kernels whose threads do not communicate, so
// __syncthreads, shared memory and warp intrinsics are deliberately NOT
// defined here: a kernel using them fails to compile for the host and must be
// kept out of the emulated set (none is, today). Integer atomics are plain
// read-modify-writes, exact under sequential execution.
#ifndef COOSPARSE_COO_HOST_SHIM_CUH
#define COOSPARSE_COO_HOST_SHIM_CUH

#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

struct dim3 {
    unsigned int x, y, z;
};

namespace coo_host {
inline thread_local dim3 thread_idx = {0, 0, 0};
inline thread_local dim3 block_idx = {0, 0, 0};
inline thread_local dim3 block_dim = {1, 1, 1};
inline thread_local dim3 grid_dim = {1, 1, 1};

// Kernel parameters arrive as CUDA's cuLaunchKernel passes them: an array of
// pointers, one to each argument's storage.
template <typename T>
inline T load_arg(void* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

template <typename... Args, std::size_t... I>
inline void launch_impl(void (*kernel)(Args...), unsigned int grid, unsigned int block,
                        void** args, std::index_sequence<I...>) {
    std::tuple<std::decay_t<Args>...> params{load_arg<std::decay_t<Args>>(args[I])...};
    grid_dim = {grid, 1, 1};
    block_dim = {block, 1, 1};
    for (unsigned int b = 0; b < grid; ++b) {
        block_idx = {b, 0, 0};
        for (unsigned int t = 0; t < block; ++t) {
            thread_idx = {t, 0, 0};
            std::apply(kernel, params);
        }
    }
}

template <typename... Args>
inline void launch(void (*kernel)(Args...), unsigned int grid, unsigned int block, void** args) {
    launch_impl(kernel, grid, block, args, std::index_sequence_for<Args...>{});
}

// What each parameter of a kernel is, for the strict launch check in Python
// (coosparse/_kernels/cuda/emulated.py): 5 numbers per parameter,
// (size, is_pointer, pointee size, kind, pointee is const); kind is 'f'
// (floating), 'i' (signed integer), 'u' (unsigned integer) or 's' (struct).
template <typename T>
constexpr long long kind_of() {
    if constexpr (std::is_floating_point_v<T>) return 'f';
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) return 'i';
    else if constexpr (std::is_integral_v<T>) return 'u';
    else return 's';
}

template <typename A>
inline void describe_one(long long* o) {
    using D = std::decay_t<A>;
    o[0] = sizeof(D);
    if constexpr (std::is_pointer_v<D>) {
        using P = std::remove_pointer_t<D>;
        o[1] = 1;
        o[2] = sizeof(std::remove_cv_t<P>);
        o[3] = kind_of<std::remove_cv_t<P>>();
        o[4] = std::is_const_v<P> ? 1 : 0;
    } else {
        o[1] = 0;
        o[2] = 0;
        o[3] = kind_of<D>();
        o[4] = 0;
    }
}

template <typename... Args>
inline int describe(void (*)(Args...), long long* out) {
    long long* o = out;
    ((describe_one<Args>(o), o += 5), ...);
    return (int)sizeof...(Args);
}
}  // namespace coo_host

#define threadIdx coo_host::thread_idx
#define blockIdx coo_host::block_idx
#define blockDim coo_host::block_dim
#define gridDim coo_host::grid_dim
#define __global__
#define __device__ inline
#define __host__
#define __forceinline__

// Correctly rounded single operations (on the host: plain IEEE arithmetic,
// compiled with -ffp-contract=off, so nothing is fused either).
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }

// Memory ordering between threads is trivial when they run one after another.
inline void __threadfence() {}
template <typename T>
inline T __ldcg(const T* p) { return *p; }

template <typename T>
inline T atomicOr(T* p, T v) { T old = *p; *p = old | v; return old; }
template <typename T>
inline T atomicMax(T* p, T v) { T old = *p; if (v > old) *p = v; return old; }
template <typename T>
inline T atomicAdd(T* p, T v) { T old = *p; *p = old + v; return old; }
template <typename T>
inline T atomicExch(T* p, T v) { T old = *p; *p = v; return old; }

#endif  // COOSPARSE_COO_HOST_SHIM_CUH
