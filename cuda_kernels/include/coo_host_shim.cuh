// Host emulation of the CUDA execution model, for the `cuda-emulated` backend.
//
// The .cu files are compiled by g++ with COOSPARSE_HOST_EMULATION defined.
// threadIdx/blockIdx/blockDim/gridDim become thread_local variables. A plain
// launch (coo_host::launch) runs every thread of every block in order, one
// function call each: block 0 threads 0..B-1, then block 1, ... That is a
// valid CUDA schedule for kernels whose threads do not wait for each other.
//
// Kernels whose threads cooperate (__syncthreads, COO_SHARED arrays, warp
// shuffles) are launched with coo_host::launch_cooperative (they are listed in
// cuda_kernels.COOPERATIVE): each thread of a block is a fiber with a stack of
// its own. The scheduler runs the block's fibers in thread order, each until
// it finishes or reaches a barrier; when every live thread of the block waits
// at __syncthreads, or every lane named by a warp intrinsic's mask waits at
// one, the barrier completes (a shuffle's values are exchanged then) and the
// waiting threads run on, again in thread order. A barrier that cannot
// complete (a deadlock on a GPU, or undefined behaviour: threads that exited
// before a __syncthreads others wait at, lanes that disagree on a mask) and a
// barrier met in a kernel launched plainly fail the launch with a message
// (coo_host::last_error) instead of hanging. Shared arrays are poisoned at the
// start of every block, as device memory is (testing/device.py). Switches
// between fibers are _setjmp/_longjmp (the stacks are made once by
// makecontext); under AddressSanitizer every switch is swapcontext, which it
// understands. Integer atomics are plain read-modify-writes, exact when one
// thread runs at a time; __threadfence orders nothing that needs ordering.
//
// Deliberately NOT defined: __shared__ (use COO_SHARED, whose storage the
// emulation poisons per block) and the warp intrinsics no kernel uses yet.
#ifndef COOSPARSE_COO_HOST_SHIM_CUH
#define COOSPARSE_COO_HOST_SHIM_CUH

#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#define COO_HOST_FIBER_SWAPCONTEXT 1  // ASan follows swapcontext, not longjmp between stacks
#else
#define COO_HOST_FIBER_SWAPCONTEXT 0
#endif

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

// ---- cooperative launches: one fiber per thread of a block
inline thread_local std::string last_error;  // the first failure of the current launch ("" if none)

inline void fail(const std::string& what) {
    if (last_error.empty()) last_error = what;
}

enum fiber_state : int { FIBER_RUNNING, FIBER_AT_BLOCK, FIBER_AT_WARP, FIBER_DONE };

struct fiber {
    ucontext_t uc;
    jmp_buf env;
    char* stack = nullptr;
    bool started = false;
    int state = FIBER_DONE;
    unsigned int mask = 0;            // a warp intrinsic: the lanes it names
    int src = 0;                      // ... the lane whose value it reads
    unsigned long long value = 0;     // ... the bits it offers
    unsigned long long result = 0;    // ... the bits it gets
};

struct coop_state {
    std::vector<fiber*> fibers;       // (never moved: a ucontext_t points into itself)
    ucontext_t sched_uc;
    jmp_buf sched_env;
    int current = -1;                 // the fiber running; -1: none (a plain launch)
    void (*body)(void*) = nullptr;    // the kernel, as thread threadIdx
    void* arg = nullptr;
    unsigned long long generation = 0;  // blocks run so far (shared arrays poisoned when it changes)
    ~coop_state() {
        for (fiber* f : fibers) {
            std::free(f->stack);
            delete f;
        }
    }
};
inline thread_local coop_state coop;
constexpr std::size_t FIBER_STACK = COO_HOST_FIBER_SWAPCONTEXT ? (1u << 20) : (256u << 10);

inline void yield_to_scheduler() {
    fiber& f = (*coop.fibers[coop.current]);
#if COO_HOST_FIBER_SWAPCONTEXT
    swapcontext(&f.uc, &coop.sched_uc);
#else
    if (!_setjmp(f.env)) _longjmp(coop.sched_env, 1);
#endif
}

