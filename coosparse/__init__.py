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

# ---- shape, indexing, joining, searching (issue 12) ----------------------------
from ._join import (  # noqa: E402
    concat, concatenate, diagonal, flip, kron, pad, repeat, roll, stack, tile, tril, triu, unstack,
)
from ._search import (  # noqa: E402
    argsort, argwhere, isin, nonzero, searchsorted, sort, take, take_along_axis, unique_all,
    unique_counts, unique_inverse, unique_values, where,
)
from ._shape import (  # noqa: E402
    expand_dims, flatten, matrix_transpose, moveaxis, permute_dims, ravel, reshape, squeeze, swapaxes,
    to_hybrid, transpose,
)
from . import _indexing  # noqa: E402,F401  (a[key])

__all__ += [
    "argsort", "argwhere", "concat", "concatenate", "diagonal", "expand_dims", "flatten", "flip",
    "isin", "kron", "matrix_transpose", "moveaxis", "nonzero", "pad", "permute_dims", "ravel",
    "repeat", "reshape", "roll", "searchsorted", "sort", "squeeze", "stack", "swapaxes", "take",
    "take_along_axis", "tile", "to_hybrid", "transpose", "tril", "triu", "unique_all",
    "unique_counts", "unique_inverse", "unique_values", "unstack", "where",
]

# ---- GPU readiness (issue 14): what the CUDA kernels report about invalid input
from ._cuda.errors import check_device_errors  # noqa: E402

__all__ += ["check_device_errors"]


# ---- reductions and the Array API namespace (issue 11, reductions half) --------------------
# Names that shadow builtins (bool, sum, min, max, any, all) are bound last; nothing above uses them.
from ._array_api import (  # noqa: E402
    __array_api_version__,
    __array_namespace_info__,
    astype,
    arange,
    bool,
    can_cast,
    complex64,
    complex128,
    e,
    empty,
    empty_like,
    eye,
    finfo,
    float16,
    float32,
    float64,
    from_dlpack,
    full,
    full_like,
    iinfo,
    inf,
    int8,
    int16,
    int32,
    int64,
    isdtype,
    linspace,
    meshgrid,
    nan,
    newaxis,
    ones,
    ones_like,
    pi,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
    zeros,
    zeros_like,
)
from ._reduce import (  # noqa: E402
    all,
    any,
    argmax,
    argmin,
    count_nonzero,
    cumulative_prod,
    cumulative_sum,
    diff,
    max,
    mean,
    min,
    nanargmax,
    nanargmin,
    nanmax,
    nanmean,
    nanmin,
    nanprod,
    nanstd,
    nansum,
    nanvar,
    prod,
    std,
    sum,
    var,
)

__all__ += [
    "all", "any", "arange", "argmax", "argmin", "astype", "can_cast", "count_nonzero", "cumulative_prod",
    "cumulative_sum", "diff", "empty", "empty_like", "eye", "finfo", "from_dlpack", "full", "full_like",
    "iinfo", "isdtype", "linspace", "max", "mean", "meshgrid", "min", "nanargmax", "nanargmin", "nanmax",
    "nanmean", "nanmin", "nanprod", "nanstd", "nansum", "nanvar", "ones", "ones_like", "prod",
    "result_type", "std", "sum", "var", "zeros", "zeros_like",
]
