"""Linear algebra on torch tensors: ``matmul`` and ``sampled_matmul`` as autograd
functions on the coosparse kernels, and their torch.compile custom ops on COO components.

Gradients (G: the incoming gradient, ``^H``: conjugate transpose):

=======================  ===================================================
``A @ B`` (A sparse)     dA = SDDMM(pattern of A.coalesce(), G, B^H);
                         dB = A^H @ G (a transposed SpMM: the COO is read
                         through its transposed index rows, no copy)
``D @ S`` (S sparse)     dD = G @ S^H (dense x COO^T); dS = SDDMM(S's
                         pattern, D^H, G)
``A @ B`` (both sparse)  dA = (G @ B^H) on A's pattern; dB = (A^H @ G) on B's
                         pattern (SpGEMM or SpMM by G's layout, then a mask)
``sampled_matmul``       dx = Gs @ y^H, dy = x^H @ Gs (Gs: the output's
                         gradient on the mask's entries)
=======================  ===================================================

Batch dimensions broadcast as in ``torch.matmul``; a gradient is summed over
the dimensions its input was broadcast along.
"""
from __future__ import annotations

import operator
from typing import Sequence

import numpy as np
import torch
from torch.autograd.function import once_differentiable

from coosparse.ops.coalesce import coalesce as _coalesce
from coosparse.ops.elementwise.intersect import sparse_mask as _sparse_mask
from coosparse.ops.linalg.core import _batch_map, _broadcast_batch, _product, _result_dtype, sparsify
from coosparse.ops.linalg.einsum import _expand_dims
from coosparse.ops.linalg.products import _conj, sddmm_rows
from coosparse.ops.linalg.products import matmul as _matmul
from coosparse.ops.linalg.products import sampled_matmul as _sampled_matmul
from coosparse._core.coo import COO
from coosparse._kernels.backend import backend_for

from ._common import _arr, _dense_grad, _is_sparse, _out, _require_tensor, _sparse_grad
from ._convert import _export, _import, from_torch
from ._graph import graph_break


# ---------------------------------------------------------------------------------- helpers
def _xp(a):
    return backend_for(a.indices if isinstance(a, COO) else a).xp


def _promote(x, side):
    """``x`` (COO or dense) with a 1-D operand made 2-D: (1, K) on the left, (K, 1) on the right."""
    if x.ndim != 1:
        return x
    if isinstance(x, COO):
        return _expand_dims(x, 0 if side == "left" else 1)
    return x.reshape(1, -1) if side == "left" else x.reshape(-1, 1)


def _unsqueeze_grad(g, a_ndim, b_ndim):
    """The output gradient (COO or dense) with the dimensions a 1-D operand removed put back."""
    if a_ndim == 1:
        g = _insert_axis(g, g.ndim - (0 if b_ndim == 1 else 1))
    if b_ndim == 1:
        g = _insert_axis(g, g.ndim)
    return g


def _insert_axis(x, axis):
    if isinstance(x, COO):
        return _expand_dims(sparsify(x), axis)
    return x.reshape(x.shape[:axis] + (1,) + x.shape[axis:])


def _sum_to(g, shape):
    """``g`` summed over the dimensions along which an operand of ``shape`` was broadcast."""
    xp = _xp(g)
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    if axes:
        g = xp.sum(g, axis=axes, keepdims=True)
        g = g.reshape(g.shape[lead:]) if lead else g
    return xp.ascontiguousarray(g.reshape(shape))


def _swap(x):
    """Conjugate transpose of the last two dims (a view for real arrays)."""
    xp = _xp(x)
    y = xp.swapaxes(x, -1, -2)
    return xp.conj(y) if y.dtype.kind == "c" else y


def _pattern(a):
    """(coalesced pattern, its sparsified form): the gradient's layout for sparse input ``a``."""
    p = _coalesce(a)
    return p, sparsify(p)


