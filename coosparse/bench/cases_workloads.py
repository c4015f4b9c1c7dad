"""coalesce on the other built-in workloads: the R-MAT power-law graph and the 3-D array.

The uniform workload has few duplicates; a Graph500 R-MAT graph has many,
concentrated on a few heavy rows, and the 3-D array exercises n-d linear
indices. Peers and their adapters are :mod:`cases_coalesce`'s: torch's
``coalesce``, scipy's ``sum_duplicates`` and pydata/sparse.
"""
from __future__ import annotations

from . import cases_coalesce, workloads

OPS = ["coalesce"]


def cases(size="medium", libraries=None, device="cpu"):
    g = workloads.rmat(size)
    t = workloads.tensor3d(size)
    return [cases_coalesce.case(g, f"R-MAT scale {workloads.RMAT_SCALE[size]}, {g.nnz:,} edges", libraries,
                                device=device),
            cases_coalesce.case(t, f"3-D {'x'.join(map(str, t.shape))}, {t.nnz:,}", libraries, device=device)]
