"""Transpose and concatenate against torch and pydata/sparse.

- ``transpose+coalesce``: ``a.T.coalesce()`` of the coalesced uniform
  workload (2,000,000 entries in (131072, 131072) at ``medium``): the
  transpose of a sorted matrix must be re-sorted. torch: ``t().coalesce()``;
  pydata: ``.T`` (its result is canonical, i.e. sorted); GraphBLAS: ``A.T.new()``
  (materialised, by row) and scipy: ``csr.T.tocsr()`` (a CSR transpose), each from
  its own matrix.
- ``concatenate axis=-1``: four coalesced arrays of 500,000 entries each
  (``medium``; (131072, 32768) each) joined along the last axis into a
  (131072, 131072) array. The result must be sorted again: coosparse merges
  the four sorted pieces row by row; pydata re-sorts; torch's ``cat`` only
  concatenates (its result is not coalesced).
- ``concatenate axis=0``: four (32768, 131072) pieces along the first axis;
  sorted order survives (coosparse and pydata concatenate and offset).

On a GPU (``device='cuda'``) the arrays live on the device and the peer is
torch CUDA; the emulated device runs coosparse alone.
"""
from __future__ import annotations

import numpy as np

import coosparse

from .._kernels.backend import writeable
from . import graphblas_peer, workloads
from .harness import Case, Impl, gpu_peers, on_device, scipy_csr, torch_coo

OPS = ["transpose+coalesce", "concatenate"]
PIECE_NNZ = {"small": 50_000, "medium": 500_000, "large": 5_000_000}


def _pydata(a):
    import sparse

    return sparse.COO(writeable(a.indices), writeable(a.values), shape=a.shape, has_duplicates=False, sorted=True)


def pieces(size, shape, seed=2):
    """Four coalesced uniform arrays of ``shape`` with PIECE_NNZ[size] draws each."""
    rng = np.random.default_rng(seed)
    return [workloads._uniform_in(rng, shape, PIECE_NNZ[size], True, True, np.float64) for _ in range(4)]


def cases(size="medium", libraries=None, device="cpu"):
    """The cases on ``device``: on a GPU the arrays move there and the peer is torch CUDA."""
    want = (lambda lib: (libraries is None or lib in libraries)
            and (device == "cpu" or lib in gpu_peers(device)))
    try:
        import sparse
        use_pydata = want("pydata")
    except ImportError:
        use_pydata = False
    out = []

    a = on_device(workloads.uniform(size, coalesced=True), device)
    impls = [Impl("coosparse", lambda: a.T.coalesce())]
    t = torch_coo(a) if want("torch") else None
    if t is not None:
        impls.append(Impl("torch", lambda: t.t().coalesce()))
    if use_pydata:
        pa = _pydata(a)
        impls.append(Impl("pydata", lambda: pa.T, note="its transpose sorts"))
    gb = graphblas_peer.wanted(libraries) if device == "cpu" else None
    if gb is not None:
        ga = graphblas_peer.matrix(a)
        impls.append(Impl("graphblas", lambda: ga.T.new(), note="A.T.new()"))
    if device == "cpu" and want("scipy"):
        try:
            m = scipy_csr(a)
            impls.append(Impl("scipy", lambda: m.T.tocsr(), note="CSR transpose"))
        except ImportError:
            pass
    out.append(Case("transpose+coalesce", f"coalesced {a.nnz:,} in 131072^2", impls,
                    input_bytes=a.indices.nbytes + a.values.nbytes))

    for axis, shape in ((-1, (131072, 32768)), (0, (32768, 131072))):
        ps = [on_device(p, device) for p in pieces(size, shape)]
        nbytes = sum(p.indices.nbytes + p.values.nbytes for p in ps)
        impls = [Impl("coosparse", lambda ps=ps, axis=axis: coosparse.concatenate(ps, axis=axis))]
        if want("torch") and torch_coo(ps[0]) is not None:
            import torch

            tps = [torch_coo(p) for p in ps]
            impls.append(Impl("torch", lambda tps=tps, axis=axis: torch.cat(tps, dim=axis % 2),
                              note="result not coalesced"))
        if use_pydata:
            pps = [_pydata(p) for p in ps]
            impls.append(Impl("pydata", lambda pps=pps, axis=axis: sparse.concatenate(pps, axis=axis)))
        out.append(Case(f"concatenate axis={axis}", f"4 x {ps[0].nnz:,} coalesced, {shape}", impls,
                        input_bytes=nbytes))
    return out
