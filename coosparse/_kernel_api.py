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
linear_index       (indices int64[d, n], strides int64[d], sizes=None) ->
                   keys int64[n]; strides and sizes are host values. With
                   ``sizes`` (the shape the indices must fit) every index is
                   bounds-checked in the same pass (coosparse._bounds):
                   Numba raises IndexError before the caller writes
                   anything; CUDA gives the entry a key far below zero (read
                   as zero, never written) and reports it through the error
                   word (IndexError at the next sync or check_device_errors)
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
match_merge        (src_keys sorted, probe_keys sorted) -> (first, count),
                   int64[n] each: first[i] = lower bound of src_keys[i] in
                   probe_keys (insertion point), count[i] = number of equal
                   probe keys (0: no match)
match_search       same result for src_keys in any order (probe sorted);
                   Numba: radix partition of the source, GPU: binary search
merge_matches      (src_keys sorted, probe_keys sorted) -> (rows, first,
                   count): match_merge restricted to the ascending source
                   rows with count > 0 (synchronises on a GPU: output size)
compact_matches    (first, count) -> (rows, first[rows], count[rows]) for the
                   ascending rows with count != 0 (synchronises on a GPU)
probe_sum          (values[np, k], perm | None, first int64[m], count) ->
                   [m, k]: row i = sum of values[perm[j]] (values[j] without
                   perm) for j in first[i] .. first[i]+count[i]-1,
                   sequentially in j order; zeros where count[i] == 0
multiply_matched   (src_values[n, k], rows | None, probe_values[np, k],
                   perm | None, first[m], count[m]) -> [m, k]: row i =
                   src_values[rows[i] or i] * probe_sum row i; 0 where
                   count[i] == 0; one arithmetic dtype throughout
merge_multiply     (src_idx int64[d, n], src_values[n, k], probe_idx int64[d, np],
                   probe_values[np, k], strides int64[d]) -> (idx[d, m],
                   values[m, k]): both sides sorted by the row-major key
                   sum(idx * strides) (computed on the fly); the matched
                   source columns in order, values src * ordered probe sum
                   (= merge_matches + gather_columns + multiply_matched);
                   one arithmetic dtype (synchronises on a GPU: output size);
                   ``sizes=`` (host shape) bounds every index read, as in
                   linear_index (default: from the strides, first dim open);
                   a false sorted flag found on the way is a ValueError
                   (Numba) or an ORDER report (CUDA)
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
merge_add          (a_idx int64[d, na], b_idx int64[d, nb], a_values[na, k],
                   b_values[nb, k], strides int64[d], negate) -> (idx[d, m],
                   values[m, k]): both coalesced by the row-major key
                   sum(idx * strides) (computed on the fly); the sorted
                   union, values (a or 0) + (b or 0), or minus with negate;
                   one arithmetic dtype (synchronises on a GPU: output size);
                   ``sizes=`` and false flags as in merge_multiply
merge_gather       (a_idx int64[d, na], b_idx int64[d, nb], a_words[na, ka],
                   b_words[nb, kb], strides int64[d], a_fill[ka],
                   b_fill[kb]) -> (idx[d, m], a_out[m, ka], b_out[m, kb]):
                   both coalesced by the row-major key (computed on the
                   fly); the sorted union; a_out[u] = a's row where a has
                   the key, else a_fill (b likewise). Words: unsigned
                   integers of one size, a bit copy; strides and the fill
                   rows are host metadata (synchronises on a GPU: output
                   size); ``sizes=`` as in merge_multiply. The elementwise engine's union
multiply_search    (src_keys int64[n] any order, src_values[n, k], probe_keys
                   sorted, probe_values[np, k], perm | None) -> [n, k]: row
                   i = src_values[i] * ordered probe sum of src_keys[i]'s
                   matches, 0 where none (= match_search + multiply_matched
                   with rows None; one arithmetic dtype; never synchronises).
                   Numba carries the values through its partition (issue 16)
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
    "strided_scatter_sorted",
    "strided_scatter_ordered",
    "match_merge",
    "match_search",
    "merge_matches",
    "compact_matches",
    "probe_sum",
    "multiply_matched",
    "merge_multiply",
    "gather_columns",
    "gather_strided",
    "merge_union",
    "union_columns",
    "gather_or_zero",
    "merge_add",
    # ---- elementwise engine (issue 11)
    "merge_gather",
    # ---- CPU performance II (issue 16)
    "multiply_search",
)
