"""CUDA rows of the files family: the file bridge's host work, for arrays on a device.

Files are read and written on the host, so these rows exist for the layers to mirror
each other (and for the emulated layer's tests): each reads its arrays back or
composes array operations. No kernels of their own (``cuda_kernels/`` has no files.cu).
"""
from __future__ import annotations

import zlib

import numpy as np


class FilesRows:
    """The files rows of :class:`~coosparse._kernels.cuda.layer.CudaLayer`."""

    def crc32(self, data, crc=0):
        """zlib's ``crc32(data, crc)``; a device array is read back first (synchronises)."""
        if hasattr(data, "get"):
            data = self.xp.ascontiguousarray(data).get()  # synchronize!
        return zlib.crc32(memoryview(np.ascontiguousarray(data)).cast("B"), crc)

    def widen_indices(self, src, sizes):
        """(int64 copy, outside, decrease, repeat) as the Numba row, by array operations
        (synchronises: the three answers are host values)."""
        xp = self.xp
        out = xp.ascontiguousarray(src, dtype=np.int64)
        d, n = out.shape
        if n == 0:
            return out, False, -1, -1
        outside = xp.zeros(n, dtype=bool)
        keys = xp.zeros(n, dtype=np.int64)
        stride = 1
        for k in reversed(range(d)):
            outside |= (out[k] < 0) | (out[k] >= int(sizes[k]))
            keys += out[k] * stride
            stride *= int(sizes[k])
        if bool(outside.any()):  # synchronize!
            return out, True, -1, -1
        down = keys[1:] < keys[:-1]
        same = keys[1:] == keys[:-1]
        decrease = int(down.argmax()) + 1 if bool(down.any()) else -1  # synchronize!
        repeat = int(same.argmax()) + 1 if bool(same.any()) else -1  # synchronize!
        return out, False, decrease, repeat
