"""Conversion between torch tensors and coosparse data through DLPack (no copies)."""
from __future__ import annotations

import numpy as np
import torch

from coosparse._core.coo import COO
from coosparse._core.fill import require_zero_fill
from coosparse._core.keys import strides_of
from coosparse._kernels.backend import array_namespace
from ._graph import graph_break

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
    _check_tensor_dtype(t, what)
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


@graph_break
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
    >>> _ = t._values()[0].fill_(10.0)   # the memory is shared (the COO's own view is read-only)
    >>> a.values
    array([10.,  2.,  3.], dtype=float32)
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
    """torch view of a NumPy/CuPy array (or NumPy scalar); a copy where torch cannot share it.

    torch has no negative strides (``torch.from_dlpack`` aborts the process on
    them) and no byte-swapped dtypes: such arrays are copied to a C-contiguous
    native-order array first. A C-contiguous array whose length-1 axes carry
    other strides (``v[::2]`` of two rows) is re-viewed with the usual strides:
    torch's sparse ``Tensor.to(dtype)`` keeps those strides, allocates the new
    values for the usual ones and reads and writes past them (garbage values,
    heap corruption).
    """
    if isinstance(a, np.generic):
        a = np.asarray(a)
    if any(s < 0 for s in a.strides) or not a.dtype.isnative:
        xp = array_namespace(a)
        a = xp.ascontiguousarray(a, dtype=a.dtype.newbyteorder("="))
    elif a.flags.c_contiguous and a.ndim > 1 and a.strides != tuple(s * a.itemsize for s in strides_of(a.shape)[0]):
        a = a.reshape(-1).reshape(a.shape)  # a view: C-contiguous data reshape without a copy
    return torch.from_dlpack(a)


@graph_break
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
        require_zero_fill("to_torch", a)
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