inline void fiber_main() {
    for (;;) {  // a fiber lives for the thread's life: one kernel thread per turn
        coop.body(coop.arg);
        (*coop.fibers[coop.current]).state = FIBER_DONE;
        yield_to_scheduler();
    }
}

inline void resume(int i) {
    fiber& f = *coop.fibers[i];
    coop.current = i;
#if COO_HOST_FIBER_SWAPCONTEXT
    swapcontext(&coop.sched_uc, &f.uc);
#else
    if (!_setjmp(coop.sched_env)) {
        if (f.started) _longjmp(f.env, 1);
        f.started = true;
        swapcontext(&coop.sched_uc, &f.uc);  // first entry: onto the fiber's own stack (it longjmps back)
    }
#endif
    coop.current = -1;
}

inline void make_fibers(unsigned int n) {
    while (coop.fibers.size() < n) {
        coop.fibers.push_back(new fiber());
        fiber& f = *coop.fibers.back();
        f.stack = static_cast<char*>(std::malloc(FIBER_STACK));
        getcontext(&f.uc);
        f.uc.uc_stack.ss_sp = f.stack;
        f.uc.uc_stack.ss_size = FIBER_STACK;
        f.uc.uc_link = nullptr;
        makecontext(&f.uc, fiber_main, 0);
    }
}

// Completes the warp intrinsics whose lanes all wait; true when one completed.
inline bool complete_warps(unsigned int block) {
    bool done = false;
    for (unsigned int w = 0; w < block; w += 32) {
        for (unsigned int l = 0; l < 32 && w + l < block; ++l) {
            fiber& f = *coop.fibers[w + l];
            if (f.state != FIBER_AT_WARP) continue;
            unsigned int mask = f.mask;
            bool ready = true;
            for (unsigned int q = 0; q < 32; ++q) {
                if (!(mask >> q & 1u)) continue;
                if (w + q >= block || coop.fibers[w + q]->state != FIBER_AT_WARP || coop.fibers[w + q]->mask != mask) {
                    ready = false;
                    break;
                }
            }
            if (!ready) continue;
            for (unsigned int q = 0; q < 32; ++q) {
                if (!(mask >> q & 1u)) continue;
                fiber& g = *coop.fibers[w + q];
                int src = g.src;
                if (src < 0 || src >= 32 || !(mask >> src & 1u)) fail("a warp shuffle reads a lane outside its mask");
                else g.result = coop.fibers[w + src]->value;
            }
            for (unsigned int q = 0; q < 32; ++q)
                if (mask >> q & 1u) coop.fibers[w + q]->state = FIBER_RUNNING;
            done = true;
        }
    }
    return done;
}

// Completes __syncthreads when every thread of the block that has not finished waits at it.
inline bool complete_block(unsigned int block) {
    unsigned int waiting = 0, finished = 0;
    for (unsigned int t = 0; t < block; ++t) {
        int st = coop.fibers[t]->state;
        waiting += st == FIBER_AT_BLOCK;
        finished += st == FIBER_DONE;
    }
    if (waiting == 0 || waiting + finished != block) return false;
    if (finished) fail("__syncthreads waited for by some threads of a block after others finished");
    for (unsigned int t = 0; t < block; ++t)
        if (coop.fibers[t]->state == FIBER_AT_BLOCK) coop.fibers[t]->state = FIBER_RUNNING;
    return true;
}

template <typename Body>
inline void call_body(void* p) { (*static_cast<Body*>(p))(); }

