"""The reduce family (SPEC 9): argument handling and grouping (:mod:`.grouping`), the algorithms
(:mod:`.reductions`) and the public functions with NumPy's signatures (:mod:`.functions`).
"""
from . import grouping, reductions, functions  # noqa: F401
