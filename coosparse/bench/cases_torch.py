"""The torch bridge against torch 2.13's own sparse ops: conversion cost and forward+backward.

Workloads: conversion of 1e3 and 1e7 entries (zero-copy, so the cost
should not depend on nnz); forward+backward of ``sparse_mask`` and
``multiply`` on 2,000,000 entries in (131072, 131072) float64. For multiply,
``a`` and ``b`` have 2M entries each and ``b`` shares half of ``a``'s indices.
Inputs are coalesced (the common training case, and torch's fastest path);
the backward is driven by a sparse gradient with the output's indices, the
same tensor for both libraries.
"""
from __future__ import annotations

import numpy as np

import coosparse

from . import workloads
from .harness import Case, Impl, on_device, torch_coo

SHAPE = workloads.UNIFORM_SHAPE


def _torch():
    import torch

    from coosparse.interop import torch as ct  # optional dependency: torch

    return torch, ct


def _coalesced_pair(size, seed, device="cpu"):
    """Two coalesced tensors: :func:`workloads.uniform_pair` (b shares half of a's indices)."""
    return [torch_coo(on_device(x, device)) for x in workloads.uniform_pair(size, seed, coalesced=True)]


def _uncoalesced_pair(size, seed, device="cpu"):
    """The same pair unsorted, each with 1% duplicates (its first n // 100 indices again, fresh values)."""
    rng = np.random.default_rng(seed)
    out = []
    for x in workloads.uniform_pair(size, seed):
        d = x.nnz // 100
        order = rng.permutation(x.nnz + d)
        idx = np.concatenate([x.indices, x.indices[:, :d]], axis=1)[:, order]
        vals = np.concatenate([x.values, rng.random(d)])[order]
        out.append(torch_coo(on_device(coosparse.COO(np.ascontiguousarray(idx), vals, SHAPE, check=False), device)))
    return out


def conversion_cases(sizes=(1_000, 10_000_000), device="cpu"):
    torch, ct = _torch()
    cases = []
    for n in sizes:
        a = on_device(coosparse.random(SHAPE, nnz=n, seed=0), device)
        t = ct.to_torch(a)

        def round_trip(t=t):
            return ct.to_torch(ct.from_torch(t))

        cases.append(Case("from_torch+to_torch", f"{n:,} entries", [Impl("coosparse", round_trip)],
                          input_bytes=a.indices.nbytes + a.values.nbytes))
    return cases


def _fwd_bwd(fn, inputs, grad_of):
    """A closure running forward and backward once (fresh leaves each run)."""
    torch, _ = _torch()

    def run():
        leaves = [x.detach().requires_grad_() for x in inputs]
        y = fn(*leaves)
        y.backward(grad_of(y))
        return [x.grad for x in leaves]

    return run


def _grad_like(y):
    """Sparse gradient with y's indices (ones), built without touching y's graph."""
    torch, _ = _torch()
    y = y.detach()
    return torch.sparse_coo_tensor(y._indices(), torch.ones_like(y._values()), y.shape,
                                   is_coalesced=y.is_coalesced(), check_invariants=False)


def _case(op, label, inputs, ours, theirs, libraries, note=""):
    """forward+backward of ``ours`` (coosparse bridge) and, if given, ``theirs`` (torch) on the same inputs."""
    impls = [Impl("coosparse", _fwd_bwd(ours, inputs, _grad_like), note=note)]
    if theirs is not None and (libraries is None or "torch" in libraries):
        impls.append(Impl("torch", _fwd_bwd(theirs, inputs, _grad_like)))
    nbytes = sum(t._indices().nbytes + t._values().nbytes for t in inputs)
    return Case(op, label, impls, input_bytes=nbytes)


def sparse_mask_cases(size="medium", libraries=None, device="cpu"):
    _, ct = _torch()
    n = workloads.UNIFORM_NNZ[size]
    return [_case("sparse_mask fwd+bwd", f"{n:,} coalesced in 131072^2", _coalesced_pair(size, 1, device),
                  lambda s, m: ct.sparse_mask(s, m), lambda s, m: s.sparse_mask(m), libraries)]


def multiply_cases(size="medium", libraries=None, device="cpu"):
    _, ct = _torch()
    n = workloads.UNIFORM_NNZ[size]
    return [_case("multiply fwd+bwd", f"{n:,} coalesced x2 in 131072^2", _coalesced_pair(size, 3, device),
                  lambda p, q: ct.multiply(p, q), lambda p, q: p * q, libraries)]


def uncoalesced_cases(size="medium", libraries=None, device="cpu"):
    """Uncoalesced inputs. torch's own multiply is not run: at (131072, 131072) it dies with
    SIGFPE (see :func:`torch_multiply_crashes`)."""
    _, ct = _torch()
    n = workloads.UNIFORM_NNZ[size]
    return [_case("sparse_mask fwd+bwd", f"{n:,} uncoalesced in 131072^2", _uncoalesced_pair(size, 5, device),
                  lambda s, m: ct.sparse_mask(s, m), lambda s, m: s.sparse_mask(m), libraries),
            _case("multiply fwd+bwd", f"{n:,} uncoalesced x2 in 131072^2", _uncoalesced_pair(size, 6, device),
                  lambda p, q: ct.multiply(p, q), None, libraries, note="torch: SIGFPE at this shape")]


def torch_multiply_crashes(shape=SHAPE):
    """Return code of torch's uncoalesced x uncoalesced mul at ``shape``, run in a subprocess."""
    import subprocess
    import sys

    code = (
        "import torch\n"
        f"s = {tuple(shape)!r}\n"
        "i = torch.tensor([[1, 1, 5], [2, 2, 7]])\n"
        "a = torch.sparse_coo_tensor(i, torch.ones(3, dtype=torch.float64), s)\n"
        "(a * a.clone()).coalesce()\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode


def cases(size="medium", libraries=None, device="cpu"):
    """On 'cuda' the tensors are CUDA tensors (the bridge runs the GPU layer); the emulated device has no torch."""
    if device == "cuda-emulated":
        return []
    return (conversion_cases(device=device) + sparse_mask_cases(size, libraries, device)
            + multiply_cases(size, libraries, device) + uncoalesced_cases(size, libraries, device))
