"""Moving arrays between the CPU and CUDA devices."""
from __future__ import annotations

import numpy as np


def _parse(device):
    d = str(device)
    if d == "cpu":
        return "cpu", None
    if d == "cuda":
        return "cuda", None
    if d.startswith("cuda:") and d[5:].isdigit():
        return "cuda", int(d[5:])
    raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N'; got {device!r}")


def to_device(a, device):
    """Copy of COO ``a`` on ``device`` (``a`` itself when already there); flags kept."""
    kind, ordinal = _parse(device)
    here = a.device
    if kind == "cpu":
        if here == "cpu":
            return a
        return a._with(a.indices.get(), a.values.get())  # synchronize!
    import cupy

    target = cupy.cuda.Device(ordinal if ordinal is not None else cupy.cuda.runtime.getDevice())
    if here == f"cuda:{target.id}":
        return a
    with target:
        return a._with(cupy.asarray(a.indices), cupy.asarray(a.values))


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
    from ._coo import COO

    if device is not None:
        _parse(device)  # ValueError before any work
    if isinstance(x, COO):
        a = x
        if copy is False and ((dtype is not None and np.dtype(dtype) != a.dtype) or
                              (device is not None and _normal(device) != a.device)):
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
    if type(x).__module__.startswith("scipy.sparse"):
        from .interop.scipy import from_scipy

        a = from_scipy(x)
    elif type(x).__module__.startswith("torch"):
        from .interop.torch import from_torch

        a = from_torch(x, copy=True)
        if not isinstance(a, COO):
            from ._dense import from_dense

            a = from_dense(a, sparse_ndim=sparse_ndim, signed_zeros=True)
    else:
        from ._backend import is_device_array
        from ._dense import from_dense

        if not (isinstance(x, np.ndarray) or is_device_array(x)):
            x = np.asarray(x, dtype=None if dtype is None else np.dtype(dtype))
        a = from_dense(x, sparse_ndim=sparse_ndim, signed_zeros=True)
    if dtype is not None:
        a = a.astype(dtype, copy=False)
    if device is not None:
        a = to_device(a, device)
    return a


def _normal(device):
    kind, ordinal = _parse(device)
    if kind == "cpu":
        return "cpu"
    if ordinal is None:
        import cupy

        ordinal = cupy.cuda.runtime.getDevice()
    return f"cuda:{ordinal}"
