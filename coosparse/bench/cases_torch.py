"""The torch bridge against torch 2.13's own sparse ops: conversion cost and forward+backward.

Workloads (issue 6): conversion of 1e3 and 1e7 entries (zero-copy, so the cost
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

from .harness import Case, Impl

SHAPE = (131072, 131072)
SIZES = {"small": 200_000, "medium": 2_000_000, "large": 20_000_000}


def _torch():
    import torch

    from coosparse.interop import torch as ct

    return torch, ct


def _coalesced(keys, seed):
    """A coalesced torch tensor with the given linear keys (sorted here) and random values."""
    torch, _ = _torch()
    keys = np.sort(keys)
    idx = np.stack(np.unravel_index(keys, SHAPE)).astype(np.int64)
    vals = np.random.default_rng(seed).random(keys.shape[0])
    return torch.sparse_coo_tensor(torch.from_numpy(idx), torch.from_numpy(vals), SHAPE, is_coalesced=True,
                                   check_invariants=False)


def _keys_pair(n, seed=0):
    """(keys_a, keys_b): n distinct keys each, b sharing n // 2 of a's."""
    rng = np.random.default_rng(seed)
    total = SHAPE[0] * SHAPE[1]
    pool = np.unique(rng.integers(0, total, size=int(n * 1.6), dtype=np.int64))
    while pool.shape[0] < 3 * n // 2:
        pool = np.unique(np.concatenate([pool, rng.integers(0, total, size=n, dtype=np.int64)]))
    pool = rng.permutation(pool)[: 3 * n // 2]
    a = pool[:n]
    b = np.concatenate([a[: n // 2], pool[n:n + (n - n // 2)]])
    return a, b


def conversion_cases(sizes=(1_000, 10_000_000)):
    torch, ct = _torch()
    cases = []
    for n in sizes:
        a = coosparse.random(SHAPE, nnz=n, seed=0)
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


def sparse_mask_cases(size="medium", libraries=None):
    torch, ct = _torch()
    n = SIZES[size]
    ka, kb = _keys_pair(n, seed=1)
    x, mask = _coalesced(ka, 1), _coalesced(kb, 2)
    impls = [Impl("coosparse", _fwd_bwd(lambda s, m: ct.sparse_mask(s, m), (x, mask), _grad_like))]
    if libraries is None or "torch" in libraries:
        impls.append(Impl("torch", _fwd_bwd(lambda s, m: s.sparse_mask(m), (x, mask), _grad_like)))
    return [Case("sparse_mask fwd+bwd", f"{n:,} coalesced in 131072^2", impls, input_bytes=2 * n * 24)]


def multiply_cases(size="medium", libraries=None):
    torch, ct = _torch()
    n = SIZES[size]
    ka, kb = _keys_pair(n, seed=3)
    a, b = _coalesced(ka, 3), _coalesced(kb, 4)
    impls = [Impl("coosparse", _fwd_bwd(lambda p, q: ct.multiply(p, q), (a, b), _grad_like))]
    if libraries is None or "torch" in libraries:
        impls.append(Impl("torch", _fwd_bwd(lambda p, q: p * q, (a, b), _grad_like)))
    return [Case("multiply fwd+bwd", f"{n:,} coalesced x2 in 131072^2", impls, input_bytes=2 * n * 24)]


def _uncoalesced_pair(n, seed):
    """Two uncoalesced tensors (unsorted, with a few duplicates), b sharing half of a's indices."""
    torch, _ = _torch()
    ka, kb = _keys_pair(n, seed)
    rng = np.random.default_rng(seed)
    out = []
    for keys in (ka, kb):
        keys = rng.permutation(np.concatenate([keys, keys[: n // 100]]))  # 1% duplicates
        idx = np.stack(np.unravel_index(keys, SHAPE)).astype(np.int64)
        out.append(torch.sparse_coo_tensor(torch.from_numpy(idx), torch.from_numpy(rng.random(keys.shape[0])),
                                           SHAPE, check_invariants=False))
    return out


def uncoalesced_cases(size="medium", libraries=None):
    """Uncoalesced inputs. torch's own multiply is not run: at (131072, 131072) it dies with
    SIGFPE (see :func:`torch_multiply_crashes`)."""
    torch, ct = _torch()
    n = SIZES[size]
    x, mask = _uncoalesced_pair(n, 5)
    impls = [Impl("coosparse", _fwd_bwd(lambda s, m: ct.sparse_mask(s, m), (x, mask), _grad_like))]
    if libraries is None or "torch" in libraries:
        impls.append(Impl("torch", _fwd_bwd(lambda s, m: s.sparse_mask(m), (x, mask), _grad_like)))
    cases = [Case("sparse_mask fwd+bwd", f"{n:,} uncoalesced in 131072^2", impls)]
    a, b = _uncoalesced_pair(n, 6)
    cases.append(Case("multiply fwd+bwd", f"{n:,} uncoalesced x2 in 131072^2",
                      [Impl("coosparse", _fwd_bwd(lambda p, q: ct.multiply(p, q), (a, b), _grad_like),
                            note="torch: SIGFPE at this shape")]))
    return cases


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


def cases(size="medium", libraries=None):
    return (conversion_cases() + sparse_mask_cases(size, libraries) + multiply_cases(size, libraries)
            + uncoalesced_cases(size, libraries))
