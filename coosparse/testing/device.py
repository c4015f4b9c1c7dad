"""The emulated CUDA device: arrays and a namespace that refuse what CuPy would refuse.

The ``cuda-emulated`` backend runs the CUDA layer's Python code and kernels on
the CPU. Running it over plain NumPy arrays would let NumPy-only code pass CI
and fail on a GPU (``out.flags.writeable``, ``np.asarray(device_array)``,
a host array handed to a kernel, a keyword CuPy's function lacks), and would
hide every host<->device transfer. So the emulated backend has its own device:

- :class:`DeviceArray` stands for ``cupy.ndarray``. It holds a NumPy array but
  offers only the attributes and methods ``cupy.ndarray`` has (the recorded
  CuPy API surface, ``cupy_surface.json``), its ``flags`` only CuPy's flags,
  and like CuPy it refuses implicit conversion to NumPy (``__array__``) and
  NumPy arrays as operands (``TypeError``).
- :data:`xp` stands for the ``cupy`` module: only names CuPy has, keywords
  checked against CuPy's signatures, NumPy arrays refused except by the
  transfer functions (``asarray``/``array``/``asanyarray``).
- Transfers are counted (:data:`counts`): host-to-device (``xp.asarray`` of
  host data, a host array assigned into or indexing a device array) and
  device-to-host (``int()``, ``bool()``, ``float()``, ``.item()``,
  ``.tolist()``, ``.get()``, ``repr``, and the operations whose output size
  depends on the data, where CuPy reads a count back: boolean-mask indexing,
  ``nonzero``, ``unique``, one-argument ``where``, ...). Inside :func:`sync_free` any transfer
  raises :class:`TransferError` at the line that makes it: the check that an
  operation documented as sync-free (and so CUDA-graph capturable) is.
- ``xp.empty`` poisons new memory (bytes 0xA5), as a GPU gives garbage: a
  kernel that leaves an output element unwritten shows in the results.

Device arrays are made with :func:`to_device` (an explicit upload, counted)
and read back with ``.get()``. The device knows arrays only: a ``COO`` moves
here with ``a.to("cuda-emulated")`` (inside :func:`allow_transfers`).

The recorded surface is regenerated with
``python -m coosparse.testing.device --write-surface`` where CuPy is installed
(``tests/kernels/test_cuda_strict.py`` compares it with the installed CuPy).
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import operator
import os
import threading

import numpy as np

DEVICE = "cuda-emulated"
SURFACE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cupy_surface.json")
POISON = 0xA5

# functions of the cupy namespace that take host data (the uploads)
_TRANSFER_FUNCS = frozenset({"asarray", "array", "asanyarray"})
# functions whose output size depends on the data: CuPy reads a count back (a synchronisation)
_DATA_SIZED = frozenset({"nonzero", "flatnonzero", "argwhere", "unique", "unique_all", "unique_counts",
                         "unique_inverse", "unique_values", "compress", "extract", "setdiff1d", "intersect1d",
                         "union1d", "setxor1d", "trim_zeros"})
# submodules of cupy emulated by name (the rest raise AttributeError)
_SUBMODULES = ("lib.stride_tricks", "linalg", "fft")


class TransferError(AssertionError):
    """A host<->device transfer inside a region documented as transfer-free."""


class NotEmulated(NotImplementedError):
    """A CuPy feature the emulated device does not model (use a GPU to test it)."""


# ---------------------------------------------------------------------------- surface
@functools.lru_cache(maxsize=None)
def surface():
    """The recorded CuPy API surface: {'cupy_version', 'namespace', 'submodules', 'ndarray', 'flags'}."""
    with open(SURFACE_PATH, encoding="utf-8") as f:
        return json.load(f)


def _params(obj):
    """Parameter names of ``obj`` ('*' / '**' for variadics), from its signature or docstring; None if unknown."""
    import inspect
    import re

    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        doc = (getattr(obj, "__doc__", None) or "").strip().splitlines()
        m = re.match(r"^[\w.]+\((.*)\)", doc[0]) if doc else None
        if not m:
            return None
        out = []
        for part in m.group(1).split(","):
            name = part.split("=")[0].split(":")[0].strip()
            name = name.split()[-1] if name else name  # Cython signatures may carry types: 'int axis'
            if name in ("self", "/", "*", ""):
                continue  # a bare '*' only separates keyword-only parameters
            out.append("**" if name.startswith("**") else "*" if name.startswith("*") else name)
        return out
    out = []
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            out.append("*")
        elif p.kind == p.VAR_KEYWORD:
            out.append("**")
        else:
            out.append(p.name)
    return out


def _method_params(m):
    p = _params(m)
    return None if p is None else [x for x in p if x != "self"]


def generate_surface():
    """Read the surface off the installed CuPy (needs only ``import cupy``, no GPU)."""
    import cupy

    def describe(mod):
        out = {}
        for name in dir(mod):
            if name.startswith("_"):
                continue
            obj = getattr(mod, name)
            if type(obj).__name__ == "ufunc":
                out[name] = "ufunc"
            elif isinstance(obj, type) or not callable(obj):
                out[name] = "value"
            else:
                out[name] = _params(obj)
        return out

    subs = {}
    for path in _SUBMODULES:
        mod = cupy
        for part in path.split("."):
            mod = getattr(mod, part)
        subs[path] = describe(mod)
    import cupy._core.flags as flags_mod

    return {
        "cupy_version": cupy.__version__,
        "namespace": describe(cupy),
        "submodules": subs,
        "ndarray": sorted(n for n in dir(cupy.ndarray) if not n.startswith("_") or n.startswith("__")),
        "ndarray_methods": {n: _method_params(getattr(cupy.ndarray, n)) for n in dir(cupy.ndarray)
                            if not n.startswith("_") and callable(getattr(cupy.ndarray, n))},
        "flags": sorted(n for n in dir(flags_mod.Flags) if not n.startswith("_")),
    }


# ---------------------------------------------------------------------------- transfer accounting
class _Counts(threading.local):
    def __init__(self):
        self.h2d = 0
        self.d2h = 0
        self.forbid = 0

    def snapshot(self):
        return {"h2d": self.h2d, "d2h": self.d2h}


counts = _Counts()


def _transfer(kind, what):
    if counts.forbid:
        raise TransferError(
            f"{what}: a {'host-to-device' if kind == 'h2d' else 'device-to-host'} transfer inside an "
            "operation documented as sync-free (on a GPU it would stop CUDA-graph capture"
            + (" and synchronise the host" if kind == "d2h" else "") + ")"
        )
    setattr(counts, kind, getattr(counts, kind) + 1)


@contextlib.contextmanager
def sync_free():
    """Raise :class:`TransferError` at any host<->device transfer made inside the block."""
    counts.forbid += 1
    try:
        yield
    finally:
        counts.forbid -= 1


@contextlib.contextmanager
def allow_transfers():
    """Lift :func:`sync_free` inside the block (test plumbing: moving inputs and results)."""
    old, counts.forbid = counts.forbid, 0
    try:
        yield
    finally:
        counts.forbid = old


@contextlib.contextmanager
def count_transfers():
    """Yields a dict filled on exit with the transfers made inside the block."""
    before = counts.snapshot()
    out = {}
    try:
        yield out
    finally:
        after = counts.snapshot()
        out.update({k: after[k] - before[k] for k in after})


# ---------------------------------------------------------------------------- the device
class Device:
    """Stands for ``cupy.cuda.Device``: one emulated device, id 0."""

    id = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def synchronize(self):
        pass

    def __repr__(self):
        return "<emulated CUDA Device 0>"


_DEVICE = Device()


class Flags:
    """CuPy's ``ndarray.flags``: only c_contiguous, f_contiguous, owndata (no ``writeable``)."""

    __slots__ = ("_f",)

    def __init__(self, f):
        self._f = f

    @property
    def c_contiguous(self):
        return self._f.c_contiguous

    @property
    def f_contiguous(self):
        return self._f.f_contiguous

    @property
    def owndata(self):
        return self._f.owndata

    def __getitem__(self, key):
        key = {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous", "OWNDATA": "owndata"}.get(key)
        if key is None:
            raise KeyError(key)
        return getattr(self, key)

    def __getattr__(self, name):
        raise AttributeError(
            f"CuPy's flags have no attribute {name!r} (only c_contiguous, f_contiguous, owndata): "
            "code that reads it fails on a GPU"
        )


def _refuse_host(x, what):
    raise TypeError(
        f"{what}: a NumPy array ({type(x).__name__} of shape {np.shape(x)}) where CuPy needs a device "
        "array; CuPy refuses host arrays here (upload it with xp.asarray, or keep small parameters "
        "on the host and pass them by value)"
    )


def _unwrap(x, what, allow_host=False):
    """DeviceArray -> its NumPy array; refuses NumPy arrays (unless ``allow_host``); recurses into lists/tuples."""
    if isinstance(x, DeviceArray):
        return x._a
    if isinstance(x, np.ndarray):
        if allow_host:
            return x
        _refuse_host(x, what)
    if isinstance(x, (list, tuple)):
        t = [_unwrap(v, what, allow_host) for v in x]
        return t if isinstance(x, list) else tuple(t)
    return x


def _wrap(r):
    """NumPy results -> DeviceArray (NumPy scalars become 0-d arrays, as CuPy's reductions give)."""
    if isinstance(r, np.ndarray):
        return DeviceArray(r)
    if isinstance(r, np.generic):
        return DeviceArray(np.asarray(r))
    if isinstance(r, tuple):
        return tuple(_wrap(v) for v in r)
    if isinstance(r, list):
        return [_wrap(v) for v in r]
    return r


def _index(key, what):
    """Unwrap an index; host arrays and lists in it are uploads (CuPy copies them to the device).

    A boolean mask sizes the result by its count of True: CuPy reads that back (a synchronisation).
    """
    def one(k):
        if isinstance(k, DeviceArray):
            if k.dtype == np.bool_ and k.ndim:
                _transfer("d2h", f"{what} with a boolean mask (CuPy reads the result size back)")
            return k._a
        if isinstance(k, np.ndarray) or isinstance(k, list):
            _transfer("h2d", f"{what} with a host index array")
            return np.asarray(k)
        return k

    return tuple(one(k) for k in key) if isinstance(key, tuple) else one(key)


def _binary(name, reflected=False):
    base = name[3:-2] if reflected else name[2:-2]
    op = getattr(operator, base + "_" if base in ("and", "or") else base)

    def method(self, other):
        if isinstance(other, np.ndarray):
            _refuse_host(other, f"ndarray.{name}")
        if (not reflected and not isinstance(other, DeviceArray)
                and getattr(other, "__array_priority__", -1.0) > DeviceArray.__array_priority__):
            return NotImplemented  # CuPy's _should_use_rop: the other type's reflected operator runs
        o = other._a if isinstance(other, DeviceArray) else other
        if isinstance(o, (list, tuple)):
            raise TypeError(f"ndarray.{name}: CuPy refuses {type(other).__name__} operands (upload first)")
        return _wrap(op(o, self._a) if reflected else op(self._a, o))

    method.__name__ = name
    return method


def _inplace(name):
    op = getattr(operator, name.strip("_"))

    def method(self, other):
        if isinstance(other, np.ndarray):
            _refuse_host(other, f"ndarray.{name}")
        o = other._a if isinstance(other, DeviceArray) else other
        op(self._a, o)
        return self

    method.__name__ = name
    return method


_PY_SCALARS = (int, float, bool, complex)  # with NumPy's scalar types: CuPy's scalar_type_set


class DeviceArray:
    """An array on the emulated device: ``cupy.ndarray``'s surface over a NumPy array."""

    __slots__ = ("_a", "__weakref__")
    __array_priority__ = 200  # NumPy defers binary operators to it, as to cupy.ndarray

    def __init__(self, a):
        self._a = a

    # -- what CuPy gives without touching the data
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    T = property(lambda self: DeviceArray(self._a.T))
    mT = property(lambda self: DeviceArray(np.swapaxes(self._a, -1, -2)))
    real = property(lambda self: DeviceArray(self._a.real))
    imag = property(lambda self: DeviceArray(self._a.imag))
    flags = property(lambda self: Flags(self._a.flags))
    device = property(lambda self: _DEVICE)
    base = property(lambda self: None if self._a.base is None else DeviceArray(self._a.base))

    def __len__(self):
        return len(self._a)

    def __iter__(self):  # CuPy yields 0-d device arrays
        for i in range(len(self._a)):
            yield _wrap(self._a[i])

    # -- device-to-host reads (each one synchronises on a GPU)
    def get(self, stream=None, order="C", out=None, blocking=True):
        _transfer("d2h", "ndarray.get()")
        return np.array(self._a, order=order)

    def item(self):
        _transfer("d2h", "ndarray.item()")
        return self._a.item()

    def tolist(self):
        _transfer("d2h", "ndarray.tolist()")
        return self._a.tolist()

    def tobytes(self, order="C"):
        _transfer("d2h", "ndarray.tobytes()")
        return self._a.tobytes(order)

    def __repr__(self):
        _transfer("d2h", "repr(device array)")
        return "emulated_" + repr(self._a)

    __str__ = __repr__

    def __format__(self, spec):
        _transfer("d2h", "format(device array)")
        return format(self._a, spec)

    # -- what CuPy refuses
    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed (as in CuPy). Please use `.get()` "
            "to construct a NumPy array explicitly."
        )

    def __index__(self):
        raise TypeError("a device array is not an index (CuPy arrays have no __index__): read it with int()")

    def __dlpack__(self, *a, **k):
        raise NotEmulated("DLPack export of the emulated device")

    def __reduce__(self):
        return (_rebuild, (self._a,))

    # -- indexing
    def __getitem__(self, key):
        return _wrap(self._a[_index(key, "ndarray.__getitem__")])

    def __setitem__(self, key, value):
        k = _index(key, "ndarray.__setitem__")
        if isinstance(value, DeviceArray):
            value = value._a
        elif isinstance(value, (np.ndarray, list, tuple)):
            _transfer("h2d", "ndarray.__setitem__ with a host value")
        self._a[k] = value

    # -- NumPy interoperability, as CuPy implements it
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc.__name__ not in surface()["namespace"]:
            return NotImplemented
        for x in inputs + tuple(kwargs.get("out") or ()):
            # CuPy: an operand of another array type (a sparse array, ...) gets its own turn
            if not (isinstance(x, (DeviceArray, np.ndarray, np.generic)) or type(x) in _PY_SCALARS):
                return NotImplemented
        for x in inputs:
            if isinstance(x, np.ndarray):
                _refuse_host(x, f"numpy.{ufunc.__name__}")
        ins = [_unwrap(x, ufunc.__name__) for x in inputs]
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(_unwrap(o, ufunc.__name__) for o in out)
        r = getattr(ufunc, method)(*ins, **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(r)

    def __array_function__(self, func, types, args, kwargs):
        # CuPy: numpy.<mod>.<name>(device arrays) runs cupy.<mod>.<name>, else NotImplemented
        path = func.__module__.split(".")[1:]
        target = xp
        try:
            for part in path:
                target = getattr(target, part)
            impl = getattr(target, func.__name__)
        except AttributeError:
            return NotImplemented
        if not all(issubclass(t, (DeviceArray, np.ndarray)) for t in types):
            return NotImplemented  # CuPy: only its own arrays and NumPy's (_HANDLED_TYPES)
        return impl(*args, **kwargs)

    # -- every other attribute: only CuPy's, computed by NumPy
    def __getattr__(self, name):
        if name not in _ndarray_names():
            raise AttributeError(
                f"cupy.ndarray has no attribute {name!r}: code that uses it runs on NumPy arrays only "
                "and fails on a GPU"
            )
        attr = getattr(self._a, name, None)
        if attr is None:
            raise NotEmulated(f"cupy.ndarray.{name} is not emulated")
        if not callable(attr):
            return _wrap(attr)

        params = surface()["ndarray_methods"].get(name)

        @functools.wraps(attr)
        def method(*args, **kwargs):
            _check_call("ndarray.", name, params, args, kwargs)
            if name in _DATA_SIZED:
                _transfer("d2h", f"ndarray.{name}(): its output size depends on the data (CuPy reads it back)")
            args = _unwrap(args, f"ndarray.{name}")
            kwargs = {k: _unwrap(v, f"ndarray.{name}") for k, v in kwargs.items()}
            r = attr(*args, **kwargs)
            return self if r is None and name in ("sort", "fill", "put") else _wrap(r)

        return method


for _n in ("__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__", "__and__",
           "__or__", "__xor__", "__lshift__", "__rshift__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__",
           "__ne__", "__matmul__"):
    setattr(DeviceArray, _n, _binary(_n))
for _n in ("__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__", "__rmod__", "__rpow__",
           "__rand__", "__ror__", "__rxor__", "__rlshift__", "__rrshift__", "__rmatmul__"):
    setattr(DeviceArray, _n, _binary(_n, reflected=True))
for _n in ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__",
           "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__"):
    setattr(DeviceArray, _n, _inplace(_n))
