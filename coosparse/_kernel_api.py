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
segment_prod       (values[n, k], perm | None, starts) -> [nseg, k]: each
                   segment's product taken sequentially in perm order (int64
                   wraps; complex products as NumPy's); reductions (issue 11)
segment_minmax     (values[n, k], perm | None, starts, is_max) -> [nseg, k]:
                   max (min) of each segment in perm order; the first NaN met
                   is the result (NumPy's rule); int64, float32/64
segment_arg        (values[n, k], perm | None, starts, sub int64[n], is_max)
                   -> (best[nseg, k], pos int64[nseg, k], gap int64[nseg]):
                   each segment visited in perm order, where its subs are
                   distinct, ascending and >= 0: the max (min) value, the sub
                   of its first occurrence (the first NaN wins), and the
                   smallest non-negative integer missing from its subs
reduce_sorted      (sorted_keys int64[n], values[n, k], op) -> (starts
                   int64[m + 1], out[m, k]): segment_starts of the keys and
                   each run of equal keys reduced in order, op 'sum' (int64,
                   float32/64), 'prod' (also complex64/128), 'max' or 'min'
                   (int64, float32/64; the first NaN wins): segment_starts +
                   segment_sum/prod/minmax in one call (synchronises on a
                   GPU: m)
reduce_by_key      (keys int64[n] in [0, bound), values[n, k], bound, op,
                   is_sorted) -> (counts int64[bound], out[bound, k]): the
                   entries of each key reduced in stored order (op as
                   reduce_sorted), counts[j] = entries with key j, out[j] = 0
                   where counts[j] == 0 (the stable-sort + segment reduction's
                   result, scattered; the CUDA layer computes it so and
                   synchronises). is_sorted: the caller knows the keys are
                   sorted (lets the layer split the runs between threads)
---- shape, indexing and joining (issue 12) ------------------------------------
mask_positions     (mask bool[n]) -> int64[m]: the ascending positions of the
                   True entries (synchronises on a GPU: output size)
search_ranges      (sorted_keys int64[n], lo int64[m], hi int64[m]) ->
                   (start, stop) int64[m]: start[i] = lower bound of lo[i],
                   stop[i] = lower bound of hi[i] (start[i] when hi <= lo):
                   the positions of the keys in [lo[i], hi[i])
expand_ranges      (start int64[m], count int64[m] >= 0) -> (rows, owner)
                   int64[sum(count)]: for i in order, rows start[i] ..
                   start[i]+count[i]-1, each with owner i (synchronises on a
                   GPU: output size)
take_ranges        (indices int64[d, n], values[n, k], start int64[m], count
                   int64[m]) -> (out int64[d+1, t], vals[t, k]): with rows =
                   expand_ranges(start, count): out[0] = owner, out[1:] =
                   indices[:, rows], vals = values[rows] (fused; values are
                   copied as bits; synchronises on a GPU: output size)
merge_take         (keys int64[n], offsets int64[r+1], indices int64[d, n],
                   values[n, k]) -> (indices[:, perm], values[perm]): keys
                   made of r sorted runs keys[offsets[t]:offsets[t+1]]; perm
                   is their stable sort order (ties: earlier run, then earlier
                   position), i.e. the r-way merge; values are copied as bits
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
    # ---- reductions (issue 11)
    "segment_prod",
    "segment_minmax",
    "segment_arg",
    "reduce_sorted",
    "reduce_by_key",
    # ---- shape, indexing and joining (issue 12)
    "mask_positions",
    "search_ranges",
    "expand_ranges",
    "take_ranges",
    "merge_take",
)
