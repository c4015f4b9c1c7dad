"""Layer 2: the operations, one module (or package) per family.

Families in dependency order (a family imports only the ones before it, and the
layers below: ``coosparse._core`` and ``coosparse._kernels``): coalesce,
scatter (strided), dense, device (asarray), broadcast, elementwise (operands,
intersect, union, engine, arithmetic), shape, indexing, search, join, rearrange,
reduce, linalg, random. Importing this package imports them all, which fills the
tables ``COO`` reaches its operations through (``coosparse._core.dispatch``).
"""
from . import coalesce, scatter, dense, device, broadcast  # noqa: F401
from . import elementwise, shape, indexing, search, join, rearrange, reduce, linalg, random  # noqa: F401
