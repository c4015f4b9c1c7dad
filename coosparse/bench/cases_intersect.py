"""multiply / add / sparse_mask against torch (CPU), pydata/sparse and SuiteSparse:GraphBLAS.

Workload: ``a`` and ``b`` each hold 2,000,000 distinct uniformly
random entries of a (131072, 131072) float64 array; ``b`` shares half of
``a``'s indices and its entries come in random order. "Coalesced" operands
are the same data sorted (flags True); the uncoalesced operand is ``b`` as
drawn (random order, flags False). torch tensors are built once, outside the
timing, with the same flag (``is_coalesced``). GraphBLAS (:mod:`graphblas_peer`) holds the
coalesced operands as its own matrices: ``A.ewise_mult(B, times)``, ``A.ewise_add(B, plus)`` and
``A.dup(mask=B.S)`` (A at B's pattern: it keeps only the entries both have, where ``sparse_mask``
also stores B's other indices as zeros). ``multiply c*c 3-D`` and ``add c+c 3-D`` take the same
coalesced pair reshaped to (131072, 256, 512): the intersection and the union over three index rows
(GraphBLAS has no 3-D arrays).
"""
from __future__ import annotations

import numpy as np

import coosparse

from .._kernels.backend import writeable
from . import graphblas_peer, workloads
from .harness import Case, Impl, gpu_peers, on_device, torch_coo


CUBE_SHAPE = (131072, 256, 512)
"""The 3-D form of the (131072, 131072) pair for the N-D multiply and add: the same entries, one more index row."""


def workload(size="medium", seed=0):
    """(a coalesced, b coalesced, b in random order) from :func:`workloads.uniform_pair`.

    The random-order ``b`` carries no flags (``is_unique`` False too), as an
    operand straight from an unknown source would.
    """
    a, b = workloads.uniform_pair(size, seed)
    bu = coosparse.COO(b.indices, b.values, b.shape, check=False)
    return workloads.coalesced_copy(a), workloads.coalesced_copy(b), bu


