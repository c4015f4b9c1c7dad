"""Reductions, part 3: the public functions (Array API signatures), NumPy's signatures for
``__array_function__`` and ``COO``'s methods, and NumPy's ufunc methods (``np.add.reduce``)."""
from __future__ import annotations

import warnings

import numpy as np

from ..._core.coo import COO
from ..._core.dispatch import implements, operation
from .grouping import _NoValue, _check, _refuse_out, _refuse_where, _single_axis
from .reductions import (
    _arg, _count_nonzero, _cumulative, _dense_to_coo, _diff, _logical, _mean, _nan_to, _reduce, _scalar,
    _var,
)


# ---------------------------------------------------------------------------------- Array API functions
def sum(x, /, *, axis=None, dtype=None, keepdims=False):
    """Sum of the elements over ``axis`` (Array API ``sum``; NumPy's dtype rules).

    Parameters
    ----------
    x : COO
    axis : None, int or tuple of int
        Axes to reduce (negative counts from the end); None reduces all.
    dtype : dtype, optional
        Accumulation and result dtype. Default: int64 for bool and signed
        integers, uint64 for unsigned integers, else the input dtype.
    keepdims : bool
        Keep the reduced axes as axes of length 1.

    Returns
    -------
    COO
        Over the remaining axes (0-d for a full reduction); fill ``fill * n``.
        Each output element is summed sequentially in stored order, then the
        fill's share for its implicit elements is added.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1, 0, 2], [0, 0, 3]]))
    >>> a.sum(axis=1).to_dense()
    array([3, 3])
    >>> float(coosparse.sum(a))
    6.0
    """
    return _reduce(x, axis, keepdims, "sum", dtype=dtype)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """Product of the elements over ``axis`` (Array API ``prod``; dtypes as :func:`sum`).

    Unstored elements are the fill: with fill 0 a product over a line with an
    implicit element is 0. The result's fill is ``fill ** n``.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1, 2], [3, 0]]))
    >>> coosparse.prod(a, axis=1).to_dense()
    array([2, 0])
    """
    return _reduce(x, axis, keepdims, "prod", dtype=dtype)


def max(x, /, *, axis=None, keepdims=False):
    """Maximum over ``axis`` (Array API ``max``); implicit elements are the fill.

    NaN propagates (NumPy's rule). A zero-size reduction raises ValueError.
    Complex arrays raise TypeError.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[-1, 0, -3], [-2, -5, -4]]))
    >>> coosparse.max(a, axis=1).to_dense()   # row 0 has an unstored 0
    array([ 0, -2])
    """
    return _reduce(x, axis, keepdims, "max")


def min(x, /, *, axis=None, keepdims=False):
    """Minimum over ``axis`` (Array API ``min``); see :func:`max`.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1, 0, 3], [2, 5, 4]]))
    >>> coosparse.min(a, axis=1).to_dense()
    array([0, 2])
    """
    return _reduce(x, axis, keepdims, "min")


def mean(x, /, *, axis=None, keepdims=False):
    """Arithmetic mean over ``axis`` (Array API ``mean``; integers give float64).

    The mean of an empty selection is NaN with NumPy's RuntimeWarning.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1.0, 0.0], [0.0, 3.0]]))
    >>> coosparse.mean(a, axis=0).to_dense()
    array([0.5, 1.5])
    """
    return _mean(x, axis, keepdims, None)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Variance over ``axis`` (Array API ``var``): ``sum(|x - mean|**2) / (n - correction)``.

    Two passes (the mean per output index, then the squared deviations,
    implicit elements included). Complex input gives a real result;
    ``n - correction <= 0`` gives NaN/inf with NumPy's RuntimeWarning.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 0.0]]))
    >>> coosparse.var(a, axis=1).to_dense()
    array([0.66666667, 0.        ])
    """
    return _var(x, axis, keepdims, None, correction)


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Standard deviation over ``axis`` (Array API ``std``): the square root of :func:`var`.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([0.0, 2.0]))
    >>> float(coosparse.std(a))
    1.0
    """
    return _var(x, axis, keepdims, None, correction, name="std", root=True)


