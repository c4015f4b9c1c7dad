"""The elementwise engine (SPEC 8 and 9): any NumPy ufunc, or elementwise function, on COO operands.

One function, :func:`elementwise`, serves ``COO.__array_ufunc__``, the
operators, the Array API functions of ``coosparse`` and the existing
``add``/``subtract``/``multiply``. It never implements ``f`` itself: it
decides the result's *pattern* (which indices are stored), gathers each
operand's values at that pattern (or its fill where it stores nothing), and
calls the array namespace's own ``f`` on the gathered arrays (NumPy on the
CPU, CuPy on a GPU).

Operands
--------
COO arrays (scipy.sparse arrays and matrices are converted to COOs); constants (Python and NumPy scalars, 0-d and other size-1
arrays, a 0-d COO beside larger operands); dense NumPy/CuPy arrays (lists
are read with ``numpy.asarray``). All broadcast together like NumPy arrays
(``coosparse.ops.broadcast``).

Fill and pattern
----------------
The result's fill is ``f`` of the operands' fills (and the constants),
computed on the host with NumPy, which also fixes the result dtype (NEP 50:
Python scalars are weak) and raises NumPy's own errors before anything runs.
COO operand ``j`` *annihilates* when ``f`` equals the result's fill whenever
``j`` is at its fill, whatever the other operands hold; this is decided by
evaluating ``f`` with ``j`` at its fill and every other COO or dense operand
over a set of probe values of its dtype (zeros of both signs, small and large
magnitudes, the integer limits, inf and NaN; finite values only for
``multiply``, so ``x * 0`` counts as 0, as in SPEC 4, although ``inf * 0`` is
NaN). Then:

=============================  ==============================================
annihilating operands          result pattern
=============================  ==============================================
none, no dense operand         union of the COO operands (coalesced)
none, a dense operand          the dense operand's own values decide
                               (:func:`background`): a COO operand whose
                               fill makes ``f`` one value over them
                               annihilates, with that value as the result's
                               fill; if none does, a dense result (``f`` on
                               the dense meanings)
one                            that operand's pattern (its layout and flags)
two or more                    their intersection (the layout of the one the
                               intersection family picks as source, SPEC 4)
=============================  ==============================================

So ``A / row_sums[:, None]`` stays sparse (fill 0) when no row sum is 0, and
``A + np.ones(A.shape)`` is a COO of fill 1; ``A + x`` for an ``x`` of
several values is dense. The probes come first: an operand they already
show annihilating (``A * x``: stored values only, SPEC 4) needs no look at
the dense values.

Stored values that happen to equal the fill stay stored (``coalesce(prune=True)``
drops them). Duplicates are summed before ``f`` (the operand is coalesced,
or its duplicates are summed where it is gathered) unless ``f`` is linear in
that operand and keeps its dtype (``negative``, ``positive``, ``conjugate``,
``multiply``, ``true_divide``'s numerator, ``real``/``imag``): those act on
the stored entries, so an uncoalesced operand keeps its layout and flags.

``add``, ``subtract`` and ``multiply`` with fill 0 keep their own fast paths
(SPEC 4: merge or concatenation, the intersection family, dense + COO by
scatter-add).

Synchronisation on a GPU: a union synchronises once (its size), an
intersection once, coalescing an operand once, a dense operand whose values
decide the result once (twice when its sampled values are one value); one-operand functions of an
operand without duplicates (``sqrt(a)``, ``a > 0``), linear ones of any
operand and patterns taken from one operand never do, and upload nothing
(fills, strides and constants travel as host scalars; the checked cases are
in ``tests/sync_free_cases.py``). A size-1 device array as a constant is
read once (the fill rule needs its value). A NumPy function CuPy lacks
(``spacing``) raises TypeError on a GPU.
"""
from __future__ import annotations

import types

import numpy as np

from ..._core import dtypes as _dtypes
from ..._core import fill as _fill
from ..._core.arrays import as_words, rows2d
from ..._core.coo import COO
from ..._core.dispatch import HANDLED_FUNCTIONS, foreign_kind, operation, sparse_operand
from ..._core.keys import is_wide, joint_keys, strides_of
from ..._kernels.backend import array_namespace, backend_for, is_device_array
from ..broadcast import align, broadcast_shapes, broadcast_to
from ..coalesce import coalesce
from . import standard
from .fillrule import _evaluate, annihilators, background
from .intersect import _probe_values, match, multiply_sparse, probe_rank
from .operands import gather_dense, row_pointers
from .union import _union_dense, _union_sparse

