"""The per-row merges of multiply and sparse_mask of sorted arrays of three or more sparse axes.

With the leading axis' row pointers (cached, or built for large operands) the Numba layer merges
each row over the linear keys of the trailing axes (``rowmerge.row_multiply`` and
``row_mask_values`` given ``keys``) instead of the merge over whole keys. Checked here: the same
bits as the merge over keys and the dense meaning, three and four sparse axes, hybrid values,
repeats handed to the merge over keys, and lying operands refused before anything is written.
(The union's N-D row merge is tested in test_union.py.)
"""
import numpy as np
import pytest

import coosparse
from coosparse import COO
from coosparse._core.arrays import rows2d
from coosparse._kernels.numba import layer
from coosparse.ops.elementwise import operands as _operands
from coosparse.ops.elementwise.operands import row_pointers
from operands import close
from reference import dense_of


def _random(shape, nnz, seed, dtype=np.float64, k=None, lead=None, unique=True):
    """A sorted array of ``shape`` (all sparse) with about ``nnz`` entries, the leading index drawn
    from ``lead`` when given (the other leading rows empty), repeated keys kept when not ``unique``."""
    rng = np.random.default_rng(seed)
    trailing = int(np.prod(shape[1:]))
    first = rng.choice(lead, nnz) if lead is not None else rng.integers(0, shape[0], nnz)
    keys = first * trailing + rng.integers(0, trailing, nnz)
    keys = np.unique(keys) if unique else np.sort(keys)
    vshape = (keys.size,) + ((k,) if k else ())
    vals = rng.standard_normal(vshape) * 100
    if np.dtype(dtype).kind == "c":
        vals = vals + 1j * rng.standard_normal(vshape)
    return COO(np.stack(np.unravel_index(keys, shape)), vals.astype(dtype), shape + ((k,) if k else ()),
               sorted=True, unique=unique)


def _same(want, got):
    want, got = np.asarray(want), np.asarray(got)
    assert want.dtype == got.dtype and want.shape == got.shape
    assert want.view(np.uint8).tobytes() == got.view(np.uint8).tobytes()


SHAPES = [(30, 40, 50), (12, 5, 6, 7)]


