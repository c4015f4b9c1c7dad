"""CUDA rows of the join family: the r-way merge of sorted runs.

Kernels: ``cuda_kernels/join.cu``. Conventions: ``base.py``.
"""
from __future__ import annotations

import numpy as np

from ..bounds import run_offsets
from .base import i64


class JoinRows:
    """The join rows of :class:`~coosparse._kernels.cuda.layer.CudaLayer` (helpers: ``base.LayerBase``)."""

    MERGE_MAX_RUNS = 16
    """Most sorted runs ``merge_take`` merges (their offsets travel by value); more are sorted."""

    def merge_take(self, keys, offsets, indices, values):
        """(indices[:, perm], values[perm]) for the stable merge order of sorted runs of keys:
        each entry's merge rank by binary search in the other runs, then its column and row copied
        there. Sync-free: ``offsets`` (r + 1 host integers) travel by value. More than
        ``MERGE_MAX_RUNS`` runs are sorted instead (same order). Keys not sorted within their run
        are reported (``errors.ORDER``)."""
        xp = self.xp
        keys = self._c(keys, np.int64)
        indices = self._c(indices, np.int64)
        values = self._c(values)
        n = keys.shape[0]
        d = indices.shape[0]
        offsets = run_offsets(offsets, keys, indices, values, "merge_take")
        r = offsets.shape[0] - 1
        if r > self.MERGE_MAX_RUNS:
            perm = self._c(self._argsort(keys), np.int64) if n else xp.zeros(0, dtype=np.int64)
            return self.gather_columns(indices, perm), self.gather_rows(values, perm)
        out_idx = xp.empty((d, n), dtype=np.int64)
        out_val = xp.empty(values.shape, dtype=values.dtype)
        if n == 0:
            return out_idx, out_val
        view, ctype = self._words(values)
        oview, _ = self._words(out_val)
        self._run(f"coo_join_merge_take<{ctype}>", n, keys, self.dims(offsets, "merge_take offsets"), i64(r),
                  i64(n), indices, i64(d), view, i64(view.shape[1]), out_idx, oview, self._err())
        return out_idx, out_val

    def counting_take(self, keys, bound, indices, values, other_bound=None):
        """(offsets int64[bound + 1], indices[:, perm], values[perm]) for the stable order perm of
        ``keys`` in [0, bound): the stable sort of the keys, the gathers, and each key's first
        position by binary search (the same arrays as the Numba layer's counting sort: a stable
        order is unique). A key outside [0, bound) is reported (``errors.INDEX``). Sync-free.
        ``other_bound`` (the Numba layer packs that many bits of the second row) is not needed."""
        xp = self.xp
        keys = self._c(keys, np.int64)
        bound = int(bound)
        # the checked linear index reports a key outside [0, bound) (emulation: raises at once);
        # the clip keeps the sort inside its key space whatever the keys are
        self.linear_index(keys.reshape(1, -1), np.ones(1, dtype=np.int64), (bound,))
        sk, perm = self.sort_pairs(xp.clip(keys, 0, max(bound - 1, 0)), bound)
        q = xp.arange(bound + 1, dtype=np.int64)
        offsets, _ = self.search_ranges(sk, q, q)
        return offsets, self.gather_columns(indices, perm), self.gather_rows(values, perm)

    def join_rows(self, indices, values, pointers, shifts, axis, out_idx, out_val):
        """Pieces sorted by row joined row by row (output row i: row i of each piece in turn):
        each piece's entries scattered to their slots in CuPy (entry j of piece t goes to
        j + the slots of row i before it in the output minus the piece's earlier rows). Sync-free.
        Slots are clipped into range (memory-safe): a piece's row outside its shape or a sorted
        flag that lies was reported when its row pointer was built (``row_offsets``)."""
        xp = self.xp
        pointers = self._c(pointers, np.int64)
        lens = pointers[:, 1:] - pointers[:, :-1]
        m = lens.shape[1]
        before = xp.zeros(m, dtype=np.int64)
        if m > 1:
            xp.cumsum(lens.sum(axis=0)[:-1], out=before[1:])
        total = out_idx.shape[1]
        for t in range(len(indices)):
            idx = self._c(indices[t], np.int64)
            n = idx.shape[1]
            if n and total:
                rows = xp.clip(idx[0], 0, max(m - 1, 0))
                delta = before - pointers[t, :-1]
                pos = xp.clip(xp.arange(n, dtype=np.int64) + delta[rows], 0, total - 1)
                out_idx[:, pos] = idx
                out_idx[axis, pos] += int(shifts[t])
                out_val[pos] = self._c(values[t])
            before += lens[t]
