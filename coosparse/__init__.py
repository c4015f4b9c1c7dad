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

# ---- elementwise: broadcasting and the Array API elementwise functions (issue 11) ----------
# add, subtract and multiply are imported above (the union and intersection families).
from ._broadcast import broadcast_arrays, broadcast_to  # noqa: E402
from ._ufunc import elemwise  # noqa: E402
from ._math import (  # noqa: E402
    abs, acos, acosh, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_invert,
    bitwise_left_shift, bitwise_or, bitwise_right_shift, bitwise_xor, ceil, clip, conj, copysign,
    cos, cosh, divide, equal, exp, expm1, floor, floor_divide, greater, greater_equal, hypot, imag,
    isfinite, isinf, isnan, less, less_equal, log, log1p, log2, log10, logaddexp, logical_and,
    logical_not, logical_or, logical_xor, maximum, minimum, negative, nextafter, not_equal,
    positive, pow, real, reciprocal, remainder, round, sign, signbit, sin, sinh, sqrt, square, tan,
    tanh, trunc,
)

__all__ += [
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
    "bitwise_invert", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "broadcast_arrays", "broadcast_to", "ceil", "clip", "conj", "copysign", "cos", "cosh", "divide",
    "elemwise", "equal", "exp", "expm1", "floor", "floor_divide", "greater", "greater_equal", "hypot", "imag",
    "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log1p", "log2", "log10", "logaddexp",
    "logical_and", "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "negative",
    "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder", "round", "sign",
    "signbit", "sin", "sinh", "sqrt", "square", "tan", "tanh", "trunc",
]
# ---- linear algebra (issue 13) ---------------------------------------------------
from ._linalg import (  # noqa: E402
    dot, einsum, inner, matmul, outer, sampled_matmul, tensordot, vdot, vecdot,
)

__all__ += ["dot", "einsum", "inner", "matmul", "outer", "sampled_matmul", "tensordot", "vdot", "vecdot"]

# ---- GPU readiness (issue 14): what the CUDA kernels report about invalid input
from ._cuda.errors import check_device_errors  # noqa: E402

__all__ += ["check_device_errors"]
