"""Devices: parsing a device argument, and moving a COO's arrays between the CPU and a GPU.

Devices are ``'cpu'``, ``'cuda'`` (the current GPU) and ``'cuda:N'``, and the
test suite's emulated GPU ``'cuda-emulated'`` (:mod:`coosparse.testing.device`).
"""
from __future__ import annotations

from .._kernels.backend import EMULATED_DEVICE


def parse_device(device):
    """('cpu' | 'cuda' | 'cuda-emulated', ordinal or None), or ValueError."""
    d = str(device)
    if d in ("cpu", "cuda", EMULATED_DEVICE):
        return d, None
    if d.startswith("cuda:") and d[5:].isdigit():
        return "cuda", int(d[5:])
    raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N'; got {device!r}")


def normal_device(device):
    """The device string a COO there reports (``a.device``): 'cuda' becomes 'cuda:<current>'."""
    kind, ordinal = parse_device(device)
    if kind != "cuda":
        return kind
    if ordinal is None:
        import cupy  # optional dependency: only a request for a GPU needs it

        ordinal = cupy.cuda.runtime.getDevice()
    return f"cuda:{ordinal}"


def to_device(a, device):
    """Copy of COO ``a`` on ``device`` (``a`` itself when already there); flags and fill kept."""
    kind, ordinal = parse_device(device)
    here = a.device
    if kind == "cpu":
        if here == "cpu":
            return a
        return a._with(a.indices.get(), a.values.get())  # synchronize!
    if kind == EMULATED_DEVICE:
        if here == EMULATED_DEVICE:
            return a
        from ..testing import device as emulated  # the test suite's device: loaded only when asked for

        return a._with(emulated.to_device(a.indices), emulated.to_device(a.values))
    import cupy  # optional dependency: only a move to a GPU needs it

    target = cupy.cuda.Device(ordinal if ordinal is not None else cupy.cuda.runtime.getDevice())
    if here == f"cuda:{target.id}":
        return a
    with target:
        return a._with(cupy.asarray(a.indices), cupy.asarray(a.values))
