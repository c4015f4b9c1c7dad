"""CUDA rows of the linalg family: SpMV/SpMM, dense x COO and SDDMM (SpGEMM: ``spgemm.py``).

Kernels: ``cuda_kernels/linalg.cu``. Conventions: ``base.py``.
"""
from __future__ import annotations

import numpy as np

from .base import i64

BLOCK = 256
"""Threads per block of every launch (``backend.BLOCK``, ``emulated.BLOCK``)."""
STAGED_MAX_COLS = 8
"""Dense operands with at most this many columns take ``coo_linalg_spmm_staged`` (entries staged through
shared memory, loaded in coalesced runs); wider ones ``coo_linalg_spmm`` (a warp reads a dense row)."""


class LinalgRows:
    """The linalg rows of :class:`~coosparse._kernels.cuda.layer.CudaLayer` (helpers: ``base.LayerBase``).

    One thread per output element, each summing in the kernel API's order: the Numba
    layer's bits. Grouping (sorting by row or by column) uses this layer's stable sort.
    Nullable arguments (perm, batch_base, batch_offsets) go to the kernels as null
    pointers; every data-dependent read is guarded there and reported (COO_ERR_*):
    the COO's indices against their bounds (COO_ERR_INDEX: IndexError at the next
    synchronising call or check_device_errors()), internal arrays against their lengths.
    """

    # One thread per output element, each summing in the kernel API's order: the Numba
    # layer's bits. Grouping (sorting by row or by column) uses this layer's stable sort.
    # Nullable arguments (perm, batch_base, batch_offsets) go to the kernels as null
    # pointers; every data-dependent read is guarded there and reported (COO_ERR_*):
    # the COO's indices against their bounds (COO_ERR_INDEX: IndexError at the next
    # synchronising call or check_device_errors()), internal arrays against their lengths.
    @staticmethod
    def _bound_bits(b):
        """A bound for an unsigned compare in a kernel (None: 2**63), as the i64 with its u64 bits."""
        return np.array([2**63 if b is None else min(int(b), 2**63)], dtype=np.uint64).view(np.int64)[0]

    def _opt(self, a):
        """``a`` as a C-contiguous int64 device array, or None (a null pointer)."""
        return None if a is None else self._c(a, np.int64)

    def _host(self, a):
        """``validate`` only: a host copy of device array ``a`` (the emulation's uncounted view)."""
        return np.asarray(self._peek(a))

    def row_offsets(self, rows, nrows):
        """CSR row pointer of non-decreasing ``rows``: int64[nrows + 1]. Sync-free (binary searches).

        Rows outside ``[0, nrows)`` (reported: INDEX) fall outside every row;
        rows out of order (lying flags) are reported (ORDER).
        """
        rows = self._c(rows, np.int64)
        nrows = int(nrows)
        n = rows.shape[0]
        out = self.xp.empty(nrows + 1, dtype=np.int64)
        self._run("coo_linalg_row_offsets", max(nrows + 1, n), rows, i64(n), i64(nrows), out, self._err())
        return out

    def spmm(self, offsets, perm, cols, values, dense, rows_per_batch, batch_base, col_bound=None, out_rows=None,
             out_nrows=None):
        """out[r, j] = sum over row r's grouped entries of values[e] * dense[base + cols[e], j]. Sync-free.

        One thread per (row, column) adds in position order. With at most
        ``STAGED_MAX_COLS`` columns a block first stages its rows' entries
        through shared memory in coalesced runs (the same additions, the same bits).

        ``cols`` outside ``[0, col_bound)`` (default: the rows of ``dense``) are skipped, reported (INDEX).
        ``out_rows`` (with ``out_nrows``; ``batch_base`` None): the output row of each row of
        ``offsets``, increasing in ``[0, out_nrows)``; the result has ``out_nrows`` rows, zero in
        the others (the rows' products, then placed: the same sums).
        """
        xp = self.xp
        if out_rows is not None:
            if batch_base is not None:
                raise ValueError("spmm: out_rows takes one dense batch (batch_base None)")
            out_rows = self._c(out_rows, np.int64)
            if out_rows.shape != (offsets.shape[0] - 1,) or int(out_nrows) < 0:
                raise ValueError("spmm: out_rows needs one output row per row of offsets, and out_nrows >= 0")
            if self._validate:
                self._check_range(out_rows, 0, int(out_nrows), "spmm out_rows")
            rows = self.spmm(offsets, perm, cols, values, dense, rows_per_batch, None, col_bound)
            out = xp.zeros((int(out_nrows), rows.shape[1]), dtype=rows.dtype)
            out[out_rows] = rows
            return out
        offsets = self._c(offsets, np.int64)
        cols = self._c(cols, np.int64)
        values = self._c(values)
        dense = self._c(dense, values.dtype)
        nrows, ncols = offsets.shape[0] - 1, dense.shape[1]
        out = xp.empty((nrows, ncols), dtype=values.dtype)
        if nrows <= 0 or ncols == 0:
            return out
        perm_arr, base = self._opt(perm), self._opt(batch_base)
        rpb = max(int(rows_per_batch), 1)
        n = values.shape[0]
        kb = dense.shape[0] if col_bound is None else int(col_bound)
        if self._validate:
            self._check_range(offsets, 0, n + 1, "spmm offsets")
            if perm_arr is not None:
                self._check_range(perm_arr, 0, n, "spmm perm")
            hb = self._host(base) if base is not None else np.zeros(1, np.int64)
            self._check_range(cols, 0, min(kb, max(dense.shape[0] - (int(hb.max()) if hb.size else 0), 0)),
                              "spmm cols")
            if base is not None:
                self._check_range(base, 0, dense.shape[0], "spmm batch_base")
                if (nrows - 1) // rpb >= base.shape[0]:
                    raise IndexError("spmm: batch_base is shorter than the number of batches")
        vview, ctype = self._product_view(values)
        dview, _ = self._product_view(dense)
        oview, _ = self._product_view(out)
        nbase = i64(0 if base is None else base.shape[0])
        if ncols <= STAGED_MAX_COLS:  # few columns: the rows' entries staged through shared memory
            lanes = 1 << (ncols - 1).bit_length()
            block_rows = BLOCK // lanes
            self._run(f"coo_linalg_spmm_staged<{ctype}>", -(-nrows // block_rows) * BLOCK, offsets, i64(nrows),
                      perm_arr, cols, self._bound_bits(kb), vview, i64(n), dview, i64(dense.shape[0]), i64(ncols),
                      i64(lanes), i64(rpb), base, nbase, oview, self._err())
            return out
        self._run(f"coo_linalg_spmm<{ctype}>", nrows * ncols, offsets, i64(nrows), perm_arr, cols,
                  self._bound_bits(kb), vview, i64(n),
                  dview, i64(dense.shape[0]), i64(ncols), i64(rpb), base, nbase, oview, self._err())
        return out

    def spmm_unsorted(self, rows, cols, values, dense, nrows, rows_per_batch, batch_base, col_bound=None):
        """COO (rows in any order) x dense: a stable sort by row, then :meth:`spmm`. Sync-free.

        Rows outside ``[0, nrows)`` (checked by :meth:`row_offsets` after the sort) and
        ``cols`` outside ``[0, col_bound)`` are skipped, reported (INDEX).
        """
        rows = self._c(rows, np.int64)
        if self._validate:
            self._check_range(rows, 0, int(nrows), "spmm_unsorted rows")
        sorted_rows, perm = self.sort_pairs(rows, max(int(nrows), 1))
        return self.spmm(self.row_offsets(sorted_rows, nrows), perm, cols, values, dense, rows_per_batch,
                         batch_base, col_bound)

    def dense_spmm(self, dense, batch_base, rows_per_batch, batch_offsets, perm, krow, cols, values, ncols):
        """dense x COO: entries grouped by (batch, column) with a stable sort, one thread per output. Sync-free.

        A batch without a base (``batch_base`` shorter than the batches) or a base whose rows leave
        ``dense`` gives zeros, reported (GATHER), as in :meth:`spmm`.
        """
        xp = self.xp
        values = self._c(values)
        dense = self._c(dense, values.dtype)
        krow = self._c(krow, np.int64)
        cols = self._c(cols, np.int64)
        n, ncols, m = krow.shape[0], int(ncols), int(rows_per_batch)
        boff = self._opt(batch_offsets)
        nbatch = 1 if boff is None else boff.shape[0] - 1
        base = self._opt(batch_base)
        out = xp.empty((nbatch * m, ncols), dtype=values.dtype)
        if out.size == 0:
            return out
        perm_arr = self._opt(perm)
        if self._validate:
            self._check_range(krow, 0, dense.shape[1], "dense_spmm krow")
            self._check_range(cols, 0, ncols, "dense_spmm cols")
            if base is not None:
                self._check_range(base, 0, max(dense.shape[0] - m + 1, 0), "dense_spmm batch_base")
            if boff is not None:
                self._check_range(boff, 0, n + 1, "dense_spmm batch_offsets")
            if perm_arr is not None:
                self._check_range(perm_arr, 0, n, "dense_spmm perm")
        ngroups = nbatch * ncols  # + one sentinel group (entries that cannot be placed, reported)
        key = xp.empty(n, dtype=np.int64)
        self._run("coo_linalg_batch_col_key", n, boff, i64(nbatch), perm_arr, cols, i64(n), i64(ncols), key,
                  self._err())
        sorted_key, order = self.sort_pairs(key, ngroups + 1)
        if perm_arr is not None:
            order = perm_arr[order]
        goff = self.row_offsets(sorted_key, ngroups + 1)
        dview, ctype = self._product_view(dense)
        vview, _ = self._product_view(values)
        oview, _ = self._product_view(out)
        self._run(f"coo_linalg_dense_spmm<{ctype}>", nbatch * m * ncols, dview, i64(dense.shape[0]),
                  i64(dense.shape[1]), base, i64(0 if base is None else base.shape[0]), i64(max(m, 1)), goff,
                  self._c(order, np.int64), krow, vview, i64(n),
                  i64(nbatch * m), i64(ncols), oview, self._err())
        return out

    def sddmm(self, rows, row_stride, cols, col_stride, x, x_inner, y, y_inner, k, row_bound=None, col_bound=None):
        """Dot products at the entries, eight lanes (threads) each, the Numba order. Sync-free.

        ``rows`` outside ``[0, row_bound)`` or ``cols`` outside ``[0, col_bound)`` (None:
        2**63) give 0, reported (INDEX).
        """
        xp = self.xp
        rows = self._c(rows, np.int64)
        cols = self._c(cols, np.int64)
        n, k = rows.shape[0], int(k)
        out = xp.empty(n, dtype=x.dtype)
        if n == 0:
            return out
        if self._validate:
            for idx, st, inner, buf, what in ((rows, row_stride, x_inner, x, "x"), (cols, col_stride, y_inner, y, "y")):
                a0 = self._host(idx) * int(st)
                ends = [a0, a0 + (k - 1) * int(inner)] if k else [a0]
                lo = min(int(e.min()) for e in ends)
                hi = max(int(e.max()) for e in ends)
                if lo < 0 or hi >= buf.shape[0]:
                    raise IndexError(f"sddmm: addresses {lo}..{hi} fall outside {what} of {buf.shape[0]} elements")
            for idx, bound, what in ((rows, row_bound, "rows"), (cols, col_bound, "cols")):
                if bound is not None:
                    self._check_range(idx, 0, int(bound), f"sddmm {what}")
        xv, ctype = self._product_view(x)
        yv, _ = self._product_view(y)
        ov, _ = self._product_view(out)
        self._run(f"coo_linalg_sddmm<{ctype}>", 8 * n, rows, i64(row_stride), self._bound_bits(row_bound), cols,
                  i64(col_stride), self._bound_bits(col_bound),
                  xv, i64(xv.shape[0]), i64(x_inner), yv, i64(yv.shape[0]), i64(y_inner), i64(k), i64(n), ov,
                  self._err())
        return out

    def dense_transpose(self, a, out=None):
        """A C-contiguous copy of 2-D ``a``'s transpose (CuPy's copy: a GPU's transpose is not the
        CPU's cache-miss-bound strided walk), into ``out`` when given. Sync-free."""
        if out is None:
            return self.xp.ascontiguousarray(a.T)
        out[...] = a.T
        return out

    def number_columns(self, cols, ncols, cols_out=None):
        """(cols2, rowmap, m): the Numba row's numbering (distinct columns in the order of their
        first entry) by a stable sort of the columns. Syncs (m)."""
        xp = self.xp
        cols = self._c(cols, np.int64)
        nn = int(ncols)
        n = cols.shape[0]
        dtype = np.int32 if nn < 2**31 else np.int64
        key = xp.where((cols >= 0) & (cols < nn), cols, nn)
        order = xp.argsort(key, kind="stable")
        sk = key[order]
        start = xp.ones(n, dtype=bool)
        start[1:] = sk[1:] != sk[:-1]
        group = xp.cumsum(start) - 1  # group of each sorted entry
        firsts = order[start]  # first entry of each group (the sort is stable)
        valid = sk[start] < nn
        rank = xp.empty(firsts.shape[0], dtype=np.int64)  # groups numbered by their first entry
        by_first = xp.argsort(xp.where(valid, firsts, n))
        rank[by_first] = xp.arange(firsts.shape[0])
        m = int(valid.sum())
        cols2 = xp.empty(n, dtype=dtype) if cols_out is None else cols_out
        cols2[order] = xp.where(valid[group], rank[group], -1).astype(dtype)
        rowmap = xp.full(nn, -1, dtype=dtype)
        rowmap[sk[start][valid]] = rank[valid].astype(dtype)
        return cols2, rowmap, m

    def sampled_transpose(self, a, cols, out=None, numbering=None):
        """(out, cols2, m): number_columns (or ``numbering``, its result kept from an earlier
        call), then CuPy's copy of the numbered columns. Syncs (m)."""
        xp = self.xp
        kk, nn = a.shape
        if out is None:
            out = xp.empty((nn, kk), dtype=a.dtype)
        cols2, rowmap, m = self.number_columns(cols, nn) if numbering is None else numbering
        if m:
            named = xp.nonzero(rowmap >= 0)[0]
            by_number = xp.empty(m, dtype=np.int64)
            by_number[rowmap[named]] = named  # the columns in the order of their numbers
            out[:m] = a[:, by_number].T
        return out, cols2, m
