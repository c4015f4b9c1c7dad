"""PyTorch bridge (SPEC 6): zero-copy conversion and autograd operations on coosparse kernels.

Conversion
    :func:`from_torch` and :func:`to_torch` move the *components* of a sparse
    COO tensor (indices and values) through DLPack, so no data is copied:
    NumPy on the CPU, CuPy on CUDA. Dense tensors convert to NumPy/CuPy arrays
    the same way.

Autograd operations
    :func:`coalesce`, :func:`to_dense`, :func:`sparse_mask`,
    :func:`mask_projection`, :func:`multiply`, :func:`add`, :func:`subtract`
    and :func:`as_strided_scatter` take torch tensors (sparse COO and, where
    torch allows it, dense), compute with the coosparse kernels and return
    torch tensors. Their backward passes are coosparse kernels too.

    **Gradient layout.** The gradient of a *sparse* input ``x`` is a sparse,
    coalesced tensor with exactly the indices of ``x.coalesce()`` (``x``'s own
    indices when ``x`` is coalesced), whatever the operation and whatever the
    argument order. Its values are the derivatives with respect to the dense
    elements at those indices ("masked" semantics: unspecified elements of a
    sparse input get no gradient). This is the layout torch's own autograd
    engine and ``torch.autograd.gradcheck`` expect of a sparse gradient.
    When the sparse input is built from a values tensor that requires grad
    (``torch.sparse_coo_tensor(indices, values, ...)``), torch's constructor
    backward gathers that gradient per stored entry: every duplicate receives
    the gradient of its index.

    The gradient of a *dense* input is dense.

torch.compile
    The dense-facing operations are registered with ``torch.library.custom_op``
    (namespace ``coosparse``) with fake implementations and autograd formulas:
    :func:`as_strided_scatter`, :func:`to_dense_parts` and
    :func:`sparse_mask_parts`. The last two are ``to_dense`` and ``sparse_mask``
    on the COO *components* (an int64 indices tensor and a values tensor), the
    form in which a sparse array can cross a compiled graph. Operations taking
    or returning sparse tensors are plain autograd functions: custom ops and
    ``torch.compile`` do not trace sparse-layout tensors (FakeTensor and
    functionalization have no sparse COO support), and their output sizes
    depend on the data (``coalesce``, ``multiply(compact=True)``).
"""
from __future__ import annotations

import numbers
import operator
from typing import Sequence

import numpy as np
import torch
from torch.autograd.function import once_differentiable

import coosparse

from coosparse._coo import COO
from coosparse._intersect import multiply_sparse

__all__ = [
    "add",
    "as_strided_scatter",
    "coalesce",
    "from_torch",
    "mask_projection",
    "multiply",
    "sparse_mask",
    "sparse_mask_parts",
    "subtract",
    "to_dense",
    "to_dense_parts",
    "to_torch",
]

_SUPPORTED_TORCH_DTYPES = (
    torch.bool, torch.int8, torch.int16, torch.int32, torch.int64,
    torch.uint8, torch.uint16, torch.uint32, torch.uint64,
    torch.float16, torch.float32, torch.float64, torch.complex64, torch.complex128,
)


# ---------------------------------------------------------------------------------- conversion
def _check_tensor_dtype(t, what):
    if t.dtype not in _SUPPORTED_TORCH_DTYPES:
        names = ", ".join(str(d).replace("torch.", "") for d in _SUPPORTED_TORCH_DTYPES)
        raise TypeError(f"{what} dtype {t.dtype} has no coosparse equivalent; supported dtypes: {names}")


def _export(t, copy, what):
    """NumPy/CuPy view of the dense tensor ``t`` (a copy only where stated)."""
    t = t.detach()
    if t.is_conj() or t.is_neg():
        # lazy conjugate/negative views have no DLPack form: materialising them copies
        if copy is False:
            raise ValueError(
                f"{what} is a lazy conjugate/negated view, which cannot be shared without a copy; "
                "call .resolve_conj()/.resolve_neg() or pass copy=None"
            )
        t = t.resolve_conj().resolve_neg()
    elif copy:
        t = t.clone()
    if t.device.type == "cpu":
        return np.from_dlpack(t)
    if t.device.type == "cuda":
        import cupy

        return cupy.from_dlpack(t)
    raise ValueError(f"{what} lives on device {t.device}; coosparse supports cpu and cuda tensors")


