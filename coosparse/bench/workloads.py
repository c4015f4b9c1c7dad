"""Built-in benchmark workloads: generated, seeded, vectorised (no downloads).

Every generator takes a ``size`` (``"small"``, ``"medium"``, ``"large"``) and a
``seed`` and returns CPU :class:`coosparse.COO` arrays; the same arguments give
bit-identical arrays on every machine (NumPy's ``default_rng``/PCG64 stream).

- :func:`uniform` — the default workload: uniformly drawn entries in a
  (131072, 131072) float64 matrix (2,000,000 entries at ``medium``),
  duplicates as drawn, random order.
- :func:`uniform_pair` — two such arrays for binary operations: ``b`` holds
  half of ``a``'s indices (in a random order) plus as many fresh ones.
- :func:`rmat` — a power-law graph from the Graph500 Kronecker (R-MAT)
  generator, a=0.57, b=0.19, c=0.19, d=0.05, edge factor 16, with Graph500's
  random vertex relabelling and edge shuffle (duplicate edges kept).
- :func:`tensor3d` — a 3-D array whose dense form fits in memory (for
  ``to_dense`` and dense-operand cases).

Examples
--------
>>> from coosparse.bench import workloads
>>> a = workloads.uniform("small")
>>> a.shape, a.nnz, a.is_sorted
((131072, 131072), 200000, False)
>>> a, b = workloads.uniform_pair("small", coalesced=True)
>>> a.is_coalesced and b.is_coalesced
True
>>> g = workloads.rmat("small")
>>> g.shape, g.nnz
((16384, 16384), 262144)
"""
from __future__ import annotations

import numpy as np

from .._core.coo import COO

SIZES = ("small", "medium", "large")

#: entries of the uniform workload per size (2,000,000 at medium)
UNIFORM_NNZ = {"small": 200_000, "medium": 2_000_000, "large": 20_000_000}
#: shape of the uniform workload (2**17 x 2**17)
UNIFORM_SHAPE = (131072, 131072)
#: dense values per entry of the hybrid workload
HYBRID_WIDTH = 8
#: Graph500 SCALE per size (2**SCALE vertices); EDGEFACTOR edges per vertex
RMAT_SCALE = {"small": 14, "medium": 17, "large": 20}
RMAT_EDGEFACTOR = 16
#: Graph500 initiator probabilities (d = 1 - a - b - c = 0.05)
RMAT_ABC = (0.57, 0.19, 0.19)
#: 3-D workload: (shape, nnz) per size; the dense form is 16 MiB / 128 MiB / 1 GiB
TENSOR3D = {
    "small": ((128, 128, 128), 200_000),
    "medium": ((256, 256, 256), 2_000_000),
    "large": ((512, 512, 512), 20_000_000),
}


def _check_size(size):
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}; got {size!r}")


def _rng(seed):
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _unravel(keys, shape):
    return np.ascontiguousarray(np.stack(np.unravel_index(keys, shape)).astype(np.int64, copy=False))


def _first_of_runs(sorted_keys):
    """Mask of the first element of each run of equal keys."""
    mask = np.ones(sorted_keys.shape[0], dtype=bool)
    mask[1:] = sorted_keys[1:] != sorted_keys[:-1]
    return mask


def _sorted_unique(keys):
    # np.unique is several times slower than sort + mask on NumPy 2.x
    s = np.sort(keys)
    return s[_first_of_runs(s)]


def _coo(keys, values, shape, *, coalesced=False):
    """COO from linear keys; ``coalesced`` sorts and drops repeated keys first."""
    if coalesced:
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        first = _first_of_runs(keys)
        keys, values = keys[first], values[order[first]]
    return COO(_unravel(keys, shape), values, shape, sorted=coalesced, unique=coalesced, check=False)


def uniform(size="medium", seed=0, *, duplicates=True, coalesced=False, dtype=np.float64):
    """Uniformly drawn entries in a (131072, 131072) array (the default workload).

    Parameters
    ----------
    size : {"small", "medium", "large"}
        200,000 / 2,000,000 / 20,000,000 entries.
    seed : int or numpy.random.Generator
    duplicates : bool
        True: indices drawn with replacement, so a few repeat (flags False).
        False: distinct indices in random order (``is_unique`` True).
    coalesced : bool
        Sort and drop repeats (both flags True; nnz a little below the nominal).
    dtype : dtype
        Values uniform in [0, 1).
    """
    _check_size(size)
    return _uniform_in(_rng(seed), UNIFORM_SHAPE, UNIFORM_NNZ[size], duplicates, coalesced, dtype)


def hybrid(size="medium", seed=0, *, width=HYBRID_WIDTH, dtype=np.float64):
    """Uniform draws in (131072, 131072) with a dense row of ``width`` values per entry (a hybrid array).

    One ``width``-th of :func:`uniform`'s entries (250,000 of width 8 at medium: the
    same number of values), duplicates as drawn (flags False); shape (131072, 131072, width).
    """
    _check_size(size)
    rng = _rng(seed)
    n = UNIFORM_NNZ[size] // width
    keys = rng.integers(0, int(np.prod(UNIFORM_SHAPE)), size=n, dtype=np.int64)
    values = rng.random((n, width)).astype(dtype, copy=False)
    return COO(_unravel(keys, UNIFORM_SHAPE), values, UNIFORM_SHAPE + (width,), check=False)


def _uniform_in(rng, shape, n, duplicates, coalesced, dtype):
    """``n`` uniform draws of linear indices in ``shape`` (see :func:`uniform` for the flags)."""
    total = int(np.prod(shape))
    keys = rng.integers(0, total, size=n, dtype=np.int64)
    if not duplicates and not coalesced:
        keys = _distinct_in_random_order(rng, keys, total)
    values = rng.random(keys.shape[0]).astype(dtype, copy=False)
    out = _coo(keys, values, shape, coalesced=coalesced)
    if not duplicates and not coalesced:
        out = COO(out.indices, out.values, shape, unique=True, check=False)
    return out


