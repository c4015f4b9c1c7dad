"""The Array API's dtypes and data-type functions (astype, can_cast, finfo, iinfo, isdtype,
result_type).

The dtype objects are NumPy's scalar types (as in NumPy's own namespace and in
pydata/sparse), so ``a.dtype == coosparse.float64`` holds for every COO.
"""
from __future__ import annotations

import builtins

import numpy as np

from .._core import dtypes as _dtypes
from .._core.coo import COO
from .._core.dispatch import implements

# ---------------------------------------------------------------------------------- dtypes
bool = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128


_KINDS = {
    "bool": ("b",),
    "signed integer": ("i",),
    "unsigned integer": ("u",),
    "integral": ("i", "u"),
    "real floating": ("f",),
    "complex floating": ("c",),
    "numeric": ("i", "u", "f", "c"),
}

_NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64", "complex64", "complex128")


def _dtype_of(x):
    """np.dtype of a dtype-like or of an array (COO, NumPy, CuPy)."""
    if isinstance(x, COO) or hasattr(x, "dtype") and not isinstance(x, (type, np.dtype)):
        return np.dtype(x.dtype)
    return np.dtype(x)


# ---------------------------------------------------------------------------------- data-type functions
def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` with values cast to ``dtype`` (Array API ``astype``); fill cast the same way.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> coosparse.astype(coosparse.asarray(np.array([1.5, 0.0])), coosparse.int64).to_dense()
    array([1, 0])
    """
    if not isinstance(x, COO):
        raise TypeError(f"astype expects a COO array; got {type(x).__name__}")
    out = x.astype(dtype, copy=copy)
    return out if device is None else out.to(device)


def can_cast(from_, to, /):
    """True when ``from_`` (a dtype or array) casts to ``to`` under the promotion rules.

    Examples
    --------
    >>> import coosparse
    >>> coosparse.can_cast(coosparse.int8, coosparse.int32), coosparse.can_cast(coosparse.float64, coosparse.int8)
    (True, False)
    """
    return builtins.bool(np.can_cast(_dtype_of(from_), np.dtype(to), casting="safe"))


class finfo_object:
    """Machine limits of a floating dtype with Python-float attributes (Array API ``finfo``)."""

    def __init__(self, dtype):
        fi = np.finfo(dtype)
        self.bits = int(fi.bits)
        self.eps = float(fi.eps)
        self.max = float(fi.max)
        self.min = float(fi.min)
        self.smallest_normal = float(fi.smallest_normal)
        self.dtype = np.dtype(fi.dtype)

    def __repr__(self):
        return f"finfo(bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, dtype={self.dtype})"


def finfo(type, /):
    """Limits of a floating or complex dtype (or of an array's dtype).

    Examples
    --------
    >>> import coosparse
    >>> coosparse.finfo(coosparse.float32).bits
    32
    """
    dt = _dtype_of(type)
    if dt.kind not in "fc":
        raise ValueError(f"finfo takes a floating or complex dtype; got {dt}")
    return finfo_object(dt)


def iinfo(type, /):
    """Limits of an integer dtype (or of an array's dtype): NumPy's ``iinfo``.

    Examples
    --------
    >>> import coosparse
    >>> coosparse.iinfo(coosparse.int8).max
    127
    """
    dt = _dtype_of(type)
    if dt.kind not in "iu":
        raise ValueError(f"iinfo takes an integer dtype; got {dt}")
    return np.iinfo(dt)


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind``: a dtype, a kind name or a tuple of them (Array API).

    Examples
    --------
    >>> import coosparse
    >>> coosparse.isdtype(coosparse.float32, ("integral", "real floating"))
    True
    """
    dt = np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"unknown dtype kind {k!r}; kinds: {', '.join(_KINDS)}")
            if dt.kind in _KINDS[k]:
                return True
        elif dt == np.dtype(k):
            return True
    return False


def result_type(*arrays_and_dtypes):
    """The dtype NumPy's promotion gives for arrays (COO included), dtypes and Python scalars.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> coosparse.result_type(coosparse.asarray(np.array([1], dtype=np.int8)), coosparse.int16)
    dtype('int16')
    """
    if not arrays_and_dtypes:
        raise ValueError("at least one array or dtype is required")
    args = [a.dtype if isinstance(a, COO) else a for a in arrays_and_dtypes]
    return _dtypes.result_type(*args)


@implements(np.result_type)
def np_result_type(*arrays_and_dtypes):
    return result_type(*arrays_and_dtypes)


if hasattr(np, "astype"):  # NumPy >= 2.1
    @implements(np.astype)
    def np_astype(x, dtype, /, *, copy=True, device=None):
        return astype(x, dtype, copy=copy, device=device)


@implements(np.can_cast)
def np_can_cast(from_, to, casting="safe"):
    return builtins.bool(np.can_cast(_dtype_of(from_), np.dtype(to), casting=casting))


@implements(np.may_share_memory, np.shares_memory)
def np_may_share_memory(a, b, max_work=None):
    """True when the components (indices, values) of ``a`` and ``b`` may overlap in memory."""
    def parts(x):
        return [x.indices, x.values] if isinstance(x, COO) else [x]

    return builtins.any(np.may_share_memory(p, q) for p in parts(a) for q in parts(b)
                        if isinstance(p, np.ndarray) and isinstance(q, np.ndarray))
