"""coosparse: N-dimensional COO sparse arrays with exact sorted/unique flags.

CPU kernels are Numba; CUDA kernels are raw CUDA C loaded by CuPy. scipy,
torch and cupy are imported lazily, on first use. This module is the public
namespace (and the Array API namespace): the names below, grouped by family,
come from the layers of docs/architecture.md (``ops`` for the operations,
``api`` for the Array API's own names, ``interop`` for the bridges).
"""
# ---- the array ------------------------------------------------------------------------------------
from ._core.coo import COO
from ._core.dtypes import SUPPORTED_DTYPES
from ._kernels.cuda.errors import check_device_errors

# ---- coalesce, conversions, strided scatter, random -----------------------------------------------
from .ops.coalesce import coalesce, eliminate_zeros
from .ops.dense import from_dense, to_dense
from .ops.device import asarray
from .ops.random import random
from .ops.scatter import as_strided_scatter
from .interop.scipy import from_scipy
from .interop.npz import load_npz, save_npz

# ---- elementwise: the intersection and union families, broadcasting, every ufunc ------------------
from .ops.broadcast import broadcast_arrays, broadcast_to
from .ops.elementwise.arithmetic import add, multiply, subtract
from .ops.elementwise.engine import elemwise
from .ops.elementwise.intersect import mask_projection, sparse_mask
from .api.unary import (
    abs, acos, acosh, asin, asinh, atan, atanh, bitwise_invert, ceil, conj, cos, cosh, exp, expm1, floor,
    imag, isfinite, isinf, isnan, log, log1p, log2, log10, logical_not, negative, positive, real,
    reciprocal, round, sign, signbit, sin, sinh, sqrt, square, tan, tanh, trunc,
)
from .api.binary import (
    atan2, bitwise_and, bitwise_left_shift, bitwise_or, bitwise_right_shift, bitwise_xor, clip, copysign,
    divide, equal, floor_divide, greater, greater_equal, hypot, less, less_equal, logaddexp, logical_and,
    logical_or, logical_xor, maximum, minimum, nextafter, not_equal, pow, remainder,
)

# ---- shape, indexing, joining, searching ----------------------------------------------------------
from .ops.shape import (
    expand_dims, flatten, matrix_transpose, moveaxis, permute_dims, ravel, reshape, squeeze, swapaxes,
    to_hybrid, transpose,
)
from .ops.indexing import argwhere, nonzero
from .ops.search import (
    argsort, isin, searchsorted, sort, take, take_along_axis, unique_all, unique_counts, unique_inverse,
    unique_values, where,
)
from .ops.select import argpartition, topk
from .ops.join import concat, concatenate, stack, unstack
from .ops.rearrange import diagonal, flip, kron, pad, repeat, roll, tile, tril, triu

# ---- linear algebra -------------------------------------------------------------------------------
from .ops.linalg.products import dot, inner, matmul, outer, sampled_matmul, tensordot, vdot, vecdot
from .ops.linalg.einsum import einsum

# ---- the Array API namespace: dtypes, constants, inspection, creation -------------------------------
from .api.constants import __array_api_version__, __array_namespace_info__, e, inf, nan, newaxis, pi
from .api.dtypes import (
    astype, can_cast, complex64, complex128, finfo, float16, float32, float64, iinfo, int8, int16, int32,
    int64, isdtype, result_type, uint8, uint16, uint32, uint64,
)
from .api.creation import (
    arange, empty, empty_like, eye, from_dlpack, full, full_like, linspace, meshgrid, ones, ones_like,
    zeros, zeros_like,
)
from . import api as _api  # noqa: F401  (NumPy's non-ufunc elementwise functions register themselves)
from .api import linalg  # the Array API's linear-algebra extension: coosparse.linalg

# ---- reductions (and the names that shadow builtins, bound last: nothing above uses them) ----------
from .ops.reduce.functions import (
    all, any, argmax, argmin, count_nonzero, cumulative_prod, cumulative_sum, diff, max, mean, min,
    nanargmax, nanargmin, nanmax, nanmean, nanmin, nanprod, nanstd, nansum, nanvar, prod, std, sum, var,
)
from .api.dtypes import bool

__version__ = "0.1.0"

__all__ = [
    "COO", "SUPPORTED_DTYPES", "as_strided_scatter", "asarray", "add", "coalesce", "eliminate_zeros", "from_dense",
    "from_scipy", "load_npz", "mask_projection", "multiply", "random", "save_npz", "sparse_mask", "subtract",
    "to_dense",
    "check_device_errors",
    # elementwise
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
    "bitwise_invert", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "broadcast_arrays", "broadcast_to", "ceil", "clip", "conj", "copysign", "cos", "cosh", "divide",
    "elemwise", "equal", "exp", "expm1", "floor", "floor_divide", "greater", "greater_equal", "hypot", "imag",
    "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log1p", "log2", "log10", "logaddexp",
    "logical_and", "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "negative",
    "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder", "round", "sign",
    "signbit", "sin", "sinh", "sqrt", "square", "tan", "tanh", "trunc",
    # linear algebra
    "dot", "einsum", "inner", "matmul", "outer", "sampled_matmul", "tensordot", "vdot", "vecdot",
    # shape, indexing, joining, searching
    "argpartition", "argsort", "argwhere", "concat", "concatenate", "diagonal", "expand_dims", "flatten", "flip",
    "isin", "kron", "matrix_transpose", "moveaxis", "nonzero", "pad", "permute_dims", "ravel",
    "repeat", "reshape", "roll", "searchsorted", "sort", "squeeze", "stack", "swapaxes", "take",
    "take_along_axis", "tile", "to_hybrid", "topk", "transpose", "tril", "triu", "unique_all",
    "unique_counts", "unique_inverse", "unique_values", "unstack", "where",
    # the Array API namespace and reductions
    "all", "any", "arange", "argmax", "argmin", "astype", "can_cast", "count_nonzero", "cumulative_prod",
    "cumulative_sum", "diff", "empty", "empty_like", "eye", "finfo", "from_dlpack", "full", "full_like",
    "iinfo", "isdtype", "linalg", "linspace", "max", "mean", "meshgrid", "min", "nanargmax", "nanargmin", "nanmax",
    "nanmean", "nanmin", "nanprod", "nanstd", "nansum", "nanvar", "ones", "ones_like", "prod",
    "result_type", "std", "sum", "var", "zeros", "zeros_like",
]
