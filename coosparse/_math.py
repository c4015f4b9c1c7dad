"""The elementwise functions of the Array API standard (2024.12) on COO arrays.

Each function is the NumPy function named in its docstring run by the
elementwise engine (``coosparse/_ufunc.py``): the result's fill is the
function of the operands' fills, its pattern follows the rule of SPEC 9
(intersection where fills annihilate, else the union, see the NumPy users
page), duplicates are summed first (except for linear functions), operands
broadcast like NumPy arrays and dtypes promote as NumPy's (NEP 50 for Python
scalars). Binary functions take one Python scalar beside a COO, and dense
arrays (a dense result where the dense operand fills the background).
``add``, ``subtract`` and ``multiply`` live with the union and intersection
families (``coosparse/_union.py``, ``coosparse/_intersect.py``).
"""
from __future__ import annotations

import numpy as np

from ._dispatch import implements
from ._ufunc import elementwise


def _apply(f, *args, **fkw):
    return elementwise(f, args, fkw)


def abs(x, /):
    """Absolute value, elementwise (:obj:`numpy.absolute`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([-1.5, 2.0]), (3,))
    >>> coosparse.abs(x).to_dense()
    array([1.5, 0. , 2. ])
    """
    return _apply(np.absolute, x)


def acos(x, /):
    """Inverse cosine, elementwise (:obj:`numpy.arccos`).

    The fill of a fill-0 array is acos(0) = pi/2.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> coosparse.acos(x).to_dense()
    array([1.04719755, 1.57079633, 1.31811607])
    """
    return _apply(np.arccos, x)


def acosh(x, /):
    """Inverse hyperbolic cosine, elementwise (:obj:`numpy.arccosh`).

    acosh(0) is NaN: a fill-0 array gives fill NaN.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([1.0, 2.0]), (3,))
    >>> coosparse.acosh(x).to_dense()
    array([0.       ,       nan, 1.3169579])
    """
    return _apply(np.arccosh, x)


def asin(x, /):
    """Inverse sine, elementwise (:obj:`numpy.arcsin`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> coosparse.asin(x).to_dense()
    array([0.52359878, 0.        , 0.25268026])
    """
    return _apply(np.arcsin, x)


def asinh(x, /):
    """Inverse hyperbolic sine, elementwise (:obj:`numpy.arcsinh`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> coosparse.asinh(x).to_dense()
    array([0.48121183, 0.        , 0.24746646])
    """
    return _apply(np.arcsinh, x)


def atan(x, /):
    """Inverse tangent, elementwise (:obj:`numpy.arctan`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> coosparse.atan(x).to_dense()
    array([0.46364761, 0.        , 0.24497866])
    """
    return _apply(np.arctan, x)


def atanh(x, /):
    """Inverse hyperbolic tangent, elementwise (:obj:`numpy.arctanh`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, -0.5]), (3,))
    >>> coosparse.atanh(x).to_dense()
    array([ 0.54930614,  0.        , -0.54930614])
    """
    return _apply(np.arctanh, x)


def bitwise_invert(x, /):
    """Bitwise NOT (``~x``), elementwise (:obj:`numpy.invert`).

    The fill of a fill-0 integer array becomes -1.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([1, 6]), (3,))
    >>> coosparse.bitwise_invert(x).to_dense()
    array([-2, -1, -7])
    """
    return _apply(np.invert, x)


def ceil(x, /):
    """Ceiling, elementwise (:obj:`numpy.ceil`).

    Integer dtypes are kept (as NumPy 2).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, -1.5]), (3,))
    >>> coosparse.ceil(x).to_dense()
    array([ 1.,  0., -1.])
    """
    return _apply(np.ceil, x)


def conj(x, /):
    """Complex conjugate, elementwise (:obj:`numpy.conjugate`).

    Linear: acts on the stored entries, so an uncoalesced array keeps its layout and flags.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([1 + 2j, 3 - 1j]), (3,))
    >>> coosparse.conj(x).to_dense()
    array([1.-2.j, 0.+0.j, 3.+1.j])
    """
    return _apply(np.conjugate, x)


def cos(x, /):
    """Cosine, elementwise (:obj:`numpy.cos`).

    The fill of a fill-0 array becomes 1.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> coosparse.cos(x).to_dense()
    array([0.87758256, 1.        , 0.96891242])
    """
    return _apply(np.cos, x)


def cosh(x, /):
    """Hyperbolic cosine, elementwise (:obj:`numpy.cosh`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> coosparse.cosh(x).to_dense()
    array([1.12762597, 1.        , 1.0314131 ])
    """
    return _apply(np.cosh, x)


def exp(x, /):
    """Exponential, elementwise (:obj:`numpy.exp`).

    The fill of a fill-0 array becomes 1 (SPEC 8).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> coosparse.exp(x).to_dense()
    array([1.64872127, 1.        , 1.28402542])
    """
    return _apply(np.exp, x)


def expm1(x, /):
    """``exp(x) - 1``, accurate near 0, elementwise (:obj:`numpy.expm1`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> coosparse.expm1(x).to_dense()
    array([0.64872127, 0.        , 0.28402542])
    """
    return _apply(np.expm1, x)