def _read_as(convert):
    def method(self):
        _transfer("d2h", f"{convert.__name__}(device array)")
        return convert(self._a)

    return method


for _conv in (int, float, complex, bool):  # each a device-to-host read, as on a GPU
    setattr(DeviceArray, f"__{_conv.__name__}__", _read_as(_conv))
DeviceArray.__neg__ = lambda self: DeviceArray(-self._a)
DeviceArray.__pos__ = lambda self: DeviceArray(+self._a)
DeviceArray.__abs__ = lambda self: DeviceArray(abs(self._a))
DeviceArray.__invert__ = lambda self: DeviceArray(~self._a)
DeviceArray.__hash__ = None


def _rebuild(a):
    return DeviceArray(a)


@functools.lru_cache(maxsize=None)
def _ndarray_names():
    return frozenset(surface()["ndarray"])


# ---------------------------------------------------------------------------- the namespace
def _check_call(path, name, params, args, kwargs):
    if params is None or params == "ufunc":
        if params == "ufunc":
            bad = set(kwargs) - {"out", "dtype", "casting"}
            if bad:
                raise TypeError(f"cupy.{name} (a ufunc) takes no keyword {sorted(bad)[0]!r}")
        return
    named = [p for p in params if p not in ("*", "**")]
    if "**" not in params:
        for k in kwargs:
            if k not in named:
                raise TypeError(f"cupy.{path}{name}() got an unexpected keyword argument {k!r} "
                                f"(its parameters: {', '.join(named)})")
    if "*" not in params and len(args) > len(named):
        raise TypeError(f"cupy.{path}{name}() takes {len(named)} arguments; {len(args)} given")


