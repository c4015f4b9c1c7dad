"""coosparse: N-dimensional COO sparse arrays with exact sorted/unique flags.

CPU kernels are Numba; CUDA kernels are raw CUDA C loaded by CuPy. scipy,
torch and cupy are imported lazily, on first use.
"""
from ._coalesce import coalesce
from ._coo import COO
from ._dense import from_dense, to_dense
from ._device import asarray
from ._dtypes import SUPPORTED_DTYPES
from ._intersect import mask_projection, multiply, sparse_mask
from ._random import random
from ._scatter import as_strided_scatter
from ._union import add, subtract

__version__ = "0.1.0"


def from_scipy(m, *, check=True):
    """COO from a scipy.sparse array or matrix; see :func:`coosparse.interop.scipy.from_scipy`."""
    from .interop.scipy import from_scipy as _from_scipy

    return _from_scipy(m, check=check)


__all__ = [
    "COO",
    "SUPPORTED_DTYPES",
    "as_strided_scatter",
    "asarray",
    "add",
    "coalesce",
    "from_dense",
    "from_scipy",
    "mask_projection",
    "multiply",
    "random",
    "sparse_mask",
    "subtract",
    "to_dense",
]

# ---- linear algebra (issue 13) ---------------------------------------------------
from ._linalg import (  # noqa: E402
    dot, einsum, inner, matmul, outer, sampled_matmul, tensordot, vdot, vecdot,
)

__all__ += ["dot", "einsum", "inner", "matmul", "outer", "sampled_matmul", "tensordot", "vdot", "vecdot"]

# ---- GPU readiness (issue 14): what the CUDA kernels report about invalid input
from ._cuda.errors import check_device_errors  # noqa: E402

__all__ += ["check_device_errors"]
