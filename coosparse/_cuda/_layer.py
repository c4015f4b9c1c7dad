"""The CUDA kernel layer, written once: the kernel API over ``xp`` + a launcher.

:class:`CudaLayer` implements every row of ``coosparse/_kernel_api.py`` with
array-namespace calls (``xp``: CuPy on a GPU, the emulated device of
:mod:`coosparse._cuda.strict` in the test suite) and raw kernel launches
(``launch(kernel, nthreads, args)``: kernels compiled by NVRTC on a GPU, the
host-compiled ``.cu`` files in emulation). ``coosparse._cuda.backend`` and
``coosparse._cuda.emulated`` only bind those two things; nothing here depends
on which one runs.

Conventions for a new row (docs/cuda.md, "Adding a kernel")
-----------------------------------------------------------
1. **Launch**: ``self._run("coo_<file>_<phase><T>", nthreads, *args)`` on a
   1-D grid, one thread per output element (or per chunk: say so in the
   ``.cu`` file). Each argument is one of

   - a device array, C-contiguous, of the pointee's size and kind (a
     ``const T*`` / ``T*`` parameter); ``None`` for a null pointer;
   - ``_i64(x)`` for a ``long long`` (``i64``) parameter: no other scalar type;
   - ``self.dims(values)`` for a ``coo_dims`` parameter: up to 64 int64 host
     values (strides, sizes, offsets) passed **by value** in the launch;
   - ``self._err()`` for the ``u64* err`` error word.

   The emulated launcher checks every argument against the kernel's C
   signature, so a wrong type fails in CI, not on a GPU.
2. **Small parameters travel by value.** Strides, sizes, view parameters and
   dense-block offsets are host metadata: layer rows take them as host
   sequences or NumPy arrays and pass them with ``self.dims``; never
   ``xp.asarray(numpy_array)`` (a host-to-device copy: CUDA-graph capture
   refuses it). A device array given for such a parameter raises TypeError.
3. **Outputs** are ``xp.empty`` and every element is written by a kernel
   (the emulated device poisons fresh memory, so a missed element shows);
   ``xp.zeros`` only where zeros are the answer.
4. **Memory safety**: a kernel never reads or writes out of bounds, whatever
   the input (check=False COOs, lying flags). Guard every load through a
   data-dependent index (``coo_in_range``), write a zero or skip, and report
   with ``coo_report(err, COO_ERR_*)`` (:mod:`coosparse._cuda.errors`).
5. **Synchronisation**: only lines marked ``# synchronize!`` read device data
   on the host; a row that must (an output size) reads through
   ``self._sync_size(x)``, which also checks the error word in the same copy.
   Everything else only queues work: no ``int()``/``bool()``/``.get()``.
6. **Devices**: on a GPU every row runs under the device of its array
   arguments (``backend.py`` binds the rows with a device guard); allocate
   with ``xp`` inside the row, never at import.
7. **Strict emulation**: ``xp`` in the test suite is the emulated device, which
   has only CuPy's API (names, keywords, ``flags``), refuses NumPy arrays as
   operands and counts transfers; ``tests/test_cuda_strict.py`` asserts that
   every sync-free row and operation makes none.

Sort and scan are the namespace's own primitives: an in-place sort of keys
packed with their positions (CUB radix sort through CuPy on a GPU; unique
words, so the order is the stable one whatever the algorithm), or, when key
and position bits exceed 63, ``stable_argsort`` (CuPy's thrust stable
argsort, NumPy's stable argsort in emulation); and ``xp.cumsum``. Either way
the permutation is the unique stable one, as the Numba radix sort's.
"""
from __future__ import annotations

import numpy as np

from .._backend import is_device_array
from .._bounds import first_out_of_bounds, raise_out_of_bounds, row_major_sizes, run_offsets, size_limits
from . import errors

_i64 = np.int64

# element width in bytes -> C type of a bit copy
_WORD = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_FLOAT_C = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}

MAX_DIMS = 64
"""Capacity of a ``coo_dims`` by-value argument (``COO_MAX_DIMS`` in coo_common.cuh)."""
DIMS_DTYPE = np.dtype([("v", np.int64, (MAX_DIMS,))])
"""NumPy layout of ``struct coo_dims``: CuPy passes a size-1 array of it by value."""

FILL_MAX_GAP = 64
"""Largest gap (elements) between consecutive view addresses copied by one thread in the fused path."""

VIEW_CHUNK = 8
"""Elements of the view's last dimension per thread in the view kernels (``COO_VIEW_CHUNK``)."""


def _max_gap(sizes, strides):
    """Largest address step between consecutive elements (C order) of an increasing view."""
    gap, inner_span = 1, 0
    for n, s in zip(reversed([int(x) for x in sizes]), reversed(strides)):
        if n > 1:
            gap = max(gap, s - inner_span)
        inner_span += (n - 1) * s
    return gap


def _sort_in_place(a):
    a.sort()  # cupy.ndarray.sort: in place (cupy.sort would copy first)
    return a


