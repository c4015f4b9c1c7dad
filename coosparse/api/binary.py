"""The elementwise functions of two arguments of the Array API standard (2024.12) on COO
arrays, and ``clip`` (see :mod:`.unary` for the rules they share).
"""
from __future__ import annotations

import numpy as np

from .._core.coo import COO
from .._kernels.backend import array_namespace
from ..ops.elementwise import standard
from .unary import _apply


def atan2(x1, x2, /):
    """Quadrant-aware inverse tangent of ``x1 / x2``, elementwise (:obj:`numpy.arctan2`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.atan2(x1, x2).to_dense()
    array([0.24497866, 0.        , 2.89661399])
    """
    return _apply(np.arctan2, x1, x2)


def bitwise_and(x1, x2, /):
    """Bitwise AND (``x1 & x2``), elementwise (:obj:`numpy.bitwise_and`).

    With fills 0 the result stores the intersection of the operands' indices.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([1, 6]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2, 3, 1]), (3,))
    >>> coosparse.bitwise_and(x1, x2).to_dense()
    array([0, 0, 0])
    """
    return _apply(np.bitwise_and, x1, x2)


def bitwise_left_shift(x1, x2, /):
    """Shift bits left (``x1 << x2``), elementwise (:obj:`numpy.left_shift`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([1, 6]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2, 3, 1]), (3,))
    >>> coosparse.bitwise_left_shift(x1, x2).to_dense()
    array([ 4,  0, 12])
    """
    return _apply(np.left_shift, x1, x2)


def bitwise_or(x1, x2, /):
    """Bitwise OR (``x1 | x2``), elementwise (:obj:`numpy.bitwise_or`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([1, 6]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2, 3, 1]), (3,))
    >>> coosparse.bitwise_or(x1, x2).to_dense()
    array([3, 3, 7])
    """
    return _apply(np.bitwise_or, x1, x2)


def bitwise_right_shift(x1, x2, /):
    """Shift bits right (``x1 >> x2``), elementwise (:obj:`numpy.right_shift`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([1, 6]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2, 3, 1]), (3,))
    >>> coosparse.bitwise_right_shift(x1, x2).to_dense()
    array([0, 0, 3])
    """
    return _apply(np.right_shift, x1, x2)


def bitwise_xor(x1, x2, /):
    """Bitwise XOR (``x1 ^ x2``), elementwise (:obj:`numpy.bitwise_xor`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([1, 6]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2, 3, 1]), (3,))
    >>> coosparse.bitwise_xor(x1, x2).to_dense()
    array([3, 3, 7])
    """
    return _apply(np.bitwise_xor, x1, x2)


def copysign(x1, x2, /):
    """``x1`` with the sign of ``x2``, elementwise (:obj:`numpy.copysign`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([-2.0, 3.0, -1.0]), (3,))
    >>> coosparse.copysign(x1, x2).to_dense()
    array([-0.5 ,  0.  , -0.25])
    """
    return _apply(np.copysign, x1, x2)


def divide(x1, x2, /):
    """True division (``x1 / x2``), elementwise (:obj:`numpy.true_divide`).

    Two fill-0 operands give fill NaN (0 / 0), as the dense arrays would.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.divide(x1, x2).to_dense()
    array([ 0.25,  0.  , -0.25])
    """
    return _apply(np.true_divide, x1, x2)


def equal(x1, x2, /):
    """``x1 == x2`` (bool result), elementwise (:obj:`numpy.equal`).

    Two fill-0 operands give fill True.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.equal(x1, x2).to_dense()
    array([False, False, False])
    """
    return _apply(np.equal, x1, x2)


def floor_divide(x1, x2, /):
    """Floor division (``x1 // x2``), elementwise (:obj:`numpy.floor_divide`, with the Array API's
    special cases for infinite operands: ``inf // 2`` is ``inf`` and ``1 // -inf`` is ``-0``, where
    NumPy gives NaN and -1; ``numpy.floor_divide`` on a COO keeps NumPy's answer).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.floor_divide(x1, x2).to_dense()
    array([ 0.,  0., -1.])
    """
    return _apply(standard.floor_divide, x1, x2)


def greater(x1, x2, /):
    """``x1 > x2`` (bool result), elementwise (:obj:`numpy.greater`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.greater(x1, x2).to_dense()
    array([False, False,  True])
    """
    return _apply(np.greater, x1, x2)


def greater_equal(x1, x2, /):
    """``x1 >= x2`` (bool result), elementwise (:obj:`numpy.greater_equal`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.greater_equal(x1, x2).to_dense()
    array([False, False,  True])
    """
    return _apply(np.greater_equal, x1, x2)


def hypot(x1, x2, /):
    """``sqrt(x1**2 + x2**2)``, elementwise (:obj:`numpy.hypot`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.hypot(x1, x2).to_dense()
    array([2.06155281, 3.        , 1.03077641])
    """
    return _apply(np.hypot, x1, x2)


def less(x1, x2, /):
    """``x1 < x2`` (bool result), elementwise (:obj:`numpy.less`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.less(x1, x2).to_dense()
    array([ True,  True, False])
    """
    return _apply(np.less, x1, x2)