def any(x, /, *, axis=None, keepdims=False):
    """Whether any element over ``axis`` is non-zero (Array API ``any``; NaN counts as True).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[0, 0], [0, 4]]))
    >>> coosparse.any(a, axis=1).to_dense()
    array([False,  True])
    """
    return _logical(x, axis, keepdims, True)


def all(x, /, *, axis=None, keepdims=False):
    """Whether every element over ``axis`` is non-zero (Array API ``all``).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1, 2], [0, 4]]))
    >>> coosparse.all(a, axis=1).to_dense()
    array([ True, False])
    """
    return _logical(x, axis, keepdims, False)


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """Number of non-zero elements over ``axis`` (Array API ``count_nonzero``; int64).

    Explicitly stored zeros do not count; an implicit element counts when the
    fill is non-zero.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 0, 1]], np.array([1.0, 0.0, 2.0]), (3,))
    >>> int(coosparse.count_nonzero(a))
    2
    """
    return _count_nonzero(x, axis, keepdims)


def argmax(x, /, *, axis=None, keepdims=False):
    """Index of the first maximum along ``axis`` (flat C-order index for None); int64.

    Implicit elements take part: where the fill is the maximum, the first
    unstored position along the axis is the answer if it comes first. The
    first NaN wins (NumPy's rule). Over every axis the comparison of the
    candidates runs on the host (synchronises on a GPU).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[-1, 0, -3], [2, 5, 0]]))
    >>> coosparse.argmax(a, axis=1).to_dense()
    array([1, 1])
    """
    return _arg(x, axis, keepdims, True)


def argmin(x, /, *, axis=None, keepdims=False):
    """Index of the first minimum along ``axis``; see :func:`argmax`.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1, 0, 3], [2, 5, 4]]))
    >>> coosparse.argmin(a, axis=1).to_dense()
    array([1, 0])
    """
    return _arg(x, axis, keepdims, False)


def nansum(x, /, *, axis=None, dtype=None, keepdims=False):
    """:func:`sum` with NaNs counted as zero (``numpy.nansum``).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> float(coosparse.nansum(coosparse.asarray(np.array([1.0, np.nan, 2.0]))))
    3.0
    """
    return _reduce(x, axis, keepdims, "sum", dtype=dtype, nan=True)


def nanprod(x, /, *, axis=None, dtype=None, keepdims=False):
    """:func:`prod` with NaNs counted as one (``numpy.nanprod``).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> float(coosparse.nanprod(coosparse.asarray(np.array([2.0, np.nan, 3.0]))))
    6.0
    """
    return _reduce(x, axis, keepdims, "prod", dtype=dtype, nan=True)


def nanmax(x, /, *, axis=None, keepdims=False):
    """:func:`max` ignoring NaNs; an all-NaN selection gives NaN and NumPy's RuntimeWarning.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> float(coosparse.nanmax(coosparse.asarray(np.array([1.0, np.nan, -2.0]))))
    1.0
    """
    return _reduce(x, axis, keepdims, "max", nan=True)


def nanmin(x, /, *, axis=None, keepdims=False):
    """:func:`min` ignoring NaNs (see :func:`nanmax`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> float(coosparse.nanmin(coosparse.asarray(np.array([1.0, np.nan, -2.0]))))
    -2.0
    """
    return _reduce(x, axis, keepdims, "min", nan=True)


def nanmean(x, /, *, axis=None, keepdims=False):
    """:func:`mean` of the non-NaN elements (``numpy.nanmean``).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> float(coosparse.nanmean(coosparse.asarray(np.array([1.0, np.nan, 3.0]))))
    2.0
    """
    return _mean(x, axis, keepdims, None, nan=True)


def nanvar(x, /, *, axis=None, correction=0.0, keepdims=False):
    """:func:`var` of the non-NaN elements (``numpy.nanvar``; ``correction`` is NumPy's ddof).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> float(coosparse.nanvar(coosparse.asarray(np.array([1.0, np.nan, 3.0]))))
    1.0
    """
    return _var(x, axis, keepdims, None, correction, nan=True, name="nanvar")


def nanstd(x, /, *, axis=None, correction=0.0, keepdims=False):
    """:func:`std` of the non-NaN elements (``numpy.nanstd``).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> float(coosparse.nanstd(coosparse.asarray(np.array([1.0, np.nan, 3.0]))))
    1.0
    """
    return _var(x, axis, keepdims, None, correction, nan=True, name="nanstd", root=True)