template <typename Body>
inline void run_block_cooperative(Body& body, unsigned int block) {
    make_fibers(block);
    coop.body = &call_body<Body>;
    coop.arg = &body;
    ++coop.generation;
    for (unsigned int t = 0; t < block; ++t) coop.fibers[t]->state = FIBER_RUNNING;
    unsigned int live = block;
    while (live > 0) {
        for (unsigned int t = 0; t < block; ++t) {
            if (coop.fibers[t]->state != FIBER_RUNNING) continue;
            thread_idx = {t, 0, 0};
            resume((int)t);
            if (coop.fibers[t]->state == FIBER_DONE) --live;
        }
        if (live == 0) break;
        bool released = complete_warps(block);
        released = complete_block(block) || released;
        if (!released) {  // nothing can go on: a GPU would hang here
            fail("deadlock: threads wait at barriers that cannot complete (block " + std::to_string(block_idx.x) + ")");
            for (unsigned int t = 0; t < block; ++t)
                if (coop.fibers[t]->state != FIBER_DONE) coop.fibers[t]->state = FIBER_RUNNING;
        }
    }
}

template <typename... Args, std::size_t... I>
inline void launch_cooperative_impl(void (*kernel)(Args...), unsigned int grid, unsigned int block,
                                    void** args, std::index_sequence<I...>) {
    std::tuple<std::decay_t<Args>...> params{load_arg<std::decay_t<Args>>(args[I])...};
    grid_dim = {grid, 1, 1};
    block_dim = {block, 1, 1};
    auto body = [&]() { std::apply(kernel, params); };
    for (unsigned int b = 0; b < grid && last_error.empty(); ++b) {
        block_idx = {b, 0, 0};
        run_block_cooperative(body, block);
    }
}

template <typename... Args>
inline void launch_cooperative(void (*kernel)(Args...), unsigned int grid, unsigned int block, void** args) {
    launch_cooperative_impl(kernel, grid, block, args, std::index_sequence_for<Args...>{});
}

// ---- what cooperative kernels call
inline bool in_fiber(const char* what) {
    if (coop.current >= 0) return true;
    fail(std::string(what) + " in a kernel launched plainly: list the kernel in cuda_kernels.COOPERATIVE");
    return false;
}

inline void block_barrier() {
    if (!in_fiber("__syncthreads")) return;
    (*coop.fibers[coop.current]).state = FIBER_AT_BLOCK;
    yield_to_scheduler();
}

// The calling lane offers v and gets lane src's offer, once every lane of mask offers.
template <typename T>
inline T warp_exchange(unsigned int mask, T v, int src, const char* what) {
    static_assert(sizeof(T) <= 8, "warp intrinsics move at most 8 bytes");
    if (!in_fiber(what)) return v;
    fiber& f = (*coop.fibers[coop.current]);
    if (!(mask >> (thread_idx.x % 32) & 1u)) fail(std::string(what) + " by a lane outside its own mask");
    f.state = FIBER_AT_WARP;
    f.mask = mask;
    f.src = src;
    f.value = 0;
    std::memcpy(&f.value, &v, sizeof(T));
    yield_to_scheduler();
    T r;
    std::memcpy(&r, &f.result, sizeof(T));
    return r;
}

// A block's shared array: one per call site (and template instantiation), poisoned at each new block.
template <typename T, int N>
struct shared_array {
    T data[N];
    unsigned long long generation = 0;
    T* get() {
        if (generation != coop.generation) {
            std::memset(static_cast<void*>(data), 0xA5, sizeof(data));
            generation = coop.generation;
        }
        return data;
    }
};

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

#define __syncthreads() coo_host::block_barrier()
#define COO_SHARED(T, name, N) \
    static thread_local coo_host::shared_array<T, (N)> name##_storage; \
    T* name = name##_storage.get()

template <typename T>
inline T __shfl_xor_sync(unsigned int mask, T v, int lane_mask, int width = 32) {
    if (width != 32) coo_host::fail("__shfl_xor_sync: only the full warp width is emulated");
    return coo_host::warp_exchange(mask, v, (int)(coo_host::thread_idx.x % 32) ^ lane_mask, "__shfl_xor_sync");
}
inline void __syncwarp(unsigned int mask = 0xffffffffu) {
    coo_host::warp_exchange(mask, 0, (int)(coo_host::thread_idx.x % 32), "__syncwarp");
}

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
