"""The fill rule of the elementwise engine (SPEC 8 and 9): which COO operands *annihilate*.

A COO operand annihilates when ``f`` takes one value, the result's fill,
wherever that operand is at its fill, whatever the other operands hold; the
result then needs only that operand's pattern (see the engine's table,
:mod:`.engine`). Two tests decide it:

- :func:`annihilators`: the other COO and dense operands run over *probes* of
  their dtypes (zeros of both signs, small and large magnitudes, the integer
  limits, values around every fill and constant of the call, inf and NaN;
  finite values only for ``multiply``, so ``x * 0`` counts as 0: SPEC 4's
  multiply). Cached per call signature.
- :func:`background`: when the probes show none and a dense operand takes
  part, the dense operands run over their own elements instead (before
  broadcasting), so ``A / row_sums[:, None]`` keeps fill 0 when no row sum is 0.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

from ..._kernels.backend import is_device_array


# ----------------------------------------------------------------------------- probes
@functools.lru_cache(maxsize=None)
def _probes(dtype):
    """Finite probe values of ``dtype`` (see the module docstring)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = [0, 1, -1, 2, -2, 3, -3, 5, 7, -8, 100, -100, info.max, info.min, info.max // 2 + 1]
        return np.array(sorted({v for v in vals if info.min <= v <= info.max}), dtype=dt)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -3.0, 2.5, 100.0, -1e-3, 1e-3, 1e4, -1e4]
    if dt.kind == "c":
        vals = vals + [1j, -1j, 2 - 0.5j, -0.5 + 3j]
    return np.array(vals).astype(dt)


def _same(v, r):
    """Elementwise: ``v`` equals the scalar ``r`` (NaN equal to NaN, part by part for complex values)."""
    return _equal_nan(np, np.asarray(v), np.asarray(r)[()])


def _equal_nan(xp, v, r):
    """Elementwise ``v == r`` with NaN equal to NaN; a complex part by part (nan+1j is not nan+5j)."""
    if v.dtype.kind == "c" or np.iscomplexobj(r):
        return _equal_nan(xp, v.real, r.real) & _equal_nan(xp, v.imag, r.imag)
    eq = v == r
    if v.dtype.kind == "f":
        eq = eq | (xp.isnan(v) & xp.isnan(r))
    return eq


def _evaluate(f, host_args, fkw):
    with np.errstate(all="ignore"):
        r = f(*host_args, **fkw)
    return r if isinstance(r, tuple) else (r,)


def _near(values, dtype):
    """Values of ``dtype`` at and around each of ``values`` (the fills and constants of a call).

    Comparisons change value where one operand crosses another's fill, so the
    probes of an operand include the other operands' fills, their
    neighbours, negatives, doubles and halves.
    """
    dt = np.dtype(dtype)
    out = []
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for v in values:
            v = np.asarray(v)
            if dt.kind in "iub" and v.dtype.kind in "fc" and not bool(np.isfinite(v).all()):
                continue
            c = np.asarray(v.real if dt.kind != "c" and v.dtype.kind == "c" else v).astype(dt)
            if dt.kind == "b":
                continue
            one = np.ones((), dt)
            near = [c, -c, c * 2, c + one, c - one]
            if dt.kind == "f":
                near += [c / 2, np.nextafter(c, np.inf).astype(dt), np.nextafter(c, -np.inf).astype(dt)]
            elif dt.kind == "c":
                near += [c / 2, c + 1j, np.conj(c)]
            out += [np.asarray(x, dt).reshape(()) for x in near]
    return np.array(out, dtype=dt) if out else np.empty(0, dt)


@functools.lru_cache(maxsize=None)
def _non_finite(dtype):
    """inf, -inf and NaN of a float or complex ``dtype`` (empty for the others)."""
    dt = np.dtype(dtype)
    return np.array([np.inf, -np.inf, np.nan]).astype(dt) if dt.kind in "fc" else np.empty(0, dt)


