"""CUDA rows of the spgemm family: COO x COO by expand, stable sort, ordered sums.

Kernels: ``coo_linalg_spgemm_count`` / ``_expand`` and ``coo_linalg_check_keys`` in
``cuda_kernels/linalg.cu`` (they share its B-row helper with SpMM); the sort and the
sums are the sort and segment rows. Conventions: ``base.py``.
"""
from __future__ import annotations

import numpy as np

from ..bounds import check_size
from .base import i64


class SpgemmRows:
    """The spgemm row of :class:`~coosparse._kernels.cuda.layer.CudaLayer` (helpers: ``base.LayerBase``,
    ``_bound_bits`` of the linalg rows)."""

    def spgemm(self, a_offsets, a_rows, a_perm, a_cols, a_values, b_offsets, b_perm, b_cols, b_values, ncols,
               a_row_bound=None):
        """Expand-sort-compress: products in expansion order, stable sort by (row, col), ordered sums.

        Synchronises twice (the number of products, then of distinct outputs;
        each read through :meth:`_sync_size`, with the error word). A's columns
        outside ``[0, K)``, B's columns outside ``[0, ncols)`` and row keys
        ``a_rows`` outside ``[0, a_row_bound)`` (or not increasing: ORDER) are
        reported (INDEX) before the first synchronisation, which raises.
        """
        xp = self.xp
        a_offsets = self._c(a_offsets, np.int64)
        b_offsets = self._c(b_offsets, np.int64)
        a_cols = self._c(a_cols, np.int64)
        b_cols = self._c(b_cols, np.int64)
        a_values = self._c(a_values)
        b_values = self._c(b_values, a_values.dtype)
        nrows, na, ncols = a_offsets.shape[0] - 1, a_cols.shape[0], int(ncols)
        nbrows, nb = b_offsets.shape[0] - 1, b_cols.shape[0]
        ap, bp = self._opt(a_perm), self._opt(b_perm)
        if self._validate:
            self._check_range(a_cols, 0, nbrows, "spgemm a_cols")
            self._check_range(b_cols, 0, ncols, "spgemm b_cols")
            self._check_range(a_offsets, 0, na + 1, "spgemm a_offsets")
            self._check_range(b_offsets, 0, nb + 1, "spgemm b_offsets")
            if ap is not None:
                self._check_range(ap, 0, na, "spgemm a_perm")
            if bp is not None:
                self._check_range(bp, 0, nb, "spgemm b_perm")
            if a_rows is not None and a_row_bound is not None:
                self._check_range(self._c(a_rows, np.int64), 0, int(a_row_bound), "spgemm a_rows")
        if a_rows is not None and nrows > 0:  # A's distinct row keys: in range and increasing
            self._run("coo_linalg_check_keys", nrows, self._c(a_rows, np.int64), i64(nrows),
                      self._bound_bits(a_row_bound), i64(1), self._err())
        if nb:  # every B column, as on the CPU (O(nnz(B)), small beside the products)
            self._run("coo_linalg_check_keys", nb, b_cols, i64(nb), self._bound_bits(ncols), i64(0), self._err())
        count = xp.empty(na, dtype=np.int64)
        self._run("coo_linalg_spgemm_count", na, ap, a_cols, i64(na), b_offsets, i64(nbrows), i64(nb), count,
                  self._err())
        start = xp.zeros(na + 1, dtype=np.int64)
        if na:
            start[1:] = xp.cumsum(count)
        total = self._sync_size(start[na])  # synchronize! (number of products, and the error word)
        # every product is held (keys, value, then their sort): refused before any of it is allocated
        check_size(total, 48 + a_values.dtype.itemsize, "COO x COO product", "products (SpGEMM's expansion on a GPU)")
        rows = xp.empty(total, dtype=np.int64)
        cols = xp.empty(total, dtype=np.int64)
        prod = xp.empty(total, dtype=a_values.dtype)
        av, ctype = self._product_view(a_values)
        bv, _ = self._product_view(b_values)
        pv, _ = self._product_view(prod)
        self._run(f"coo_linalg_spgemm_expand<{ctype}>", na, a_offsets, i64(nrows), ap, a_cols, av, i64(na),
                  b_offsets, i64(nbrows), bp, b_cols, bv, i64(nb), i64(ncols), start, i64(total), rows, cols, pv,
                  self._err())
        if total == 0:
            return xp.zeros((2, 0), dtype=np.int64), prod
        if max(nrows, 1) * max(ncols, 1) < 2**63:
            keys = rows * ncols + cols
            sorted_keys, perm = self.sort_pairs(keys, nrows * ncols)
            starts = self.segment_starts(sorted_keys)  # synchronize! (output size)
            heads = sorted_keys[starts[:-1]]
            out_rows, out_cols = heads // ncols, heads % ncols
        else:  # keys too wide for one word: two stable sorts (lexicographic), then ranks of the pairs
            perm = self._c(self._argsort(cols), np.int64)
            perm = perm[self._c(self._argsort(rows[perm]), np.int64)]
            sr, sc = rows[perm], cols[perm]
            new = xp.ones(total, dtype=np.int64)
            new[1:] = (sr[1:] != sr[:-1]) | (sc[1:] != sc[:-1])
            starts = self.segment_starts(xp.cumsum(new))  # synchronize! (output size)
            heads = starts[:-1]
            out_rows, out_cols = sr[heads], sc[heads]
        sums = self.segment_sum(self._sum_pairs(prod), perm, starts)
        if a_rows is not None:
            out_rows = self._c(a_rows, np.int64)[out_rows]
        return self._c(xp.stack([out_rows, out_cols]), np.int64), self._from_sum_pairs(sums, a_values.dtype)

    @staticmethod
    def _sum_pairs(v):
        """1-D values as (n, 1) summable columns; complex as (n, 2) float pairs (componentwise sums)."""
        if v.dtype.kind == "c":
            return v.view(np.float32 if v.dtype == np.complex64 else np.float64).reshape(v.shape[0], 2)
        return v.reshape(v.shape[0], 1)

    def _from_sum_pairs(self, sums, dtype):
        sums = self._c(sums)
        if np.dtype(dtype).kind == "c":
            return sums.view(dtype).reshape(-1)
        return sums.reshape(-1)
