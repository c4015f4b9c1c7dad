"""The Numba (CPU) kernel layer: ``layer.py`` (the kernel API rows) over one module of kernels per family.

Importing it (at the first kernel call) prepares Numba for the kernel modules:
a writable cache directory on read-only installs (``cache.py``) and a
fork-safe threading layer (``threads.py``).
"""
from .cache import configure_cache_dir
from .threads import configure_threading_layer

configure_cache_dir()
configure_threading_layer()
