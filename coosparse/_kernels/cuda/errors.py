"""The per-device error word of the CUDA kernels, and how the host reads it.

The CUDA kernels never read or write out of bounds, whatever their input: a
COO built with ``check=False`` may hold any index and its flags may lie. Where
an index, key or output slot is out of range a kernel writes a zero (or skips
the write) and ORs one of the bits below into a ``uint64`` word that lives on
the device (one per device, allocated on first use). Reading that word would
synchronise, so nothing reads it just for this: the CUDA layer reads it at
the points where an operation synchronises anyway (``coalesce``, compact
``multiply``, ``add`` of coalesced operands, ``COO.to("cpu")``), and
:func:`check_device_errors` reads it on request. A set word raises there
(and is cleared): ``IndexError`` for out-of-range indices or keys,
``ValueError`` for flags that lie. The bits match ``COO_ERR_*`` in
``cuda_kernels/include/coo_common.cuh``.
"""
from __future__ import annotations

import sys

GATHER = 1  # a gather read outside its source: zero written
SCATTER = 2  # a scatter element outside its target: not written
KEY = 4  # a key outside [0, bound): clamped
ORDER = 8  # keys not sorted / unique as their flags say: an output slot skipped
INDEX = 16  # an index outside its dimension (linear_index with sizes): the entry's key made out of range

_TEXT = {
    GATHER: "a gather read outside its source (zeros written)",
    SCATTER: "a scatter outside its target (entries skipped)",
    KEY: "linear indices outside the shape (clamped)",
    ORDER: ("an operand's flag sorted=True is false (or unique=True): keys not sorted or not unique "
            "although the flags say so (output slots skipped)"),
    INDEX: "an index out of bounds for its dimension (the entry skipped)",
}


def device_error(code):
    """The exception for error word ``code`` (non-zero)."""
    what = "; ".join(t for bit, t in _TEXT.items() if code & bit) or f"unknown error bits {code:#x}"
    msg = (f"a CUDA kernel met invalid input since the last check: {what}. Results computed since "
           "then are not to be trusted; build the arrays with check=True to find the entry")
    return (IndexError if code & (GATHER | SCATTER | KEY | INDEX) else ValueError)(msg)


def check_device_errors():
    """Raise if a CUDA kernel met out-of-range input since the last check; synchronises.

    The CUDA kernels zero or skip what they cannot read or write safely and
    record it in a per-device error word instead of reading it back (which
    would synchronise). Operations that synchronise anyway check the word;
    call this after a run of sync-free operations (``multiply(...,
    compact=False)``, ``sparse_mask``, ``to_dense``, ``as_strided_scatter``)
    on arrays built with ``check=False`` to learn whether their input was
    valid. Checks every loaded CUDA layer (the GPU's, and the emulated one of
    the test suite); does nothing when none has run.

    Raises
    ------
    IndexError
        An index, key or address was outside its array or shape.
    ValueError
        Indices were not sorted or unique although the array's flags said so.

    Examples
    --------
    >>> import coosparse
    >>> coosparse.check_device_errors()  # nothing ran on a GPU: nothing to report
    """
    for name in ("coosparse._kernels.cuda.backend", "coosparse._kernels.cuda.emulated"):
        mod = sys.modules.get(name)
        layer = getattr(mod, "_layer", None)
        if layer is not None:
            layer.raise_errors(all_devices=True)
