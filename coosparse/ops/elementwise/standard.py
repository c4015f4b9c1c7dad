"""Where the Array API standard's special cases differ from NumPy's answer, the namespace follows the
standard (``coosparse.floor_divide`` and the ``//`` operators); NumPy's own function called on a COO
(``numpy.floor_divide(a, b)``) keeps NumPy's answer.

``floor_divide`` with an infinite operand: NumPy gives NaN for ``inf // 2`` and ``-1.0`` for
``1 // -inf`` (Python's rule for the remainder); the standard gives ``+inf`` and ``-0``, that is
``floor(x1 / x2)``. Finite operands give NumPy's answer bit for bit.
"""
from __future__ import annotations

import numpy as np

from ..._kernels.backend import array_namespace, is_device_array


def floor_divide(x1, x2, /, **kwargs):
    """``numpy.floor_divide`` with the Array API's special cases for infinite operands (see above).

    Examples
    --------
    >>> import numpy as np
    >>> from coosparse.ops.elementwise.standard import floor_divide
    >>> floor_divide(np.array([np.inf, 1.0, 7.0]), np.array([2.0, -np.inf, 2.0])).tolist()
    [inf, -0.0, 3.0]
    """
    xp = next((array_namespace(x) for x in (x1, x2) if is_device_array(x)), np)
    with np.errstate(invalid="ignore"):
        infinite = _isinf(xp, x1) | _isinf(xp, x2)
    # NumPy's warning for inf // x is about the NaN it gives; the answer here is not NaN
    quiet = xp is np and bool(np.any(infinite))
    with np.errstate(invalid="ignore") if quiet else _no_change():
        r = xp.floor_divide(x1, x2, **kwargs)
    if r.dtype.kind != "f":
        return r
    with np.errstate(all="ignore"):
        q = xp.floor(xp.true_divide(x1, x2, **kwargs))
    return xp.where(infinite, q, r)


def _isinf(xp, x):
    """``isinf(x)``; False for a Python int, which is never infinite (NumPy's isinf refuses one
    beyond 64 bits, an object to it, where floor_divide converts it under NEP 50)."""
    return False if isinstance(x, int) else xp.isinf(x)


class _no_change:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
