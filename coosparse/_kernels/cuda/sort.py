"""CUDA rows of the sort family: the stable sort of int64 keys, and the order check of sorted flags.

Kernels: ``cuda_kernels/sort.cu``. Conventions: ``base.py``.
"""
from __future__ import annotations

import numpy as np

from .base import i64


class SortRows:
    """The sort rows of :class:`~coosparse._kernels.cuda.layer.CudaLayer` (helpers: ``base.LayerBase``)."""

    def sort_pairs(self, keys, bound):
        """Stable sort of keys in [0, bound): (sorted_keys, perm) with sorted_keys = keys[perm]. Sync-free.

        When key bits + position bits fit in 63 bits, each key is packed with
        its position (``coo_sort_pack``; a key outside [0, bound) is clamped
        and reported) and the packed words are sorted keys-only, in place (a
        CUB radix sort on a GPU), which is stable by construction and moves
        half the bytes of a key-value sort; otherwise the namespace's stable
        argsort.
        """
        xp = self.xp
        keys = self._c(keys, np.int64)
        n = keys.shape[0]
        bound = max(int(bound), 1)
        shift = max(n - 1, 0).bit_length()
        if n == 0:
            return keys.copy(), xp.empty(0, dtype=np.int64)
        if (bound - 1).bit_length() + shift <= 63:
            self._check_range(keys, 0, bound, "sort_pairs keys")
            packed = xp.empty(n, dtype=np.int64)
            self._run("coo_sort_pack", n, keys, i64(n), i64(shift), i64(bound), packed, self._err())
            packed = self._sort(packed)
            sorted_keys = xp.empty(n, dtype=np.int64)
            perm = xp.empty(n, dtype=np.int64)
            self._run("coo_sort_unpack", n, packed, i64(n), i64(shift), sorted_keys, perm)
            return sorted_keys, perm
        perm = self._c(self._argsort(keys), np.int64)
        return keys[perm], perm

    def sort_segments(self, values, offsets):
        """``values`` (1-D) with each segment ``offsets[s]:offsets[s + 1]`` sorted, stable, NaN last:
        the stable value order, then the stable segment order (the Numba layer's merge sort within
        segments gives the same arrangement). Sync-free."""
        xp = self.xp
        values = self._c(values)
        offsets = self._c(offsets, np.int64)
        n = values.shape[0]
        if n < 2:
            return values.copy()
        seg = xp.searchsorted(offsets, xp.arange(n, dtype=np.int64), side="right") - 1
        o = xp.argsort(values, kind="stable")
        order = o[xp.argsort(seg[o], kind="stable")]
        return values[order]

    def sort_lanes(self, values, offsets, indices, fill, length):
        """A sort along the last axis of a coalesced array (lanes: the segments of ``offsets``):
        (indices int64[d, m], values[m]) of the values other than the fill, each lane in order at
        its positions in the sorted dense lane. :meth:`sort_segments`, then the kept entries, their
        ranks and lane lengths with array operations: the Numba layer's arrays. Synchronises
        (the output size)."""
        xp = self.xp
        indices = self._c(indices, np.int64)
        offsets = self._c(offsets, np.int64)
        n = values.shape[0]
        vals = self.sort_segments(values, offsets)
        fill = values.dtype.type(fill)
        keep = xp.flatnonzero(vals != fill)  # synchronize! (output size; NaN differs from every fill)
        m = keep.shape[0]
        lane = xp.searchsorted(offsets, xp.arange(n, dtype=np.int64), side="right") - 1
        lane_k = lane[keep]
        kept = xp.bincount(lane_k, minlength=offsets.shape[0] - 1) if m else xp.zeros(offsets.shape[0] - 1, np.int64)
        out_off = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(kept)])
        rank = xp.arange(m, dtype=np.int64) - out_off[lane_k]
        total = kept[lane_k]
        vk = vals[keep]
        out_idx = xp.empty((indices.shape[0], m), dtype=np.int64)
        out_idx[:-1] = indices[:-1, offsets[lane_k]]
        out_idx[-1] = xp.where(vk < fill, rank, int(length) - (total - rank))
        return out_idx, vk

    def topk_lanes(self, values, offsets, fill, length, k, largest):
        """The positions (int64[m], increasing) of the entries that rank among the first ``k`` of
        their lane (the segments of ``offsets``, ``length`` elements each, the unstored ones the
        fill's), other than those equal to the fill: the Numba layer's per-lane selection, composed
        here of stable argsorts (each lane in rank order: largest first with NaN first, or smallest
        first with NaN last, ties to the lower position) and array operations. Synchronises (the
        output size)."""
        xp = self.xp
        values = self._c(values)
        offsets = self._c(offsets, np.int64)
        n = values.shape[0]
        if n == 0:
            return xp.empty(0, dtype=np.int64)
        kind = values.dtype.kind
        v = values + values.dtype.type(0) if kind == "f" else values  # -0 as +0 (a radix sort tells them apart)
        if largest:  # descending, ties to the lower position: the ascending order of the reversal, reversed
            o = (n - 1 - xp.argsort(v[::-1], kind="stable"))[::-1]
        else:
            o = xp.argsort(v, kind="stable")
        lane = xp.searchsorted(offsets, xp.arange(n, dtype=np.int64), side="right") - 1
        order = o[xp.argsort(lane[o], kind="stable")]  # lane-major: each lane keeps its segment
        vs = v[order]
        fill = values.dtype.type(fill)
        gt, lt = vs > fill, vs < fill
        if kind == "f":
            nan = xp.isnan(vs)
            gt, lt = (gt | nan, lt) if not np.isnan(fill) else (xp.zeros_like(gt), ~nan)
        before, after = (gt, lt) if largest else (lt, gt)
        j = xp.arange(n, dtype=np.int64)
        # before the fill: the rank in the lane; after it: counted from the lane's end
        pos = xp.where(before, j - offsets[lane], int(length) - (offsets[lane + 1] - j))
        mask = xp.zeros(n, dtype=bool)
        mask[order] = (before | after) & (pos < int(k))
        return xp.flatnonzero(mask)  # synchronize! (output size)

    def _check_sorted(self, keys, strict):
        """Report (COO_ERR_ORDER) keys that are not sorted (strictly: and unique) as a merge assumes. Sync-free."""
        n = keys.shape[0]
        if n > 1:
            self._run("coo_sort_check", n - 1, keys, i64(n), i64(bool(strict)), self._err())
