"""The tables through which ``COO`` reaches its operations, filled by the op modules when imported.

``COO`` (this layer) does not import its operations: they import ``COO``. Its
methods and protocols look the operations up here instead, and each op module
registers what it implements when it is imported (``import coosparse`` imports
them all):

- :data:`HANDLED_FUNCTIONS`: NumPy function -> implementation, for
  ``COO.__array_function__`` (``np.sum(a)``, and ``a.sum()``, which calls it);
  filled with :func:`implements`.
- :data:`OPERATIONS`: named operations that have no NumPy function
  (``coalesce``, ``to_dense``, ``getitem``, the operator hooks, ...), read
  by attribute (``OPERATIONS.coalesce``); filled with :func:`operation`.
- :data:`FOREIGN`: other libraries' array types an operation accepts as
  operands (scipy.sparse, torch): a test and a conversion to ``COO`` (or a
  dense array) each, registered by the bridges (``coosparse.interop``).
"""
from __future__ import annotations

import threading

import numpy as np

API_VERSION = "2024.12"
"""The Array API version ``coosparse`` declares (``__array_api_version__``)."""

API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


def check_api_version(api_version):
    """ValueError unless ``api_version`` is None or a version this namespace serves."""
    if api_version is not None and api_version not in API_VERSIONS:
        raise ValueError(f"coosparse implements the Array API versions {', '.join(API_VERSIONS)}; "
                         f"got api_version={api_version!r}")


# ---- NumPy functions -----------------------------------------------------------------------------
HANDLED_FUNCTIONS = {}
"""NumPy function -> coosparse implementation (same signature, NumPy's keywords)."""


def _register(table, key, fn, what):
    old = table.get(key)
    if old is not None and old is not fn:  # two op modules claiming one entry: a merge slip
        raise RuntimeError(f"{what} is registered twice: {old.__module__}.{old.__qualname__} and "
                           f"{fn.__module__}.{fn.__qualname__}")
    table[key] = fn


def implements(*numpy_functions):
    """Decorator: ``fn`` answers each of ``numpy_functions`` for COO arguments."""
    def register(fn):
        for f in numpy_functions:
            _register(HANDLED_FUNCTIONS, f, fn, repr(f))
        return fn
    return register


class DenseConversionError(TypeError):
    """``np.asarray(a)`` of a COO: it is never converted to a dense array implicitly."""


_FALLING_BACK = threading.local()


def _needs_dense(e):
    """``e`` (or an exception it was raised from) is a refused dense conversion or a missing COO attribute."""
    while e is not None:
        if isinstance(e, DenseConversionError):
            return True
        if isinstance(e, AttributeError) and type(getattr(e, "obj", None)).__name__ == "COO":
            return True
        e = e.__cause__ or e.__context__
    return False


def array_function(func, types, args, kwargs):
    """``COO.__array_function__``: the registered implementation; else NumPy's own implementation
    when it can serve the call from the array's protocol alone; else TypeError naming ``func``.

    NumPy's ``_implementation`` of a function runs on the COO as it is: what it reaches is
    either answered for COO (attributes such as ``shape`` and ``dtype``, NumPy functions
    this table holds, ufuncs) or refused (a dense conversion, a missing attribute), and a
    refusal becomes the TypeError below. A function already falling back further up the
    stack is refused rather than run again.
    """
    impl = HANDLED_FUNCTIONS.get(func)
    if impl is not None:
        return impl(*args, **kwargs)
    name = getattr(func, "__name__", repr(func))
    module = getattr(func, "__module__", None) or "numpy"
    name = f"{module}.{name}" if module.startswith("numpy.") else f"numpy.{name}"
    refusal = (f"{name} is not supported for coosparse.COO arrays; convert with .to_dense() "
               "first, or see the list of supported functions in the docs (NumPy users page)")
    fallback = getattr(func, "_implementation", None)
    running = _FALLING_BACK.__dict__.setdefault("funcs", set())
    if fallback is None or func in running:
        raise TypeError(refusal)
    running.add(func)
    try:
        return fallback(*args, **kwargs)
    except Exception as e:
        if _needs_dense(e):
            raise TypeError(refusal) from None
        raise
    finally:
        running.discard(func)


# ---- named operations ----------------------------------------------------------------------------
class _Operations:
    """Name -> operation; read as attributes (``OPERATIONS.coalesce(a)``)."""

    def __init__(self):
        self.__dict__["_table"] = {}

    def register(self, name, fn):
        _register(self._table, name, fn, f"operation {name!r}")
        return fn

    def __getattr__(self, name):
        try:
            return self.__dict__["_table"][name]
        except KeyError:
            raise AttributeError(f"the coosparse operation {name!r} is not registered: its op module was "
                                 "not imported (import coosparse imports them all)") from None

    def __setattr__(self, name, value):
        raise AttributeError("register operations with coosparse._core.dispatch.operation")


OPERATIONS = _Operations()


def operation(name=None):
    """Decorator: register ``fn`` as the operation ``name`` (default: its own name)."""
    def register(fn):
        return OPERATIONS.register(name or fn.__name__, fn)
    return register


# ---- other libraries' arrays ---------------------------------------------------------------------
FOREIGN = {}
"""Kind ('scipy', 'torch', ...) -> (accepts(x) -> bool, convert(x) -> COO or dense array)."""


FOREIGN_TYPES = {}
"""Kind -> test of a type, for the kinds whose arrays implement ``__array_function__`` themselves
(pydata/sparse): ``COO.__array_function__`` answers NumPy's functions over them instead of deferring."""


def register_foreign(kind, accepts, convert, accepts_type=None):
    """Let operations accept another library's arrays of ``kind`` (the bridges call this)."""
    _register(FOREIGN, kind, (accepts, convert), f"foreign array kind {kind!r}")
    if accepts_type is not None:
        _register(FOREIGN_TYPES, kind, accepts_type, f"foreign array type {kind!r}")


def is_foreign_type(t):
    """``t`` is the type of a registered library's arrays (see :data:`FOREIGN_TYPES`)."""
    return any(test(t) for test in FOREIGN_TYPES.values())


def foreign_kind(x, kinds=None):
    """The registered kind that accepts ``x`` (among ``kinds``, default all), or None."""
    for kind, (accepts, _) in FOREIGN.items():
        if (kinds is None or kind in kinds) and accepts(x):
            return kind
    return None


def from_foreign(x, kind):
    """``x`` converted by the bridge of ``kind``."""
    return FOREIGN[kind][1](x)


SPARSE_FOREIGN = ("scipy", "pydata")
"""The kinds of other libraries' *sparse* arrays: operations take them as the COO they convert to."""


def sparse_operand(x):
    """``x``, or the COO that a scipy.sparse or pydata/sparse array converts to (never densified)."""
    if type(x) is np.ndarray:  # (the common operand, without asking each bridge)
        return x
    kind = foreign_kind(x, SPARSE_FOREIGN)
    return x if kind is None else from_foreign(x, kind)