def dense_mask_workload(n=2_000_000, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.random((4096, 4096))
    mask = coosparse.random((4096, 4096), nnz=n, sorted=True, seed=rng)
    return x, mask


def _pydata(a):
    import sparse

    return sparse.COO(writeable(a.indices), writeable(a.values), shape=a.shape, has_duplicates=False, sorted=True)


def cases(size="medium", libraries=None, device="cpu"):
    """The cases on ``device``: on a GPU the arrays move there and the peer is torch CUDA."""
    want = (lambda lib: (libraries is None or lib in libraries)
            and (device == "cpu" or lib in gpu_peers(device)))
    a, b, bu = (on_device(v, device) for v in workload(size))
    x, mask = (on_device(v, device) for v in dense_mask_workload(workloads.UNIFORM_NNZ[size]))
    try:
        import torch
    except ImportError:
        torch = None
    use_torch = torch is not None and want("torch")
    use_pydata = want("pydata")
    if use_pydata:
        try:
            import sparse  # noqa: F401
        except ImportError:
            use_pydata = False

    gb = graphblas_peer.wanted(libraries) if device == "cpu" else None
    ga, gbm = (graphblas_peer.matrix(a), graphblas_peer.matrix(b)) if gb is not None else (None, None)
    nbytes = a.indices.nbytes + a.values.nbytes + b.indices.nbytes + b.values.nbytes
    wl = f"{a.nnz:,}+{b.nnz:,} in 131072^2"
    out = []

    # multiply, both coalesced: merge, matches only
    impls = [Impl("coosparse", lambda: coosparse.multiply(a, b))]
    if use_torch:
        ta, tb = torch_coo(a), torch_coo(b)
        impls.append(Impl("torch", lambda: ta * tb))
    if use_pydata:
        pa, pb = _pydata(a), _pydata(b)
        impls.append(Impl("pydata", lambda: pa * pb))
    if gb is not None:
        impls.append(Impl("graphblas", lambda: ga.ewise_mult(gbm, gb.binary.times).new(), note="ewise_mult"))
    out.append(Case("multiply c*c", wl, impls, input_bytes=nbytes))

    # multiply, uncoalesced (random order) x coalesced: source keeps its layout
    impls = [Impl("coosparse", lambda: coosparse.multiply(bu, a, compact=False),
                  note="compact=False, as torch")]
    impls.append(Impl("coosparse-compact", lambda: coosparse.multiply(bu, a)))
    if use_torch:
        tbu, ta = torch_coo(bu), torch_coo(a)
        impls.append(Impl("torch", lambda: tbu * ta))
    out.append(Case("multiply u*c", wl, impls, input_bytes=nbytes))

    # add, both coalesced: merge
    impls = [Impl("coosparse", lambda: coosparse.add(a, b))]
    if use_torch:
        ta, tb = torch_coo(a), torch_coo(b)
        impls.append(Impl("torch", lambda: ta + tb))
    if use_pydata:
        pa, pb = _pydata(a), _pydata(b)
        impls.append(Impl("pydata", lambda: pa + pb))
    if gb is not None:
        impls.append(Impl("graphblas", lambda: ga.ewise_add(gbm, gb.binary.plus).new(), note="ewise_add"))
    out.append(Case("add c+c", wl, impls, input_bytes=nbytes))

    # multiply and add, both coalesced, the same entries as 3-D arrays (the leading axis kept):
    # the N-D merges (the peers' 3-D operands, built once, serve both)
    a3, b3 = a.reshape(CUBE_SHAPE), b.reshape(CUBE_SHAPE)
    nbytes3 = a3.indices.nbytes + a3.values.nbytes + b3.indices.nbytes + b3.values.nbytes
    wl3 = f"{a.nnz:,}+{b.nnz:,} in 2^17x256x512"
    impls = [Impl("coosparse", lambda: coosparse.multiply(a3, b3))]
    if use_torch:
        ta3, tb3 = torch_coo(a3), torch_coo(b3)
        impls.append(Impl("torch", lambda: ta3 * tb3))
    if use_pydata:
        pa3, pb3 = _pydata(a3), _pydata(b3)
        impls.append(Impl("pydata", lambda: pa3 * pb3))
    out.append(Case("multiply c*c 3-D", wl3, impls, input_bytes=nbytes3))

    impls = [Impl("coosparse", lambda: coosparse.add(a3, b3))]
    if use_torch:
        impls.append(Impl("torch", lambda: ta3 + tb3))
    if use_pydata:
        impls.append(Impl("pydata", lambda: pa3 + pb3))
    out.append(Case("add c+c 3-D", wl3, impls, input_bytes=nbytes3))

    # sparse_mask sparse -> sparse, both coalesced
    impls = [Impl("coosparse", lambda: coosparse.sparse_mask(a, b))]
    if use_torch:
        ta, tb = torch_coo(a), torch_coo(b)
        impls.append(Impl("torch", lambda: ta.sparse_mask(tb)))
    if gb is not None:
        impls.append(Impl("graphblas", lambda: ga.dup(mask=gbm.S), note="dup(mask=B.S): matches only"))
    out.append(Case("sparse_mask c|c", wl, impls, input_bytes=nbytes))

    # sparse_mask from a dense (4096, 4096) array
    impls = [Impl("coosparse", lambda: coosparse.sparse_mask(x, mask))]
    if use_torch:
        tx, tm = (torch.from_numpy(x) if device == "cpu" else torch.as_tensor(x, device="cuda")), torch_coo(mask)
        impls.append(Impl("torch", lambda: tx.sparse_mask(tm)))
    out.append(Case("sparse_mask dense", f"4096^2 | {mask.nnz:,}", impls,
                    input_bytes=x.nbytes + mask.indices.nbytes))
    return out
