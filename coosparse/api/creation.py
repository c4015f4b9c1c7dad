"""The Array API's creation functions: COO arrays built on the CPU and moved when ``device``
names a GPU.

Creation and fills: ``zeros``/``empty`` store nothing with fill 0,
``ones`` stores nothing with fill 1, ``full`` stores nothing with fill =
the value (SPEC 9); ``eye`` stores its diagonal; ``arange``, ``linspace`` and
``meshgrid`` compute the dense result and store its non-zeros and negative zeros (fill 0).
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from .._core import dtypes as _dtypes
from .._core.coo import COO
from .._core.shapes import as_shape, check_entries, checked_shape
from .._kernels.backend import array_namespace
from ..ops.dense import from_dense
from ..ops.device import asarray


# ---------------------------------------------------------------------------------- creation
def _placed(a, device):
    return a if device is None else a.to(device)


def _default(dtype, default=np.float64):
    return _dtypes.check_dtype(default if dtype is None else dtype)


def _like_dtype(x, dtype):
    return x.dtype if dtype is None else _dtypes.check_dtype(dtype)


def _empty_coo(shape, dtype, fill, sparse_ndim=None):
    shape = as_shape(shape)
    sn = len(shape) if sparse_ndim is None else sparse_ndim
    return COO(np.zeros((sn, 0), dtype=np.int64), np.zeros((0,) + shape[sn:], dtype=dtype), shape,
               sorted=True, unique=True, check=False, fill_value=fill)


def zeros(shape, *, dtype=None, device=None):
    """An array of zeros: stores nothing, fill 0 (default dtype float64).

    Examples
    --------
    >>> import coosparse
    >>> coosparse.zeros((2, 3)).nnz
    0
    """
    return _placed(_empty_coo(shape, _default(dtype), None), device)


def empty(shape, *, dtype=None, device=None):
    """Same as :func:`zeros` (a COO that stores nothing is cheapest with fill 0)."""
    return zeros(shape, dtype=dtype, device=device)


def ones(shape, *, dtype=None, device=None):
    """An array of ones: stores nothing, fill 1.

    Examples
    --------
    >>> import coosparse
    >>> a = coosparse.ones(3)
    >>> a.nnz, a.fill_value, a.to_dense()
    (0, np.float64(1.0), array([1., 1., 1.]))
    """
    return _placed(_empty_coo(shape, _default(dtype), 1), device)


def _full_value(fill_value, dtype):
    """``fill_value`` as a scalar of ``dtype`` (inferred from the Python type when None)."""
    if isinstance(fill_value, COO):
        fill_value = fill_value.to_dense()
    if dtype is None:
        if isinstance(fill_value, (builtins.bool, np.bool_)):
            dtype = np.bool_
        elif isinstance(fill_value, int):
            dtype = np.int64
        elif isinstance(fill_value, float):
            dtype = np.float64
        elif isinstance(fill_value, complex):
            dtype = np.complex128
        else:
            dtype = np.asarray(fill_value).dtype
    dt = _dtypes.check_dtype(dtype)
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            v = np.array(fill_value, dtype=dt)
    except OverflowError:  # an integer outside the dtype's range: NumPy's exception type, naming the argument
        info = np.iinfo(dt) if dt.kind in "iu" else None
        span = f" [{info.min}, {info.max}]" if info is not None else ""
        hint = (" (dtype=coosparse.uint64 holds 2**63 .. 2**64 - 1)"
                if dt == np.int64 and isinstance(fill_value, int) and 2**63 <= fill_value < 2**64 else "")
        raise OverflowError(f"full: fill_value {fill_value!r} does not fit dtype {dt}{span}; pass a dtype that "
                            f"holds it{hint}") from None
    except (TypeError, ValueError) as e:  # a Python NaN or complex to a narrower kind: Python's own refusal
        raise type(e)(f"full: fill_value {fill_value!r} cannot be cast to dtype {dt} ({e}); pass a dtype that "
                      "holds it, or the value cast as you mean it") from None
    if v.ndim:
        raise ValueError(f"fill_value must be a scalar; got an array of shape {v.shape}")
    return dt, v[()]


def full(shape, fill_value, *, dtype=None, device=None):
    """An array whose every element is ``fill_value``: stores nothing, fill = the value.

    The dtype is inferred from ``fill_value`` when not given (bool, int64,
    float64, complex128).

    Examples
    --------
    >>> import coosparse
    >>> a = coosparse.full((2, 2), 7)
    >>> a.nnz, a.dtype, a.to_dense()
    (0, dtype('int64'), array([[7, 7],
           [7, 7]]))
    """
    dt, v = _full_value(fill_value, dtype)
    return _placed(_empty_coo(shape, dt, v), device)


def zeros_like(x, /, *, dtype=None, device=None, shape=None):
    """:func:`zeros` with ``x``'s shape (unless ``shape`` is given), dtype, device and sparse/dense split.

    ``shape`` (NumPy's and pydata's keyword) replaces ``x``'s shape; the result is then
    all-sparse unless the shape is ``x``'s own.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> coosparse.zeros_like(coosparse.asarray(np.eye(2)), shape=(3,)).shape
    (3,)
    """
    return _like(x, dtype, device, shape, None)


def empty_like(x, /, *, dtype=None, device=None, shape=None):
    """Same as :func:`zeros_like`."""
    return zeros_like(x, dtype=dtype, device=device, shape=shape)


def ones_like(x, /, *, dtype=None, device=None, shape=None):
    """:func:`ones` with ``x``'s shape (or ``shape``), dtype, device and sparse/dense split."""
    return _like(x, dtype, device, shape, 1)


