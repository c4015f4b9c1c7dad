"""Fill values (SPEC 8): the value of every index that stores nothing.

One place for the fill rules that every operation calls: how a fill is stored
(a NumPy scalar of the array's dtype, on the host for every device), how it is
compared, and how an operation that needs fill 0 refuses anything else.
"""
from __future__ import annotations

import warnings

import numpy as np

from .._kernels.backend import is_device_array


def fill_scalar(fill_value, dtype):
    """``fill_value`` as a NumPy scalar of ``dtype``; None means 0.

    The value must be representable in ``dtype``: ``fill_value=0.5`` for an
    integer array, a complex value with an imaginary part for a real array,
    or a finite value that overflows a float dtype raise ``ValueError``
    instead of silently changing. Floats round to the dtype's nearest value
    (``0.1`` in float32), as ``numpy.full`` does.
    """
    dt = np.dtype(dtype)
    if fill_value is None or (type(fill_value) is int and fill_value == 0):  # (0 in every dtype; 10x faster)
        return dt.type(0)
    if isinstance(fill_value, np.generic) and fill_value.dtype == dt:
        return fill_value  # already a scalar of the dtype (the common case of results)
    if hasattr(fill_value, "get") and is_device_array(fill_value):
        fill_value = fill_value.get()  # synchronize! (a device scalar: read once, at construction)
    f = np.asarray(fill_value)
    if f.dtype == object and isinstance(fill_value, int) and not isinstance(fill_value, bool):
        # a Python int past 64 bits (NumPy holds it as an object): no integer dtype holds it; a
        # float dtype rounds it, as np.full does (and refuses it past its range, below)
        try:
            rounded = float(fill_value) if dt.kind in "fc" else None
        except OverflowError:  # past float64's range
            rounded = None
        if rounded is None:
            raise ValueError(f"fill_value {fill_value!r} is not representable in dtype {dt}")
        f = np.asarray(rounded)
    if f.ndim != 0:
        raise ValueError(f"fill_value must be a scalar; got an array of shape {f.shape}")
    if f.dtype == object or f.dtype.kind not in "biufc":
        raise TypeError(f"fill_value must be a number or bool; got {fill_value!r}")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex -> real: the imaginary part is checked below
        cast = f.astype(dt)
        if f.dtype.kind == "c" and dt.kind != "c" and bool(f.imag != 0):
            same = False
        elif dt.kind in "fc":
            # floats round to the nearest value of the dtype, as np.full does; overflow is refused
            same = bool(np.isfinite(cast)) or not bool(np.isfinite(f))
        else:
            back = cast.astype(f.dtype) if f.dtype.kind != "b" else cast.astype(bool)
            # both ways: the round trip misses a wrap of the sign bit (2**63 -> int64 -> uint64 is 2**63)
            same = bool(back == f and cast == f)
    if not same:
        raise ValueError(f"fill_value {fill_value!r} is not representable in dtype {dt}")
    return dt.type(cast[()])


def is_zero(fill):
    """True when ``fill`` is zero (False, 0, 0.0, -0.0, 0j): the fill every fast path assumes.
    (NaN compares unequal to 0, in any part of a complex value: one comparison says it all.)"""
    return bool(fill == 0)


def zero_bits(fill):
    """True when ``fill``'s bits are all zero (0, False, +0.0, 0j): what a gather of "nothing" reads.

    Not for -0.0, which equals 0 but has its sign bit set: where an operation
    substitutes zero bits for the fill, a fill of -0.0 must be written itself.
    """
    f = np.asarray(fill)
    return not f.tobytes().strip(b"\x00")


def _isnan(x):
    return np.asarray(x).dtype.kind in "fc" and bool(np.isnan(x))


def equal(f, g):
    """Fill values compare equal (NaN equals NaN: they mean the same background; part by part for
    complex values, so nan+1j is not nan+5j)."""
    f, g = np.asarray(f)[()], np.asarray(g)[()]
    if np.iscomplexobj(f) or np.iscomplexobj(g):
        return equal(f.real, g.real) and equal(f.imag, g.imag)
    if _isnan(f) or _isnan(g):
        return _isnan(f) and _isnan(g)
    return bool(f == g)


def differs(xp, values, fill, zero_sign=True):
    """Elementwise: ``values`` is not the fill bit for bit, as far as meaning goes.

    NaN equals a NaN fill (any payload); -0.0 differs from a fill of +0.0 and
    the other way round (the sign of zero is part of the dense meaning; not
    with ``zero_sign=False``), part by part for complex values (a fill of
    ``nan+0j`` differs from ``nan+5j``).
    """
    if values.dtype.kind not in "fc":
        return values != fill
    fill = np.asarray(fill)[()]
    parts = ((values.real, fill.real), (values.imag, fill.imag)) if values.dtype.kind == "c" else ((values, fill),)
    out = None
    for v, f in parts:
        if np.isnan(f):
            d = ~xp.isnan(v)
        else:
            d = v != f
            if zero_sign and f == 0:  # (a zero equal to the fill with the other sign)
                d |= xp.signbit(v) != bool(np.signbit(f))
        out = d if out is None else out | d
    return out


def require_zero_fill(op, *arrays):
    """Raise ValueError naming ``op`` and the fill when an operand's fill is not zero."""
    for a in arrays:
        fill = getattr(a, "fill_value", None)
        if fill is not None and not is_zero(fill):
            raise ValueError(
                f"{op} needs arrays whose fill_value is 0; got fill_value {fill!r} "
                "(convert with .to_dense(), or build the array with fill_value=0)"
            )
