"""``coosparse`` as an Array API namespace (2024.12): dtypes, constants, inspection,
data-type functions and creation functions.

A thin layer of names over the rest of the library (ARCHITECTURE.md): the
dtype objects are NumPy's scalar types (as in NumPy's own namespace and in
pydata/sparse), so ``a.dtype == coosparse.float64`` holds for every COO;
creation functions build COO arrays on the CPU and move them when
``device`` names a GPU.

Creation and fills: ``zeros``/``empty`` store nothing with fill 0,
``ones`` stores nothing with fill 1, ``full`` stores nothing with fill =
the value (SPEC 9); ``eye`` stores its diagonal; ``arange``, ``linspace`` and
``meshgrid`` compute the dense result and store its non-zeros (fill 0).
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from . import _dtypes
from ._coo import COO, _as_shape
from ._dispatch import implements

__array_api_version__ = "2024.12"

# ---------------------------------------------------------------------------------- dtypes
bool = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128

# ---------------------------------------------------------------------------------- constants
e = math.e
inf = math.inf
nan = math.nan
pi = math.pi
newaxis = None

_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

_KINDS = {
    "bool": ("b",),
    "signed integer": ("i",),
    "unsigned integer": ("u",),
    "integral": ("i", "u"),
    "real floating": ("f",),
    "complex floating": ("c",),
    "numeric": ("i", "u", "f", "c"),
}

_NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64", "complex64", "complex128")


def check_api_version(api_version):
    """ValueError unless ``api_version`` is None or a version this namespace serves."""
    if api_version is not None and api_version not in _API_VERSIONS:
        raise ValueError(f"coosparse implements the Array API versions {', '.join(_API_VERSIONS)}; "
                         f"got api_version={api_version!r}")


def _dtype_of(x):
    """np.dtype of a dtype-like or of an array (COO, NumPy, CuPy)."""
    if isinstance(x, COO) or hasattr(x, "dtype") and not isinstance(x, (type, np.dtype)):
        return np.dtype(x.dtype)
    return np.dtype(x)


# ---------------------------------------------------------------------------------- inspection
class ArrayNamespaceInfo:
    """What ``coosparse.__array_namespace_info__()`` returns (Array API inspection).

    Examples
    --------
    >>> import coosparse
    >>> info = coosparse.__array_namespace_info__()
    >>> info.default_device(), info.default_dtypes()["real floating"]
    ('cpu', dtype('float64'))
    """

    def capabilities(self):
        """Boolean indexing and data-dependent shapes are supported; any number of dimensions."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self):
        return "cpu"

    def devices(self):
        """'cpu', then 'cuda:N' for every GPU CuPy sees (CuPy is imported only when installed)."""
        out = ["cpu"]
        import importlib.util

        if importlib.util.find_spec("cupy") is not None:
            try:
                import cupy

                out += [f"cuda:{i}" for i in range(cupy.cuda.runtime.getDeviceCount())]
            except Exception:  # a CuPy without a driver or device: CPU only
                pass
        return out

    def _check_device(self, device):
        if device is not None and str(device) not in self.devices():
            raise ValueError(f"unknown device {device!r}; devices: {self.devices()}")

    def default_dtypes(self, *, device=None):
        self._check_device(device)
        return {"real floating": np.dtype(np.float64), "complex floating": np.dtype(np.complex128),
                "integral": np.dtype(np.int64), "indexing": np.dtype(np.int64)}

    def dtypes(self, *, device=None, kind=None):
        """Name -> dtype of the Array API dtypes of ``kind`` (None: all; a kind name or a tuple)."""
        self._check_device(device)
        out = {}
        for name in _NAMES:
            dt = np.dtype(name)
            if kind is None or isdtype(dt, kind):
                out[name] = dt
        return out


def __array_namespace_info__():
    """The Array API inspection object (capabilities, devices, default dtypes, dtypes)."""
    return ArrayNamespaceInfo()


