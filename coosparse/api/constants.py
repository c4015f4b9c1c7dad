"""The Array API's constants, version and inspection object (``__array_namespace_info__``)."""
from __future__ import annotations

import math

import numpy as np

from .._core.dispatch import API_VERSION
from .dtypes import _NAMES, isdtype

__array_api_version__ = API_VERSION

# ---------------------------------------------------------------------------------- constants
e = math.e
inf = math.inf
nan = math.nan
pi = math.pi
newaxis = None


# ---------------------------------------------------------------------------------- inspection
class ArrayNamespaceInfo:
    """What ``coosparse.__array_namespace_info__()`` returns (Array API inspection).

    Examples
    --------
    >>> import coosparse
    >>> info = coosparse.__array_namespace_info__()
    >>> info.default_device(), info.default_dtypes()["real floating"]
    ('cpu', dtype('float64'))
    """

    def capabilities(self):
        """Boolean indexing and data-dependent shapes are supported; any number of dimensions."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self):
        return "cpu"

    def devices(self):
        """'cpu', then 'cuda:N' for every GPU CuPy sees (CuPy is imported only when installed)."""
        out = ["cpu"]
        import importlib.util

        if importlib.util.find_spec("cupy") is not None:
            try:
                import cupy

                out += [f"cuda:{i}" for i in range(cupy.cuda.runtime.getDeviceCount())]
            except Exception:  # a CuPy without a driver or device: CPU only
                pass
        return out

    def _check_device(self, device):
        if device is not None and str(device) not in self.devices():
            raise ValueError(f"unknown device {device!r}; devices: {self.devices()}")

    def default_dtypes(self, *, device=None):
        self._check_device(device)
        return {"real floating": np.dtype(np.float64), "complex floating": np.dtype(np.complex128),
                "integral": np.dtype(np.int64), "indexing": np.dtype(np.int64)}

    def dtypes(self, *, device=None, kind=None):
        """Name -> dtype of the Array API dtypes of ``kind`` (None: all; a kind name or a tuple)."""
        self._check_device(device)
        out = {}
        for name in _NAMES:
            dt = np.dtype(name)
            if kind is None or isdtype(dt, kind):
                out[name] = dt
        return out


def __array_namespace_info__():
    """The Array API inspection object (capabilities, devices, default dtypes, dtypes)."""
    return ArrayNamespaceInfo()
