// Stable key sort by packing: (key << shift) | position is unique, so any
// (unstable, keys-only) radix sort of the packed words is a stable sort of the keys.
#include "coo_common.cuh"

// One thread per entry i: packed[i] = (keys[i] << shift) | i; the caller
// guarantees 0 <= keys[i] and that key bits + shift <= 63.
extern "C" __global__ void coo_sort_pack(
        const i64* __restrict__ keys, i64 n, i64 shift, i64* __restrict__ packed) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    packed[i] = (keys[i] << shift) | i;
}

// One thread per sorted word j: sorted_keys[j] = packed[j] >> shift and
// perm[j] = the low shift bits (the entry's original position).
extern "C" __global__ void coo_sort_unpack(
        const i64* __restrict__ packed, i64 n, i64 shift,
        i64* __restrict__ sorted_keys, i64* __restrict__ perm) {
    i64 j = coo_thread_id();
    if (j >= n) return;
    i64 w = packed[j];
    sorted_keys[j] = w >> shift;
    perm[j] = w & ((((i64)1) << shift) - 1);
}
