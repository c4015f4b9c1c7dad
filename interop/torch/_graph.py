"""``graph_break``: how the bridge's sparse-facing functions meet ``torch.compile``.

Dynamo, FakeTensor and functionalization do not trace sparse COO tensors, and
these functions hand tensors to NumPy/CuPy through DLPack (a fake tensor has no
data). A function marked here is a graph break: Dynamo compiles the code around
the call and runs the call itself eagerly (``fullgraph=True`` refuses it, as it
refuses any graph break). ``torch._dynamo`` is imported only by ``torch.compile``
(seconds of import time): until it is in ``sys.modules`` nothing can be
compiling, and the function runs as it is.
"""
from __future__ import annotations

import functools
import sys


def graph_break(fn):
    """``fn`` made a graph break under ``torch.compile`` (see the module docstring)."""
    disabled = []

    @functools.wraps(fn)
    def call(*args, **kwargs):
        dynamo = sys.modules.get("torch._dynamo")
        if dynamo is None:
            return fn(*args, **kwargs)
        if not disabled:
            disabled.append(dynamo.disable(fn, reason=f"coosparse.interop.torch.{fn.__name__} takes or returns "
                                                      "sparse COO tensors, which Dynamo does not trace"))
        return disabled[0](*args, **kwargs)

    call._torchdynamo_disable = True  # Dynamo's mark: call it, never trace into it (read without importing Dynamo)
    return call
