"""CUDA C sources of the GPU kernel layer (shipped as package data).

``KERNELS`` is the one table of kernel files and their template
instantiations (NVRTC name expressions), read by the loader
(``coosparse._kernels.cuda.sources``: ``name_expressions`` of each RawModule, and the
host build of the emulated backend) and by the NVRTC compile test. A kernel
that is not listed here is never compiled, so every kernel is listed, and
every template once per type the Python layer launches it with.

Types: sums run in the accumulation types (``unsigned long long`` stands for
int64, whose two's-complement sums are modular; complex values are summed as
interleaved float pairs), copies run on unsigned words of the element width.
"""
SUM_TYPES = ("unsigned long long", "float", "double")
"""Accumulation types of the ordered sums (int64 as u64: modular, no signed overflow)."""

ADD_TYPES = ("unsigned char", "unsigned short", "unsigned int", "unsigned long long", "float", "double")
"""Element types of scatter-add targets (integers of every width as unsigned words)."""

PRODUCT_TYPES = SUM_TYPES + ("coo_complex<float>", "coo_complex<double>")
"""Types of the fused product kernel (complex products are not componentwise)."""

ORDER_TYPES = ("long long", "float", "double")
"""Types of the comparison kernels (min/max: int64 compared signed; narrower integers are widened)."""

WORD_TYPES = ("unsigned char", "unsigned short", "unsigned int", "unsigned long long")
"""Bit-copy types, one per element width (1, 2, 4, 8 bytes; 16-byte complex is two words)."""


def _inst(kernel, types):
    return tuple(f"{kernel}<{t}>" for t in types)


def _ops(types, op):
    """Template argument ``op<T>`` for each type (the segment reductions of reduce.cu)."""
    return tuple(f"{op}<{t}> " for t in types)


KERNELS = {
    "linear_index.cu": (
        "coo_linear_index_compute",
        "coo_linear_index_checked",
        "coo_linear_index_unravel",
    ),
    "sort.cu": (
        "coo_sort_pack",
        "coo_sort_unpack",
        "coo_sort_check",
    ),
    "segment.cu": (
        "coo_segment_take_errors",
        "coo_segment_starts_flag",
        "coo_segment_starts_write",
    ) + _inst("coo_segment_sum_reduce", SUM_TYPES),
    "gather.cu": ("coo_gather_columns",)
    + _inst("coo_gather_rows_copy", WORD_TYPES)
    + _inst("coo_gather_rows_or_zero", WORD_TYPES)
    + _inst("coo_gather_strided", WORD_TYPES),
    "scatter.cu": ("coo_scatter_elements",)
    + _inst("coo_scatter_add_runs", ADD_TYPES)
    + _inst("coo_scatter_set_runs", WORD_TYPES)
    + _inst("coo_scatter_set_direct", WORD_TYPES)
    + ("coo_scatter_check_sorted",)
    + _inst("coo_scatter_add_values", ADD_TYPES)
    + _inst("coo_scatter_check_direct", WORD_TYPES)
    + _inst("coo_scatter_view_set", WORD_TYPES)
    + _inst("coo_scatter_view_fill", WORD_TYPES)
    + ("coo_scatter_view_addresses",),
    "intersect.cu": (
        "coo_intersect_match",
        "coo_intersect_flag",
        "coo_intersect_compact",
        "coo_intersect_claim_runs",
    ) + _inst("coo_intersect_probe_sum", SUM_TYPES)
    + _inst("coo_intersect_multiply_matched", PRODUCT_TYPES)
    + _inst("coo_intersect_copy_runs", WORD_TYPES[2:])  # sums are 4- or 8-byte words
    + _inst("coo_intersect_multiply_sums", PRODUCT_TYPES),
    "union.cu": (
        "coo_union_rank",
        "coo_union_write_a",
        "coo_union_write_b",
        "coo_union_columns",
    ) + _inst("coo_union_values", ADD_TYPES),
    # ---- reductions
    "reduce.cu": ("coo_reduce_tree_plan",)
    + _inst("coo_reduce_short", _ops(SUM_TYPES, "coo_op_sum") + _ops(PRODUCT_TYPES, "coo_op_prod")
            + _ops(ORDER_TYPES, "coo_op_max") + _ops(ORDER_TYPES, "coo_op_min"))
    + _inst("coo_reduce_tree", _ops(SUM_TYPES, "coo_op_sum") + _ops(PRODUCT_TYPES, "coo_op_prod")
            + _ops(ORDER_TYPES, "coo_op_max") + _ops(ORDER_TYPES, "coo_op_min"))
    + _inst("coo_reduce_segment_prod", PRODUCT_TYPES)
    + _inst("coo_reduce_segment_minmax", ORDER_TYPES)
    + _inst("coo_reduce_segment_arg", ORDER_TYPES)
    + _inst("coo_reduce_arg_tree", _ops(ORDER_TYPES, "coo_op_max") + _ops(ORDER_TYPES, "coo_op_min")),
    # ---- shape, indexing and joining
    "indexing.cu": (
        "coo_indexing_mask_flag",
        "coo_indexing_mask_write",
        "coo_indexing_search_ranges",
        "coo_indexing_expand",
    ) + _inst("coo_indexing_take_ranges", WORD_TYPES),
    "join.cu": _inst("coo_join_merge_take", WORD_TYPES),
    # ---- linear algebra
    "linalg.cu": (
        "coo_linalg_row_offsets",
        "coo_linalg_batch_col_key",
        "coo_linalg_spgemm_count",
        "coo_linalg_check_keys",
    ) + _inst("coo_linalg_spmm", PRODUCT_TYPES)
    + _inst("coo_linalg_spmm_staged", PRODUCT_TYPES)
    + _inst("coo_linalg_dense_spmm", PRODUCT_TYPES)
    + _inst("coo_linalg_sddmm", PRODUCT_TYPES)
    + _inst("coo_linalg_spgemm_expand", PRODUCT_TYPES),
}


COOPERATIVE = frozenset(_inst("coo_linalg_sddmm", PRODUCT_TYPES) + _inst("coo_linalg_spmm_staged", PRODUCT_TYPES))
"""Kernels whose threads cooperate (``__syncthreads``, ``COO_SHARED``, warp shuffles): the emulation runs
each thread of their blocks as a fiber (include/coo_host_shim.cuh); the others run one thread after another."""


def kernel_file(name_expression):
    """The file of ``KERNELS`` that defines ``name_expression`` (KeyError if none)."""
    for fname, names in KERNELS.items():
        if name_expression in names:
            return fname
    raise KeyError(f"kernel {name_expression!r} is not in cuda_kernels.KERNELS")