# f -> positions in which f is additive (f(x1 + x2, ...) == f(x1, ...) + f(x2, ...))
_LINEAR = {
    np.negative: (0,), np.positive: (0,), np.conjugate: (0,),
    np.multiply: (0, 1), np.true_divide: (0,), np.real: (0,), np.imag: (0,),
}


class _Operand:
    """One argument: kind 'coo', 'const' or 'dense'; ``host`` is its value for the fill rule."""

    __slots__ = ("kind", "value", "shape", "dtype", "host")

    def __init__(self, kind, value, shape, dtype, host):
        self.kind, self.value, self.shape, self.dtype, self.host = kind, value, shape, dtype, host


def classify(x):
    """An :class:`_Operand` for ``x``, or None when ``x`` is of a type this engine does not take.

    A NumPy masked array is refused (TypeError, by :func:`~coosparse._core.dtypes.native`):
    taken as an ndarray it would lose its mask.
    """
    x = sparse_operand(x)  # a scipy.sparse or pydata/sparse operand takes part as the COO it converts to
    if isinstance(x, COO):
        return _Operand("coo", x, x.shape, x.dtype, np.asarray(x.fill_value))
    if isinstance(x, np.generic):
        if x.dtype.kind not in "biufc":
            return None
        return _Operand("const", x, (), x.dtype, np.asarray(x))
    if isinstance(x, (bool, int, float, complex)):
        return _Operand("const", x, (), None, x)  # a weak Python scalar (NEP 50)
    if isinstance(x, (list, tuple)):
        try:
            x = np.asarray(x)
        except Exception:
            return None
    if isinstance(x, np.ndarray) or is_device_array(x):
        if x.dtype.kind not in "biufc":
            return None
        x = _dtypes.native(x)  # a byte-swapped operand computes as its native copy (the kernels need one)
        shape = tuple(x.shape)
        if x.size == 1:
            if is_device_array(x):  # stays on its device: CuPy's functions take 0-d device arrays
                host = x.get()  # synchronize! (a size-1 device constant: the fill rule reads it)
                return _Operand("const", x.reshape(()), shape, x.dtype, np.asarray(host).reshape(()))
            # a host constant travels as a NumPy scalar (as strong as a 0-d array under NEP 50),
            # which CuPy takes beside device arrays where it refuses a NumPy array
            return _Operand("const", x.reshape(())[()], shape, x.dtype, x.reshape(()))
        return _Operand("dense", x, shape, x.dtype, np.zeros((), dtype=x.dtype))
    return None


def _kinds(ops):
    return {op.kind for op in ops}


# ----------------------------------------------------------------------------- gathers
def _bits2d(values):
    """C-contiguous 2-D view of ``values`` as unsigned words (one kernel per word size), and its dtype."""
    v = rows2d(values)
    return as_words(v), v.dtype


def _gather_fill(be, a, pos):
    """``a``'s values at ``pos`` (-1: nothing stored there, so ``a``'s fill). Sync-free."""
    xp = be.xp
    bits, dtype = _bits2d(a.values)
    v = be.gather_or_zero(bits, pos).view(dtype).reshape((pos.shape[0],) + a.dense_shape)
    if not _fill.zero_bits(a.fill_value):  # (a fill of -0.0 too: its sign bit is not a zero bit)
        missing = (pos < 0).reshape((-1,) + (1,) * a.dense_ndim)
        v = xp.where(missing, a.fill_value, v)
    return v


def _gather_rows(be, a, rows):
    bits, dtype = _bits2d(a.values)
    return be.gather_rows(bits, rows).view(dtype).reshape((rows.shape[0],) + a.dense_shape)


def _pattern(indices, shape, sorted, unique):
    """Stand-in for a COO whose values are not needed (the matching primitive reads only these)."""
    return types.SimpleNamespace(indices=indices, sparse_shape=shape[: indices.shape[0]],
                                 is_sorted=sorted, is_unique=unique, nnz=indices.shape[1])


