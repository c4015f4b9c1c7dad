// Joining kernels: keys made of sorted runs (concatenate, roll) moved into their merge order.
#include "coo_common.cuh"

// One thread per entry i (in run t): its place in the stable merge of all runs
// is its rank within run t plus, for every other run s, the number of keys of
// s that precede it: those < key for later runs, those <= key for earlier runs
// (ties go to the earlier run). The entry's index column and value words are
// copied there; every place is written once.
template <typename T>
__global__ void coo_join_merge_take(
        const i64* __restrict__ keys, const i64* __restrict__ offsets, i64 nruns, i64 n,
        const i64* __restrict__ indices, i64 d, const T* __restrict__ values, i64 k,
        i64* __restrict__ out_idx, T* __restrict__ out_val) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    i64 t = coo_upper_bound(offsets, 0, nruns + 1, i) - 1;  // run holding i
    i64 key = keys[i];
    i64 place = i - offsets[t];
    for (i64 s = 0; s < nruns; ++s) {
        if (s == t) continue;
        i64 lo = offsets[s], hi = offsets[s + 1];
        i64 b = s < t ? coo_upper_bound(keys, lo, hi, key) : coo_lower_bound(keys, lo, hi, key);
        place += b - lo;
    }
    for (i64 j = 0; j < d; ++j) out_idx[j * n + place] = indices[j * n + i];
    for (i64 c = 0; c < k; ++c) out_val[place * k + c] = values[i * k + c];
}