@pytest.mark.parametrize("shape", SHAPES, ids=["3-D", "4-D"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint8, np.complex128])
@pytest.mark.parametrize("k", [None, 3])
@pytest.mark.parametrize("nnz", [0, 1, 200, 40_000])
def test_nd_row_merges_equal_the_key_merges_bit_for_bit(shape, dtype, k, nnz):
    # b only in every third leading row: rows empty on one side, both sides, or neither
    a = _random(shape, nnz, 1, dtype, k)
    b = _random(shape, nnz // 2 + 1, 2, dtype, k, lead=np.arange(0, shape[0], 3))
    strides = np.array([int(np.prod(shape[d + 1:])) for d in range(len(shape))])
    av, bv = rows2d(a.values), rows2d(b.values)
    pointers = a.row_pointer(), b.row_pointer()
    for x, y, xv, yv, p in [(a, b, av, bv, pointers), (b, a, bv, av, pointers[::-1])]:
        want = layer.merge_multiply(x.indices, xv, y.indices, yv, strides, sizes=shape)
        got = layer.merge_multiply(x.indices, xv, y.indices, yv, strides, sizes=shape, pointers=p)
        for w, g in zip(want, got):
            _same(w, g)
        want = layer.mask_values(x.indices, y.indices, yv, strides, sizes=shape)
        _same(want, layer.mask_values(x.indices, y.indices, yv, strides, sizes=shape, pointers=p))


@pytest.mark.parametrize("shape", [(300, 40, 50), (30, 20, 30, 40)], ids=["3-D", "4-D"])
@pytest.mark.parametrize("op", ["multiply", "sparse_mask"])
def test_nd_row_merges_against_dense(backend, shape, op):
    # large enough for several parts and for the pointers to be built; skewed leading rows (two
    # long ones) to move the cuts
    lead = np.concatenate([np.repeat(np.arange(shape[0]), 20), np.full(shape[0] * 5, 1),
                           np.full(shape[0] * 5, shape[0] - 2)])
    a, b = _random(shape, 45_000, 3, lead=lead), _random(shape, 35_000, 4)
    assert a.nnz + b.nnz > _operands.ROW_MERGE_MIN and row_pointers(a, b, nd=True) is not None
    r = backend.get(getattr(coosparse, op)(backend.put(a), backend.put(b)))
    assert r.is_sorted and r.is_unique and r.dtype == np.float64
    if op == "multiply":
        close(dense_of(r), dense_of(a) * dense_of(b), np.float64)
    else:
        np.testing.assert_array_equal(r.indices, b.indices)
        np.testing.assert_array_equal(dense_of(r), np.where(dense_of(b) != 0, dense_of(a), 0))


def test_nd_hybrid_values_and_signs_through_rows(monkeypatch):
    # dense dimensions ride along; -0.0 and NaN products keep their bits
    monkeypatch.setattr(_operands, "ROW_MERGE_MIN", 0)
    idx = [[0, 0, 1, 2], [1, 3, 0, 2], [4, 0, 1, 1]]
    a = COO(idx, np.array([[-0.0, 1.0], [2.0, np.inf], [3.0, 4.0], [5.0, 6.0]]), (3, 4, 5, 2),
            sorted=True, unique=True)
    b = COO([[0, 1, 2], [1, 0, 2], [4, 1, 0]], np.array([[2.0, 3.0], [0.0, 0.5], [7.0, 8.0]]), (3, 4, 5, 2),
            sorted=True, unique=True)
    r = coosparse.multiply(a, b)
    assert r.indices.tolist() == [[0, 1], [1, 0], [4, 1]]
    assert np.signbit(r.values[0, 0]) and r.values.tolist()[1] == [0.0, 2.0]
    m = coosparse.sparse_mask(a, b)
    assert m.values.tolist() == [[-0.0, 1.0], [3.0, 4.0], [0.0, 0.0]] and np.signbit(m.values[0, 0])


@pytest.mark.parametrize("order", ["ab", "ba"])
def test_nd_repeats_go_to_the_key_merge(backend, order, monkeypatch):
    # one side sorted with repeated keys: the row merge hands the product to the merge over keys,
    # which keeps the source's repeats and sums a probe's; sparse_mask's mask may repeat (its x may not)
    monkeypatch.setattr(_operands, "ROW_MERGE_MIN", 0)
    rep = _random((20, 6, 7), 700, 11, unique=False)
    assert rep.nnz > np.unique(np.ravel_multi_index(tuple(rep.indices), (20, 6, 7))).size
    co = _random((20, 6, 7), 600, 12)
    a, b = (rep, co) if order == "ab" else (co, rep)
    r = backend.get(coosparse.multiply(backend.put(a), backend.put(b)))
    assert r.is_sorted and not r.is_unique
    close(dense_of(r), dense_of(a) * dense_of(b), np.float64)
    m = backend.get(coosparse.sparse_mask(backend.put(co), backend.put(rep)))
    np.testing.assert_array_equal(m.values, dense_of(co)[tuple(rep.indices)])


@pytest.mark.parametrize("bad", ["trailing index", "negative index", "order within a row", "repeat"])
@pytest.mark.parametrize("op", ["multiply", "sparse_mask"])
def test_nd_row_intersections_refuse_lying_operands(bad, op):
    """What the flags and check=False skipped: an index outside the shape raises IndexError, keys
    out of order within a row ValueError, before anything is written. A repeat under a unique flag
    is no error for these two: the row merge hands it to the merge over keys, which keeps a
    source's (mask's) repeats and sums a probe's (x's), as for matrices."""
    shape = (200, 30, 40)
    rng = np.random.default_rng(5)
    keys = np.sort(rng.choice(int(np.prod(shape)), size=70_000, replace=False))
    idx = np.stack(np.unravel_index(keys, shape)).astype(np.int64)
    good = COO(idx.copy(), rng.standard_normal(keys.size), shape, sorted=True, unique=True)
    first = int(np.searchsorted(idx[0], idx[0, 500]))
    if bad == "trailing index":
        idx[2, first] = 40
    elif bad == "negative index":
        idx[1, first + 1] = -1
    elif bad == "order within a row":
        idx[1:, [first, first + 1]] = idx[1:, [first + 1, first]]
    else:
        idx[1:, first + 1] = idx[1:, first]
    lying = COO(idx, rng.standard_normal(keys.size), shape, sorted=True, unique=True, check=False)
    lying.row_pointer(), good.row_pointer()
    fn = getattr(coosparse, op)
    for x, y in ((lying, good), (good, lying)):
        if bad != "repeat":
            with pytest.raises(IndexError if "index" in bad else ValueError):
                fn(x, y)
            continue
        r = fn(x, y)
        if op == "multiply":
            close(dense_of(r), dense_of(x) * dense_of(y), np.float64)
        else:
            np.testing.assert_array_equal(r.indices, y.indices)
            close(r.values, dense_of(x)[tuple(y.indices)], np.float64)


@pytest.mark.parametrize("op", ["multiply", "sparse_mask", "add"])
def test_trailing_keys_are_cached_with_the_operands(op):
    # the first merge builds the keys (with the row pointer), counts them in nbytes, and later merges
    # read them; drop_companions frees them, and the result does not change
    shape = (300, 40, 50)
    a, b = _random(shape, 45_000, 7), _random(shape, 35_000, 8)
    before = a.nbytes
    first = getattr(coosparse, op)(a, b)
    keys = a._cached_companion(("trailing keys",))
    np.testing.assert_array_equal(keys, np.ravel_multi_index(tuple(a.indices[1:]), shape[1:]))
    assert a.nbytes == before + keys.nbytes + 8 * (shape[0] + 1)
    again = getattr(coosparse, op)(a, b)
    a.drop_companions(), b.drop_companions()
    for r in (again, getattr(coosparse, op)(a, b)):
        _same(first.indices, r.indices)
        _same(first.values, r.values)
    # matrices and small operands (pointers not cached) keep none
    m = _random((300, 2000), 45_000, 9)
    getattr(coosparse, op)(m, _random((300, 2000), 35_000, 10))
    assert m._cached_companion(("trailing keys",)) is None
    small = _random(shape, 100, 11)
    getattr(coosparse, op)(small, _random(shape, 100, 12))
    assert small._cached_companion(("trailing keys",)) is None
