"""NumPy ufuncs on COO: ``np.sqrt(a)``, ``a > 0``, ``np.maximum(a, b)``.

Workloads: the uniform pair (:func:`workloads.uniform_pair`, 2,000,000
entries each in (131072, 131072) at ``medium``, about half of them shared) and
two R-MAT graphs (:func:`workloads.rmat`, seeds 0 and 1), all coalesced, as
pydata/sparse holds every array (it canonicalises on construction, outside
the timing). Peers:

- pydata/sparse: the same NumPy call on its ``COO`` (its ``__array_ufunc__``);
- GraphBLAS (one-operand ufuncs): ``A.apply(unary.sqrt)`` on its own matrix;
- ``numpy-values``: the NumPy ufunc over the values array alone, the floor a
  one-operand ufunc can reach (the target: coosparse within 1.5x
  of it, i.e. a ratio of at least 0.67). Not a sparse result: it builds no
  indices and decides no pattern.

On a GPU (``device="cuda"``, or the emulated device) the arrays move there
and the floor is ``cupy-values``, CuPy's ufunc over the values array;
pydata/sparse has no GPU form.
"""
from __future__ import annotations

import numpy as np

from .._kernels.backend import array_namespace, writeable
from . import graphblas_peer, workloads
from .harness import Case, Impl, on_device

OPS = ["sqrt", "greater", "maximum"]


def _pydata(a):
    import sparse

    return sparse.COO(writeable(a.indices), writeable(a.values), shape=a.shape, has_duplicates=False, sorted=True)


def _cases_on(a, b, label, want, device, gb=None):
    use_pydata = want("pydata")
    if use_pydata:
        try:
            import sparse  # noqa: F401
        except ImportError:
            use_pydata = False
    pa, pb = (_pydata(a), _pydata(b)) if use_pydata else (None, None)
    ga = graphblas_peer.matrix(a) if gb is not None and device == "cpu" else None
    a, b = on_device(a, device), on_device(b, device)
    xp = array_namespace(a.values)
    floor = "numpy-values" if device == "cpu" else "cupy-values"
    one = a.indices.nbytes + a.values.nbytes
    out = []

    impls = [Impl("coosparse", lambda: np.sqrt(a))]
    if use_pydata:
        impls.append(Impl("pydata", lambda: np.sqrt(pa)))
    if ga is not None:
        impls.append(Impl("graphblas", lambda: ga.apply(gb.unary.sqrt).new(), note="apply(unary.sqrt)"))
    impls.append(Impl(floor, lambda: xp.sqrt(a.values), note="values array only"))
    out.append(Case("sqrt", label, impls, input_bytes=one))

    impls = [Impl("coosparse", lambda: a > 0)]
    if use_pydata:
        impls.append(Impl("pydata", lambda: pa > 0))
    impls.append(Impl(floor, lambda: a.values > 0, note="values array only"))
    out.append(Case("greater (a > 0)", label, impls, input_bytes=one))

    impls = [Impl("coosparse", lambda: np.maximum(a, b), note="union, coalesced")]
    if use_pydata:
        impls.append(Impl("pydata", lambda: np.maximum(pa, pb)))
    out.append(Case("maximum", label, impls, input_bytes=one + b.indices.nbytes + b.values.nbytes))
    return out


def cases(size="medium", libraries=None, device="cpu"):
    """The cases on ``device`` ('cpu', 'cuda', 'cuda-emulated'): the data is built on the CPU, then moved."""
    want = (lambda lib: (libraries is None or lib in libraries) and (device == "cpu" or lib != "pydata"))
    gb = graphblas_peer.wanted(libraries) if device == "cpu" else None
    a, b = workloads.uniform_pair(size, coalesced=True)
    out = _cases_on(a, b, f"uniform {a.nnz:,}+{b.nnz:,} in 131072^2", want, device, gb)
    g, h = workloads.rmat(size, seed=0, coalesced=True), workloads.rmat(size, seed=1, coalesced=True)
    n = g.shape[0]
    out += _cases_on(g, h, f"R-MAT {g.nnz:,}+{h.nnz:,} in {n}^2", want, device, gb)
    return out