def _probe_set(f, dtype, anchors):
    """The probes of an operand of ``dtype``: :func:`_probes`, the values near the anchors, and the
    non-finite values but for ``multiply``, where ``x * 0`` is 0 (SPEC 4) although ``inf * 0`` is
    NaN (a NaN stored in another operand must propagate: ``minimum(-inf, nan)`` is NaN, not -inf)."""
    parts = [_probes(dtype), _near(anchors, dtype)]
    if f is not np.multiply:
        parts.append(_non_finite(dtype))
    return np.concatenate(parts)


def _annihilates(f, fkw, ops, j, fills):
    """``f`` equals ``fills`` whenever operand ``j`` is at its fill, for every probe of the others."""
    varying = [i for i, op in enumerate(ops) if i != j and op.kind in ("coo", "dense")]
    args = [op.host for op in ops]
    anchors = [op.host for op in ops if op.kind in ("coo", "const")]
    for axis, i in enumerate(varying):
        p = _probe_set(f, ops[i].dtype, anchors)
        args[i] = p.reshape((1,) * axis + (-1,) + (1,) * (len(varying) - axis - 1))
    try:
        outs = _evaluate(f, args, fkw)
    except Exception:  # e.g. integers to negative powers: no conclusion, so no
        return False
    return all(bool(_same(o, r).all()) for o, r in zip(outs, fills))


_ANNIHILATORS = {}  # cache: the decision depends only on f, its keywords, the kinds, dtypes and fills


def _host_key(op):
    v = np.asarray(op.host)
    return (op.kind, None if op.dtype is None else op.dtype.str, type(op.host).__name__, v.dtype.str,
            v.tobytes())


def annihilators(f, fkw, ops, fills):
    """Positions of the COO operands that annihilate (:func:`_annihilates`), cached per call signature."""
    try:
        key = (f, tuple(sorted(fkw.items())), tuple(_host_key(op) for op in ops))
        hash(key)
    except TypeError:
        key = None
    if key is not None and key in _ANNIHILATORS:
        return _ANNIHILATORS[key]
    out = [i for i, op in enumerate(ops) if op.kind == "coo" and _annihilates(f, fkw, ops, i, fills)]
    if key is not None:
        if len(_ANNIHILATORS) > 4096:
            _ANNIHILATORS.clear()
        _ANNIHILATORS[key] = out
    return out


# ----------------------------------------------------------------------------- dense operands
_SAMPLE = 17
"""Elements of the dense operands read first: a background that differs among them is decided
without a pass over the whole operand."""

_CHUNK = 1 << 20
"""Elements per evaluation of ``f`` over a host dense operand (bounded temporaries, early exit)."""


def _own(x, xp):
    """A dense operand without the axes it was broadcast along (zero strides: one element read)."""
    if x.ndim and 0 in x.strides and x.size:
        x = x[tuple(0 if st == 0 else slice(None) for st in x.strides)]
    return x


def _constant(outs, xp):
    """The one value of every output (NaN equal to NaN, either zero sign), or None.

    A zero keeps its sign when every element has it (an all -0.0 background is
    -0.0, as the dense meaning); zeros of both signs give +0.0.
    """
    first = []
    for o in outs:
        o = xp.asarray(o).reshape(-1)
        if o.shape[0] == 0:
            return None
        r = o[:1]
        eq = _equal_nan(xp, o, r)
        if o.dtype.kind in "fc":
            signs = (xp.signbit(o.real) == xp.signbit(r.real)) & (xp.signbit(o.imag) == xp.signbit(r.imag))
            decided = xp.stack([eq.all(), signs.all()])
        else:
            decided = xp.stack([eq.all(), xp.asarray(True)])
        # synchronize! (on a GPU: the decision is the host's; both answers in one read)
        same, one_sign = (decided.get() if is_device_array(decided) else decided).tolist()
        if not same:
            return None
        r = r.get() if is_device_array(r) else r  # synchronize! (the fill is a host scalar)
        r = r[0]
        first.append(r if one_sign else r + 0)  # + 0: zeros of both signs give +0
    return first


