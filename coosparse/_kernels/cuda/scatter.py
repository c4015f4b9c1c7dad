"""CUDA rows of the scatter family: scatter(-add) of entries into a flat target, and strided views (as_strided_scatter).

Kernels: ``cuda_kernels/scatter.cu``. Conventions: ``base.py``.
"""
from __future__ import annotations

import numpy as np

from .base import i64

FILL_MAX_GAP = 64
"""Largest gap (elements) between consecutive view addresses copied by one thread in the fused path."""

VIEW_CHUNK = 8
"""Elements of the view's last dimension per thread in the view kernels (``COO_VIEW_CHUNK``)."""


def view_lanes(n_last):
    """Threads sharing a chunk of a view row (interleaved): the smallest power of two, at most 32,
    whose chunk of ``VIEW_CHUNK * lanes`` elements covers the row (``coo_view_start``)."""
    lanes = 1
    while lanes < 32 and VIEW_CHUNK * lanes < n_last:
        lanes *= 2
    return lanes


def _max_gap(sizes, strides):
    """Largest address step between consecutive elements (C order) of an increasing view."""
    gap, inner_span = 1, 0
    for n, s in zip(reversed([int(x) for x in sizes]), reversed(strides)):
        if n > 1:
            gap = max(gap, s - inner_span)
        inner_span += (n - 1) * s
    return gap


def _word_hint(hint, w):
    """The hint for the word addresses of elements split into ``w`` words.

    Distinct elements have distinct words; but the words of two equal
    element addresses interleave (2a, 2a+1, 2a, 2a+1), so 'sorted' does not
    carry over to words when w > 1 (the words are sorted instead).
    """
    return None if hint == "sorted" and w > 1 else hint


