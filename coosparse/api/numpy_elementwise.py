"""NumPy's elementwise functions that are not ufuncs, for ``__array_function__`` (``np.round(a)``,
``np.clip(a, ...)``, ``np.real(a)``, ...): each runs the elementwise engine.
"""
from __future__ import annotations

import numpy as np

from .._core.coo import COO
from .._core.dispatch import implements
from .binary import _clamp
from .unary import _apply, imag, real, round


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
    if a_min is _NOVALUE and a_max is _NOVALUE:  # numpy.clip's rules for the two spellings of the bounds
        lo = None if min is _NOVALUE else min
        hi = None if max is _NOVALUE else max
    elif a_min is _NOVALUE or a_max is _NOVALUE:
        raise TypeError(f"clip() missing 1 required positional argument: {'a_min' if a_min is _NOVALUE else 'a_max'!r}")
    elif min is not _NOVALUE or max is not _NOVALUE:
        raise ValueError("Passing `min` or `max` keyword argument when `a_min` and `a_max` are provided is forbidden.")
    else:
        lo, hi = a_min, a_max
    dt = getattr(a, "dtype", None)
    if dt is not None and dt.kind in "iu":
        # NumPy's rule (NEP 50, no value-based promotion): a Python int bound beyond the dtype's range
        # bounds nothing
        info = np.iinfo(dt)
        lo = None if type(lo) is int and lo <= info.min else lo
        hi = None if type(hi) is int and hi >= info.max else hi
    if lo is None and hi is None:
        return _apply(np.positive, a)
    # NumPy's dtype promotion (np.clip(float16, float32 bound) is float32); coosparse.clip is the Array API's
    out = _clamp(a, lo, hi)
    if lo is not None and hi is not None:
        # NumPy promotes the three operands at once; two steps can widen further (int8 with uint8 is int16,
        # then with float16 float32, where all three give float16). The result is one of the operands'
        # elements, so casting it to NumPy's dtype (a monotone cast) gives NumPy's values.
        try:
            want = np.result_type(*[v.dtype if isinstance(v, COO) else v for v in (a, lo, hi)])
        except TypeError:
            want = out.dtype
        if out.dtype != want:
            out = out.astype(want)
    return out


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


@implements(np.real_if_close)
def _np_real_if_close(a, tol=100):
    if a.dtype.kind != "c":
        return a
    if tol > 1:  # NumPy's rule: a tolerance above 1 counts machine epsilons
        tol = tol * np.finfo(a.dtype).eps
    return real(a) if bool(np.all(np.absolute(imag(a)) < tol)) else a


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
    # rtol and atol as operands: arrays of them broadcast against a and b, as in NumPy
    return _apply(np.isclose, a, b, rtol, atol, equal_nan=equal_nan)
