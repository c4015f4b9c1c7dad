"""``coosparse.linalg``: the Array API's linear-algebra extension, with what sparse arrays do well.

Products (``matmul``, ``tensordot``, ``vecdot``, ``outer``) are the top-level
functions (docs/linalg.md); ``matrix_transpose``, ``diagonal``, ``trace``, the
norms (``vector_norm``; ``matrix_norm`` with ``'fro'``, 1, -1, inf, -inf),
``matrix_power`` (n >= 0) and ``cross`` are built from elementwise operations,
reductions and sparse products, so their results stay sparse where the inputs
are (a norm or a trace is a 0-d or batch-shaped COO, as the reductions give).

The decompositions and solvers (``cholesky``, ``det``, ``eigh``, ``eigvalsh``,
``inv``, ``matrix_rank``, ``pinv``, ``qr``, ``slogdet``, ``solve``, ``svd``,
``svdvals``; ``matrix_norm`` with ord 2, -2 or ``'nuc'``; ``matrix_power`` with
n < 0) produce dense factors, or need them: each raises ``NotImplementedError``
naming the function and the alternatives (``numpy.linalg`` on ``x.to_dense()``
for small matrices, ``scipy.sparse.linalg`` on ``x.to_scipy('csr')`` for
iterative solvers and a few eigen/singular values).

Examples
--------
>>> import numpy as np, coosparse
>>> a = coosparse.asarray(np.array([[3.0, 0.0], [-4.0, 1.0]]))
>>> float(coosparse.linalg.matrix_norm(a)), float(coosparse.linalg.vector_norm(a, ord=1))
(5.0990195135927845, 8.0)
>>> coosparse.linalg.matrix_power(a, 2).to_dense()
array([[ 9.,  0.],
       [-16.,  1.]])
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ..ops.broadcast import broadcast_arrays
from ..ops.device import as_coo
from ..ops.indexing import getitem
from ..ops.join import stack
from ..ops.linalg.products import matmul, outer, tensordot, vecdot
from ..ops.rearrange import diagonal as _diagonal
from ..ops.reduce.functions import max as _max
from ..ops.reduce.functions import min as _min
from ..ops.reduce.functions import sum as _sum
from ..ops.shape import matrix_transpose, squeeze
from .creation import eye
from .dtypes import astype
from .unary import abs as _abs
from .unary import sqrt as _sqrt

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm", "matrix_power",
    "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot",
    "trace", "vecdot", "vector_norm",
]


def _matrices(x, op):
    if x.ndim < 2:
        raise ValueError(f"linalg.{op}: needs at least 2 dimensions (a stack of matrices); got shape {x.shape}")


def _floating(x):
    """``|x|`` in a real floating dtype (integers and bools as float64, as NumPy's norms give)."""
    a = _abs(x)
    return a if a.dtype.kind == "f" else astype(a, np.float64)


def _max_from_zero(a, axis, keepdims):
    """``max`` of the non-negative ``a`` over ``axis`` from 0, as NumPy's norms take it
    (``max(..., initial=0)``): over no element the norm is 0 (``sum`` gives those zeros)."""
    axes = range(a.ndim) if axis is None else (axis,) if isinstance(axis, (int, np.integer)) else axis
    if any(a.shape[ax] == 0 for ax in axes):
        return _sum(a, axis=axis, keepdims=keepdims)
    return _max(a, axis=axis, keepdims=keepdims)


# ----------------------------------------------------------------------------- sparse-friendly
def diagonal(x, /, *, offset=0):
    """The ``offset``-th diagonal of each matrix (the last two axes); a COO of shape ``(..., k)``.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> coosparse.linalg.diagonal(coosparse.asarray(np.arange(6.0).reshape(2, 3)), offset=1).to_dense()
    array([1., 5.])
    """
    x = as_coo(x, "linalg.diagonal")
    _matrices(x, "diagonal")
    return _diagonal(x, offset=operator.index(offset), axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    """Sum of the ``offset``-th diagonal of each matrix (Array API ``trace``: the dtype rules of ``sum``).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> int(coosparse.linalg.trace(coosparse.asarray(np.arange(9).reshape(3, 3))))
    12
    """
    return _sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector norm over ``axis`` (None: all elements): ``ord`` 1, 2, inf, -inf, 0 (the number of
    non-zeros) or any other p (``sum(|x|**p)**(1/p)``). Implicit elements take part with the fill.

    Returns a COO of the remaining axes (0-d for ``axis=None``) in a real floating dtype.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[3.0, 0.0], [0.0, -4.0]]))
    >>> float(coosparse.linalg.vector_norm(a)), coosparse.linalg.vector_norm(a, axis=0, ord=np.inf).to_dense()
    (5.0, array([3., 4.]))
    """
    x = as_coo(x, "linalg.vector_norm")
    a = _floating(x)
    kw = {"axis": axis, "keepdims": keepdims}
    if ord == math.inf:
        return _max_from_zero(a, **kw)
    if ord == -math.inf:
        return _min(a, **kw)
    if ord == 0:
        return _sum(astype(a != 0, a.dtype), **kw)
    if ord == 1:
        return _sum(a, **kw)
    if ord == 2:
        return _sqrt(_sum(a * a, **kw))
    if not isinstance(ord, (int, float, np.integer, np.floating)) or isinstance(ord, bool):
        raise ValueError(f"linalg.vector_norm: ord must be a number or +-inf; got {ord!r}")
    p = a.dtype.type(ord)
    return _sum(a ** p, **kw) ** (a.dtype.type(1) / p)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Norm of each matrix (the last two axes): ``'fro'``, 1 / -1 (max / min column sum of
    ``|x|``), inf / -inf (max / min row sum). ord 2, -2 and ``'nuc'`` need singular values
    (dense): NotImplementedError.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1.0, -2.0], [0.0, 3.0]]))
    >>> [float(coosparse.linalg.matrix_norm(a, ord=o)) for o in (1, np.inf, -1)]
    [5.0, 3.0, 1.0]
    """
    x = as_coo(x, "linalg.matrix_norm")
    _matrices(x, "matrix_norm")
    if isinstance(ord, str):
        if ord == "nuc":
            _refuse("matrix_norm(ord='nuc')", "the sum of the singular values", "svdvals")
        if ord != "fro":
            raise ValueError(f"linalg.matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf; got {ord!r}")
        return _sqrt(_sum(_floating(x) ** 2, axis=(-2, -1), keepdims=keepdims))
    if ord in (2, -2):
        _refuse(f"matrix_norm(ord={ord})", "an extreme singular value", "svdvals")
    if ord in (1, -1):
        inner, outer_ = -2, -1
    elif ord in (math.inf, -math.inf):
        inner, outer_ = -1, -2
    else:
        raise ValueError(f"linalg.matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf; got {ord!r}")
    sums = _sum(_floating(x), axis=inner, keepdims=True)
    r = (_max_from_zero if ord > 0 else _min)(sums, axis=outer_, keepdims=True)
    return r if keepdims else squeeze(r, axis=(-2, -1))


