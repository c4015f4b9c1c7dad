"""Reductions against pydata/sparse, scipy CSR and torch.

Workloads: :func:`workloads.uniform` (2,000,000 uniform draws in a
(131072, 131072) float64 array) and :func:`workloads.rmat` (the 2M-edge
R-MAT graph), both coalesced: duplicates summed, sorted, flags True. Every
peer gets its own natural format, built once, outside the timing:

- ``sum(axis=1)`` (row sums): coosparse from the coalesced COO (sorted rows:
  no sort, one segment pass), scipy ``csr_array.sum(axis=1)`` from its own
  CSR format, torch ``torch.sparse.sum(t, dim=1)`` on a coalesced tensor,
  pydata ``COO.sum(axis=1)``;
  GraphBLAS ``A.reduce_rowwise(monoid.plus)`` on its own matrix;
- ``max(axis=0)`` (column maxima, implicit zeros included): coosparse, pydata
  ``COO.max(axis=0)``, scipy ``csr_array.max(axis=0)``. torch has no sparse max.

On a GPU (``device='cuda'``) the arrays move there first and the peers are
torch CUDA (``torch.sparse.sum``) and cupyx's CSR ``sum(axis=1)`` /
``max(axis=0)``, each built once from the coalesced COO outside the timing.
"""
from __future__ import annotations

from .._kernels.backend import writeable
from . import graphblas_peer, workloads
from .harness import Case, Impl, gpu_peers, on_device, scipy_csr, torch_coo

OPS = ["sum axis=1", "max axis=0"]


def _pydata(a):
    import sparse

    return sparse.COO(writeable(a.indices), writeable(a.values), shape=a.shape, has_duplicates=False, sorted=True)


def _peers(libraries, device):
    """The installed peers asked for: pydata, scipy and torch on the CPU; a GPU's own peers there."""
    if device == "cpu":
        mods = (("pydata", "sparse"), ("scipy", "scipy.sparse"), ("torch", "torch"))
    else:
        mods = tuple(m for m in (("torch", "torch"), ("cupyx", "cupyx.scipy.sparse")) if m[0] in gpu_peers(device))
    out = {}
    for lib, mod in mods:
        if libraries is None or lib in libraries:
            try:
                __import__(mod)
                out[lib] = True
            except ImportError:
                pass
    return out


def _cupyx_csr(a):
    import cupyx.scipy.sparse as cxs

    return cxs.coo_matrix((a.values, (a.indices[0], a.indices[1])), shape=a.shape).tocsr()


def cases(size="medium", libraries=None, device="cpu"):
    peers = _peers(libraries, device)
    gb = graphblas_peer.wanted(libraries) if device == "cpu" else None
    out = []
    arrays = [("uniform", workloads.uniform(size, coalesced=True)),
              ("R-MAT", workloads.rmat(size, coalesced=True))]
    for name, a in arrays:
        label = f"{name} {a.nnz:,} in {a.shape[0]}^2"
        nbytes = a.indices.nbytes + a.values.nbytes
        pa = _pydata(a) if "pydata" in peers else None
        m = scipy_csr(a) if "scipy" in peers else None
        ga = graphblas_peer.matrix(a) if gb is not None else None
        a = on_device(a, device)
        t = torch_coo(a) if "torch" in peers else None
        cm = _cupyx_csr(a) if "cupyx" in peers else None

        impls = [Impl("coosparse", lambda a=a: a.sum(axis=1), note="from a coalesced COO")]
        if pa is not None:
            impls.append(Impl("pydata", lambda pa=pa: pa.sum(axis=1)))
        if m is not None:
            impls.append(Impl("scipy", lambda m=m: m.sum(axis=1), note="from its own CSR"))
        if cm is not None:
            impls.append(Impl("cupyx", lambda cm=cm: cm.sum(axis=1), note="from its own CSR"))
        if t is not None:
            import torch

            impls.append(Impl("torch", lambda t=t: torch.sparse.sum(t, dim=1), note="coalesced tensor"))
        if ga is not None:
            impls.append(Impl("graphblas", lambda ga=ga: ga.reduce_rowwise(gb.monoid.plus).new(),
                              note="reduce_rowwise(plus)"))
        out.append(Case("sum axis=1", label, impls, input_bytes=nbytes))

        impls = [Impl("coosparse", lambda a=a: a.max(axis=0))]
        if pa is not None:
            impls.append(Impl("pydata", lambda pa=pa: pa.max(axis=0)))
        if m is not None:
            impls.append(Impl("scipy", lambda m=m: m.max(axis=0), note="from its own CSR"))
        if cm is not None:
            impls.append(Impl("cupyx", lambda cm=cm: cm.max(axis=0), note="from its own CSR"))
        out.append(Case("max axis=0", label, impls, input_bytes=nbytes))
    return out
