"""NumPy's function protocol for COO: one table of the NumPy functions coosparse answers.

Op modules register their implementations with :func:`implements` when they
are imported (``import coosparse`` imports them all), so ``np.sum(a)`` or
``np.concatenate([a, b])`` reach coosparse's own function. ``COO`` itself knows
nothing of the table beyond calling :func:`array_function`.
"""
from __future__ import annotations

HANDLED_FUNCTIONS = {}
"""NumPy function -> coosparse implementation (same signature, NumPy's keywords)."""


def implements(*numpy_functions):
    """Decorator: ``fn`` answers each of ``numpy_functions`` for COO arguments."""
    def register(fn):
        for f in numpy_functions:
            old = HANDLED_FUNCTIONS.get(f)
            if old is not None and old is not fn:  # two op modules claiming one function: a merge slip
                raise RuntimeError(f"{f!r} is registered twice: {old.__module__}.{old.__qualname__} and "
                                   f"{fn.__module__}.{fn.__qualname__}")
            HANDLED_FUNCTIONS[f] = fn
        return fn
    return register


def array_function(func, types, args, kwargs):
    """``COO.__array_function__``: the registered implementation, or TypeError naming ``func``."""
    impl = HANDLED_FUNCTIONS.get(func)
    if impl is None:
        name = getattr(func, "__name__", repr(func))
        raise TypeError(
            f"numpy.{name} is not supported for coosparse.COO arrays; convert with .to_dense() "
            "first, or see the list of supported functions in the docs (NumPy users page)"
        )
    return impl(*args, **kwargs)
