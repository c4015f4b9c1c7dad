"""Strided scatter (SPEC 5): ``as_strided_scatter`` and the view algebra behind it.

The public function validates everything and decides the algorithm; the
kernels (``strided_scatter_sorted`` / ``strided_scatter_ordered`` in
``coosparse/_kernels/api.py``) only move bits. See docs/strided-scatter.md.
"""
from __future__ import annotations

import operator

import numpy as np

from .._core import dtypes as _dtypes
from .._core.arrays import bits_view, flat_view
from .._kernels.backend import array_namespace, backend_for, device_of


def _ints(seq, what):
    try:
        return tuple(operator.index(n) for n in seq)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of integers; got {seq!r}") from None


def view_may_overlap(size, stride):
    """True unless two elements of the view can be proven distinct from ``size``/``stride`` alone.

    The test (sufficient, not exact): drop dims of size 1, sort the rest by
    ``|stride|``; the view cannot overlap itself when every ``|stride|``
    exceeds the span ``sum((n - 1) * |s|)`` of all smaller ones. Then the
    addresses, with dims ordered by decreasing ``|stride|`` and negative ones
    flipped, strictly increase in C order.

    Examples
    --------
    >>> from coosparse.ops.scatter import view_may_overlap
    >>> view_may_overlap((4, 3), (3, 1)), view_may_overlap((4, 3), (2, 1)), view_may_overlap((5,), (0,))
    (False, True, True)
    """
    span = 0
    for n, s in sorted(((n, abs(s)) for n, s in zip(size, stride) if n != 1), key=lambda d: d[1]):
        if n == 0:
            return False
        if s <= span:
            return True
        span += (n - 1) * s
    return False


def _canonical_view(size, stride, src_strides, offset, src_base):
    """Dims of a non-overlapping view permuted/flipped so addresses increase in C order."""
    dims = []
    for n, s, ss in zip(size, stride, src_strides):
        if n == 1:
            continue
        if s < 0:  # walk the dim backwards: same set of (address, source) pairs
            offset += (n - 1) * s
            src_base += (n - 1) * ss
            s, ss = -s, -ss
        dims.append((n, s, ss))
    dims.sort(key=lambda d: -d[1])  # stable: ties cannot occur without overlap
    if not dims:
        dims = [(1, 1, 0)]
    arr = np.array(dims, dtype=np.int64).T.copy()
    return arr[0], arr[1], arr[2], offset, src_base


