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
                   target[addresses[i] + inner[c]] += values[i, c], i in order
scatter_set        same, assignment; last writer in order wins
match_merge        (src_keys sorted, probe_keys sorted) -> (first, count),
                   int64[n] each: first[i] = lower bound of src_keys[i] in
                   probe_keys (insertion point), count[i] = number of equal
                   probe keys (0: no match)
match_search       same result for src_keys in any order (probe sorted);
                   Numba: radix partition of the source, GPU: binary search
nonzero_rows       (count int64[n]) -> ascending int64 positions with
                   count != 0 (synchronises on a GPU: output size)
probe_sum          (values[np, k], perm | None, first, count, rows | None)
                   -> [m, k]: row i (r = rows[i], or i) = sum of
                   values[perm[j]] for j in first[r] .. first[r]+count[r]-1,
                   sequentially in j order; zeros where count[r] == 0
gather_columns     (indices int64[d, n], rows int64[m]) -> indices[:, rows],
                   C-contiguous
gather_strided     (source 1-D, addresses int64[n], inner int64[k]) -> [n, k],
                   out[i, c] = source[addresses[i] + inner[c]]
merge_union        (a_keys, b_keys strictly increasing) -> (a_pos, b_pos)
                   int64[m]: the sorted union; position in a / in b, or -1
                   where that side lacks the key (synchronises: output size)
union_columns      (a_idx int64[d, na], b_idx int64[d, nb], a_pos, b_pos) ->
                   int64[d, m]: column a_idx[:, a_pos[u]] if a_pos[u] >= 0,
                   else b_idx[:, b_pos[u]]
gather_or_zero     (values[n, k], rows int64[m]) -> [m, k]: values[rows[i]],
                   zeros where rows[i] < 0
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
    "match_merge",
    "match_search",
    "nonzero_rows",
    "probe_sum",
    "gather_columns",
    "gather_strided",
    "merge_union",
    "union_columns",
    "gather_or_zero",
)
