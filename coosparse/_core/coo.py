"""The COO array type (SPEC 1): its parts, flags, fill and validation.

``COO`` does not import its operations (they import it). Its methods keep
their signatures and docstrings here and reach the operations through NumPy's
protocols (``a.sum()`` is ``np.sum(a)``, answered by the ``__array_function__``
table) or through :data:`~coosparse._core.dispatch.OPERATIONS`; its operators
are generated over the elementwise engine's hooks (:mod:`.operators`).
"""
from __future__ import annotations

import numbers
import sys

import numpy as np

from .._kernels.backend import array_namespace, device_of, is_device_array, is_device_array_type, writeable
from . import dtypes as _dtypes
from . import fill as _fill
from .companions import CompanionsMixin
from .device import to_device
from .dispatch import OPERATIONS, DenseConversionError, array_function, check_api_version, is_foreign_type
from .flags import verify_flags
from .operators import OperatorsMixin
from .shapes import as_shape, prod


class COO(OperatorsMixin, CompanionsMixin):
    """An N-dimensional sparse array in coordinate format, with exact flags.

    Parameters
    ----------
    indices : array_like of int, shape (sparse_ndim, nnz)
        Coordinates of the stored entries; stored as C-contiguous int64.
    values : array_like, shape (nnz, *dense_shape)
        Stored values (hybrid COO: trailing dense dimensions are allowed).
    shape : tuple of int
        ``sparse_shape + dense_shape``.
    sorted, unique : bool
        Flag hints. A hint passed as True is verified when ``check`` is True
        (``ValueError`` if it is false). ``nnz <= 1`` sets both.
    check : bool
        Validate dtypes, lengths, bounds and flag hints. ``check=False`` is the
        fast path: the caller guarantees all of it.
    fill_value : scalar, optional
        The value of every index that stores nothing (SPEC 8); default 0.
        Stored as a NumPy scalar of the values' dtype; it must be
        representable in it.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 2, 2]], np.array([1.0, 2.0, 3.0]), (4,))
    >>> a
    <COO shape=(4,) dtype=float64 nnz=3 sorted=False unique=False device=cpu>
    >>> a.to_dense()
    array([1., 0., 5., 0.])
    """

    __array_priority__ = 1000.0  # NumPy defers binary operators to COO

    def __init__(self, indices, values, shape, *, sorted=False, unique=False, check=True,
                 fill_value=None):
        if (not check and type(indices) is np.ndarray and type(values) is np.ndarray
                and indices.dtype == np.int64 and indices.flags.c_contiguous and values.dtype.isnative):
            # the library's own results: plain host arrays in their stored form. The general path
            # below (namespaces, devices, conversions) took 16 us per result, this one 4 us
            self._set_parts(indices, values, as_shape(shape), sorted, unique,
                            _fill.fill_scalar(fill_value, values.dtype))
            return
        # A device array decides the namespace; list-like parts follow it. Two
        # arrays on different devices are an error, never a silent copy.
        if isinstance(indices, np.ndarray) and is_device_array(values) or (
            isinstance(values, np.ndarray) and is_device_array(indices)
        ):
            raise ValueError(
                f"indices live on {device_of(indices)} but values on {device_of(values)}; "
                "move one with cupy.asarray or .get()"
            )
        xp = array_namespace(values) if is_device_array(values) else array_namespace(indices)
        listed = not hasattr(indices, "dtype")
        indices = xp.asarray(_dtypes.unmasked(indices))
        if listed and indices.size == 0 and indices.dtype.kind == "f":
            indices = indices.astype(np.int64)  # empty lists are float64 to NumPy; no index is given
        values = _dtypes.native(xp.asarray(_dtypes.unmasked(values)))
        shape = as_shape(shape)
        if device_of(indices) != device_of(values):
            raise ValueError(
                f"indices live on {device_of(indices)} but values on {device_of(values)}"
            )
        if check:
            self._validate_layout(indices, values, shape)
        if indices.dtype != np.int64 or not indices.flags.c_contiguous:
            if indices.dtype == np.uint64 and indices.size and int(indices.max()) >= 2**63:  # synchronize!
                # int64 storage would wrap them to negative indices: refuse, even with check=False
                d, pos = (int(v) for v in np.unravel_index(int(indices.argmax()), indices.shape))
                raise IndexError(
                    f"index {int(indices[d, pos])} at position {pos} of dimension {d} is 2**63 or more; "
                    "coosparse stores indices as int64, so no index can reach 2**63"
                )
            indices = xp.ascontiguousarray(indices, dtype=np.int64)
        self._indices = _frozen(indices)
        self._values = _frozen(values)
        self._shape = shape
        nnz = indices.shape[1]
        sorted = bool(sorted) or nnz <= 1
        unique = bool(unique) or nnz <= 1
        if check and (sorted or unique) and nnz > 1:
            verify_flags(indices, self.sparse_shape, sorted, unique)
        self._sorted = sorted
        self._unique = unique
        self._fill = _fill.fill_scalar(fill_value, values.dtype)

    @staticmethod
    def _validate_layout(indices, values, shape, bounds=True):
        """Types and shapes of the parts, and (``bounds``) every index inside ``shape``."""
        if indices.dtype.kind not in "iu":
            raise TypeError(f"indices must be integers; got dtype {indices.dtype}")
        if indices.ndim != 2:
            raise ValueError(
                f"indices must have shape (sparse_ndim, nnz); got an array of ndim {indices.ndim} "
                f"with shape {tuple(indices.shape)}"
            )
        _dtypes.check_dtype(values.dtype)
        sparse_ndim, nnz = indices.shape
        if sparse_ndim > len(shape):
            raise ValueError(
                f"indices have {sparse_ndim} sparse dimensions but shape {shape} has only {len(shape)}"
            )
        if values.ndim < 1 or values.shape[0] != nnz:
            raise ValueError(
                f"values must have {nnz} entries along axis 0 (one per index column); "
                f"got values of shape {tuple(values.shape)}"
            )
        dense_shape = shape[sparse_ndim:]
        if tuple(values.shape[1:]) != dense_shape:
            raise ValueError(
                f"values have trailing shape {tuple(values.shape[1:])} but shape {shape} with "
                f"{sparse_ndim} sparse dimensions needs dense shape {dense_shape}"
            )
        if nnz == 0 or not bounds:
            return
        lo = indices.min(axis=1)
        hi = indices.max(axis=1)
        for d in range(sparse_ndim):
            if int(lo[d]) < 0 or int(hi[d]) >= shape[d]:  # synchronize!
                row = indices[d]
                bad = int(((row < 0) | (row >= shape[d])).argmax())
                raise IndexError(
                    f"index {int(row[bad])} at position {bad} is out of bounds for dimension {d} "
                    f"with size {shape[d]}"
                )

    # ------------------------------------------------------------------ attributes
    @property
    def indices(self):
        """int64 array of shape (sparse_ndim, nnz); read-only on the CPU (a COO is immutable).

        A read-only *view*: the array given to the constructor is not copied and stays
        writeable for its owner (writing into it changes this COO, as with any view).
        CuPy arrays have no read-only flag, so on a GPU nothing stops a write.
        """
        return self._indices

    @property
    def values(self):
        """Array of shape (nnz, *dense_shape); read-only on the CPU, like :attr:`indices`."""
        return self._values

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def nnz(self):
        """Number of stored entries (duplicates and explicit zeros counted)."""
        return self._values.shape[0]

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def sparse_ndim(self):
        return len(self._shape) - self._values.ndim + 1

    @property
    def dense_ndim(self):
        return self.ndim - self.sparse_ndim

    @property
    def sparse_shape(self):
        return self._shape[: self.sparse_ndim]

    @property
    def dense_shape(self):
        return self._shape[self.sparse_ndim:]

    @property
    def size(self):
        """Number of elements of the dense equivalent (a Python int, exact)."""
        n = 1
        for s in self._shape:
            n *= s
        return n

    @property
    def device(self):
        """'cpu' or 'cuda:N'."""
        return device_of(self._values)

    @property
    def is_sorted(self):
        """True when the linear indices are non-decreasing (never guessed)."""
        return self._sorted

    @property
    def is_unique(self):
        """True when no index occurs twice (never guessed)."""
        return self._unique

    @property
    def is_coalesced(self):
        return self._sorted and self._unique

    @property
    def fill_value(self):
        """The value of every index that stores nothing: a NumPy scalar of ``dtype`` (SPEC 8)."""
        return self._fill

    # ---- the names scipy.sparse and pydata/sparse users know (docs: the migration pages) -----------
    @property
    def data(self):
        """The stored values: :attr:`values` under scipy's and pydata's name (read-only)."""
        return self._values

    @property
    def coords(self):
        """The indices: :attr:`indices` under scipy's and pydata's name (read-only)."""
        return self._indices

    @property
    def density(self):
        """Stored elements over all elements (duplicates and explicit zeros count); 0.0 for an empty shape."""
        size = self.size
        return self.nnz * prod(self.dense_shape) / size if size else 0.0

    @property
    def format(self):
        """``"coo"``: the storage format (scipy's and pydata's attribute)."""
        return "coo"

    def __sizeof__(self):
        # sys.getsizeof(a): the object and the arrays it holds (pydata counts them too)
        return object.__sizeof__(self) + self.nbytes

    def __repr__(self):
        return (
            f"<COO shape={self._shape} dtype={self.dtype} nnz={self.nnz}"
            + (f" sparse_ndim={self.sparse_ndim}" if self.dense_ndim else "")
            + (f" fill_value={self._fill!r}" if not _fill.is_zero(self._fill) else "")
            + f" sorted={self._sorted} unique={self._unique} device={self.device}>"
        )

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d COO array")
        return self._shape[0]

    def __array__(self, dtype=None, copy=None):
        raise DenseConversionError(
            "a COO array is not converted to a dense NumPy array implicitly; call .to_dense()"
        )

    def __array_function__(self, func, types, args, kwargs):
        # defer to other array types (dask, ...) that may know how to combine with a COO; the
        # sparse arrays of a registered bridge (pydata/sparse) are operands the functions convert
        if not all(issubclass(t, COO) or t.__module__.split(".")[0] == "numpy" or is_device_array_type(t)
                   or is_foreign_type(t) for t in types):
            return NotImplemented
        return array_function(func, types, args, kwargs)

    # ------------------------------------------------------------------ copies
    def _with(self, indices=None, values=None, *, sorted=None, unique=None, fill_value=None):
        """A COO sharing this one's other parts, fill included (internal use: the parts are the
        library's own, so nothing is validated; indices are made C-contiguous int64 if they are not).

        The fill is cast to the new values' dtype when they change it.
        """
        if indices is None:
            indices = self._indices
        elif indices.dtype != np.int64 or not indices.flags.c_contiguous:
            indices = array_namespace(indices).ascontiguousarray(indices, dtype=np.int64)
        values = self._values if values is None else values
        fill = _fill.fill_scalar(self._fill if fill_value is None else fill_value, values.dtype)
        return COO._trusted(indices, values, self._shape, self._sorted if sorted is None else sorted,
                            self._unique if unique is None else unique, fill)

    @classmethod
    def _trusted(cls, indices, values, shape, sorted, unique, fill_value):
        """Internal fast constructor: parts already valid, indices C-contiguous int64,
        ``fill_value`` a scalar of ``values.dtype`` (no checks, no conversions).

        Sets exactly the attributes ``__init__`` sets (a test compares them)."""
        self = object.__new__(cls)
        self._set_parts(indices, values, shape, sorted, unique, fill_value)
        return self

    def _set_parts(self, indices, values, shape, sorted, unique, fill_value):
        """The stored attributes from parts in their stored form (``_trusted``, and ``__init__``'s
        path for the library's own results); ``nnz <= 1`` sets both flags."""
        self._indices = _frozen(indices)
        self._values = _frozen(values)
        self._shape = shape
        nnz = indices.shape[1]
        self._sorted = bool(sorted) or nnz <= 1
        self._unique = bool(unique) or nnz <= 1
        self._fill = fill_value

    @classmethod
    def _index_rows_reversed(cls, source, values, shape, sorted, unique, fill_value):
        """:meth:`_trusted` for index rows that are ``source``'s in reverse order (a transpose),
        copied only when first read: until then they are a view of ``source`` (``[::-1]``), which
        an operation that takes strided rows (coalesce's counting sort) reads without the copy.
        ``.indices`` is still C-contiguous int64 (copied at its first use, then kept)."""
        view = source[::-1]
        self = cls._trusted(view, values, shape, sorted, unique, fill_value)
        if not view.flags.c_contiguous:  # (one row, or no entry: the view is the stored form)
            self._index_view = self.__dict__.pop("_indices")  # __getattr__ copies it at the first read
        return self

    def __getattr__(self, name):
        # only reached when ``name`` is not set: the index rows of a transpose not yet copied
        if name == "_indices":
            state = self.__dict__
            view = state.get("_index_view")
            if view is not None:
                # (two threads may both copy: the first copy stored is the one kept)
                indices = state.setdefault("_indices", _frozen(array_namespace(view).ascontiguousarray(view)))
                state.pop("_index_view", None)  # the source's rows are no longer held
                return indices
            if "_indices" in state:  # copied by another thread meanwhile
                return state["_indices"]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _indices_as_stored(self):
        """The index rows without copying: ``indices``, or the strided view of a transpose's
        rows not yet copied (:meth:`_index_rows_reversed`). For kernels that take strided rows."""
        view = self.__dict__.get("_index_view")
        return self._indices if view is None else view

    def copy(self):
        """A deep copy (indices and values copied, flags kept)."""
        return self._with(self._indices.copy(), self._values.copy())

    def astype(self, dtype, copy=True):
        """Cast the values; indices are shared unless ``copy``; flags kept.

        The cast applies to the dense meaning (SPEC 1): duplicates are summed in
        this array's dtype first when casting them one by one would differ
        (to bool or an integer from a float, any widening, ...: see
        :func:`coosparse._core.dtypes.cast_keeps_sums`); the result is then
        coalesced (both flags True).

        Examples
        --------
        >>> import numpy as np, coosparse
        >>> a = coosparse.COO([[0, 0, 2, 2]], [0.75, 0.5, 1.5, -1.5], (3,))
        >>> a.astype(np.int64).to_dense(), a.astype(bool).to_dense()
        (array([1, 0, 0]), array([ True, False, False]))
        """
        dt = _dtypes.check_dtype(dtype)
        if dt == self.dtype and not copy:
            return self
        src = self
        if not self._unique and self.nnz > 1 and not _dtypes.cast_keeps_sums(self.dtype, dt):
            src = OPERATIONS.coalesce(self)  # the sums, in this dtype, are what is cast
            copy = copy and src is self
        with np.errstate(all="ignore"):
            fill = np.asarray(self._fill).astype(dt)[()]  # the fill casts as the values do
        return src._with(
            src._indices.copy() if copy else src._indices, src._values.astype(dt, copy=True),
            fill_value=fill,
        )

    def to(self, device):
        """Move to 'cpu' or 'cuda[:N]'; returns self when already there. Synchronises."""
        return to_device(self, device)

    # ------------------------------------------------------------------ operations
    def coalesce(self, prune=False):
        """Sorted, duplicate-free copy (see :func:`coosparse.coalesce`)."""
        return OPERATIONS.coalesce(self, prune=prune)

    def to_dense(self, order="C"):
        """Dense array (NumPy or CuPy, on this array's device); duplicates are summed."""
        return OPERATIONS.to_dense(self, order=order)

    def todense(self, order="C"):
        return self.to_dense(order=order)

    def to_scipy(self, format="coo"):
        """A scipy.sparse array ('coo', 'csr' or 'csc'); see :func:`coosparse.interop.scipy.to_scipy`."""
        return OPERATIONS.to_scipy(self, format=format)

    def to_pydata(self):
        """A pydata/sparse ``sparse.COO``; see :func:`coosparse.interop.pydata.to_pydata`."""
        return OPERATIONS.to_pydata(self)

    # scipy's and pydata's spellings (docs: the migration pages)
    def tocsr(self):
        """``a.to_scipy("csr")``: a ``scipy.sparse.csr_array`` (2-D, fill 0)."""
        return OPERATIONS.to_scipy(self, format="csr")

    def tocsc(self):
        """``a.to_scipy("csc")``: a ``scipy.sparse.csc_array`` (2-D, fill 0)."""
        return OPERATIONS.to_scipy(self, format="csc")

    def to_scipy_sparse(self):
        """pydata's name for ``a.to_scipy("coo")``."""
        return OPERATIONS.to_scipy(self, format="coo")

    def toarray(self):
        """The dense array (scipy's name for :meth:`to_dense`)."""
        return self.to_dense()

    def sum_duplicates(self):
        """A coalesced copy (:meth:`coalesce`); scipy sums in place, a COO is immutable, so
        use the returned array (the original keeps its dense meaning either way)."""
        return OPERATIONS.coalesce(self)

    def eliminate_zeros(self):
        """A copy without the stored entries equal to the fill (explicit zeros for fill 0); see
        :func:`coosparse.eliminate_zeros`. scipy's works in place; use the returned array."""
        return OPERATIONS.eliminate_zeros(self)

    @classmethod
    def from_numpy(cls, x, fill_value=None):
        """pydata's constructor from a dense array: :func:`coosparse.from_dense` with ``fill_value``."""
        return OPERATIONS.from_dense(x, fill_value=fill_value)

    @classmethod
    def from_scipy_sparse(cls, m):
        """pydata's name for :func:`coosparse.from_scipy`."""
        return OPERATIONS.from_scipy(m)

    @classmethod
    def from_pydata(cls, p):
        """A COO from a pydata/sparse array; see :func:`coosparse.interop.pydata.from_pydata`."""
        return OPERATIONS.from_pydata(p)

    # ---- elementwise: NumPy ufuncs (operators: OperatorsMixin) -----------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__":
            return OPERATIONS.ufunc_method(ufunc, method, *inputs, **kwargs)
        return OPERATIONS.array_ufunc(ufunc, *inputs, **kwargs)

    @property
    def real(self):
        """Real part (a COO; the array itself for real dtypes)."""
        return np.real(self)

    @property
    def imag(self):
        """Imaginary part (a COO; zeros of the dtype for real dtypes)."""
        return np.imag(self)

    def conj(self):
        """Complex conjugate (see :func:`coosparse.conj`); the array itself for real dtypes, as NumPy's method."""
        return np.conjugate(self) if self.dtype.kind == "c" else self

    def round(self, decimals=0):
        """Round to ``decimals`` (see :func:`coosparse.round`)."""
        return np.round(self, decimals=decimals)

    def clip(self, min=None, max=None):
        """Clamp to ``[min, max]`` (see :func:`coosparse.clip`)."""
        return np.clip(self, min, max)

    # ---- reductions: NumPy's signatures; each is the NumPy function (coosparse/ops/reduce) ----
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True):
        """Sum over ``axis`` (see :func:`coosparse.sum`); NumPy's keywords."""
        return np.sum(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True):
        """Product over ``axis`` (see :func:`coosparse.prod`)."""
        return np.prod(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where)

    def max(self, axis=None, out=None, keepdims=False, initial=np._NoValue, where=True):
        """Maximum over ``axis`` (see :func:`coosparse.max`)."""
        return np.max(self, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)

    def min(self, axis=None, out=None, keepdims=False, initial=np._NoValue, where=True):
        """Minimum over ``axis`` (see :func:`coosparse.min`)."""
        return np.min(self, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
        """Mean over ``axis`` (see :func:`coosparse.mean`)."""
        return np.mean(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
            mean=np._NoValue, correction=np._NoValue):
        """Variance over ``axis`` (see :func:`coosparse.var`; ``ddof`` is the correction)."""
        return np.var(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where, mean=mean,
                      correction=correction)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
            mean=np._NoValue, correction=np._NoValue):
        """Standard deviation over ``axis`` (see :func:`coosparse.std`)."""
        return np.std(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where, mean=mean,
                      correction=correction)

    def any(self, axis=None, out=None, keepdims=False, *, where=True):
        """Whether any element over ``axis`` is non-zero (see :func:`coosparse.any`)."""
        return np.any(self, axis=axis, out=out, keepdims=keepdims, where=where)

    def all(self, axis=None, out=None, keepdims=False, *, where=True):
        """Whether every element over ``axis`` is non-zero (see :func:`coosparse.all`)."""
        return np.all(self, axis=axis, out=out, keepdims=keepdims, where=where)

    def argmax(self, axis=None, out=None, *, keepdims=False):
        """Index of the first maximum (see :func:`coosparse.argmax`)."""
        return np.argmax(self, axis=axis, out=out, keepdims=keepdims)

    def argmin(self, axis=None, out=None, *, keepdims=False):
        """Index of the first minimum (see :func:`coosparse.argmin`)."""
        return np.argmin(self, axis=axis, out=out, keepdims=keepdims)

    def cumsum(self, axis=None, dtype=None, out=None):
        """Cumulative sum (``numpy.cumsum``: axis None flattens); see :func:`coosparse.cumulative_sum`."""
        return np.cumsum(self, axis=axis, dtype=dtype, out=out)

    def cumprod(self, axis=None, dtype=None, out=None):
        """Cumulative product (``numpy.cumprod``); see :func:`coosparse.cumulative_prod`."""
        return np.cumprod(self, axis=axis, dtype=dtype, out=out)

    def __array_namespace__(self, /, *, api_version=None):
        """The Array API namespace of COO arrays: the ``coosparse`` module itself."""
        check_api_version(api_version)
        return sys.modules["coosparse"]

    def to_device(self, device, /, *, stream=None):
        """Array API spelling of :meth:`to` (``stream`` must be None)."""
        if stream is not None:
            raise ValueError("to_device: streams are not supported; pass stream=None")
        return self.to(device)

    def _scalar(self, what):
        """The single element of a size-1 array as a NumPy scalar (synchronises on a GPU)."""
        if self.size != 1:
            raise TypeError(f"only size-1 arrays can be converted to Python scalars ({what}); "
                            f"this array has shape {self._shape}")
        d = self.to_dense()
        if not isinstance(d, np.ndarray):
            d = d.get()  # synchronize! (a device array)
        return d.reshape(())[()]

    def __bool__(self):
        if self.size != 1:
            raise ValueError(
                f"the truth value of a COO array with {self.size} elements is ambiguous; "
                "use (a != 0).nnz, or reduce with a.any() / a.all()"
            )
        return bool(self._scalar("bool"))

    def __int__(self):
        return int(self._scalar("int"))

    def __float__(self):
        return float(self._scalar("float"))

    def __complex__(self):
        return complex(self._scalar("complex"))

    def __index__(self):
        if self.dtype.kind not in "iu":
            raise TypeError(f"only integer arrays can be used as an index; this array has dtype {self.dtype}")
        return int(self._scalar("index"))

    # ---- shape and indexing -----------------------------------------------------------------
    @property
    def T(self):
        """The transpose (all axes reversed); see :func:`coosparse.transpose` for its flags."""
        return np.transpose(self)

    @property
    def mT(self):
        """The last two axes swapped; see :func:`coosparse.matrix_transpose`."""
        return np.matrix_transpose(self)

    def transpose(self, *axes):
        """Permute the axes: ``a.transpose()``, ``a.transpose(1, 0)`` or ``a.transpose((1, 0))``."""
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return np.transpose(self, axes if axes != () else None)

    def reshape(self, *shape, order="C"):
        """New shape, C order: ``a.reshape(2, -1)`` or ``a.reshape((2, -1))``; see :func:`coosparse.reshape`."""
        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = shape[0]
        return np.reshape(self, shape, order=order)

    def ravel(self, order="C"):
        """1-D view of the elements in C order; see :func:`coosparse.ravel`."""
        return np.ravel(self, order=order)

    def flatten(self, order="C"):
        """1-D array of the elements in C order; see :func:`coosparse.ravel`."""
        return np.ravel(self, order=order)

    def swapaxes(self, axis1, axis2):
        """Interchange two axes; see :func:`coosparse.swapaxes`."""
        return np.swapaxes(self, axis1, axis2)

    def squeeze(self, axis=None):
        """Remove length-1 axes; see :func:`coosparse.squeeze`."""
        return np.squeeze(self, axis)

    def to_hybrid(self, dense_ndim):
        """The same array with ``dense_ndim`` trailing dense dimensions; see :func:`coosparse.to_hybrid`."""
        return OPERATIONS.to_hybrid(self, dense_ndim)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        """Diagonals; see :func:`coosparse.diagonal`."""
        return np.diagonal(self, offset=offset, axis1=axis1, axis2=axis2)

    def repeat(self, repeats, axis=None):
        """Repeat elements; see :func:`coosparse.repeat`."""
        return np.repeat(self, repeats, axis=axis)

    def take(self, indices, axis=None, out=None, mode="raise"):
        """Elements at ``indices`` along ``axis`` (``mode`` as NumPy's); see :func:`coosparse.take`."""
        return np.take(self, indices, axis=axis, out=out, mode=mode)

    def nonzero(self):
        """Indices of the non-zero elements, one int64 array per dimension; see :func:`coosparse.nonzero`."""
        return np.nonzero(self)

    def __getitem__(self, key):
        """``a[key]`` with NumPy's indexing rules; see the indexing page of the docs.

        Returns a COO, or a NumPy scalar when every dimension gets an integer.
        """
        return OPERATIONS.getitem(self, key)

    def __setitem__(self, key, value):
        raise TypeError(
            "coosparse.COO arrays are immutable: a[key] = v is not supported. Build a new array "
            "instead: coosparse.where(mask, v, a) for a masked update, coosparse.concat / pad to "
            "extend, or convert: d = a.to_dense(); d[key] = v; coosparse.from_dense(d)"
        )
    # ---- linear algebra ---------------------------------------------------------------------
    def __matmul__(self, other):
        return OPERATIONS.matmul_operator(self, other)

    def __rmatmul__(self, other):
        return OPERATIONS.matmul_operator(other, self)

    def dot(self, other):
        """``numpy.dot(self, other)`` (see :func:`coosparse.dot`)."""
        return np.dot(self, other)

    # ---- pickling and tokenising for Dask (SPEC 11); coosparse/dask.py holds the rest ---------
    def __reduce_ex__(self, protocol):
        """Pickle as (indices, values, shape, flags, fill).

        The index and value arrays are pickled by NumPy (CuPy) itself, so with protocol 5 and
        a ``buffer_callback`` (what ``dask.distributed`` uses) they travel as out-of-band
        buffers, never copied into the pickle stream. The fill keeps its dtype (a NumPy
        scalar); the flags travel as they are (exact when pickled: no check on the way back).
        """
        # writeable views: protocol 5 keeps an array's read-only flag, and memory unpickled read-only
        # could never be made writeable again (Numba would compile read-only twins of every kernel)
        return _from_pickle, (writeable(self._indices), writeable(self._values), self._shape, self._sorted,
                              self._unique, self._fill)

    def __dask_tokenize__(self):
        """Deterministic, content-based token for Dask: equal arrays, equal tokens.

        Hashes the index and value bytes with Dask's own array hashing (``normalize_token``:
        one pass over the bytes, no copy for contiguous arrays) plus shape, sparse_ndim, dtype,
        fill (its bytes, so NaN fills tokenise alike) and flags. A GPU array's bytes are
        copied to the host first.
        """
        from dask.tokenize import normalize_token  # optional dependency: Dask calls this, so it is there

        parts = []
        for arr in (self._indices, self._values):
            if is_device_array(arr):
                arr = arr.get()  # synchronize! (the bytes are hashed on the host)
            parts.append(normalize_token(arr))
        return ("coosparse.COO", self._shape, self.sparse_ndim, str(self.dtype),
                self._fill.tobytes().hex(), self._sorted, self._unique, *parts)


def _frozen(x):
    """A read-only view of a NumPy array (the owner's array keeps its own flag); other arrays as they are."""
    if isinstance(x, np.ndarray) and x.flags.writeable:
        x = x.view()
        x.flags.writeable = False
    return x


def _from_pickle(indices, values, shape, sorted, unique, fill_value):
    """Rebuild a pickled COO (no validation: it was valid when pickled)."""
    return COO(indices, values, shape, sorted=sorted, unique=unique, check=False, fill_value=fill_value)
