"""The elementwise functions of one argument of the Array API standard (2024.12) on COO arrays.

Each function is the NumPy function named in its docstring run by the
elementwise engine (``coosparse/ops/elementwise/engine.py``): the result's fill is the
function of the operands' fills, its pattern follows the rule of SPEC 9
(intersection where fills annihilate, else the union, see the NumPy users
page), duplicates are summed first (except for linear functions), operands
broadcast like NumPy arrays and dtypes promote as NumPy's (NEP 50 for Python
scalars). Binary functions take one Python scalar beside a COO, and dense
arrays (a dense result where the dense operand fills the background).
``add``, ``subtract`` and ``multiply`` live with the union and intersection
algorithms (``coosparse/ops/elementwise/arithmetic.py``); the functions of two
arguments are in :mod:`.binary`.
"""
from __future__ import annotations

import numpy as np

from ..ops.elementwise.engine import elementwise


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
    >>> coosparse.conj(x).to_dense()  # the fill is conj(0j) = 0-0j, as NumPy's conj of the dense array
    array([1.-2.j, 0.-0.j, 3.+1.j])
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
    >>> coosparse.negative(x).to_dense()  # the fill is -0.0, as NumPy's negative of the dense array
    array([-0.5 , -0.  , -0.25])
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
