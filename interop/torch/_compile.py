"""torch.library custom ops (torch.compile-able): as_strided_scatter, to_dense_parts,
sparse_mask_parts."""
from __future__ import annotations

import operator
from typing import Sequence

import numpy as np
import torch

from coosparse.ops.elementwise.intersect import sparse_mask as _sparse_mask
from coosparse.ops.scatter import as_strided_scatter as _as_strided_scatter
from coosparse._core.coo import COO

from ._common import _is_dense
from ._convert import _export, _import

def _np_of(t):
    return _export(t, None, "the tensor")


@torch.library.custom_op("coosparse::as_strided_scatter", mutates_args=())
def _as_strided_scatter_op(
    input: torch.Tensor, src: torch.Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int
) -> torch.Tensor:
    r = _as_strided_scatter(_np_of(input), _np_of(src), tuple(size), tuple(stride), storage_offset)
    return _import(r)


@_as_strided_scatter_op.register_fake
def _(input, src, size, stride, storage_offset):
    return input.new_empty(input.shape)


def _addresses(size, stride, storage_offset, device):
    """int64 tensor of shape ``size``: the flat address each element of a view writes."""
    addr = torch.full((), storage_offset, dtype=torch.int64, device=device)
    for k, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[k] = n
        addr = addr + torch.arange(n, dtype=torch.int64, device=device).reshape(shape) * s
    return addr.expand(tuple(size))


def _may_overlap(size, stride):
    """False when the view provably writes each address once (sorted strides dominate inner extents)."""
    dims = sorted((abs(s), n) for n, s in zip(size, stride) if n > 1)
    extent = 1
    for s, n in dims:
        if s < extent:
            return True
        extent = s * (n - 1) + extent
    return False


def _ass_setup(ctx, inputs, output):
    _, src, size, stride, storage_offset = inputs
    ctx.view = (tuple(size), tuple(stride), storage_offset)


def _ass_backward(ctx, grad):
    size, stride, offset = ctx.view
    grad = grad.contiguous()
    addr = _addresses(size, stride, offset, grad.device)
    # src element i reaches the output only if it is the last writer of its address
    grad_src = grad.reshape(-1)[addr.reshape(-1)].reshape(size)
    if _may_overlap(size, stride):
        n = addr.numel()
        ids = torch.arange(n, dtype=torch.int64, device=grad.device)
        owner = _as_strided_scatter_op(
            torch.full((grad.numel(),), -1, dtype=torch.int64, device=grad.device),
            ids.reshape(size), size, stride, offset,
        )
        grad_src = torch.where((owner[addr.reshape(-1)] == ids).reshape(size), grad_src, 0)
    grad_input = _as_strided_scatter_op(grad, grad.new_zeros(size), size, stride, offset)
    return grad_input, grad_src, None, None, None


_as_strided_scatter_op.register_autograd(_ass_backward, setup_context=_ass_setup)


def as_strided_scatter(input, src, size, stride, storage_offset=0):
    """A copy of dense ``input`` with the strided view ``(size, stride, storage_offset)`` replaced by ``src``.

    Elements are addressed in the C-contiguous flattening of ``input``
    (``flat[storage_offset + sum(i_k * stride[k])]``), which is torch's
    storage addressing for a contiguous ``input``. Overlapping views are
    last-writer-wins in C order of ``src``. Registered as the custom op
    ``torch.ops.coosparse.as_strided_scatter`` (``torch.compile`` traces it).

    Gradients: ``grad_input`` is ``grad`` with the addressed elements zeroed
    (torch 2.13 returns the src slice instead); ``grad_src`` is
    ``grad.flatten()[addresses]``, and 0 for a src element that a later one
    overwrites.

    Examples
    --------
    >>> import torch
    >>> from coosparse.interop import torch as ct
    >>> x = torch.arange(4.0, dtype=torch.float64, requires_grad=True)
    >>> src = torch.tensor([10.0, 20.0], dtype=torch.float64, requires_grad=True)
    >>> y = ct.as_strided_scatter(x, src, (2,), (1,))
    >>> y.detach()
    tensor([10., 20.,  2.,  3.], dtype=torch.float64)
    >>> (y * torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)).sum().backward()
    >>> x.grad, src.grad
    (tensor([0., 0., 3., 4.], dtype=torch.float64), tensor([1., 2.], dtype=torch.float64))
    """
    for name, t in (("input", input), ("src", src)):
        if not _is_dense(t):
            raise TypeError(f"as_strided_scatter: {name} must be a dense (strided) torch.Tensor")
    size = tuple(operator.index(n) for n in size)
    stride = tuple(operator.index(s) for s in stride)
    storage_offset = operator.index(storage_offset)
    if len(size) != len(stride):
        raise ValueError(f"as_strided_scatter: size {size} and stride {stride} differ in length")
    if tuple(src.shape) != size:
        raise ValueError(f"as_strided_scatter: src has shape {tuple(src.shape)} but size is {size}")
    size, stride, storage_offset = _int64_view(size, stride, storage_offset, input.numel())
    if src.dtype != input.dtype:
        raise TypeError(f"as_strided_scatter: src dtype {src.dtype} differs from input dtype {input.dtype}")
    if src.device != input.device:
        raise ValueError(f"as_strided_scatter: src lives on {src.device} but input on {input.device}")
    return _as_strided_scatter_op(input, src, list(size), list(stride), storage_offset)


