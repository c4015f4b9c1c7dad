"""Helpers shared by the torch bridge's autograd functions and custom ops."""
from __future__ import annotations

import numpy as np
import torch

from coosparse._coo import COO

from ._convert import _import, from_torch, to_torch

def _is_sparse(t):
    return isinstance(t, torch.Tensor) and t.layout == torch.sparse_coo


def _is_dense(t):
    return isinstance(t, torch.Tensor) and t.layout == torch.strided


def _require_tensor(t, name, op, sparse=None):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{op}: {name} must be a torch.Tensor; got {type(t).__name__}")
    if t.layout not in (torch.strided, torch.sparse_coo):
        raise TypeError(f"{op}: {name} must be sparse COO or strided; got layout {t.layout}")
    if sparse is True and t.layout != torch.sparse_coo:
        raise TypeError(f"{op}: {name} must be a sparse COO tensor; got a dense tensor")


def _check_same_shape(a, b, op, na="a", nb="b"):
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"{op}: shapes do not match: {na} has shape {tuple(a.shape)}, {nb} has {tuple(b.shape)}")


def _arr(t):
    """COO (sparse tensor) or NumPy/CuPy array (dense tensor); shares memory."""
    return from_torch(t)


def _out(r):
    """Result of a coosparse operation as a torch tensor (no copy)."""
    return to_torch(r)


def _np_dtype(torch_dtype):
    return torch.empty(0, dtype=torch_dtype).numpy().dtype


def _sparse_grad(pattern, values, dtype):
    """Gradient of a sparse input: coalesced, with ``pattern``'s indices (``pattern`` is coalesced)."""
    values = values.astype(_np_dtype(dtype), copy=False)
    g = COO(pattern.indices, values, pattern.shape, sorted=True, unique=True, check=False)
    return to_torch(g)


def _dense_grad(array, dtype):
    return _import(array).to(dtype)


def _conj(v):
    if isinstance(v, complex):
        return v.conjugate()
    return v.conj() if np.iscomplexobj(v) else v
