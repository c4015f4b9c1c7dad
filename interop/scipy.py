"""scipy.sparse bridge (SPEC 6): every scipy format in, COO/CSR/CSC out.

Flags come from what scipy records (``has_canonical_format``,
``has_sorted_indices``) or what a format guarantees (DOK, DIA and LIL hold
each index once); they are verified by the COO constructor unless
``check=False``. scipy's own flags are unchecked attributes, so ``check=True``
(the default) is what keeps a wrong scipy flag from becoming a wrong coosparse
flag.
"""
from __future__ import annotations

import numpy as np

from .._core.coo import COO
from .._core.dispatch import operation, register_foreign
from .._core.fill import require_zero_fill


def _sp():
    import scipy.sparse  # optional dependency: imported on first use

    return scipy.sparse


def _data(m, canonical, data):
    """``data`` (``m.data`` or a view of it) to share, or a copy where scipy may reorder it in
    place later: its sort_indices and sum_duplicates (run implicitly by ``m.sum()``, norms, ...)
    permute ``m.data`` in its buffer unless the matrix is canonical, and our indices were copied,
    so a shared buffer would change the COO's meaning."""
    return data if canonical or not np.may_share_memory(data, m.data) else data.copy()


def _lengths(m, n):
    """The lengths of a CSR/CSC matrix's n rows (columns), its ``indptr`` checked first: a malformed
    one (scipy does not check what its callers assign) would otherwise surface as NumPy's errors."""
    ptr = np.asarray(m.indptr)
    nnz = len(m.indices)
    if ptr.ndim != 1 or ptr.shape[0] != n + 1:
        raise ValueError(f"from_scipy: a {m.format} matrix with {n} {'rows' if m.format == 'csr' else 'columns'} "
                         f"needs an indptr of {n + 1} entries; got shape {ptr.shape}")
    lengths = np.diff(ptr)
    if ptr[0] != 0 or bool((lengths < 0).any()) or ptr[-1] != nnz or len(m.data) != nnz:
        raise ValueError(f"from_scipy: the {m.format} matrix's indptr must start at 0, never decrease and end at "
                         f"the number of stored entries ({nnz} indices, {len(m.data)} values)")
    return lengths


@operation()
def from_scipy(m, *, check=True):
    """COO from any scipy.sparse array or matrix (coo, csr, csc, bsr, dia, lil, dok).

    Values are shared with ``m`` where scipy's layout allows it (indices are
    copied to one int64 block). A CSR/CSC matrix that is not canonical has its
    values copied: scipy sorts and sums such a matrix in place (``m @ x``,
    ``m.sort_indices()``), which would reorder values under the indices
    copied here.

    Examples
    --------
    >>> import scipy.sparse as sp, coosparse
    >>> m = sp.csr_array([[0, 1.5], [2.0, 0]])
    >>> a = coosparse.from_scipy(m)
    >>> a.indices, a.values, a.is_coalesced
    (array([[0, 1],
           [1, 0]]), array([1.5, 2. ]), True)
    """
    sp = _sp()
    if not sp.issparse(m):
        raise TypeError(f"from_scipy expects a scipy.sparse array or matrix; got {type(m).__name__}")
    fmt = m.format
    shape = tuple(int(n) for n in m.shape)
    if fmt == "csr" and m.ndim == 2:
        rows = np.repeat(np.arange(shape[0], dtype=np.int64), _lengths(m, shape[0]))
        indices = np.stack([rows, m.indices.astype(np.int64, copy=False)])
        # CSR order is row-major: sorted columns within rows make the keys sorted
        sorted_ = bool(m.has_sorted_indices)
        canonical = bool(m.has_canonical_format)
        return COO(indices, _data(m, canonical, m.data), shape, sorted=sorted_, unique=canonical, check=check)
    if fmt == "csc" and m.ndim == 2:
        cols = np.repeat(np.arange(shape[1], dtype=np.int64), _lengths(m, shape[1]))
        indices = np.stack([m.indices.astype(np.int64, copy=False), cols])
        canonical = bool(m.has_canonical_format)
        return COO(indices, _data(m, canonical, m.data), shape, unique=canonical, check=check)
    if fmt in ("dok", "dia", "lil"):
        coo = m.tocoo()
        return COO(np.asarray(coo.coords, dtype=np.int64), coo.data, shape, unique=True, check=check)
    coo = m if fmt == "coo" else m.tocoo()
    canonical = bool(coo.has_canonical_format)
    data = coo.data
    if fmt in ("csr", "csc"):  # 1-D CSR, whose COO form shares its data
        data = _data(m, bool(m.has_canonical_format), data)
    return COO(np.asarray(coo.coords, dtype=np.int64).reshape(len(shape), -1), data, shape,
               sorted=canonical, unique=canonical, check=check)


@operation()
def to_scipy(a, format="coo"):
    """scipy.sparse array ('coo' for any ndim scipy supports, 'csr'/'csc' for 2-D).

    CSR and CSC are built from coalesced data (coalescing first when needed;
    a coalesced array becomes CSR with no sort at all). Hybrid arrays have no
    scipy form and raise ValueError. CPU only.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[1, 0, 1], [0, 1, 0]], np.array([1.0, 2.0, 3.0]), (2, 2))
    >>> a.to_scipy("csr").toarray()
    array([[0., 2.],
           [4., 0.]])
    """
    sp = _sp()
    if not isinstance(a, COO):
        raise TypeError(f"to_scipy expects a COO array; got {type(a).__name__}")
    require_zero_fill("to_scipy", a)
    if a.device != "cpu":
        raise ValueError(f"to_scipy needs a CPU array; this one is on {a.device} (use .to('cpu'))")
    if a.dense_ndim:
        raise ValueError(f"scipy.sparse has no hybrid arrays; this one has dense shape {a.dense_shape}")
    if a.dtype == np.float16:  # every format: scipy cannot compute with float16 arrays
        raise ValueError("scipy.sparse does not support float16; convert first with a.astype(np.float32)")
    if format == "coo":
        if a.ndim == 0:
            raise ValueError("scipy.sparse has no 0-d arrays")
        m = sp.coo_array((a.values, tuple(a.indices)), shape=a.shape)
        m.has_canonical_format = a.is_coalesced
        return m
    if format not in ("csr", "csc"):
        raise ValueError(f"format must be 'coo', 'csr' or 'csc'; got {format!r}")
    if a.ndim != 2:
        raise ValueError(f"format {format!r} needs a 2-D array; this one has shape {a.shape}")
    if format == "csc":
        # CSC of a is CSR of a's transpose
        t = COO(a.indices[::-1].copy(), a.values, a.shape[::-1], check=False).coalesce()
        major, minor, n_major = t.indices[0], t.indices[1], a.shape[1]
        cls = sp.csc_array
    else:
        c = a.coalesce()
        major, minor, n_major = c.indices[0], c.indices[1], a.shape[0]
        t = c
        cls = sp.csr_array
    indptr = np.zeros(n_major + 1, dtype=np.int64)
    np.cumsum(np.bincount(major, minlength=n_major), out=indptr[1:])
    m = cls((t.values, minor, indptr), shape=a.shape)
    m.has_sorted_indices = True
    m.has_canonical_format = True
    return m


def is_scipy_sparse(x):
    """A scipy.sparse array or matrix (tested by type, without importing scipy)."""
    return type(x).__module__.startswith("scipy.sparse") and hasattr(x, "tocoo")


register_foreign("scipy", is_scipy_sparse, from_scipy)
