"""Autograd functions on coosparse kernels: coalesce, to_dense, sparse_mask, mask_projection,
multiply, add and subtract (sparse COO and dense torch tensors)."""
from __future__ import annotations

import numbers

import numpy as np
import torch
from torch.autograd.function import once_differentiable

from coosparse.ops.coalesce import coalesce as _coalesce
from coosparse.ops.elementwise.arithmetic import add as _add
from coosparse.ops.elementwise.arithmetic import multiply as _multiply
from coosparse.ops.elementwise.arithmetic import subtract as _subtract
from coosparse.ops.elementwise.intersect import mask_projection as _mask_projection
from coosparse.ops.elementwise.intersect import sparse_mask as _sparse_mask
from coosparse._core.coo import COO
from coosparse._kernels.backend import array_namespace
from coosparse.ops.elementwise.intersect import multiply_sparse

from ._common import (
    _arr, _check_same_shape, _conj, _dense_grad, _is_sparse, _out, _promote,
    _require_tensor, _sparse_grad, _torch_scalar,
)
from ._convert import from_torch
from ._graph import graph_break

# ---------------------------------------------------------------------------------- coalesce
class _Coalesce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        y = _coalesce(from_torch(x))
        ctx.pattern = y
        ctx.dtype = x.dtype
        return _out(y)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        if g is None:  # undefined output gradient
            return None
        # y has exactly the coalesced pattern of x: dx = G restricted to it
        gv = _sparse_mask(_arr(g), ctx.pattern).values
        return _sparse_grad(ctx.pattern, gv, ctx.dtype)


@graph_break
def coalesce(x):
    """Sorted, duplicate-free copy of the sparse tensor ``x`` (coosparse's deterministic coalesce).

    Duplicates are summed in their stored order (bit-identical from run to
    run and between CPU and GPU); ``x.coalesce()`` in torch sums in an
    unspecified order. An already-coalesced tensor comes back with the same
    indices and values (shared). Gradient: coalesced, with the result's
    indices (which are ``x.coalesce()``'s); through a values tensor every
    duplicate receives the gradient of its index.

    Examples
    --------
    >>> import torch
    >>> from coosparse.interop import torch as ct
    >>> x = torch.sparse_coo_tensor([[3, 1, 3]], [1.0, 2.0, 4.0], (5,))
    >>> y = ct.coalesce(x)
    >>> y._indices(), y._values(), y.is_coalesced()
    (tensor([[1, 3]]), tensor([2., 5.]), True)
    """
    _require_tensor(x, "x", "coalesce", sparse=True)
    return _Coalesce.apply(x)


