"""sort along the last axis of a matrix against scipy sorting each CSR row.

Workload: :func:`workloads.uniform` coalesced (2,000,000 entries in (131072,
131072) float64 at ``medium``, about 15 per row). coosparse:
``coosparse.sort(a, axis=-1)`` (the dense meaning: per row, the values below
the fill first, the rest last, a coalesced result; each row sorted through the
array's cached row pointer). scipy has no sort of a sparse matrix: its peer is
the per-row sort a user writes over a CSR array (``data[indptr[i]:indptr[i +
1]].sort()`` for every row, on a copy of the data), which sorts the values
without moving them to their sorted columns: less work than ours.
"""
from __future__ import annotations

import coosparse

from . import workloads
from .harness import Case, Impl, scipy_csr

OPS = ["sort axis=-1"]


def _scipy_sort_rows(m):
    data = m.data.copy()
    ip = m.indptr
    for i in range(m.shape[0]):
        data[ip[i]:ip[i + 1]].sort()
    return data


def cases(size="medium", libraries=None):
    a = workloads.uniform(size, coalesced=True)
    impls = [Impl("coosparse", lambda: coosparse.sort(a, axis=-1))]
    if libraries is None or "scipy" in libraries:
        try:
            m = scipy_csr(a)
            impls.append(Impl("scipy", lambda: _scipy_sort_rows(m), note="each CSR row's data sorted in a loop"))
        except ImportError:
            pass
    return [Case("sort axis=-1", f"coalesced {a.nnz:,} in 131072^2", impls,
                 input_bytes=a.indices.nbytes + a.values.nbytes)]