class _Namespace:
    """``cupy`` (or one of its submodules) on the emulated device, computed by NumPy."""

    def __init__(self, path, numpy_mod):
        self._path = path  # '' for cupy itself, else 'linalg.' etc.
        self._np = numpy_mod
        self.__name__ = "cupy_emulated" + ("." + path.rstrip(".") if path else "")

    @property
    def _table(self):
        s = surface()
        return s["namespace"] if not self._path else s["submodules"][self._path.rstrip(".")]

    def __repr__(self):
        return f"<module {self.__name__!r} (the emulated CUDA device)>"

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        full = self._path + name
        if any(sub == full or sub.startswith(full + ".") for sub in _SUBMODULES):
            ns = _Namespace(full + ".", getattr(self._np, name))
            self.__dict__[name] = ns
            return ns
        if not self._path and name == "ndarray":
            return DeviceArray
        if not self._path and name == "cuda":
            return _Cuda
        table = self._table
        if name not in table:
            raise AttributeError(
                f"cupy{'.' + self._path.rstrip('.') if self._path else ''} has no attribute {name!r}: "
                "a NumPy-only name fails on a GPU"
            )
        kind = table[name]
        npobj = getattr(self._np, name, None)
        if npobj is None:
            raise NotEmulated(f"cupy.{full} is not emulated")
        if kind == "value":
            return npobj
        fn = self._function(name, kind, npobj)
        self.__dict__[name] = fn
        return fn

    def _function(self, name, params, npobj):
        path = self._path
        transfer = not path and name in _TRANSFER_FUNCS
        where = f"cupy.{path}{name}"

        def call(*args, **kwargs):
            _check_call(path, name, params, args, kwargs)
            if transfer and args and not isinstance(args[0], DeviceArray):
                _transfer("h2d", f"{where}() of host data")
                args = (_unwrap(args[0], where, allow_host=True),) + tuple(_unwrap(a, where) for a in args[1:])
            else:
                args = _unwrap(args, where)
            kwargs = {k: _unwrap(v, where) for k, v in kwargs.items()}
            if not path and (name in _DATA_SIZED or (name == "where" and len(args) == 1)):
                _transfer("d2h", f"{where}(): its output size depends on the data (CuPy reads it back)")
            r = npobj(*args, **kwargs)
            if name in ("empty", "empty_like") and isinstance(r, np.ndarray) and r.size:
                ctypes.memset(r.ctypes.data, POISON, r.nbytes)  # a GPU's fresh memory is garbage
            return _wrap(r)

        call.__name__ = name
        call.__qualname__ = where
        return call