# ---------------------------------------------------------------------------------- to_dense
class _ToDense(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        a = from_torch(x)
        ctx.a = a
        ctx.dtype = x.dtype
        return _out(a.to_dense())

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        if g is None:  # undefined output gradient
            return None
        pattern = _coalesce(ctx.a)
        gv = _sparse_mask(_arr(g), pattern).values
        return _sparse_grad(pattern, gv, ctx.dtype)


@graph_break
def to_dense(x):
    """Dense tensor equal to the sparse tensor ``x`` (duplicates summed, in stored order).

    Gradient: ``grad`` at the indices of ``x.coalesce()`` (a coalesced sparse tensor).

    Examples
    --------
    >>> import torch
    >>> from coosparse.interop import torch as ct
    >>> v = torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64, requires_grad=True)
    >>> x = torch.sparse_coo_tensor([[3, 1, 3]], v, (5,))
    >>> d = ct.to_dense(x)
    >>> d
    tensor([0., 2., 0., 5., 0.], dtype=torch.float64, grad_fn=<_ToDenseBackward>)
    >>> (d * torch.arange(5.0, dtype=torch.float64)).sum().backward()
    >>> v.grad                       # each duplicate gets its index's gradient
    tensor([3., 1., 3.], dtype=torch.float64)
    """
    _require_tensor(x, "x", "to_dense", sparse=True)
    return _ToDense.apply(x)


# ---------------------------------------------------------------------------------- sparse_mask
class _SparseMask(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, mask):
        ctx.set_materialize_grads(False)
        xa = _arr(x)
        m = from_torch(mask)
        ctx.xa, ctx.m, ctx.dtype = xa, m, x.dtype
        return _out(_sparse_mask(xa, m))

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        if g is None:  # undefined output gradient
            return None, None
        if not ctx.needs_input_grad[0]:
            return None, None
        ga = _arr(g)
        m = ctx.m
        if isinstance(ctx.xa, COO):
            # each stored x index j gets G[j] times the number of mask entries at j
            pattern = _coalesce(ctx.xa)
            gv = _sparse_mask(ga, pattern)
            gx = _mask_projection(gv, m, accumulate=True)
            return _sparse_grad(pattern, gx.values, ctx.dtype), None
        # dense x: every mask entry k read x[idx_k], so it sends G[idx_k] back there
        per_entry = _sparse_mask(ga, m).values
        back = COO(m.indices, per_entry, m.shape, sorted=m.is_sorted, unique=m.is_unique, check=False)
        return _dense_grad(back.to_dense(), ctx.dtype), None


@graph_break
def sparse_mask(x, mask):
    """``x`` at the indices of the sparse tensor ``mask`` (torch's ``x.sparse_mask(mask)``).

    The result has exactly ``mask``'s indices (order and duplicates kept) and
    ``mask``'s flag; each value is ``x`` at that index (the sum of ``x``'s
    duplicates; zero where ``x`` stores nothing). ``x`` may be dense or sparse
    COO, with ``mask``'s shape. ``mask``'s values are not used and get no
    gradient. Gradient for ``x``: ``G[j]`` times the number of ``mask``
    entries at ``j`` (sparse ``x``: at the indices of ``x.coalesce()``;
    dense ``x``: dense).

    Examples
    --------
    >>> import torch
    >>> from coosparse.interop import torch as ct
    >>> x = torch.arange(5.0)
    >>> mask = torch.sparse_coo_tensor([[4, 1, 4]], [1.0, 1.0, 1.0], (5,))
    >>> ct.sparse_mask(x, mask)._values()
    tensor([4., 1., 4.])
    """
    _require_tensor(x, "x", "sparse_mask")
    _require_tensor(mask, "mask", "sparse_mask", sparse=True)
    _check_same_shape(x, mask, "sparse_mask", "x", "mask")
    if _is_sparse(x) and x.sparse_dim() != mask.sparse_dim():
        raise ValueError(
            f"sparse_mask: x has {x.sparse_dim()} sparse dimensions but mask has {mask.sparse_dim()}"
        )
    return _SparseMask.apply(x, mask)


# ---------------------------------------------------------------------------------- mask_projection
class _MaskProjection(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, mask, accumulate):
        ctx.set_materialize_grads(False)
        xa = from_torch(x)
        m = from_torch(mask)
        ctx.xa, ctx.m, ctx.acc, ctx.dtype = xa, m, accumulate, x.dtype
        return _out(_mask_projection(xa, m, accumulate=accumulate))

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        if g is None:  # undefined output gradient
            return None, None, None
        if not ctx.needs_input_grad[0]:
            return None, None, None
        pattern = _coalesce(ctx.xa)
        gv = _sparse_mask(_arr(g), pattern)
        gx = _mask_projection(gv, ctx.m, accumulate=ctx.acc)
        return _sparse_grad(pattern, gx.values, ctx.dtype), None, None


@graph_break
def mask_projection(x, mask, *, accumulate=False):
    """The sparse tensor ``x`` with values kept where ``mask`` has the index, else 0.

    The reverse of :func:`sparse_mask` (torch's internal
    ``x._sparse_mask_projection(mask, accumulate_matches)``): the result has
    ``x``'s indices and flag; a value is ``x``'s value where ``mask`` stores
    the index (times the number of matches when ``accumulate``), else 0.
    Gradient for ``x``: ``G[j]`` times the same factor, at the indices of
    ``x.coalesce()``.

    Examples
    --------
    >>> import torch
    >>> from coosparse.interop import torch as ct
    >>> x = torch.sparse_coo_tensor([[0, 1, 2]], [1.0, 2.0, 3.0], (4,))
    >>> mask = torch.sparse_coo_tensor([[2, 0, 2]], [1.0, 1.0, 1.0], (4,))
    >>> ct.mask_projection(x, mask, accumulate=True)._values()
    tensor([1., 0., 6.])
    """
    _require_tensor(x, "x", "mask_projection", sparse=True)
    _require_tensor(mask, "mask", "mask_projection", sparse=True)
    _check_same_shape(x, mask, "mask_projection", "x", "mask")
    if x.sparse_dim() != mask.sparse_dim():
        raise ValueError(
            f"mask_projection: x has {x.sparse_dim()} sparse dimensions but mask has {mask.sparse_dim()}"
        )
    return _MaskProjection.apply(x, mask, bool(accumulate))


# ---------------------------------------------------------------------------------- multiply
def _scalar(s, op):
    s = _torch_scalar(s)
    if isinstance(s, torch.Tensor) and s.requires_grad:
        raise NotImplementedError(f"{op}: a 0-d tensor factor that requires grad is not supported")
    return s


def _one_value(x):
    """A scalar factor, or a dense one of one element (which broadcasts as a scalar)."""
    return np.isscalar(x) or (not isinstance(x, COO) and getattr(x, "size", 0) == 1)


class _Multiply(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, compact):
        ctx.set_materialize_grads(False)
        A = _arr(a) if isinstance(a, torch.Tensor) else a
        B = _arr(b) if isinstance(b, torch.Tensor) else b
        ctx.A, ctx.B = A, B
        ctx.dtypes = (getattr(a, "dtype", None), getattr(b, "dtype", None))
        ctx.shapes = (tuple(getattr(a, "shape", ())), tuple(getattr(b, "shape", ())))
        ctx.match = None
        if isinstance(A, COO) and isinstance(B, COO) and A.is_coalesced and B.is_coalesced:
            # keep the forward's match: the backward places the gradient with it
            y, ctx.match = multiply_sparse(A, B, compact, keep_match=True)
        elif isinstance(A, COO) != isinstance(B, COO) and _one_value(B if isinstance(A, COO) else A):
            # torch multiplies each stored value by a scalar factor, duplicates one by one and the
            # layout kept; coosparse's multiply sums duplicates first where the factor is inf or NaN
            coo, f = (A, B) if isinstance(A, COO) else (B, A)
            y = coo._with(values=coo.values * (f if np.isscalar(f) else f.reshape(())))
        else:
            y = _multiply(A, B, compact=compact)
        out = _out(y)
        # the indices tensor itself, not only its address: while it is alive its memory cannot be
        # reused by a gradient with other indices that would then pass the check below
        ctx.out_indices = out._indices()
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        if g is None:  # undefined output gradient
            return None, None, None
        ga = _arr(g)
        A, B = ctx.A, ctx.B
        need_a, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        if (ctx.match is not None and g.layout == torch.sparse_coo
                and g._nnz() == ctx.out_indices.shape[1]
                and g._indices().data_ptr() == ctx.out_indices.data_ptr()):
            # the usual case: the gradient has the output's own indices, so the forward's match
            # places every gradient value; no new matching
            return (*_multiply_grads_from_match(ga, A, B, ctx.match, ctx.dtypes, need_a, need_b), None)
        if isinstance(A, COO) and isinstance(B, COO) and need_a and need_b:
            return (*_multiply_sparse_grads(ga, A, B, ctx.dtypes), None)
        grads = []
        for mine, other, dtype, needed in ((A, B, ctx.dtypes[0], need_a), (B, A, ctx.dtypes[1], need_b)):
            if not needed:
                grads.append(None)
            elif isinstance(mine, COO):
                # d(a*b)/da = G * conj(b), on a's coalesced pattern
                pattern = _coalesce(mine)
                gv = _sparse_mask(ga, pattern).values
                if np.isscalar(other):
                    ov = other
                elif isinstance(other, COO):
                    ov = _sparse_mask(other, pattern).values
                else:  # a dense factor may broadcast against the sparse one
                    ov = _sparse_mask(array_namespace(other).broadcast_to(other, mine.shape), pattern).values
                grads.append(_sparse_grad(pattern, gv * _conj(ov), dtype))
            else:
                # dense factor, sparse other: each stored entry k of other sends G[idx_k] * conj(other_k)
                gv = _sparse_mask(ga, other).values
                back = other._with(values=gv * _conj(other.values))
                gd = _dense_grad(back.to_dense(), dtype)
                grads.append(gd.sum_to_size(ctx.shapes[len(grads)]) if tuple(gd.shape) != ctx.shapes[len(grads)] else gd)
        return grads[0], grads[1], None


def _multiply_grads_from_match(ga, A, B, info, dtypes, need_a, need_b):
    """Both gradients of coalesced * coalesced when G has the output's indices.

    Output entry i is source row ``rows[i]`` (``i`` without compaction) times probe
    entry ``first[i]`` (when ``count[i]``), so G's values scatter straight onto the
    inputs' own (coalesced) layouts.
    """
    a_is_src, rows, first, count = info
    src, probe = (A, B) if a_is_src else (B, A)
    xp = np if isinstance(src.values, np.ndarray) else __import__("cupy")
    gv = ga.values
    if rows is None:  # compact=False: every source row, unmatched ones get nothing from the probe
        hit = count > 0
        srows = xp.nonzero(hit)[0]
        gv, pos = gv[hit], first[hit]
    else:
        srows, pos = rows, first
    out = {}
    if (need_a if a_is_src else need_b):
        g = xp.zeros(src.values.shape, dtype=np.result_type(gv.dtype, probe.dtype))
        g[srows] = gv * _conj(probe.values[pos])
        out["src"] = g
    if (need_b if a_is_src else need_a):
        g = xp.zeros(probe.values.shape, dtype=np.result_type(gv.dtype, src.dtype))
        g[pos] = gv * _conj(src.values[srows])
        out["probe"] = g
    ka, kb = ("src", "probe") if a_is_src else ("probe", "src")
    grad_a = _sparse_grad(A, out[ka], dtypes[0]) if ka in out else None
    grad_b = _sparse_grad(B, out[kb], dtypes[1]) if kb in out else None
    return grad_a, grad_b


def _with_pair(pattern, first, second, shape):
    """COO with ``pattern``'s indices and values ``stack([first, second], -1)`` (one extra dense dim)."""
    dt = np.result_type(first.dtype, second.dtype)
    xp = np if isinstance(first, np.ndarray) else __import__("cupy")
    vals = xp.stack([first.astype(dt, copy=False), second.astype(dt, copy=False)], axis=-1)
    return COO(pattern.indices, vals, tuple(shape) + (2,), sorted=pattern.is_sorted,
               unique=pattern.is_unique, check=False)


def _multiply_sparse_grads(ga, A, B, dtypes):
    """Both gradients of sparse * sparse with three matchings instead of four.

    ``G@a`` (G at a's indices) and ``a`` share a layout, so one match of the
    pair against ``b`` yields both ``A@b`` and ``G@b``. ``G@a`` is exact for
    any G; ``G@b`` is only needed where b stores something.
    """
    ac, bc = _coalesce(A), _coalesce(B)
    g_at_a = _sparse_mask(ga, ac).values
    pair = _with_pair(ac, ac.values, g_at_a, ac.shape)
    xp = np if isinstance(bc.values, np.ndarray) else __import__("cupy")
    mask_b = COO(bc.indices, xp.broadcast_to(xp.zeros((), bc.dtype), bc.values.shape + (2,)),
                 tuple(bc.shape) + (2,), sorted=True, unique=True, check=False)
    at_b = _sparse_mask(pair, mask_b).values
    grad_b = at_b[..., 1] * _conj(at_b[..., 0])
    b_at_a = _sparse_mask(bc, ac).values
    grad_a = g_at_a * _conj(b_at_a)
    return _sparse_grad(ac, grad_a, dtypes[0]), _sparse_grad(bc, grad_b, dtypes[1])


@graph_break
def multiply(a, b, *, compact=True):
    """Elementwise product with a sparse COO tensor (torch's ``a * b``), on coosparse's intersection.

    Sparse x sparse: ``compact=True`` keeps only indices present on both
    sides; ``compact=False`` keeps the source side's layout with explicit
    zeros (see SPEC 4 for which side is the source: it depends on the flags
    and nnz, never on the argument order). Sparse x dense and sparse x scalar
    multiply the stored values only and keep the sparse side's layout.
    Works at every shape, including (65536, 65536) uncoalesced x uncoalesced,
    where torch 2.13 crashes.

    Follows torch, not NumPy: the result dtype is ``torch.result_type(a, b)``
    (int64 sparse times ``1.0`` is float32, float16 times int64 float16),
    Python scalars of every kind are accepted (``bool`` included) and
    converted as torch converts them (integer overflow wraps: int8 times 1000
    multiplies by -24). Sparse x sparse needs equal shapes and sparse
    dimensions; a dense operand broadcasts against the sparse one as in torch
    (``(3, 4)`` sparse times ``(4,)`` or ``(3, 1)`` dense), except that the
    result keeps the sparse operand's shape: where torch would grow it
    (``(3,)`` sparse times ``(2, 3)`` dense) a ``ValueError`` says so.

    Gradients: ``G * conj(other)`` on the indices of ``a.coalesce()`` (sparse
    ``a``) or dense (dense ``a``); the same for ``b``.

    Examples
    --------
    >>> import torch
    >>> from coosparse.interop import torch as ct
    >>> a = torch.sparse_coo_tensor([[0, 1, 3]], [1.0, 2.0, 3.0], (4,)).coalesce()
    >>> b = torch.sparse_coo_tensor([[1, 2, 3]], [10.0, 20.0, 30.0], (4,)).coalesce()
    >>> ct.multiply(a, b).to_dense()
    tensor([ 0., 20.,  0., 90.])
    """
    sa, sb = _scalar(a, "multiply"), _scalar(b, "multiply")
    if not ((sa is not None and _is_sparse(b)) or (sb is not None and _is_sparse(a))):
        _require_tensor(a, "a", "multiply")
        _require_tensor(b, "b", "multiply")
        if not (_is_sparse(a) or _is_sparse(b)):
            raise TypeError("multiply: at least one operand must be a sparse COO tensor (use torch.mul for dense)")
        if _is_sparse(a) and _is_sparse(b):
            _check_same_shape(a, b, "multiply")
            if a.sparse_dim() != b.sparse_dim():
                raise ValueError(
                    f"multiply: a has {a.sparse_dim()} sparse dimensions but b has {b.sparse_dim()}"
                )
        else:
            _check_dense_broadcast(a if _is_sparse(a) else b, b if _is_sparse(a) else a, "multiply")
    _, a, b = _promote(a, b, "multiply")
    return _Multiply.apply(a, b, bool(compact))


def _check_dense_broadcast(s, d, op):
    """A dense operand must broadcast to the sparse one's shape (the sparse shape is kept)."""
    try:
        shape = tuple(torch.broadcast_shapes(tuple(s.shape), tuple(d.shape)))
    except RuntimeError:
        raise ValueError(f"{op}: shapes {tuple(s.shape)} (sparse) and {tuple(d.shape)} (dense) do not "
                         "broadcast together") from None
    if shape != tuple(s.shape):
        raise ValueError(
            f"{op}: the sparse operand of shape {tuple(s.shape)} and the dense one of shape "
            f"{tuple(d.shape)} broadcast to {shape}; torch would grow the sparse operand, coosparse "
            "keeps its shape (broadcast the sparse tensor first, or multiply densely)"
        )


# ---------------------------------------------------------------------------------- add / subtract
class _Add(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, alpha, coalesce):
        ctx.set_materialize_grads(False)
        A, B = _arr(a), _arr(b)
        ctx.A, ctx.B, ctx.alpha = A, B, alpha
        ctx.dtypes = (a.dtype, b.dtype)
        if alpha == 1:
            r = _add(A, B, coalesce=coalesce)
        elif alpha == -1:
            r = _subtract(A, B, coalesce=coalesce)
        else:
            Bs = B._with(values=B.values * alpha) if isinstance(B, COO) else B * alpha
            r = _add(A, Bs, coalesce=coalesce)
        if isinstance(r, COO) and not (isinstance(A, COO) and isinstance(B, COO)):
            # a one-element dense operand is broadcast into the fill; sparse + dense is dense
            r = r.to_dense()
        return _out(r)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        if g is None:  # undefined output gradient
            return None, None, None, None
        ga = _arr(g)
        out = []
        for X, factor, dtype, needed in (
            (ctx.A, 1, ctx.dtypes[0], ctx.needs_input_grad[0]),
            (ctx.B, ctx.alpha, ctx.dtypes[1], ctx.needs_input_grad[1]),
        ):
            if not needed:
                out.append(None)
            elif isinstance(X, COO):
                pattern = _coalesce(X)
                gv = _sparse_mask(ga, pattern).values
                out.append(_sparse_grad(pattern, gv * _conj(factor) if factor != 1 else gv, dtype))
            else:
                # a dense operand makes the result dense, so G is dense
                gd = g if g.layout == torch.strided else g.to_dense()
                out.append((gd * _conj(factor)).to(dtype) if factor != 1 else gd.to(dtype))
        return out[0], out[1], None, None


def _add_args(a, b, alpha, op):
    """Checked operands cast to ``torch.result_type(a, b)``, and ``alpha`` as torch takes it."""
    _require_tensor(a, "a", op)
    _require_tensor(b, "b", op)
    if not (_is_sparse(a) or _is_sparse(b)):
        raise TypeError(f"{op}: at least one operand must be a sparse COO tensor (use torch.{op} for dense)")
    _check_same_shape(a, b, op)
    if _is_sparse(a) and _is_sparse(b) and a.sparse_dim() != b.sparse_dim():
        raise ValueError(f"{op}: a has {a.sparse_dim()} sparse dimensions but b has {b.sparse_dim()}")
    dtype, _, _ = _promote(a, b, op)
    # both stay tensors (_promote turns a 0-d dense tensor into a Python scalar, which would
    # reach from_torch, and drop its gradient): 0-d sparse + 0-d dense is a valid pair
    a, b = (x if x.dtype == dtype else x.to(dtype) for x in (a, b))
    alpha = _alpha(alpha)
    # torch's rules for alpha: no float alpha for integral results, no complex one for real results
    if isinstance(alpha, complex) and not dtype.is_complex:
        raise TypeError(f"{op}: a complex alpha needs complex operands; the result dtype is {dtype}")
    if isinstance(alpha, float) and not (dtype.is_floating_point or dtype.is_complex):
        raise TypeError(f"{op}: for integral operands (result dtype {dtype}) alpha must not be a float")
    if alpha != 1 and alpha != -1:
        try:  # as torch: an alpha the result dtype cannot hold is refused, not wrapped
            alpha = torch.tensor(alpha, dtype=dtype).item()
        except RuntimeError:
            raise ValueError(f"{op}: alpha {alpha} does not fit the result dtype {dtype}") from None
    return a, b, alpha


@graph_break
def add(a, b, *, alpha=1, coalesce=False):
    """``a + alpha * b`` with at least one sparse COO operand (torch's ``torch.add``).

    Sparse + sparse: both coalesced gives a linear merge (coalesced result);
    otherwise the entries are concatenated (flag False) unless
    ``coalesce=True``. Sparse + dense returns dense. The result dtype is
    torch's (``torch.result_type(a, b)``: int64 + float32 is float32), and
    ``alpha`` follows torch's rules (no float alpha for integer operands, and
    an alpha the result dtype cannot hold is refused). Gradients: ``G`` (times
    ``alpha`` for ``b``) on the indices of ``x.coalesce()`` for a sparse
    input, dense for a dense one.

    Examples
    --------
    >>> import torch
    >>> from coosparse.interop import torch as ct
    >>> a = torch.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (4,)).coalesce()
    >>> b = torch.sparse_coo_tensor([[2, 3]], [10.0, 20.0], (4,)).coalesce()
    >>> y = ct.add(a, b)
    >>> y._indices(), y._values(), y.is_coalesced()
    (tensor([[0, 2, 3]]), tensor([ 1., 12., 20.]), True)
    """
    a, b, alpha = _add_args(a, b, alpha, "add")
    return _Add.apply(a, b, alpha, bool(coalesce))


@graph_break
def subtract(a, b, *, alpha=1, coalesce=False):
    """``a - alpha * b`` with at least one sparse COO operand; see :func:`add`.

    Examples
    --------
    >>> import torch
    >>> from coosparse.interop import torch as ct
    >>> a = torch.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (4,)).coalesce()
    >>> ct.subtract(a, a).to_dense()
    tensor([0., 0., 0., 0.])
    """
    a, b, alpha = _add_args(a, b, alpha, "subtract")
    return _Add.apply(a, b, -alpha, bool(coalesce))


def _alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Number):
        raise TypeError(f"alpha must be a number; got {type(alpha).__name__}")
    if isinstance(alpha, numbers.Integral):
        return int(alpha)
    if isinstance(alpha, numbers.Real):
        return float(alpha)
    return complex(alpha)
