"""Shapes: normalising a shape argument, exact element counts, and the checks of computed shapes.

Sizes are Python ints (exact): a shape's element count may exceed 2**63 (SPEC 2's
wide keys handle it). What cannot exist is an *index* of 2**63 or more (indices are
int64), so an operation that computes a new shape (pad, kron, tile, repeat,
reshape, concatenate, outer, einsum, broadcasting, eye) passes it through
:func:`checked_shape`, which refuses a dimension whose indices would not fit int64
instead of letting int64 arithmetic wrap; and an operation that knows the number
of entries of its result before computing them checks it with
:func:`check_entries`, which refuses at once (``MemoryError`` naming the sizes) a
result that no memory of this machine could hold.
"""
from __future__ import annotations

import numbers
import operator

import numpy as np

from .._kernels.bounds import check_size

MAX_DIM = 2**63
"""The largest dimension: its indices 0 .. 2**63 - 1 are int64 values; a larger one would wrap."""


def as_shape(shape):
    """``shape`` as a tuple of non-negative ints; an int (or 0-d array) is a 1-d shape, as in NumPy."""
    if type(shape) is not tuple and (
            isinstance(shape, numbers.Integral) or (isinstance(shape, np.ndarray) and shape.ndim == 0)):
        shape = (shape,)
    try:
        dims = tuple(map(operator.index, shape))  # (every result makes its shape here: map is 3x a generator)
    except TypeError:
        raise TypeError(f"shape must be a sequence of integers; got {shape!r}") from None
    if dims and min(dims) < 0:
        d = next(d for d, n in enumerate(dims) if n < 0)
        raise ValueError(f"shape must be non-negative; dimension {d} has size {dims[d]}")
    return dims


def prod(dims):
    """Exact product of ``dims`` (a Python int; 1 for no dimension)."""
    p = 1
    for n in dims:
        p *= int(n)
    return p


def checked_shape(dims, op, like=None):
    """The computed shape ``dims`` (exact Python ints) as a tuple, refused when int64 indices cannot address it.

    A dimension may be as large as 2**63 (its last index, 2**63 - 1, is the
    largest int64); a larger one raises ``ValueError`` naming ``op``, the
    dimension and its size. A dimension equal to the same position of
    ``like`` (the input's shape) is carried over unchanged and not checked:
    its indices are the input's own. The element count is not limited:
    shapes of 2**63 elements and more are legal (SPEC 2's wide keys).

    Examples
    --------
    >>> from coosparse._core.shapes import checked_shape
    >>> checked_shape([2**62, 2**40], "kron")
    (4611686018427387904, 1099511627776)
    >>> checked_shape([3 * 2**62], "pad")
    Traceback (most recent call last):
    ...
    ValueError: pad: dimension 0 of the result would have size 13835058055282163712, more than 2**63: its indices would not fit int64
    """
    out = tuple(operator.index(n) for n in dims)
    like = tuple(like) if like is not None else ()
    for d, n in enumerate(out):
        if d < len(like) and like[d] == n:
            continue
        if n < 0:
            raise ValueError(f"{op}: dimension {d} of the result would have the negative size {n}")
        if n > MAX_DIM:
            raise ValueError(f"{op}: dimension {d} of the result would have size {n}, more than 2**63: "
                             "its indices would not fit int64")
    return out


def check_entries(count, op, entry_bytes, what="entries"):
    """Refuse at once a result of ``count`` entries of ``entry_bytes`` bytes each that cannot be held.

    ``MemoryError`` naming ``op``, the count and the bytes when the count is
    2**63 or more (no int64 position reaches it) or the bytes exceed this
    machine's physical memory (a GPU's memory is smaller still: its allocator
    refuses what passes here). Called before anything is allocated, so a
    request for 10**10 entries fails in microseconds, not after a counting
    pass or an allocation that the operating system would grant lazily. (The
    kernel layers use the same check, :func:`coosparse._kernels.bounds.check_size`.)

    Examples
    --------
    >>> from coosparse._core.shapes import check_entries
    >>> check_entries(10**6, "tile", 16)
    >>> check_entries(2**70, "tile", 16)
    Traceback (most recent call last):
    ...
    MemoryError: tile: the result would hold 1180591620717411303424 entries (1.76e+13 GiB), more than 2**63
    """
    check_size(count, entry_bytes, op, what)


def numpy_intp(obj, casting):
    """An integer argument of one of NumPy's C functions (``repeat``'s counts, ``take``'s indices)
    read as NumPy reads it: an array (NumPy's or a device's) is cast to intp under ``casting``
    (TypeError otherwise, as NumPy's; bools become 0/1, integer arrays are returned as they are);
    anything else converts element by element as ``np.array(obj, dtype=np.intp)`` does, with
    ``int()`` (2.5 -> 2, NaN ValueError, inf OverflowError).
    """
    dtype = getattr(obj, "dtype", None)
    if dtype is None or isinstance(obj, np.generic):  # (NumPy scalars convert as Python numbers do)
        return np.array(obj, dtype=np.intp)
    if not np.can_cast(dtype, np.intp, casting=casting):
        raise TypeError(f"Cannot cast array data from {dtype!r} to {np.dtype(np.intp)!r} "
                        f"according to the rule {casting!r}")
    return obj if dtype.kind in "iu" else obj.astype(np.intp)
