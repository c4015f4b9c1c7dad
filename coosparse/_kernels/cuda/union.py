"""CUDA rows of the union family: the sorted union of two coalesced operands.

Kernels: ``cuda_kernels/union.cu``. Conventions: ``base.py``.
"""
from __future__ import annotations

import numpy as np

from ..bounds import row_major_sizes
from .base import i64


class UnionRows:
    """The union rows of :class:`~coosparse._kernels.cuda.layer.CudaLayer` (helpers: ``base.LayerBase``)."""

    def merge_union(self, a_keys, b_keys):
        """(a_pos, b_pos) over the sorted union of two strictly increasing key arrays; -1 where a side lacks the key.

        Synchronises (the number of common keys sizes the output).
        """
        xp = self.xp
        a_keys = self._c(a_keys, np.int64)
        b_keys = self._c(b_keys, np.int64)
        na, nb = a_keys.shape[0], b_keys.shape[0]
        self._check_sorted(a_keys, strict=True)  # lying flags: reported at the size read below
        self._check_sorted(b_keys, strict=True)
        lb = xp.empty(na, dtype=np.int64)
        matched = xp.empty(na, dtype=np.int64)
        self._run("coo_union_rank", na, a_keys, b_keys, i64(na), i64(nb), lb, matched)
        common = xp.empty(na + 1, dtype=np.int64)
        common[0] = 0  # (a one-element fill: the scan writes the rest)
        if na:
            xp.cumsum(matched, out=common[1:])
        m = na + nb - self._sync_size(common[na])  # synchronize! (output size; error word in the same copy)
        a_pos = xp.empty(m, dtype=np.int64)
        b_pos = xp.empty(m, dtype=np.int64)
        err = self._err()
        self._run("coo_union_write_a", na, lb, matched, common, i64(na), i64(m), a_pos, b_pos, err)
        self._run("coo_union_write_b", nb, a_keys, b_keys, common, i64(na), i64(nb), i64(m), a_pos, b_pos, err)
        return a_pos, b_pos

    def union_columns(self, a_idx, b_idx, a_pos, b_pos):
        """Index columns of the union: a_idx[:, a_pos[u]] if a_pos[u] >= 0, else b_idx[:, b_pos[u]]. Sync-free."""
        xp = self.xp
        a_idx = self._c(a_idx, np.int64)
        b_idx = self._c(b_idx, np.int64)
        a_pos = self._c(a_pos, np.int64)
        b_pos = self._c(b_pos, np.int64)
        d, na = a_idx.shape
        nb = b_idx.shape[1]
        m = a_pos.shape[0]
        out = xp.empty((d, m), dtype=np.int64)
        if d and m:
            if self._validate:
                self._check_range(a_pos, -1, na, "union_columns a_pos")
                ap, bp = np.asarray(self._peek(a_pos)), np.asarray(self._peek(b_pos))
                self._check_range(bp[ap < 0], 0, nb, "union_columns b_pos")
            self._run("coo_union_columns", d * m, a_idx, b_idx, a_pos, b_pos,
                      i64(d), i64(na), i64(nb), i64(m), out, self._err())
        return out

    def union_values(self, a_values, b_values, a_pos, b_pos, negate):
        """out[u] = (a[a_pos[u]] or 0) +/- (b[b_pos[u]] or 0) in one dtype (a missing a gives -b). Sync-free."""
        xp = self.xp
        a_values = self._c(a_values)
        b_values = self._c(b_values)
        if a_values.dtype != b_values.dtype:
            raise TypeError(f"union_values needs one dtype; got {a_values.dtype} and {b_values.dtype}")
        a_pos = self._c(a_pos, np.int64)
        b_pos = self._c(b_pos, np.int64)
        m = a_pos.shape[0]
        out = xp.empty((m, a_values.shape[1]), dtype=a_values.dtype)
        if m == 0 or a_values.shape[1] == 0:
            return out
        av, ctype = self._sum_view(a_values)
        bv, _ = self._sum_view(b_values)
        ov, _ = self._sum_view(out)
        if self._validate:
            self._check_range(a_pos, -1, a_values.shape[0], "union_values a_pos")
            self._check_range(b_pos, -1, b_values.shape[0], "union_values b_pos")
            ap, bp = np.asarray(self._peek(a_pos)), np.asarray(self._peek(b_pos))
            if bool(((ap < 0) & (bp < 0)).any()):
                raise IndexError("union_values: an entry has neither side")
        k = av.shape[1]
        self._run(f"coo_union_values<{ctype}>", m * k, av, bv, a_pos, b_pos, i64(bool(negate)),
                  i64(a_values.shape[0]), i64(b_values.shape[0]), i64(m), i64(k), ov, self._err())
        return out

    def merge_add(self, a_idx, b_idx, a_values, b_values, strides, negate, *, sizes=None, pointers=None,
                  keys=None):
        """Coalesced union in one call: (indices[d, m], values[m, k]) of a + b (a - b with ``negate``).

        Keys from the index columns (``strides``, host values; indices outside
        ``sizes`` reported, default as in :meth:`merge_multiply`), the ranks of
        :meth:`merge_union`, then the index columns and the values
        (``coo_union_values``). Synchronises once (the union size).
        ``pointers`` and ``keys`` (the Numba layer's per-row merge) are not
        used: the ranks give the same result.
        """
        sizes = row_major_sizes(strides) if sizes is None else sizes
        a_keys = self.linear_index(a_idx, strides, sizes)
        b_keys = self.linear_index(b_idx, strides, sizes)
        a_pos, b_pos = self.merge_union(a_keys, b_keys)  # synchronize! (output size)
        return (self.union_columns(a_idx, b_idx, a_pos, b_pos),
                self.union_values(a_values, b_values, a_pos, b_pos, negate))
