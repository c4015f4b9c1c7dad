"""einsum (SPEC 10): subscripts parsed as NumPy does, operands contracted pairwise by the
batched contraction of :mod:`.core` (diagonals taken, lone axes summed first).
"""
from __future__ import annotations

import operator

import numpy as np

from ..._core import dtypes as _dtypes
from ..._core.coo import COO
from ..._core.dispatch import implements
from ..._kernels.backend import array_namespace, backend_for, is_device_array
from ..coalesce import coalesce
from ..dense import from_dense
from .core import _as_operand, _check_zero_fill, _is_coo, _product, sparsify


# ----------------------------------------------------------------------------- einsum
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_ELLIPSIS_BASE = 1000  # symbols of broadcast (ellipsis) dims: _ELLIPSIS_BASE + position from the right


def _parse_term(term, what):
    """'ab...c' -> list of ints and Ellipsis."""
    out = []
    i = 0
    while i < len(term):
        ch = term[i]
        if ch == ".":
            if term[i:i + 3] != "..." or Ellipsis in out:
                raise ValueError(f"einsum: invalid ellipsis in {what} {term!r}")
            out.append(Ellipsis)
            i += 3
            continue
        if ch not in _LETTERS:
            raise ValueError(f"einsum: invalid subscript {ch!r} in {what} {term!r}; use letters a-z, A-Z")
        out.append(_LETTERS.index(ch))
        i += 1
    return out


def _parse_einsum(args):
    """(input terms, output term or None, operands) from either calling convention."""
    if not args:
        raise ValueError("einsum: no operands given")
    if isinstance(args[0], str):
        spec = args[0].replace(" ", "")
        arrays = list(args[1:])
        if spec.count("->") > 1 or ("-" in spec.replace("->", "")) or (">" in spec.replace("->", "")):
            raise ValueError(f"einsum: invalid subscripts {args[0]!r}")
        lhs, arrow, rhs = spec.partition("->")
        terms = [_parse_term(t, "input") for t in lhs.split(",")]
        out = _parse_term(rhs, "output") if arrow else None
        return terms, out, arrays
    if not (_is_coo(args[0]) or isinstance(args[0], np.ndarray) or is_device_array(args[0])):
        raise TypeError(
            f"einsum: the first argument must be a subscripts string or an operand; got {type(args[0]).__name__}"
        )
    arrays, terms = [], []
    rest = list(args)
    while len(rest) >= 2:
        arrays.append(rest.pop(0))
        terms.append(_check_sublist(rest.pop(0)))
    out = _check_sublist(rest.pop(0)) if rest else None
    return terms, out, arrays


def _check_sublist(sub):
    try:
        items = list(sub)
    except TypeError:
        raise TypeError(f"einsum: a subscript list must be a sequence of ints and Ellipsis; got {sub!r}") from None
    out = []
    for s in items:
        if s is Ellipsis:
            if Ellipsis in out:
                raise ValueError("einsum: a subscript list holds Ellipsis twice")
            out.append(Ellipsis)
            continue
        try:
            v = operator.index(s)
        except TypeError:
            raise TypeError(f"einsum: subscripts must be ints in [0, 52); got {s!r}") from None
        if not 0 <= v < 52:
            raise ValueError(f"einsum: subscript {v} is outside [0, 52)")
        out.append(v)
    return out


def _expand_ellipsis(term, ndim, what):
    """Replace Ellipsis by the broadcast symbols of its dimensions (right-aligned across operands)."""
    letters = [s for s in term if s is not Ellipsis]
    if Ellipsis not in term:
        if len(letters) != ndim:
            raise ValueError(f"einsum: {what} has {len(letters)} subscripts but the operand has {ndim} dimensions")
        return letters, 0
    ne = ndim - len(letters)
    if ne < 0:
        raise ValueError(f"einsum: {what} has more subscripts than the operand's {ndim} dimensions")
    i = term.index(Ellipsis)
    ell = [_ELLIPSIS_BASE + (ne - 1 - j) for j in range(ne)]
    return term[:i] + ell + term[i + 1:], ne


