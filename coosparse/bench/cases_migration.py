"""The idioms users bring from scipy.sparse and pydata/sparse: row normalisation, top-k per row, files.

Every peer gets its own natural format, built once outside the timing:

- ``row normalise (A / rs[:, None])``: the uniform workload (coalesced) divided
  by its row sums (a zero row sum replaced by 1, as scikit-learn's
  ``normalize`` does); coosparse keeps it sparse (SPEC 9: the background
  ``0 / rs`` is one value). Peers: scipy ``csr_array / rs[:, None]`` (a sparse
  result since scipy 1.11), pydata ``COO / rs[:, None]``. Target: at least as
  fast as scipy.
- ``topk per row``: the k = 8 largest entries of each row, as a sparse matrix
  of the same shape (a kNN graph's sparsification). Workload: a square
  matrix small enough for dense rows (4096, 8192, 16384 rows by size;
  density 1%), and the uniform workload (131072 rows at ``medium``, no dense
  peer). Peers: scipy's per-row loop (``argpartition`` of each CSR row's data,
  the usual idiom) and torch.topk on the dense rows (values and indices; it
  never sees the sparsity).
- ``save_npz`` / ``load_npz``: the uniform workload to and from an in-memory
  ``.npz`` (uncompressed: the format's cost, not zlib's). Peers: pydata's
  ``save_npz``/``load_npz`` (the same keys) and scipy's (CSR: its natural
  format).
"""
from __future__ import annotations

import io

import numpy as np

import coosparse

from .._kernels.backend import writeable
from . import workloads
from .harness import Case, Impl, scipy_csr

OPS = ["row normalise (A / rs[:, None])", "topk per row", "save_npz", "load_npz"]

TOPK = 8
TOPK_ROWS = {"small": 4096, "medium": 8192, "large": 16384}
TOPK_DENSITY = 0.01


def _installed(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False


def _peers(libraries):
    want = (lambda lib: libraries is None or lib in libraries)
    return {lib for lib, mod in (("scipy", "scipy.sparse"), ("pydata", "sparse"), ("torch", "torch"))
            if want(lib) and _installed(mod)}


def _pydata(a):
    import sparse

    return sparse.COO(writeable(a.indices), writeable(a.values), shape=a.shape, has_duplicates=False, sorted=True)


def _normalise_cases(size, peers):
    a = workloads.uniform(size, coalesced=True)
    rs = np.asarray(coosparse.sum(a, axis=1).to_dense())
    rs[rs == 0] = 1.0
    col = rs[:, None]
    impls = [Impl("coosparse", lambda: a / col, note="COO, a's pattern and flags")]
    if "scipy" in peers:
        m = scipy_csr(a)
        impls.append(Impl("scipy", lambda: m / col, note="csr_array / dense column (a coo_array)"))
    if "pydata" in peers:
        p = _pydata(a)
        impls.append(Impl("pydata", lambda: p / col))
    nbytes = a.indices.nbytes + a.values.nbytes + col.nbytes
    return [Case("row normalise (A / rs[:, None])", workloads.describe(a), impls, input_bytes=nbytes)]


def _scipy_topk_rows(m, k):
    """The per-row idiom: each CSR row's k largest stored values (argpartition), as a CSR matrix."""
    import scipy.sparse as sp

    rows, cols, vals = [], [], []
    for i in range(m.shape[0]):
        lo, hi = m.indptr[i], m.indptr[i + 1]
        d = m.data[lo:hi]
        if d.shape[0] > k:
            top = np.argpartition(-d, k - 1)[:k]
            rows.append(np.full(k, i, dtype=np.int64))
            cols.append(m.indices[lo:hi][top])
            vals.append(d[top])
        elif d.shape[0]:
            rows.append(np.full(d.shape[0], i, dtype=np.int64))
            cols.append(m.indices[lo:hi])
            vals.append(d)
    return sp.csr_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=m.shape)


def _topk_cases(size, peers):
    n = TOPK_ROWS[size]
    a = coosparse.random((n, n), density=TOPK_DENSITY, seed=7, sorted=True)
    impls = [Impl("coosparse", lambda: coosparse.topk(a, TOPK, axis=1), note=f"COO of a's shape, k={TOPK}")]
    if "scipy" in peers:
        m = scipy_csr(a)
        impls.append(Impl("scipy", lambda: _scipy_topk_rows(m, TOPK), note="per-row argpartition loop"))
    if "torch" in peers:
        import torch

        d = torch.from_numpy(a.to_dense())
        impls.append(Impl("torch", lambda: torch.topk(d, TOPK, dim=1), note="dense rows (values, indices)"))
    out = [Case("topk per row", f"{n}^2, density {TOPK_DENSITY:.0%}, k={TOPK}", impls,
                input_bytes=a.indices.nbytes + a.values.nbytes)]
    # many short rows (the uniform workload: 131072 rows at medium): the per-row loop's cost grows
    # with the rows, a dense torch peer would not fit in memory
    u = workloads.uniform(size, coalesced=True)
    impls = [Impl("coosparse", lambda: coosparse.topk(u, TOPK, axis=1), note=f"k={TOPK}")]
    if "scipy" in peers:
        mu = scipy_csr(u)
        impls.append(Impl("scipy", lambda: _scipy_topk_rows(mu, TOPK), note="per-row argpartition loop"))
    out.append(Case("topk per row", workloads.describe(u), impls, input_bytes=u.indices.nbytes + u.values.nbytes))
    return out


def _file_cases(size, peers):
    a = workloads.uniform(size, coalesced=True)
    label = workloads.describe(a)
    nbytes = a.indices.nbytes + a.values.nbytes

    def saved(save, x):
        f = io.BytesIO()
        save(f, x)
        return f.getvalue()

    mine = saved(lambda f, x: coosparse.save_npz(f, x, compressed=False), a)
    save_impls = [Impl("coosparse", lambda: saved(lambda f, x: coosparse.save_npz(f, x, compressed=False), a))]
    load_impls = [Impl("coosparse", lambda: coosparse.load_npz(io.BytesIO(mine)), note="bounds and flags verified")]
    if "pydata" in peers:
        import sparse

        p = _pydata(a)
        theirs = saved(lambda f, x: sparse.save_npz(f, x, compressed=False), p)
        save_impls.append(Impl("pydata", lambda: saved(lambda f, x: sparse.save_npz(f, x, compressed=False), p)))
        load_impls.append(Impl("pydata", lambda: sparse.load_npz(io.BytesIO(theirs)), note="trusts the file"))
    if "scipy" in peers:
        import scipy.sparse as sp

        m = scipy_csr(a)
        sfile = saved(lambda f, x: sp.save_npz(f, x, compressed=False), m)
        save_impls.append(Impl("scipy", lambda: saved(lambda f, x: sp.save_npz(f, x, compressed=False), m),
                               note="CSR"))
        load_impls.append(Impl("scipy", lambda: sp.load_npz(io.BytesIO(sfile)), note="CSR"))
    return [Case("save_npz", label, save_impls, input_bytes=nbytes, output_bytes=len(mine)),
            Case("load_npz", label, load_impls, input_bytes=len(mine), output_bytes=nbytes)]


def cases(size="medium", libraries=None):
    peers = _peers(libraries)
    return _normalise_cases(size, peers) + _topk_cases(size, peers) + _file_cases(size, peers)