def _sampled(pattern, x, y, dtype):
    """(x @ y) at the entries of the pure-sparse ``pattern`` (batch..., M, N); x, y batch-broadcast.

    Batch dimensions along which the pattern is broadcast (size 1 or absent
    while x @ y has more) are folded into the contraction, so each entry gets
    the sum over them.
    """
    xp = _xp(x)
    nb = pattern.ndim - 2
    full = tuple(np.broadcast_shapes(x.shape[:-2], y.shape[:-2], pattern.shape[:-2]))
    big = len(full)
    pshape = (1,) * (big - nb) + tuple(pattern.shape[:-2])
    red = [d for d in range(big) if pshape[d] == 1 and full[d] != 1]
    if red:
        keep = [d for d in range(big) if d not in red]
        m, k, n = x.shape[-2], x.shape[-1], y.shape[-1]
        e = int(np.prod([full[d] for d in red]))
        lead = tuple(1 if d in red else full[d] for d in range(big))[big - nb:]
        xb = xp.broadcast_to(x, full + (m, k))
        yb = xp.broadcast_to(y, full + (k, n))
        x = xp.transpose(xb, keep + [big] + red + [big + 1]).reshape(lead + (m, e * k))
        y = xp.transpose(yb, keep + red + [big, big + 1]).reshape(lead + (e * k, n))
    be = backend_for(pattern.indices, x, y)
    rows = [pattern.indices[i] for i in range(pattern.ndim)]
    return sddmm_rows(be, rows, pattern.nnz, x, y, nb, dtype)


def _adj_left(a, g):
    """``a^H @ g`` for ``a`` (..., M, K) and ``g`` (..., M, N): the transposed product reads a's index
    rows (or strides) the other way round; nothing is transposed or copied (but complex values)."""
    return _adj_product(a, g, True)


def _adj_right(g, b):
    """``g @ b^H`` for ``g`` (..., M, N) and ``b`` (..., K, N)."""
    return _adj_product(g, b, False)


def _adj_product(x, y, left):
    nx, ny = x.ndim, y.ndim
    batch = _broadcast_batch("matmul", x.shape[:-2], y.shape[:-2])
    xmap, ymap = _batch_map(len(batch), range(nx - 2)), _batch_map(len(batch), range(ny - 2))
    if left:  # x^H @ y
        return _product(_conj(x), xmap, [nx - 1], [nx - 2], y, ymap, [ny - 2], [ny - 1], batch, "matmul")
    return _product(x, xmap, [nx - 2], [nx - 1], _conj(y), ymap, [ny - 1], [ny - 2], batch, "matmul")


def _check_matmul(a, b):
    for i, t in enumerate((a, b)):
        _require_tensor(t, "ab"[i], "matmul")
        if t.dim() == 0:
            raise ValueError(f"matmul: operand {i} is 0-d; use multiply for scalars")
    if not (_is_sparse(a) or _is_sparse(b)):
        raise TypeError("matmul: at least one operand must be a sparse COO tensor (use torch.matmul for dense)")
    if a.dtype != b.dtype:
        raise TypeError(f"matmul: operands have dtypes {a.dtype} and {b.dtype}; cast one first")
    if a.device != b.device:
        raise ValueError(f"matmul: operands live on {a.device} and {b.device}")


# ---------------------------------------------------------------------------------- matmul
class _Matmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.set_materialize_grads(False)
        aa, bb = _arr(a), _arr(b)
        ctx.aa, ctx.bb, ctx.dtypes = aa, bb, (a.dtype, b.dtype)
        return _out(_matmul(aa, bb))

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        if g is None:
            return None, None
        aa, bb = ctx.aa, ctx.bb
        ga = _arr(g)
        if isinstance(ga, COO) and not (isinstance(aa, COO) and isinstance(bb, COO)):
            ga = ga.to_dense()
        g2 = _unsqueeze_grad(ga, aa.ndim, bb.ndim)
        a2, b2 = _promote(aa, "left"), _promote(bb, "right")
        da = db = None
        if ctx.needs_input_grad[0]:
            da = _grad_left(aa, a2, b2, g2, ctx.dtypes[0])
        if ctx.needs_input_grad[1]:
            db = _grad_right(bb, a2, b2, g2, ctx.dtypes[1])
        return da, db


def _grad_left(aa, a2, b2, g2, dtype):
    """Gradient of the left operand of a @ b: G @ B^H (on A's pattern when A is sparse)."""
    if isinstance(aa, COO):
        pattern, p2 = _pattern(aa)
        p2 = _promote(p2, "left") if aa.ndim == 1 else p2
        if isinstance(b2, COO):  # G @ B^H read at A's entries
            vals = _sparse_mask(_adj_right(g2, b2), p2).values
        else:
            vals = _sampled(p2, g2, _swap(b2), p2.dtype)
        return _sparse_grad(pattern, vals.reshape(pattern.values.shape), dtype)
    # dense a: G @ B^H, then summed over a's broadcast dimensions
    r = _adj_right(g2, b2)
    r = _sum_to(r, a2.shape)
    return _dense_grad(r.reshape(aa.shape), dtype)


