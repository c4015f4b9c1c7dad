"""Helpers shared by the torch bridge's autograd functions and custom ops."""
from __future__ import annotations

import numbers

import numpy as np
import torch

from coosparse._core.coo import COO

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


# ---- torch's promotion, scalars and overflow --------------------------------------------
def _torch_scalar(s):
    """``s`` when it is a Python number (bool included) or a 0-d dense tensor, else None."""
    if isinstance(s, torch.Tensor):
        if s.dim() == 0 and s.layout == torch.strided:
            return s
        return None
    if isinstance(s, numbers.Number):
        return s
    return None


def _as_dtype_scalar(s, dtype):
    """The scalar ``s`` converted to ``dtype`` as torch converts it (integers wrap), as a Python number."""
    if isinstance(s, torch.Tensor):
        t = s.detach()
    elif isinstance(s, (float, complex)):
        # torch.tensor(0.1) is float32 (the default dtype): 0.1 would lose its low bits and 1e300
        # would become inf before reaching a float64 result; a Python float is a double, as in torch
        t = torch.tensor(s, dtype=torch.complex128 if isinstance(s, complex) else torch.float64)
    else:
        t = torch.tensor(s)
    return t.to(dtype).item()


def _promote(a, b, op):
    """torch's type promotion (``torch.result_type``) of two operands: ``(dtype, a, b)``.

    Tensors are cast to the result dtype with ``Tensor.to`` (differentiable: the
    gradient is cast back to the input's dtype by autograd); scalars become
    Python numbers of that dtype, wrapped as torch wraps them (``int8`` times
    ``1000`` multiplies by ``-24``), so no NumPy overflow error can arise.
    """
    try:
        dtype = torch.result_type(a, b)
    except (TypeError, RuntimeError) as e:
        raise TypeError(f"{op}: operands of types {type(a).__name__} and {type(b).__name__} do not "
                        f"promote together: {e}") from None

    def cast(x):
        if isinstance(x, torch.Tensor) and _torch_scalar(x) is None:
            return x if x.dtype == dtype else x.to(dtype)
        return _as_dtype_scalar(x, dtype)

    return dtype, cast(a), cast(b)


def _conj(v):
    if isinstance(v, complex):
        return v.conjugate()
    return v.conj() if np.iscomplexobj(v) else v