def _one_sign(a, b):
    """``b`` when ``a`` and ``b`` have the same zero sign(s), else ``b + 0``."""
    a, b = np.asarray(a), np.asarray(b)
    if b.dtype.kind not in "fc":
        return b[()]
    same = (np.signbit(a.real) == np.signbit(b.real)) and (np.signbit(a.imag) == np.signbit(b.imag))
    return b[()] if same else (b + 0)[()]


def background(f, xf, fkw, ops, xp):
    """SPEC 9 for dense operands: (annihilating COO positions, fills) when ``f`` is one value over
    the background, else None (a dense result).

    COO operand ``j`` annihilates when ``f`` with ``j`` at its fill takes one value
    while the other COO operands run over their probes (:func:`_probes`) and the
    dense operands over their own elements, before broadcasting (``A / rs[:, None]``
    reads the ``rs`` column, not the matrix it broadcasts to); several dense
    operands run over their joint broadcast. A sample of those elements is read
    first, so a background that varies is usually decided without a full pass.
    On a GPU this synchronises: once when the sampled values already differ
    (the common case of a dense result), a few times when they do not.
    """
    dense_at = [i for i, op in enumerate(ops) if op.kind == "dense"]
    own = [_own(ops[i].value, xp) for i in dense_at]
    try:
        own = xp.broadcast_arrays(*own) if len(own) > 1 else own
    except ValueError:
        return None
    n = own[0].size
    flat = [v.reshape(-1) for v in own]  # (a copy only for a non-contiguous operand)
    if n > _SAMPLE:
        step = -(-n // _SAMPLE)  # a strided slice: nothing uploaded to read it on a GPU
        stages = [[v[::step] for v in flat], flat]
    else:
        stages = [flat]
    coo_at = [i for i, op in enumerate(ops) if op.kind == "coo"]
    anchors = [op.host for op in ops if op.kind in ("coo", "const")]
    candidates = coo_at
    for stage in stages:
        decided = []
        for j in candidates:
            fills = _background_of(f, xf, fkw, ops, j, dense_at, stage, anchors, xp)
            if fills is not None:
                decided.append((j, fills))
        if not decided:
            return None
        candidates = [j for j, _ in decided]
    return candidates, tuple(np.asarray(r)[()] for r in decided[0][1])


def _background_of(f, xf, fkw, ops, j, dense_at, dense_values, anchors, xp):
    """The fills when operand ``j`` at its fill makes ``f`` one value, else None."""
    varying = [i for i, op in enumerate(ops) if i != j and op.kind == "coo"]
    k = len(varying)
    # 0-d host values as NumPy scalars (as strong under NEP 50): CuPy takes those, not host arrays
    args = [None if op.kind == "dense" else op.host[()] if isinstance(op.host, np.ndarray) else op.host
            for op in ops]
    for axis, i in enumerate(varying):
        p = _probe_set(f, ops[i].dtype, anchors)
        p = p.reshape((1,) * axis + (-1,) + (1,) * k)
        args[i] = p if xp is np else xp.asarray(p)
    fn = f if xp is np else xf
    n = dense_values[0].shape[0]
    step = _CHUNK if xp is np else max(n, 1)
    first = None
    for lo in range(0, n, step):
        for i, v in zip(dense_at, dense_values):
            args[i] = v[lo:lo + step].reshape((1,) * k + (-1,))
        try:
            with np.errstate(all="ignore"):
                outs = fn(*args, **fkw)
        except Exception:  # no conclusion (e.g. integers to negative powers): a dense result
            return None
        outs = outs if isinstance(outs, tuple) else (outs,)
        got = _constant(outs, xp)
        if got is None or (first is not None and not all(bool(_same(a, b)) for a, b in zip(got, first))):
            return None
        first = got if first is None else [_one_sign(a, b) for a, b in zip(got, first)]
    return first
