"""CUDA rows of the elementwise family: the elementwise engine's union (each operand's words or its
fill) and its function on the values.

No kernel of its own (no elementwise.cu): the union rows and the row gathers.
"""
from __future__ import annotations

import numpy as np

from ..bounds import row_major_sizes
from ..backend import is_device_array


class ElementwiseRows:
    """The elementwise rows of :class:`~coosparse._kernels.cuda.layer.CudaLayer` (helpers: ``base.LayerBase``)."""

    def merge_gather(self, a_idx, b_idx, a_words, b_words, strides, a_fill, b_fill, *, sizes=None, pointers=None):
        """Coalesced union: (indices, a's rows or a_fill, b's rows or b_fill), bit copies.

        Composed of the union kernels (keys, :meth:`merge_union`, :meth:`union_columns`)
        and row gathers (``gather_or_zero``); synchronises once (the union size).
        ``strides`` and the fill rows are host metadata (a device array raises
        TypeError): a zero fill needs nothing more, another one is written
        where a side lacks the key by one ``where`` per distinct word of its
        period (one for a real dtype, two for complex128's two words), with
        the words as scalars, so nothing is uploaded. Indices outside ``sizes``
        are reported as in :meth:`merge_add`. ``pointers`` (the Numba layer's
        per-row merge) is not used: the ranks give the same result.
        """
        fills = [self._host_words(f, w, what) for f, w, what in
                 ((a_fill, a_words, "merge_gather a_fill"), (b_fill, b_words, "merge_gather b_fill"))]
        sizes = row_major_sizes(strides) if sizes is None else sizes
        a_keys = self.linear_index(a_idx, strides, sizes)
        b_keys = self.linear_index(b_idx, strides, sizes)
        a_pos, b_pos = self.merge_union(a_keys, b_keys)  # synchronize! (output size)
        idx = self.union_columns(a_idx, b_idx, a_pos, b_pos)
        outs = []
        for words, pos, fill in ((a_words, a_pos, fills[0]), (b_words, b_pos, fills[1])):
            g = self.gather_or_zero(words, pos)
            if fill.any():
                self._fill_missing(g, pos < 0, fill)
            outs.append(g)
        return idx, outs[0], outs[1]

    def apply_ufunc(self, f, args, kwargs):
        """``f(*args, **kwargs)`` in one call: the device runs its elements in parallel already."""
        return f(*args, **kwargs)

    @staticmethod
    def _host_words(fill, words, what):
        """A fill row (host, one word per column of ``words``) as a NumPy array of the word type."""
        if is_device_array(fill):
            raise TypeError(f"{what}: the fill row is host metadata, passed by value; got a device array")
        f = np.asarray(fill).reshape(-1)
        if f.shape[0] != words.shape[1]:
            raise ValueError(f"{what}: {f.shape[0]} words for rows of {words.shape[1]}")
        return f.astype(words.dtype, copy=False)

    def _fill_missing(self, out, missing, fill):
        """out[i] = fill where missing[i]: columns of one period share a scalar word (no upload)."""
        xp = self.xp
        k = fill.shape[0]
        period = next(p for p in range(1, k + 1) if k % p == 0 and (fill == np.tile(fill[:p], k // p)).all())
        m = missing[:, None]
        for j in range(period):
            col = out[:, j::period]
            col[...] = xp.where(m, fill[j], col)  # fill[j]: a NumPy scalar, passed by value
