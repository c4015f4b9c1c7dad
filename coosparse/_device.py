"""Moving arrays between the CPU and CUDA devices."""
from __future__ import annotations


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


def asarray(x, *, device=None, dtype=None, sparse_ndim=None):
    """A COO array from ``x``, optionally moved to ``device``.

    Parameters
    ----------
    x : COO, scipy.sparse array/matrix, or dense array_like (NumPy, CuPy, nested lists)
        A COO is returned as is (no copy) unless ``device``/``dtype`` ask for a
        change; scipy inputs go through :func:`coosparse.from_scipy`; dense
        inputs through :func:`coosparse.from_dense` (non-zeros, coalesced).
    device : {None, 'cpu', 'cuda', 'cuda:N'}
        Where the result lives; None keeps ``x``'s device (the CPU for lists
        and scipy inputs).
    dtype : dtype, optional
        Cast the values.
    sparse_ndim : int, optional
        For dense inputs: how many leading dimensions are sparse (hybrid COO).

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
    """
    from ._coo import COO

    if device is not None:
        _parse(device)  # ValueError before any work
    if isinstance(x, COO):
        a = x
    elif type(x).__module__.startswith("scipy.sparse"):
        from .interop.scipy import from_scipy

        a = from_scipy(x)
    else:
        from ._dense import from_dense

        a = from_dense(x, sparse_ndim=sparse_ndim)
    if dtype is not None:
        a = a.astype(dtype, copy=False)
    if device is not None:
        a = to_device(a, device)
    return a
