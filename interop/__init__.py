"""Layer 4, bridges to other libraries: :mod:`coosparse.interop.scipy` and
:mod:`coosparse.interop.torch`. Each imports its library lazily, on first use.

Importing this package (``import coosparse`` does) registers the bridges with the
operations: scipy.sparse arrays and torch tensors are accepted by
:func:`coosparse.asarray`, scipy.sparse arrays as operands of the elementwise
functions, and ``COO.to_scipy`` works.
"""
import sys

from .._core.dispatch import register_foreign
from . import pydata, scipy  # noqa: F401  (each registers itself)


def _is_torch_tensor(x):
    # by isinstance through sys.modules, without importing torch: a torch.Size (a tuple, module
    # "torch") is a shape, not a tensor; no tensor exists before torch is imported
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _from_torch(x):
    from .torch import from_torch  # optional dependency: torch is imported only for a torch tensor

    return from_torch(x, copy=True)


register_foreign("torch", _is_torch_tensor, _from_torch)
