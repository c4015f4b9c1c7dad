"""Shared fixtures: the kernel-layer parametrisation and the hypothesis profile.

Tests that take the ``backend`` fixture run once per available kernel layer:
``numba`` always, ``cuda-emulated`` (the CUDA sources compiled for the host)
where a host compiler exists, and ``cuda`` where a GPU exists. ``backend.put``
moves inputs onto the layer's device and ``backend.get`` brings results back.

``cuda-emulated`` is a device of its own (``coosparse._kernels.cuda.strict``): its
arrays have only CuPy's API and refuse implicit conversion to NumPy, exactly
as CuPy arrays do, so a test must ``put`` its inputs and ``get`` its results
(``np.testing`` on a device array raises TypeError, as on a GPU).
``backend.sync_free()`` asserts that the block makes no host<->device
transfer (a no-op on other backends); ``backend.check_errors()`` raises what
the CUDA kernels reported about out-of-range input (they report instead of
raising, as on a GPU: docs/cuda.md). A test that leaves such a report
unread fails.
"""
import contextlib
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from coosparse import COO

settings.register_profile(
    "default",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("default")


def available_backends():
    """numba, cuda-emulated and cuda where they work; ``$COOSPARSE_TEST_BACKENDS`` (comma list) restricts them.

    (scripts/gpu_check.sh sets it to numba,cuda: building the emulated layer costs
    a minute on a machine whose GPU is the point.)
    """
    wanted = os.environ.get("COOSPARSE_TEST_BACKENDS", "numba,cuda-emulated,cuda").split(",")
    names = ["numba"]
    if "cuda-emulated" in wanted:
        try:
            from coosparse._kernels.cuda import emulated

            if emulated.available():
                names.append("cuda-emulated")
        except ImportError:
            pass
    if "cuda" in wanted:
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() > 0:
                names.append("cuda")
        except Exception:
            pass
    return [n for n in names if n in wanted]


class Backend:
    def __init__(self, name):
        self.name = name
        self.device = {"cuda": "cuda", "cuda-emulated": "cuda-emulated"}.get(name, "cpu")

    def put(self, x):
        if self.name == "cuda-emulated":
            import emulation as strict

            if isinstance(x, (COO, np.ndarray, np.generic)):
                with strict.allow_transfers():
                    return strict.to_device(x)
            return x
        if isinstance(x, COO):
            return x.to(self.device)
        if self.device == "cuda" and isinstance(x, (np.ndarray, np.generic)):
            import cupy

            return cupy.asarray(x)
        return x

    def get(self, x):
        if self.name == "cuda-emulated":
            import emulation as strict

            with strict.allow_transfers():
                return strict.to_host(x)
        if isinstance(x, COO):
            return x.to("cpu")
        if type(x).__module__.startswith("cupy"):
            return x.get()
        return x

    def sync_free(self):
        """Context: no host<->device transfer inside (checked on the emulated device only)."""
        if self.name == "cuda-emulated":
            import emulation as strict

            return strict.sync_free()
        return contextlib.nullcontext()

    def check_errors(self):
        """Raise what the CUDA kernels reported (coosparse.check_device_errors); no-op on the CPU."""
        if self.device != "cpu":
            from coosparse._kernels.cuda.errors import check_device_errors

            check_device_errors()

    def __repr__(self):
        return self.name


@pytest.fixture(params=available_backends())
def backend(request):
    b = Backend(request.param)
    yield b
    if b.device != "cpu":  # a kernel report nobody read is a bug in the test or the library
        try:
            b.check_errors()
        except (IndexError, ValueError) as e:
            pytest.fail(f"a CUDA kernel reported invalid input that the test never checked: {e}")
