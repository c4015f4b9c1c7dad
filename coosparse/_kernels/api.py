"""The kernel API: the functions every kernel layer provides, with one meaning.

The operations (``coosparse/ops``) call these through ``backend_for(...)``;
kernels never see a ``COO``. Arrays are NumPy arrays on the Numba layer and
CuPy arrays on the CUDA layer; results are identical (bit-identical for the
ordered sums). The rows are grouped in families (:data:`KERNEL_FAMILIES`),
and each family has one module on each layer of the same name. Tests check
that every layer defines every row, and that the families mirror. Add a row
when a new kernel is needed, in its family, and implement it on every layer.

Linear algebra: values and dense operands come in one accumulation dtype
(int64, float32, float64, complex64, complex128); an output element starts at
0 and adds its products in the order stated (SpGEMM: starts at its first
product), so every layer gives the same bits. Bounds: every index the rows
read through (``rows``, ``cols``, ``krow``, A's columns, B's columns, A's row
keys) is compared with its bound in the pass that reads it; one outside raises
IndexError (Numba) or is skipped and reported through the error word (CUDA:
INDEX); rows that a sorted flag promised in order and that step down raise
ValueError / report ORDER.

=================  ==========================================================
name               meaning
=================  ==========================================================
---- linear_index ------------------------------------------------------------
linear_index       (indices int64[d, n], strides int64[d], sizes=None) ->
                   keys int64[n]; strides and sizes are host values. With
                   ``sizes`` (the shape the indices must fit) every index is
                   bounds-checked in the same pass (coosparse/_kernels/bounds.py):
                   Numba raises IndexError before the caller writes
                   anything; CUDA gives the entry a key far below zero (read
                   as zero, never written) and reports it through the error
                   word (IndexError at the next sync or check_device_errors)
unravel_index      (keys int64[n], strides int64[d]) -> indices int64[d, n]
---- sort --------------------------------------------------------------------
sort_pairs         (keys int64[n], bound) -> (sorted_keys, perm); stable
sort_segments      (values[n] int32/int64/float32/float64, offsets int64[s+1])
                   -> values with each segment offsets[i]:offsets[i+1] sorted,
                   stable, NaN last (Numba: a merge sort per segment; CUDA: two
                   stable argsorts). Sync-free
sort_lanes         (values[n] as sort_segments, offsets int64[s+1], indices
                   int64[d, n], fill, length) -> (indices int64[d, m],
                   values[m]): a sort along the last axis of a coalesced array
                   whose lanes are the segments: each lane's values other than
                   the fill, in order, at their positions in the sorted dense
                   lane (below the fill first, the rest last). Synchronises
                   on a GPU (output size)
topk_lanes         (values[n] as sort_segments, offsets int64[s+1], fill,
                   length, k, largest) -> int64[m]: the positions, increasing,
                   of the entries that rank among the first k of their lane
                   (the segments; length elements, the unstored ones equal to
                   the fill; largest first with NaN first, or smallest first
                   with NaN last; ties to the lower position), other than
                   those equal to the fill (Numba: a heap per lane; CUDA:
                   stable argsorts). Synchronises on a GPU (output size)
---- segment -----------------------------------------------------------------
segment_starts     (sorted_keys) -> int64[nseg + 1] (synchronises on a GPU)
segment_sum        (values[n, k], perm int64[n] | None, starts) -> [nseg, k];
                   each segment summed sequentially in perm order
---- gather ------------------------------------------------------------------
gather_rows        (values[n, k], rows int64[m]) -> values[rows]
gather_columns     (indices int64[d, n], rows int64[m]) -> indices[:, rows],
                   C-contiguous
gather_strided     (source 1-D, addresses int64[n], inner int64[k]) -> [n, k],
                   out[i, c] = source[addresses[i] + inner[c]]
gather_indexed     (source 1-D, indices int64[d, n], strides int64[d], sizes,
                   base, inner int64[k]) -> [n, k]: gather_strided at the
                   addresses base + linear_index(indices, strides, sizes),
                   bounds-checked as linear_index with sizes (nothing is read
                   through a bad index). strides, sizes, base, inner are host
                   values. Sync-free
gather_or_zero     (values[n, k], rows int64[m]) -> [m, k]: values[rows[i]],
                   zeros where rows[i] < 0
---- coalesce ----------------------------------------------------------------
coalesce_linear    (indices int64[d, n], strides int64[d], bound, values[n, k])
                   -> (indices int64[d, m], sums[m, k]): the m distinct linear
                   indices (< bound) in increasing order, unravelled, and each
                   one's values summed sequentially in original order (values
                   already in their accumulation dtype)
---- scatter -----------------------------------------------------------------
scatter_add        (target 1-D, addresses int64[n], values[n, k], inner int64[k]);
                   target[addresses[i] + inner[c]] += values[i, c], i in order:
                   each element's sum is taken in stored order, bit-identical
                   to the serial loop (Numba: threads own destination ranges;
                   CUDA: no float atomics). Entries whose block would leave
                   [0, len(target)) are skipped (memory safety only).
                   replace=True: an element that receives entries starts
                   from -0.0 (the additive identity) instead of its old
                   value, so it becomes exactly the IEEE sum of its entries
                   (to_dense: a -0.0 sum keeps its sign)
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
---- intersect ---------------------------------------------------------------
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
                   (Numba) or an ORDER report (CUDA); ``pointers=`` (both
                   operands' row pointers): Numba merges row by row over
                   the columns (with d > 2 and ``sizes=``, over the keys of
                   the trailing axes; same result); CUDA ignores it
multiply_search    (src_keys int64[n] any order, src_values[n, k], probe_keys
                   sorted, probe_values[np, k], perm | None) -> [n, k]: row
                   i = src_values[i] * ordered probe sum of src_keys[i]'s
                   matches, 0 where none (= match_search + multiply_matched
                   with rows None; one arithmetic dtype; never synchronises).
                   Numba carries the values through its partition
mask_values        (src_idx int64[d, n] sorted, probe_idx int64[d, np] sorted,
                   probe_values[np, k], strides int64[d]) -> [n, k]: row i =
                   ordered sum of the probe rows at src_idx[:, i], 0 where
                   none (= linear_index + match_merge + probe_sum); ``sizes=``
                   bounds every index; ``pointers=`` (both row pointers):
                   Numba merges row by row over the columns in one pass (over
                   the trailing axes' keys with d > 2 and ``sizes=``; same
                   result; a probe repeating a column takes the key path);
                   CUDA ignores it. Never synchronises
---- union -------------------------------------------------------------------
merge_union        (a_keys, b_keys strictly increasing) -> (a_pos, b_pos)
                   int64[m]: the sorted union; position in a / in b, or -1
                   where that side lacks the key (synchronises: output size)
union_columns      (a_idx int64[d, na], b_idx int64[d, nb], a_pos, b_pos) ->
                   int64[d, m]: column a_idx[:, a_pos[u]] if a_pos[u] >= 0,
                   else b_idx[:, b_pos[u]]
merge_add          (a_idx int64[d, na], b_idx int64[d, nb], a_values[na, k],
                   b_values[nb, k], strides int64[d], negate) -> (idx[d, m],
                   values[m, k]): both coalesced by the row-major key
                   sum(idx * strides) (computed on the fly); the sorted
                   union, values (a or 0) + (b or 0), or minus with negate;
                   one arithmetic dtype (synchronises on a GPU: output size);
                   ``sizes=``, false flags and ``pointers=`` as in
                   merge_multiply
---- elementwise -------------------------------------------------------------
merge_gather       (a_idx int64[d, na], b_idx int64[d, nb], a_words[na, ka],
                   b_words[nb, kb], strides int64[d], a_fill[ka],
                   b_fill[kb]) -> (idx[d, m], a_out[m, ka], b_out[m, kb]):
                   both coalesced by the row-major key (computed on the
                   fly); the sorted union; a_out[u] = a's row where a has
                   the key, else a_fill (b likewise). Words: unsigned
                   integers of one size, a bit copy; strides and the fill
                   rows are host metadata (synchronises on a GPU: output
                   size); ``sizes=`` and ``pointers=`` as in merge_multiply
                   (``pointers=`` for d == 2 only).
                   The elementwise engine's union
apply_ufunc        (f, args, kwargs) -> f(*args, **kwargs): the engine's
                   elementwise function on the gathered values (arrays whose
                   first axis is the entries, and constants that broadcast);
                   the same elements as one call, bit for bit (Numba: a NumPy
                   ufunc of many elements runs in parts along the first axis
                   on the kernel threads; CUDA: one call)
---- reduce ------------------------------------------------------------------
segment_prod       (values[n, k], perm | None, starts) -> [nseg, k]: each
                   segment's product taken sequentially in perm order (int64
                   wraps; complex products as NumPy's)
segment_minmax     (values[n, k], perm | None, starts, is_max) -> [nseg, k]:
                   max (min) of each segment in perm order; the first NaN met
                   is the result (NumPy's rule); int64, float32/64
segment_arg        (values[n, k], perm | None, starts, sub int64[n], is_max)
                   -> (best[nseg, k], pos int64[nseg, k], gap int64[nseg]):
                   each segment visited in perm order, where its subs are
                   distinct, ascending and >= 0: the max (min) value, the sub
                   of its first occurrence (the first NaN wins), and the
                   smallest non-negative integer missing from its subs
segment_reduce     (values[n, k], perm | None, starts, op) -> [nseg, k]: each
                   segment reduced by op in the blocked order: at most
                   TREE_LEAF (256) entries left to right in perm order; a
                   longer segment as a fixed tree (pieces of 256 entries,
                   then groups of TREE_FAN (32) values, each left to right;
                   docs/design/determinism.md). op 'sum' (int64 modular,
                   float32/64; complex as float pairs), 'prod' (also
                   complex64/128), 'max'/'min' (int64, float32/64; the first
                   NaN in perm order wins; the same as segment_minmax). The
                   reductions' segment kernel (segment_sum keeps coalesce's
                   sequential order)
reduce_sorted      (sorted_keys int64[n], values[n, k], op) -> (starts
                   int64[m + 1], out[m, k]): segment_starts of the keys and
                   each run of equal keys reduced in the blocked order (as
                   segment_reduce), op 'sum' (int64, float32/64), 'prod'
                   (also complex64/128), 'max' or 'min' (int64, float32/64;
                   the first NaN wins): segment_starts + segment_reduce in
                   one call (synchronises on a GPU: m)
reduce_by_key      (keys int64[n] in [0, bound), values[n, k], bound, op,
                   is_sorted) -> (counts int64[bound], out[bound, k]): the
                   entries of each key, in stored order, reduced in the
                   blocked order (op as reduce_sorted), counts[j] = entries
                   with key j, out[j] = 0
                   where counts[j] == 0 (the stable-sort + segment reduction's
                   result, scattered; the CUDA layer computes it so and
                   synchronises). is_sorted: the caller knows the keys are
                   sorted (lets the layer split the runs between threads)
---- indexing ----------------------------------------------------------------
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
take_rows          (indices int64[d, n], values[n, k], ptr int64[r+1], rows
                   int64[m] in [0, r)) -> take_ranges(indices, values,
                   ptr[rows], ptr[rows + 1] - ptr[rows]): the rows of a row
                   pointer gathered whole (rows outside: IndexError on the
                   CPU; on a GPU memory-safe, checked when validating)
---- join --------------------------------------------------------------------
merge_take         (keys int64[n], offsets int64[r+1], indices int64[d, n],
                   values[n, k]) -> (indices[:, perm], values[perm]): keys
                   made of r sorted runs keys[offsets[t]:offsets[t+1]]; perm
                   is their stable sort order (ties: earlier run, then earlier
                   position), i.e. the r-way merge; values are copied as bits
counting_take      (keys int64[n], bound, indices int64[d, n] (any strides: a
                   transpose's rows come as a reversed view), values[n, k],
                   other_bound=None) -> (offsets int64[bound + 1],
                   indices[:, perm], values[perm]): perm the stable sort order
                   of keys in [0, bound) (Numba: a counting sort; CUDA:
                   sort_pairs + gathers), offsets[k] the first position of key
                   k (a CSR pointer of the result). A key outside [0, bound)
                   raises IndexError / is reported (INDEX). other_bound: the
                   second row's bound by the shape, a hint (any values still
                   come out as they are). Sync-free
join_rows          (indices [int64[d, n_t]], values [[n_t, k]], pointers int64[r,
                   m+1], shifts int64[r], axis, out_idx int64[d, N], out_val[N,
                   k]) -> None: pieces sorted by row 0 with row pointers
                   ``pointers[t]`` joined row by row into the outputs: output
                   row i holds row i of piece 0, then of piece 1, ... with
                   shifts[t] added to index row ``axis`` (concatenation along
                   the second axis; the merge's order exactly). Numba: one
                   sequential pass per four pieces; CUDA: each piece scattered
                   to its slots in CuPy, sync-free. Pointers that do not add
                   up to N raise IndexError (Numba, nothing written for those
                   rows) / are clipped into range (CUDA: memory-safe)
---- linalg ------------------------------------------------------------------
row_offsets        (rows int64[n] non-decreasing in [0, nrows), nrows) ->
                   int64[nrows + 1]: CSR row pointer (first i with
                   rows[i] >= r); rows outside or stepping down are
                   refused (see above). Sync-free
spmm               (offsets int64[R+1], perm | None, cols int64[n] (Numba:
                   or int32[n], a sorted matrix's cached narrow copy),
                   values[n], dense[D, N], rows_per_batch, batch_base int64[B]
                   | None, col_bound=None: D) -> [R, N]: out[r, j] = sum over p in
                   offsets[r]..offsets[r+1]-1 (e = perm[p] or p), in p
                   order, of values[e] * dense[base + cols[e], j], base =
                   batch_base[r // rows_per_batch] (0 when None); cols[e]
                   must lie in [0, col_bound). out_rows=None, out_nrows=None:
                   with batch_base None, out_rows int64[R] increasing in
                   [0, out_nrows) places row r at out_rows[r] of an
                   [out_nrows, N] result, zero elsewhere (a matrix's
                   non-empty rows alone). Sync-free
spmm_unsorted      (rows int64[n], cols, values, dense, nrows, rows_per_batch,
                   batch_base, col_bound=None) -> [nrows, N]: the same,
                   entries of a row in stored order (no grouping needed);
                   rows must lie in [0, nrows). Sync-free
dense_spmm         (dense[D, K], batch_base | None, rows_per_batch M,
                   batch_offsets int64[B+1] | None, perm | None, krow int64[n],
                   cols int64[n], values[n], ncols) -> [B*M, ncols]:
                   out[b*M + m, c] = sum over the entries e of batch b
                   (positions batch_offsets[b].., e = perm[p] or p; None: one
                   batch of every entry) with cols[e] == c, in that order, of
                   dense[batch_base[b] + m, krow[e]] * values[e]; krow in
                   [0, K), cols in [0, ncols). Sync-free
sddmm              (rows int64[n], row_stride, cols int64[n], col_stride,
                   x 1-D, x_inner, y 1-D, y_inner, k, row_bound=None,
                   col_bound=None) -> [n]: the dot product
                   of x[rows[e]*row_stride + j*x_inner] and
                   y[cols[e]*col_stride + j*y_inner] over j < k, as eight
                   interleaved lanes (lane l: j = l, l+8, ..., from 0)
                   combined ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)); rows in
                   [0, row_bound), cols in [0, col_bound) (None: 2**63,
                   for addresses from a checked linear_index). Sync-free
dense_transpose    (a[K, N], any strides, out=None) -> [N, K] C-contiguous:
                   a.T copied (Numba: in cache-sized tiles, in parallel
                   parts; CUDA: CuPy's copy), into out when given (C-contiguous
                   [N, K] of a's dtype, not overlapping a). Sync-free
number_columns     (cols int64[n], ncols, cols_out=None) -> (cols2[n],
                   rowmap[ncols], m): the m distinct columns in [0, ncols)
                   that cols names, numbered in the order of their first
                   entry; cols2[e] the number of cols[e], -1 outside [0,
                   ncols); rowmap[c] the number of column c, -1 when unnamed
                   (int32 below 2**31 columns, else int64; cols2 into
                   cols_out when given). Host: m a Python int
sampled_transpose  (a[K, N], cols int64[n], out=None, numbering=None) -> (out,
                   cols2[n], m): number_columns(cols, N), or ``numbering``
                   (its result for these cols, kept from an earlier call, or
                   numbered into scratch), and the m numbered columns of a
                   copied as out's rows 0..m-1 (rows m.. untouched)
---- spgemm ------------------------------------------------------------------
spgemm             (a_offsets int64[R+1], a_rows int64[R] | None, a_perm |
                   None, a_cols int64[na], a_values, b_offsets int64[K+1],
                   b_perm | None, b_cols, b_values, ncols, a_row_bound=None)
                   -> (rc int64[2, m],
                   values[m]): per A row r (key a_rows[r], or r), the
                   distinct columns of the products a_values[e] * b_values[f]
                   (e in A's row r, f in B's row a_cols[e], both in grouped
                   order), increasing: rc[0] = row key, rc[1] = column; each
                   value its first product plus the next in that order; A's
                   columns in [0, K), every B column in [0, ncols), a_rows
                   increasing in [0, a_row_bound) (synchronises on a GPU:
                   output size, with the error word)
---- files (host work of the file bridge; the CUDA layer reads its arrays back)
crc32              (data: a C-contiguous buffer, crc=0) -> int: zlib's
                   ``crc32(data, crc)`` (Numba: folded by carry-less
                   multiplication where the CPU has it)
widen_indices      (src int[d, n] narrower than int64, sizes) -> (int64[d, n],
                   outside, decrease, repeat): the copy, whether some index
                   lies outside ``sizes``, the first position whose linear key
                   is below / equal to its predecessor's (-1: none); the
                   keys count only when nothing is outside. Synchronises
=================  ==========================================================
"""

