"""CUDA rows of the indexing family: mask positions, key ranges and range gathers for a[key].

Kernels: ``cuda_kernels/indexing.cu``. Conventions: ``base.py``.
"""
from __future__ import annotations

import numpy as np

from .base import i64


class IndexingRows:
    """The indexing rows of :class:`~coosparse._kernels.cuda.layer.CudaLayer` (helpers: ``base.LayerBase``)."""

    def mask_positions(self, mask):
        """Ascending positions of the True entries of a 1-D bool mask. Synchronises (output size)."""
        xp = self.xp
        mask = self._c(mask, np.bool_).view(np.uint8)
        n = mask.shape[0]
        if n == 0:
            return xp.zeros(0, dtype=np.int64)
        flags = xp.empty(n, dtype=np.int64)
        self._run("coo_indexing_mask_flag", n, mask, i64(n), flags)
        pos = xp.cumsum(flags)
        m = self._sync_size(pos[-1])  # synchronize! (the number of kept entries; and the error word)
        out = xp.empty(m, dtype=np.int64)
        self._run("coo_indexing_mask_write", n, mask, pos, i64(n), i64(m), out, self._err())
        return out

    def search_ranges(self, sorted_keys, lo, hi):
        """(start, stop) of the key ranges [lo[i], hi[i]) in sorted keys: one binary search per query. Sync-free."""
        xp = self.xp
        keys = self._c(sorted_keys, np.int64)
        lo = self._c(lo, np.int64)
        hi = self._c(hi, np.int64)
        m = lo.shape[0]
        if hi.shape[0] != m:
            raise ValueError(f"search_ranges: lo and hi differ in length ({m} and {hi.shape[0]})")
        start = xp.empty(m, dtype=np.int64)
        stop = xp.empty(m, dtype=np.int64)
        self._run("coo_indexing_search_ranges", m, keys, i64(keys.shape[0]), lo, hi, i64(m), start, stop)
        return start, stop

    def _range_ends(self, start, count, what):
        """(start, ends = inclusive scan of count, m, total) for the range rows. Synchronises (total)."""
        xp = self.xp
        start = self._c(start, np.int64)
        count = self._c(count, np.int64)
        m = start.shape[0]
        if count.shape[0] != m:
            raise ValueError(f"{what}: start and count differ in length ({m} and {count.shape[0]})")
        if m == 0:
            return start, xp.zeros(0, dtype=np.int64), 0, 0
        if self._validate and bool((np.asarray(self._peek(count)) < 0).any()):
            raise ValueError(f"{what}: counts must be non-negative")
        ends = xp.cumsum(count)
        total = self._sync_size(ends[-1])  # synchronize! (the total length sizes the output; and the error word)
        if total < 0:
            raise ValueError(f"{what}: counts must be non-negative (they sum to {total})")
        return start, ends, m, total

    def expand_ranges(self, start, count):
        """(rows, owner) of the concatenated ranges start[i] .. start[i]+count[i]-1. Synchronises (output size)."""
        xp = self.xp
        start, ends, m, total = self._range_ends(start, count, "expand_ranges")
        rows = xp.empty(total, dtype=np.int64)
        owner = xp.empty(total, dtype=np.int64)
        self._run("coo_indexing_expand", total, start, ends, i64(m), i64(total), rows, owner, self._err())
        return rows, owner

    def take_ranges(self, indices, values, start, count):
        """Fused range gather: (out[d + 1, t] with out[0] the owner, values[rows]). Synchronises (output size).

        A source row outside the arrays gives zeros and is reported (``errors.GATHER``).
        """
        xp = self.xp
        indices = self._c(indices, np.int64)
        values = self._c(values)
        d, n = indices.shape
        start, ends, m, total = self._range_ends(start, count, "take_ranges")
        out = xp.empty((d + 1, total), dtype=np.int64)
        vals = xp.empty((total,) + values.shape[1:], dtype=values.dtype)
        if total == 0:
            return out, vals
        if self._validate:
            hs, hc = np.asarray(self._peek(start)), np.asarray(self._peek(count))
            used = hc > 0
            if used.any() and (hs[used].min() < 0 or (hs + hc)[used].max() > n):
                raise IndexError(f"take_ranges: a range leaves the {n} source rows")
        view, ctype = self._words(values)
        vview, _ = self._words(vals)
        self._run(f"coo_indexing_take_ranges<{ctype}>", total, indices, i64(d), i64(n), view,
                  i64(view.shape[1]), start, ends, i64(m), i64(total), out, vview, self._err())
        return out, vals

    def take_rows(self, indices, values, ptr, rows):
        """take_ranges of the rows' spans in a row pointer (two gathers, then the fused range gather;
        the CPU layer finds the spans in one prefetching pass). Synchronises (output size)."""
        ptr, rows = self._c(ptr, np.int64), self._c(rows, np.int64)
        self._check_range(rows, 0, ptr.shape[0] - 1, "take_rows")
        start = ptr[rows]
        return self.take_ranges(indices, values, start, ptr[rows + 1] - start)
