"""The emulation of block-cooperative kernels (cuda_kernels/include/coo_host_shim.cuh).

Kernels listed in ``cuda_kernels.COOPERATIVE`` run with one fiber per thread
of a block: ``__syncthreads`` completes when every thread of the block waits
at it, a warp intrinsic when every lane of its mask does (the shuffle's
values are exchanged then), shared arrays are poisoned per block, and what a
GPU would hang on or leave undefined fails the launch with a message. These
tests compile small kernels against the shim itself (g++, as the emulated
layer is built) and run them, with and without AddressSanitizer (whose build
switches fibers with swapcontext rather than longjmp).
"""
import os
import shutil
import subprocess
import textwrap

import pytest

from coosparse._kernels.cuda import sources
from coosparse.cuda_kernels import COOPERATIVE, KERNELS

CXX = shutil.which(os.environ.get("CXX", "g++"))
pytestmark = pytest.mark.skipif(CXX is None, reason="no host C++ compiler")

PROGRAM = textwrap.dedent(r'''
    #include "coo_common.cuh"
    #include <cstdio>

    // a block's sum by halving in shared memory (256 threads), one value per block
    __global__ void block_sum(const double* in, double* out) {
        COO_SHARED(double, s, 256);
        unsigned int t = threadIdx.x;
        s[t] = in[blockIdx.x * 256 + t];
        __syncthreads();
        for (unsigned int h = 128; h > 0; h >>= 1) {
            if (t < h) s[t] += s[t + h];
            __syncthreads();
        }
        if (t == 0) out[blockIdx.x] = s[0];
    }

    // xor butterfly over the warp: every lane ends with the warp's sum of lane ids
    __global__ void butterfly(long long* out) {
        long long v = threadIdx.x % 32;
        for (int m = 1; m < 32; m <<= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
        out[blockIdx.x * blockDim.x + threadIdx.x] = v;
    }

    // two half-warps, each with its own mask
    __global__ void halves(long long* out) {
        unsigned int lane = threadIdx.x % 32;
        unsigned int mask = lane < 16 ? 0x0000ffffu : 0xffff0000u;
        long long v = lane;
        for (int m = 1; m < 16; m <<= 1) v += __shfl_xor_sync(mask, v, m);
        out[threadIdx.x] = v;
    }

    // a shared value read before anyone wrote it: the poison shows
    __global__ void unwritten(unsigned long long* out) {
        COO_SHARED(unsigned long long, s, 4);
        if (threadIdx.x == 0) out[blockIdx.x] = s[3];
        __syncthreads();
        s[3] = 7;
    }

    // thread 0 leaves, the others wait at a barrier (undefined on a GPU)
    __global__ void early_exit(long long* out) {
        if (threadIdx.x == 0) return;
        __syncthreads();
        out[threadIdx.x] = 1;
    }

    // half the warp shuffles, the other half waits at __syncthreads: a GPU hangs
    __global__ void deadlock(long long* out) {
        if (threadIdx.x % 32 < 16) out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1LL, 1);
        else __syncthreads();
    }

    static int fails = 0;
    static void check(bool ok, const char* what) {
        if (!ok) { std::printf("FAIL %s\n", what); ++fails; }
    }

    template <typename K, typename... A>
    static std::string coop(K kernel, unsigned int grid, A... a) {
        void* args[] = {&a...};
        coo_host::last_error.clear();
        coo_host::launch_cooperative(kernel, grid, 256, args);
        return coo_host::last_error;
    }

    int main() {
        static double in[1024], out[4];
        for (int i = 0; i < 1024; ++i) in[i] = i;
        const double* pin = in;
        double* pout = out;
        check(coop(block_sum, 4, pin, pout).empty(), "block_sum runs");
        for (int b = 0; b < 4; ++b) {
            double want = 0;
            for (int i = 0; i < 256; ++i) want += b * 256 + i;
            check(out[b] == want, "block_sum value");
        }
        static long long lv[512];
        long long* plv = lv;
        check(coop(butterfly, 2, plv).empty(), "butterfly runs");
        for (int i = 0; i < 512; ++i) check(lv[i] == 496, "butterfly value");
        check(coop(halves, 1, plv).empty(), "halves run");
        for (int i = 0; i < 32; ++i) check(lv[i] == (i < 16 ? 120 : 376), "halves value");
        static unsigned long long uv[2];
        unsigned long long* puv = uv;
        check(coop(unwritten, 2, puv).empty(), "unwritten runs");
        check(uv[0] == 0xA5A5A5A5A5A5A5A5ull && uv[1] == 0xA5A5A5A5A5A5A5A5ull, "shared arrays poisoned per block");
        std::string e = coop(early_exit, 1, plv);
        check(e.find("finished") != std::string::npos, "a barrier after an exit fails the launch");
        e = coop(deadlock, 1, plv);
        check(e.find("deadlock") != std::string::npos, "a deadlock fails the launch");
        // a cooperative kernel launched plainly
        void* args[] = {&pin, &pout};
        coo_host::last_error.clear();
        coo_host::launch(block_sum, 1, 256, args);
        check(coo_host::last_error.find("COOPERATIVE") != std::string::npos, "a plain launch of a barrier fails");
        // the fibers are reused: a clean launch after the failures
        check(coop(butterfly, 1, plv).empty() && lv[255] == 496, "fibers reused after failures");
        std::printf("%s\n", fails ? "FAILED" : "ALL OK");
        return fails ? 1 : 0;
    }
''')


def _build_and_run(tmp_path, extra=()):
    src = tmp_path / "coop.cpp"
    src.write_text(PROGRAM)
    exe = tmp_path / "coop"
    flags = ["-O2", "-std=c++17", "-ffp-contract=off", "-fwrapv", "-DCOOSPARSE_HOST_EMULATION",
             f"-I{sources.INCLUDE_DIR}", *extra]
    r = subprocess.run([CXX, *flags, str(src), "-o", str(exe)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=600, env=env)


def test_barriers_shuffles_and_shared_arrays(tmp_path):
    r = _build_and_run(tmp_path)
    assert r.returncode == 0 and "ALL OK" in r.stdout, r.stdout + r.stderr


def test_the_same_under_address_sanitizer(tmp_path):
    libasan = subprocess.run([CXX, "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    if not os.path.isabs(libasan) or not os.path.exists(libasan):
        pytest.skip("no AddressSanitizer runtime for the host compiler")
    r = _build_and_run(tmp_path, ["-fsanitize=address", "-fno-omit-frame-pointer", "-g"])
    assert r.returncode == 0 and "ALL OK" in r.stdout, r.stdout + r.stderr[-4000:]


def test_plain_shared_is_not_defined_on_the_host(tmp_path):
    # shared memory only through COO_SHARED, whose storage the emulation poisons per block
    src = tmp_path / "plain.cpp"
    src.write_text('#include "coo_common.cuh"\n__global__ void k(double* o) { __shared__ double s[4]; o[0] = s[0]; }\n')
    r = subprocess.run([CXX, "-std=c++17", "-fsyntax-only", "-DCOOSPARSE_HOST_EMULATION", f"-I{sources.INCLUDE_DIR}",
                        str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode != 0


def test_cooperative_kernels_are_in_the_table():
    names = {n for names in KERNELS.values() for n in names}
    assert COOPERATIVE <= names
