"""CUDA rows of the gather family: bit copies of rows, index columns and strided elements.

Kernels: ``cuda_kernels/gather.cu``. Conventions: ``base.py``.
"""
from __future__ import annotations

import numpy as np

from .base import i64


class GatherRows:
    """The gather rows of :class:`~coosparse._kernels.cuda.layer.CudaLayer` (helpers: ``base.LayerBase``)."""

    def gather_rows(self, values, rows):
        """values[rows] for 2-D values (a bit copy, any dtype). Sync-free."""
        return self._gather_rows("coo_gather_rows_copy", values, rows, 0, "gather_rows rows")

    def _gather_rows(self, kernel, values, rows, lowest_row, what):
        """Row gather by the (row, column)-per-thread kernel ``kernel`` over unsigned words."""
        xp = self.xp
        values = self._c(values)
        rows = self._c(rows, np.int64)
        m = rows.shape[0]
        out = xp.empty((m, values.shape[1]), dtype=values.dtype)
        if m == 0 or values.shape[1] == 0:
            return out
        self._check_range(rows, lowest_row, values.shape[0], what)
        view, ctype = self._words(values)
        oview, _ = self._words(out)
        k = view.shape[1]
        self._run(f"{kernel}<{ctype}>", m * k, view, i64(values.shape[0]), rows, i64(m), i64(k), oview,
                  self._err())
        return out

    def gather_columns(self, indices, rows):
        """indices[:, rows], C-contiguous int64. Sync-free."""
        xp = self.xp
        indices = self._c(indices, np.int64)
        rows = self._c(rows, np.int64)
        d, n = indices.shape
        m = rows.shape[0]
        out = xp.empty((d, m), dtype=np.int64)
        if d and m:
            self._check_range(rows, 0, n, "gather_columns rows")
            self._run("coo_gather_columns", d * m, indices, rows, i64(d), i64(n), i64(m), out,
                      self._err())
        return out

    def gather_strided(self, source, addresses, inner):
        """out[i, c] = source[addresses[i] + inner[c]] for 1-D ``source`` (bit copy). Sync-free.

        ``inner`` is host metadata (by value up to 64 words). An address
        outside the source reads zero bits and is reported.
        """
        xp = self.xp
        if source.ndim != 1 or (source.size > 1 and source.strides[0] != source.itemsize):
            raise ValueError("gather_strided source must be a 1-D flat view with unit stride")
        addresses = self._c(addresses, np.int64)
        w = 2 if source.dtype.itemsize == 16 else 1  # two words per 16-byte element
        inner_dev, inner_val, kw, _, _ = self._inner(inner, w)
        n, k = addresses.shape[0], kw // w
        out = xp.empty((n, k), dtype=source.dtype)
        if n == 0 or k == 0:
            return out
        if self._validate:
            h = np.asarray(inner, dtype=np.int64).reshape(-1)
            a = np.asarray(self._peek(addresses))
            self._check_range((a[:, None] + h[None, :]).reshape(-1), 0, source.size, "gather_strided address")
        sview, ctype = self._words(source)
        oview, _ = self._words(out.reshape(-1))
        if w > 1:
            addresses = addresses * w
        self._run(f"coo_gather_strided<{ctype}>", n * kw, sview, i64(sview.shape[0]), addresses, inner_dev,
                  inner_val, i64(n), i64(kw), oview, self._err())
        return out

    def gather_indexed(self, source, indices, strides, sizes, base, inner):
        """out[i, c] = source[base + sum_d indices[d, i] * strides[d] + inner[c]] (bit copy). Sync-free.

        The checked ``linear_index`` and ``gather_strided`` composed (a GPU keeps the addresses in
        its memory bandwidth budget; the Numba layer fuses them to skip the address array): an
        index outside ``sizes`` reads zero bits and is reported (IndexError at the next check).
        ``strides``, ``sizes``, ``base`` and ``inner`` are host values.
        """
        addresses = self.linear_index(indices, strides, sizes)
        if base:
            addresses += int(base)
        return self.gather_strided(source, addresses, inner)

    def gather_or_zero(self, values, rows):
        """values[rows[i]] for 2-D values, zeros where rows[i] < 0 (bit copy). Sync-free."""
        return self._gather_rows("coo_gather_rows_or_zero", values, rows, -(2**62), "gather_or_zero rows")
