"""The kernel API: the functions every kernel layer provides, with one meaning.

Public functions (``coosparse/_*.py``) call these through
``backend_for(...)``; kernels never see a ``COO``. Arrays are NumPy arrays on
the Numba layer and CuPy arrays on the CUDA layer; results are identical
(bit-identical for the ordered sums). A test checks that every layer defines
every name listed here. Add a row when a new kernel is needed, and implement
it on every layer.

=================  ==========================================================
name               meaning
=================  ==========================================================
linear_index       (indices int64[d, n], strides int64[d]) -> keys int64[n]
unravel_index      (keys int64[n], strides int64[d]) -> indices int64[d, n]
sort_pairs         (keys int64[n], bound) -> (sorted_keys, perm); stable
segment_starts     (sorted_keys) -> int64[nseg + 1] (synchronises on a GPU)
segment_sum        (values[n, k], perm int64[n] | None, starts) -> [nseg, k];
                   each segment summed sequentially in perm order
gather_rows        (values[n, k], rows int64[m]) -> values[rows]
scatter_add        (target 1-D, addresses int64[n], values[n, k], inner int64[k]);
                   target[addresses[i] + inner[c]] += values[i, c], i in order:
                   each element's sum is taken in stored order, bit-identical
                   to the serial loop (Numba: threads own destination ranges;
                   CUDA: no float atomics). Entries whose block would leave
                   [0, len(target)) are skipped (memory safety only)
scatter_set        same, assignment; last writer in stored order wins
strided_scatter_   (out 1-D, inp 1-D, src 1-D, src_base, offset, sizes int64[d],
 sorted             strides int64[d], src_strides int64[d], copy): for every i
                   out[offset + i.strides] = src[src_base + i.src_strides];
                   with copy, out[j] = inp[j] for every other j (the Numba
                   layer: per thread range, memcpy then scatter; no element is
                   touched by two threads). Requires d >= 1, sizes >= 1 (any 0:
                   copy only), strides > 0 and strides[k] > sum_{j>k}
                   (sizes[j]-1)*strides[j]: addresses strictly increase in C
                   order, so no two elements alias and any parallel split is
                   exact. Caller has bounds-checked every address. sizes and
                   the strides are host metadata
strided_scatter_   (out 1-D, src 1-D, src_base, offset, sizes, strides,
 ordered            src_strides): the same assignment for any strides (zero,
                   negative, aliasing): elements applied in C order of the
                   view, so the last writer wins. No copy. A parallel version
                   must give the same answer: winner[a] = max C-order index
                   i with address a (atomicMax is order-free), then write
                   src[i] where winner[addr(i)] == i
=================  ==========================================================
"""

KERNEL_API = (
    "linear_index",
    "unravel_index",
    "sort_pairs",
    "segment_starts",
    "segment_sum",
    "gather_rows",
    "scatter_add",
    "scatter_set",
    "strided_scatter_sorted",
    "strided_scatter_ordered",
)