def _take_diagonal(x, syms):
    """Operand ``x`` with repeated symbols reduced to their diagonal: (x, unique symbols in order)."""
    keep = []
    for s in syms:
        if s not in keep:
            keep.append(s)
    if len(keep) == len(syms):
        return x, syms
    first = [syms.index(s) for s in keep]
    for s in keep:
        pos = [i for i, t in enumerate(syms) if t == s]
        if len({x.shape[i] for i in pos}) > 1:
            raise ValueError(f"einsum: a repeated subscript labels dimensions of sizes {[x.shape[i] for i in pos]}")
    if not _is_coo(x):
        xp = array_namespace(x)
        letters = "".join(_LETTERS[i % 52] for i in range(len(keep)))
        src = "".join(letters[keep.index(s)] for s in syms)
        return xp.einsum(f"{src}->{letters}", x), keep
    x = sparsify(x)
    xp = array_namespace(x.indices)
    ok = xp.ones(x.nnz, dtype=bool)
    for i, s in enumerate(syms):
        j = syms.index(s)
        if j != i:
            ok &= x.indices[i] == x.indices[j]
    pos = xp.nonzero(ok)[0]  # synchronize! (the number of diagonal entries)
    idx = _index_rows(xp, x.indices, first)[:, pos]
    shape = tuple(x.shape[i] for i in first)
    # restricting to i == j and dropping j keeps row-major order and uniqueness
    return COO(xp.ascontiguousarray(idx), x.values[pos], shape, sorted=x.is_sorted, unique=x.is_unique,
               check=False), keep


def _index_rows(xp, indices, which):
    """Rows ``which`` (host ints) of ``indices``, stacked: no host index array, so nothing is uploaded."""
    if not len(which):
        return xp.zeros((0, indices.shape[1]), dtype=np.int64)
    return xp.stack([indices[i] for i in which])


def _sum_axes(x, axes):
    """``x`` summed over ``axes`` (COO: the other index rows, duplicates summed by coalesce)."""
    if not axes:
        return x
    if not _is_coo(x):
        return array_namespace(x).sum(x, axis=tuple(axes), dtype=x.dtype)  # (NumPy widens small integers)
    x = sparsify(x)
    rest = [i for i in range(x.ndim) if i not in axes]
    xp = array_namespace(x.indices)
    out = COO(_index_rows(xp, x.indices, rest), x.values, tuple(x.shape[i] for i in rest), check=False)
    return coalesce(out)


def _permute(x, order):
    """``x`` with its axes in ``order`` (COO: index rows reordered, then coalesced)."""
    if list(order) == list(range(x.ndim)):
        return x
    if not _is_coo(x):
        return array_namespace(x).transpose(x, order)
    x = sparsify(x)
    xp = array_namespace(x.indices)
    out = COO(_index_rows(xp, x.indices, order), x.values, tuple(x.shape[i] for i in order), check=False)
    return coalesce(out)


def _pair(x, xs, y, ys, keep, op):
    """Contract operands x (symbols xs) and y (ys), keeping the symbols in ``keep``."""
    shared = [s for s in xs if s in ys]
    # a shared broadcast dimension of size 1 on one side: sum the other side over it if it is
    # contracted; a batch dimension broadcasts in _product
    for s in list(shared):
        nx, ny = x.shape[xs.index(s)], y.shape[ys.index(s)]
        if nx != ny and s not in keep:
            if nx != 1 and ny != 1:
                raise ValueError(f"einsum: subscript {_sym_name(s)} labels dimensions of sizes {nx} and {ny}")
            if nx == 1:
                y, ys = _sum_axes(y, [ys.index(s)]), [t for t in ys if t != s]
                x, xs = _sum_axes(x, [xs.index(s)]), [t for t in xs if t != s]
            else:
                x, xs = _sum_axes(x, [xs.index(s)]), [t for t in xs if t != s]
                y, ys = _sum_axes(y, [ys.index(s)]), [t for t in ys if t != s]
            shared.remove(s)
        elif nx != ny and nx != 1 and ny != 1:
            raise ValueError(f"einsum: subscript {_sym_name(s)} labels dimensions of sizes {nx} and {ny}")
    batch = [s for s in shared if s in keep]
    con = [s for s in shared if s not in keep]
    fx = [s for s in xs if s not in shared]
    fy = [s for s in ys if s not in shared]
    sizes = {}
    for s in batch:
        sizes[s] = max(x.shape[xs.index(s)], y.shape[ys.index(s)])
    bshape = tuple(sizes[s] for s in batch)
    r = _product(x, [xs.index(s) for s in batch], [xs.index(s) for s in fx], [xs.index(s) for s in con],
                 y, [ys.index(s) for s in batch], [ys.index(s) for s in con], [ys.index(s) for s in fy],
                 bshape, op)
    return r, batch + fx + fy


