"""coalesce on the other built-in workloads: the R-MAT power-law graph and the 3-D array.

The uniform workload has few duplicates; a Graph500 R-MAT graph has many,
concentrated on a few heavy rows, and the 3-D array exercises n-d linear
indices. Peers: torch's ``coalesce``, scipy's ``sum_duplicates`` (n-d COO
since scipy 1.15; in place, so construction is counted) and pydata/sparse,
whose ``COO`` constructor is its coalesce (it canonicalises every array).

The peer adapters mirror ``cases_coalesce`` (which times the uniform
workload); the two can merge once that module takes its data from
:mod:`coosparse.bench.workloads`.
"""
from __future__ import annotations

from . import workloads
from .harness import Case, Impl

OPS = ["coalesce"]


def _impls(a, libraries):
    want = (lambda lib: libraries is None or lib in libraries)
    impls = [Impl("coosparse", lambda: a.coalesce())]
    if want("torch"):
        try:
            import torch

            t = torch.sparse_coo_tensor(torch.from_numpy(a.indices), torch.from_numpy(a.values), a.shape,
                                        check_invariants=False)
            impls.append(Impl("torch", lambda: t.coalesce()))
        except ImportError:
            pass
    if want("scipy"):
        try:
            import scipy.sparse as sp

            def scipy_sum_duplicates():
                m = sp.coo_array((a.values, tuple(a.indices)), shape=a.shape)
                m.sum_duplicates()
                return m

            impls.append(Impl("scipy", scipy_sum_duplicates, note="includes coo_array construction"))
        except ImportError:
            pass
    if want("pydata"):
        try:
            import sparse

            impls.append(Impl("pydata", lambda: sparse.COO(a.indices, a.values, shape=a.shape),
                              note="COO construction canonicalises"))
        except ImportError:
            pass
    return impls


def cases(size="medium", libraries=None):
    g = workloads.rmat(size)
    t = workloads.tensor3d(size)
    out = []
    for a, label in ((g, f"R-MAT scale {workloads.RMAT_SCALE[size]}, {g.nnz:,} edges"),
                     (t, f"3-D {'x'.join(map(str, t.shape))}, {t.nnz:,}")):
        out.append(Case("coalesce", label, _impls(a, libraries), input_bytes=a.indices.nbytes + a.values.nbytes))
    return out
