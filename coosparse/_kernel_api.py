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
coalesce_linear    (indices int64[d, n], strides int64[d], bound, values[n, k])
                   -> (indices int64[d, m], sums[m, k]): the m distinct linear
                   indices (< bound) in increasing order, unravelled, and each
                   one's values summed sequentially in original order (values
                   already in their accumulation dtype)
gather_rows        (values[n, k], rows int64[m]) -> values[rows]
scatter_add        (target 1-D, addresses int64[n], values[n, k], inner int64[k]);
                   target[addresses[i] + inner[c]] += values[i, c], i in order
scatter_set        same, assignment; last writer in order wins
=================  ==========================================================
"""

KERNEL_API = (
    "linear_index",
    "unravel_index",
    "sort_pairs",
    "segment_starts",
    "segment_sum",
    "coalesce_linear",
    "gather_rows",
    "scatter_add",
    "scatter_set",
)