def from_torch(t, *, copy=None, check=False):
    """A torch tensor as coosparse data, sharing its memory.

    A sparse COO tensor becomes a :class:`coosparse.COO` whose indices and
    values are NumPy (CPU) or CuPy (CUDA) views of ``t._indices()`` and
    ``t._values()`` (coalesced or not, hybrid dimensions included). Both flags
    are ``t.is_coalesced()``. A dense (strided) tensor becomes a NumPy/CuPy
    array view.

    Parameters
    ----------
    t : torch.Tensor
        Sparse COO or strided tensor, on the CPU or a CUDA device. Autograd
        history is dropped (the data are shared, the graph is not).
    copy : bool or None
        ``None`` (default): share memory, and copy only what cannot be
        shared: non-contiguous sparse indices (coosparse stores indices
        C-contiguous; torch allows e.g. transposed ones) and lazy conjugate or
        negated views. ``False``: never copy (``ValueError`` where a copy would
        be needed). ``True``: always copy.
    check : bool
        Validate the indices (bounds) and the flag with the COO constructor.
        Off by default: torch's ``is_coalesced()`` is exact unless the tensor
        was built with invariant checks off and a wrong flag.

    Returns
    -------
    coosparse.COO or numpy.ndarray or cupy.ndarray

    Examples
    --------
    >>> import torch
    >>> from coosparse.interop.torch import from_torch
    >>> t = torch.sparse_coo_tensor([[0, 2, 2]], [1.0, 2.0, 3.0], (4,))
    >>> a = from_torch(t)
    >>> a
    <COO shape=(4,) dtype=float32 nnz=3 sorted=False unique=False device=cpu>
    >>> a.values[0] = 10.0          # the memory is shared
    >>> t._values()
    tensor([10.,  2.,  3.])
    """
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"from_torch expects a torch.Tensor; got {type(t).__name__}")
    _check_tensor_dtype(t, "tensor")
    if t.layout == torch.strided:
        return _export(t, copy, "the tensor")
    if t.layout != torch.sparse_coo:
        raise TypeError(
            f"from_torch supports sparse COO and strided tensors; got layout {t.layout} "
            "(convert with .to_sparse_coo())"
        )
    indices = t._indices().detach()
    if not indices.is_contiguous():
        if copy is False:
            raise ValueError(
                f"the tensor's indices are not contiguous (strides {indices.stride()}); "
                "sharing them is impossible because coosparse stores indices C-contiguous; "
                "pass copy=None to copy them"
            )
        indices = indices.contiguous()  # the documented copy
    ind = _export(indices, copy, "the indices")
    val = _export(t._values(), copy, "the values")
    flag = bool(t.is_coalesced())
    return COO(ind, val, tuple(t.shape), sorted=flag, unique=flag, check=check)


def _import(a):
    """torch view of a NumPy/CuPy array (or NumPy scalar)."""
    if isinstance(a, np.generic):
        a = np.asarray(a)
    return torch.from_dlpack(a)


def to_torch(a):
    """coosparse data as a torch tensor, sharing its memory.

    A :class:`coosparse.COO` becomes ``torch.sparse_coo_tensor(indices, values,
    shape, is_coalesced=a.is_coalesced)`` whose ``_indices()`` and
    ``_values()`` are views of ``a.indices`` and ``a.values`` (invariant checks
    off: our flags are exact). A NumPy/CuPy array becomes a dense tensor view.

    torch has one flag. ``is_coalesced`` is ``a.is_sorted and a.is_unique``, so
    an array that is sorted but not unique, or unique but not sorted, arrives
    as ``is_coalesced=False``: :func:`from_torch` brings it back with both flags
    False (the data are unchanged; only the knowledge is lost). A coalesced
    array round-trips with both flags. NumPy arrays marked read-only arrive as
    writable tensors (DLPack carries no read-only mark into torch).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> from coosparse.interop.torch import to_torch
    >>> a = coosparse.COO([[0, 1], [1, 0]], np.array([1.0, 2.0]), (2, 2), sorted=True, unique=True)
    >>> t = to_torch(a)
    >>> t.is_coalesced(), t.to_dense()
    (True, tensor([[0., 1.],
            [2., 0.]], dtype=torch.float64))
    """
    if isinstance(a, COO):
        return torch.sparse_coo_tensor(
            _import(a.indices),
            _import(a.values),
            a.shape,
            is_coalesced=a.is_coalesced,
            check_invariants=False,
        )
    if isinstance(a, np.ndarray | np.generic) or type(a).__module__.startswith("cupy"):
        return _import(a)
    raise TypeError(f"to_torch expects a coosparse.COO or a NumPy/CuPy array; got {type(a).__name__}")


# ---------------------------------------------------------------------------------- helpers
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


