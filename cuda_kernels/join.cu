// Joining kernels: the merge order of keys made of sorted runs (concatenate, roll, tile).
#include "coo_common.cuh"

// One thread per key i (in run t): its place in the stable merge of all runs
// is its rank within run t plus, for every other run s, the number of keys of
// s that precede it: those < key for later runs, those <= key for earlier runs
// (ties go to the earlier run). perm[place] = i. Every place is written once.
extern "C" __global__ void coo_join_merge_rank(
        const i64* __restrict__ keys, const i64* __restrict__ offsets, i64 nruns, i64 n,
        i64* __restrict__ perm) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    i64 t = coo_upper_bound(offsets, 0, nruns + 1, i) - 1;  // run holding i
    i64 k = keys[i];
    i64 place = i - offsets[t];
    for (i64 s = 0; s < nruns; ++s) {
        if (s == t) continue;
        i64 lo = offsets[s], hi = offsets[s + 1];
        i64 b = s < t ? coo_upper_bound(keys, lo, hi, k) : coo_lower_bound(keys, lo, hi, k);
        place += b - lo;
    }
    perm[place] = i;
}
