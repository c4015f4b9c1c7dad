"""Linear algebra against scipy.sparse, torch.sparse and pydata/sparse.

Workloads:

- SpMV, SpMM (64 dense columns) and SDDMM (64-wide factors) on the Graph500
  R-MAT graph (:func:`workloads.rmat`, coalesced: 1,942,918 distinct edges of
  2,097,152 in 131072 x 131072 at ``medium``), float64;
- SpGEMM ``A @ A`` of the R-MAT graph of SCALE 14 (228,325 distinct entries in
  16384 x 16384) at ``medium`` and ``large``, SCALE 12 at ``small``; and ``B @ B``
  of the small uniform workload (200,000 entries in 131072 x 131072, about 1.5
  per row: a product dominated by its per-row overheads);
- forward + backward of a sparse x dense layer ``Y = A @ X`` through the torch
  bridge (``X`` of 64 columns requires grad, ``A`` is the fixed graph), the
  backward driven by a fixed dense gradient.

Ours always starts from a coalesced COO (row offsets are cached on the array
after the warm-up run, as they would be in a training loop); every peer from
its own best format, built beforehand: scipy CSR, torch COO (coalesced) and
CSR, pydata COO, GraphBLAS its own matrices and full (dense) vectors and
matrices (:mod:`graphblas_peer`: ``mxv``, ``mxm`` with ``plus_times``; SDDMM as
``C(mask=A.S) << X.mxm(YT.T)`` with ``YT = y.T`` row-major, built once). Outputs are not compared here (the tests do that).

On a GPU (``device="cuda"``) the same data moves to the device and the peers
are torch CUDA (COO, CSR, ``sampled_addmm``, the layer) and cupyx CSR;
``device="cuda-emulated"`` runs our side alone (no peer), to check the GPU
code path without a GPU.
"""
from __future__ import annotations

import numpy as np

import coosparse

from .._kernels.backend import writeable
from . import graphblas_peer, workloads
from .harness import Case, Impl, gpu_peers, on_device, scipy_csr, torch_coo

OPS = ("spmv", "spmm", "spgemm", "sddmm", "matmul-fwd-bwd")
WIDTH = 64  # dense columns of SpMM, the SDDMM factors and the layer
SPGEMM_SCALE = {"small": 12, "medium": 14, "large": 14}


def _peers(libraries, device="cpu"):
    """Peer modules by name: scipy, torch, pydata on the CPU; torch (CUDA) and cupyx on a GPU."""
    want = (lambda lib: (libraries is None or lib in libraries)
            and (device == "cpu" or lib in gpu_peers(device)))
    names = (("scipy", "scipy.sparse"), ("torch", "torch"), ("pydata", "sparse")) if device == "cpu" else \
        (("torch", "torch"), ("cupyx", "cupyx.scipy.sparse"))
    out = {}
    for name, mod in names:
        if want(name):
            try:
                out[name] = __import__(mod, fromlist=["_"])
            except ImportError:
                pass
    return out


def _cupyx_csr(a):
    """``a`` (a coalesced COO on a GPU) as a cupyx CSR matrix, built once outside the timing."""
    import cupyx.scipy.sparse as cxs

    return cxs.coo_matrix((a.values, (a.indices[0], a.indices[1])), shape=a.shape).tocsr()


def _torch_csr(a):
    import torch

    if a.device != "cpu":  # a CUDA COO tensor sharing a's arrays, converted on the device
        return torch_coo(a).to_sparse_csr()
    c = scipy_csr(a)
    return torch.sparse_csr_tensor(torch.from_numpy(c.indptr.astype(np.int64)),
                                   torch.from_numpy(c.indices.astype(np.int64)),
                                   torch.from_numpy(c.data), a.shape, check_invariants=False)


def _torch_dense(x, device):
    """Dense ``x`` (NumPy on the CPU, CuPy on a GPU) as a torch tensor on the same device (no copy)."""
    import torch

    return torch.from_numpy(x) if device == "cpu" else torch.as_tensor(x, device="cuda")


