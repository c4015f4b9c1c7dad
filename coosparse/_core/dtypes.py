"""The dtypes coosparse supports, and how each one accumulates.

Integers (and bool) are summed in int64: two's-complement sums are modular, so
the result cast back to the narrow dtype is exactly what summing in that dtype
gives, and the kernels need one integer specialisation instead of nine.
float16 is summed in float32 (SPEC 3); float32, float64 and the complex types
in themselves, in the order SPEC 3 defines.
"""
from __future__ import annotations

import numpy as np

SUPPORTED_DTYPES = tuple(
    np.dtype(t)
    for t in (
        "bool", "int8", "int16", "int32", "int64",
        "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128",
    )
)


CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
"""NumPy's casting rules, by name."""


def check_casting(casting, op=None):
    """Raise NumPy's ValueError for a ``casting=`` that names none of :data:`CASTINGS`."""
    if casting not in CASTINGS:
        raise ValueError(f"{op + ': ' if op else ''}casting must be one of 'no', 'equiv', 'safe', 'same_kind', "
                         f"'unsafe' (got {casting!r})")


def check_dtype(dtype, what="values"):
    """Return ``np.dtype(dtype)`` or raise TypeError if coosparse does not support it."""
    dt = np.dtype(dtype)
    if not dt.isnative and dt.newbyteorder("=") in SUPPORTED_DTYPES:
        raise TypeError(
            f"{what} dtype {dt.str} has non-native byte order; coosparse computes in native byte "
            f"order: use {dt.newbyteorder('=').name} (arrays are converted with .astype)"
        )
    if dt not in SUPPORTED_DTYPES:
        names = ", ".join(d.name for d in SUPPORTED_DTYPES)
        raise TypeError(f"{what} dtype {dt} is not supported; supported dtypes: {names}")
    return dt


def unmasked(a):
    """``a`` itself; a masked array (``numpy.ma``) is refused with TypeError.

    Computing on a masked array's data would drop its mask silently, and
    ``np.asarray`` drops it too, so this check comes before any conversion.
    """
    if isinstance(a, np.ma.MaskedArray):
        raise TypeError(
            "numpy.ma masked arrays are not supported (the mask would be lost): pass x.filled(value) "
            "for the masked elements' value, or x.data to ignore the mask"
        )
    return a


def native(a):
    """``a`` itself, or a native-byte-order copy when its dtype is byte-swapped (e.g. big-endian).

    Every array entering coosparse (COO values, dense operands, scatter targets
    and sources) passes here, so byte order never reaches a kernel. A masked
    array is refused (:func:`unmasked`).
    """
    dt = getattr(unmasked(a), "dtype", None)
    if dt is None or dt.isnative:
        return a
    return a.astype(dt.newbyteorder("="))


def accumulation_dtype(dtype):
    """dtype in which sums of ``dtype`` values are computed by the kernels."""
    dt = np.dtype(dtype)
    if dt.kind in "biu":
        return np.dtype(np.int64)
    if dt == np.float16:
        return np.dtype(np.float32)
    return dt


def to_accumulation(values):
    """View or cast ``values`` into its accumulation dtype (no copy when it already is)."""
    acc = accumulation_dtype(values.dtype)
    if values.dtype == acc:
        return values
    if values.dtype == np.uint64:
        return values.view(np.int64)  # same bits, modular sums agree
    return values.astype(acc)


def from_accumulation(sums, dtype):
    """Cast accumulated sums back to ``dtype`` (bool: any non-zero is True)."""
    dt = np.dtype(dtype)
    if sums.dtype == dt:
        return sums
    if dt == np.bool_:
        return sums != 0
    if dt == np.uint64:
        return sums.view(np.uint64)
    return sums.astype(dt)


def cast_keeps_sums(src, dst):
    """True when casting each duplicate to ``dst`` and summing there gives the cast of their sum.

    Duplicates mean their sum in the array's own dtype (SPEC 1), so a cast
    may keep them apart only when it commutes with that sum: the same dtype;
    an integer cast to an integer no wider (both sums wrap modulo the narrower
    width); float32/float64 to complex64/complex128 and back (the real part:
    complex sums are sums of their parts in the same float dtype). Every other
    cast (to bool, float to int, widening an integer or a float, anything from
    bool or float16) must see the summed duplicates.
    """
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return True
    if src.kind in "iu" and dst.kind in "iu":
        return dst.itemsize <= src.itemsize
    pairs = {(np.dtype(np.float32), np.dtype(np.complex64)), (np.dtype(np.float64), np.dtype(np.complex128))}
    return (src, dst) in pairs or (dst, src) in pairs


def result_type(*args):
    """NumPy's promotion rule, restricted to supported dtypes."""
    dt = np.result_type(*args)
    return check_dtype(dt, "result")
