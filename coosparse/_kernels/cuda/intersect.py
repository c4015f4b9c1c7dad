"""CUDA rows of the intersect family: matching source keys against a sorted probe; ordered probe sums and products.

Kernels: ``cuda_kernels/intersect.cu``. Conventions: ``base.py``.
"""
from __future__ import annotations

import numpy as np

from ..bounds import row_major_sizes
from .base import i64


class IntersectRows:
    """The intersect rows of :class:`~coosparse._kernels.cuda.layer.CudaLayer` (helpers: ``base.LayerBase``)."""

    def _match(self, src_keys, probe_keys):
        xp = self.xp
        src_keys = self._c(src_keys, np.int64)
        probe_keys = self._c(probe_keys, np.int64)
        n, m = src_keys.shape[0], probe_keys.shape[0]
        if not m:
            return xp.zeros(n, dtype=np.int64), xp.zeros(n, dtype=np.int64)
        self._check_sorted(probe_keys, strict=False)  # lying flags: reported, results stay in bounds
        first = xp.empty(n, dtype=np.int64)
        count = xp.empty(n, dtype=np.int64)
        self._run("coo_intersect_match", n, src_keys, probe_keys, i64(n), i64(m), first, count)
        return first, count

    def match_merge(self, src_keys, probe_keys):
        """(first, count) of sorted ``src_keys`` in sorted ``probe_keys``. Sync-free.

        On the GPU a binary search per source entry (same answer as the merge:
        first = insertion point, count = number of equal probe keys, found by
        galloping).
        """
        return self._match(src_keys, probe_keys)

    def match_search(self, src_keys, probe_keys):
        """(first, count) of ``src_keys`` in any order in sorted ``probe_keys``: binary search. Sync-free."""
        return self._match(src_keys, probe_keys)

    def _compact(self, first, count):
        xp = self.xp
        first = self._c(first, np.int64)
        count = self._c(count, np.int64)
        n = count.shape[0]
        if n == 0:
            z = xp.zeros(0, dtype=np.int64)
            return z, z.copy(), z.copy()
        flags = xp.empty(n, dtype=np.int64)
        self._run("coo_intersect_flag", n, count, i64(n), flags)
        pos = xp.cumsum(flags)
        m = self._sync_size(pos[-1])  # synchronize! (the number of matched rows sizes the output)
        rows = xp.empty(m, dtype=np.int64)
        first_out = xp.empty(m, dtype=np.int64)
        count_out = xp.empty(m, dtype=np.int64)
        self._run("coo_intersect_compact", n, first, count, pos, i64(n), rows, first_out, count_out)
        return rows, first_out, count_out

    def compact_matches(self, first, count):
        """(rows, first[rows], count[rows]) for the ascending rows with count != 0. Synchronises (output size)."""
        return self._compact(first, count)

    def merge_matches(self, src_keys, probe_keys):
        """(rows, first, count) of the matched entries of sorted ``src_keys`` only. Synchronises (output size).

        On the GPU: the binary-search match, then one compaction.
        """
        first, count = self._match(src_keys, probe_keys)
        return self._compact(first, count)

    def merge_multiply(self, src_indices, src_values, probe_indices, probe_values, strides, *, sizes=None,
                       pointers=None, keys=None):
        """Compact product of a sorted source and a sorted probe: (indices, values). Synchronises (output size).

        Composed of this layer's kernels (linear index, merge_matches,
        gather_columns, multiply_matched), which is exactly the row's meaning,
        so results are bit-identical to the Numba layer's fused kernel.
        Indices outside ``sizes`` (host values; default: what the strides
        tell, the first dimension unbounded) are reported with the output size.
        ``pointers`` and ``keys`` (the Numba layer's per-row merge) are not
        used: one thread per entry computes its key, which gives the same result.
        """
        sizes = row_major_sizes(strides) if sizes is None else sizes
        rows, first, count = self.merge_matches(
            self.linear_index(src_indices, strides, sizes), self.linear_index(probe_indices, strides, sizes)
        )
        values = self.multiply_matched(src_values, rows, probe_values, None, first, count)
        return self.gather_columns(src_indices, rows), values

    def multiply_matched(self, src_values, rows, probe_values, perm, first, count, *, shared_runs=False):
        """out[i] = src_values[rows[i] or i] * (ordered sum of the matched probe rows); 0 where count[i] == 0. Sync-free.

        One dtype throughout (int64 products wrap, complex products are
        (ac - bd) + i(ad + bc) with every operation rounded alone, as in NumPy).
        ``shared_runs`` (the source has duplicates): each probe run is summed
        once (:meth:`probe_sum`), then multiplied per row.
        """
        xp = self.xp
        src_values = self._c(src_values)
        probe_values = self._c(probe_values)
        if src_values.dtype != probe_values.dtype:
            raise TypeError(f"multiply_matched needs one dtype; got {src_values.dtype} and {probe_values.dtype}")
        first = self._c(first, np.int64)
        count = self._c(count, np.int64)
        m, k = first.shape[0], src_values.shape[1]
        out = xp.empty((m, k), dtype=src_values.dtype)
        if m == 0 or k == 0:
            return out
        sview, ctype = self._product_view(src_values)
        pview, _ = self._product_view(probe_values)
        oview, _ = self._product_view(out)
        rows_arr = None if rows is None else self._c(rows, np.int64)
        perm_arr = None if perm is None else self._c(perm, np.int64)
        if self._validate:
            self._check_probe_ranges(first, count, probe_values.shape[0], perm_arr)
            if rows_arr is not None:
                self._check_range(rows_arr, 0, src_values.shape[0], "multiply_matched rows")
        if shared_runs:
            sums, _ = self._product_view(self.probe_sum(probe_values, perm, first, count, shared_runs=True))
            self._run(f"coo_intersect_multiply_sums<{ctype}>", m * k, sview, i64(src_values.shape[0]), rows_arr,
                      i64(rows is not None), sums, count, i64(m), i64(k), oview, self._err())
            return out
        self._run(
            f"coo_intersect_multiply_matched<{ctype}>", m * k,
            sview, i64(src_values.shape[0]), rows_arr, i64(rows is not None),
            pview, i64(probe_values.shape[0]), perm_arr, i64(perm is not None),
            first, count, i64(m), i64(k), oview, self._err(),
        )
        return out

    def _check_probe_ranges(self, first, count, nprobe, perm_arr):
        f, c = np.asarray(self._peek(first)), np.asarray(self._peek(count))
        hit = c != 0
        if bool(hit.any()) and (int(f[hit].min()) < 0 or int((f + c)[hit].max()) > nprobe):
            raise IndexError("a matched range falls outside the probe")
        if perm_arr is not None:
            self._check_range(perm_arr, 0, nprobe, "probe perm")

    def probe_sum(self, values, perm, first, count, *, shared_runs=False):
        """out[i] = ordered sum of values[perm[first[i]:first[i]+count[i]]]; 0 where count[i] == 0. Sync-free.

        ``shared_runs``: rows repeat runs (a source with duplicates, so
        summing per row would add a run once per repeat: quadratic when both
        sides repeat). Then each run is claimed by one row, summed once by it,
        and copied to the others (``coo_intersect_claim_runs`` /
        ``copy_runs``): the same bits, linear work.
        """
        xp = self.xp
        values = self._c(values)
        first = self._c(first, np.int64)
        count = self._c(count, np.int64)
        m = first.shape[0]
        out = xp.empty((m, values.shape[1]), dtype=values.dtype)
        if m == 0 or values.shape[1] == 0:
            return out
        view, ctype = self._sum_view(values)
        oview, _ = self._sum_view(out)
        k = view.shape[1]
        perm_arr = None if perm is None else self._c(perm, np.int64)
        nprobe = values.shape[0]
        if self._validate:
            self._check_probe_ranges(first, count, nprobe, perm_arr)
        owner = None
        if shared_runs:
            owner = xp.empty(nprobe, dtype=np.int64)
            self._run("coo_intersect_claim_runs", m, first, count, i64(m), i64(nprobe), owner)
        self._run(
            f"coo_intersect_probe_sum<{ctype}>", m * k,
            view, i64(nprobe), perm_arr, i64(perm is not None), first, count, owner, i64(m), i64(k),
            oview, self._err(),
        )
        if shared_runs:
            words, wtype = self._words(out)
            kw = words.shape[1]
            self._run(f"coo_intersect_copy_runs<{wtype}>", m * kw, owner, first, count, i64(m), i64(kw),
                      i64(nprobe), words)
        return out

    def mask_values(self, src_indices, probe_indices, probe_values, strides, *, sizes=None, pointers=None,
                    keys=None):
        """The sorted probe's values at the sorted source's indices (ordered sums, 0 where none). Sync-free.

        Composed of this layer's rows (linear index, match_merge, probe_sum): the row's meaning,
        bit for bit the Numba layer's one-pass merge. ``pointers`` and ``keys`` are not used (one
        thread per entry computes its key). Indices outside ``sizes`` are reported as ``linear_index`` does.
        """
        sizes = row_major_sizes(strides) if sizes is None else sizes
        first, count = self.match_merge(
            self.linear_index(src_indices, strides, sizes), self.linear_index(probe_indices, strides, sizes)
        )
        return self.probe_sum(probe_values, None, first, count)

    def multiply_search(self, src_keys, src_values, probe_keys, probe_values, perm, *, shared_runs=False):
        """match_search + multiply_matched (rows None): the product of every source row. Sync-free.

        On the GPU the binary-search match needs no partition, so this is the
        composition of the two rows (the CPU layer fuses them to save a
        random stream).
        """
        first, count = self.match_search(src_keys, probe_keys)
        return self.multiply_matched(src_values, None, probe_values, perm, first, count, shared_runs=shared_runs)
