// Stable key sort by packing: (key << shift) | position is unique, so any
// (unstable, keys-only) radix sort of the packed words is a stable sort of the keys.
#include "coo_common.cuh"

// One thread per entry i: packed[i] = (keys[i] << shift) | i, for keys in
// [0, bound) with bits(bound - 1) + shift <= 63 (the caller's choice of shift).
// A key outside [0, bound) (an out-of-range index of a check=False COO) would
// overflow the word: it is clamped into range and reported (COO_ERR_KEY).
extern "C" __global__ void coo_sort_pack(
        const i64* __restrict__ keys, i64 n, i64 shift, i64 bound, i64* __restrict__ packed,
        u64* __restrict__ err) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    i64 k = keys[i];
    if (!coo_in_range(k, bound)) {
        coo_report(err, COO_ERR_KEY);
        k = k < 0 ? 0 : bound - 1;
    }
    packed[i] = (k << shift) | i;
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

// One thread per adjacent pair (i, i+1) of keys that must be sorted (a merge's
// input whose flags say so): reports COO_ERR_ORDER where keys[i] > keys[i+1]
// (>= when strict: keys that must also be unique). Writes nothing else; the
// merges themselves stay in bounds whatever the order.
extern "C" __global__ void coo_sort_check(
        const i64* __restrict__ keys, i64 n, i64 strict, u64* __restrict__ err) {
    i64 i = coo_thread_id();
    if (i + 1 >= n) return;
    i64 a = keys[i], b = keys[i + 1];
    if (strict ? a >= b : a > b) coo_report(err, COO_ERR_ORDER);
}