def as_strided_scatter(input, src, size, stride, storage_offset=0, *, out=None):
    """Copy of ``input`` with a strided view of it replaced by ``src`` (SPEC 5).

    The result is a new C-contiguous array of ``input``'s shape and dtype.
    Addresses are element positions in that C-contiguous result (not in
    ``input``'s own memory, unlike torch): ``src[i]`` goes to
    ``result.reshape(-1)[storage_offset + sum(i[k] * stride[k])]``.
    Where the view overlaps itself the last element of ``src`` in C order wins.
    ``input`` is never modified. Never synchronises on a GPU (bounds are
    checked from ``size``/``stride`` on the host; overlaps are resolved on
    the device).

    Parameters
    ----------
    input : numpy.ndarray or cupy.ndarray
        Any strides, any supported dtype, 0-d and empty included.
    src : array_like
        Shape ``size``. An array must cast safely to ``input.dtype``
        (``np.can_cast(..., 'safe')``); Python scalars and lists are converted
        with ``input.dtype``.
    size, stride : sequence of int
        Shape and element strides of the view. Strides may be zero or negative
        (torch forbids negative strides; here every address is bounds-checked).
    storage_offset : int
        Non-negative element offset of the view's first element.
    out : ndarray, optional
        Where to write the result, for callers that reuse a buffer (its pages
        already mapped: the work is then a copy at memory speed). Must be an
        array of ``input``'s kind and device, with ``input``'s shape and
        dtype, C-contiguous, writeable, and share no memory with ``input`` or
        ``src``; every check is made before anything is written.

    Returns
    -------
    ndarray
        C-contiguous, same device as ``input``: ``out`` when given.

    Raises
    ------
    ValueError
        ``len(size) != len(stride)``, negative size or offset, ``src.shape != size``.
    IndexError
        An address falls outside ``[0, input.size)``; raised before any write.
    TypeError
        Unsupported dtype, or ``src`` does not cast safely to ``input.dtype``;
        ``out`` not an array of ``input``'s kind, or of another dtype.
    ValueError
        ``out`` of another shape or device, not C-contiguous, read-only, or
        overlapping ``input`` or ``src``.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = np.zeros((2, 3), dtype=np.int32)
    >>> coosparse.as_strided_scatter(x, np.array([1, 2, 3], dtype=np.int32), (3,), (2,), 0)
    array([[1, 0, 2],
           [0, 3, 0]], dtype=int32)
    >>> coosparse.as_strided_scatter(np.zeros(3), np.array([1.0, 2.0]), (2,), (0,), 1)  # overlap: last wins
    array([0., 2., 0.])
    >>> buf = np.empty((2, 3), dtype=np.int32)
    >>> r = coosparse.as_strided_scatter(x, np.array([7, 8], dtype=np.int32), (2,), (3,), 1, out=buf)
    >>> r is buf, buf
    (True, array([[0, 7, 0],
           [0, 8, 0]], dtype=int32))
    """
    xp = array_namespace(input)
    input = _dtypes.native(xp.asarray(input))
    dtype = _dtypes.check_dtype(input.dtype, "input")
    size = _ints(size, "size")
    stride = _ints(stride, "stride")
    if len(size) != len(stride):
        raise ValueError(f"size {size} and stride {stride} must have the same length")
    for k, n in enumerate(size):
        if n < 0:
            raise ValueError(f"size must be non-negative; dimension {k} has size {n}")
    offset = operator.index(storage_offset)
    if offset < 0:
        raise ValueError(f"storage_offset must be non-negative; got {offset}")
    if hasattr(src, "dtype") and hasattr(src, "shape"):
        src = _dtypes.native(xp.asarray(src))
        if src.dtype != dtype:
            if not np.can_cast(src.dtype, dtype, "safe"):
                raise TypeError(
                    f"src dtype {src.dtype} does not cast safely to input dtype {dtype}; cast it first"
                )
            src = src.astype(dtype)
    else:
        src = xp.asarray(src, dtype=dtype)
    if tuple(src.shape) != size:
        raise ValueError(f"src has shape {tuple(src.shape)} but the view has size {size}")

    n_out = int(input.size)
    total = 1
    for n in size:
        total *= n
    if total:
        # exact extent in Python ints: no overflow whatever the strides
        lo = offset + sum((n - 1) * s for n, s in zip(size, stride) if s < 0)
        hi = offset + sum((n - 1) * s for n, s in zip(size, stride) if s > 0)
        if lo < 0 or hi >= n_out:
            reach = [(n - 1) * s for n, s in zip(size, stride)]
            k = max(range(len(size)), key=lambda j: abs(reach[j])) if size else None
            culprit = f"; dimension {k} alone reaches {reach[k]:+d}" if size else ""
            raise IndexError(
                f"the view (size {size}, stride {stride}, storage_offset {offset}) addresses "
                f"elements {lo}..{hi}, outside the {n_out} elements of the input{culprit}"
            )

    if out is not None:
        _check_out(out, input, src, xp)
    if input.flags.c_contiguous and total:
        # a fresh output's pages are first touched by the kernel's threads, each in the
        # range it writes (the Numba layer splits large copies between its threads)
        out = xp.empty(input.shape, dtype=dtype) if out is None else out
        inp_flat = bits_view(input.reshape(-1))
        copy = True
    else:
        if out is None:
            out = xp.array(input, order="C", copy=True)
        else:
            out[...] = input
        inp_flat = None
        copy = False
    if total == 0:
        return out
    # a dim of size 1 adds nothing to any address: its stride may be anything (even beyond int64)
    stride = tuple(0 if n == 1 else s for n, s in zip(size, stride))
    out_flat = bits_view(out.reshape(-1))
    src_flat, src_base, src_es = _src_flat(src)
    be = backend_for(out, src)
    if view_may_overlap(size, stride):
        if copy:
            out[...] = input
        d = max(len(size), 1)
        sizes = np.array(size or (1,), dtype=np.int64).reshape(d)
        strides = np.array(stride or (0,), dtype=np.int64).reshape(d)
        sstrides = np.array(src_es or (0,), dtype=np.int64).reshape(d)
        be.strided_scatter_ordered(out_flat, src_flat, src_base, offset, sizes, strides, sstrides)
        return out
    sizes, strides, sstrides, off, sb = _canonical_view(size, stride, src_es, offset, src_base)
    be.strided_scatter_sorted(
        out_flat, inp_flat if copy else out_flat, src_flat, sb, off, sizes, strides, sstrides, copy
    )
    return out


def _check_out(out, input, src, xp):
    """as_strided_scatter's ``out=``: every check before anything is written."""
    if not (hasattr(out, "dtype") and hasattr(out, "shape")) or array_namespace(out) is not xp:
        raise TypeError(f"out must be an array of the same kind as input ({type(input).__name__}); "
                        f"got {type(out).__name__}")
    if device_of(out) != device_of(input):
        raise ValueError(f"out is on {device_of(out)} but input is on {device_of(input)}")
    if tuple(out.shape) != tuple(input.shape):
        raise ValueError(f"out has shape {tuple(out.shape)}; the result has input's shape {tuple(input.shape)}")
    if out.dtype != input.dtype:
        raise TypeError(f"out has dtype {out.dtype}; the result has input's dtype {input.dtype}")
    if not out.flags.c_contiguous:
        raise ValueError("out must be C-contiguous")
    if xp is np and not out.flags.writeable:
        raise ValueError("out is read-only")
    for name, other in (("input", input), ("src", src)):
        if out.size and other.size and xp.may_share_memory(out, other):
            raise ValueError(f"out overlaps {name}: give a buffer that shares no memory with input or src")


def _src_flat(src):
    flat, base, es = flat_view(src)
    return bits_view(flat), base, es
