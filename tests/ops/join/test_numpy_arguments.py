"""NumPy's functions on a COO read their arguments as NumPy does: np.repeat's counts, np.roll's
shifts, np.tril/np.triu of a 1-D array (the Array API's functions keep their own rules)."""
import warnings

import numpy as np
import pytest

import coosparse
from manip_helpers import assert_coo, from_dense_fill, same_or_raises


def _arrays():
    """(dense, COO) pairs: fill 0, a non-zero fill, empty, a hybrid (dense last axis)."""
    x = np.array([1.0, 0.0, 2.0, 0.0])
    f = np.array([7.0, 3.0, 7.0, 7.0, 5.0])
    m = np.arange(6.0).reshape(2, 3) % 4
    yield x, from_dense_fill(x)
    yield f, from_dense_fill(f, 7.0)
    yield np.zeros(0), from_dense_fill(np.zeros(0))
    yield m, from_dense_fill(m, sparse_ndim=1)


REPEATS = [2.0, 2.5, 0.5, True, False, np.True_, np.float32(2), np.float64(1.9), "2", b"1", (1,),
           -1.0, np.nan, np.inf, None, 1 + 0j, 2**63, -1,
           np.array(2.0), np.array([2.0]), np.array([1], dtype=np.uint64), np.array(True), np.array([True]),
           np.array([], dtype=float)]


@pytest.mark.parametrize("repeats", REPEATS, ids=repr)
def test_np_repeat_reads_counts_as_numpy(repeats, backend):
    for d, a in _arrays():
        x = backend.put(a)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's own casts of NaN
            r = same_or_raises(lambda: np.repeat(x, repeats), lambda: np.repeat(d, repeats))
        if r is not None:
            assert_coo(backend.get(r[0]), r[1])
            assert backend.get(r[0]).fill_value == a.fill_value


def test_np_repeat_per_element_counts_as_numpy(backend):
    for d, a in _arrays():
        n = d.shape[0]
        x = backend.put(a)
        for reps in ([1.0] * n, [1.7] * n, [True, False] * (n // 2) + [True] * (n % 2),
                     np.arange(n) % 2 == 0, np.ones(n), np.ones(n, dtype=np.uint64), np.ones(n, np.uint8)):
            r = same_or_raises(lambda: np.repeat(x, reps, axis=0), lambda: np.repeat(d, reps, axis=0))
            if r is not None:
                assert_coo(backend.get(r[0]), r[1])
    # counts on the device, and as a COO, read as their dense meaning
    d, a = next(_arrays())
    mask = np.array([True, False, True, True])
    assert_coo(backend.get(np.repeat(backend.put(a), backend.put(mask))), np.repeat(d, mask))
    assert_coo(backend.get(np.repeat(backend.put(a), coosparse.asarray(mask))), np.repeat(d, mask))
    with pytest.raises(TypeError):
        np.repeat(backend.put(a), backend.put(np.ones(4)))


def test_array_api_repeat_takes_integers_only():
    a = coosparse.asarray(np.array([1, 2]))
    for reps in (2.0, True, np.array([True, False])):
        with pytest.raises(ValueError, match="integer"):
            coosparse.repeat(a, reps)


def test_np_repeat_negative_count_of_an_empty_axis(backend):
    # NumPy repeats an empty axis by any count (nothing to repeat); another axis refuses it
    for shape in ((0,), (0, 3), (2, 0)):
        d = np.zeros(shape)
        x = backend.put(coosparse.asarray(d))
        for axis in (None, 0, -1):
            for reps in (-1, -1.0, [-1]):
                r = same_or_raises(lambda: np.repeat(x, reps, axis=axis), lambda: np.repeat(d, reps, axis=axis))
                if r is not None:
                    assert_coo(backend.get(r[0]), r[1])


SHIFTS = [1.0, 1.5, -1.5, 7.9, True, np.True_, np.float32(-2), np.array(1.0), [1.0], np.array([1.5]), "1",
          np.nan, np.inf, None, 1 + 0j, [[1.0]]]


@pytest.mark.parametrize("shift", SHIFTS, ids=repr)
def test_np_roll_reads_shifts_as_numpy(shift, backend):
    for d, a in _arrays():
        x = backend.put(a)
        for axis in (None, 0, -1):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", np.exceptions.ComplexWarning)  # int() of 1+0j, as NumPy
                r = same_or_raises(lambda: np.roll(x, shift, axis=axis), lambda: np.roll(d, shift, axis=axis))
            if r is not None:
                assert_coo(backend.get(r[0]), r[1])
                assert backend.get(r[0]).fill_value == a.fill_value


def test_np_roll_float_shifts_per_axis(backend):
    d = np.arange(12.0).reshape(3, 4) % 5
    a = from_dense_fill(d)
    x = backend.put(a)
    for shift, axis in (((1.0, -2.5), (0, 1)), ((1.5, 1.5), (1, 1)), (np.array([2.0, True]), (0, -1))):
        assert_coo(backend.get(np.roll(x, shift, axis)), np.roll(d, shift, axis))
    # NumPy checks the axes before it reads the shifts
    for shift, axis in ((np.nan, 2), (1.5, 1.0)):
        r = same_or_raises(lambda: np.roll(x, shift, axis), lambda: np.roll(d, shift, axis))
        assert r is None


def test_array_api_roll_takes_integers_only():
    with pytest.raises(TypeError):
        coosparse.roll(coosparse.asarray(np.array([1, 2])), 1.0)


@pytest.mark.parametrize("fn", [np.tril, np.triu])
def test_np_triangle_of_a_1d_array_is_numpys_matrix(fn, backend):
    rng = np.random.default_rng(0)
    v = np.where(rng.random(7) < 0.5, rng.standard_normal(7), 0.0)
    cases = [(v, from_dense_fill(v)), (np.zeros(0), from_dense_fill(np.zeros(0))),
             (np.arange(5) % 3, from_dense_fill(np.arange(5) % 3, sparse_ndim=0)),  # one dense block
             (np.array([True, False, True]), from_dense_fill(np.array([True, False, True])))]
    for d, a in cases:
        for unsorted in (False, True):
            if unsorted and a.nnz > 1:  # the same entries in another order
                a = coosparse.COO(a.indices[:, ::-1], a.values[::-1], a.shape)
            x = backend.put(a)
            for k in (0, 1, -1, 3, -7, 7, 100, -100, True):
                out = backend.get(fn(x, k))
                assert_coo(out, fn(d, k))
                assert (out.is_unique or not a.is_unique) and (out.is_sorted or not a.is_sorted)  # kept
            assert_coo(backend.get(fn(x)), fn(d))


def test_np_triangle_of_a_1d_array_needs_fill_zero():
    a = from_dense_fill(np.array([7.0, 1.0, 7.0]), 7.0)
    for fn in (np.tril, np.triu):
        with pytest.raises(ValueError, match="fill"):
            fn(a)


def test_array_api_triangle_takes_matrices_only():
    # the Array API's tril/triu take (..., M, N); a 1-D array is refused there
    for fn in (coosparse.tril, coosparse.triu):
        with pytest.raises(ValueError, match="2 dimensions"):
            fn(coosparse.asarray(np.array([1.0, 2.0])))