def nanargmax(x, /, *, axis=None, keepdims=False):
    """:func:`argmax` ignoring NaNs; an all-NaN selection raises ValueError (NumPy's rule).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> int(coosparse.nanargmax(coosparse.asarray(np.array([1.0, np.nan, 3.0]))))
    2
    """
    return _arg(x, axis, keepdims, True, nan=True)


def nanargmin(x, /, *, axis=None, keepdims=False):
    """:func:`argmin` ignoring NaNs (see :func:`nanargmax`).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> int(coosparse.nanargmin(coosparse.asarray(np.array([1.0, np.nan, -3.0]))))
    2
    """
    return _arg(x, axis, keepdims, False, nan=True)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sum along ``axis`` (Array API ``cumulative_sum``; dtypes as :func:`sum`).

    ``axis`` may be omitted for 1-D input only. Along a dense (hybrid) axis of
    a fill-0 array the stored values are accumulated in place (same indices,
    same flags). Otherwise the result is computed on the dense form and
    returned as a COO (sorted, unique) storing the elements that differ from
    the input's fill: a cumulative sum along a sparse axis stores everything
    after a line's first non-zero, so its result is mostly dense.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([0, 2, 0, 3]))
    >>> coosparse.cumulative_sum(a).to_dense()
    array([0, 2, 2, 5])
    """
    return _cumulative(x, axis, dtype, include_initial, True, "cumulative_sum")


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative product along ``axis`` (Array API ``cumulative_prod``); see :func:`cumulative_sum`.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([1, 2, 3]))
    >>> coosparse.cumulative_prod(a).to_dense()
    array([1, 2, 6])
    """
    return _cumulative(x, axis, dtype, include_initial, False, "cumulative_prod")


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """n-th discrete difference along ``axis`` (Array API ``diff``).

    Along a dense (hybrid) axis the stored values are differenced in place
    (same indices and flags; the fill's differences are 0). Along a sparse
    axis the result is computed on the dense form and returned as a COO
    storing the entries that differ from its fill (0, or NaN for a NaN fill).

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([1, 1, 4, 0]))
    >>> coosparse.diff(a).to_dense()
    array([ 0,  3, -4])
    """
    return _diff(x, n, axis, prepend, append)