class _Cuda:
    """The bits of ``cupy.cuda`` the library touches: one device, streams that do nothing."""

    Device = staticmethod(lambda device=None: _DEVICE)

    class Stream:
        """``cupy.cuda.Stream``: the emulated device runs work at once, so a stream orders nothing."""

        def __init__(self, null=False, non_blocking=False, ptds=False, priority=None):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def synchronize(self):
            pass

        def is_capturing(self):
            return False

    class runtime:
        @staticmethod
        def getDevice():
            return 0

        @staticmethod
        def getDeviceCount():
            return 1

        @staticmethod
        def deviceSynchronize():
            pass


xp = _Namespace("", np)
"""Stands for the ``cupy`` module on the emulated device."""


# ---------------------------------------------------------------------------- moving data
def is_device_array(a):
    return isinstance(a, DeviceArray)


def to_device(x):
    """Upload a NumPy array to the emulated device; counted as a transfer."""
    if isinstance(x, DeviceArray):
        return x
    _transfer("h2d", "to_device")
    return DeviceArray(np.array(x, copy=True))


def to_host(x):
    """The NumPy form of a device array (a device-to-host copy, also inside tuples); other objects unchanged."""
    if isinstance(x, DeviceArray):
        return x.get()
    if isinstance(x, tuple):
        return tuple(to_host(v) for v in x)
    return x


def host_view(a):
    """The NumPy array behind a device array, without a transfer: for the emulator's own checks only."""
    return a._a if isinstance(a, DeviceArray) else a


def _main(argv=None):
    import sys

    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--write-surface"]:
        with open(SURFACE_PATH, "w", encoding="utf-8") as f:
            json.dump(generate_surface(), f, indent=0, sort_keys=True, separators=(",", ":"))
            f.write("\n")
        print("wrote", SURFACE_PATH)
        return 0
    print("usage: python -m coosparse.testing.device --write-surface")
    return 2


if __name__ == "__main__":
    raise SystemExit(_main())