def less_equal(x1, x2, /):
    """``x1 <= x2`` (bool result), elementwise (:obj:`numpy.less_equal`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.less_equal(x1, x2).to_dense()
    array([ True,  True, False])
    """
    return _apply(np.less_equal, x1, x2)


def logaddexp(x1, x2, /):
    """``log(exp(x1) + exp(x2))``, elementwise (:obj:`numpy.logaddexp`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.logaddexp(x1, x2).to_dense()
    array([2.20141328, 3.04858735, 0.50192908])
    """
    return _apply(np.logaddexp, x1, x2)


def logical_and(x1, x2, /):
    """Logical AND (bool result), elementwise (:obj:`numpy.logical_and`).

    With fills False (or 0) the result stores the intersection.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([True, False]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([True, True, False]), (3,))
    >>> coosparse.logical_and(x1, x2).to_dense()
    array([ True, False, False])
    """
    return _apply(np.logical_and, x1, x2)


def logical_or(x1, x2, /):
    """Logical OR (bool result), elementwise (:obj:`numpy.logical_or`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([True, False]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([True, True, False]), (3,))
    >>> coosparse.logical_or(x1, x2).to_dense()
    array([ True,  True, False])
    """
    return _apply(np.logical_or, x1, x2)


def logical_xor(x1, x2, /):
    """Logical XOR (bool result), elementwise (:obj:`numpy.logical_xor`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([True, False]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([True, True, False]), (3,))
    >>> coosparse.logical_xor(x1, x2).to_dense()
    array([False,  True, False])
    """
    return _apply(np.logical_xor, x1, x2)


def maximum(x1, x2, /):
    """Elementwise maximum (NaN propagates), elementwise (:obj:`numpy.maximum`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.maximum(x1, x2).to_dense()
    array([2.  , 3.  , 0.25])
    """
    return _apply(np.maximum, x1, x2)


def minimum(x1, x2, /):
    """Elementwise minimum (NaN propagates), elementwise (:obj:`numpy.minimum`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.minimum(x1, x2).to_dense()
    array([ 0.5,  0. , -1. ])
    """
    return _apply(np.minimum, x1, x2)


def nextafter(x1, x2, /):
    """Next float after ``x1`` toward ``x2``, elementwise (:obj:`numpy.nextafter`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.nextafter(x1, x2).to_dense()
    array([5.0e-001, 4.9e-324, 2.5e-001])
    """
    return _apply(np.nextafter, x1, x2)


def not_equal(x1, x2, /):
    """``x1 != x2`` (bool result), elementwise (:obj:`numpy.not_equal`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.not_equal(x1, x2).to_dense()
    array([ True,  True,  True])
    """
    return _apply(np.not_equal, x1, x2)


def pow(x1, x2, /):
    """``x1 ** x2``, elementwise (:obj:`numpy.power`).

    ``0 ** 0`` is 1: two fill-0 operands give fill 1, stored where ``x2`` stores (the base's pattern does not matter where the exponent is 0).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.pow(x1, x2).to_dense()
    array([0.25, 0.  , 4.  ])
    """
    return _apply(np.power, x1, x2)


def remainder(x1, x2, /):
    """Remainder with the sign of the divisor (``x1 % x2``), elementwise (:obj:`numpy.remainder`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.remainder(x1, x2).to_dense()
    array([ 0.5 ,  0.  , -0.75])
    """
    return _apply(np.remainder, x1, x2)


def clip(x, /, min=None, max=None):
    """Clamp ``x`` to ``[min, max]`` (``minimum(maximum(x, min), max)``, as :obj:`numpy.clip`).

    ``min`` and ``max`` may be scalars, COO or dense arrays, or None (no
    bound). The result keeps ``x``'s dtype when the bounds are of the same
    kind (Array API); NaN in ``x`` or a bound propagates.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([-3.0, 7.0]), (3,))
    >>> coosparse.clip(x, -1, 5).to_dense()
    array([-1.,  0.,  5.])
    >>> coosparse.clip(x, 1).fill_value
    np.float64(1.0)
    """
    out = _clamp(x, min, max)
    if isinstance(x, COO) and out.dtype != x.dtype and out.dtype.kind == x.dtype.kind:
        out = out.astype(x.dtype, copy=False)
    return out


def _clamp(x, min, max):
    """``minimum(maximum(x, min), max)`` with NumPy's dtype promotion (:obj:`numpy.clip`'s answer; :func:`clip`
    then keeps ``x``'s dtype, as the Array API asks)."""
    out = x
    if min is not None:
        out = _apply(np.maximum, out, min)
    if max is not None:
        if out is x or isinstance(out, COO) or isinstance(max, COO):
            out = _apply(np.minimum, out, max)
        else:  # a dense min made the result dense: the rest is its own namespace's minimum
            out = array_namespace(out).minimum(out, max)
    if out is x and not isinstance(x, COO):
        raise TypeError(f"clip: x must be a COO array; got {type(x).__name__}")
    return out