# ---------------------------------------------------------------------------------- coalesce
class _Coalesce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        y = coosparse.coalesce(from_torch(x))
        ctx.pattern = y
        ctx.dtype = x.dtype
        return _out(y)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        if g is None:  # undefined output gradient
            return None
        # y has exactly the coalesced pattern of x: dx = G restricted to it
        gv = coosparse.sparse_mask(_arr(g), ctx.pattern).values
        return _sparse_grad(ctx.pattern, gv, ctx.dtype)


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
        pattern = coosparse.coalesce(ctx.a)
        gv = coosparse.sparse_mask(_arr(g), pattern).values
        return _sparse_grad(pattern, gv, ctx.dtype)


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
        return _out(coosparse.sparse_mask(xa, m))

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
            pattern = coosparse.coalesce(ctx.xa)
            gv = coosparse.sparse_mask(ga, pattern)
            gx = coosparse.mask_projection(gv, m, accumulate=True)
            return _sparse_grad(pattern, gx.values, ctx.dtype), None
        # dense x: every mask entry k read x[idx_k], so it sends G[idx_k] back there
        per_entry = coosparse.sparse_mask(ga, m).values
        back = COO(m.indices, per_entry, m.shape, sorted=m.is_sorted, unique=m.is_unique, check=False)
        return _dense_grad(back.to_dense(), ctx.dtype), None


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
        return _out(coosparse.mask_projection(xa, m, accumulate=accumulate))

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        if g is None:  # undefined output gradient
            return None, None, None
        if not ctx.needs_input_grad[0]:
            return None, None, None
        pattern = coosparse.coalesce(ctx.xa)
        gv = coosparse.sparse_mask(_arr(g), pattern)
        gx = coosparse.mask_projection(gv, ctx.m, accumulate=ctx.acc)
        return _sparse_grad(pattern, gx.values, ctx.dtype), None, None


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
    if isinstance(s, torch.Tensor):
        if s.dim() != 0 or s.layout != torch.strided:
            return None
        if s.requires_grad:
            raise NotImplementedError(f"{op}: a 0-d tensor factor that requires grad is not supported")
        return s.item()
    if isinstance(s, numbers.Number) and not isinstance(s, bool):
        return s
    return None


class _Multiply(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, compact):
        ctx.set_materialize_grads(False)
        A = _arr(a) if isinstance(a, torch.Tensor) else a
        B = _arr(b) if isinstance(b, torch.Tensor) else b
        ctx.A, ctx.B = A, B
        ctx.dtypes = (getattr(a, "dtype", None), getattr(b, "dtype", None))
        ctx.match = None
        if isinstance(A, COO) and isinstance(B, COO) and A.is_coalesced and B.is_coalesced:
            # keep the forward's match: the backward places the gradient with it
            y, ctx.match = multiply_sparse(A, B, compact, keep_match=True)
        else:
            y = coosparse.multiply(A, B, compact=compact)
        out = _out(y)
        ctx.out_indices = (out._indices().data_ptr(), out._nnz())
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
                and (g._indices().data_ptr(), g._nnz()) == ctx.out_indices):
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
                pattern = coosparse.coalesce(mine)
                gv = coosparse.sparse_mask(ga, pattern).values
                ov = coosparse.sparse_mask(other, pattern).values if not np.isscalar(other) else other
                grads.append(_sparse_grad(pattern, gv * _conj(ov), dtype))
            else:
                # dense factor, sparse other: each stored entry k of other sends G[idx_k] * conj(other_k)
                gv = coosparse.sparse_mask(ga, other).values
                back = other._with(values=gv * _conj(other.values))
                grads.append(_dense_grad(back.to_dense(), dtype))
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
    ac, bc = coosparse.coalesce(A), coosparse.coalesce(B)
    g_at_a = coosparse.sparse_mask(ga, ac).values
    pair = _with_pair(ac, ac.values, g_at_a, ac.shape)
    xp = np if isinstance(bc.values, np.ndarray) else __import__("cupy")
    mask_b = COO(bc.indices, xp.broadcast_to(xp.zeros((), bc.dtype), bc.values.shape + (2,)),
                 tuple(bc.shape) + (2,), sorted=True, unique=True, check=False)
    at_b = coosparse.sparse_mask(pair, mask_b).values
    grad_b = at_b[..., 1] * _conj(at_b[..., 0])
    b_at_a = coosparse.sparse_mask(bc, ac).values
    grad_a = g_at_a * _conj(b_at_a)
    return _sparse_grad(ac, grad_a, dtypes[0]), _sparse_grad(bc, grad_b, dtypes[1])


