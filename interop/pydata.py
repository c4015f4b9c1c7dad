"""pydata/sparse bridge (SPEC 12): its arrays in, ``COO.to_pydata()`` out.

pydata/sparse (``import sparse``) stores an N-dimensional COO as ``coords``
(ndim, nnz), ``data`` (nnz,), ``shape`` and ``fill_value``, with two flags of its
own, given when it is built (``sorted``, ``has_duplicates``; it sorts and sums
otherwise). The meanings match coosparse's (``is_sorted``, ``not is_unique``,
SPEC 8's fill), so the conversion moves the four parts and the flags without
densifying. Its GCXS and DOK formats go
through their own ``asformat("coo")`` first.

Registering the bridge (``import coosparse`` does) makes pydata arrays operands
wherever a COO is taken: ``coosparse.asarray(p)``, ``a + p``, ``a @ p``,
``coosparse.where(c, a, p)``, ``np.concatenate([a, p])``, ...
"""
from __future__ import annotations

import numpy as np

from .._core.coo import COO
from .._core.dispatch import operation, register_foreign
from .._kernels.backend import writeable
from ..ops.coalesce import coalesce
from ..ops.shape import to_hybrid


def is_pydata_type(t):
    """The type of a pydata/sparse array (tested by name, without importing ``sparse``)."""
    return t.__module__.split(".")[0] == "sparse" and hasattr(t, "asformat") and hasattr(t, "todense")


def is_pydata(x):
    """A pydata/sparse array."""
    return is_pydata_type(type(x))


@operation()
def from_pydata(p, *, check=True):
    """COO from a pydata/sparse array (``sparse.COO``, ``GCXS`` or ``DOK``), fill value and flags kept.

    The coordinates become C-contiguous int64 (a copy when pydata stores
    another integer type); the data are shared. pydata keeps its COO sorted
    and duplicate-free (it sorts and sums when it builds one), so the result
    claims both flags, verified in one pass unless ``check=False`` (an array
    built with flags pydata was wrongly given comes back with both False).

    Examples
    --------
    >>> import numpy as np, sparse, coosparse
    >>> p = sparse.COO.from_numpy(np.array([[0.0, 1.5], [2.0, 0.0]]))
    >>> a = coosparse.COO.from_pydata(p)
    >>> a.indices.tolist(), a.values.tolist(), a.is_coalesced
    ([[0, 1], [1, 0]], [1.5, 2.0], True)
    """
    if not is_pydata(p):
        raise TypeError(f"from_pydata expects a pydata/sparse array; got {type(p).__name__}")
    if getattr(p, "format", "coo") != "coo":
        p = p.asformat("coo")
    shape = tuple(int(n) for n in p.shape)
    data = np.asarray(p.data)
    coords = np.asarray(p.coords).reshape(len(shape), data.shape[0])
    if coords.size == 0 and coords.dtype.kind not in "iu":
        coords = coords.astype(np.int64)  # GCXS -> COO of a 0-d array gives empty float64 coords
    try:
        # pydata sorts and sums its coordinates when it builds a COO (unless its caller told it
        # they were): the flags are claimed, and verified in one pass unless check=False
        return COO(coords, data, shape, sorted=True, unique=True, fill_value=p.fill_value, check=check)
    except ValueError:
        if not check:
            raise
        return COO(coords, data, shape, fill_value=p.fill_value)  # built with flags it was wrongly given


@operation()
def to_pydata(a):
    """A ``sparse.COO`` (pydata/sparse) with ``a``'s dense meaning and fill value.

    pydata has no hybrid arrays, so dense dimensions become sparse ones
    (:func:`coosparse.to_hybrid` with 0). The array is coalesced first (pydata
    would otherwise sort and sum it itself), so the result is marked sorted and
    duplicate-free, and it shares ``a``'s memory when ``a`` is already
    coalesced. CPU only.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[1, 0, 1], [0, 1, 0]], np.array([1.0, 2.0, 3.0]), (2, 2))
    >>> p = a.to_pydata()
    >>> type(p).__name__, p.todense().tolist()
    ('COO', [[0.0, 2.0], [4.0, 0.0]])
    """
    import sparse  # optional dependency: pydata/sparse is needed only to build its array

    if not isinstance(a, COO):
        raise TypeError(f"to_pydata expects a coosparse.COO; got {type(a).__name__}")
    if a.device != "cpu":
        raise ValueError(f"to_pydata needs a CPU array; this one is on {a.device} (use .to('cpu'))")
    c = coalesce(to_hybrid(a, 0))
    # writeable views of the same memory: pydata's Numba kernels would compile read-only twins
    return sparse.COO(writeable(c.indices), writeable(c.values), shape=c.shape, has_duplicates=False,
                      sorted=True, fill_value=c.fill_value)


register_foreign("pydata", is_pydata, from_pydata, is_pydata_type)
