"""The base of the CUDA kernel layer: conventions, constants and the helpers every family uses.

:class:`~coosparse._kernels.cuda.layer.CudaLayer` implements every row of
``coosparse/_kernels/api.py`` with array-namespace calls (``xp``: CuPy on a
GPU, the emulated device of :mod:`coosparse.testing.device` in the test suite)
and raw kernel launches (``launch(kernel, nthreads, args)``: kernels compiled
by NVRTC on a GPU, the host-compiled ``.cu`` files in emulation). Its rows sit
in one module per family (``<family>.py``, the Numba layer's family names,
launching the kernels of ``cuda_kernels/<family>.cu``) as mixins over
:class:`LayerBase`. ``backend.py`` and ``emulated.py`` only bind ``xp`` and
the launcher; nothing here depends on which one runs.

Conventions for a new row (docs/cuda.md, "Adding a kernel")
-----------------------------------------------------------
1. **Launch**: ``self._run("coo_<file>_<phase><T>", nthreads, *args)`` on a
   1-D grid, one thread per output element (or per chunk: say so in the
   ``.cu`` file). Each argument is one of

   - a device array, C-contiguous, of the pointee's size and kind (a
     ``const T*`` / ``T*`` parameter); ``None`` for a null pointer;
   - ``i64(x)`` for a ``long long`` (``i64``) parameter: no other scalar type;
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
   with ``coo_report(err, COO_ERR_*)`` (:mod:`coosparse._kernels.cuda.errors`).
5. **Synchronisation**: only lines marked ``# synchronize!`` read device data
   on the host; a row that must (an output size) reads through
   ``self._sync_size(x)``, which also checks the error word in the same copy.
   Everything else only queues work: no ``int()``/``bool()``/``.get()``.
6. **Devices**: on a GPU every row runs under the device of its array
   arguments (``backend.py`` binds the rows with a device guard); allocate
   with ``xp`` inside the row, never at import.
7. **Strict emulation**: ``xp`` in the test suite is the emulated device, which
   has only CuPy's API (names, keywords, ``flags``), refuses NumPy arrays as
   operands and counts transfers; ``tests/kernels/test_cuda_strict.py`` asserts that
   every sync-free row and operation makes none.

Sort and scan are the namespace's own primitives: an in-place sort of keys
packed with their positions (CUB radix sort through CuPy on a GPU; unique
words, so the order is the stable one whatever the algorithm), or, when key
and position bits exceed 63, ``stable_argsort`` (CuPy's thrust stable
argsort, NumPy's stable argsort in emulation); and ``xp.cumsum``. Either way
the permutation is the unique stable one, as the Numba radix sort's.
"""
from __future__ import annotations

import functools

import numpy as np

from ..backend import is_device_array
from . import errors

i64 = np.int64
"""The Python type of an ``i64`` (``long long``) kernel argument."""

# element width in bytes -> C type of a bit copy
WORD_C = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
FLOAT_C = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}

MAX_DIMS = 64
"""Capacity of a ``coo_dims`` by-value argument (``COO_MAX_DIMS`` in coo_common.cuh)."""
DIMS_DTYPE = np.dtype([("v", np.int64, (MAX_DIMS,))])
"""NumPy layout of ``struct coo_dims``: CuPy passes a size-1 array of it by value."""


def _sort_in_place(a):
    a.sort()  # cupy.ndarray.sort: in place (cupy.sort would copy first)
    return a


class LayerBase:
    """Launching, argument conversion, the error word and validation, shared by every family's rows."""

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
        """The current device's error word (uint64[1]), allocated on first use.

        Allocated and zeroed on a private stream that is then waited for: never
        inside a CUDA-graph capture of the caller's stream (a graph holding the
        zeroing would clear the word at every replay).
        """
        dev = self._device_id()
        w = self._err_words.get(dev)
        if w is None:
            side = self.xp.cuda.Stream(non_blocking=True)
            with side:
                w = self.xp.zeros(1, dtype=np.uint64)
            side.synchronize()
            self._err_words[dev] = w
        return w

    def _take_errors(self, out):
        """Queue ``out[0] = word; word = 0`` (one atomic exchange) on the current stream, behind its kernels."""
        self._run("coo_segment_take_errors", 1, self._err(), out)

    def _sync_size(self, x):
        """``int(x)`` of a device scalar, and the error word taken in the same copy. Synchronises."""
        xp = self.xp
        buf = xp.empty(2, dtype=np.int64)
        buf[0] = x
        self._take_errors(buf[1:].view(np.uint64))
        size, code = (int(v) for v in buf.get())  # synchronize!
        if code:
            raise errors.device_error(code)
        return size

    def raise_errors(self, all_devices=False):
        """Raise what the kernels reported since the last check, and clear it. Synchronises the device.

        Every stream of the device is drained first (kernels of non-blocking
        streams included), then the word is read and cleared in one atomic
        step on the current stream, so a bit set meanwhile is kept for the
        next check rather than lost.
        """
        words = dict(self._err_words) if all_devices else {self._device_id(): self._err_words.get(self._device_id())}
        for dev, w in words.items():
            if w is None:
                continue
            device = self.xp.cuda.Device(dev)
            with device:
                device.synchronize()
                got = self.xp.empty(1, dtype=np.uint64)
                self._take_errors(got)
                code = int(got.get()[0])  # synchronize!
            if code:
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
            return a.view(np.uint64), WORD_C[8]
        if size not in WORD_C:
            raise TypeError(f"unsupported element width {size} for dtype {a.dtype}")
        return a.view(UINT[size]), WORD_C[size]

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
            return a.view(UINT[dt.itemsize]), WORD_C[dt.itemsize]
        if dt in FLOAT_C:
            return a, FLOAT_C[dt]
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

    def _product_view(self, a):
        """``a`` in the product kernel's type: (array, C type)."""
        dt = a.dtype
        if dt == np.complex64:
            return a, "coo_complex<float>"
        if dt == np.complex128:
            return a, "coo_complex<double>"
        if dt == np.int64:
            return a.view(np.uint64), "unsigned long long"
        if dt in FLOAT_C:
            return a, FLOAT_C[dt]
        raise TypeError(f"multiply_matched runs on int64, float32/64 and complex64/128; got {dt}")

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


def _guarded(fn, guard):
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with guard(args):
            return fn(*args, **kwargs)

    return run
