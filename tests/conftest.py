"""Shared fixtures: the kernel-layer parametrisation and the hypothesis profile.

Tests that take the ``backend`` fixture run once per available kernel layer:
``numba`` always, ``cuda-emulated`` (the CUDA sources compiled for the host)
where a host compiler exists, and ``cuda`` where a GPU exists. ``backend.put``
moves inputs onto the layer's device and ``backend.get`` brings results back.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from coosparse import COO
from coosparse._backend import use_cpu_backend

settings.register_profile(
    "default",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("default")


def available_backends():
    names = ["numba"]
    try:
        from coosparse._cuda import emulated

        if emulated.available():
            names.append("cuda-emulated")
    except ImportError:
        pass
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            names.append("cuda")
    except Exception:
        pass
    return names


class Backend:
    def __init__(self, name):
        self.name = name
        self.device = "cuda" if name == "cuda" else "cpu"

    def put(self, x):
        if isinstance(x, COO):
            return x.to(self.device)
        if self.device == "cuda" and isinstance(x, np.ndarray):
            import cupy

            return cupy.asarray(x)
        return x

    def get(self, x):
        if isinstance(x, COO):
            return x.to("cpu")
        if type(x).__module__.startswith("cupy"):
            return x.get()
        return x

    def __repr__(self):
        return self.name


@pytest.fixture(params=available_backends())
def backend(request):
    b = Backend(request.param)
    if b.name == "cuda":
        yield b
    else:
        with use_cpu_backend(b.name):
            yield b