def full_like(x, /, fill_value, *, dtype=None, device=None, shape=None):
    """:func:`full` with ``x``'s shape (or ``shape``), dtype (unless given), device and sparse/dense split.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> coosparse.full_like(coosparse.asarray(np.eye(2)), 0.5).to_dense()
    array([[0.5, 0.5],
           [0.5, 0.5]])
    """
    dt, v = _full_value(fill_value, _like_dtype(x, dtype))
    return _like(x, dt, device, shape, v)


def _like(x, dtype, device, shape, fill):
    new_shape = tuple(np.shape(x)) if shape is None else as_shape(shape)
    sparse_ndim = x.sparse_ndim if isinstance(x, COO) and new_shape == x.shape else None
    dev = device
    if dev is None:
        dev = getattr(x, "device", None)
        if not isinstance(dev, str):
            dev = None  # a NumPy array's device is "cpu" (a string); other objects keep the default
    return _placed(_empty_coo(new_shape, _like_dtype(x, dtype), fill, sparse_ndim), dev)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """Ones on the ``k``-th diagonal, stored (coalesced), fill 0.

    Examples
    --------
    >>> import coosparse
    >>> coosparse.eye(2, 3, k=1).to_dense()
    array([[0., 1., 0.],
           [0., 0., 1.]])
    """
    n_rows = operator.index(n_rows)
    n_cols = n_rows if n_cols is None else operator.index(n_cols)
    k = operator.index(k)
    if n_rows < 0 or n_cols < 0:
        raise ValueError(f"eye: sizes must be non-negative; got {n_rows}, {n_cols}")
    checked_shape((n_rows, n_cols), "eye")
    dt = _default(dtype)
    # exact Python ints: any k is valid (a diagonal outside the matrix is empty), none wraps
    lo, hi = builtins.max(0, -k), builtins.max(0, builtins.min(n_rows, n_cols - k))
    check_entries(builtins.max(hi - lo, 0), "eye", 16 + dt.itemsize)
    rows = np.arange(lo, hi, dtype=np.int64) if hi > lo else np.zeros(0, dtype=np.int64)
    idx = np.stack([rows, rows + k if rows.size else rows])  # (|k| < the size when the diagonal holds entries)
    return _placed(COO(idx, np.ones(rows.shape[0], dtype=dt), (n_rows, n_cols), sorted=True, unique=True,
                       check=False), device)


def _from_dense_result(d, device):
    # a computed -0.0 is a value of the result (np.arange(-0.0, 1.0) is [-0.0]): stored, as asarray stores it
    return _placed(from_dense(d, signed_zeros=True), device)


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    """Evenly spaced values (NumPy's ``arange``), stored as their non-zeros.

    Examples
    --------
    >>> import coosparse
    >>> coosparse.arange(4).to_dense()
    array([0, 1, 2, 3])
    """
    d = np.arange(start, stop, step, dtype=None if dtype is None else _dtypes.check_dtype(dtype)) \
        if stop is not None else np.arange(start, step=step, dtype=None if dtype is None else _dtypes.check_dtype(dtype))
    return _from_dense_result(d, device)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """``num`` evenly spaced values over [start, stop] (NumPy's ``linspace``), stored as their non-zeros.

    Examples
    --------
    >>> import coosparse
    >>> coosparse.linspace(0, 1, 3).to_dense()
    array([0. , 0.5, 1. ])
    """
    if dtype is None:
        # NumPy's complex64 scalars and complex 0-d arrays are complex too (not Python complex instances)
        dtype = np.complex128 if np.iscomplexobj(start) or np.iscomplexobj(stop) else np.float64
    d = np.linspace(start, stop, operator.index(num), endpoint=endpoint, dtype=_dtypes.check_dtype(dtype))
    return _from_dense_result(d, device)


def meshgrid(*arrays, indexing="xy"):
    """Coordinate matrices from 1-D arrays (NumPy's ``meshgrid``), each stored as its non-zeros.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x, y = coosparse.meshgrid(coosparse.asarray(np.array([1, 2])), coosparse.asarray(np.array([3, 4, 5])))
    >>> x.shape, y.to_dense()[:, 0]
    ((3, 2), array([3, 4, 5]))
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij'; got {indexing!r}")
    dense = [a.to_dense() if isinstance(a, COO) else np.asarray(a) for a in arrays]
    xp = array_namespace(dense[0]) if dense else np
    return [from_dense(xp.ascontiguousarray(g), signed_zeros=True) for g in xp.meshgrid(*dense, indexing=indexing)]


def from_dlpack(x, /, *, device=None, copy=None):
    """A COO from any dense DLPack producer (NumPy, CuPy, torch...): its non-zeros.

    A CUDA producer (DLPack device type 2) is read with CuPy, anything else
    with NumPy; then as :func:`coosparse.asarray` (``copy=False`` raises: a
    COO never shares a dense array's memory).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> coosparse.from_dlpack(np.array([0.0, 2.0])).values
    array([2.])
    """
    dev = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
    if dev == 2:
        import cupy

        d = cupy.from_dlpack(x)
    else:
        d = np.from_dlpack(x)
    return asarray(d, device=device, copy=copy)