def floor(x, /):
    """Floor, elementwise (:obj:`numpy.floor`).

    Integer dtypes are kept (as NumPy 2).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, -1.5]), (3,))
    >>> coosparse.floor(x).to_dense()
    array([ 0.,  0., -2.])
    """
    return _apply(np.floor, x)


def imag(x, /):
    """Imaginary part, elementwise (:obj:`numpy.imag`).

    Real dtypes give zeros of their dtype. Linear: acts on the stored entries.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([1 + 2j, 3 - 1j]), (3,))
    >>> coosparse.imag(x).to_dense()
    array([ 2.,  0., -1.])
    """
    return _apply(np.imag, x)


def isfinite(x, /):
    """Test for finite values (bool result), elementwise (:obj:`numpy.isfinite`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([np.inf, 1.0]), (3,))
    >>> coosparse.isfinite(x).to_dense()
    array([False,  True,  True])
    """
    return _apply(np.isfinite, x)


def isinf(x, /):
    """Test for infinities (bool result), elementwise (:obj:`numpy.isinf`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([np.inf, 1.0]), (3,))
    >>> coosparse.isinf(x).to_dense()
    array([ True, False, False])
    """
    return _apply(np.isinf, x)


def isnan(x, /):
    """Test for NaN (bool result), elementwise (:obj:`numpy.isnan`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([np.nan, 1.0]), (3,))
    >>> coosparse.isnan(x).to_dense()
    array([ True, False, False])
    """
    return _apply(np.isnan, x)


def log(x, /):
    """Natural logarithm, elementwise (:obj:`numpy.log`).

    log(0) is -inf: a fill-0 array gives fill -inf.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([1.0, 4.0]), (3,))
    >>> coosparse.log(x).to_dense()
    array([0.        ,       -inf, 1.38629436])
    """
    return _apply(np.log, x)


def log1p(x, /):
    """``log(1 + x)``, accurate near 0, elementwise (:obj:`numpy.log1p`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([1.0, 4.0]), (3,))
    >>> coosparse.log1p(x).to_dense()
    array([0.69314718, 0.        , 1.60943791])
    """
    return _apply(np.log1p, x)


def log2(x, /):
    """Base-2 logarithm, elementwise (:obj:`numpy.log2`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([1.0, 4.0]), (3,))
    >>> coosparse.log2(x).to_dense()
    array([  0., -inf,   2.])
    """
    return _apply(np.log2, x)


def log10(x, /):
    """Base-10 logarithm, elementwise (:obj:`numpy.log10`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([10.0, 100.0]), (3,))
    >>> coosparse.log10(x).to_dense()
    array([  1., -inf,   2.])
    """
    return _apply(np.log10, x)


def logical_not(x, /):
    """Logical NOT (bool result), elementwise (:obj:`numpy.logical_not`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([True, False]), (3,))
    >>> coosparse.logical_not(x).to_dense()
    array([False,  True,  True])
    """
    return _apply(np.logical_not, x)


def negative(x, /):
    """Numerical negative (``-x``), elementwise (:obj:`numpy.negative`).

    Linear: acts on the stored entries, so an uncoalesced array keeps its layout and flags.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> coosparse.negative(x).to_dense()
    array([-0.5 ,  0.  , -0.25])
    """
    return _apply(np.negative, x)


def positive(x, /):
    """Numerical positive (``+x``), elementwise (:obj:`numpy.positive`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> coosparse.positive(x).to_dense()
    array([0.5 , 0.  , 0.25])
    """
    return _apply(np.positive, x)


def real(x, /):
    """Real part, elementwise (:obj:`numpy.real`).

    Real dtypes are returned unchanged. Linear: acts on the stored entries.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([1 + 2j, 3 - 1j]), (3,))
    >>> coosparse.real(x).to_dense()
    array([1., 0., 3.])
    """
    return _apply(np.real, x)


def reciprocal(x, /):
    """Reciprocal ``1 / x``, elementwise (:obj:`numpy.reciprocal`).

    The fill of a fill-0 array becomes inf.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([1.0, 4.0]), (3,))
    >>> coosparse.reciprocal(x).to_dense()
    array([1.  ,  inf, 0.25])
    """
    return _apply(np.reciprocal, x)


def sign(x, /):
    """Sign (``x / |x|`` for complex), elementwise (:obj:`numpy.sign`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([-2.0, 3.0]), (3,))
    >>> coosparse.sign(x).to_dense()
    array([-1.,  0.,  1.])
    """
    return _apply(np.sign, x)


def signbit(x, /):
    """Sign bit set (bool result), elementwise (:obj:`numpy.signbit`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([-2.0, 3.0]), (3,))
    >>> coosparse.signbit(x).to_dense()
    array([ True, False, False])
    """
    return _apply(np.signbit, x)


def sin(x, /):
    """Sine, elementwise (:obj:`numpy.sin`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> coosparse.sin(x).to_dense()
    array([0.47942554, 0.        , 0.24740396])
    """
    return _apply(np.sin, x)


