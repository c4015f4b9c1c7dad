"""Dask finds coosparse without being told: the ``dask.sizeof`` entry point.

Dask runs every ``dask.sizeof`` entry point when ``dask`` is imported (in the
client and in each worker process). coosparse's (pyproject.toml,
``[project.entry-points."dask.sizeof"]``) is :func:`dask_sizeof_plugin`:

- it registers ``sizeof`` for :class:`coosparse.COO` (index and value bytes),
  which the distributed scheduler's memory accounting and spilling need;
- it registers the ``dask.array`` dispatch tables (:func:`coosparse.dask.register`)
  as soon as ``dask.array`` has been imported. Importing ``dask.array`` from
  here would be circular (``dask`` is half imported when the plugin runs), so a
  one-shot import hook waits for it.

It imports neither Dask nor :mod:`coosparse.dask` (which imports ``dask.array``) until
``dask.array`` is there.
"""
from __future__ import annotations

import importlib.abc
import sys

from ._dask_sizeof import register_sizeof


def dask_sizeof_plugin(sizeof):
    """The ``dask.sizeof`` entry point: ``sizeof`` now, ``dask.array`` tables when it loads."""
    register_sizeof(sizeof)
    mod = sys.modules.get("dask.array")
    if mod is not None and hasattr(mod, "Array"):
        _register_array()
    elif not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport("dask.array", _register_array))


def _register_array():
    # The Dask entry point: coosparse.dask registers its tables with dask.array when imported, so
    # it is imported only once dask.array is (at the plugin's run, dask itself is half imported).
    from .dask import register

    register()


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs ``callback()`` right after the module ``name`` has been executed (once)."""

    def __init__(self, name, callback):
        self.name, self.callback = name, callback

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)  # one shot, and no recursion below
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _ThenCall(spec.loader, self.callback)
        return spec


class _ThenCall(importlib.abc.Loader):
    """A loader that runs the real one, then the callback (whose errors only warn)."""

    def __init__(self, loader, callback):
        self._loader, self._callback = loader, callback

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            self._callback()
        except Exception as e:  # never break the user's import of dask.array
            import warnings

            warnings.warn(f"coosparse could not register its chunk type with dask.array: {e!r}",
                          RuntimeWarning, stacklevel=2)

    def __getattr__(self, name):  # get_source, get_filename, ... of the real loader
        return getattr(self._loader, name)