def _values_at(be, pattern, a):
    """``a``'s dense meaning at ``pattern``'s indices: duplicates summed, fill where it stores nothing."""
    xp = be.xp
    _, first, count, perm = match(pattern, a)
    if a.is_unique:
        if a.nnz == 0:
            return _gather_fill(be, a, xp.full(first.shape[0], -1, dtype=np.int64))
        rows = first if perm is None else perm[xp.minimum(first, a.nnz - 1)]
        return _gather_fill(be, a, xp.where(count > 0, rows, -1))
    v = _probe_values(be, a, perm, first, count)
    if not _fill.zero_bits(a.fill_value):
        v = xp.where((count == 0).reshape((-1,) + (1,) * a.dense_ndim), a.fill_value, v)
    return v


# ----------------------------------------------------------------------------- patterns
def _fill_words(a, words):
    """``a``'s fill as one row of ``words``' word type (one value per element of a dense block)."""
    per = np.full(words.shape[1] * words.dtype.itemsize // a.dtype.itemsize, a.fill_value, dtype=a.dtype)
    return per.view(words.dtype).reshape(words.shape[1])


def _union(be, coos):
    """(indices, per-operand values) over the sorted union of coalesced operands."""
    xp = be.xp
    if len(coos) == 2 and not is_wide(coos[0].sparse_shape):
        # one fused merge (keys on the fly, bit copies); words of two sizes are zero-extended
        # to the larger one and truncated back (exact), so one kernel per word size serves
        a, b = coos
        (aw, adt), (bw, bdt) = _bits2d(a.values), _bits2d(b.values)
        fa, fb = _fill_words(a, aw), _fill_words(b, bw)
        word = max(aw.dtype, bw.dtype, key=lambda d: d.itemsize)
        # strides and fill words are host metadata: the layers take them by value
        strides = np.array(strides_of(a.sparse_shape)[0], dtype=np.int64)
        idx, va, vb = be.merge_gather(a.indices, b.indices, aw.astype(word, copy=False),
                                      bw.astype(word, copy=False), strides, fa.astype(word), fb.astype(word),
                                      sizes=a.sparse_shape,
                                      pointers=row_pointers(a, b))  # synchronize! (output size)
        m = idx.shape[1]
        va = va.astype(aw.dtype, copy=False).view(adt).reshape((m,) + a.dense_shape)
        vb = vb.astype(bw.dtype, copy=False).view(bdt).reshape((m,) + b.dense_shape)
        return idx, [va, vb]
    keys, _ = joint_keys([c.indices for c in coos], coos[0].sparse_shape)
    u_keys, u_idx = keys[0], coos[0].indices
    pos = None
    for k in range(1, len(coos)):
        u_pos, c_pos = be.merge_union(u_keys, keys[k])  # synchronize! (output size)
        u_idx = be.union_columns(u_idx, coos[k].indices, u_pos, c_pos)
        if k + 1 < len(coos):
            safe_u, safe_c = xp.maximum(u_pos, 0), xp.maximum(c_pos, 0)
            u_keys = xp.where(u_pos >= 0, u_keys[safe_u] if u_keys.shape[0] else 0,
                              keys[k][safe_c] if keys[k].shape[0] else 0)
        if pos is None:
            pos = [u_pos]
        else:  # positions in the union so far -> positions in each operand
            pos = [xp.where(u_pos >= 0, p[xp.maximum(u_pos, 0)] if p.shape[0] else -1, -1) for p in pos]
        pos.append(c_pos)
    return u_idx, [_gather_fill(be, c, p) for c, p in zip(coos, pos)]


def _intersection(be, coos, annih, linear):
    """(indices, sorted, unique, values by operand) at the intersection of the annihilators."""
    # the source keeps its layout: the lowest rank of the intersection family (ties: first)
    src_i = min(annih, key=lambda i: probe_rank(coos[i]))
    src = coos[src_i]
    if not src.is_unique and src_i not in linear:
        src = coalesce(src)
    rows = None
    sub = src
    last = None
    for k in annih:
        if k == src_i:
            continue
        r, first, count, perm = match(sub, coos[k], compact=True)  # synchronize! (output size)
        rows = r if rows is None else rows[r]
        sub = _pattern(be.gather_columns(src.indices, rows), src.shape, src.is_sorted, src.is_unique)
        last = (k, first, count, perm)
    values = [None] * len(coos)
    values[src_i] = _gather_rows(be, src, rows)
    k, first, count, perm = last
    values[k] = _probe_values(be, coos[k], perm, first, count)
    for i, c in enumerate(coos):
        if values[i] is None:
            values[i] = _values_at(be, sub, c)
    return sub.indices, src.is_sorted, src.is_unique, values


# ----------------------------------------------------------------------------- the engine
def _device_function(f, name, xp):
    """``f`` for arrays of ``xp``: NumPy's own functions map to CuPy's of the same name."""
    if xp is np or getattr(np, name, None) is not f:
        return f  # a user's function runs on whatever arrays it gets
    try:
        return getattr(xp, name)
    except AttributeError:
        raise TypeError(f"{name} is not available in {xp.__name__}, so not on the GPU") from None


def _finite(host):
    """A host constant or fill is finite (a Python int is, and beyond 64 bits an object to np.isfinite)."""
    return isinstance(host, int) or bool(np.all(np.isfinite(host)))


def _linear_positions(f, ops, fills):
    """Argument positions where ``f`` may act on uncoalesced entries (linear, dtype kept).

    Division is linear in its numerator only for a finite, non-zero constant
    divisor: ``x1 / 0 + x2 / 0`` is not ``(x1 + x2) / 0`` when the duplicates'
    signs differ. Multiplication follows SPEC 4 (stored values only), but not by
    an infinite or NaN constant or fill: duplicates 2.5 and 0.0 times inf are
    ``inf + NaN`` one by one, where their sum times inf is inf. Neither is for
    float16, whose duplicates sum in float32 (each scaled alone can overflow).
    """
    if f is np.true_divide and not (len(ops) == 2 and ops[1].kind == "const" and _finite(ops[1].host)
                                    and bool(np.all(ops[1].host != 0))):
        return []
    out = []
    for i in _LINEAR.get(f, ()):
        if i >= len(ops) or ops[i].kind != "coo":
            continue
        dt = ops[i].dtype
        if dt == np.float16 and f in (np.multiply, np.true_divide):
            continue  # float16 duplicates sum in float32: 40000 * 2 alone overflows float16
        if f is np.multiply and not all(_finite(op.host) for j, op in enumerate(ops) if j != i and op.kind != "dense"):
            continue  # (a dense operand's values are not read here: SPEC 4's stored-values rule)
        ok = all(r.dtype == dt or (dt.kind == "c" and r.dtype == np.empty(0, dt).real.dtype) for r in fills)
        if ok:
            out.append(i)
    return out


def _fast_path(f, ops, shape, compact):
    """add / subtract / multiply with fill 0: the union and intersection families of SPEC 4."""
    if f not in (np.add, np.subtract, np.multiply) or len(ops) != 2:
        return None
    if any(op.kind == "coo" and not _fill.is_zero(op.value.fill_value) for op in ops):
        return None
    kinds = [op.kind for op in ops]
    if kinds == ["coo", "coo"]:
        a, b = align([ops[0].value, ops[1].value], shape)
        if f is np.multiply:
            return multiply_sparse(a, b, compact)[0]
        return _union_sparse(a, b, f is np.subtract, False, f.__name__)
    if f is not np.multiply and sorted(kinds) == ["coo", "dense"]:
        i = kinds.index("coo")
        a = broadcast_to(ops[i].value, shape)
        x = array_namespace(ops[1 - i].value).broadcast_to(ops[1 - i].value, shape)
        return _union_dense(a, x, f is np.subtract, i == 0, f.__name__)
    return None


def elementwise(f, args, fkw=None, *, name=None, compact=True):
    """``f(*args)`` for COO operands (see the module docstring for the rules).

    Parameters
    ----------
    f : callable
        A NumPy ufunc or an elementwise NumPy function; its namespace twin
        (same ``name``) runs on CuPy arrays.
    args : sequence
        The operands: at least one COO, or only scalars (then NumPy's answer).
    fkw : dict, optional
        Keywords passed to ``f`` (``dtype``, ``casting``, ...).
    name : str, optional
        Name for messages and for the CuPy lookup (default ``f.__name__``).
    compact : bool
        ``multiply`` of two fill-0 COOs only: see :func:`coosparse.multiply`.

    Returns
    -------
    COO, dense array, or a tuple of them (``f`` with several outputs)
    """
    fkw = dict(fkw or {})
    name = name or f.__name__
    ops = []
    for x in args:
        op = classify(x)
        if op is None:
            raise TypeError(f"{name}: unsupported operand type {type(x).__name__}")
        ops.append(op)
    if "coo" not in _kinds(ops) and any(op.kind == "dense" or op.shape != () for op in ops):
        raise TypeError(
            f"{name}: at least one operand must be a COO array (or all of them scalars); got "
            + " and ".join(type(x).__name__ for x in args)
        )
    be = backend_for(*[op.value.values if op.kind == "coo" else op.value
                       for op in ops if op.kind == "coo" or is_device_array(op.value)])
    xp = be.xp
    shape = broadcast_shapes(*(op.shape for op in ops))
    if shape != ():
        for op in ops:  # a 0-d COO beside larger operands is a constant
            if op.kind == "coo" and op.value.ndim == 0:
                v = op.value.to_dense()
                op.kind, op.value = "const", v
                op.host = np.asarray(v.get() if is_device_array(v) else v)  # synchronize!
    try:
        fills = tuple(np.asarray(r)[()] for r in _evaluate(f, [op.host for op in ops], fkw))
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None
    for r in fills:
        if not hasattr(r, "dtype"):
            raise TypeError(f"{name}: did not return an array")
        _dtypes.check_dtype(r.dtype, f"{name}: result")
    xf = _device_function(f, name, xp)
    if "coo" not in _kinds(ops):
        # only scalars (and 0-d COOs): NumPy's (CuPy's) own answer, as the namespace's functions
        # give on the elements a COO is indexed down to (``a[i, j]`` is a NumPy scalar)
        return _dense(xf, fkw, ops, shape, xp)
    with_dense = "dense" in _kinds(ops)
    if not fkw and not with_dense:
        out = _fast_path(f, ops, shape, compact)
        if out is not None:
            if isinstance(out, COO) and not _fill.zero_bits(fills[0]):
                out = out._with(fill_value=fills[0])  # (a fill of -0.0: f of the fills, sign included)
            return out
    coo_at = [i for i, op in enumerate(ops) if op.kind == "coo"]
    annih = annihilators(f, fkw, ops, fills)
    if with_dense and not annih:
        decided = background(f, xf, fkw, ops, xp)
        if decided is None:
            # the dense operand's values fill the background: a dense result (add and subtract
            # by their scatter-add into a copy of the dense operand)
            out = None if fkw else _fast_path(f, ops, shape, compact)
            return out if out is not None else _dense(xf, fkw, ops, shape, xp)
        annih, fills = decided
    return _sparse(be, f, xf, fkw, ops, shape, fills, coo_at, annih)


def _dense(xf, fkw, ops, shape, xp):
    """A dense result: ``f`` on the dense meanings, constants as scalars; broadcast to ``shape``.

    A size-1 constant of more dimensions than the arrays (``a + np.ones((1, 1))``)
    still widens the result, as in NumPy.
    """
    res = xf(*[op.value.to_dense() if op.kind == "coo" else op.value for op in ops], **fkw)
    return tuple(_widen(r, shape, xp) for r in res) if isinstance(res, tuple) else _widen(res, shape, xp)


def _widen(r, shape, xp):
    if tuple(getattr(r, "shape", ())) == shape:
        return r
    return xp.ascontiguousarray(xp.broadcast_to(xp.asarray(r), shape))


def _sparse(be, f, xf, fkw, ops, shape, fills, coo_at, annih):
    xp = be.xp
    coos = align([ops[i].value for i in coo_at], shape)
    linear = [coo_at.index(i) for i in _linear_positions(f, ops, fills)]
    annih = [coo_at.index(i) for i in annih]
    sn = coos[0].sparse_ndim
    if len(coos) == 1 or len(annih) == 1:
        p = annih[0] if annih else 0
        pat = coos[p]
        if not pat.is_unique and p not in linear:
            pat = coalesce(pat)
        indices, sorted_, unique = pat.indices, pat.is_sorted, pat.is_unique
        values = [pat.values if i == p else _values_at(be, pat, c) for i, c in enumerate(coos)]
    elif annih:
        indices, sorted_, unique, values = _intersection(be, coos, annih, linear)
    else:
        coos = [c if c.is_coalesced else coalesce(c) for c in coos]
        indices, values = _union(be, coos)
        sorted_ = unique = True
    m = indices.shape[1]
    argv = _arguments(be, ops, values, shape, indices, sn)
    if xp is np and isinstance(xf, np.ufunc) and xf.nout == 1 and "out" not in fkw:
        # a dense operand's gathered values are this call's own array: the result may take its
        # memory (A / rs[:, None] allocates one array of nnz values, not two)
        want = (m,) + tuple(shape[sn:])
        for op, v in zip(ops, argv):
            if op.kind == "dense" and v.shape == want and v.dtype == fills[0].dtype and v.flags.writeable:
                fkw = {**fkw, "out": v}
                break
    res = be.apply_ufunc(xf, argv, fkw)
    res = res if isinstance(res, tuple) else (res,)
    outs = []
    dense_shape = shape[sn:]
    for v, r in zip(res, fills):
        v = xp.asarray(v)
        if tuple(v.shape) != (m,) + dense_shape:  # constants only broadcast: give every entry its block
            v = xp.broadcast_to(v, (m,) + dense_shape)
        v = xp.ascontiguousarray(v)
        _dtypes.check_dtype(v.dtype, "result")
        outs.append(COO(indices, v, shape, sorted=sorted_, unique=unique, check=False,
                        fill_value=_fill.fill_scalar(r, v.dtype)))
    return tuple(outs) if len(outs) > 1 else outs[0]


def _arguments(be, ops, values, shape, indices, sn):
    """The arrays ``f`` runs on: values at the pattern, dense operands gathered there, constants."""
    xp = be.xp
    argv = []
    k = 0
    for op in ops:
        if op.kind == "coo":
            argv.append(values[k])
            k += 1
        elif op.kind == "dense":
            argv.append(gather_dense(xp.broadcast_to(op.value, shape), indices, sn))
        else:
            argv.append(op.value)
    return argv




def elemwise(func, *args, **kwargs):
    """Apply an elementwise function to arrays of which at least one is a COO.

    The counterpart of pydata/sparse's ``sparse.elemwise``: ``func`` must act
    elementwise and broadcast like a NumPy ufunc (compositions of ufuncs and
    operators do); it runs on the fills (to find the result's fill and
    pattern, see the NumPy users page) and then on the gathered values.

    Parameters
    ----------
    func : callable
    *args : COO, dense arrays or scalars
    **kwargs
        Passed to ``func``.

    Returns
    -------
    COO, or a dense array where a dense operand fills the background

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> x = coosparse.COO([[0, 2]], np.array([1.0, 2.0]), (4,))
    >>> y = coosparse.COO([[2, 3]], np.array([3.0, 4.0]), (4,))
    >>> r = coosparse.elemwise(lambda a, b: a * b + 1, x, y)
    >>> r.fill_value, r.to_dense()
    (np.float64(1.0), array([1., 1., 7., 1.]))
    """
    if not any(isinstance(sparse_operand(x), COO) for x in args):
        raise TypeError("elemwise: at least one operand must be a COO array; got "
                        + (" and ".join(type(x).__name__ for x in args) or "no operand"))
    return elementwise(func, args, kwargs, name=getattr(func, "__name__", "elemwise"))


# ----------------------------------------------------------------------------- NumPy's protocol
_PASSED = {"dtype", "casting", "signature"}


def _check_ignored(name, order, subok):
    """``order`` and ``subok`` mean nothing for a COO's result, but a value NumPy refuses is refused."""
    if order is not None:
        if not isinstance(order, str):
            raise TypeError(f"numpy.{name}: order must be str, not {type(order).__name__}")
        if order.upper() not in ("C", "F", "A", "K"):
            raise ValueError(f"numpy.{name}: order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if not isinstance(subok, (bool, np.bool_)):
        raise TypeError(f"numpy.{name}: 'subok' must be a boolean")


@operation()
def array_ufunc(ufunc, *inputs, **kwargs):
    """``COO.__array_ufunc__`` for method ``"__call__"``: the engine, or NotImplemented/TypeError."""
    out = kwargs.pop("out", None)
    if out is not None and any(o is not None for o in (out if isinstance(out, tuple) else (out,))):
        raise TypeError(
            f"numpy.{ufunc.__name__} with out= is not supported for coosparse.COO arrays: a COO is "
            "immutable; use the returned array (a = np.add(a, b) instead of np.add(a, b, out=a))"
        )
    where = kwargs.pop("where", True)
    if where is not True and not (isinstance(where, np.bool_) and bool(where)):  # (True: every element)
        raise TypeError(
            f"numpy.{ufunc.__name__} with where= is not supported for coosparse.COO arrays (the "
            "unselected elements would be uninitialised); use coosparse.where or mask the result"
        )
    _check_ignored(ufunc.__name__, kwargs.pop("order", "K"), kwargs.pop("subok", True))
    unknown = set(kwargs) - _PASSED
    if ufunc.signature is not None:
        impl = HANDLED_FUNCTIONS.get(ufunc)
        if impl is None:
            raise TypeError(f"numpy.{ufunc.__name__} (a generalized ufunc) is not supported for "
                            "coosparse.COO arrays")
        return impl(*inputs, **kwargs)
    if unknown:
        raise TypeError(f"numpy.{ufunc.__name__}: keyword(s) {sorted(unknown)} not supported for "
                        "coosparse.COO arrays")
    if any(classify(x) is None for x in inputs):
        return NotImplemented
    return elementwise(ufunc, inputs, kwargs)


@operation("binary_operator")
def operator_call(f, a, b):
    """A binary operator: the engine, or NotImplemented for operand types it does not take.

    ``==`` and ``!=`` never return NotImplemented: Python would then fall back to
    identity and answer a scalar ``False`` (``a == None``, ``a == memoryview``).
    They ask the other operand's own comparison instead (a Dask array answers
    with an array) and raise TypeError when it has none. A torch tensor is
    refused at once (TypeError naming the bridge): torch's reflected operators
    would try the COO themselves and fail with torch's own errors.
    """
    bad = [x for x in (a, b) if classify(x) is None]
    if bad:
        if foreign_kind(bad[0], ("torch",)):
            raise TypeError(
                f"{f.__name__} of a coosparse.COO and a torch.Tensor is not supported: convert one side "
                "(coosparse.asarray(t) or coosparse.interop.torch.from_torch(t) for a COO, t.numpy() for a "
                "dense array, or coosparse.interop.torch.to_torch(a) and compute in torch)"
            )
        if f is np.equal or f is np.not_equal:
            return _compare_other(f, a, b)
        return NotImplemented
    if f is np.floor_divide:  # the operators are the Array API's (:mod:`.standard`)
        return elementwise(standard.floor_divide, (a, b), name="floor_divide")
    return elementwise(f, (a, b))


def _compare_other(f, a, b):
    coo, other = (a, b) if isinstance(a, COO) else (b, a)
    method = getattr(type(other), "__eq__" if f is np.equal else "__ne__", None)
    r = NotImplemented if method is None else method(other, coo)  # (in)equality is symmetric
    if r is not NotImplemented:
        return r
    hint = ("convert it with coosparse.asarray(t) or compare t.numpy()" if type(other).__module__.startswith("torch")
            else "convert it to a NumPy array or a COO first")
    raise TypeError(f"{f.__name__}: cannot compare a coosparse.COO array with a {type(other).__name__} "
                    f"elementwise; {hint}")


@operation("unary_operator")
def unary_call(f, a):
    """A unary operator (``-a``, ``+a``, ``abs(a)``, ``~a``)."""
    return elementwise(f, (a,))


@operation("inplace_operator")
def inplace_call(f, a, b):
    """``a op= b``: a new array with ``a``'s shape and dtype (NumPy's same_kind casting), never ``a`` changed."""
    r = operator_call(f, a, b)
    if r is NotImplemented:
        return r
    if not isinstance(r, COO):
        raise TypeError(
            f"in-place {f.__name__} would turn the COO into a dense array; write a = a op b instead"
        )
    if r.shape != a.shape:
        raise ValueError(f"in-place {f.__name__}: the result's shape {r.shape} is not the array's "
                         f"shape {a.shape} (operands broadcast to a larger shape)")
    if r.dtype != a.dtype:
        if not np.can_cast(r.dtype, a.dtype, "same_kind"):
            raise TypeError(f"in-place {f.__name__}: cannot cast the result from {r.dtype} to "
                            f"{a.dtype} with casting rule 'same_kind'")
        r = r.astype(a.dtype, copy=False)
    return r
