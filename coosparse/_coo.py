"""The COO array type (SPEC 1)."""
from __future__ import annotations

import numbers
import operator

import numpy as np

from . import _dtypes, _fill
from ._backend import array_namespace, device_of, is_device_array, is_device_array_type


def _namespace(a):
    return array_namespace(a)


def _as_shape(shape):
    if isinstance(shape, numbers.Integral) or (isinstance(shape, np.ndarray) and shape.ndim == 0):
        shape = (shape,)  # as NumPy: an int is a 1-d shape
    try:
        dims = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"shape must be a sequence of integers; got {shape!r}") from None
    for d, n in enumerate(dims):
        if n < 0:
            raise ValueError(f"shape must be non-negative; dimension {d} has size {n}")
    return dims


class COO:
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
        # A device array decides the namespace; list-like parts follow it. Two
        # arrays on different devices are an error, never a silent copy.
        if isinstance(indices, np.ndarray) and is_device_array(values) or (
            isinstance(values, np.ndarray) and is_device_array(indices)
        ):
            raise ValueError(
                f"indices live on {device_of(indices)} but values on {device_of(values)}; "
                "move one with cupy.asarray or .get()"
            )
        xp = _namespace(values) if is_device_array(values) else _namespace(indices)
        listed = not hasattr(indices, "dtype")
        indices = xp.asarray(indices)
        if listed and indices.size == 0 and indices.dtype.kind == "f":
            indices = indices.astype(np.int64)  # empty lists are float64 to NumPy; no index is given
        values = _dtypes.native(xp.asarray(values))
        shape = _as_shape(shape)
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
        self._indices = indices
        self._values = values
        self._shape = shape
        nnz = indices.shape[1]
        sorted = bool(sorted) or nnz <= 1
        unique = bool(unique) or nnz <= 1
        if check and (sorted or unique) and nnz > 1:
            from ._flags import verify_flags

            verify_flags(indices, self.sparse_shape, sorted, unique)
        self._sorted = sorted
        self._unique = unique
        self._fill = _fill.fill_scalar(fill_value, values.dtype)

    @staticmethod
    def _validate_layout(indices, values, shape):
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
        if nnz == 0:
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
        """int64 array of shape (sparse_ndim, nnz)."""
        return self._indices

    @property
    def values(self):
        """Array of shape (nnz, *dense_shape)."""
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
        return self._indices.shape[1]

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def sparse_ndim(self):
        return self._indices.shape[0]

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
        raise TypeError(
            "a COO array is not converted to a dense NumPy array implicitly; call .to_dense()"
        )

    def __array_function__(self, func, types, args, kwargs):
        # defer to other array types (dask, ...) that may know how to combine with a COO
        if not all(issubclass(t, COO) or t.__module__.split(".")[0] == "numpy" or is_device_array_type(t)
                   for t in types):
            return NotImplemented
        from ._dispatch import array_function

        return array_function(func, types, args, kwargs)

    # ------------------------------------------------------------------ copies
    def _with(self, indices=None, values=None, *, sorted=None, unique=None, fill_value=None):
        """A COO sharing this one's other parts, fill included (no validation: internal use).

        The fill is cast to the new values' dtype when they change it.
        """
        return COO(
            self._indices if indices is None else indices,
            self._values if values is None else values,
            self._shape,
            sorted=self._sorted if sorted is None else sorted,
            unique=self._unique if unique is None else unique,
            check=False,
            fill_value=self._fill if fill_value is None else fill_value,
        )

    def copy(self):
        """A deep copy (indices and values copied, flags kept)."""
        return self._with(self._indices.copy(), self._values.copy())

    def astype(self, dtype, copy=True):
        """Cast the values; indices are shared unless ``copy``; flags kept."""
        dt = _dtypes.check_dtype(dtype)
        if dt == self.dtype and not copy:
            return self
        with np.errstate(all="ignore"):
            fill = np.asarray(self._fill).astype(dt)[()]  # the fill casts as the values do
        return self._with(
            self._indices.copy() if copy else self._indices, self._values.astype(dt, copy=True),
            fill_value=fill,
        )

    def to(self, device):
        """Move to 'cpu' or 'cuda[:N]'; returns self when already there. Synchronises."""
        from ._device import to_device

        return to_device(self, device)

    # ------------------------------------------------------------------ operations
    def coalesce(self, prune=False):
        """Sorted, duplicate-free copy (see :func:`coosparse.coalesce`)."""
        from ._coalesce import coalesce

        return coalesce(self, prune=prune)

    def to_dense(self, order="C"):
        """Dense array (NumPy or CuPy, on this array's device); duplicates are summed."""
        from ._dense import to_dense

        return to_dense(self, order=order)

    def todense(self, order="C"):
        return self.to_dense(order=order)

    def to_scipy(self, format="coo"):
        """A scipy.sparse array ('coo', 'csr' or 'csc'); see :func:`coosparse.interop.scipy.to_scipy`."""
        from .interop.scipy import to_scipy

        return to_scipy(self, format=format)

    # ---- elementwise: NumPy ufuncs and operators (issue 11) ----------------------------
    # Every operator is a NumPy ufunc on the engine in coosparse/_ufunc.py (SPEC 9):
    # reflected spellings swap the operands, in-place spellings return a new array.
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__":
            from ._reduce import ufunc_method

            return ufunc_method(ufunc, method, *inputs, **kwargs)
        from ._ufunc import array_ufunc

        return array_ufunc(ufunc, *inputs, **kwargs)

    def __add__(self, other):
        return _binary(np.add, self, other)

    def __radd__(self, other):
        return _binary(np.add, other, self)

    def __iadd__(self, other):
        return _inplace(np.add, self, other)

    def __sub__(self, other):
        return _binary(np.subtract, self, other)

    def __rsub__(self, other):
        return _binary(np.subtract, other, self)

    def __isub__(self, other):
        return _inplace(np.subtract, self, other)

    def __mul__(self, other):
        return _binary(np.multiply, self, other)

    def __rmul__(self, other):
        return _binary(np.multiply, other, self)

    def __imul__(self, other):
        return _inplace(np.multiply, self, other)

    def __truediv__(self, other):
        return _binary(np.true_divide, self, other)

    def __rtruediv__(self, other):
        return _binary(np.true_divide, other, self)

    def __itruediv__(self, other):
        return _inplace(np.true_divide, self, other)

    def __floordiv__(self, other):
        return _binary(np.floor_divide, self, other)

    def __rfloordiv__(self, other):
        return _binary(np.floor_divide, other, self)

    def __ifloordiv__(self, other):
        return _inplace(np.floor_divide, self, other)

    def __mod__(self, other):
        return _binary(np.remainder, self, other)

    def __rmod__(self, other):
        return _binary(np.remainder, other, self)

    def __imod__(self, other):
        return _inplace(np.remainder, self, other)

    def __divmod__(self, other):
        return _binary(np.divmod, self, other)

    def __rdivmod__(self, other):
        return _binary(np.divmod, other, self)

    def __pow__(self, other, modulo=None):
        if modulo is not None:
            return NotImplemented
        return _binary(np.power, self, other)

    def __rpow__(self, other, modulo=None):
        if modulo is not None:
            return NotImplemented
        return _binary(np.power, other, self)

    def __ipow__(self, other):
        return _inplace(np.power, self, other)

    def __and__(self, other):
        return _binary(np.bitwise_and, self, other)

    def __rand__(self, other):
        return _binary(np.bitwise_and, other, self)

    def __iand__(self, other):
        return _inplace(np.bitwise_and, self, other)

    def __or__(self, other):
        return _binary(np.bitwise_or, self, other)

    def __ror__(self, other):
        return _binary(np.bitwise_or, other, self)

    def __ior__(self, other):
        return _inplace(np.bitwise_or, self, other)

    def __xor__(self, other):
        return _binary(np.bitwise_xor, self, other)

    def __rxor__(self, other):
        return _binary(np.bitwise_xor, other, self)

    def __ixor__(self, other):
        return _inplace(np.bitwise_xor, self, other)

    def __lshift__(self, other):
        return _binary(np.left_shift, self, other)

    def __rlshift__(self, other):
        return _binary(np.left_shift, other, self)

    def __ilshift__(self, other):
        return _inplace(np.left_shift, self, other)

    def __rshift__(self, other):
        return _binary(np.right_shift, self, other)

    def __rrshift__(self, other):
        return _binary(np.right_shift, other, self)

    def __irshift__(self, other):
        return _inplace(np.right_shift, self, other)

    # comparisons return COO arrays, so a COO is unhashable, like a NumPy array
    def __eq__(self, other):
        return _binary(np.equal, self, other)

    def __ne__(self, other):
        return _binary(np.not_equal, self, other)

    def __lt__(self, other):
        return _binary(np.less, self, other)

    def __le__(self, other):
        return _binary(np.less_equal, self, other)

    def __gt__(self, other):
        return _binary(np.greater, self, other)

    def __ge__(self, other):
        return _binary(np.greater_equal, self, other)

    __hash__ = None

    def __neg__(self):
        return _unary(np.negative, self)

    def __pos__(self):
        return _unary(np.positive, self)

    def __abs__(self):
        return _unary(np.absolute, self)

    def __invert__(self):
        return _unary(np.invert, self)

    @property
    def real(self):
        """Real part (a COO; the array itself for real dtypes)."""
        from ._math import real

        return real(self)

    @property
    def imag(self):
        """Imaginary part (a COO; zeros of the dtype for real dtypes)."""
        from ._math import imag

        return imag(self)

    def conj(self):
        """Complex conjugate (see :func:`coosparse.conj`)."""
        return _unary(np.conjugate, self)

    def round(self, decimals=0):
        """Round to ``decimals`` (see :func:`coosparse.round`)."""
        from ._math import round as _round

        return _round(self, decimals=decimals)

    def clip(self, min=None, max=None):
        """Clamp to ``[min, max]`` (see :func:`coosparse.clip`)."""
        from ._math import clip

        return clip(self, min, max)

    # ---- reductions and the Array API namespace (issue 11, reductions half) -----------------
    # Methods with NumPy's signatures; each delegates to coosparse/_reduce.py or
    # coosparse/_array_api.py (see those modules for the algorithms and the result's fill).
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True):
        """Sum over ``axis`` (see :func:`coosparse.sum`); NumPy's keywords."""
        from ._reduce import np_sum

        return np_sum(self, axis, dtype, out, keepdims, initial, where)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True):
        """Product over ``axis`` (see :func:`coosparse.prod`)."""
        from ._reduce import np_prod

        return np_prod(self, axis, dtype, out, keepdims, initial, where)

    def max(self, axis=None, out=None, keepdims=False, initial=np._NoValue, where=True):
        """Maximum over ``axis`` (see :func:`coosparse.max`)."""
        from ._reduce import np_max

        return np_max(self, axis, out, keepdims, initial, where)

    def min(self, axis=None, out=None, keepdims=False, initial=np._NoValue, where=True):
        """Minimum over ``axis`` (see :func:`coosparse.min`)."""
        from ._reduce import np_min

        return np_min(self, axis, out, keepdims, initial, where)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
        """Mean over ``axis`` (see :func:`coosparse.mean`)."""
        from ._reduce import np_mean

        return np_mean(self, axis, dtype, out, keepdims, where=where)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
            mean=np._NoValue, correction=np._NoValue):
        """Variance over ``axis`` (see :func:`coosparse.var`; ``ddof`` is the correction)."""
        from ._reduce import np_var

        return np_var(self, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
            mean=np._NoValue, correction=np._NoValue):
        """Standard deviation over ``axis`` (see :func:`coosparse.std`)."""
        from ._reduce import np_std

        return np_std(self, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)

    def any(self, axis=None, out=None, keepdims=False, *, where=True):
        """Whether any element over ``axis`` is non-zero (see :func:`coosparse.any`)."""
        from ._reduce import np_any

        return np_any(self, axis, out, keepdims, where=where)

    def all(self, axis=None, out=None, keepdims=False, *, where=True):
        """Whether every element over ``axis`` is non-zero (see :func:`coosparse.all`)."""
        from ._reduce import np_all

        return np_all(self, axis, out, keepdims, where=where)

    def argmax(self, axis=None, out=None, *, keepdims=False):
        """Index of the first maximum (see :func:`coosparse.argmax`)."""
        from ._reduce import np_argmax

        return np_argmax(self, axis, out, keepdims=keepdims)

    def argmin(self, axis=None, out=None, *, keepdims=False):
        """Index of the first minimum (see :func:`coosparse.argmin`)."""
        from ._reduce import np_argmin

        return np_argmin(self, axis, out, keepdims=keepdims)

    def cumsum(self, axis=None, dtype=None, out=None):
        """Cumulative sum (``numpy.cumsum``: axis None flattens); see :func:`coosparse.cumulative_sum`."""
        from ._reduce import np_cumsum

        return np_cumsum(self, axis, dtype, out)

    def cumprod(self, axis=None, dtype=None, out=None):
        """Cumulative product (``numpy.cumprod``); see :func:`coosparse.cumulative_prod`."""
        from ._reduce import np_cumprod

        return np_cumprod(self, axis, dtype, out)

    def __array_namespace__(self, /, *, api_version=None):
        """The Array API namespace of COO arrays: the ``coosparse`` module itself."""
        import sys

        from ._array_api import check_api_version

        check_api_version(api_version)
        return sys.modules[__name__.rsplit(".", 1)[0]]

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
    # ---- shape and indexing (issue 12) ------------------------------------------
    @classmethod
    def _trusted(cls, indices, values, shape, sorted, unique, fill_value):
        """Internal fast constructor: parts already valid, indices C-contiguous int64,
        ``fill_value`` a scalar of ``values.dtype`` (no checks, no conversions).

        Sets exactly the attributes ``__init__`` sets (a test compares them)."""
        self = object.__new__(cls)
        self._indices = indices
        self._values = values
        self._shape = shape
        nnz = indices.shape[1]
        self._sorted = bool(sorted) or nnz <= 1
        self._unique = bool(unique) or nnz <= 1
        self._fill = fill_value
        return self

    @property
    def T(self):
        """The transpose (all axes reversed); see :func:`coosparse.transpose` for its flags."""
        from ._shape import transpose

        return transpose(self)

    @property
    def mT(self):
        """The last two axes swapped; see :func:`coosparse.matrix_transpose`."""
        from ._shape import matrix_transpose

        return matrix_transpose(self)

    def transpose(self, *axes):
        """Permute the axes: ``a.transpose()``, ``a.transpose(1, 0)`` or ``a.transpose((1, 0))``."""
        from ._shape import transpose

        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return transpose(self, axes if axes != () else None)

    def reshape(self, *shape, order="C"):
        """New shape, C order: ``a.reshape(2, -1)`` or ``a.reshape((2, -1))``; see :func:`coosparse.reshape`."""
        from ._shape import reshape

        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = shape[0]
        return reshape(self, shape, order=order)

    def ravel(self, order="C"):
        """1-D view of the elements in C order; see :func:`coosparse.ravel`."""
        from ._shape import ravel

        return ravel(self, order=order)

    def flatten(self, order="C"):
        """1-D array of the elements in C order; see :func:`coosparse.ravel`."""
        from ._shape import ravel

        return ravel(self, order=order)

    def swapaxes(self, axis1, axis2):
        """Interchange two axes; see :func:`coosparse.swapaxes`."""
        from ._shape import swapaxes

        return swapaxes(self, axis1, axis2)

    def squeeze(self, axis=None):
        """Remove length-1 axes; see :func:`coosparse.squeeze`."""
        from ._shape import squeeze

        return squeeze(self, axis)

    def to_hybrid(self, dense_ndim):
        """The same array with ``dense_ndim`` trailing dense dimensions; see :func:`coosparse.to_hybrid`."""
        from ._shape import to_hybrid

        return to_hybrid(self, dense_ndim)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        """Diagonals; see :func:`coosparse.diagonal`."""
        from ._join import diagonal

        return diagonal(self, offset=offset, axis1=axis1, axis2=axis2)

    def repeat(self, repeats, axis=None):
        """Repeat elements; see :func:`coosparse.repeat`."""
        from ._join import repeat

        return repeat(self, repeats, axis=axis)

    def take(self, indices, axis=None):
        """Elements at ``indices`` along ``axis``; see :func:`coosparse.take`."""
        from ._search import take

        return take(self, indices, axis=axis)

    def nonzero(self):
        """Indices of the non-zero elements, one int64 array per dimension; see :func:`coosparse.nonzero`."""
        from ._search import nonzero

        return nonzero(self)

    def __getitem__(self, key):
        """``a[key]`` with NumPy's indexing rules; see the indexing page of the docs.

        Returns a COO, or a NumPy scalar when every dimension gets an integer.
        """
        from ._indexing import getitem

        return getitem(self, key)

    def __setitem__(self, key, value):
        raise TypeError(
            "coosparse.COO arrays are immutable: a[key] = v is not supported. Build a new array "
            "instead: coosparse.where(mask, v, a) for a masked update, coosparse.concat / pad to "
            "extend, or convert: d = a.to_dense(); d[key] = v; coosparse.from_dense(d)"
        )
    # ---- linear algebra (issue 13) ---------------------------------------------
    def __matmul__(self, other):
        from ._linalg import binary_operand, matmul

        return matmul(self, other) if binary_operand(other) else NotImplemented

    def __rmatmul__(self, other):
        from ._linalg import binary_operand, matmul

        return matmul(other, self) if binary_operand(other) else NotImplemented

    def dot(self, other):
        """``numpy.dot(self, other)`` (see :func:`coosparse.dot`)."""
        from ._linalg import dot

        return dot(self, other)

    # ---- dask (issue 15) -------------------------------------------------------------------
    # Pickling and tokenising for Dask (SPEC 11); coosparse/dask.py holds the rest.
    def __reduce_ex__(self, protocol):
        """Pickle as (indices, values, shape, flags, fill).

        The index and value arrays are pickled by NumPy (CuPy) itself, so with protocol 5 and
        a ``buffer_callback`` (what ``dask.distributed`` uses) they travel as out-of-band
        buffers, never copied into the pickle stream. The fill keeps its dtype (a NumPy
        scalar); the flags travel as they are (exact when pickled: no check on the way back).
        """
        return _from_pickle, (self._indices, self._values, self._shape, self._sorted, self._unique,
                              self._fill)

    def __dask_tokenize__(self):
        """Deterministic, content-based token for Dask: equal arrays, equal tokens.

        Hashes the index and value bytes with Dask's own array hashing (``normalize_token``:
        one pass over the bytes, no copy for contiguous arrays) plus shape, sparse_ndim, dtype,
        fill (its bytes, so NaN fills tokenise alike) and flags. A GPU array's bytes are
        copied to the host first.
        """
        from dask.tokenize import normalize_token

        parts = []
        for arr in (self._indices, self._values):
            if is_device_array(arr):
                arr = arr.get()  # synchronize! (the bytes are hashed on the host)
            parts.append(normalize_token(arr))
        return ("coosparse.COO", self._shape, self.sparse_ndim, str(self.dtype),
                self._fill.tobytes().hex(), self._sorted, self._unique, *parts)


def _binary(f, a, b):
    from ._ufunc import operator_call

    return operator_call(f, a, b)


def _inplace(f, a, b):
    from ._ufunc import inplace_call

    return inplace_call(f, a, b)


def _unary(f, a):
    from ._ufunc import elementwise

    return elementwise(f, (a,))


def is_scalar(x):
    return isinstance(x, (numbers.Number, np.generic)) or (hasattr(x, "ndim") and x.ndim == 0 and not isinstance(x, COO))


# ---- dask (issue 15) ---------------------------------------------------------------------
def _from_pickle(indices, values, shape, sorted, unique, fill_value):
    """Rebuild a pickled COO (no validation: it was valid when pickled)."""
    return COO(indices, values, shape, sorted=sorted, unique=unique, check=False, fill_value=fill_value)
