"""coalesce against torch's Tensor.coalesce, scipy's sum_duplicates and pydata/sparse."""
from __future__ import annotations

import coosparse

from .harness import Case, Impl

SIZES = {"small": 200_000, "medium": 2_000_000, "large": 20_000_000}


def uniform_workload(size, seed=0):
    """The issue workload: uniform random entries (duplicates as drawn) in (131072, 131072) float64."""
    return coosparse.random((131072, 131072), nnz=SIZES[size], duplicates=True, seed=seed)


def cases(size="medium", libraries=None):
    a = uniform_workload(size)
    impls = [Impl("coosparse", lambda: a.coalesce())]
    want = (lambda lib: libraries is None or lib in libraries)
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
                m = sp.coo_array((a.values, (a.indices[0], a.indices[1])), shape=a.shape)
                m.sum_duplicates()  # in place: build a fresh array each run (construction counted)
                return m

            impls.append(Impl("scipy", scipy_sum_duplicates, note="includes coo_array construction"))
        except ImportError:
            pass
    nbytes = a.indices.nbytes + a.values.nbytes
    return [Case("coalesce", f"uniform {a.nnz:,} in 131072^2", impls, input_bytes=nbytes)]
