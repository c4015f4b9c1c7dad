"""Where Numba caches the compiled kernels: read-only installs included.

Every kernel is ``@njit(cache=True)``. Numba writes the cache next to the
source (``coosparse/_kernels/numba/__pycache__``) and, when that is not writable, in
its user-wide directory (``~/.cache/numba``). When neither is writable (a
system or container install with a read-only package directory and no
writable home), Numba refuses to decorate the kernels ("cannot cache
function"). :func:`configure_cache_dir` runs before any kernel module is
imported and then points Numba at a writable directory under the system's
temporary directory. ``NUMBA_CACHE_DIR`` set by the user always wins.

:func:`load_lightly` lets the kernels load from that cache without Numba's
full context refresh (see below).
"""
from __future__ import annotations

import os
import sys
import tempfile


def _writable(directory):
    """True when a file can be created in ``directory`` (created if missing)."""
    try:
        os.makedirs(directory, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError:
        return False
    return True


def _numba_user_dir():
    try:
        from numba.misc.appdirs import AppDirs

        return AppDirs(appname="numba", appauthor=False).user_cache_dir
    except Exception:  # a private helper that moved: treat as unusable
        return None


def configure_cache_dir(package_dir=None, user_dir=None):
    """Point Numba's cache at a writable directory when its own choices are read-only.

    Returns the directory chosen, or None when nothing needed changing (the user
    set ``NUMBA_CACHE_DIR``, or Numba's in-tree or user-wide cache is writable).
    ``package_dir`` / ``user_dir`` default to Numba's two locations (tests pass others).
    Numba itself is imported only on the read-only path (to find its user-wide
    directory and set its config): importing the kernel layer stays light.
    """
    config = sys.modules.get("numba.core.config")
    if (config.CACHE_DIR if config is not None else os.environ.get("NUMBA_CACHE_DIR")):
        return None
    package_dir = package_dir or os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")
    if _writable(package_dir):
        return None
    from numba.core import config

    if config.CACHE_DIR:
        return None
    user_dir = user_dir or _numba_user_dir()
    if user_dir and _writable(user_dir):
        return None
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    fallback = os.path.join(tempfile.gettempdir(), f"coosparse-numba-cache-{uid}")
    if _writable(fallback):
        config.CACHE_DIR = fallback
        return fallback
    return None


# ---- loading cached kernels ----------------------------------------------------------------------
# Numba refreshes its target context before every cache load: the first refresh of a process
# imports all of Numba's typing and lowering registries (NumPy, linear algebra, random,
# typed containers, jitclass...) and, through numba.np.arraymath, scipy.linalg: about 0.3 s of a
# warm process's first call, spent on tables only the compiler reads. Loading machine code from
# the cache needs the runtime (NRT) alone. Our kernels' caches load after initialising just that;
# a load that fails that way takes Numba's own path, and any compilation refreshes in full
# (Numba's compiler does), so nothing else changes.
_light_modules = set()


def _load_light(cache, sig, target_context):
    try:
        from numba.core.runtime import rtsys

        rtsys.initialize(target_context)
        with cache._guard_against_spurious_io_errors():
            return cache._load_overload(sig, target_context)
    except Exception:  # a Numba whose internals moved, or a symbol only a refresh defines
        return type(cache).load_overload(cache, sig, target_context)


def _no_extensions():
    pass


def load_lightly(modules):
    """Let the kernels of ``modules`` load from Numba's cache without a full refresh (once each).

    Their first call also skips loading third-party Numba extensions: before a dispatcher's first
    compile or cache load Numba runs every installed package's ``numba_extensions`` entry point
    (once per process), which imported pydata/sparse when it is installed (about 0.07 s of CPU,
    0.25-0.35 s of wall time at load 4, at every process's first call). Our kernels use no
    third-party types; a compilation still loads the extensions (the compiler's refresh does), and
    so does the first call of any other jitted function (the user's, another library's).
    """
    import functools

    from numba.core.caching import Cache
    from numba.core.dispatcher import Dispatcher

    for module in modules:
        if module.__name__ in _light_modules:
            continue
        _light_modules.add(module.__name__)
        for obj in vars(module).values():
            if not isinstance(obj, Dispatcher):
                continue
            if hasattr(obj, "_compilation_chain_init_hook"):
                obj._compilation_chain_init_hook = _no_extensions
            cache = getattr(obj, "_cache", None)
            if isinstance(cache, Cache) and hasattr(cache, "_load_overload"):
                cache.load_overload = functools.partial(_load_light, cache)


# ---- the first compilation of a process ------------------------------------------------------------
# The compiler's first refresh imports numba.np.arraymath, whose import asks whether BLAS is there by
# importing scipy.linalg (with SciPy's array-API layer and numpy.f2py: ~0.25-0.3 s of CPU, a third of
# Numba's fixed cost at a process's first compile). The answer only picks np.dot's implementation
# inside jitted code, and Numba asks again (importing scipy.linalg for real, with its clear error)
# when such code compiles. So before our first compilation arraymath is imported with that question
# answered by whether SciPy is installed, without importing it.
_hook = {"installed": False}


def _blas_installed():
    import importlib.util

    if importlib.util.find_spec("scipy") is None:
        raise ImportError("scipy 0.16+ is required for linear algebra")


def import_arraymath_lightly():
    """Import ``numba.np.arraymath`` without importing scipy.linalg (no-op when already imported).

    Runs under Numba's compiler lock (from a compile event), so no other compilation sees the
    stand-in; any failure leaves the import to Numba's compiler.
    """
    if "numba.np.arraymath" in sys.modules:
        return
    try:
        from numba.np import linalg

        original = linalg.ensure_blas
    except Exception:  # a Numba whose internals moved: its own import happens at the compile
        return
    linalg.ensure_blas = _blas_installed
    try:
        from numba.np import arraymath

        arraymath.ensure_blas = original
    except Exception:
        sys.modules.pop("numba.np.arraymath", None)  # Numba imports it again, its own way
    finally:
        linalg.ensure_blas = original


def install_compile_hook():
    """Before a coosparse kernel's compilation starts: :func:`import_arraymath_lightly` (once)."""
    if _hook["installed"]:
        return
    _hook["installed"] = True
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev):
            fn = getattr(ev.data["dispatcher"], "py_func", None)
            if (getattr(fn, "__module__", "") or "").startswith("coosparse._kernels.numba."):
                import_arraymath_lightly()

        def on_end(self, ev):
            pass

    event.register("numba:compile", _Listener())
