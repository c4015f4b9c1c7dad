"""SuiteSparse:GraphBLAS as a benchmark peer (``python-graphblas``; optional).

GraphBLAS is multithreaded C (OpenMP) that stores matrices by row (CSR,
hypersparse, bitmap or full, chosen per matrix). To time it fairly:

- blocking mode (``gb.init("suitesparse", blocking=True)``): every call has
  finished when it returns, so the clock sees all of its work;
- the same number of threads as coosparse (``numba.get_num_threads()``, i.e.
  ``NUMBA_NUM_THREADS`` or the cores), set through ``gb.ss.config["nthreads"]``;
- its operands built once, outside the timing, in its own format
  (:func:`matrix`, :func:`dense_vector`, :func:`dense_matrix`).

Every function returns None when python-graphblas is not installed, and the
case modules then leave the ``graphblas`` column out.

Examples
--------
>>> from coosparse.bench import graphblas_peer
>>> gb = graphblas_peer.load()
>>> gb is None or gb.ss.config["nthreads"] >= 1
True
"""
from __future__ import annotations

LIBRARY = "graphblas"
_STATE = {}


def threads():
    """coosparse's thread count (what GraphBLAS is given too)."""
    try:
        import numba  # the bench always has it: coosparse's CPU kernels need it

        return int(numba.get_num_threads())
    except ImportError:  # pragma: no cover - numba is a hard dependency of the kernels
        import os

        return os.cpu_count() or 1


def load():
    """The ``graphblas`` module, initialised once (blocking, coosparse's thread count), or None."""
    if "gb" in _STATE:
        return _STATE["gb"]
    try:
        import graphblas as gb
    except ImportError:
        _STATE["gb"] = None
        return None
    try:
        gb.init("suitesparse", blocking=True)
    except Exception:  # already initialised (by an earlier import in this process): keep it
        pass
    gb.ss.config["nthreads"] = threads()
    _STATE["gb"] = gb
    return gb


def wanted(libraries):
    """GraphBLAS when installed and asked for (``libraries`` None: every peer)."""
    if libraries is not None and LIBRARY not in libraries:
        return None
    return load()


def matrix(a, dup_op=None):
    """A 2-D COO ``a`` (on the CPU) as a ``gb.Matrix`` (by row; duplicates summed with ``dup_op``)."""
    gb = load()
    rows, cols = a.indices
    kw = {} if dup_op is None else {"dup_op": dup_op}
    return gb.Matrix.from_coo(rows, cols, a.values, nrows=a.shape[0], ncols=a.shape[1], **kw)


def dense_vector(x):
    """A 1-D NumPy array as a full ``gb.Vector``."""
    return load().Vector.from_dense(x)


def dense_matrix(x):
    """A 2-D NumPy array as a full ``gb.Matrix`` (by row)."""
    return load().Matrix.from_dense(x)