def _contraction_order(ops, out_syms):
    """Pairs (i, j) of positions to contract, NumPy's greedy path (the result goes last)."""
    if len(ops) < 2:
        return []
    names = {}
    for _, t in ops:
        for v in t:
            names.setdefault(v, _LETTERS[len(names)] if len(names) < 52 else None)
    if None in names.values() or len(ops) == 2:
        return [(0, 1)] + [(0, 1)] * (len(ops) - 2)
    spec = ",".join("".join(names[v] for v in t) for _, t in ops) + "->" + "".join(names[v] for v in out_syms)
    try:
        dummies = [np.broadcast_to(np.zeros((), dtype=np.float64), x.shape) for x, _ in ops]
    except ValueError:  # a shape of 2**63 elements or more has no NumPy array, even a broadcast one
        return [(0, 1)] * (len(ops) - 1)  # (the order only changes the cost, never the result)
    path, _ = np.einsum_path(spec, *dummies, optimize="greedy")
    out = []
    for step in path[1:]:
        if len(step) == 2:
            out.append(tuple(sorted(step)))
        else:  # a single operand or more than two at once: fall back to pairs of the first ones
            for _ in range(len(step) - 1):
                out.append((0, 1))
            break
    while len(out) < len(ops) - 1:
        out.append((0, 1))
    return out


def _sym_name(s):
    return _LETTERS[s] if s < 52 else "..."


def einsum(*operands, dtype=None, out=None, optimize=False, order="K", casting="safe"):
    """Einstein summation (``numpy.einsum``) over COO and dense operands.

    Both calling conventions are accepted (``einsum("ij,jk->ik", a, b)`` and
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``), with ``...`` broadcasting.
    Every operand is first cast to the result dtype, as NumPy does (a COO's
    duplicates are summed in its own dtype first), so that sums count in it.
    Repeated subscripts take diagonals, subscripts of one operand that are not
    in the output are summed first, then the operands are contracted pairwise,
    in NumPy's greedy order: two COO operands by SpGEMM, a COO and a dense one by SpMM,
    two dense ones by NumPy (CuPy).

    Parameters
    ----------
    dtype : dtype, optional
        The operands are cast to it first.
    casting : {'no', 'equiv', 'safe', 'same_kind', 'unsafe'}
        NumPy's rule for casting each operand to the result dtype (``dtype``,
        else the operands' common type): a cast it forbids raises TypeError,
        as NumPy does (``dtype=np.int8`` for int64 operands needs ``'unsafe'``).
    out, optimize, order
        Accepted for NumPy compatibility: ``out`` must be None; the others are
        ignored (the contraction order is NumPy's greedy one).

    Returns
    -------
    COO or ndarray
        A COO (coalesced) when every operand is a COO, else dense. Only
        ``fill_value`` 0 operands are accepted.

    Examples
    --------
    >>> import numpy as np, coosparse
    >>> a = coosparse.COO([[0, 1], [1, 0]], np.array([1.0, 2.0]), (2, 2))
    >>> coosparse.einsum("ij,jk->ik", a, np.eye(2))
    array([[0., 1.],
           [2., 0.]])
    >>> coosparse.einsum("ij->", a).to_dense()
    array(3.)
    """
    if out is not None:
        raise TypeError("einsum: out= is not supported for COO operands")
    terms, out_term, arrays = _parse_einsum(operands)
    if len(terms) != len(arrays):
        raise ValueError(f"einsum: {len(terms)} subscript terms for {len(arrays)} operands")
    arrays = [_as_operand(a, "einsum") for a in arrays]
    _check_zero_fill("einsum", *arrays)
    rdt = None if dtype is None else _dtypes.check_dtype(dtype, "einsum dtype")
    _check_casting(arrays, rdt, casting)
    if not any(_is_coo(a) for a in arrays):
        xp = backend_for(*arrays).xp
        kw = {"casting": casting} if xp is np else {}  # (checked above for CuPy's too)
        return xp.einsum(*operands, dtype=dtype, optimize=optimize, **kw) if isinstance(operands[0], str) else \
            xp.einsum(*operands, dtype=dtype, **kw)
    # NumPy casts every operand to the result dtype before it sums anything: a diagonal or a lone
    # axis summed in an operand's own dtype would wrap (int8), saturate (bool: "any") or promote
    # (NumPy's sum of int16 is int64) where NumPy's einsum counts in the result dtype. A COO's
    # duplicates are summed in its own dtype first (its dense meaning is what is cast)
    rdt = _dtypes.result_type(*[a.dtype for a in arrays]) if rdt is None else rdt
    arrays = [a.astype(rdt, copy=False) for a in arrays]
    all_sparse = all(_is_coo(a) for a in arrays)
    syms, nell = [], 0
    for i, (t, a) in enumerate(zip(terms, arrays)):
        s, ne = _expand_ellipsis(t, a.ndim, f"operand {i}'s subscripts")
        syms.append(s)
        nell = max(nell, ne)
    counts = {}
    for s in syms:
        for v in s:
            counts[v] = counts.get(v, 0) + 1
    ell = [_ELLIPSIS_BASE + j for j in range(nell - 1, -1, -1)]
    if out_term is None:
        out_syms = ell + sorted(v for v, c in counts.items() if c == 1 and v < _ELLIPSIS_BASE)
    else:
        if Ellipsis in out_term:
            i = out_term.index(Ellipsis)
            out_syms = out_term[:i] + ell + out_term[i + 1:]
        elif nell:  # NumPy's rule: broadcast dimensions are never summed away implicitly
            raise ValueError(
                f"einsum: the inputs' '...' stands for {nell} dimension(s) but the output has no '...' to "
                "hold them (NumPy's rule: write '...' in the output, or name the dimensions and sum them)"
            )
        else:
            out_syms = list(out_term)
        if len(set(out_syms)) != len(out_syms):
            raise ValueError("einsum: an output subscript is repeated")
        missing = [v for v in out_syms if v not in counts]
        if missing:
            raise ValueError(f"einsum: output subscript {_sym_name(missing[0])} does not occur in the inputs")
    # sizes agree (broadcast dims may be 1)
    sizes = {}
    for s, a in zip(syms, arrays):
        for v, n in zip(s, a.shape):
            m = sizes.setdefault(v, n)
            if n != m and (v < _ELLIPSIS_BASE or (n != 1 and m != 1)):
                raise ValueError(f"einsum: subscript {_sym_name(v)} labels dimensions of sizes {m} and {n}")
            sizes[v] = max(m, n) if v >= _ELLIPSIS_BASE else m
    # per operand: diagonals, then sums over subscripts nobody else needs
    ops = []
    for i, (s, a) in enumerate(zip(syms, arrays)):
        a, s = _take_diagonal(a, list(s))
        others = set(out_syms)
        for j, t in enumerate(syms):
            if j != i:
                others.update(t)
        drop = [k for k, v in enumerate(s) if v not in others]
        a = _sum_axes(a, drop)
        s = [v for k, v in enumerate(s) if k not in drop]
        ops.append((a, s))
    for i, j in _contraction_order(ops, out_syms):
        (x, xs), (y, ys) = ops[i], ops[j]
        rest = [op for k, op in enumerate(ops) if k not in (i, j)]
        keep = set(out_syms)
        for _, t in rest:
            keep.update(t)
        ops = rest + [_pair(x, xs, y, ys, keep, "einsum")]
    cur, cs = ops[0]
    # broadcast ellipsis dims of size 1 that the output lacks were summed; sum any left
    extra = [k for k, v in enumerate(cs) if v not in out_syms]
    if extra:
        cur = _sum_axes(cur, extra)
        cs = [v for v in cs if v in out_syms]
    for v in out_syms:
        if v not in cs:  # an ellipsis dim absent from every operand (size 1)
            cur = _expand_dims(cur, len(cs))
            cs = cs + [v]
    cur = _permute(cur, [cs.index(v) for v in out_syms])
    if all_sparse and not _is_coo(cur):  # all-sparse inputs always give a COO
        cur = from_dense(cur)
    if _is_coo(cur):  # (a lone operand's entries come through as they are: coalesced as documented)
        cur = coalesce(cur)
    return cur


