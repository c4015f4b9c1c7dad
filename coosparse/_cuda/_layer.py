"""The CUDA kernel layer, written once: the kernel API over ``xp`` + a launcher.

:class:`CudaLayer` implements every row of ``coosparse/_kernel_api.py`` with
array-namespace calls (``xp``: CuPy on a GPU, NumPy in emulation) and raw
kernel launches (``launch(kernel, nthreads, args)``: ``cupy.RawModule`` on a
GPU, the host-compiled ``.cu`` files in emulation). ``coosparse._cuda.backend``
and ``coosparse._cuda.emulated`` only bind those two things; nothing here
depends on which one runs.

Launch conventions: 1-D grids, one thread per output element (the
thread mapping of each kernel is commented in its ``.cu`` file); arguments are
arrays (passed as device pointers) and ``numpy.int64`` scalars (``long long``).

Sort and scan are the namespace's own primitives: ``stable_argsort``
(CuPy's thrust-backed stable argsort on a GPU, ``numpy.argsort(kind='stable')``
in emulation; both give the unique stable permutation, so results agree with
the Numba radix sort) and ``xp.cumsum``.

Synchronisation: only lines marked ``# synchronize!`` copy device data to the
host; on a GPU everything else is queued on the current stream.
"""
from __future__ import annotations

import numpy as np

from ..cuda_kernels import ADD_TYPES, SUM_TYPES, WORD_TYPES  # noqa: F401 (documented pairing)

_i64 = np.int64

# element width in bytes -> C type of a bit copy
_WORD = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_FLOAT_C = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