def _grad_right(bb, a2, b2, g2, dtype):
    """Gradient of the right operand of a @ b: A^H @ G (on B's pattern when B is sparse)."""
    if isinstance(bb, COO):
        pattern, p2 = _pattern(bb)
        p2 = _promote(p2, "right") if bb.ndim == 1 else p2
        if isinstance(a2, COO):  # A^H @ G read at B's entries
            vals = _sparse_mask(_adj_left(a2, g2), p2).values
        else:
            vals = _sampled(p2, _swap(a2), g2, p2.dtype)
        return _sparse_grad(pattern, vals.reshape(pattern.values.shape), dtype)
    r = _adj_left(a2, g2)
    r = _sum_to(r, b2.shape)
    return _dense_grad(r.reshape(bb.shape), dtype)


@graph_break
def matmul(a, b):
    """``a @ b`` with at least one sparse COO operand, on coosparse kernels, with autograd.

    Sparse x dense and dense x sparse give dense tensors; sparse x sparse a
    sparse coalesced tensor. Shapes follow ``torch.matmul`` (1-D operands,
    broadcast batch dimensions; hybrid sparse operands allowed, their dense
    dimensions taking part like any other). Both operands need one dtype.

    Gradients: dense inputs get dense gradients; a sparse input gets a
    coalesced gradient with the indices of ``input.coalesce()`` (masked
    semantics, see the module docstring of :mod:`coosparse.interop.torch`).
    For ``A @ B`` with A sparse: ``dA = SDDMM(A's pattern, G, B^H)`` and
    ``dB = A^H @ G``.

    Examples
    --------
    >>> import torch
    >>> from coosparse.interop import torch as ct
    >>> a = torch.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2), dtype=torch.float64)
    >>> b = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    >>> c = ct.matmul(a, b)
    >>> c.detach()
    tensor([[2., 2., 2.],
            [3., 3., 3.]], dtype=torch.float64)
    >>> c.sum().backward()
    >>> b.grad
    tensor([[3., 3., 3.],
            [2., 2., 2.]], dtype=torch.float64)
    """
    _check_matmul(a, b)
    if _is_sparse(a) and _is_sparse(b) and max(a.dim(), b.dim()) > 2 and (
            a.dim() != b.dim() or a.shape[:-2] != b.shape[:-2]):
        raise ValueError(f"matmul: sparse x sparse with batch dimensions needs equal batch shapes; got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    return _Matmul.apply(a, b)


# ---------------------------------------------------------------------------------- sampled_matmul
class _SampledMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, mask, x, y):
        ctx.set_materialize_grads(False)
        m = from_torch(mask)
        xa, ya = _arr(x), _arr(y)
        ctx.m, ctx.xa, ctx.ya, ctx.dtypes = m, xa, ya, (x.dtype, y.dtype)
        return _out(_sampled_matmul(m, xa, ya))

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        if g is None:
            return None, None, None
        m, xa, ya = ctx.m, ctx.xa, ctx.ya
        ga = _arr(g)
        # the gradient as a COO with the mask's entries (a dense G is read there)
        gv = _sparse_mask(ga, m).values
        gs = COO(m.indices, gv, m.shape, sorted=m.is_sorted, unique=m.is_unique, check=False)
        x2, y2 = _promote(xa, "left"), _promote(ya, "right")
        gs2 = _unsqueeze_grad(gs, xa.ndim, ya.ndim)
        dx = dy = None
        if ctx.needs_input_grad[1]:
            r = _sum_to(_adj_right(gs2, y2), x2.shape)
            dx = _dense_grad(r.reshape(xa.shape), ctx.dtypes[0])
        if ctx.needs_input_grad[2]:
            r = _sum_to(_adj_left(x2, gs2), y2.shape)
            dy = _dense_grad(r.reshape(ya.shape), ctx.dtypes[1])
        return None, dx, dy


