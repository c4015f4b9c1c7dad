"""The linalg family (SPEC 10): the batched contraction every product reduces to (:mod:`.core`),
the products (:mod:`.products`) and einsum (:mod:`.einsum`).
"""
from . import core, products, einsum  # noqa: F401