# ---------------------------------------------------------------------------------- NumPy signatures
# np.sum(a, ...) and a.sum(...) arrive here with NumPy's keywords.
def _np_reducer(op, nan=False, has_dtype=True):
    def f(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
        name = ("nan" if nan else "") + op
        _refuse_out(out, name)
        _refuse_where(where, name)
        if keepdims is _NoValue:
            keepdims = False
        return _reduce(a, axis, keepdims, op, dtype=dtype if has_dtype else None, initial=initial, nan=nan)
    return f


np_sum = implements(np.sum)(_np_reducer("sum"))
np_prod = implements(np.prod)(_np_reducer("prod"))
np_nansum = implements(np.nansum)(_np_reducer("sum", nan=True))
np_nanprod = implements(np.nanprod)(_np_reducer("prod", nan=True))


def _np_minmax(op, nan=False):
    def f(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
        name = ("nan" if nan else "") + op
        _refuse_out(out, name)
        _refuse_where(where, name)
        return _reduce(a, axis, bool(keepdims) if keepdims is not _NoValue else False, op, initial=initial, nan=nan)
    return f


np_max = implements(np.max, np.amax)(_np_minmax("max"))
np_min = implements(np.min, np.amin)(_np_minmax("min"))
np_nanmax = implements(np.nanmax)(_np_minmax("max", nan=True))
np_nanmin = implements(np.nanmin)(_np_minmax("min", nan=True))


def _np_mean(nan):
    def f(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
        _refuse_out(out, "mean")
        _refuse_where(where, "mean")
        return _mean(a, axis, bool(keepdims) if keepdims is not _NoValue else False, dtype, nan=nan)
    return f


np_mean = implements(np.mean)(_np_mean(False))
np_nanmean = implements(np.nanmean)(_np_mean(True))


def _np_var(nan, is_std):
    name = ("nan" if nan else "") + ("std" if is_std else "var")

    def f(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=_NoValue,
          correction=_NoValue):
        _refuse_out(out, name)
        _refuse_where(where, name)
        if mean is not _NoValue:
            raise TypeError(f"{name}: mean= is not supported for COO arrays")
        if correction is not _NoValue:
            if ddof != 0:
                raise ValueError(f"{name}: ddof and correction can't be provided simultaneously")
            ddof = correction
        return _var(a, axis, bool(keepdims) if keepdims is not _NoValue else False, dtype, ddof, nan=nan, name=name,
                    root=is_std)
    return f


np_var = implements(np.var)(_np_var(False, False))
np_std = implements(np.std)(_np_var(False, True))
np_nanvar = implements(np.nanvar)(_np_var(True, False))
np_nanstd = implements(np.nanstd)(_np_var(True, True))


def _np_logical(is_any):
    def f(a, axis=None, out=None, keepdims=False, *, where=True):
        _refuse_out(out, "any" if is_any else "all")
        _refuse_where(where, "any" if is_any else "all")
        return _logical(a, axis, bool(keepdims) if keepdims is not _NoValue else False, is_any)
    return f


np_any = implements(np.any)(_np_logical(True))
np_all = implements(np.all)(_np_logical(False))


@implements(np.count_nonzero)
def np_count_nonzero(a, axis=None, *, keepdims=False):
    return _count_nonzero(a, axis, keepdims)


def _np_arg(is_max, nan):
    def f(a, axis=None, out=None, *, keepdims=False):
        _refuse_out(out, "argmax" if is_max else "argmin")
        return _arg(a, axis, bool(keepdims) if keepdims is not _NoValue else False, is_max, nan=nan)
    return f


np_argmax = implements(np.argmax)(_np_arg(True, False))
np_argmin = implements(np.argmin)(_np_arg(False, False))
np_nanargmax = implements(np.nanargmax)(_np_arg(True, True))
np_nanargmin = implements(np.nanargmin)(_np_arg(False, True))


def _np_cum(is_sum, nan=False):
    name = ("nan" if nan else "") + ("cumsum" if is_sum else "cumprod")

    def f(a, axis=None, dtype=None, out=None):
        _refuse_out(out, name)
        x = a
        if nan:
            a = x = _check(a, name)
            if a.dtype.kind in "fc":
                # an element is its duplicates' sum (inf + -inf is NaN; NaN + 1 is NaN): sum them first
                a = a if a.is_unique else a.coalesce()
                vals, fill = _nan_to(a.values, a.fill_value, 0 if is_sum else 1)
                x = a._with(values=vals, fill_value=fill)
        return _cumulative(x, axis, dtype, False, is_sum, name, flatten=axis is None)
    return f


np_cumsum = implements(np.cumsum)(_np_cum(True))
np_cumprod = implements(np.cumprod)(_np_cum(False))
np_nancumsum = implements(np.nancumsum)(_np_cum(True, True))
np_nancumprod = implements(np.nancumprod)(_np_cum(False, True))

if hasattr(np, "cumulative_sum"):  # NumPy >= 2.1
    @implements(np.cumulative_sum)
    def np_cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        _refuse_out(out, "cumulative_sum")
        return cumulative_sum(x, axis=axis, dtype=dtype, include_initial=include_initial)

    @implements(np.cumulative_prod)
    def np_cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        _refuse_out(out, "cumulative_prod")
        return cumulative_prod(x, axis=axis, dtype=dtype, include_initial=include_initial)


@implements(np.diff)
def np_diff(a, n=1, axis=-1, prepend=_NoValue, append=_NoValue):
    return _diff(a, n, axis, None if prepend is _NoValue else prepend, None if append is _NoValue else append)


# ---------------------------------------------------------------------------------- ufunc methods
_REDUCE_UFUNCS = {
    np.add: ("sum", False), np.multiply: ("prod", False),
    np.maximum: ("max", False), np.minimum: ("min", False),
    np.fmax: ("max", True), np.fmin: ("min", True),
}


@operation()
def ufunc_method(ufunc, method, *inputs, **kwargs):
    """NumPy ufunc methods other than ``__call__`` on COO arrays (``COO.__array_ufunc__``).

    ``reduce`` is the matching reduction (``np.add.reduce`` is :func:`sum`,
    ``np.multiply`` :func:`prod`, ``np.maximum``/``np.minimum`` :func:`max`/
    :func:`min`, ``np.fmax``/``np.fmin`` their NaN-ignoring forms,
    ``np.logical_and``/``np.logical_or`` :func:`all`/:func:`any`), with
    NumPy's ``axis`` (default 0), ``dtype``, ``keepdims`` and ``initial``.
    ``accumulate`` is :func:`cumulative_sum` for ``np.add``,
    :func:`cumulative_prod` for ``np.multiply``, and the dense route for
    other binary ufuncs. ``out=`` and ``where=`` raise TypeError, as do
    ``reduceat``, ``outer`` and ``at``.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.asarray(np.array([[1, 0], [2, 3]]))
    >>> np.add.reduce(a).to_dense()
    array([3, 3])
    """
    name = getattr(ufunc, "__name__", repr(ufunc))
    if method not in ("reduce", "accumulate"):
        raise TypeError(
            f"numpy.{name}.{method} is not supported for coosparse.COO arrays (reduce and accumulate "
            "are); convert with .to_dense() first"
        )
    if len(inputs) != 1 or not isinstance(inputs[0], COO):
        raise TypeError(f"numpy.{name}.{method}: expected one COO array as input")
    a = inputs[0]
    _refuse_out(kwargs.pop("out", None), f"numpy.{name}.{method}")
    _refuse_where(kwargs.pop("where", True), f"numpy.{name}.{method}")
    axis = kwargs.pop("axis", 0)
    dtype = kwargs.pop("dtype", None)
    if method == "accumulate":
        if kwargs:
            raise TypeError(f"numpy.{name}.accumulate: unsupported arguments {sorted(kwargs)}")
        if axis is None:
            raise TypeError(f"numpy.{name}.accumulate: axis must be an integer")
        if isinstance(axis, tuple):  # NumPy takes a 1-tuple as its axis, and refuses any other tuple
            if len(axis) != 1:
                raise ValueError(f"numpy.{name}.accumulate does not allow multiple axes; got axis={axis!r}")
            axis = axis[0]
        if ufunc is np.add or ufunc is np.multiply:
            return _cumulative(a, axis, dtype, False, ufunc is np.add, f"numpy.{name}.accumulate")
        if ufunc.nin != 2:
            raise TypeError(f"numpy.{name}.accumulate is only defined for binary ufuncs")
        ax = _single_axis(axis, a.ndim, f"numpy.{name}.accumulate")
        r = ufunc.accumulate(a.to_dense(), axis=ax, dtype=dtype)
        return _dense_to_coo(r, a.sparse_ndim, _scalar(a.fill_value, r.dtype))
    keepdims = bool(kwargs.pop("keepdims", False))
    initial = kwargs.pop("initial", _NoValue)
    if kwargs:
        raise TypeError(f"numpy.{name}.reduce: unsupported arguments {sorted(kwargs)}")
    if ufunc in (np.logical_and, np.logical_or):
        if initial is not _NoValue:
            raise TypeError(f"numpy.{name}.reduce: initial= is not supported for COO arrays")
        if dtype is not None and np.dtype(dtype) != np.bool_:  # NumPy's loops are bool only
            raise TypeError(f"numpy.{name}.reduce: dtype must be bool (NumPy has no {np.dtype(dtype)} loop "
                            f"for {name}); got dtype={dtype!r}")
        return _logical(a, axis, keepdims, ufunc is np.logical_or)
    spec = _REDUCE_UFUNCS.get(ufunc)
    if spec is None:
        supported = ", ".join(f"numpy.{u.__name__}" for u in (*_REDUCE_UFUNCS, np.logical_and, np.logical_or))
        raise TypeError(f"numpy.{name}.reduce is not supported for coosparse.COO arrays; supported: {supported}")
    op, nan = spec
    if op in ("max", "min") and dtype is not None:
        # NumPy casts the operand, then reduces: a cast that does not keep the order (to unsigned,
        # to a narrower integer, NaN to an integer) changes which element is the extreme
        a = a.astype(dtype, copy=False)
    if nan:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # fmax.reduce of all-NaN is NaN, silently
            return _reduce(a, axis, keepdims, op, initial=initial, nan=True)
    return _reduce(a, axis, keepdims, op, dtype=dtype, initial=initial)