@graph_break
def sampled_matmul(mask, x, y):
    """``x @ y`` at the indices of the sparse tensor ``mask`` (SDDMM), with autograd for x and y.

    The result has ``mask``'s indices (order and duplicates kept) and flag;
    ``mask``'s values are not used and get no gradient (torch's
    ``sampled_addmm(mask, x, y, beta=0)`` for CSR, here for any COO, batched,
    deterministic). Gradients: ``dx = Gs @ y^H``, ``dy = x^H @ Gs`` with ``Gs``
    the output gradient on the mask's entries.

    Examples
    --------
    >>> import torch
    >>> from coosparse.interop import torch as ct
    >>> mask = torch.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 1.0], (2, 2), dtype=torch.float64)
    >>> x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
    >>> y = torch.eye(2, dtype=torch.float64)
    >>> r = ct.sampled_matmul(mask, x, y)
    >>> r._values().detach(), r.requires_grad
    (tensor([2., 3.], dtype=torch.float64), True)
    """
    _require_tensor(mask, "mask", "sampled_matmul", sparse=True)
    for name, t in (("x", x), ("y", y)):
        _require_tensor(t, name, "sampled_matmul")
        if _is_sparse(t):
            raise TypeError(f"sampled_matmul: {name} must be a dense tensor")
    if x.dtype != y.dtype:
        raise TypeError(f"sampled_matmul: x and y have dtypes {x.dtype} and {y.dtype}; cast one first")
    return _SampledMatmul.apply(mask, x, y)


# ---------------------------------------------------------------------------------- custom ops
def _np(t):
    return _export(t, None, "the tensor")


def _coo2d(indices, values, shape, transpose):
    idx = _np(indices)
    if transpose:
        idx = idx[::-1]
        shape = (shape[1], shape[0])
    xp = np if isinstance(idx, np.ndarray) else __import__("cupy")
    return COO(xp.ascontiguousarray(idx), _np(values), tuple(shape))


@torch.library.custom_op("coosparse::spmm_parts", mutates_args=())
def _spmm_parts_op(indices: torch.Tensor, values: torch.Tensor, shape: Sequence[int], dense: torch.Tensor,
                   transpose: bool) -> torch.Tensor:
    a = _coo2d(indices, values, shape, transpose)
    r = _matmul(a, _np(dense))
    return _import(np.ascontiguousarray(r) if isinstance(r, np.ndarray) else r)


@_spmm_parts_op.register_fake
def _(indices, values, shape, dense, transpose):
    rows = shape[1] if transpose else shape[0]
    return dense.new_empty((rows,) + tuple(dense.shape[1:]))