# ---------------------------------------------------------------------------------- data-type functions
def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` with values cast to ``dtype`` (Array API ``astype``); fill cast the same way.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> coosparse.astype(coosparse.asarray(np.array([1.5, 0.0])), coosparse.int64).to_dense()
    array([1, 0])
    """
    if not isinstance(x, COO):
        raise TypeError(f"astype expects a COO array; got {type(x).__name__}")
    out = x.astype(dtype, copy=copy)
    return out if device is None else out.to(device)


def can_cast(from_, to, /):
    """True when ``from_`` (a dtype or array) casts to ``to`` under the promotion rules.

    Examples
    --------
    >>> import coosparse
    >>> coosparse.can_cast(coosparse.int8, coosparse.int32), coosparse.can_cast(coosparse.float64, coosparse.int8)
    (True, False)
    """
    return builtins.bool(np.can_cast(_dtype_of(from_), np.dtype(to), casting="safe"))


class finfo_object:
    """Machine limits of a floating dtype with Python-float attributes (Array API ``finfo``)."""

    def __init__(self, dtype):
        fi = np.finfo(dtype)
        self.bits = int(fi.bits)
        self.eps = float(fi.eps)
        self.max = float(fi.max)
        self.min = float(fi.min)
        self.smallest_normal = float(fi.smallest_normal)
        self.dtype = np.dtype(fi.dtype)

    def __repr__(self):
        return f"finfo(bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, dtype={self.dtype})"


def finfo(type, /):
    """Limits of a floating or complex dtype (or of an array's dtype).

    Examples
    --------
    >>> import coosparse
    >>> coosparse.finfo(coosparse.float32).bits
    32
    """
    dt = _dtype_of(type)
    if dt.kind not in "fc":
        raise ValueError(f"finfo takes a floating or complex dtype; got {dt}")
    return finfo_object(dt)


def iinfo(type, /):
    """Limits of an integer dtype (or of an array's dtype): NumPy's ``iinfo``.

    Examples
    --------
    >>> import coosparse
    >>> coosparse.iinfo(coosparse.int8).max
    127
    """
    dt = _dtype_of(type)
    if dt.kind not in "iu":
        raise ValueError(f"iinfo takes an integer dtype; got {dt}")
    return np.iinfo(dt)


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind``: a dtype, a kind name or a tuple of them (Array API).

    Examples
    --------
    >>> import coosparse
    >>> coosparse.isdtype(coosparse.float32, ("integral", "real floating"))
    True
    """
    dt = np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"unknown dtype kind {k!r}; kinds: {', '.join(_KINDS)}")
            if dt.kind in _KINDS[k]:
                return True
        elif dt == np.dtype(k):
            return True
    return False


def result_type(*arrays_and_dtypes):
    """The dtype NumPy's promotion gives for arrays (COO included), dtypes and Python scalars.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> coosparse.result_type(coosparse.asarray(np.array([1], dtype=np.int8)), coosparse.int16)
    dtype('int16')
    """
    if not arrays_and_dtypes:
        raise ValueError("at least one array or dtype is required")
    args = [a.dtype if isinstance(a, COO) else a for a in arrays_and_dtypes]
    return _dtypes.result_type(*args)


@implements(np.result_type)
def np_result_type(*arrays_and_dtypes):
    return result_type(*arrays_and_dtypes)


@implements(np.can_cast)
def np_can_cast(from_, to, casting="safe"):
    return builtins.bool(np.can_cast(_dtype_of(from_), np.dtype(to), casting=casting))


@implements(np.may_share_memory, np.shares_memory)
def np_may_share_memory(a, b, max_work=None):
    """True when the components (indices, values) of ``a`` and ``b`` may overlap in memory."""
    def parts(x):
        return [x.indices, x.values] if isinstance(x, COO) else [x]

    return builtins.any(np.may_share_memory(p, q) for p in parts(a) for q in parts(b)
                        if isinstance(p, np.ndarray) and isinstance(q, np.ndarray))


# ---------------------------------------------------------------------------------- creation
def _placed(a, device):
    return a if device is None else a.to(device)


def _default(dtype, default=np.float64):
    return _dtypes.check_dtype(default if dtype is None else dtype)


def _like_dtype(x, dtype):
    return x.dtype if dtype is None else _dtypes.check_dtype(dtype)


def _empty_coo(shape, dtype, fill, sparse_ndim=None):
    shape = _as_shape(shape)
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
    with np.errstate(over="ignore", invalid="ignore"):
        v = np.array(fill_value, dtype=dt)  # OverflowError for out-of-range integers, as NumPy
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


def zeros_like(x, /, *, dtype=None, device=None):
    """:func:`zeros` with ``x``'s shape, dtype, device and sparse/dense split."""
    return _placed(_empty_coo(x.shape, _like_dtype(x, dtype), None, _sparse_ndim(x)),
                   x.device if device is None else device)


def empty_like(x, /, *, dtype=None, device=None):
    """Same as :func:`zeros_like`."""
    return zeros_like(x, dtype=dtype, device=device)


def ones_like(x, /, *, dtype=None, device=None):
    """:func:`ones` with ``x``'s shape, dtype, device and sparse/dense split."""
    return _placed(_empty_coo(x.shape, _like_dtype(x, dtype), 1, _sparse_ndim(x)),
                   x.device if device is None else device)


def full_like(x, /, fill_value, *, dtype=None, device=None):
    """:func:`full` with ``x``'s shape, dtype (unless given), device and sparse/dense split.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> coosparse.full_like(coosparse.asarray(np.eye(2)), 0.5).to_dense()
    array([[0.5, 0.5],
           [0.5, 0.5]])
    """
    dt, v = _full_value(fill_value, _like_dtype(x, dtype))
    return _placed(_empty_coo(x.shape, dt, v, _sparse_ndim(x)), x.device if device is None else device)


def _sparse_ndim(x):
    return x.sparse_ndim if isinstance(x, COO) else None


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
    dt = _default(dtype)
    lo, hi = builtins.max(0, -k), builtins.max(0, builtins.min(n_rows, n_cols - k))
    rows = np.arange(lo, builtins.max(lo, hi), dtype=np.int64)
    idx = np.stack([rows, rows + k])
    return _placed(COO(idx, np.ones(rows.shape[0], dtype=dt), (n_rows, n_cols), sorted=True, unique=True,
                       check=False), device)


def _from_dense_result(d, device):
    from ._dense import from_dense

    return _placed(from_dense(d), device)


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
        dtype = np.complex128 if isinstance(start, complex) or isinstance(stop, complex) else np.float64
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
    from ._coo import _namespace
    from ._dense import from_dense

    dense = [a.to_dense() if isinstance(a, COO) else np.asarray(a) for a in arrays]
    xp = _namespace(dense[0]) if dense else np
    return [from_dense(xp.ascontiguousarray(g)) for g in xp.meshgrid(*dense, indexing=indexing)]


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
    from ._device import asarray

    dev = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
    if dev == 2:
        import cupy

        d = cupy.from_dlpack(x)
    else:
        d = np.from_dlpack(x)
    return asarray(d, device=device, copy=copy)