def matrix_power(x, n, /):
    """``x @ x @ ... @ x`` (``n`` factors; ``n = 0``: the identity), by repeated squaring of sparse
    products (each a coalesced COO). ``n < 0`` needs the inverse (dense): NotImplementedError.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[0.0, 1.0], [1.0, 0.0]]))
    >>> coosparse.linalg.matrix_power(a, 3).to_dense()
    array([[0., 1.],
           [1., 0.]])
    """
    x = as_coo(x, "linalg.matrix_power")
    n = operator.index(n)
    _matrices(x, "matrix_power")
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"linalg.matrix_power: needs square matrices; got shape {x.shape}")
    if n < 0:
        _refuse(f"matrix_power(x, {n})", "the inverse", "inv")
    if n == 0:
        ident = eye(x.shape[-1], dtype=x.dtype, device=x.device)
        return broadcast_arrays(ident, x)[0] if x.ndim > 2 else ident
    result, base = None, x
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            return result
        base = matmul(base, base)


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-element vectors along ``axis`` (the operands broadcast first).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> e1 = coosparse.asarray(np.array([1.0, 0.0, 0.0]))
    >>> e2 = coosparse.asarray(np.array([0.0, 1.0, 0.0]))
    >>> coosparse.linalg.cross(e1, e2).to_dense()
    array([0., 0., 1.])
    """
    a, b = broadcast_arrays(as_coo(x1, "linalg.cross"), as_coo(x2, "linalg.cross"))
    axis = operator.index(axis)
    if not -a.ndim <= axis < a.ndim:
        raise ValueError(f"linalg.cross: axis {axis} is out of bounds for arrays of {a.ndim} dimensions")
    axis %= a.ndim
    if a.shape[axis] != 3:
        raise ValueError(f"linalg.cross: the vectors along axis {axis} must have 3 elements; got shape {a.shape}")

    def part(v, i):
        return getitem(v, (slice(None),) * axis + (i,))

    (a0, a1, a2), (b0, b1, b2) = ([part(v, i) for i in range(3)] for v in (a, b))
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=axis)


# ----------------------------------------------------------------------------- dense by nature
def _refuse(call, what, name):
    raise NotImplementedError(
        f"coosparse.linalg.{call}: {what} of a sparse matrix is dense, so coosparse does not compute it; "
        f"use numpy.linalg.{name}(x.to_dense()) for a small matrix, or scipy.sparse.linalg on "
        "x.to_scipy('csr') (iterative solvers, a few eigen/singular values) for a large one"
    )


def cholesky(x, /, *, upper=False):
    """Refused (dense factor): see the module docstring."""
    _refuse("cholesky", "the Cholesky factor", "cholesky")


def det(x, /):
    """Refused (needs a dense factorisation): see the module docstring."""
    _refuse("det", "the determinant (an LU factorisation)", "det")


def eigh(x, /):
    """Refused (dense eigenvectors): see the module docstring."""
    _refuse("eigh", "the eigendecomposition", "eigh")


def eigvalsh(x, /):
    """Refused (a dense factorisation): see the module docstring."""
    _refuse("eigvalsh", "the full set of eigenvalues", "eigvalsh")


def inv(x, /):
    """Refused (the inverse is dense): see the module docstring."""
    _refuse("inv", "the inverse", "inv")


def matrix_rank(x, /, *, rtol=None):
    """Refused (needs singular values): see the module docstring."""
    _refuse("matrix_rank", "the rank (the singular values)", "matrix_rank")


def pinv(x, /, *, rtol=None):
    """Refused (the pseudo-inverse is dense): see the module docstring."""
    _refuse("pinv", "the pseudo-inverse", "pinv")


def qr(x, /, *, mode="reduced"):
    """Refused (dense factors): see the module docstring."""
    _refuse("qr", "the QR factorisation", "qr")


def slogdet(x, /):
    """Refused (needs a dense factorisation): see the module docstring."""
    _refuse("slogdet", "the log-determinant (an LU factorisation)", "slogdet")


def solve(x1, x2, /):
    """Refused (a direct solve factorises densely): see the module docstring."""
    _refuse("solve", "a direct solve", "solve")


def svd(x, /, *, full_matrices=True):
    """Refused (dense factors): see the module docstring."""
    _refuse("svd", "the singular value decomposition", "svd")


def svdvals(x, /):
    """Refused (a dense factorisation): see the module docstring."""
    _refuse("svdvals", "the full set of singular values", "svdvals")
