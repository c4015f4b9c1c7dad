"""COO's Python operators: one table of NumPy ufuncs, methods generated over three hooks.

Every operator is the NumPy ufunc of the same meaning run by the elementwise
engine (SPEC 9). The methods are generated from :data:`BINARY`,
:data:`COMPARISONS` and :data:`UNARY` (as xarray's ``_typed_ops`` and NumPy's
``NDArrayOperatorsMixin`` do): ``__op__``, the reflected ``__rop__`` (operands
swapped) and the in-place ``__iop__`` (a new array of the left operand's shape
and dtype; a COO is immutable). They call the hooks the engine registers in
:data:`~coosparse._core.dispatch.OPERATIONS`: ``binary_operator(f, a, b)``
(NotImplemented for operand types it does not take; ``==`` and ``!=`` ask the
other operand or raise TypeError, never Python's identity answer), ``inplace_operator(f, a,
b)`` and ``unary_operator(f, a)``.
"""
from __future__ import annotations

import numpy as np

from .dispatch import OPERATIONS

BINARY = (
    ("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("truediv", np.true_divide),
    ("floordiv", np.floor_divide), ("mod", np.remainder), ("pow", np.power), ("and", np.bitwise_and),
    ("or", np.bitwise_or), ("xor", np.bitwise_xor), ("lshift", np.left_shift), ("rshift", np.right_shift),
)
"""(name, ufunc): ``__name__``, ``__rname__`` and ``__iname__``."""

BINARY_NO_INPLACE = (("divmod", np.divmod),)
"""(name, ufunc): ``__name__`` and ``__rname__`` only (Python has no in-place divmod)."""

COMPARISONS = (
    ("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
    ("gt", np.greater), ("ge", np.greater_equal),
)
"""(name, ufunc): comparisons return COO arrays (so a COO is unhashable, like a NumPy array)."""

UNARY = (("neg", np.negative), ("pos", np.positive), ("abs", np.absolute), ("invert", np.invert))


def _binary(f, name):
    def method(self, other):
        return OPERATIONS.binary_operator(f, self, other)
    method.__name__ = method.__qualname__ = f"__{name}__"
    method.__doc__ = f"``numpy.{f.__name__}(self, other)``: see the NumPy users page."
    return method


def _reflected(f, name):
    def method(self, other):
        return OPERATIONS.binary_operator(f, other, self)
    method.__name__ = method.__qualname__ = f"__r{name}__"
    method.__doc__ = f"``numpy.{f.__name__}(other, self)``: see the NumPy users page."
    return method


def _inplace(f, name):
    def method(self, other):
        return OPERATIONS.inplace_operator(f, self, other)
    method.__name__ = method.__qualname__ = f"__i{name}__"
    method.__doc__ = (f"``numpy.{f.__name__}(self, other)`` as a new array of this array's shape and dtype "
                      "(same_kind casting); the array itself never changes.")
    return method


def _unary(f, name):
    def method(self):
        return OPERATIONS.unary_operator(f, self)
    method.__name__ = method.__qualname__ = f"__{name}__"
    method.__doc__ = f"``numpy.{f.__name__}(self)``."
    return method


def _power(f, name, reflected):
    # pow(a, b, modulo): three-argument pow is not an elementwise ufunc
    def method(self, other, modulo=None):
        if modulo is not None:
            return NotImplemented
        return OPERATIONS.binary_operator(f, other, self) if reflected else OPERATIONS.binary_operator(f, self, other)
    method.__name__ = method.__qualname__ = f"__{'r' if reflected else ''}{name}__"
    method.__doc__ = f"``numpy.{f.__name__}``; three-argument ``pow`` is not supported."
    return method


class OperatorsMixin:
    """The operator methods of :class:`~coosparse.COO` (generated below from the tables)."""

    __slots__ = ()
    __hash__ = None  # comparisons return arrays


def _install(cls):
    for name, f in BINARY:
        if name == "pow":
            setattr(cls, "__pow__", _power(f, name, False))
            setattr(cls, "__rpow__", _power(f, name, True))
        else:
            setattr(cls, f"__{name}__", _binary(f, name))
            setattr(cls, f"__r{name}__", _reflected(f, name))
        setattr(cls, f"__i{name}__", _inplace(f, name))
    for name, f in BINARY_NO_INPLACE:
        setattr(cls, f"__{name}__", _binary(f, name))
        setattr(cls, f"__r{name}__", _reflected(f, name))
    for name, f in COMPARISONS:
        setattr(cls, f"__{name}__", _binary(f, name))
    for name, f in UNARY:
        setattr(cls, f"__{name}__", _unary(f, name))


_install(OperatorsMixin)