def _pydata(a):
    import sparse

    return sparse.COO(writeable(a.indices), writeable(a.values), shape=a.shape, has_duplicates=False, sorted=True)


def _sparse_dense_impls(a, rhs, peers, device, ga=None):
    """``a @ rhs`` (a vector: SpMV, a matrix: SpMM) by us and by each peer in its own best format."""
    torch = peers.get("torch")
    impls = [Impl("coosparse", lambda: a @ rhs)]
    if ga is not None:
        gb = graphblas_peer.load()
        if rhs.ndim == 1:
            gx = graphblas_peer.dense_vector(rhs)
            impls.append(Impl("graphblas", lambda: ga.mxv(gx, gb.semiring.plus_times).new(), note="mxv"))
        else:
            gx = graphblas_peer.dense_matrix(rhs)
            impls.append(Impl("graphblas", lambda: ga.mxm(gx, gb.semiring.plus_times).new(),
                              note="mxm with a full matrix"))
    if "scipy" in peers:
        c = scipy_csr(a)
        impls.append(Impl("scipy", lambda: c @ rhs, note="CSR"))
    if "cupyx" in peers:
        cc = _cupyx_csr(a)
        impls.append(Impl("cupyx", lambda: cc @ rhs, note="CSR"))
    if torch is not None:
        tc, tr, tx = torch_coo(a), _torch_csr(a), _torch_dense(rhs, device)
        tx2 = tx.reshape(-1, 1) if tx.ndim == 1 else tx  # torch.sparse.mm takes matrices only
        impls.append(Impl("torch", lambda: torch.sparse.mm(tc, tx2), note="COO, torch.sparse.mm"))
        impls.append(Impl("torch-csr", lambda: tr @ tx, note="CSR"))
    if "pydata" in peers:
        pa = _pydata(a)
        impls.append(Impl("pydata", lambda: pa @ rhs))
    return impls


def graph(size):
    """The R-MAT graph of ``size``, coalesced, float64."""
    return workloads.rmat(size, coalesced=True)


def spgemm_matrix(size):
    """The SpGEMM operand: R-MAT of SCALE 12/14/14 (small/medium/large), coalesced."""
    rng = np.random.default_rng(0)
    scale = SPGEMM_SCALE[size]
    ij = workloads.rmat_edges(scale, seed=rng)
    n = 1 << scale
    keys = np.unique(ij[0] * n + ij[1])
    vals = rng.random(keys.shape[0])
    idx = np.stack(np.unravel_index(keys, (n, n))).astype(np.int64)
    return coosparse.COO(idx, vals, (n, n), sorted=True, unique=True, check=False)


def _spgemm_impls(s, peers, gb):
    torch = peers.get("torch")
    impls = [Impl("coosparse", lambda: s @ s)]
    if gb is not None:
        gs = graphblas_peer.matrix(s)
        impls.append(Impl("graphblas", lambda: gs.mxm(gs, gb.semiring.plus_times).new(), note="mxm"))
    if "scipy" in peers:
        cs = scipy_csr(s)
        impls.append(Impl("scipy", lambda: cs @ cs, note="CSR @ CSR"))
    if "cupyx" in peers:
        ccs = _cupyx_csr(s)
        impls.append(Impl("cupyx", lambda: ccs @ ccs, note="CSR @ CSR"))
    if torch is not None:
        ts = torch_coo(s)
        impls.append(Impl("torch", lambda: torch.sparse.mm(ts, ts), note="COO"))
    if "pydata" in peers:
        ps = _pydata(s)
        impls.append(Impl("pydata", lambda: ps @ ps))
    return impls


def uniform_spgemm_matrix():
    """The second SpGEMM operand: the small uniform workload (200,000 entries in 131072^2), coalesced."""
    return workloads.uniform("small", seed=3, coalesced=True)


