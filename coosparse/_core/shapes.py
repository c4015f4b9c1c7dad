"""Shapes: normalising a shape argument, and exact element counts.

Sizes are Python ints (exact): a shape's element count may exceed 2**63.
"""
from __future__ import annotations

import numbers
import operator

import numpy as np


def as_shape(shape):
    """``shape`` as a tuple of non-negative ints; an int (or 0-d array) is a 1-d shape, as in NumPy."""
    if isinstance(shape, numbers.Integral) or (isinstance(shape, np.ndarray) and shape.ndim == 0):
        shape = (shape,)
    try:
        dims = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"shape must be a sequence of integers; got {shape!r}") from None
    for d, n in enumerate(dims):
        if n < 0:
            raise ValueError(f"shape must be non-negative; dimension {d} has size {n}")
    return dims


def prod(dims):
    """Exact product of ``dims`` (a Python int; 1 for no dimension)."""
    p = 1
    for n in dims:
        p *= int(n)
    return p
