"""PyTorch bridge (SPEC 6): zero-copy conversion and autograd operations on coosparse kernels.

Conversion
    :func:`from_torch` and :func:`to_torch` move the *components* of a sparse
    COO tensor (indices and values) through DLPack, so no data is copied:
    NumPy on the CPU, CuPy on CUDA. Dense tensors convert to NumPy/CuPy arrays
    the same way.

Autograd operations
    :func:`coalesce`, :func:`to_dense`, :func:`sparse_mask`,
    :func:`mask_projection`, :func:`multiply`, :func:`add`, :func:`subtract`
    and :func:`as_strided_scatter` take torch tensors (sparse COO and, where
    torch allows it, dense), compute with the coosparse kernels and return
    torch tensors. Their backward passes are coosparse kernels too.

    **Gradient layout.** The gradient of a *sparse* input ``x`` is a sparse,
    coalesced tensor with exactly the indices of ``x.coalesce()`` (``x``'s own
    indices when ``x`` is coalesced), whatever the operation and whatever the
    argument order. Its values are the derivatives with respect to the dense
    elements at those indices ("masked" semantics: unspecified elements of a
    sparse input get no gradient). This is the layout torch's own autograd
    engine and ``torch.autograd.gradcheck`` expect of a sparse gradient.
    When the sparse input is built from a values tensor that requires grad
    (``torch.sparse_coo_tensor(indices, values, ...)``), torch's constructor
    backward gathers that gradient per stored entry: every duplicate receives
    the gradient of its index.

    The gradient of a *dense* input is dense.

torch.compile
    The dense-facing operations are registered with ``torch.library.custom_op``
    (namespace ``coosparse``) with fake implementations and autograd formulas:
    :func:`as_strided_scatter`, :func:`to_dense_parts` and
    :func:`sparse_mask_parts`. The last two are ``to_dense`` and ``sparse_mask``
    on the COO *components* (an int64 indices tensor and a values tensor), the
    form in which a sparse array can cross a compiled graph. Operations taking
    or returning sparse tensors are plain autograd functions: custom ops and
    ``torch.compile`` do not trace sparse-layout tensors (FakeTensor and
    functionalization have no sparse COO support), and their output sizes
    depend on the data (``coalesce``, ``multiply(compact=True)``).
"""
from ._autograd import add, coalesce, mask_projection, multiply, sparse_mask, subtract, to_dense
from ._compile import as_strided_scatter, sparse_mask_parts, to_dense_parts
from ._convert import from_torch, to_torch

# ---- linear algebra ---------------------------------------------------------------
from ._linalg import matmul, sampled_matmul, sddmm_parts, spmm_parts  # noqa: E402

__all__ = [
    "add",
    "as_strided_scatter",
    "coalesce",
    "from_torch",
    "mask_projection",
    "multiply",
    "sparse_mask",
    "sparse_mask_parts",
    "subtract",
    "to_dense",
    "to_dense_parts",
    "to_torch",
    # ---- linear algebra
    "matmul",
    "sampled_matmul",
    "sddmm_parts",
    "spmm_parts",
]
