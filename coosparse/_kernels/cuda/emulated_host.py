"""The emulated CUDA layer over host NumPy arrays: ``use_cpu_backend("cuda-emulated")``.

The loose route, for code that hands NumPy arrays to the kernel layer (the
GPU check's dry run, older tests): every data array is uploaded to the
emulated device for the call and the results are read back; in-place
targets (``target``, ``out``) are copied back into the caller's array. Host
metadata parameters (strides, sizes, inner offsets, ...) stay on the host, as
the layer expects. The kernels, launch checks and layer code are the strict
emulation's; only the public code around them sees NumPy arrays. The strict
route is the emulated device itself (:func:`coosparse.testing.device.to_device`;
the ``backend`` fixture's ``cuda-emulated``).
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from ..api import KERNEL_API
from ...testing import device
from . import emulated

name = "cuda-emulated"
xp = np

METADATA = frozenset({"strides", "inner", "sizes", "src_strides", "bound", "src_base", "offset", "copy", "negate",
                      "a_fill", "b_fill"})  # merge_gather's fill rows
# parameters that are host metadata of one row only (the same name is a device array elsewhere:
# spmm's ``offsets`` is a CSR row pointer on the device)
ROW_METADATA = {"merge_take": frozenset({"offsets"})}  # merge_take's run boundaries
IN_PLACE = frozenset({"target", "out"})


def _adapt(fn):
    params = list(inspect.signature(fn).parameters)
    metadata = METADATA | ROW_METADATA.get(fn.__name__, frozenset())

    @functools.wraps(fn)
    def call(*args, **kwargs):
        with device.allow_transfers():
            uploaded = {}  # id(host array) -> device array (one upload per array, aliasing kept)
            dev_args, back = [], []
            for p, a in zip(params, args):
                if isinstance(a, np.ndarray) and p not in metadata:
                    d = uploaded.get(id(a))
                    if d is None:
                        d = uploaded[id(a)] = device.to_device(a)
                    if p in IN_PLACE:
                        back.append((a, d))
                    a = d
                dev_args.append(a)
            result = fn(*dev_args, **kwargs)
            for host, dev in back:
                host[...] = dev.get()
            return device.to_host(result)

    return call


for _n in KERNEL_API:
    globals()[_n] = _adapt(getattr(emulated, _n))


def __getattr__(name):
    """Other public methods of the layer (helpers such as ``union_values``), adapted the same way."""
    fn = getattr(emulated._layer, name, None)
    if name.startswith("_") or not callable(fn):
        raise AttributeError(name)
    return _adapt(fn)


def available():
    return emulated.available()
