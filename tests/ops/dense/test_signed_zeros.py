"""The sign of zero in the dense meaning: stored -0.0, fills of -0.0, and what densifies.

The dense meaning of an index is the IEEE sum of its entries in stored order
(a single entry: the entry itself, -0.0 included), and the fill where nothing
is stored (its bits: -0.0 stays -0.0). Compared bit for bit (sign of zero
included; NaN equals NaN) on the CPU and the emulated GPU.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coosparse
from coosparse import COO
from reference import assert_bits, dense_meaning

FLOATS = [np.float16, np.float32, np.float64, np.complex64, np.complex128]
ZEROS = [0.0, -0.0]


@st.composite
def signed_coos(draw):
    dtype = np.dtype(draw(st.sampled_from(FLOATS)))
    sparse = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    dense = tuple(draw(st.lists(st.integers(1, 2), max_size=1)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    nnz = draw(st.integers(0, 3 * int(np.prod(sparse))))
    idx = np.stack([rng.integers(0, n, nnz) for n in sparse])
    pool = np.array([0.0, -0.0, 0.0, -0.0, 1.5, -1.5, np.inf, np.nan])
    vals = rng.choice(pool, (nnz,) + dense)
    if dtype.kind == "c":
        vals = vals.astype(complex)
        vals.imag = rng.choice(pool, vals.shape)  # (not 1j * x: 1j * inf has a NaN real part)
        vals[rng.random(vals.shape) < 0.3] = complex(-0.0, -0.0)
    kw = {}
    if draw(st.booleans()) and nnz:  # unique (and sometimes sorted) indices
        _, first = np.unique(idx.T, axis=0, return_index=True)
        first = np.sort(first)
        idx, vals = idx[:, first], vals[first]
        if draw(st.booleans()):
            order = np.lexsort(idx[::-1])
            idx, vals = idx[:, order], vals[order]
            kw["sorted"] = True
        kw["unique"] = draw(st.booleans())
    elif draw(st.booleans()) and nnz:
        order = np.lexsort(idx[::-1])
        idx, vals = idx[:, order], vals[order]
        kw["sorted"] = True
    fill = draw(st.sampled_from(ZEROS))
    if dtype.kind == "c":
        fill = complex(fill, draw(st.sampled_from(ZEROS)))
    with np.errstate(all="ignore"):
        vals = vals.astype(dtype)
    return COO(idx, vals, sparse + dense, fill_value=fill, **kw)


@settings(max_examples=60)
@given(a=signed_coos(), order=st.sampled_from("CF"))
def test_to_dense_keeps_the_sign_of_zero(a, order, backend):
    want = dense_meaning(a)
    with backend.sync_free():
        d = backend.put(a).to_dense(order=order)
    assert_bits(backend.get(d), want)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_stored_negative_zero_is_written(dtype, backend):
    # the example: a stored -0.0 (index unique, flag not given) beside the fill +0.0
    a = COO([[1, 0]], np.array([1.0, -0.0]).astype(dtype), (2,))
    assert_bits(backend.get(backend.put(a).to_dense()), np.array([-0.0, 1.0], dtype=dtype))
    # duplicates whose sum is -0.0, and one whose sum is +0.0
    b = COO([[0, 0, 1, 1, 2]], np.array([-0.0, -0.0, -0.0, 0.0, 2.0]).astype(dtype), (4,))
    assert_bits(backend.get(backend.put(b).to_dense()), np.array([-0.0, 0.0, 2.0, 0.0], dtype=dtype))
    # many duplicates: the destination-partitioned (parallel) kernel, same bits
    n = 1 << 16
    c = COO(np.zeros((1, n), np.int64) + np.arange(n) % 3, np.full(n, -0.0, dtype=dtype), (4,))
    assert_bits(backend.get(backend.put(c).to_dense()), np.array([-0.0, -0.0, -0.0, 0.0], dtype=dtype))


def test_fills_of_negative_zero(backend):
    assert_bits(coosparse.full(2, -0.0).to_dense(), np.full(2, -0.0))
    assert_bits(backend.get(backend.put(coosparse.full((2, 2), complex(-0.0, 0.0))).to_dense()),
                np.full((2, 2), complex(-0.0, 0.0)))
    a = COO([[0, 0, 2]], [1.0, -1.0, 0.0], (4,), fill_value=-0.0)
    assert_bits(backend.get(backend.put(a).to_dense()), np.array([0.0, -0.0, 0.0, -0.0]))
    assert_bits((-coosparse.zeros(3)).to_dense(), -np.zeros(3))


def test_dense_operand_sees_the_sign():
    # the example: -2.25 / -0.0 is +inf, not -inf
    a = COO([[1, 0]], [1.0, -0.0], (2,))
    with np.errstate(divide="ignore"):
        assert_bits(np.divide([-2.25, 1.0], a), np.divide([-2.25, 1.0], np.array([-0.0, 1.0])))


@settings(max_examples=40)
@given(a=signed_coos())
def test_where_keeps_the_sign_of_zero(a, backend):
    # coalesced: -x negates each entry, and x + (-x) is +0.0 whatever the order, so the negation of a
    # zero sum of duplicates is +0.0 where NumPy's -(+0.0) is -0.0 (documented in docs/numpy.md)
    a = (a if a.dtype.kind == "f" else a.real).coalesce()
    d = dense_meaning(a)
    x = backend.put(a)
    got = coosparse.where(x > 0, x, -x)
    with np.errstate(invalid="ignore"):
        assert_bits(backend.get(got.to_dense()), np.where(d > 0, d, -d))
        # with a dense condition: dense, or sparse where the condition's own values make one
        # background (SPEC 9; an all-False condition: -x's fill everywhere but at -x's entries)
        w = coosparse.where(backend.put(d > 0), x, -x)
        assert_bits(backend.get(w.to_dense() if isinstance(w, COO) else w), np.where(d > 0, d, -d))
    # a stored -0.0 is kept where the fill is +0.0 (and the other way round)
    z = COO([[0, 1]], np.array([-0.0, 0.0], dtype=a.dtype), (3,))
    w = coosparse.where(backend.put(COO([[0, 1]], [True, True], (3,))), backend.put(z), 0.0)
    assert_bits(backend.get(w.to_dense()), np.array([-0.0, 0.0, 0.0], dtype=a.dtype))


@pytest.mark.parametrize("f", [np.copysign, np.divide, np.arctan2, np.add, np.subtract, np.maximum])
def test_a_fill_of_negative_zero_takes_part_as_itself(f, backend):
    # where one operand stores nothing its fill takes part: -0.0, not the +0.0 of zero bits
    # (copysign(1, -0.0) is -1, 1 / -0.0 is -inf, arctan2(1, -0.0) is pi / 2), and the result's
    # fill is f of the fills, bit for bit (-0.0 + -0.0 is -0.0). The sign of a zero *result* at an
    # index one operand stores is not guaranteed (docs/reliability.md): compared by value there
    a = COO([[1, 2]], np.array([-1.0, 1.0]), (4,), fill_value=-0.0, unique=True)
    for b in (COO([[1]], np.array([-1.0]), (4,), fill_value=-0.0, unique=True),
              COO([[1, 1]], np.array([-1.0, 2.0]), (4,), fill_value=-0.0)):
        for x, y in ((a, b), (b, a)):
            with np.errstate(all="ignore"):
                got = f(backend.put(x), backend.put(y))
                want = f(dense_meaning(x), dense_meaning(y))
            assert_bits(got.fill_value, f(x.fill_value, y.fill_value))
            d = backend.get(got.to_dense())
            np.testing.assert_array_equal(d, want)  # (inf signs included; -0.0 == 0.0)
            assert_bits(d[[0, 3]], want[[0, 3]])  # stored by neither: the fill, sign included
