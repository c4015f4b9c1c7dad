"""Every kernel layer provides every row of coosparse/_kernels/api.py, with one meaning."""
import importlib
import os
import inspect

import pytest

from coosparse._kernels.api import KERNEL_API
from coosparse._kernels.cuda.layer import CudaLayer

LAYERS = ["coosparse._kernels.numba.layer", "coosparse._kernels.cuda.emulated", "coosparse._kernels.cuda.backend"]


def _import(path):
    try:
        return importlib.import_module(path)
    except ImportError as e:  # the GPU layer needs cupy
        pytest.skip(f"{path} not importable here: {e}")


@pytest.mark.parametrize("path", LAYERS)
def test_layer_defines_every_kernel_api_name(path):
    mod = _import(path)
    missing = [n for n in KERNEL_API if not callable(getattr(mod, n, None))]
    assert not missing, f"{path} lacks {missing}"
    assert isinstance(mod.name, str) and mod.xp is not None


def test_cuda_layer_class_implements_the_api():
    # the GPU layer binds the same class as the emulated one; this holds without cupy
    missing = [n for n in KERNEL_API if not callable(getattr(CudaLayer, n, None))]
    assert not missing
    here = os.path.dirname(inspect.getfile(CudaLayer))
    for mod in ("backend", "emulated"):
        with open(os.path.join(here, f"{mod}.py")) as f:
            assert "bind(globals(), KERNEL_API" in f.read(), mod


def test_same_signatures_as_numba():
    numba_be = importlib.import_module("coosparse._kernels.numba.layer")
    for n in KERNEL_API:
        a = list(inspect.signature(getattr(numba_be, n)).parameters)
        b = list(inspect.signature(getattr(CudaLayer, n)).parameters)[1:]  # drop self
        assert len(a) == len(b), (n, a, b)
