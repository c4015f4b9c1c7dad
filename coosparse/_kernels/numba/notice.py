"""A one-time notice when a call waits for its kernels to compile.

With an empty Numba cache (a new environment, a CI job, a container, a Dask
worker image, an upgrade) a first call compiles the kernels it needs, which can
take seconds and would otherwise look like a hang. When coosparse's kernels
have been compiling for more than about a second (``COOSPARSE_COMPILE_NOTICE``
seconds, default 1), a WARNING goes to the ``coosparse`` logger, once per
process, naming what is being compiled and saying that it is cached for later
calls and sessions. Python prints an unhandled WARNING to stderr.

Silence it with ``COOSPARSE_COMPILE_NOTICE=0`` (set before the first call) or
by raising the logger's level (``logging.getLogger("coosparse").setLevel(logging.ERROR)``).
"""
from __future__ import annotations

import logging
import os
import threading
import time

log = logging.getLogger("coosparse")

DEFAULT_SECONDS = 1.0
_GAP = 0.5  # compilations this close together belong to one wait

_lock = threading.Lock()
_state = {"installed": False, "shown": False, "depth": 0, "since": None, "last_end": 0.0, "kernels": [],
          "timer": None}


def threshold():
    """Seconds of compiling before the notice (None: silenced), from ``COOSPARSE_COMPILE_NOTICE``."""
    raw = os.environ.get("COOSPARSE_COMPILE_NOTICE", "").strip().lower()
    if raw in ("", "1", "on", "true", "yes"):
        return DEFAULT_SECONDS
    if raw in ("0", "off", "false", "no"):
        return None
    try:
        seconds = float(raw)
    except ValueError:
        return DEFAULT_SECONDS
    return seconds if seconds > 0 else None


def _ours(dispatcher):
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    return module.startswith("coosparse._kernels.numba.")


def _name(dispatcher):
    fn = dispatcher.py_func
    return f"{fn.__module__.rpartition('.')[2]}.{fn.__qualname__}"


def _cache_dir(dispatcher):
    try:  # Numba's cache locator: private, so only a hint in the message
        return dispatcher._cache._cache_path
    except AttributeError:
        return None


def message(kernels, cache_dir=None):
    """The notice's text for ``kernels`` (names, in compile order)."""
    names = ", ".join(dict.fromkeys(kernels))
    where = f" in {cache_dir}" if cache_dir else ""
    return (f"coosparse: compiling Numba kernels for this call ({names}). This happens once: they are "
            f"cached{where}, and later calls and sessions load them in milliseconds. "
            "`python -m coosparse warmup` compiles the common kernels ahead of time; set "
            "COOSPARSE_COMPILE_NOTICE=0 to silence this notice.")


def _fire():
    with _lock:
        st = _state
        st["timer"] = None
        busy = st["depth"] > 0 or time.monotonic() - st["last_end"] < _GAP
        if st["shown"] or not busy:
            st["since"] = None
            return
        st["shown"] = True
        kernels, cache_dir = list(st["kernels"]), st.get("cache_dir")
    log.warning(message(kernels, cache_dir))


def _on_start(dispatcher):
    with _lock:
        st = _state
        if st["shown"] or not _ours(dispatcher):
            return
        st["depth"] += 1
        now = time.monotonic()
        if st["since"] is None or (st["depth"] == 1 and now - st["last_end"] > _GAP):
            st["since"], st["kernels"] = now, []
        st["kernels"].append(_name(dispatcher))
        st.setdefault("cache_dir", _cache_dir(dispatcher))
        seconds = threshold()
        if st["timer"] is None and seconds is not None:
            timer = threading.Timer(max(seconds - (now - st["since"]), 0.0), _fire)
            timer.daemon = True
            st["timer"] = timer
            timer.start()


def _on_end(dispatcher):
    with _lock:
        st = _state
        if st["shown"] or not _ours(dispatcher) or st["depth"] == 0:
            return
        st["depth"] -= 1
        st["last_end"] = time.monotonic()


def install():
    """Listen to Numba's compilations (once per process; before the first kernel module loads)."""
    with _lock:
        if _state["installed"]:
            return
        _state["installed"] = True
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev):
            _on_start(ev.data["dispatcher"])

        def on_end(self, ev):
            _on_end(ev.data["dispatcher"])

    event.register("numba:compile", _Listener())