def _check_casting(arrays, rdt, casting):
    """TypeError where NumPy's einsum refuses to cast an operand to the result dtype under ``casting``
    (cast silently, int64 operands summed as ``dtype=np.int8`` would wrap)."""
    _dtypes.check_casting(casting, "einsum")
    target = rdt if rdt is not None else _dtypes.result_type(*[a.dtype for a in arrays])
    for i, a in enumerate(arrays):
        if not np.can_cast(a.dtype, target, casting):
            raise TypeError(f"einsum: operand {i} of dtype {a.dtype} cannot be cast to {target} under "
                            f"casting={casting!r} (pass casting='unsafe' to allow it)")


def _expand_dims(x, axis):
    if not _is_coo(x):
        return array_namespace(x).expand_dims(x, axis)
    x = sparsify(x)
    xp = array_namespace(x.indices)
    idx = xp.concatenate([x.indices[:axis], xp.zeros((1, x.nnz), np.int64), x.indices[axis:]])
    return COO(idx, x.values, x.shape[:axis] + (1,) + x.shape[axis:], sorted=x.is_sorted,
               unique=x.is_unique, check=False)


@implements(np.einsum)
def _np_einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    return einsum(*operands, out=out, dtype=dtype, order=order, casting=casting, optimize=optimize)


