"""Moving arrays between the CPU and CUDA devices."""
from __future__ import annotations


def _parse(device):
    d = str(device)
    if d == "cpu":
        return "cpu", None
    if d == "cuda":
        return "cuda", None
    if d.startswith("cuda:") and d[5:].isdigit():
        return "cuda", int(d[5:])
    raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N'; got {device!r}")


def to_device(a, device):
    """Copy of COO ``a`` on ``device`` (``a`` itself when already there); flags kept."""
    kind, ordinal = _parse(device)
    here = a.device
    if kind == "cpu":
        if here == "cpu":
            return a
        return a._with(a.indices.get(), a.values.get())  # synchronize!
    import cupy

    target = cupy.cuda.Device(ordinal if ordinal is not None else cupy.cuda.runtime.getDevice())
    if here == f"cuda:{target.id}":
        return a
    with target:
        return a._with(cupy.asarray(a.indices), cupy.asarray(a.values))