def _distinct_in_random_order(rng, keys, total):
    n = keys.shape[0]
    keys = _sorted_unique(keys)
    while keys.shape[0] < n:
        keys = _sorted_unique(np.concatenate([keys, rng.integers(0, total, size=n - keys.shape[0], dtype=np.int64)]))
    return rng.permutation(keys)


def uniform_pair(size="medium", seed=0, *, coalesced=False, dtype=np.float64):
    """Two uniform arrays for binary operations; ``b`` shares half of ``a``'s indices.

    ``a`` has distinct indices (the uniform workload without repeats); ``b``
    takes a random half of ``a``'s indices plus the same number of fresh ones,
    in a random order, with its own values. About half of each side matches
    the other.

    Parameters
    ----------
    coalesced : bool
        False (default): both sides unsorted, ``is_unique`` True, flags
        ``sorted=False``. True: both coalesced (the flag case where the
        intersection is a linear merge).
    """
    _check_size(size)
    rng = _rng(seed)
    n = UNIFORM_NNZ[size]
    total = UNIFORM_SHAPE[0] * UNIFORM_SHAPE[1]
    # 1.5 n distinct keys: a = first n, b = a random half of a + the last n/2
    pool = _distinct_in_random_order(rng, rng.integers(0, total, size=n + n // 2, dtype=np.int64), total)
    a_keys = pool[:n]
    shared = a_keys[rng.permutation(n)[: n // 2]]
    b_keys = rng.permutation(np.concatenate([shared, pool[n:]]))
    a_vals = rng.random(n).astype(dtype, copy=False)
    b_vals = rng.random(b_keys.shape[0]).astype(dtype, copy=False)
    if coalesced:
        return (_coo(a_keys, a_vals, UNIFORM_SHAPE, coalesced=True),
                _coo(b_keys, b_vals, UNIFORM_SHAPE, coalesced=True))
    return (COO(_unravel(a_keys, UNIFORM_SHAPE), a_vals, UNIFORM_SHAPE, unique=True, check=False),
            COO(_unravel(b_keys, UNIFORM_SHAPE), b_vals, UNIFORM_SHAPE, unique=True, check=False))


def coalesced_copy(a):
    """``a``'s entries sorted, both flags True (for arrays with distinct indices, e.g. :func:`uniform_pair`'s).

    Where an index repeats, only its first entry is kept (no sum): this
    reorders generated data, it is not a coalesce under test.
    """
    keys = np.ravel_multi_index(tuple(a.indices), a.shape)
    return _coo(keys, a.values, a.shape, coalesced=True)


def rmat_edges(scale, edgefactor=RMAT_EDGEFACTOR, seed=0, abc=RMAT_ABC):
    """Graph500 Kronecker generator: (2, edgefactor * 2**scale) int64 edge list.

    Follows the Graph500 reference (``kronecker_generator.m``): for each of
    ``scale`` bits, pick the quadrant with probabilities a, b, c, d; then
    relabel vertices by a random permutation and shuffle the edges.
    Vectorised over edges (one pass per bit). Self-loops and duplicate edges
    are kept, as in the reference.
    """
    rng = _rng(seed)
    a, b, c = abc
    m = edgefactor * (1 << scale)
    ab = a + b
    c_norm = c / (1.0 - ab)
    a_norm = a / ab
    ij = np.zeros((2, m), dtype=np.int64)
    for bit in range(scale):
        ii = rng.random(m) > ab
        jj = rng.random(m) > np.where(ii, c_norm, a_norm)
        ij[0] += ii.astype(np.int64) << bit
        ij[1] += jj.astype(np.int64) << bit
    perm = rng.permutation(1 << scale)
    ij = perm[ij]
    return np.ascontiguousarray(ij[:, rng.permutation(m)])


def rmat(size="medium", seed=0, *, coalesced=False, dtype=np.float64):
    """A power-law graph's adjacency matrix (Graph500 R-MAT), weights uniform in [0, 1).

    SCALE 14 / 17 / 20 (16,384 / 131,072 / 1,048,576 vertices) with 16 edges
    per vertex: 262,144 / 2,097,152 / 16,777,216 entries, many of them
    repeated edges (flags False) unless ``coalesced``.
    """
    _check_size(size)
    rng = _rng(seed)
    scale = RMAT_SCALE[size]
    ij = rmat_edges(scale, seed=rng)
    n = 1 << scale
    values = rng.random(ij.shape[1]).astype(dtype, copy=False)
    if coalesced:
        keys = ij[0] * n + ij[1]
        return _coo(keys, values, (n, n), coalesced=True)
    return COO(ij, values, (n, n), check=False)


def tensor3d(size="medium", seed=0, *, duplicates=True, coalesced=False, dtype=np.float64):
    """Uniform entries in a 3-D array small enough to densify (128**3 / 256**3 / 512**3)."""
    _check_size(size)
    shape, n = TENSOR3D[size]
    return _uniform_in(_rng(seed), shape, n, duplicates, coalesced, dtype)


def describe(a):
    """A short label for tables: 'shape nnz flags'."""
    flags = "coalesced" if a.is_coalesced else ("unique" if a.is_unique else ("sorted" if a.is_sorted else "raw"))
    return f"{'x'.join(map(str, a.shape))} nnz={a.nnz:,} {flags}"


#: name -> generator, for the CLI's workload listing
WORKLOADS = {"uniform": uniform, "uniform_pair": uniform_pair, "rmat": rmat, "tensor3d": tensor3d}