@torch.library.custom_op("coosparse::sddmm_parts", mutates_args=())
def _sddmm_parts_op(indices: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    idx = _np(indices)
    xa, ya = _np(x), _np(y)
    be = backend_for(idx, xa, ya)
    rows = [idx[0], idx[1]]
    r = sddmm_rows(be, rows, idx.shape[1], xa, ya, 0, _result_dtype(xa.dtype, ya.dtype))
    return _import(r)


@_sddmm_parts_op.register_fake
def _(indices, x, y):
    return x.new_empty((indices.shape[1],))


def _conj_t(t):
    return t.conj().resolve_conj() if t.is_complex() else t


def _spmm_setup(ctx, inputs, output):
    indices, values, shape, dense, transpose = inputs
    ctx.save_for_backward(indices, values, dense)
    ctx.shape, ctx.transpose = list(shape), transpose


def _spmm_backward(ctx, grad):
    indices, values, dense = ctx.saved_tensors
    grad = grad.contiguous()
    g2 = grad.reshape(-1, 1) if grad.dim() == 1 else grad
    d2 = dense.reshape(-1, 1) if dense.dim() == 1 else dense
    gv = gd = None
    if ctx.needs_input_grad[1]:
        # out = op(A) @ D; d values[e] = sum_n G[r', n] conj(D[c', n]) with (r', c') the entry in op(A)
        idx = indices.flip(0) if ctx.transpose else indices
        gv = _sddmm_parts_op(idx.contiguous(), g2, _conj_t(d2).t())
    if ctx.needs_input_grad[3]:
        gd = _spmm_parts_op(indices, _conj_t(values), ctx.shape, grad, not ctx.transpose)
    return None, gv, None, gd, None


def _sddmm_setup(ctx, inputs, output):
    indices, x, y = inputs
    ctx.save_for_backward(indices, x, y)


def _sddmm_backward(ctx, grad):
    indices, x, y = ctx.saved_tensors
    shape = [x.shape[0], y.shape[1]]
    grad = grad.contiguous()
    gx = gy = None
    if ctx.needs_input_grad[1]:
        gx = _spmm_parts_op(indices, grad, shape, _conj_t(y).t().contiguous(), False)
    if ctx.needs_input_grad[2]:
        gy = _spmm_parts_op(indices, grad, shape, _conj_t(x).contiguous(), True).t()
    return None, gx, gy


_spmm_parts_op.register_autograd(_spmm_backward, setup_context=_spmm_setup)
_sddmm_parts_op.register_autograd(_sddmm_backward, setup_context=_sddmm_setup)


def _check_indices(indices, op):
    if not isinstance(indices, torch.Tensor) or indices.layout != torch.strided or indices.dtype != torch.int64 \
            or indices.dim() != 2 or indices.shape[0] != 2:
        raise TypeError(f"{op}: indices must be a dense int64 tensor of shape (2, nnz)")


def spmm_parts(indices, values, shape, dense, *, transpose=False):
    """``A @ dense`` (or ``A.T @ dense``) for the 2-D COO ``A = (indices, values, shape)``.

    The compile-friendly form of :func:`matmul` (sparse x dense): registered
    as ``torch.ops.coosparse.spmm_parts``, so ``torch.compile(fullgraph=True)``
    traces it. ``values`` and ``dense`` need one dtype; ``dense`` is 1-D or
    2-D. Gradients: ``values`` gets the SDDMM ``G @ dense^H`` at the entries,
    ``dense`` gets ``A^H @ G`` (the same op with ``transpose`` flipped).

    Examples
    --------
    >>> import torch
    >>> from coosparse.interop import torch as ct
    >>> ct.spmm_parts(torch.tensor([[0, 1], [1, 0]]), torch.tensor([2.0, 3.0]), (2, 2), torch.ones(2))
    tensor([2., 3.])
    """
    _check_indices(indices, "spmm_parts")
    shape = [operator.index(n) for n in shape]
    if len(shape) != 2:
        raise ValueError(f"spmm_parts: shape must be 2-D; got {tuple(shape)}")
    if not isinstance(dense, torch.Tensor) or dense.layout != torch.strided or dense.dim() not in (1, 2):
        raise TypeError("spmm_parts: dense must be a 1-D or 2-D dense tensor")
    if values.dtype != dense.dtype:
        raise TypeError(f"spmm_parts: values and dense have dtypes {values.dtype} and {dense.dtype}")
    inner = shape[0] if transpose else shape[1]
    if dense.shape[0] != inner:
        raise ValueError(f"spmm_parts: a sparse operand of shape {tuple(shape)}{'.T' if transpose else ''} "
                         f"cannot multiply dense of shape {tuple(dense.shape)}")
    return _spmm_parts_op(indices, values, shape, dense, bool(transpose))


def sddmm_parts(indices, x, y):
    """Values of ``x @ y`` at the 2-D COO ``indices`` (one per entry, duplicates kept).

    The compile-friendly form of :func:`sampled_matmul`: registered as
    ``torch.ops.coosparse.sddmm_parts``. ``x`` (M, K) and ``y`` (K, N) need
    one dtype. Gradients: ``x`` gets ``Gs @ y^H`` and ``y`` gets ``x^H @ Gs``
    (:func:`spmm_parts` with the entry gradients as values).

    Examples
    --------
    >>> import torch
    >>> from coosparse.interop import torch as ct
    >>> ct.sddmm_parts(torch.tensor([[0, 1], [1, 0]]), torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.eye(2))
    tensor([2., 3.])
    """
    _check_indices(indices, "sddmm_parts")
    for name, t in (("x", x), ("y", y)):
        if not isinstance(t, torch.Tensor) or t.layout != torch.strided or t.dim() != 2:
            raise TypeError(f"sddmm_parts: {name} must be a 2-D dense tensor")
    if x.dtype != y.dtype:
        raise TypeError(f"sddmm_parts: x and y have dtypes {x.dtype} and {y.dtype}")
    if x.shape[1] != y.shape[0]:
        raise ValueError(f"sddmm_parts: x of shape {tuple(x.shape)} and y of shape {tuple(y.shape)} cannot be multiplied")
    return _sddmm_parts_op(indices, x, y)
