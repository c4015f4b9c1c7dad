"""The arithmetic entry points of SPEC 4: ``add``, ``subtract`` (the union) and ``multiply``
(the intersection), with the keywords of their sparse algorithms (``coalesce``, ``compact``).

Each is one call of the elementwise engine, whose fast paths for fill-0
operands run the union (:mod:`.union`) and intersection (:mod:`.intersect`)
algorithms; every other case follows the engine's pattern rule.
"""
from __future__ import annotations

import numpy as np

from ..._core.coo import COO
from ..coalesce import coalesce as _coalesce
from .engine import elementwise


def add(a, b, *, coalesce=False):
    """Elementwise sum ``a + b`` where at least one operand is a COO.

    Parameters
    ----------
    a, b : COO, dense array or scalar
        Operands broadcast like NumPy arrays (sparse and dense dimensions
        alike; see :func:`coosparse.broadcast_to`).
    coalesce : bool
        Return a coalesced result even when an operand is not coalesced
        (costs a sort).

    Returns
    -------
    COO or dense array
        Sparse + sparse with fills 0: both coalesced -> merged, coalesced (a
        key present on both sides gives one entry, ``a``'s value + ``b``'s);
        otherwise ``a``'s entries followed by ``b``'s, flags False (unless
        ``coalesce``). With other fills: the coalesced union, fill
        ``a.fill_value + b.fill_value``. Sparse + scalar: a COO with the
        COO's coalesced pattern and fill ``fill + s`` (SPEC 8). Sparse +
        dense: a new dense array, unless the dense operand holds one value
        (then a COO of fill ``fill + value``, SPEC 9). dtype: NumPy promotion
        (NEP 50 for Python scalars).

    Synchronisation: the merge synchronises once on a GPU (output size); the
    concatenation and the dense result never do.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 2]], np.array([1.0, 2.0]), (4,), sorted=True, unique=True)
    >>> b = coosparse.COO([[2, 3]], np.array([10.0, 20.0]), (4,), sorted=True, unique=True)
    >>> c = coosparse.add(a, b)
    >>> c.indices, c.values, c.is_coalesced
    (array([[0, 2, 3]]), array([ 1., 12., 20.]), True)
    >>> a + np.arange(4.0)
    array([1., 1., 4., 3.])
    >>> a + np.ones(4)  # one value over the dense operand: a COO of fill 1 (SPEC 9)
    <COO shape=(4,) dtype=float64 nnz=2 fill_value=np.float64(1.0) sorted=True unique=True device=cpu>
    >>> (a + 1).fill_value, (a + 1).to_dense()
    (np.float64(1.0), array([2., 1., 3., 1.]))
    """
    return _union(a, b, False, coalesce, "add")


def subtract(a, b, *, coalesce=False):
    """Elementwise difference ``a - b``; see :func:`add` for layouts, flags and dtypes.

    Boolean operands are refused, as in NumPy.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 2]], np.array([1.0, 2.0]), (4,), sorted=True, unique=True)
    >>> b = coosparse.COO([[2, 3]], np.array([10.0, 20.0]), (4,), sorted=True, unique=True)
    >>> coosparse.subtract(a, b).values
    array([  1.,  -8., -20.])
    >>> np.arange(4.0) - a
    array([-1.,  1.,  0.,  3.])
    """
    return _union(a, b, True, coalesce, "subtract")


def _union(a, b, negate, coalesce, op):
    if not isinstance(coalesce, bool):
        raise TypeError(f"{op}: coalesce must be a bool; got {coalesce!r}")
    out = elementwise(np.subtract if negate else np.add, (a, b), name=op)
    if coalesce and isinstance(out, COO):
        out = _coalesce(out)
    return out


def multiply(a, b, *, compact=True):
    """Elementwise product ``a * b`` where at least one operand is a COO.

    Parameters
    ----------
    a, b : COO, dense array or scalar
        Operands broadcast like NumPy arrays (sparse and dense dimensions
        alike; see :func:`coosparse.broadcast_to`). Sparse x dense and
        sparse x scalar multiply the stored values only (the result keeps the
        COO's indices, order and flags) when the COO's fill is 0; with another
        fill a dense operand gives a dense result.
    compact : bool
        Sparse x sparse with both fills 0 only. True: keep only indices
        present on both sides (the source's entries that matched, in source
        order). False: keep the source's layout, with explicit zeros where
        nothing matched; the output size is known in advance and the GPU path
        never synchronises.

    Returns
    -------
    COO (or a dense array, see above)
        dtype: NumPy's promotion (NEP 50 for Python scalars); fill: the
        product of the fills. Sparse x sparse with fills 0: the source side
        (see :mod:`coosparse.ops.elementwise.intersect` for the choice) gives indices and order;
        flags: compact=True -> sorted if the source is sorted, unique if the
        source is unique; compact=False -> the source's flags. Probe
        duplicates are summed (in stored order) before multiplying; source
        duplicates stay separate. Both modes have the same dense meaning.
        Non-zero fills follow the pattern rule of the NumPy users page (the
        pattern of the operand whose fill is 0, or the union).

    Synchronisation: compact=True synchronises once on a GPU (output size);
    compact=False, sparse x dense and sparse x scalar never do.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 2, 3]], np.array([1.0, 2.0, 3.0]), (5,), sorted=True, unique=True)
    >>> b = coosparse.COO([[3, 0, 4]], np.array([10.0, 20.0, 30.0]), (5,), unique=True)
    >>> c = coosparse.multiply(a, b)
    >>> c.indices, c.values, c.is_unique
    (array([[3, 0]]), array([30., 20.]), True)
    >>> coosparse.multiply(a, b, compact=False).values
    array([30., 20.,  0.])
    >>> (a * 2).values
    array([2., 4., 6.])
    """
    if not isinstance(compact, bool):
        raise TypeError(f"multiply: compact must be a bool; got {compact!r}")
    return elementwise(np.multiply, (a, b), name="multiply", compact=compact)