def _int64_view(size, stride, storage_offset, numel):
    """The view in int64 metadata (the custom op's schema), or the error the view deserves.

    A dimension of size 0 or 1 adds nothing to any address, so its stride may be
    anything (it becomes 0); an empty view addresses nothing (offset 0). Any
    other stride or offset beyond int64 addresses elements far outside ``input``:
    IndexError, as for every out-of-range view.
    """
    total = 1
    for n in size:
        total *= n
    stride = tuple(0 if n <= 1 or total == 0 else s for n, s in zip(size, stride))
    if total == 0:
        return size, stride, 0
    for k, s in enumerate(stride):
        if not -_INT64 <= s < _INT64:
            raise IndexError(
                f"as_strided_scatter: stride {s} of dimension {k} (size {size[k]}) addresses elements "
                f"outside the {numel} elements of the input"
            )
    if storage_offset >= _INT64:
        raise IndexError(
            f"as_strided_scatter: storage_offset {storage_offset} is outside the {numel} elements of the input"
        )
    return size, stride, storage_offset


_INT64 = 2**63


@torch.library.custom_op("coosparse::to_dense_parts", mutates_args=())
def _to_dense_parts_op(indices: torch.Tensor, values: torch.Tensor, shape: Sequence[int]) -> torch.Tensor:
    a = COO(_np_of(indices), _np_of(values), tuple(shape))
    return _import(a.to_dense())


@_to_dense_parts_op.register_fake
def _(indices, values, shape):
    return values.new_empty(tuple(shape))


@torch.library.custom_op("coosparse::sparse_mask_parts", mutates_args=())
def _sparse_mask_parts_op(x: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    xa = _np_of(x)
    sd = indices.shape[0]
    xp = np if isinstance(xa, np.ndarray) else __import__("cupy")
    dummy = xp.broadcast_to(xp.zeros((), dtype=xa.dtype), (indices.shape[1],) + tuple(xa.shape[sd:]))
    mask = COO(_np_of(indices), dummy, tuple(xa.shape))
    r = _sparse_mask(xa, mask).values
    t = _import(xp.ascontiguousarray(r))
    return t.clone() if t.data_ptr() == x.data_ptr() and t.numel() else t


@_sparse_mask_parts_op.register_fake
def _(x, indices):
    return x.new_empty((indices.shape[1],) + tuple(x.shape[indices.shape[0]:]))


def _tdp_setup(ctx, inputs, output):
    indices, _, shape = inputs
    ctx.save_for_backward(indices)


def _tdp_backward(ctx, grad):
    (indices,) = ctx.saved_tensors
    return None, _sparse_mask_parts_op(grad.contiguous(), indices), None


def _smp_setup(ctx, inputs, output):
    x, indices = inputs
    ctx.save_for_backward(indices)
    ctx.shape = tuple(x.shape)


def _smp_backward(ctx, grad):
    (indices,) = ctx.saved_tensors
    return _to_dense_parts_op(indices, grad.contiguous(), list(ctx.shape)), None


_to_dense_parts_op.register_autograd(_tdp_backward, setup_context=_tdp_setup)
_sparse_mask_parts_op.register_autograd(_smp_backward, setup_context=_smp_setup)


def _check_parts(indices, what, op):
    if not _is_dense(indices) or indices.dtype != torch.int64 or indices.dim() != 2:
        raise TypeError(f"{op}: {what} must be a dense int64 tensor of shape (sparse_ndim, nnz)")


def to_dense_parts(indices, values, shape):
    """Dense tensor of the COO components ``(indices, values)`` of ``shape`` (duplicates summed).

    The compile-friendly form of :func:`to_dense`: registered as the custom
    op ``torch.ops.coosparse.to_dense_parts``, so ``torch.compile(fullgraph=True)``
    traces it. Gradient for ``values``: ``grad`` gathered at each stored
    entry (every duplicate receives the gradient of its index), i.e.
    :func:`sparse_mask_parts` of ``grad``. Indices are bounds-checked.

    Examples
    --------
    >>> import torch
    >>> from coosparse.interop import torch as ct
    >>> ct.to_dense_parts(torch.tensor([[0, 2, 0]]), torch.tensor([1.0, 2.0, 3.0]), (3,))
    tensor([4., 0., 2.])
    """
    _check_parts(indices, "indices", "to_dense_parts")
    if not _is_dense(values):
        raise TypeError("to_dense_parts: values must be a dense tensor of shape (nnz, *dense_shape)")
    return _to_dense_parts_op(indices, values, [operator.index(n) for n in shape])


def sparse_mask_parts(x, indices):
    """Values of dense ``x`` at the COO ``indices`` (one row per index column, duplicates kept).

    The compile-friendly form of :func:`sparse_mask` with a dense ``x``:
    registered as ``torch.ops.coosparse.sparse_mask_parts``. The result has
    shape ``(nnz, *x.shape[sparse_ndim:])``. Gradient for ``x``: the rows of
    ``grad`` scattered back and summed (:func:`to_dense_parts`).

    Examples
    --------
    >>> import torch
    >>> from coosparse.interop import torch as ct
    >>> ct.sparse_mask_parts(torch.tensor([5.0, 6.0, 7.0]), torch.tensor([[2, 0, 2]]))
    tensor([7., 5., 7.])
    """
    if not _is_dense(x):
        raise TypeError("sparse_mask_parts: x must be a dense tensor")
    _check_parts(indices, "indices", "sparse_mask_parts")
    if indices.shape[0] > x.dim():
        raise ValueError(
            f"sparse_mask_parts: indices have {indices.shape[0]} sparse dimensions but x has only {x.dim()}"
        )
    return _sparse_mask_parts_op(x, indices)
