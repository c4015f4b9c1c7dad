"""The Numba (CPU) kernel layer: ``layer.py`` (the kernel API rows) over one module of kernels per family.

Importing it prepares Numba's cache directory for read-only installs
(``cache.py``) without importing Numba; ``layer.py`` imports Numba and each
family's kernel module at the first call that needs it.
"""
from .cache import configure_cache_dir

configure_cache_dir()
