"""coalesce against torch's Tensor.coalesce, scipy's sum_duplicates and pydata/sparse.

This module times the default workload (:func:`workloads.uniform`: 2,000,000
uniform draws, duplicates as drawn, in (131072, 131072) float64) and its
hybrid form (:func:`workloads.hybrid`: 250,000 draws with 8 values each,
against torch's hybrid tensors), and holds
the peer adapters; :mod:`cases_workloads` reuses them on the R-MAT graph and
the 3-D array.
"""
from __future__ import annotations

from .._kernels.backend import writeable
from . import graphblas_peer, workloads
from .harness import Case, Impl, gpu_peers, on_device, torch_coo

OPS = ["coalesce"]
PEERS = ("graphblas", "torch", "scipy", "pydata")


def _gpu_impls(a, want):
    """On a GPU: torch CUDA's ``coalesce`` and cupyx's ``sum_duplicates`` (2-D only, in place: fresh matrix per run)."""
    out = [Impl("coosparse", lambda: a.coalesce())]
    t = torch_coo(a) if want("torch") else None
    if t is not None:
        out.append(Impl("torch", lambda: t.coalesce()))
    if want("cupyx") and a.ndim == 2 and a.device.startswith("cuda:"):
        try:
            import cupyx.scipy.sparse as cxs

            def cupyx_sum_duplicates():
                m = cxs.coo_matrix((a.values, (a.indices[0], a.indices[1])), shape=a.shape)
                m.sum_duplicates()
                return m

            out.append(Impl("cupyx", cupyx_sum_duplicates, note="includes coo_matrix construction"))
        except ImportError:
            pass
    return out


def impls(a, libraries=None, peers=PEERS, device="cpu"):
    """coosparse's ``a.coalesce()`` and each installed peer in ``peers`` (and ``libraries``, if given).

    - torch: ``Tensor.coalesce`` on a tensor built once, outside the timing;
    - scipy: ``sum_duplicates`` works in place, so each run builds a fresh
      ``coo_array`` (construction counted; n-d COO since scipy 1.15);
    - pydata: its ``COO`` constructor is its coalesce (it canonicalises every array);
    - graphblas (2-D only): ``Matrix.from_coo(rows, cols, values, dup_op=plus)``, its build from
      unsorted entries with duplicates (construction is the operation).

    On a GPU (``a`` already there): torch CUDA and cupyx.
    """
    if device != "cpu":
        gpu = gpu_peers(device)
        return _gpu_impls(a, lambda lib: lib in gpu and (libraries is None or lib in libraries))
    want = (lambda lib: lib in peers and (libraries is None or lib in libraries))
    out = [Impl("coosparse", lambda: a.coalesce())]
    t = torch_coo(a) if want("torch") else None
    if t is not None:
        out.append(Impl("torch", lambda: t.coalesce()))
    if want("scipy"):
        try:
            import scipy.sparse as sp

            def scipy_sum_duplicates():
                m = sp.coo_array((a.values, tuple(a.indices)), shape=a.shape)
                m.sum_duplicates()  # in place: build a fresh array each run (construction counted)
                return m

            out.append(Impl("scipy", scipy_sum_duplicates, note="includes coo_array construction"))
        except ImportError:
            pass
    gb = graphblas_peer.wanted(libraries) if want("graphblas") and a.ndim == 2 else None
    if gb is not None:
        out.append(Impl("graphblas", lambda: graphblas_peer.matrix(a, dup_op=gb.binary.plus),
                        note="Matrix.from_coo(dup_op=plus)"))
    if want("pydata"):
        try:
            import sparse

            out.append(Impl("pydata", lambda: sparse.COO(writeable(a.indices), writeable(a.values), shape=a.shape),
                            note="COO construction canonicalises"))
        except ImportError:
            pass
    return out


def case(a, label, libraries=None, peers=PEERS, device="cpu"):
    """One coalesce case on ``a`` (a CPU COO, moved to ``device``)."""
    a = on_device(a, device)
    return Case("coalesce", label, impls(a, libraries, peers, device),
                input_bytes=a.indices.nbytes + a.values.nbytes)


def cases(size="medium", libraries=None, device="cpu"):
    a = workloads.uniform(size)
    # this case's peers have always been torch and scipy (and GraphBLAS's build); pydata runs on
    # cases_workloads' arrays
    h = workloads.hybrid(size)
    # hybrid values (a dense row per entry): torch's sparse_dim/dense_dim tensors are the only peer
    return [case(a, f"uniform {a.nnz:,} in 131072^2", libraries, peers=("graphblas", "torch", "scipy"),
                 device=device),
            case(h, f"hybrid {h.nnz:,} x {h.shape[-1]} values in 131072^2", libraries, peers=("torch",),
                 device=device)]