def sinh(x, /):
    """Hyperbolic sine, elementwise (:obj:`numpy.sinh`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> coosparse.sinh(x).to_dense()
    array([0.52109531, 0.        , 0.25261232])
    """
    return _apply(np.sinh, x)


def sqrt(x, /):
    """Square root, elementwise (:obj:`numpy.sqrt`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([1.0, 4.0]), (3,))
    >>> coosparse.sqrt(x).to_dense()
    array([1., 0., 2.])
    """
    return _apply(np.sqrt, x)


def square(x, /):
    """Square, elementwise (:obj:`numpy.square`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> coosparse.square(x).to_dense()
    array([0.25  , 0.    , 0.0625])
    """
    return _apply(np.square, x)


def tan(x, /):
    """Tangent, elementwise (:obj:`numpy.tan`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> coosparse.tan(x).to_dense()
    array([0.54630249, 0.        , 0.25534192])
    """
    return _apply(np.tan, x)


def tanh(x, /):
    """Hyperbolic tangent, elementwise (:obj:`numpy.tanh`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> coosparse.tanh(x).to_dense()
    array([0.46211716, 0.        , 0.24491866])
    """
    return _apply(np.tanh, x)


def trunc(x, /):
    """Truncation toward zero, elementwise (:obj:`numpy.trunc`).

    Integer dtypes are kept (as NumPy 2).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, -1.5]), (3,))
    >>> coosparse.trunc(x).to_dense()
    array([ 0.,  0., -1.])
    """
    return _apply(np.trunc, x)


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
    """Floor division (``x1 // x2``), elementwise (:obj:`numpy.floor_divide`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x1 = coosparse.COO([[0, 2]], np.array([0.5, 0.25]), (3,))
    >>> x2 = coosparse.COO([[0, 1, 2]], np.array([2.0, 3.0, -1.0]), (3,))
    >>> coosparse.floor_divide(x1, x2).to_dense()
    array([ 0.,  0., -1.])
    """
    return _apply(np.floor_divide, x1, x2)


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


def round(x, /, *, decimals=0):
    """Round to the nearest integer (half to even), or to ``decimals`` places (:obj:`numpy.round`).

    ``decimals`` is a NumPy extension of the Array API signature. Integer
    dtypes are kept.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([0.5, 2.7]), (3,))
    >>> coosparse.round(x).to_dense()
    array([0., 0., 3.])
    """
    return _apply(np.round, x, decimals=decimals)


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
    from ._coo import COO

    out = x
    if min is not None:
        out = _apply(np.maximum, out, min)
    if max is not None:
        out = _apply(np.minimum, out, max)
    if out is x and not isinstance(x, COO):
        raise TypeError(f"clip: x must be a COO array; got {type(x).__name__}")
    if isinstance(x, COO) and out.dtype != x.dtype and out.dtype.kind == x.dtype.kind:
        out = out.astype(x.dtype, copy=False)
    return out


# ---- NumPy's elementwise functions that are not ufuncs (__array_function__) ------------------
_NOVALUE = getattr(np, "_NoValue", None)


def _refuse_out(name, out):
    if out is not None:
        raise TypeError(f"numpy.{name} with out= is not supported for coosparse.COO arrays: a COO is "
                        "immutable; use the returned array")


@implements(np.round, np.around)
def _np_round(a, decimals=0, out=None):
    _refuse_out("round", out)
    return round(a, decimals=decimals)


@implements(np.clip)
def _np_clip(a, a_min=_NOVALUE, a_max=_NOVALUE, out=None, *, min=_NOVALUE, max=_NOVALUE, **kwargs):
    _refuse_out("clip", out)
    if kwargs:
        raise TypeError(f"numpy.clip: keyword(s) {sorted(kwargs)} not supported for coosparse.COO arrays")
    lo = min if min is not _NOVALUE else (None if a_min is _NOVALUE else a_min)
    hi = max if max is not _NOVALUE else (None if a_max is _NOVALUE else a_max)
    return clip(a, lo, hi)


@implements(np.real)
def _np_real(val):
    return real(val)


@implements(np.imag)
def _np_imag(val):
    return imag(val)


@implements(np.angle)
def _np_angle(z, deg=False):
    return _apply(np.angle, z, deg=deg)


@implements(np.fix)
def _np_fix(x, out=None):
    _refuse_out("fix", out)
    return _apply(np.fix, x)


@implements(np.isposinf)
def _np_isposinf(x, out=None):
    _refuse_out("isposinf", out)
    return _apply(np.isposinf, x)


@implements(np.isneginf)
def _np_isneginf(x, out=None):
    _refuse_out("isneginf", out)
    return _apply(np.isneginf, x)


@implements(np.isreal)
def _np_isreal(x):
    return _apply(np.isreal, x)


@implements(np.iscomplex)
def _np_iscomplex(x):
    return _apply(np.iscomplex, x)


@implements(np.nan_to_num)
def _np_nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    return _apply(np.nan_to_num, x, nan=nan, posinf=posinf, neginf=neginf)


@implements(np.isclose)
def _np_isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _apply(np.isclose, a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