KERNEL_FAMILIES = {
    # family: the rows it provides. The family names are those of the Numba kernel modules
    # (coosparse/_kernels/numba/<family>.py), the CUDA row modules
    # (coosparse/_kernels/cuda/<family>.py) and the CUDA sources (cuda_kernels/<family>.cu),
    # in dependency order: a family's kernels use only the families before it.
    "linear_index": ("linear_index", "unravel_index"),
    "sort": ("sort_pairs", "sort_segments", "sort_lanes", "topk_lanes"),
    "segment": ("segment_starts", "segment_sum"),
    "gather": ("gather_rows", "gather_columns", "gather_strided", "gather_indexed", "gather_or_zero"),
    "coalesce": ("coalesce_linear",),
    "scatter": ("scatter_add", "scatter_set", "strided_scatter_sorted", "strided_scatter_ordered"),
    "intersect": ("match_merge", "match_search", "merge_matches", "compact_matches", "probe_sum",
                  "multiply_matched", "merge_multiply", "multiply_search", "mask_values"),
    "union": ("merge_union", "union_columns", "merge_add"),
    "elementwise": ("merge_gather", "apply_ufunc"),
    "reduce": ("segment_prod", "segment_minmax", "segment_arg", "segment_reduce", "reduce_sorted", "reduce_by_key"),
    "indexing": ("mask_positions", "search_ranges", "expand_ranges", "take_ranges", "take_rows"),
    "join": ("merge_take", "counting_take", "join_rows"),
    "linalg": ("row_offsets", "spmm", "spmm_unsorted", "dense_spmm", "sddmm", "dense_transpose",
               "number_columns", "sampled_transpose"),
    "spgemm": ("spgemm",),
    "files": ("crc32", "widen_indices"),
}

KERNEL_API = tuple(name for rows in KERNEL_FAMILIES.values() for name in rows)
"""Every row, in family order: what each layer must define."""

FAMILY_OF = {name: family for family, rows in KERNEL_FAMILIES.items() for name in rows}