def multiply(a, b, *, compact=True):
    """Elementwise product with a sparse COO tensor (torch's ``a * b``), on coosparse's intersection.

    Sparse x sparse: ``compact=True`` keeps only indices present on both
    sides; ``compact=False`` keeps the source side's layout with explicit
    zeros (see SPEC 4 for which side is the source: it depends on the flags
    and nnz, never on the argument order). Sparse x dense and sparse x scalar
    multiply the stored values only and keep the sparse side's layout.
    Shapes must match exactly. Works at every shape, including
    (65536, 65536) uncoalesced x uncoalesced, where torch 2.13 crashes.

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
    if sa is not None and _is_sparse(b):
        a = sa
    elif sb is not None and _is_sparse(a):
        b = sb
    else:
        _require_tensor(a, "a", "multiply")
        _require_tensor(b, "b", "multiply")
        if not (_is_sparse(a) or _is_sparse(b)):
            raise TypeError("multiply: at least one operand must be a sparse COO tensor (use torch.mul for dense)")
        _check_same_shape(a, b, "multiply")
        if _is_sparse(a) and _is_sparse(b) and a.sparse_dim() != b.sparse_dim():
            raise ValueError(
                f"multiply: a has {a.sparse_dim()} sparse dimensions but b has {b.sparse_dim()}"
            )
    return _Multiply.apply(a, b, bool(compact))


# ---------------------------------------------------------------------------------- add / subtract
class _Add(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, alpha, coalesce):
        ctx.set_materialize_grads(False)
        A, B = _arr(a), _arr(b)
        ctx.A, ctx.B, ctx.alpha = A, B, alpha
        ctx.dtypes = (a.dtype, b.dtype)
        if alpha == 1:
            r = coosparse.add(A, B, coalesce=coalesce)
        elif alpha == -1:
            r = coosparse.subtract(A, B, coalesce=coalesce)
        else:
            Bs = B._with(values=B.values * alpha) if isinstance(B, COO) else B * alpha
            r = coosparse.add(A, Bs, coalesce=coalesce)
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
                pattern = coosparse.coalesce(X)
                gv = coosparse.sparse_mask(ga, pattern).values
                out.append(_sparse_grad(pattern, gv * _conj(factor) if factor != 1 else gv, dtype))
            else:
                # a dense operand makes the result dense, so G is dense
                gd = g if g.layout == torch.strided else g.to_dense()
                out.append((gd * _conj(factor)).to(dtype) if factor != 1 else gd.to(dtype))
        return out[0], out[1], None, None


def _add_args(a, b, op):
    _require_tensor(a, "a", op)
    _require_tensor(b, "b", op)
    if not (_is_sparse(a) or _is_sparse(b)):
        raise TypeError(f"{op}: at least one operand must be a sparse COO tensor (use torch.{op} for dense)")
    _check_same_shape(a, b, op)
    if _is_sparse(a) and _is_sparse(b) and a.sparse_dim() != b.sparse_dim():
        raise ValueError(f"{op}: a has {a.sparse_dim()} sparse dimensions but b has {b.sparse_dim()}")


def add(a, b, *, alpha=1, coalesce=False):
    """``a + alpha * b`` with at least one sparse COO operand (torch's ``torch.add``).

    Sparse + sparse: both coalesced gives a linear merge (coalesced result);
    otherwise the entries are concatenated (flag False) unless
    ``coalesce=True``. Sparse + dense returns dense. Gradients: ``G`` (times
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
    _add_args(a, b, "add")
    return _Add.apply(a, b, _alpha(alpha), bool(coalesce))


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
    _add_args(a, b, "subtract")
    return _Add.apply(a, b, -_alpha(alpha), bool(coalesce))


def _alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Number):
        raise TypeError(f"alpha must be a number; got {type(alpha).__name__}")
    return alpha


# ---------------------------------------------------------------------------------- custom ops
def _np_of(t):
    return _export(t, None, "the tensor")


@torch.library.custom_op("coosparse::as_strided_scatter", mutates_args=())
def _as_strided_scatter_op(
    input: torch.Tensor, src: torch.Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int
) -> torch.Tensor:
    r = coosparse.as_strided_scatter(_np_of(input), _np_of(src), tuple(size), tuple(stride), storage_offset)
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
    if src.dtype != input.dtype:
        raise TypeError(f"as_strided_scatter: src dtype {src.dtype} differs from input dtype {input.dtype}")
    if src.device != input.device:
        raise ValueError(f"as_strided_scatter: src lives on {src.device} but input on {input.device}")
    return _as_strided_scatter_op(input, src, list(size), list(stride), storage_offset)


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
    r = coosparse.sparse_mask(xa, mask).values
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