class CudaLayer:
    """Kernel API over ``xp`` and ``launch``.

    Parameters
    ----------
    name : str
        Backend name ('cuda' or 'cuda-emulated').
    xp : module
        Array namespace (``cupy``, or the emulated device's ``strict.xp``).
    launch : callable
        ``launch(kernel_name_expression, nthreads, args)`` runs the kernel on
        a 1-D grid covering ``nthreads`` threads, in stream order.
    stable_argsort : callable
        ``stable_argsort(keys) -> int64 permutation`` (stable).
    validate : bool
        Check index bounds on the host before launching (a bad index raises
        ``IndexError`` at once). Off on a GPU, where the check would
        synchronise, and by default in emulation, which then behaves as a GPU:
        the kernels are memory-safe and report through the error word.
    sort : callable, optional
        Keys-only sort of unique int64 words; may sort in place and must
        return the sorted array (default: ``a.sort()``, in place).
    peek : callable, optional
        Host view of a device array for ``validate`` (emulation: no transfer
        counted). Without it validation reads through ``.get()``.
    """

    def __init__(self, name, xp, launch, stable_argsort, validate, sort=None, peek=None):
        self._sort = sort or _sort_in_place
        self.name = name
        self.xp = xp
        self._launch = launch
        self._argsort = stable_argsort
        self._validate = validate
        self._peek = peek or (lambda a: a.get())
        self._err_words = {}  # device id -> uint64[1] error word

    # ------------------------------------------------------------------ helpers
    def _run(self, kernel, nthreads, *args):
        if nthreads > 0:
            self._launch(kernel, int(nthreads), args)

    def _c(self, a, dtype=None):
        """C-contiguous device array (of ``dtype`` when given)."""
        return self.xp.ascontiguousarray(a, dtype=dtype)

    @staticmethod
    def dims(values, what="parameter"):
        """``values`` (host ints, at most 64) as a by-value ``coo_dims`` kernel argument."""
        if is_device_array(values):
            raise TypeError(
                f"{what}: small parameters travel by value; pass them as host values (a tuple or a "
                "NumPy array), not as a device array (reading one back would synchronise)"
            )
        v = np.asarray(values, dtype=np.int64).reshape(-1)
        if v.shape[0] > MAX_DIMS:
            raise ValueError(f"{what}: {v.shape[0]} values; the CUDA kernels take at most {MAX_DIMS} dimensions")
        p = np.zeros(1, dtype=DIMS_DTYPE)
        p["v"][0, : v.shape[0]] = v
        return p

    def _device_id(self):
        return self.xp.cuda.runtime.getDevice()

    def _err(self):
        """The current device's error word (uint64[1]), allocated on first use."""
        dev = self._device_id()
        w = self._err_words.get(dev)
        if w is None:
            w = self.xp.zeros(1, dtype=np.uint64)
            self._err_words[dev] = w
        return w

    def _sync_size(self, x):
        """``int(x)`` of a device scalar, and the error word checked in the same copy. Synchronises."""
        xp = self.xp
        buf = xp.empty(2, dtype=np.int64)
        buf[0] = x
        buf[1:] = self._err().view(np.int64)
        size, code = (int(v) for v in buf.get())  # synchronize!
        if code:
            self._err()[...] = 0
            raise errors.device_error(code)
        return size

    def raise_errors(self, all_devices=False):
        """Raise (and clear) what the kernels reported since the last check. Synchronises."""
        words = dict(self._err_words) if all_devices else {self._device_id(): self._err_words.get(self._device_id())}
        for dev, w in words.items():
            if w is None:
                continue
            with self.xp.cuda.Device(dev):
                code = int(w.get()[0])  # synchronize!
                if code:
                    w[...] = 0
                    raise errors.device_error(code)

    def _check_range(self, a, lo, hi, what):
        """``validate`` only: every element of ``a`` in [lo, hi), else IndexError."""
        if not self._validate or a.size == 0:
            return
        h = np.asarray(self._peek(a))
        mn, mx = int(h.min()), int(h.max())
        if mn < lo or mx >= hi:
            bad = int(((h < lo) | (h >= hi)).argmax())
            raise IndexError(
                f"{what}: value {int(h.reshape(-1)[bad])} at position {bad} is outside [{lo}, {hi})"
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
        """View of C-contiguous ``a`` in a summable kernel type: (array, C type).

        Complex values are summed componentwise: the view interleaves (re, im)
        as separate float/double elements.
        """
        dt = a.dtype
        if dt.kind == "c":
            return (a.view(np.float32), "float") if dt == np.complex64 else (a.view(np.float64), "double")
        if dt.kind in "iu":
            return a.view(_UINT[dt.itemsize]), _WORD[dt.itemsize]
        if dt in _FLOAT_C:
            return a, _FLOAT_C[dt]
        raise TypeError(f"the CUDA kernels do not sum dtype {dt}; widen it first")

    def _inner(self, inner, w=1):
        """Dense-block offsets (host) for a kernel: (device array or None, by-value dims, k words, lo, hi).

        ``w`` words per element turn element offsets into word offsets. Up to
        64 offsets travel by value; a larger block's offsets are uploaded
        (sync-free but not CUDA-graph capturable: docs/cuda.md).
        """
        if is_device_array(inner):
            raise TypeError(
                "inner (the dense block's offsets) is host metadata: pass a NumPy array, not a device "
                "array (its bounds are needed on the host, and small ones travel by value)"
            )
        inner = np.asarray(inner, dtype=np.int64).reshape(-1)
        lo = -min(int(inner.min()), 0) if inner.size else 0
        hi_pad = max(int(inner.max()), 0) if inner.size else 0
        if w > 1:
            inner = (inner[:, None] * w + np.arange(w, dtype=np.int64)[None, :]).reshape(-1)
        if inner.shape[0] <= MAX_DIMS:
            return None, self.dims(inner, "inner"), inner.shape[0], lo, hi_pad
        return self.xp.asarray(inner), self.dims((), "inner"), inner.shape[0], lo, hi_pad

    # ------------------------------------------------------------------ linear index
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
            self._run("coo_linear_index_compute", n, indices, st, _i64(ndim), _i64(n), keys)
            return keys
        if self._validate and n:
            host = np.asarray(self._peek(indices))
            if first_out_of_bounds(host, sizes) is not None:
                raise_out_of_bounds(host, tuple(sizes))
        # min(size, 2**63) as the bits of a u64 (the kernel compares unsigned)
        limits = self.dims(size_limits(sizes).view(np.int64), "linear_index sizes")
        self._run("coo_linear_index_checked", n, indices, st, limits, _i64(ndim), _i64(n), keys, self._err())
        return keys

    def unravel_index(self, keys, strides):
        """Inverse of :meth:`linear_index`: int64[ndim, n]; ``strides`` are host values. Sync-free."""
        keys = self._c(keys, np.int64)
        ndim, n = len(strides), keys.shape[0]
        st = self.dims(strides, "unravel_index strides")
        out = self.xp.empty((ndim, n), dtype=np.int64)
        if ndim:
            self._run("coo_linear_index_unravel", n, keys, st, _i64(ndim), _i64(n), out)
        return out

    # ------------------------------------------------------------------ sort and segments
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
            self._run("coo_sort_pack", n, keys, _i64(n), _i64(shift), _i64(bound), packed, self._err())
            packed = self._sort(packed)
            sorted_keys = xp.empty(n, dtype=np.int64)
            perm = xp.empty(n, dtype=np.int64)
            self._run("coo_sort_unpack", n, packed, _i64(n), _i64(shift), sorted_keys, perm)
            return sorted_keys, perm
        perm = self._c(self._argsort(keys), np.int64)
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
        nseg = self._sync_size(pos[-1])  # synchronize! (and the error word, in the same copy)
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
            view, _i64(n), perm_arr, _i64(perm is not None), starts, _i64(nseg), _i64(k), oview, self._err(),
        )
        return out

    def coalesce_linear(self, indices, strides, bound, values):
        """Distinct linear indices in increasing order (unravelled) and their ordered sums.

        Composed of this layer's own kernels (linear index, stable sort,
        segment heads, ordered segment sums, unravel), so the sums are
        bit-identical to the Numba layer's fused kernel. Synchronises once
        (segment_starts sizes the output).
        """
        keys = self.linear_index(indices, strides, row_major_sizes(strides, bound))  # bounds: reported
        sorted_keys, perm = self.sort_pairs(keys, bound)
        starts = self.segment_starts(sorted_keys)  # synchronize! (output size)
        sums = self.segment_sum(values, perm, starts)
        return self.unravel_index(sorted_keys[starts[:-1]], strides), sums

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
        self._run(f"{kernel}<{ctype}>", m * k, view, _i64(values.shape[0]), rows, _i64(m), _i64(k), oview,
                  self._err())
        return out

    # ------------------------------------------------------------------ strided scatter
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
        self._run("coo_scatter_elements", n * k * w, addresses, inner_dev, inner_val, _i64(n), _i64(k), _i64(w),
                  _i64(lo), _i64(span - hi_pad), _i64(span), addr, self._err())
        return addr, vals, span

    def _scatter(self, kind, target, addr, vals, ctype, limit, hint):
        n = addr.shape[0]
        if kind == "set" and hint == "distinct":
            self._run(f"coo_scatter_set_direct<{ctype}>", n, target, addr, vals, _i64(n), _i64(limit))
            return
        if hint in ("sorted", "distinct"):  # non-decreasing already: runs without a sort
            saddr, perm = addr, None
        else:
            saddr, perm = self.sort_pairs(addr, limit + 1)
        self._run(f"coo_scatter_{kind}_runs<{ctype}>", n, target, saddr, perm, _i64(perm is not None), vals,
                  _i64(n), _i64(limit))

    def scatter_add(self, target, addresses, values, inner, *, hint=None):
        """target[addresses[i] + inner[c]] += values[i, c], in order of i. In place; sync-free.

        Entries whose block would leave the target are skipped (memory safety)
        and reported through the error word. ``inner`` is host metadata.
        ``hint``: 'sorted' when the element addresses are non-decreasing in
        (i, c) order (a sorted COO into a C-ordered target), 'distinct' when
        no two coincide (a unique COO): the address sort is skipped.

        Element addresses are stably sorted, and one thread sums each run of
        equal addresses in original order onto the old value (no atomics).
        """
        w = 2 if target.dtype.kind == "c" else 1  # the real and imaginary words are separate elements
        addr, vals, span = self._elements(target, addresses, values, inner, w)
        if addr.shape[0] == 0:
            return
        tview, ctype = self._sum_view(target)
        vview, _ = self._sum_view(vals)
        self._scatter("add", tview, addr, vview, ctype, span * w, hint)

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
        self._scatter("set", tview, addr, vview, ctype, span * w, hint)

    def _check_sorted(self, keys, strict):
        """Report (COO_ERR_ORDER) keys that are not sorted (strictly: and unique) as a merge assumes. Sync-free."""
        n = keys.shape[0]
        if n > 1:
            self._run("coo_sort_check", n - 1, keys, _i64(n), _i64(bool(strict)), self._err())

    # ------------------------------------------------------------------ intersection family
    def _match(self, src_keys, probe_keys):
        xp = self.xp
        src_keys = self._c(src_keys, np.int64)
        probe_keys = self._c(probe_keys, np.int64)
        n, m = src_keys.shape[0], probe_keys.shape[0]
        if not m:
            return xp.zeros(n, dtype=np.int64), xp.zeros(n, dtype=np.int64)
        self._check_sorted(probe_keys, strict=False)  # lying flags: reported, results stay in bounds
        first = xp.empty(n, dtype=np.int64)
        count = xp.empty(n, dtype=np.int64)
        self._run("coo_intersect_match", n, src_keys, probe_keys, _i64(n), _i64(m), first, count)
        return first, count

    def match_merge(self, src_keys, probe_keys):
        """(first, count) of sorted ``src_keys`` in sorted ``probe_keys``. Sync-free.

        On the GPU a binary search per source entry (same answer as the merge:
        first = insertion point, count = number of equal probe keys, found by
        galloping).
        """
        return self._match(src_keys, probe_keys)

    def match_search(self, src_keys, probe_keys):
        """(first, count) of ``src_keys`` in any order in sorted ``probe_keys``: binary search. Sync-free."""
        return self._match(src_keys, probe_keys)

    def _compact(self, first, count):
        xp = self.xp
        first = self._c(first, np.int64)
        count = self._c(count, np.int64)
        n = count.shape[0]
        if n == 0:
            z = xp.zeros(0, dtype=np.int64)
            return z, z.copy(), z.copy()
        flags = xp.empty(n, dtype=np.int64)
        self._run("coo_intersect_flag", n, count, _i64(n), flags)
        pos = xp.cumsum(flags)
        m = self._sync_size(pos[-1])  # synchronize! (the number of matched rows sizes the output)
        rows = xp.empty(m, dtype=np.int64)
        first_out = xp.empty(m, dtype=np.int64)
        count_out = xp.empty(m, dtype=np.int64)
        self._run("coo_intersect_compact", n, first, count, pos, _i64(n), rows, first_out, count_out)
        return rows, first_out, count_out

    def compact_matches(self, first, count):
        """(rows, first[rows], count[rows]) for the ascending rows with count != 0. Synchronises (output size)."""
        return self._compact(first, count)

    def merge_matches(self, src_keys, probe_keys):
        """(rows, first, count) of the matched entries of sorted ``src_keys`` only. Synchronises (output size).

        On the GPU: the binary-search match, then one compaction.
        """
        first, count = self._match(src_keys, probe_keys)
        return self._compact(first, count)

    def merge_multiply(self, src_indices, src_values, probe_indices, probe_values, strides, *, sizes=None):
        """Compact product of a sorted source and a sorted probe: (indices, values). Synchronises (output size).

        Composed of this layer's kernels (linear index, merge_matches,
        gather_columns, multiply_matched), which is exactly the row's meaning,
        so results are bit-identical to the Numba layer's fused kernel.
        Indices outside ``sizes`` (host values; default: what the strides
        tell, the first dimension unbounded) are reported with the output size.
        """
        sizes = row_major_sizes(strides) if sizes is None else sizes
        rows, first, count = self.merge_matches(
            self.linear_index(src_indices, strides, sizes), self.linear_index(probe_indices, strides, sizes)
        )
        values = self.multiply_matched(src_values, rows, probe_values, None, first, count)
        return self.gather_columns(src_indices, rows), values

    def _product_view(self, a):
        """``a`` in the product kernel's type: (array, C type)."""
        dt = a.dtype
        if dt == np.complex64:
            return a, "coo_complex<float>"
        if dt == np.complex128:
            return a, "coo_complex<double>"
        if dt == np.int64:
            return a.view(np.uint64), "unsigned long long"
        if dt in _FLOAT_C:
            return a, _FLOAT_C[dt]
        raise TypeError(f"multiply_matched runs on int64, float32/64 and complex64/128; got {dt}")

    def multiply_matched(self, src_values, rows, probe_values, perm, first, count, *, shared_runs=False):
        """out[i] = src_values[rows[i] or i] * (ordered sum of the matched probe rows); 0 where count[i] == 0. Sync-free.

        One dtype throughout (int64 products wrap, complex products are
        (ac - bd) + i(ad + bc) with every operation rounded alone, as in NumPy).
        ``shared_runs`` (the source has duplicates): each probe run is summed
        once (:meth:`probe_sum`), then multiplied per row.
        """
        xp = self.xp
        src_values = self._c(src_values)
        probe_values = self._c(probe_values)
        if src_values.dtype != probe_values.dtype:
            raise TypeError(f"multiply_matched needs one dtype; got {src_values.dtype} and {probe_values.dtype}")
        first = self._c(first, np.int64)
        count = self._c(count, np.int64)
        m, k = first.shape[0], src_values.shape[1]
        out = xp.empty((m, k), dtype=src_values.dtype)
        if m == 0 or k == 0:
            return out
        sview, ctype = self._product_view(src_values)
        pview, _ = self._product_view(probe_values)
        oview, _ = self._product_view(out)
        rows_arr = None if rows is None else self._c(rows, np.int64)
        perm_arr = None if perm is None else self._c(perm, np.int64)
        if self._validate:
            self._check_probe_ranges(first, count, probe_values.shape[0], perm_arr)
            if rows_arr is not None:
                self._check_range(rows_arr, 0, src_values.shape[0], "multiply_matched rows")
        if shared_runs:
            sums, _ = self._product_view(self.probe_sum(probe_values, perm, first, count, shared_runs=True))
            self._run(f"coo_intersect_multiply_sums<{ctype}>", m * k, sview, _i64(src_values.shape[0]), rows_arr,
                      _i64(rows is not None), sums, count, _i64(m), _i64(k), oview, self._err())
            return out
        self._run(
            f"coo_intersect_multiply_matched<{ctype}>", m * k,
            sview, _i64(src_values.shape[0]), rows_arr, _i64(rows is not None),
            pview, _i64(probe_values.shape[0]), perm_arr, _i64(perm is not None),
            first, count, _i64(m), _i64(k), oview, self._err(),
        )
        return out

    def _check_probe_ranges(self, first, count, nprobe, perm_arr):
        f, c = np.asarray(self._peek(first)), np.asarray(self._peek(count))
        hit = c != 0
        if bool(hit.any()) and (int(f[hit].min()) < 0 or int((f + c)[hit].max()) > nprobe):
            raise IndexError("a matched range falls outside the probe")
        if perm_arr is not None:
            self._check_range(perm_arr, 0, nprobe, "probe perm")

    def probe_sum(self, values, perm, first, count, *, shared_runs=False):
        """out[i] = ordered sum of values[perm[first[i]:first[i]+count[i]]]; 0 where count[i] == 0. Sync-free.

        ``shared_runs``: rows repeat runs (a source with duplicates, so
        summing per row would add a run once per repeat: quadratic when both
        sides repeat). Then each run is claimed by one row, summed once by it,
        and copied to the others (``coo_intersect_claim_runs`` /
        ``copy_runs``): the same bits, linear work.
        """
        xp = self.xp
        values = self._c(values)
        first = self._c(first, np.int64)
        count = self._c(count, np.int64)
        m = first.shape[0]
        out = xp.empty((m, values.shape[1]), dtype=values.dtype)
        if m == 0 or values.shape[1] == 0:
            return out
        view, ctype = self._sum_view(values)
        oview, _ = self._sum_view(out)
        k = view.shape[1]
        perm_arr = None if perm is None else self._c(perm, np.int64)
        nprobe = values.shape[0]
        if self._validate:
            self._check_probe_ranges(first, count, nprobe, perm_arr)
        owner = None
        if shared_runs:
            owner = xp.empty(nprobe, dtype=np.int64)
            self._run("coo_intersect_claim_runs", m, first, count, _i64(m), _i64(nprobe), owner)
        self._run(
            f"coo_intersect_probe_sum<{ctype}>", m * k,
            view, _i64(nprobe), perm_arr, _i64(perm is not None), first, count, owner, _i64(m), _i64(k),
            oview, self._err(),
        )
        if shared_runs:
            words, wtype = self._words(out)
            kw = words.shape[1]
            self._run(f"coo_intersect_copy_runs<{wtype}>", m * kw, owner, first, count, _i64(m), _i64(kw),
                      _i64(nprobe), words)
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
            self._run("coo_intersect_gather_columns", d * m, indices, rows, _i64(d), _i64(n), _i64(m), out,
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
        self._run(f"coo_gather_strided<{ctype}>", n * kw, sview, _i64(sview.shape[0]), addresses, inner_dev,
                  inner_val, _i64(n), _i64(kw), oview, self._err())
        return out

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
        self._run("coo_union_rank", na, a_keys, b_keys, _i64(na), _i64(nb), lb, matched)
        common = xp.empty(na + 1, dtype=np.int64)
        common[0] = 0  # (a one-element fill: the scan writes the rest)
        if na:
            xp.cumsum(matched, out=common[1:])
        m = na + nb - self._sync_size(common[na])  # synchronize! (output size; error word in the same copy)
        a_pos = xp.empty(m, dtype=np.int64)
        b_pos = xp.empty(m, dtype=np.int64)
        err = self._err()
        self._run("coo_union_write_a", na, lb, matched, common, _i64(na), _i64(m), a_pos, b_pos, err)
        self._run("coo_union_write_b", nb, a_keys, b_keys, common, _i64(na), _i64(nb), _i64(m), a_pos, b_pos, err)
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
                      _i64(d), _i64(na), _i64(nb), _i64(m), out, self._err())
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
        self._run(f"coo_union_values<{ctype}>", m * k, av, bv, a_pos, b_pos, _i64(bool(negate)),
                  _i64(a_values.shape[0]), _i64(b_values.shape[0]), _i64(m), _i64(k), ov, self._err())
        return out

    def merge_add(self, a_idx, b_idx, a_values, b_values, strides, negate, *, sizes=None):
        """Coalesced union in one call: (indices[d, m], values[m, k]) of a + b (a - b with ``negate``).

        Keys from the index columns (``strides``, host values; indices outside
        ``sizes`` reported, default as in :meth:`merge_multiply`), the ranks of
        :meth:`merge_union`, then the index columns and the values
        (``coo_union_values``). Synchronises once (the union size).
        """
        sizes = row_major_sizes(strides) if sizes is None else sizes
        a_keys = self.linear_index(a_idx, strides, sizes)
        b_keys = self.linear_index(b_idx, strides, sizes)
        a_pos, b_pos = self.merge_union(a_keys, b_keys)  # synchronize! (output size)
        return (self.union_columns(a_idx, b_idx, a_pos, b_pos),
                self.union_values(a_values, b_values, a_pos, b_pos, negate))

    def gather_or_zero(self, values, rows):
        """values[rows[i]] for 2-D values, zeros where rows[i] < 0 (bit copy). Sync-free."""
        return self._gather_rows("coo_gather_rows_or_zero", values, rows, -(2**62), "gather_or_zero rows")

    # ------------------------------------------------------------------ strided views (as_strided_scatter)
    def _view_params(self, sizes, strides, src_strides):
        """By-value (sizes, strides, src_strides), d, element count, host sizes, chunk threads, rows."""
        sizes = np.asarray(sizes, dtype=np.int64).reshape(-1)
        d = sizes.shape[0]
        total = int(np.prod(sizes)) if d else 1
        n_last = int(sizes[-1]) if d else 1
        rows = total // n_last if n_last else 0
        nchunks = rows * (-(-n_last // VIEW_CHUNK))
        return ((self.dims(sizes, "view sizes"), self.dims(strides, "view strides"),
                 self.dims(src_strides, "view src_strides")), d, total, sizes, nchunks, rows)

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
        plain copies). Otherwise the copy, then the view kernel. A thread
        handles ``VIEW_CHUNK`` elements of the last dimension, stepping by its
        stride.
        """
        params, d, total, sz, nchunks, rows = self._view_params(sizes, strides, src_strides)
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
            self._run(f"coo_scatter_view_fill<{ctype}>", nchunks, oview, iview, sview, *params, _i64(d),
                      _i64(offset), _i64(src_base), _i64(nchunks), _i64(rows), _i64(w))
            return
        if copy and out.size:
            out[...] = inp
        self._run(f"coo_scatter_view_set<{ctype}>", nchunks, oview, sview, *params, _i64(d),
                  _i64(offset), _i64(src_base), _i64(nchunks), _i64(w))

    def strided_scatter_ordered(self, out, src, src_base, offset, sizes, strides, src_strides):
        """out[offset + i.strides] = src[src_base + i.src_strides], i in C order, last writer wins. Sync-free.

        Addresses of the (possibly overlapping) view are stably sorted and only
        the last element of each run of equal addresses writes.
        """
        xp = self.xp
        params, d, total, sz, nchunks, _ = self._view_params(sizes, strides, src_strides)
        if total == 0:
            return
        self._check_view(out, src, int(src_base), int(offset), sz, strides, src_strides)
        out_addr = xp.empty(total, dtype=np.int64)
        src_addr = xp.empty(total, dtype=np.int64)
        self._run("coo_scatter_view_addresses", nchunks, *params, _i64(d), _i64(offset), _i64(src_base),
                  _i64(nchunks), out_addr, src_addr)
        vals = self.gather_strided(src, src_addr, np.zeros(1, dtype=np.int64)).reshape(-1)
        tview, ctype = self._words(out)
        vview, _ = self._words(vals)
        if out.dtype.itemsize == 16:
            out_addr = (out_addr[:, None] * 2 + xp.arange(2, dtype=np.int64)[None, :]).reshape(-1)
        self._scatter("set", tview, out_addr, vview, ctype, tview.size, None)

    # ---- linear algebra (issue 13) ----------------------------------------------
    # One thread per output element, each summing in the kernel API's order: the Numba
    # layer's bits. Grouping (sorting by row or by column) uses this layer's stable sort.
    # Nullable arguments (perm, batch_base, batch_offsets) go to the kernels as null
    # pointers; every data-dependent read is guarded there and reported (COO_ERR_*):
    # the COO's indices against their bounds (COO_ERR_INDEX: IndexError at the next
    # synchronising call or check_device_errors()), internal arrays against their lengths.
    @staticmethod
    def _bound_bits(b):
        """A bound for an unsigned compare in a kernel (None: 2**63), as the i64 with its u64 bits."""
        return np.array([2**63 if b is None else min(int(b), 2**63)], dtype=np.uint64).view(np.int64)[0]

    def _opt(self, a):
        """``a`` as a C-contiguous int64 device array, or None (a null pointer)."""
        return None if a is None else self._c(a, np.int64)

    def _host(self, a):
        """``validate`` only: a host copy of device array ``a`` (the emulation's uncounted view)."""
        return np.asarray(self._peek(a))

    def row_offsets(self, rows, nrows):
        """CSR row pointer of non-decreasing ``rows``: int64[nrows + 1]. Sync-free (binary searches).

        Rows outside ``[0, nrows)`` (reported: INDEX) fall outside every row;
        rows out of order (lying flags) are reported (ORDER).
        """
        rows = self._c(rows, np.int64)
        nrows = int(nrows)
        n = rows.shape[0]
        out = self.xp.empty(nrows + 1, dtype=np.int64)
        self._run("coo_linalg_row_offsets", max(nrows + 1, n), rows, _i64(n), _i64(nrows), out, self._err())
        return out

    def spmm(self, offsets, perm, cols, values, dense, rows_per_batch, batch_base, col_bound=None):
        """out[r, j] = sum over row r's grouped entries of values[e] * dense[base + cols[e], j]. Sync-free.

        ``cols`` outside ``[0, col_bound)`` (default: the rows of ``dense``) are skipped, reported (INDEX).
        """
        xp = self.xp
        offsets = self._c(offsets, np.int64)
        cols = self._c(cols, np.int64)
        values = self._c(values)
        dense = self._c(dense, values.dtype)
        nrows, ncols = offsets.shape[0] - 1, dense.shape[1]
        out = xp.empty((nrows, ncols), dtype=values.dtype)
        if nrows <= 0 or ncols == 0:
            return out
        perm_arr, base = self._opt(perm), self._opt(batch_base)
        rpb = max(int(rows_per_batch), 1)
        n = values.shape[0]
        kb = dense.shape[0] if col_bound is None else int(col_bound)
        if self._validate:
            self._check_range(offsets, 0, n + 1, "spmm offsets")
            if perm_arr is not None:
                self._check_range(perm_arr, 0, n, "spmm perm")
            hb = self._host(base) if base is not None else np.zeros(1, np.int64)
            self._check_range(cols, 0, min(kb, max(dense.shape[0] - (int(hb.max()) if hb.size else 0), 0)),
                              "spmm cols")
            if base is not None:
                self._check_range(base, 0, dense.shape[0], "spmm batch_base")
                if (nrows - 1) // rpb >= base.shape[0]:
                    raise IndexError("spmm: batch_base is shorter than the number of batches")
        vview, ctype = self._product_view(values)
        dview, _ = self._product_view(dense)
        oview, _ = self._product_view(out)
        self._run(f"coo_linalg_spmm<{ctype}>", nrows * ncols, offsets, _i64(nrows), perm_arr, cols,
                  self._bound_bits(kb), vview, _i64(n),
                  dview, _i64(dense.shape[0]), _i64(ncols), _i64(rpb), base,
                  _i64(0 if base is None else base.shape[0]), oview, self._err())
        return out

    def spmm_unsorted(self, rows, cols, values, dense, nrows, rows_per_batch, batch_base, col_bound=None):
        """COO (rows in any order) x dense: a stable sort by row, then :meth:`spmm`. Sync-free.

        Rows outside ``[0, nrows)`` (checked by :meth:`row_offsets` after the sort) and
        ``cols`` outside ``[0, col_bound)`` are skipped, reported (INDEX).
        """
        rows = self._c(rows, np.int64)
        if self._validate:
            self._check_range(rows, 0, int(nrows), "spmm_unsorted rows")
        sorted_rows, perm = self.sort_pairs(rows, max(int(nrows), 1))
        return self.spmm(self.row_offsets(sorted_rows, nrows), perm, cols, values, dense, rows_per_batch,
                         batch_base, col_bound)

    def dense_spmm(self, dense, batch_base, rows_per_batch, batch_offsets, perm, krow, cols, values, ncols):
        """dense x COO: entries grouped by (batch, column) with a stable sort, one thread per output. Sync-free."""
        xp = self.xp
        values = self._c(values)
        dense = self._c(dense, values.dtype)
        krow = self._c(krow, np.int64)
        cols = self._c(cols, np.int64)
        n, ncols, m = krow.shape[0], int(ncols), int(rows_per_batch)
        boff = self._opt(batch_offsets)
        nbatch = 1 if boff is None else boff.shape[0] - 1
        base = self._opt(batch_base)
        out = xp.empty((nbatch * m, ncols), dtype=values.dtype)
        if out.size == 0:
            return out
        perm_arr = self._opt(perm)
        if self._validate:
            self._check_range(krow, 0, dense.shape[1], "dense_spmm krow")
            self._check_range(cols, 0, ncols, "dense_spmm cols")
            if base is not None:
                self._check_range(base, 0, max(dense.shape[0] - m + 1, 0), "dense_spmm batch_base")
            if boff is not None:
                self._check_range(boff, 0, n + 1, "dense_spmm batch_offsets")
            if perm_arr is not None:
                self._check_range(perm_arr, 0, n, "dense_spmm perm")
        ngroups = nbatch * ncols  # + one sentinel group (entries that cannot be placed, reported)
        key = xp.empty(n, dtype=np.int64)
        self._run("coo_linalg_batch_col_key", n, boff, _i64(nbatch), perm_arr, cols, _i64(n), _i64(ncols), key,
                  self._err())
        sorted_key, order = self.sort_pairs(key, ngroups + 1)
        if perm_arr is not None:
            order = perm_arr[order]
        goff = self.row_offsets(sorted_key, ngroups + 1)
        dview, ctype = self._product_view(dense)
        vview, _ = self._product_view(values)
        oview, _ = self._product_view(out)
        self._run(f"coo_linalg_dense_spmm<{ctype}>", nbatch * m * ncols, dview, _i64(dense.shape[0]),
                  _i64(dense.shape[1]), base, _i64(max(m, 1)), goff, self._c(order, np.int64), krow, vview, _i64(n),
                  _i64(nbatch * m), _i64(ncols), oview, self._err())
        return out

    def sddmm(self, rows, row_stride, cols, col_stride, x, x_inner, y, y_inner, k, row_bound=None, col_bound=None):
        """Dot products at the entries, eight lanes each (the Numba order). Sync-free.

        ``rows`` outside ``[0, row_bound)`` or ``cols`` outside ``[0, col_bound)`` (None:
        2**63) give 0, reported (INDEX).
        """
        xp = self.xp
        rows = self._c(rows, np.int64)
        cols = self._c(cols, np.int64)
        n, k = rows.shape[0], int(k)
        out = xp.empty(n, dtype=x.dtype)
        if n == 0:
            return out
        if self._validate:
            for idx, st, inner, buf, what in ((rows, row_stride, x_inner, x, "x"), (cols, col_stride, y_inner, y, "y")):
                a0 = self._host(idx) * int(st)
                ends = [a0, a0 + (k - 1) * int(inner)] if k else [a0]
                lo = min(int(e.min()) for e in ends)
                hi = max(int(e.max()) for e in ends)
                if lo < 0 or hi >= buf.shape[0]:
                    raise IndexError(f"sddmm: addresses {lo}..{hi} fall outside {what} of {buf.shape[0]} elements")
            for idx, bound, what in ((rows, row_bound, "rows"), (cols, col_bound, "cols")):
                if bound is not None:
                    self._check_range(idx, 0, int(bound), f"sddmm {what}")
        xv, ctype = self._product_view(x)
        yv, _ = self._product_view(y)
        ov, _ = self._product_view(out)
        self._run(f"coo_linalg_sddmm<{ctype}>", n, rows, _i64(row_stride), self._bound_bits(row_bound), cols,
                  _i64(col_stride), self._bound_bits(col_bound),
                  xv, _i64(xv.shape[0]), _i64(x_inner), yv, _i64(yv.shape[0]), _i64(y_inner), _i64(k), _i64(n), ov,
                  self._err())
        return out

    def spgemm(self, a_offsets, a_rows, a_perm, a_cols, a_values, b_offsets, b_perm, b_cols, b_values, ncols,
               a_row_bound=None):
        """Expand-sort-compress: products in expansion order, stable sort by (row, col), ordered sums.

        Synchronises twice (the number of products, then of distinct outputs;
        each read through :meth:`_sync_size`, with the error word). A's columns
        outside ``[0, K)``, B's columns outside ``[0, ncols)`` and row keys
        ``a_rows`` outside ``[0, a_row_bound)`` (or not increasing: ORDER) are
        reported (INDEX) before the first synchronisation, which raises.
        """
        xp = self.xp
        a_offsets = self._c(a_offsets, np.int64)
        b_offsets = self._c(b_offsets, np.int64)
        a_cols = self._c(a_cols, np.int64)
        b_cols = self._c(b_cols, np.int64)
        a_values = self._c(a_values)
        b_values = self._c(b_values, a_values.dtype)
        nrows, na, ncols = a_offsets.shape[0] - 1, a_cols.shape[0], int(ncols)
        nbrows, nb = b_offsets.shape[0] - 1, b_cols.shape[0]
        ap, bp = self._opt(a_perm), self._opt(b_perm)
        if self._validate:
            self._check_range(a_cols, 0, nbrows, "spgemm a_cols")
            self._check_range(b_cols, 0, ncols, "spgemm b_cols")
            self._check_range(a_offsets, 0, na + 1, "spgemm a_offsets")
            self._check_range(b_offsets, 0, nb + 1, "spgemm b_offsets")
            if ap is not None:
                self._check_range(ap, 0, na, "spgemm a_perm")
            if bp is not None:
                self._check_range(bp, 0, nb, "spgemm b_perm")
            if a_rows is not None and a_row_bound is not None:
                self._check_range(self._c(a_rows, np.int64), 0, int(a_row_bound), "spgemm a_rows")
        if a_rows is not None and nrows > 0:  # A's distinct row keys: in range and increasing
            self._run("coo_linalg_check_keys", nrows, self._c(a_rows, np.int64), _i64(nrows),
                      self._bound_bits(a_row_bound), _i64(1), self._err())
        if nb:  # every B column, as on the CPU (O(nnz(B)), small beside the products)
            self._run("coo_linalg_check_keys", nb, b_cols, _i64(nb), self._bound_bits(ncols), _i64(0), self._err())
        count = xp.empty(na, dtype=np.int64)
        self._run("coo_linalg_spgemm_count", na, ap, a_cols, _i64(na), b_offsets, _i64(nbrows), _i64(nb), count,
                  self._err())
        start = xp.zeros(na + 1, dtype=np.int64)
        if na:
            start[1:] = xp.cumsum(count)
        total = self._sync_size(start[na])  # synchronize! (number of products, and the error word)
        rows = xp.empty(total, dtype=np.int64)
        cols = xp.empty(total, dtype=np.int64)
        prod = xp.empty(total, dtype=a_values.dtype)
        av, ctype = self._product_view(a_values)
        bv, _ = self._product_view(b_values)
        pv, _ = self._product_view(prod)
        self._run(f"coo_linalg_spgemm_expand<{ctype}>", na, a_offsets, _i64(nrows), ap, a_cols, av, _i64(na),
                  b_offsets, _i64(nbrows), bp, b_cols, bv, _i64(nb), _i64(ncols), start, _i64(total), rows, cols, pv,
                  self._err())
        if total == 0:
            return xp.zeros((2, 0), dtype=np.int64), prod
        if max(nrows, 1) * max(ncols, 1) < 2**63:
            keys = rows * ncols + cols
            sorted_keys, perm = self.sort_pairs(keys, nrows * ncols)
            starts = self.segment_starts(sorted_keys)  # synchronize! (output size)
            heads = sorted_keys[starts[:-1]]
            out_rows, out_cols = heads // ncols, heads % ncols
        else:  # keys too wide for one word: two stable sorts (lexicographic), then ranks of the pairs
            perm = self._c(self._argsort(cols), np.int64)
            perm = perm[self._c(self._argsort(rows[perm]), np.int64)]
            sr, sc = rows[perm], cols[perm]
            new = xp.ones(total, dtype=np.int64)
            new[1:] = (sr[1:] != sr[:-1]) | (sc[1:] != sc[:-1])
            starts = self.segment_starts(xp.cumsum(new))  # synchronize! (output size)
            heads = starts[:-1]
            out_rows, out_cols = sr[heads], sc[heads]
        sums = self.segment_sum(self._sum_pairs(prod), perm, starts)
        if a_rows is not None:
            out_rows = self._c(a_rows, np.int64)[out_rows]
        return self._c(xp.stack([out_rows, out_cols]), np.int64), self._from_sum_pairs(sums, a_values.dtype)

    @staticmethod
    def _sum_pairs(v):
        """1-D values as (n, 1) summable columns; complex as (n, 2) float pairs (componentwise sums)."""
        if v.dtype.kind == "c":
            return v.view(np.float32 if v.dtype == np.complex64 else np.float64).reshape(v.shape[0], 2)
        return v.reshape(v.shape[0], 1)

    def _from_sum_pairs(self, sums, dtype):
        sums = self._c(sums)
        if np.dtype(dtype).kind == "c":
            return sums.view(dtype).reshape(-1)
        return sums.reshape(-1)

    # ------------------------------------------------------------------ binding
    def bind(self, namespace, names, guard=None):
        """Put the layer's functions named ``names`` into module dict ``namespace``.

        ``guard(args)``, when given, returns a context manager each call runs
        in (the GPU backend: the device of the array arguments).
        """
        namespace["name"] = self.name
        namespace["xp"] = self.xp
        for n in names:
            fn = getattr(self, n)
            if guard is not None:
                fn = _guarded(fn, guard)
            namespace[n] = fn

    # ---- reductions (issue 11) -----------------------------------------------------------------
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
                  view, _i64(n), perm, _i64(perm is not None), starts, _i64(nseg), _i64(k), oview, self._err())
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
                  values, _i64(n), perm, _i64(perm is not None), starts, _i64(nseg), _i64(k), _i64(bool(is_max)),
                  out, self._err())
        return out

    def segment_arg(self, values, perm, starts, sub, is_max):
        """(best, pos, gap) per segment (kernel API row ``segment_arg``). Sync-free.

        One thread per (segment, column); the column-0 thread also finds the gap.
        With no columns the gap is not needed by any caller and is returned as zeros.
        Bad segments and perm entries as in :meth:`segment_prod`.
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
                  values, _i64(n), perm, _i64(perm is not None), starts, sub, _i64(nseg), _i64(k),
                  _i64(bool(is_max)), best, pos, gap, self._err())
        return best, pos, gap

    def _segment_op(self, values, perm, starts, op):
        if op == "sum":
            return self.segment_sum(values, perm, starts)
        if op == "prod":
            return self.segment_prod(values, perm, starts)
        if op in ("max", "min"):
            return self.segment_minmax(values, perm, starts, op == "max")
        raise ValueError(f"unknown reduction {op!r}; expected 'sum', 'prod', 'max' or 'min'")

    def reduce_sorted(self, sorted_keys, values, op):
        """(starts, out): run heads of sorted keys and each run reduced in order. Synchronises (m).

        Composed of ``segment_starts`` and the ordered segment kernels, so the
        results are bit-identical to the Numba layer's fused kernel. Keys out
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

        No atomics: a stable sort of the keys (none when ``is_sorted``; the
        order is then checked and a lie reported), the ordered segment kernels,
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
    # ------------------------------------------------------------------ elementwise engine (issue 11)
    def merge_gather(self, a_idx, b_idx, a_words, b_words, strides, a_fill, b_fill, *, sizes=None):
        """Coalesced union: (indices, a's rows or a_fill, b's rows or b_fill), bit copies.

        Composed of the union kernels (keys, :meth:`merge_union`, :meth:`union_columns`)
        and row gathers (``gather_or_zero``); synchronises once (the union size).
        ``strides`` and the fill rows are host metadata (a device array raises
        TypeError): a zero fill needs nothing more, another one is written
        where a side lacks the key by one ``where`` per distinct word of its
        period (one for a real dtype, two for complex128's two words), with
        the words as scalars, so nothing is uploaded. Indices outside ``sizes``
        are reported as in :meth:`merge_add`.
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
    # ---- shape, indexing and joining (issue 12) --------------------------------
    MERGE_MAX_RUNS = 16
    """Most sorted runs ``merge_take`` merges (their offsets travel by value); more are sorted."""

    def mask_positions(self, mask):
        """Ascending positions of the True entries of a 1-D bool mask. Synchronises (output size)."""
        xp = self.xp
        mask = self._c(mask, np.bool_).view(np.uint8)
        n = mask.shape[0]
        if n == 0:
            return xp.zeros(0, dtype=np.int64)
        flags = xp.empty(n, dtype=np.int64)
        self._run("coo_indexing_mask_flag", n, mask, _i64(n), flags)
        pos = xp.cumsum(flags)
        m = self._sync_size(pos[-1])  # synchronize! (the number of kept entries; and the error word)
        out = xp.empty(m, dtype=np.int64)
        self._run("coo_indexing_mask_write", n, mask, pos, _i64(n), _i64(m), out, self._err())
        return out

    def search_ranges(self, sorted_keys, lo, hi):
        """(start, stop) of the key ranges [lo[i], hi[i]) in sorted keys: one binary search per query. Sync-free."""
        xp = self.xp
        keys = self._c(sorted_keys, np.int64)
        lo = self._c(lo, np.int64)
        hi = self._c(hi, np.int64)
        m = lo.shape[0]
        if hi.shape[0] != m:
            raise ValueError(f"search_ranges: lo and hi differ in length ({m} and {hi.shape[0]})")
        start = xp.empty(m, dtype=np.int64)
        stop = xp.empty(m, dtype=np.int64)
        self._run("coo_indexing_search_ranges", m, keys, _i64(keys.shape[0]), lo, hi, _i64(m), start, stop)
        return start, stop

    def _range_ends(self, start, count, what):
        """(start, ends = inclusive scan of count, m, total) for the range rows. Synchronises (total)."""
        xp = self.xp
        start = self._c(start, np.int64)
        count = self._c(count, np.int64)
        m = start.shape[0]
        if count.shape[0] != m:
            raise ValueError(f"{what}: start and count differ in length ({m} and {count.shape[0]})")
        if m == 0:
            return start, xp.zeros(0, dtype=np.int64), 0, 0
        if self._validate and bool((np.asarray(self._peek(count)) < 0).any()):
            raise ValueError(f"{what}: counts must be non-negative")
        ends = xp.cumsum(count)
        total = self._sync_size(ends[-1])  # synchronize! (the total length sizes the output; and the error word)
        if total < 0:
            raise ValueError(f"{what}: counts must be non-negative (they sum to {total})")
        return start, ends, m, total

    def expand_ranges(self, start, count):
        """(rows, owner) of the concatenated ranges start[i] .. start[i]+count[i]-1. Synchronises (output size)."""
        xp = self.xp
        start, ends, m, total = self._range_ends(start, count, "expand_ranges")
        rows = xp.empty(total, dtype=np.int64)
        owner = xp.empty(total, dtype=np.int64)
        self._run("coo_indexing_expand", total, start, ends, _i64(m), _i64(total), rows, owner, self._err())
        return rows, owner

    def take_ranges(self, indices, values, start, count):
        """Fused range gather: (out[d + 1, t] with out[0] the owner, values[rows]). Synchronises (output size).

        A source row outside the arrays gives zeros and is reported (``errors.GATHER``).
        """
        xp = self.xp
        indices = self._c(indices, np.int64)
        values = self._c(values)
        d, n = indices.shape
        start, ends, m, total = self._range_ends(start, count, "take_ranges")
        out = xp.empty((d + 1, total), dtype=np.int64)
        vals = xp.empty((total,) + values.shape[1:], dtype=values.dtype)
        if total == 0:
            return out, vals
        if self._validate:
            hs, hc = np.asarray(self._peek(start)), np.asarray(self._peek(count))
            used = hc > 0
            if used.any() and (hs[used].min() < 0 or (hs + hc)[used].max() > n):
                raise IndexError(f"take_ranges: a range leaves the {n} source rows")
        view, ctype = self._words(values)
        vview, _ = self._words(vals)
        self._run(f"coo_indexing_take_ranges<{ctype}>", total, indices, _i64(d), _i64(n), view,
                  _i64(view.shape[1]), start, ends, _i64(m), _i64(total), out, vview, self._err())
        return out, vals

    def merge_take(self, keys, offsets, indices, values):
        """(indices[:, perm], values[perm]) for the stable merge order of sorted runs of keys:
        each entry's merge rank by binary search in the other runs, then its column and row copied
        there. Sync-free: ``offsets`` (r + 1 host integers) travel by value. More than
        ``MERGE_MAX_RUNS`` runs are sorted instead (same order). Keys not sorted within their run
        are reported (``errors.ORDER``)."""
        xp = self.xp
        keys = self._c(keys, np.int64)
        indices = self._c(indices, np.int64)
        values = self._c(values)
        n = keys.shape[0]
        d = indices.shape[0]
        offsets = run_offsets(offsets, keys, indices, values, "merge_take")
        r = offsets.shape[0] - 1
        if r > self.MERGE_MAX_RUNS:
            perm = self._c(self._argsort(keys), np.int64) if n else xp.zeros(0, dtype=np.int64)
            return self.gather_columns(indices, perm), self.gather_rows(values, perm)
        out_idx = xp.empty((d, n), dtype=np.int64)
        out_val = xp.empty(values.shape, dtype=values.dtype)
        if n == 0:
            return out_idx, out_val
        view, ctype = self._words(values)
        oview, _ = self._words(out_val)
        self._run(f"coo_join_merge_take<{ctype}>", n, keys, self.dims(offsets, "merge_take offsets"), _i64(r),
                  _i64(n), indices, _i64(d), view, _i64(view.shape[1]), out_idx, oview, self._err())
        return out_idx, out_val

    # ------------------------------------------------------------------ CPU performance II (issue 16)
    def multiply_search(self, src_keys, src_values, probe_keys, probe_values, perm, *, shared_runs=False):
        """match_search + multiply_matched (rows None): the product of every source row. Sync-free.

        On the GPU the binary-search match needs no partition, so this is the
        composition of the two rows (the CPU layer fuses them to save a
        random stream).
        """
        first, count = self.match_search(src_keys, probe_keys)
        return self.multiply_matched(src_values, None, probe_values, perm, first, count, shared_runs=shared_runs)


def _guarded(fn, guard):
    import functools

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with guard(args):
            return fn(*args, **kwargs)

    return run
