"""A kernel family's module, imported when a row of the Numba layer first uses it."""
import importlib
import sys

from . import cache as _cache
from . import notice as _notice


class Family:
    """A stand-in for the family module ``family``, bound to the name ``alias`` in ``namespace``.

    At the first attribute read it imports the module and puts it in ``namespace`` in its own
    place, so later calls read the module directly. Importing a family builds its kernels'
    dispatchers (the first import also imports Numba): a call pays only for the families it
    uses, and an operation that needs no kernel imports none.
    """

    def __init__(self, namespace, alias, family):
        self._namespace, self._alias, self._family = namespace, alias, family

    def __getattr__(self, attr):
        _notice.install()  # before any kernel compiles: a long first compile is announced
        _cache.install_compile_hook()
        module = importlib.import_module(f"{__package__}.{self._family}")
        # the family and the families it imports load their cached kernels without Numba's refresh
        prefix = f"{__package__}."
        _cache.load_lightly([m for k, m in list(sys.modules.items()) if m is not None and k.startswith(prefix)])
        self._namespace[self._alias] = module
        return getattr(module, attr)