class CudaLayer:
    """Kernel API over ``xp`` and ``launch``.

    Parameters
    ----------
    name : str
        Backend name ('cuda' or 'cuda-emulated').
    xp : module
        Array namespace (``cupy`` or ``numpy``).
    launch : callable
        ``launch(kernel_name_expression, nthreads, args)`` runs the kernel on
        a 1-D grid covering ``nthreads`` threads, in stream order.
    stable_argsort : callable
        ``stable_argsort(keys) -> int64 permutation`` (stable).
    validate : bool
        Check index bounds on the host before launching (emulation: a bad
        index raises ``IndexError`` instead of corrupting the interpreter's
        memory). Off on a GPU, where the check would synchronise; the public
        functions validate their inputs there.
    """

    def __init__(self, name, xp, launch, stable_argsort, validate):
        self.name = name
        self.xp = xp
        self._launch = launch
        self._argsort = stable_argsort
        self._validate = validate

    # ------------------------------------------------------------------ helpers
    def _run(self, kernel, nthreads, *args):
        if nthreads > 0:
            self._launch(kernel, int(nthreads), args)

    def _c(self, a, dtype=None):
        """C-contiguous array (of ``dtype`` when given)."""
        return self.xp.ascontiguousarray(a, dtype=dtype)

    def _check_range(self, a, lo, hi, what):
        """Emulation only: every element of ``a`` in [lo, hi), else IndexError."""
        if not self._validate or a.size == 0:
            return
        mn, mx = int(a.min()), int(a.max())
        if mn < lo or mx >= hi:
            bad = int(((a < lo) | (a >= hi)).argmax())
            raise IndexError(
                f"{what}: value {int(a.reshape(-1)[bad])} at position {bad} is outside [{lo}, {hi})"
            )

    @staticmethod
    def _words(a):
        """View of C-contiguous 2-D ``a`` as unsigned words: (array, C type); 16-byte items split in two."""
        size = a.dtype.itemsize
        if size == 16:
            return a.view(np.uint64), _WORD[8]
        if size not in _WORD:
            raise TypeError(f"unsupported element width {size} for dtype {a.dtype}")
        return a.view(_UINT[size]), _WORD[size]

    @staticmethod
    def _sum_view(a):
        """View of C-contiguous ``a`` in a summable kernel type: (array, C type)."""
        dt = a.dtype
        if dt.kind == "c":
            return a.view(np.float32 if dt == np.complex64 else np.float64), None
        if dt.kind in "iu":
            return a.view(_UINT[dt.itemsize]), _WORD[dt.itemsize]
        if dt in _FLOAT_C:
            return a, _FLOAT_C[dt]
        raise TypeError(f"the CUDA kernels do not sum dtype {dt}; widen it first")

    # ------------------------------------------------------------------ linear index
    def linear_index(self, indices, strides):
        """keys[i] = sum_d indices[d, i] * strides[d] (caller guarantees no overflow). Sync-free."""
        xp = self.xp
        indices = self._c(indices, np.int64)
        strides = self._c(strides, np.int64)
        ndim, n = indices.shape
        keys = xp.empty(n, dtype=np.int64)
        if ndim == 0:
            keys[...] = 0
            return keys
        self._run("coo_linear_index_compute", n, indices, strides, _i64(ndim), _i64(n), keys)
        return keys

    def unravel_index(self, keys, strides):
        """Inverse of :meth:`linear_index`: int64[ndim, n]. Sync-free."""
        keys = self._c(keys, np.int64)
        strides = self._c(strides, np.int64)
        ndim, n = strides.shape[0], keys.shape[0]
        out = self.xp.empty((ndim, n), dtype=np.int64)
        if ndim:
            self._run("coo_linear_index_unravel", n, keys, strides, _i64(ndim), _i64(n), out)
        return out

    # ------------------------------------------------------------------ sort and segments
    def sort_pairs(self, keys, bound):
        """Stable sort: (sorted_keys, perm) with sorted_keys = keys[perm]. Sync-free."""
        keys = self._c(keys, np.int64)
        perm = self._argsort(keys).astype(np.int64, copy=False)
        return keys[perm], perm

    def segment_starts(self, sorted_keys):
        """Run heads of sorted keys plus n: int64[nseg + 1]. Synchronises (nseg sizes the output)."""
        xp = self.xp
        sorted_keys = self._c(sorted_keys, np.int64)
        n = sorted_keys.shape[0]
        if n == 0:
            return xp.zeros(1, dtype=np.int64)
        flags = xp.empty(n, dtype=np.int64)
        self._run("coo_segment_starts_flag", n, sorted_keys, _i64(n), flags)
        pos = xp.cumsum(flags)
        nseg = int(pos[-1])  # synchronize!
        starts = xp.empty(nseg + 1, dtype=np.int64)
        self._run("coo_segment_starts_write", n, sorted_keys, pos, _i64(n), _i64(nseg), starts)
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
        if ctype is None:  # complex: interleaved (re, im) columns
            ctype = "float" if view.dtype == np.float32 else "double"
        k = view.shape[1]
        if self._validate:
            self._check_range(starts, 0, n + 1, "segment_sum starts")
            if bool((starts[1:] <= starts[:-1]).any()):
                raise ValueError("segment_sum: starts must be strictly increasing")
        if perm is None:
            perm_arr, has_perm = xp.empty(0, dtype=np.int64), 0
        else:
            perm_arr, has_perm = self._c(perm, np.int64), 1
            self._check_range(perm_arr, 0, n, "segment_sum perm")
        self._run(
            f"coo_segment_sum_reduce<{ctype}>", nseg * k,
            view, perm_arr, _i64(has_perm), starts, _i64(nseg), _i64(k), oview,
        )
        return out

    def gather_rows(self, values, rows):
        """values[rows] for 2-D values (a bit copy, any dtype). Sync-free."""
        xp = self.xp
        values = self._c(values)
        rows = self._c(rows, np.int64)
        m = rows.shape[0]
        out = xp.empty((m, values.shape[1]), dtype=values.dtype)
        if m == 0 or values.shape[1] == 0:
            return out
        self._check_range(rows, 0, values.shape[0], "gather_rows rows")
        view, ctype = self._words(values)
        oview, _ = self._words(out)
        k = view.shape[1]
        self._run(f"coo_gather_rows_copy<{ctype}>", m * k, view, rows, _i64(m), _i64(k), oview)
        return out

    # ------------------------------------------------------------------ strided scatter
    def _elements(self, target, addresses, values, inner):
        """Flattened element addresses and values (i-major, as the sequential loop visits them)."""
        xp = self.xp
        if target.ndim != 1:
            raise ValueError(f"scatter target must be 1-D; got shape {target.shape}")
        if target.size > 1 and target.strides[0] != target.itemsize:
            raise ValueError("scatter target must have unit element stride (a flat view)")
        addresses = self._c(addresses, np.int64)
        inner = self._c(inner, np.int64)
        n, k = addresses.shape[0], inner.shape[0]
        values = xp.asarray(values)
        if values.shape != (n, k):
            raise ValueError(f"scatter values must have shape ({n}, {k}); got {values.shape}")
        addr = (addresses[:, None] + inner[None, :]).reshape(-1)
        self._check_range(addr, 0, target.size, "scatter address")
        vals = self._c(values.astype(target.dtype, copy=False)).reshape(-1)
        return addr, vals

    def _scatter(self, kind, target, addr, vals, ctype):
        perm = self._c(self._argsort(addr), np.int64)
        saddr = addr[perm]
        self._run(f"coo_scatter_{kind}_runs<{ctype}>", addr.shape[0], target, saddr, perm, vals, _i64(addr.shape[0]))

    def scatter_add(self, target, addresses, values, inner):
        """target[addresses[i] + inner[c]] += values[i, c], in order of i. In place; sync-free.

        Element addresses are stably sorted, and one thread sums each run of
        equal addresses in original order onto the old value (no atomics).
        """
        addr, vals = self._elements(target, addresses, values, inner)
        if addr.shape[0] == 0:
            return
        tview, ctype = self._sum_view(target)
        vview, _ = self._sum_view(vals)
        if ctype is None:  # complex: the real and imaginary words are separate elements
            ctype = "float" if tview.dtype == np.float32 else "double"
            addr = (addr[:, None] * 2 + self.xp.arange(2, dtype=np.int64)[None, :]).reshape(-1)
        self._scatter("add", tview, addr, vview, ctype)

    def scatter_set(self, target, addresses, values, inner):
        """target[addresses[i] + inner[c]] = values[i, c]; the last writer in order wins. In place; sync-free.

        Element addresses are stably sorted, and only the last element of each
        run of equal addresses writes (deterministic overlap rule, SPEC 5).
        """
        addr, vals = self._elements(target, addresses, values, inner)
        if addr.shape[0] == 0:
            return
        tview, ctype = self._words(target)
        vview, _ = self._words(vals)
        if target.dtype.itemsize == 16:
            addr = (addr[:, None] * 2 + self.xp.arange(2, dtype=np.int64)[None, :]).reshape(-1)
        self._scatter("set", tview, addr, vview, ctype)

    # ------------------------------------------------------------------ binding
    def bind(self, namespace, names):
        """Put the layer's functions named ``names`` into module dict ``namespace``."""
        namespace["name"] = self.name
        namespace["xp"] = self.xp
        for n in names:
            namespace[n] = getattr(self, n)
