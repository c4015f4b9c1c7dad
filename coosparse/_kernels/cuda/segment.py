"""CUDA rows of the segment family: run heads of sorted keys and ordered per-run sums.

Kernels: ``cuda_kernels/segment.cu``. Conventions: ``base.py``.
"""
from __future__ import annotations

import numpy as np

from .base import i64


class SegmentRows:
    """The segment rows of :class:`~coosparse._kernels.cuda.layer.CudaLayer` (helpers: ``base.LayerBase``)."""

    def segment_starts(self, sorted_keys):
        """Run heads of sorted keys plus n: int64[nseg + 1]. Synchronises (nseg sizes the output)."""
        xp = self.xp
        sorted_keys = self._c(sorted_keys, np.int64)
        n = sorted_keys.shape[0]
        if n == 0:
            return xp.zeros(1, dtype=np.int64)
        flags = xp.empty(n, dtype=np.int64)
        self._run("coo_segment_starts_flag", n, sorted_keys, i64(n), flags)
        pos = xp.cumsum(flags)
        nseg = self._sync_size(pos[-1])  # synchronize! (and the error word, in the same copy)
        starts = xp.empty(nseg + 1, dtype=np.int64)
        self._run("coo_segment_starts_write", n, sorted_keys, pos, i64(n), i64(nseg), starts)
        return starts

    def segment_sum(self, values, perm, starts):
        """out[s] = ordered sum of values[perm[starts[s]:starts[s+1]]] (perm None: identity). Sync-free.

        One thread per (segment, column) adds the segment's values sequentially
        in perm order, so float sums are bit-identical to the Numba layer.
        """
        xp = self.xp
        values = self._c(values)
        if values.ndim != 2:
            raise ValueError(f"segment_sum expects 2-D values; got shape {values.shape}")
        starts = self._c(starts, np.int64)
        n = values.shape[0]
        nseg = starts.shape[0] - 1
        out = xp.empty((nseg, values.shape[1]), dtype=values.dtype)
        if nseg <= 0 or values.shape[1] == 0:
            return out
        view, ctype = self._sum_view(values)
        oview, _ = self._sum_view(out)
        k = view.shape[1]
        if self._validate:
            self._check_range(starts, 0, n + 1, "segment_sum starts")
            h = np.asarray(self._peek(starts))
            if bool((h[1:] <= h[:-1]).any()):
                raise ValueError("segment_sum: starts must be strictly increasing")
        perm_arr = None if perm is None else self._c(perm, np.int64)
        if perm_arr is not None:
            self._check_range(perm_arr, 0, n, "segment_sum perm")
        self._run(
            f"coo_segment_sum_reduce<{ctype}>", nseg * k,
            view, i64(n), perm_arr, i64(perm is not None), starts, i64(nseg), i64(k), oview, self._err(),
        )
        return out