class ScatterRows:
    """The scatter rows of :class:`~coosparse._kernels.cuda.layer.CudaLayer` (helpers: ``base.LayerBase``)."""

    def _elements(self, target, addresses, values, inner, w):
        """Word addresses of every element, i-major (the sequential loop's order), and the values.

        An entry whose block would leave the target (block address outside
        ``[-min(0, min inner), len - max(0, max inner))``, the Numba layer's
        rule) is skipped and reported: its elements get the address
        ``len(target) * w``, which sorts last and is never written. Computed on
        the device (``coo_scatter_elements``); ``inner`` is host metadata.
        """
        xp = self.xp
        if target.ndim != 1:
            raise ValueError(f"scatter target must be 1-D; got shape {target.shape}")
        if target.size > 1 and target.strides[0] != target.itemsize:
            raise ValueError("scatter target must have unit element stride (a flat view)")
        addresses = self._c(addresses, np.int64)
        inner_dev, inner_val, k, lo, hi_pad = self._inner(inner)  # element offsets; the kernel makes words
        n = addresses.shape[0]
        if values.shape != (n, k):
            raise ValueError(f"scatter values must have shape ({n}, {k}); got {values.shape}")
        span = target.size
        vals = self._c(values.astype(target.dtype, copy=False)).reshape(-1)
        addr = xp.empty(n * k * w, dtype=np.int64)
        if n == 0 or k == 0:
            return addr, vals, span
        self._run("coo_scatter_elements", n * k * w, addresses, inner_dev, inner_val, i64(n), i64(k), i64(w),
                  i64(lo), i64(span - hi_pad), i64(span), addr, self._err())
        return addr, vals, span

    def _scatter(self, kind, target, addr, vals, ctype, limit, hint, replace=False):
        n = addr.shape[0]
        if hint == "distinct":
            # no two elements share an address (a unique COO): each is written directly, no sort.
            # For add, every sum (old value + element) is read before anything is written. A
            # unique flag that lies would leave a word to whichever thread wrote last: each word
            # is read back, and one that another element overwrote is reported (ORDER)
            if kind == "add":
                sums = self.xp.empty_like(vals)
                self._run(f"coo_scatter_add_values<{ctype}>", n, target, addr, vals, i64(n), i64(limit),
                          i64(bool(replace)), sums)
                vals = sums
            tw, wtype = self._words(target)
            vw, _ = self._words(vals)
            self._run(f"coo_scatter_set_direct<{wtype}>", n, tw, addr, vw, i64(n), i64(limit))
            self._run(f"coo_scatter_check_direct<{wtype}>", n, tw, addr, vw, i64(n), i64(limit), self._err())
            return
        if hint == "sorted":  # non-decreasing already: runs without a sort; a sorted flag that lies is reported
            self._run("coo_scatter_check_sorted", n - 1, addr, i64(n), i64(limit), self._err())
            saddr, perm = addr, None
        else:
            saddr, perm = self.sort_pairs(addr, limit + 1)
        extra = (i64(bool(replace)),) if kind == "add" else ()
        self._run(f"coo_scatter_{kind}_runs<{ctype}>", n, target, saddr, perm, i64(perm is not None), vals,
                  i64(n), i64(limit), *extra)

    def scatter_add(self, target, addresses, values, inner, *, hint=None, replace=False):
        """target[addresses[i] + inner[c]] += values[i, c], in order of i. In place; sync-free.

        Entries whose block would leave the target are skipped (memory safety)
        and reported through the error word. ``inner`` is host metadata.
        ``hint``: 'sorted' when the element addresses are non-decreasing in
        (i, c) order (a sorted COO into a C-ordered target), 'distinct' when
        no two coincide (a unique COO): the address sort is skipped. A hint
        that is false (flags that lie) is found by a cheap check and reported
        (ORDER): for 'sorted' the order of adjacent addresses, for 'distinct'
        each written word read back.

        Element addresses are stably sorted, and one thread sums each run of
        equal addresses in original order onto the old value (no atomics), or
        from -0.0 with ``replace`` (the kernel API's replace mode).
        """
        w = 2 if target.dtype.kind == "c" else 1  # the real and imaginary words are separate elements
        addr, vals, span = self._elements(target, addresses, values, inner, w)
        if addr.shape[0] == 0:
            return
        tview, ctype = self._sum_view(target)
        vview, _ = self._sum_view(vals)
        self._scatter("add", tview, addr, vview, ctype, span * w, _word_hint(hint, w), replace)

    def scatter_set(self, target, addresses, values, inner, *, hint=None):
        """target[addresses[i] + inner[c]] = values[i, c]; the last writer in order wins. In place; sync-free.

        Element addresses are stably sorted, and only the last element of each
        run of equal addresses writes (deterministic overlap rule, SPEC 5).
        ``hint`` as in :meth:`scatter_add`; 'distinct' writes directly.
        """
        w = 2 if target.dtype.itemsize == 16 else 1
        addr, vals, span = self._elements(target, addresses, values, inner, w)
        if addr.shape[0] == 0:
            return
        tview, ctype = self._words(target)
        vview, _ = self._words(vals)
        self._scatter("set", tview, addr, vview, ctype, span * w, _word_hint(hint, w))

    def _view_params(self, sizes, strides, src_strides):
        """By-value (sizes, strides, src_strides), d, element count, host sizes, (threads, lanes), rows."""
        sizes = np.asarray(sizes, dtype=np.int64).reshape(-1)
        d = sizes.shape[0]
        total = int(np.prod(sizes)) if d else 1
        n_last = int(sizes[-1]) if d else 1
        rows = total // n_last if n_last else 0
        lanes = view_lanes(n_last)
        nthreads = rows * (-(-n_last // (VIEW_CHUNK * lanes))) * lanes
        return ((self.dims(sizes, "view sizes"), self.dims(strides, "view strides"),
                 self.dims(src_strides, "view src_strides")), d, total, sizes, (nthreads, lanes), rows)

    def _check_view(self, out, src, src_base, offset, sizes, strides, src_strides):
        """``validate`` only: the view's extreme addresses lie inside ``out`` and ``src``."""
        if not self._validate:
            return
        for base, st, buf, what in ((offset, strides, out, "output"), (src_base, src_strides, src, "source")):
            st = np.asarray(st, np.int64).reshape(-1)
            lo = base + sum(int((n - 1) * s) for n, s in zip(sizes, st) if s < 0)
            hi = base + sum(int((n - 1) * s) for n, s in zip(sizes, st) if s > 0)
            if lo < 0 or hi >= buf.size:
                raise IndexError(f"strided view reaches {what} elements {lo}..{hi}, outside [0, {buf.size})")

    def strided_scatter_sorted(self, out, inp, src, src_base, offset, sizes, strides, src_strides, copy):
        """out = inp (when ``copy``), then out[offset + i.strides] = src[src_base + i.src_strides]. Sync-free.

        For views whose addresses strictly increase in C order (the row's
        contract); sizes and strides are host values, passed by value. With
        ``copy`` and gaps between consecutive addresses of at most
        ``FILL_MAX_GAP`` elements (computed from the host metadata), one fused
        pass writes every output element once (``coo_scatter_view_fill``: each
        view element also copies the input gap after it; head and tail are
        plain copies). Otherwise the copy, then the view kernel. A group of
        ``view_lanes`` threads shares a chunk of ``VIEW_CHUNK`` elements each
        of the last dimension, interleaved (lane j: elements j, j + lanes, ...),
        so a warp's accesses are runs of consecutive elements.
        """
        params, d, total, sz, (nthreads, lanes), rows = self._view_params(sizes, strides, src_strides)
        if total == 0:
            if copy and out.size:
                out[...] = inp
            return
        self._check_view(out, src, int(src_base), int(offset), sz, strides, src_strides)
        st = [int(x) for x in np.asarray(strides, np.int64).reshape(-1)]
        offset, src_base = int(offset), int(src_base)
        last = offset + sum((int(n) - 1) * s for n, s in zip(sz, st))
        oview, ctype = self._words(out)
        sview, _ = self._words(src)
        w = 2 if out.dtype.itemsize == 16 else 1
        if copy and _max_gap(sz, st) <= FILL_MAX_GAP:
            iview, _ = self._words(inp)
            if offset:
                oview[: offset * w] = iview[: offset * w]
            if (last + 1) * w < oview.size:
                oview[(last + 1) * w:] = iview[(last + 1) * w:]
            self._run(f"coo_scatter_view_fill<{ctype}>", nthreads, oview, iview, sview, *params, i64(d),
                      i64(offset), i64(src_base), i64(nthreads), i64(lanes), i64(rows), i64(w))
            return
        if copy and out.size:
            out[...] = inp
        self._run(f"coo_scatter_view_set<{ctype}>", nthreads, oview, sview, *params, i64(d),
                  i64(offset), i64(src_base), i64(nthreads), i64(lanes), i64(w))

    def strided_scatter_ordered(self, out, src, src_base, offset, sizes, strides, src_strides):
        """out[offset + i.strides] = src[src_base + i.src_strides], i in C order, last writer wins. Sync-free.

        Addresses of the (possibly overlapping) view are stably sorted and only
        the last element of each run of equal addresses writes.
        """
        xp = self.xp
        params, d, total, sz, (nthreads, lanes), _ = self._view_params(sizes, strides, src_strides)
        if total == 0:
            return
        self._check_view(out, src, int(src_base), int(offset), sz, strides, src_strides)
        out_addr = xp.empty(total, dtype=np.int64)
        src_addr = xp.empty(total, dtype=np.int64)
        self._run("coo_scatter_view_addresses", nthreads, *params, i64(d), i64(offset), i64(src_base),
                  i64(nthreads), i64(lanes), out_addr, src_addr)
        vals = self.gather_strided(src, src_addr, np.zeros(1, dtype=np.int64)).reshape(-1)
        tview, ctype = self._words(out)
        vview, _ = self._words(vals)
        if out.dtype.itemsize == 16:
            out_addr = (out_addr[:, None] * 2 + xp.arange(2, dtype=np.int64)[None, :]).reshape(-1)
        self._scatter("set", tview, out_addr, vview, ctype, tview.size, None)