def cases(size="medium", libraries=None, device="cpu"):
    """The cases on ``device``: on a GPU the arrays move there and the peers are torch CUDA and cupyx."""
    peers = _peers(libraries, device)
    gb = graphblas_peer.wanted(libraries) if device == "cpu" else None
    torch = peers.get("torch")
    a = graph(size)
    n = a.shape[0]
    rng = np.random.default_rng(1)
    x = rng.random(n)
    xm = rng.random((n, WIDTH))
    y = rng.random((WIDTH, n))
    s = spgemm_matrix(size)
    u = uniform_spgemm_matrix()
    a, x, xm, y, s, u = (on_device(v, device) for v in (a, x, xm, y, s, u))
    ga = graphblas_peer.matrix(a) if gb is not None else None
    abytes = a.indices.nbytes + a.values.nbytes
    wl = f"R-MAT {n}^2, {a.nnz:,} entries"
    out = []

    out.append(Case("spmv", wl, _sparse_dense_impls(a, x, peers, device, ga), input_bytes=abytes + x.nbytes))
    out.append(Case(f"spmm {WIDTH}", wl, _sparse_dense_impls(a, xm, peers, device, ga), input_bytes=abytes + xm.nbytes))

    # SDDMM on the graph's pattern
    impls = [Impl("coosparse", lambda: coosparse.sampled_matmul(a, xm, y))]
    if torch is not None:
        tr, txm, ty = _torch_csr(a), _torch_dense(xm, device), _torch_dense(y, device)
        impls.append(Impl("torch", lambda: torch.sparse.sampled_addmm(tr, txm, ty, beta=0.0),
                          note="sampled_addmm, CSR"))
    if ga is not None:
        gxm, gyt = graphblas_peer.dense_matrix(xm), graphblas_peer.dense_matrix(np.ascontiguousarray(y.T))

        def graphblas_sddmm():
            c = gb.Matrix(ga.dtype, n, n)
            c(mask=ga.S) << gxm.mxm(gyt.T, gb.semiring.plus_times)
            return c

        impls.append(Impl("graphblas", graphblas_sddmm, note="C(mask=A.S) << X.mxm(YT.T)"))
    out.append(Case(f"sddmm {WIDTH}", wl, impls, input_bytes=abytes + xm.nbytes + y.nbytes))

    # SpGEMM A @ A: the R-MAT graph, then the sparse uniform matrix
    for s, label in ((s, f"R-MAT {s.shape[0]}^2, {s.nnz:,} entries"),
                     (u, f"uniform {u.shape[0]}^2, {u.nnz:,} entries")):
        out.append(Case("spgemm A@A", label, _spgemm_impls(s, peers, gb if device == "cpu" else None),
                        input_bytes=2 * (s.indices.nbytes + s.values.nbytes)))

    # forward + backward of Y = A @ X through the torch bridge (torch tensors: not on the emulated device)
    if torch is not None:
        from coosparse.interop import torch as ct  # optional dependency: torch is installed

        ta = torch_coo(a)
        xt = _torch_dense(xm, device).clone().requires_grad_(True)
        g = _torch_dense(on_device(rng.random((n, WIDTH)), device), device)

        def ours():
            xt.grad = None
            ct.matmul(ta, xt).backward(g)

        def theirs():
            xt.grad = None
            torch.sparse.mm(ta, xt).backward(g)

        tr = _torch_csr(a)

        def theirs_csr():
            xt.grad = None
            (tr @ xt).backward(g)

        impls = [Impl("coosparse", ours, note="ct.matmul"), Impl("torch", theirs, note="torch.sparse.mm, COO"),
                 Impl("torch-csr", theirs_csr, note="CSR @")]
        out.append(Case(f"matmul-fwd-bwd {WIDTH}", wl, impls, input_bytes=abytes + 2 * xm.nbytes))
    return out
