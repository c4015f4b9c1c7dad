"""asarray: a COO from any array a user has (Array API ``asarray``)."""
from __future__ import annotations

import numpy as np

from .._core import dtypes as _dtypes
from .._core.coo import COO
from .._core.device import normal_device, parse_device, to_device
from .._core.dispatch import foreign_kind, from_foreign, sparse_operand
from .._kernels.backend import is_device_array
from .dense import from_dense


def asarray(x, *, device=None, dtype=None, sparse_ndim=None, copy=None):
    """A COO array from ``x``, optionally moved to ``device`` (Array API ``asarray``).

    Parameters
    ----------
    x : COO, scipy.sparse array/matrix, torch tensor, or dense array_like
        (NumPy, CuPy, nested lists, Python scalars). A COO is returned as is
        (no copy) unless ``device``/``dtype``/``copy`` ask for a change;
        scipy inputs go through :func:`coosparse.from_scipy`; sparse torch
        tensors through ``coosparse.interop.torch.from_torch``; dense inputs
        through :func:`coosparse.from_dense` (non-zeros and negative zeros,
        coalesced: the dense form keeps every bit).
    device : {None, 'cpu', 'cuda', 'cuda:N'}
        Where the result lives; None keeps ``x``'s device (the CPU for lists
        and scipy inputs).
    dtype : dtype, optional
        dtype of the result (Python values are converted to it directly, as
        ``numpy.asarray`` does).
    sparse_ndim : int, optional
        For dense inputs: how many leading dimensions are sparse (hybrid COO).
    copy : {None, True, False}
        True: the result never shares memory with ``x``. False: never copy,
        ValueError when a copy is needed (any conversion of a non-COO input,
        a dtype change, a device move). None: copy only when needed.

    Returns
    -------
    COO

    Notes
    -----
    Moving between the CPU and a GPU copies, and a copy to the CPU
    synchronises; staying on one device does not.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[0, 2], [3, 0]]))
    >>> a.indices, a.values, a.device
    (array([[0, 1],
           [1, 0]]), array([2, 3]), 'cpu')
    >>> coosparse.asarray(a, device="cpu") is a
    True
    >>> coosparse.asarray([0.0, 1.5], dtype=np.float32).values
    array([1.5], dtype=float32)
    """
    if device is not None:
        parse_device(device)  # ValueError before any work
    if isinstance(x, COO):
        a = x
        if copy is False and ((dtype is not None and np.dtype(dtype) != a.dtype) or
                              (device is not None and normal_device(device) != a.device)):
            raise ValueError("asarray(copy=False): the dtype or device change needs a copy")
        if dtype is not None:
            a = a.astype(dtype, copy=False)
        if device is not None:
            a = to_device(a, device)
        return a.copy() if copy and a is x else a
    if copy is False:
        raise ValueError(
            f"asarray(copy=False): a COO built from {type(x).__name__} never shares its memory"
        )
    kind = foreign_kind(x)
    if kind is not None:  # scipy.sparse, torch: through their bridges (coosparse.interop)
        a = from_foreign(x, kind)
        if not isinstance(a, COO):  # a dense torch tensor comes back as a dense array
            a = from_dense(a, sparse_ndim=sparse_ndim, signed_zeros=True)
    else:
        if isinstance(x, np.ma.MaskedArray):
            _dtypes.native(x)  # TypeError: the mask would be lost
        if not (isinstance(x, np.ndarray) or is_device_array(x)):
            x = np.asarray(x, dtype=None if dtype is None else np.dtype(dtype))
        a = from_dense(x, sparse_ndim=sparse_ndim, signed_zeros=True)
    if dtype is not None:
        a = a.astype(dtype, copy=False)
    if device is not None:
        a = to_device(a, device)
    return a


def as_coo(x, op):
    """``x`` as a COO: these functions take what their NumPy namesakes take (a dense array or
    list is converted with :func:`coosparse.asarray`, a scipy.sparse or pydata/sparse array
    with its bridge), as pydata/sparse's do; other types are a TypeError naming ``op``."""
    x = sparse_operand(x)
    if isinstance(x, COO):
        return x
    if isinstance(x, (np.ndarray, np.generic, list, tuple, int, float, complex)) or is_device_array(x):
        return asarray(x)
    raise TypeError(f"{op} expects an array (a coosparse.COO or array_like); got {type(x).__name__}")
