"""CUDA rows of the linear_index family: row-major keys of index columns and their inverse.

Kernels: ``cuda_kernels/linear_index.cu``. Conventions: ``base.py``.
"""
from __future__ import annotations

import numpy as np

from ..bounds import first_out_of_bounds, raise_out_of_bounds, size_limits
from .base import i64


class LinearIndexRows:
    """The linear_index rows of :class:`~coosparse._kernels.cuda.layer.CudaLayer` (helpers: ``base.LayerBase``)."""

    def linear_index(self, indices, strides, sizes=None):
        """keys[i] = sum_d indices[d, i] * strides[d] (caller guarantees no overflow). Sync-free.

        ``strides`` and ``sizes`` are host values (passed by value in the launch).
        With ``sizes`` (the shape the indices must fit) every index is checked in
        the same pass: an entry outside gets a key no kernel reads or writes
        through (``COO_BAD_KEY``, far below zero) and is reported through the
        error word (``errors.INDEX``), not raised: raising would synchronise.
        With ``validate`` (emulation) a bad index raises IndexError at once.
        """
        xp = self.xp
        indices = self._c(indices, np.int64)
        ndim, n = indices.shape
        st = self.dims(strides, "linear_index strides")
        keys = xp.empty(n, dtype=np.int64)
        if ndim == 0:
            keys[...] = 0
            return keys
        if sizes is None:
            self._run("coo_linear_index_compute", n, indices, st, i64(ndim), i64(n), keys)
            return keys
        if self._validate and n:
            host = np.asarray(self._peek(indices))
            if first_out_of_bounds(host, sizes) is not None:
                raise_out_of_bounds(host, tuple(sizes))
        # min(size, 2**63) as the bits of a u64 (the kernel compares unsigned)
        limits = self.dims(size_limits(sizes).view(np.int64), "linear_index sizes")
        self._run("coo_linear_index_checked", n, indices, st, limits, i64(ndim), i64(n), keys, self._err())
        return keys

    def unravel_index(self, keys, strides):
        """Inverse of :meth:`linear_index`: int64[ndim, n]; ``strides`` are host values. Sync-free."""
        keys = self._c(keys, np.int64)
        ndim, n = len(strides), keys.shape[0]
        st = self.dims(strides, "unravel_index strides")
        out = self.xp.empty((ndim, n), dtype=np.int64)
        if ndim:
            self._run("coo_linear_index_unravel", n, keys, st, i64(ndim), i64(n), out)
        return out
