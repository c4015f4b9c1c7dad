"""Indexing: row slices and row gathers of a coalesced array, against scipy CSR,
pydata/sparse and torch.

Workload: :func:`workloads.uniform` coalesced (2,000,000 entries at
``medium``, (131072, 131072) float64, both flags True). Peers get the same
data in their own format, built once outside the timing: scipy a CSR array
(its native row access), pydata a sorted ``COO``, torch a coalesced tensor.

- ``row slice``: ``a[i:i + 1000]`` (coosparse binary-searches the leading
  row; the result is a coalesced COO);
- ``row gather``: ``a[idx]`` with 10,000 random rows (repeats allowed; the
  result is coalesced, rows in ``idx`` order); torch's equivalent is
  ``index_select(0, idx)``.

On a GPU (``device='cuda'``) the array and the row list live on the device
and the peer is torch CUDA; the emulated device runs coosparse alone. GraphBLAS
(CPU) extracts from its own matrix: ``A[i:j, :].new()`` and ``A[idx, :].new()``.
"""
from __future__ import annotations

import numpy as np

from .._kernels.backend import writeable
from . import graphblas_peer, workloads
from .harness import Case, Impl, gpu_peers, on_device, scipy_csr, torch_coo

OPS = ["row slice", "row gather"]
ROW = 65536
NROWS = 1000
NGATHER = 10_000


def _pydata(a):
    import sparse

    return sparse.COO(writeable(a.indices), writeable(a.values), shape=a.shape, has_duplicates=False, sorted=True)


def cases(size="medium", libraries=None, device="cpu"):
    """The cases on ``device``: on a GPU the array and the row list move there; the peer is torch CUDA."""
    want = (lambda lib: (libraries is None or lib in libraries)
            and (device == "cpu" or lib in gpu_peers(device)))
    a = on_device(workloads.uniform(size, coalesced=True), device)
    wl = f"coalesced {a.nnz:,} in 131072^2"
    idx_host = np.random.default_rng(1).integers(0, a.shape[0], NGATHER)
    idx = on_device(idx_host, device)
    m = p = t = None
    if want("scipy"):
        try:
            m = scipy_csr(a)
        except ImportError:
            pass
    if want("pydata"):
        try:
            p = _pydata(a)
        except ImportError:
            pass
    if want("torch"):
        t = torch_coo(a)
    gb = graphblas_peer.wanted(libraries) if device == "cpu" else None
    ga = graphblas_peer.matrix(a) if gb is not None else None
    out = []

    impls = [Impl("coosparse", lambda: a[ROW:ROW + NROWS])]
    if ga is not None:
        impls.append(Impl("graphblas", lambda: ga[ROW:ROW + NROWS, :].new()))
    if m is not None:
        impls.append(Impl("scipy", lambda: m[ROW:ROW + NROWS], note="CSR row slice"))
    if p is not None:
        impls.append(Impl("pydata", lambda: p[ROW:ROW + NROWS]))
    if t is not None:
        impls.append(Impl("torch", lambda: t.narrow_copy(0, ROW, NROWS), note="narrow_copy"))
    out.append(Case("row slice", f"{NROWS} rows of {wl}", impls, input_bytes=a.indices.nbytes + a.values.nbytes))

    impls = [Impl("coosparse", lambda: a[idx])]
    if ga is not None:
        impls.append(Impl("graphblas", lambda: ga[idx_host, :].new()))
    if m is not None:
        impls.append(Impl("scipy", lambda: m[idx], note="CSR fancy row index"))
    if p is not None:
        impls.append(Impl("pydata", lambda: p[idx]))
    if t is not None:
        import torch

        tidx = torch.from_numpy(idx_host).to(t.device)
        impls.append(Impl("torch", lambda: t.index_select(0, tidx), note="index_select"))
    out.append(Case("row gather", f"{NGATHER:,} random rows of {wl}", impls,
                    input_bytes=a.indices.nbytes + a.values.nbytes))
    return out
