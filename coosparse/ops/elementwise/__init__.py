"""The elementwise family (SPEC 4, 8, 9): operand checks (:mod:`.operands`), the intersection
and union algorithms (:mod:`.intersect`, :mod:`.union`), the fill rule (:mod:`.fillrule`), the standard's
special cases where NumPy differs (:mod:`.standard`), the
engine that runs any ufunc (:mod:`.engine`) and the arithmetic entry points (:mod:`.arithmetic`),
in dependency order.
"""
from . import operands, intersect, union, fillrule, standard, engine, arithmetic  # noqa: F401
