"""CUDA rows of the reduce family: ordered segment products, min/max and arg-extremes; reductions by key.

Kernels: ``cuda_kernels/reduce.cu``. Conventions: ``base.py``.
"""
from __future__ import annotations

import numpy as np

from .base import i64

TREE_LEAF = 256
"""Entries of a piece of the blocked order (``COO_TREE_LEAF`` in reduce.cu; numba/reduce.py: ``TREE_LEAF``)."""
TREE_FAN = 32
"""Values per group at the levels above the pieces (``COO_TREE_FAN``)."""
_OPS = {"sum": "coo_op_sum", "prod": "coo_op_prod", "max": "coo_op_max", "min": "coo_op_min"}


class ReduceRows:
    """The reduce rows of :class:`~coosparse._kernels.cuda.layer.CudaLayer` (helpers: ``base.LayerBase``)."""

    _ORDER_C = {np.dtype(np.int64): "long long", np.dtype(np.float32): "float", np.dtype(np.float64): "double"}

    def _segment_args(self, values, perm, starts, what):
        """C-contiguous (values, starts, perm or None) of a segment kernel; bounds checked when validating.

        Without validation (the GPU's way) the kernels check the segments and
        the perm entries themselves and report through the error word.
        """
        values = self._c(values)
        if values.ndim != 2:
            raise ValueError(f"{what} expects 2-D values; got shape {values.shape}")
        starts = self._c(starts, np.int64)
        n = values.shape[0]
        if self._validate:
            self._check_range(starts, 0, n + 1, f"{what} starts")
            h = np.asarray(self._peek(starts))
            if bool((h[1:] <= h[:-1]).any()):
                raise ValueError(f"{what}: starts must be strictly increasing")
        if perm is None:
            return values, starts, None
        perm = self._c(perm, np.int64)
        self._check_range(perm, 0, n, f"{what} perm")
        return values, starts, perm

    def _order_view(self, a, what):
        ctype = self._ORDER_C.get(a.dtype)
        if ctype is None:
            raise TypeError(f"{what} runs on int64, float32 and float64; got {a.dtype}")
        return ctype

    def segment_prod(self, values, perm, starts):
        """out[s] = product of values[perm[starts[s]:starts[s+1]]] in that order (perm None: identity). Sync-free.

        One thread per (segment, column) multiplies sequentially, as the Numba
        layer. A bad segment (outside [0, n] or empty) gives 0 and a bad perm
        entry is skipped; both are reported through the error word.
        """
        values, starts, perm = self._segment_args(values, perm, starts, "segment_prod")
        n, nseg, k = values.shape[0], starts.shape[0] - 1, values.shape[1]
        out = self.xp.empty((nseg, k), dtype=values.dtype)
        if nseg <= 0 or k == 0:
            return out
        view, ctype = self._product_view(values)
        oview, _ = self._product_view(out)
        self._run(f"coo_reduce_segment_prod<{ctype}>", nseg * k,
                  view, i64(n), perm, i64(perm is not None), starts, i64(nseg), i64(k), oview, self._err())
        return out

    def segment_minmax(self, values, perm, starts, is_max):
        """out[s] = max (``is_max``) or min of segment s in perm order; the first NaN wins. Sync-free.

        Bad segments and perm entries as in :meth:`segment_prod`.
        """
        values, starts, perm = self._segment_args(values, perm, starts, "segment_minmax")
        ctype = self._order_view(values, "segment_minmax")
        n, nseg, k = values.shape[0], starts.shape[0] - 1, values.shape[1]
        out = self.xp.empty((nseg, k), dtype=values.dtype)
        if nseg <= 0 or k == 0:
            return out
        self._run(f"coo_reduce_segment_minmax<{ctype}>", nseg * k,
                  values, i64(n), perm, i64(perm is not None), starts, i64(nseg), i64(k), i64(bool(is_max)),
                  out, self._err())
        return out

    def segment_arg(self, values, perm, starts, sub, is_max):
        """(best, pos, gap) per segment (kernel API row ``segment_arg``). Sync-free.

        A segment of at most ``TREE_LEAF`` entries: one thread per (segment,
        column), left to right; the column-0 thread also finds the gap. A longer
        one: one thread per piece and the tree of :meth:`segment_reduce` (which
        entry is the extreme, and the first missing sub, do not depend on the
        grouping: the same results). With no columns the gap is not needed by
        any caller and is returned as zeros. Bad segments and perm entries as
        in :meth:`segment_prod`.
        """
        xp = self.xp
        values, starts, perm = self._segment_args(values, perm, starts, "segment_arg")
        ctype = self._order_view(values, "segment_arg")
        sub = self._c(sub, np.int64)
        if sub.shape[0] != values.shape[0]:
            raise ValueError(f"segment_arg: sub has {sub.shape[0]} entries for {values.shape[0]} values")
        n, nseg, k = values.shape[0], starts.shape[0] - 1, values.shape[1]
        best = xp.empty((nseg, k), dtype=values.dtype)
        pos = xp.empty((nseg, k), dtype=np.int64)
        if nseg <= 0 or k == 0:
            return best, pos, xp.zeros(max(nseg, 0), dtype=np.int64)
        gap = xp.empty(nseg, dtype=np.int64)
        self._run(f"coo_reduce_segment_arg<{ctype}>", nseg * k,
                  values, i64(n), perm, i64(perm is not None), starts, sub, i64(nseg), i64(k),
                  i64(bool(is_max)), i64(TREE_LEAF if n > TREE_LEAF else n), best, pos, gap, self._err())
        if n <= TREE_LEAF:
            return best, pos, gap
        piece_end, node_end, max_pieces, max_nodes = self._tree_plan(starts, n, nseg)
        op = "coo_op_max" if is_max else "coo_op_min"
        self._run(f"coo_reduce_arg_tree<{op}<{ctype}> >", max_pieces * k, values, i64(n), perm,
                  i64(perm is not None), starts, sub, i64(nseg), i64(k), piece_end, node_end,
                  xp.empty((max_nodes, k), dtype=values.dtype), xp.empty((max_nodes, k), dtype=np.int64),
                  xp.empty(max_nodes, dtype=np.int64), xp.zeros((max_nodes, k), dtype=np.uint32),
                  best, pos, gap, self._err())
        return best, pos, gap

    def _tree_plan(self, starts, n, nseg):
        """(piece_end, node_end, max_pieces, max_nodes) of the long segments (``coo_reduce_tree_plan``).

        The bounds are known on the host: a long segment of L entries has
        ceil(L / LEAF) <= 2 floor(L / LEAF) pieces and at most 2 ceil(L / LEAF) + 1
        <= 5 floor(L / LEAF) nodes (each level above the pieces at most halves),
        so all segments together fit in these, whatever their lengths.
        """
        xp = self.xp
        pieces = xp.empty(nseg, dtype=np.int64)
        nodes = xp.empty(nseg, dtype=np.int64)
        self._run("coo_reduce_tree_plan", nseg, starts, i64(nseg), i64(n), pieces, nodes)
        return xp.cumsum(pieces), xp.cumsum(nodes), 2 * (n // TREE_LEAF) + 1, (5 * n) // TREE_LEAF + 1

    def _tree_view(self, a, op):
        """``a`` in the kernel type of reduction ``op``: (array, C type)."""
        if op == "sum":
            return self._sum_view(a)
        if op == "prod":
            return self._product_view(a)
        return a, self._order_view(a, f"segment_reduce({op!r})")

    def segment_reduce(self, values, perm, starts, op):
        """out[s] = segment s of ``values[perm]`` reduced by ``op`` in the blocked order. Sync-free.

        ``op``: 'sum' (int64 modular, float32/64, complex as float pairs),
        'prod' (int64, float32/64, complex64/128), 'max'/'min' (int64,
        float32/64; the first NaN in perm order wins). A segment of at most
        ``TREE_LEAF`` entries is reduced left to right by one thread; a longer
        one as the fixed tree of reduce.cu (pieces of ``TREE_LEAF``, groups of
        ``TREE_FAN``): one thread per piece, the last of each group to finish
        reducing the group. The Numba layer computes the same tree. Bad
        segments and perm entries as in :meth:`segment_prod`.
        """
        if op not in _OPS:
            raise ValueError(f"unknown reduction {op!r}; expected 'sum', 'prod', 'max' or 'min'")
        xp = self.xp
        values, starts, perm = self._segment_args(values, perm, starts, "segment_reduce")
        n, nseg, k = values.shape[0], starts.shape[0] - 1, values.shape[1]
        out = xp.empty((nseg, k), dtype=values.dtype)
        if nseg <= 0 or k == 0:
            return out
        view, ctype = self._tree_view(values, op)
        oview, _ = self._tree_view(out, op)
        kk = view.shape[1]  # (complex sums: two float columns per value)
        args = (view, i64(n), perm, i64(perm is not None), starts, i64(nseg), i64(kk))
        kernel = f"{_OPS[op]}<{ctype}> >"
        self._run("coo_reduce_short<" + kernel, nseg * kk, *args, oview, self._err())
        if n <= TREE_LEAF:  # no segment can be longer than one piece
            return out
        piece_end, node_end, max_pieces, max_nodes = self._tree_plan(starts, n, nseg)
        partial = xp.empty((max_nodes, kk), dtype=view.dtype)
        arrived = xp.zeros((max_nodes, kk), dtype=np.uint32)
        self._run("coo_reduce_tree<" + kernel, max_pieces * kk, *args, piece_end, node_end, partial, arrived,
                  oview, self._err())
        return out

    def _segment_op(self, values, perm, starts, op):
        if op not in _OPS:
            raise ValueError(f"unknown reduction {op!r}; expected 'sum', 'prod', 'max' or 'min'")
        return self.segment_reduce(values, perm, starts, op)

    def reduce_sorted(self, sorted_keys, values, op):
        """(starts, out): run heads of sorted keys and each run reduced in order. Synchronises (m).

        Composed of ``segment_starts`` and :meth:`segment_reduce` (the blocked
        order), so the results are bit-identical to the Numba layer's fused kernel. Keys out
        of order (flags that lie) are reported at the size read.
        """
        if op not in ("sum", "prod", "max", "min"):
            raise ValueError(f"unknown reduction {op!r}; expected 'sum', 'prod', 'max' or 'min'")
        sorted_keys = self._c(sorted_keys, np.int64)
        self._check_sorted(sorted_keys, strict=False)
        starts = self.segment_starts(sorted_keys)  # synchronize! (the number of runs)
        return starts, self._segment_op(values, None, starts, op)

    def reduce_by_key(self, keys, values, bound, op, is_sorted):
        """(counts[bound], out[bound, k]): each key's entries reduced in stored order. Synchronises once.

        No float atomics: a stable sort of the keys (none when ``is_sorted``; the
        order is then checked and a lie reported), :meth:`segment_reduce`,
        and a scatter of the per-key results into zeros (``scatter_set`` over
        distinct keys: a key outside [0, bound) is skipped and reported); the
        same sequence as the Numba layer's accumulator.
        """
        if op not in ("sum", "prod", "max", "min"):
            raise ValueError(f"unknown reduction {op!r}; expected 'sum', 'prod', 'max' or 'min'")
        xp = self.xp
        values = self._c(values)
        bound, k = int(bound), values.shape[1]
        keys = self._c(keys, np.int64)
        if is_sorted:
            self._check_sorted(keys, strict=False)  # lying flags: reported at the size read below
            sorted_keys, perm = keys, None
        else:
            sorted_keys, perm = self.sort_pairs(keys, bound)
        starts = self.segment_starts(sorted_keys)  # synchronize! (the number of keys present)
        seg = self._segment_op(values, perm, starts, op)
        heads = sorted_keys[starts[:-1]]
        counts = xp.zeros(bound, dtype=np.int64)
        out = xp.zeros((bound, k), dtype=values.dtype)
        self.scatter_set(counts, heads, (starts[1:] - starts[:-1]).reshape(-1, 1), np.zeros(1, np.int64),
                         hint="distinct")
        self.scatter_set(out.reshape(-1), heads * k, seg, np.arange(k, dtype=np.int64), hint="distinct")
        return counts, out
