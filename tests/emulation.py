"""The emulated GPU (``coosparse.testing.device``) for the tests, with COO arrays moving too.

The device itself knows arrays only; ``to_device``/``to_host`` here also move a
COO (through ``COO.to``). Everything else is the device's own API
(``sync_free``, ``allow_transfers``, ``xp``, ``DeviceArray``, ...).
"""
from coosparse import COO
from coosparse.testing import device as _device
from coosparse.testing.device import *  # noqa: F401,F403  (the device's API)


def to_device(x):
    """Upload a NumPy array, or every array of a COO (counted as transfers)."""
    if isinstance(x, COO):
        return x.to(_device.DEVICE)
    return _device.to_device(x)


def to_host(x):
    """The NumPy form of a device array or COO (also inside tuples); other objects unchanged."""
    if isinstance(x, COO):
        return x.to("cpu")
    if isinstance(x, tuple):
        return tuple(to_host(v) for v in x)
    return _device.to_host(x)
