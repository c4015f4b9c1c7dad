// Joining kernels: keys made of sorted runs (concatenate, roll) moved into their merge order.
#include "coo_common.cuh"

// One thread per entry i (in run t): its place in the stable merge of all runs
// is its rank within run t plus, for every other run s, the number of keys of
// s that precede it: those < key for later runs, those <= key for earlier runs
// (ties go to the earlier run). The entry's index column and value words are
// copied there; every place is written once.
//
// The run offsets (nruns + 1 <= COO_MAX_DIMS values, 0 .. n, non-decreasing:
// checked by the host) travel by value. The binary searches stay inside their
// run whatever the keys hold, so a place is always in [0, n); keys that are
// not sorted within a run (a sorted flag that lies) make places collide: that
// is reported (COO_ERR_ORDER) by the entry that finds its predecessor larger.
template <typename T>
__global__ void coo_join_merge_take(
        const i64* __restrict__ keys, coo_dims offsets, i64 nruns, i64 n,
        const i64* __restrict__ indices, i64 d, const T* __restrict__ values, i64 k,
        i64* __restrict__ out_idx, T* __restrict__ out_val, u64* __restrict__ err) {
    i64 i = coo_thread_id();
    if (i >= n) return;
    i64 t = coo_upper_bound(offsets.v, 0, nruns + 1, i) - 1;  // run holding i
    i64 key = keys[i];
    if (i > offsets.v[t] && keys[i - 1] > key) coo_report(err, COO_ERR_ORDER);
    i64 place = i - offsets.v[t];
    for (i64 s = 0; s < nruns; ++s) {
        if (s == t) continue;
        i64 lo = offsets.v[s], hi = offsets.v[s + 1];
        i64 b = s < t ? coo_upper_bound(keys, lo, hi, key) : coo_lower_bound(keys, lo, hi, key);
        place += b - lo;
    }
    if (!coo_in_range(place, n)) {  // not reachable with valid offsets; never written out of bounds
        coo_report(err, COO_ERR_ORDER);
        return;
    }
    for (i64 j = 0; j < d; ++j) out_idx[j * n + place] = indices[j * n + i];
    for (i64 c = 0; c < k; ++c) out_val[place * k + c] = values[i * k + c];
}
