"""Shape arithmetic near 2**63: every operation that computes a new shape or a new entry count.

A computed dimension above 2**63 (its indices would not fit int64) is refused
with ValueError naming the operation and the size, never wrapped; shapes whose
element count passes 2**63 stay legal (SPEC 2's wide keys); an entry count
that no memory can hold is refused at once with MemoryError naming the sizes.
Results near the limit are compared index by index with exact Python ints (the
dense form cannot exist), results of ordinary size with NumPy.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coosparse
from coosparse import COO
from coosparse._core import shapes
from coosparse._kernels import bounds
from manip_helpers import assert_coo, reference

BIG = 2**62


def _cols(a):
    """The stored (index tuple, value) pairs of a host COO, in stored order, as Python ints."""
    return [(tuple(int(v) for v in a.indices[:, i]), a.values[i].tolist()) for i in range(a.nnz)]


@pytest.fixture
def small_memory(monkeypatch):
    """A machine of 1 MiB: check_entries then refuses results of ordinary size (nothing big is allocated)."""
    monkeypatch.setattr(bounds, "memory_bytes", lambda: 2**20)


def _fast(call, exc, match):
    """The refusal comes from the size check, before any work: under ``small_memory`` the work itself
    would succeed, and elsewhere it would fail differently (an allocation's own MemoryError)."""
    with pytest.raises(exc, match=match):
        call()


# ----------------------------------------------------------------------------- the helpers
def test_checked_shape():
    assert shapes.checked_shape([2**63, 0, 5], "op") == (2**63, 0, 5)
    with pytest.raises(ValueError, match=r"op: dimension 1 of the result would have size 9223372036854775809"):
        shapes.checked_shape([1, 2**63 + 1], "op")
    with pytest.raises(ValueError, match="negative size"):
        shapes.checked_shape([-1], "op")
    # a dimension carried over from the input is not checked (its indices are the input's)
    assert shapes.checked_shape([2**64, 3], "op", like=(2**64, 2)) == (2**64, 3)
    with pytest.raises(ValueError, match="dimension 0"):
        shapes.checked_shape([2**64 + 1, 3], "op", like=(2**64, 3))


def test_check_entries(small_memory):
    shapes.check_entries(1000, "op", 16)
    with pytest.raises(MemoryError, match=r"op: the result would hold 100000 entries of 16 bytes"):
        shapes.check_entries(10**5, "op", 16)
    with pytest.raises(MemoryError, match="more than 2\\*\\*63"):
        shapes.check_entries(2**63, "op", 0)


# ----------------------------------------------------------------------------- kron
def test_kron_near_the_limit_is_exact(backend):
    a = COO([[0, 2**61 - 1]], [1.0, 2.0], (2**61,))
    b = COO([[0, 3]], [3.0, 5.0], (4,))
    out = backend.get(coosparse.kron(backend.put(a), backend.put(b)))
    assert out.shape == (2**63,)
    got = sorted(_cols(out))
    want = sorted(((i * 4 + j,), va * vb) for i, va in [(0, 1.0), (2**61 - 1, 2.0)] for j, vb in [(0, 3.0), (3, 5.0)])
    assert got == want
    assert max(int(v) for v in out.indices[0]) == 2**63 - 1


@pytest.mark.parametrize("sa, sb", [((BIG + 1,), (4,)), ((2**40,), (2**40,)), ((3, 2**62), (1, 3))])
def test_kron_beyond_the_limit_is_refused(sa, sb, backend):
    a = backend.put(COO([[n - 1] for n in sa], [1.0], sa))
    b = backend.put(COO([[n - 1] for n in sb], [2.0], sb))
    d = next(d for d, (p, q) in enumerate(zip(sa, sb)) if p * q > 2**63)
    with pytest.raises(ValueError, match=f"kron: dimension {d} of the result would have size {sa[d] * sb[d]}"):
        coosparse.kron(a, b)


def test_kron_carries_huge_dimensions_of_size_one_partners(backend):
    # (2**64,) x (1,): the size is the input's, the indices are copied unchanged
    a = COO([[5, 2**63 - 1]], [1.0, 2.0], (2**64,))
    b = COO([[0]], [3.0], (1,))
    for x, y in ((a, b), (b, a)):
        out = backend.get(coosparse.kron(backend.put(x), backend.put(y)))
        assert out.shape == (2**64,)
        assert sorted(_cols(out)) == [((5,), 3.0), ((2**63 - 1,), 6.0)]


def test_kron_refuses_unchecked_out_of_range_indices(backend):
    a = backend.put(COO([[0, 7]], [1.0, 2.0], (3,), check=False))
    b = backend.put(COO([[1]], [1.0], (2,)))
    with pytest.raises(IndexError):
        coosparse.kron(a, b)
        backend.check_errors()


def test_kron_entry_count_is_refused_at_once(small_memory):
    a = coosparse.random((10**4,), nnz=10**3, seed=0)
    _fast(lambda: coosparse.kron(a, a), MemoryError, "kron: the result would hold 1000000 entries")


# ----------------------------------------------------------------------------- pad
def test_pad_to_the_limit_shifts_exactly(backend):
    x = COO([[0, 3, 2**62 - 1], [1, 0, 3]], [1.0, 2.0, 3.0], (2**62, 4), sorted=True, unique=True)
    out = backend.get(coosparse.pad(backend.put(x), ((2**62 - 1, 1), (0, 0))))
    assert out.shape == (2**63, 4)
    assert out.is_coalesced
    assert _cols(out) == [((2**62 - 1, 1), 1.0), ((2**62 + 2, 0), 2.0), ((2**63 - 2, 3), 3.0)]


@pytest.mark.parametrize("pw", [((BIG, BIG), (0, 0)), ((0, 2**63), (0, 0)), ((0, 0), (2**63, 2**63)),
                                ((2**64, 0), (0, 0))])
def test_pad_beyond_the_limit_is_refused(pw):
    x = COO(np.zeros((2, 0), np.int64), np.zeros(0), (BIG, 4))
    with pytest.raises(ValueError, match="pad: dimension [01] of the result would have size"):
        coosparse.pad(x, pw)


def test_pad_width_types():
    x = coosparse.random((3,), nnz=2, seed=0)
    with pytest.raises(TypeError, match="pad_width must be integers"):
        coosparse.pad(x, [[1.5, 0]])
    with pytest.raises(TypeError, match="pad_width must be integers"):
        coosparse.pad(x, np.array([[2**70, "a"]], dtype=object))
    assert_coo(coosparse.pad(x, np.array([[1, 2]], dtype=object)), np.pad(reference(x), [[1, 2]]))


# ----------------------------------------------------------------------------- tile
def test_tile_huge_reps_are_refused_at_once():
    x = COO([[0]], [1.0], (3,))
    _fast(lambda: coosparse.tile(x, 2**40), MemoryError, "tile: the result would hold 1099511627776 entries")
    with pytest.raises(ValueError, match="tile: dimension 0 of the result would have size"):
        coosparse.tile(x, 2**62)


def test_tile_of_nothing_is_a_shape():
    x = COO(np.zeros((2, 0), np.int64), np.zeros(0), (3, 2))
    out = coosparse.tile(x, (2**40, 2**40))
    assert out.shape == (3 * 2**40, 2 * 2**40) and out.nnz == 0 and out.is_coalesced


@settings(max_examples=25)
@given(data=st.data())
def test_tile_many_copies_matches_numpy(data, backend):
    # more copies than the merge path takes: the copies are laid out by index arithmetic
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    a = coosparse.random(shape, density=0.5, seed=int(rng.integers(2**31)), sorted=data.draw(st.booleans()))
    if data.draw(st.booleans()) and a.nnz:  # duplicates
        a = COO(np.concatenate([a.indices, a.indices], 1), np.concatenate([a.values, a.values]), a.shape)
    reps = tuple(data.draw(st.lists(st.sampled_from([1, 2, 17, 23]), min_size=1, max_size=len(shape))))
    out = backend.get(coosparse.tile(backend.put(a), reps))
    assert_coo(out, np.tile(reference(a), reps))
    assert out.is_sorted == a.is_sorted or out.nnz <= 1
    assert out.is_unique == a.is_unique or out.nnz <= 1


# ----------------------------------------------------------------------------- repeat
def test_repeat_sums_are_exact_and_checked(backend):
    x = COO([[0, 1]], [1.0, 2.0], (2,), sorted=True, unique=True)
    with pytest.raises(ValueError, match="repeat: dimension 0 of the result would have size 9223372036854775809"):
        coosparse.repeat(backend.put(x), [2**62, 2**62 + 1])
    with pytest.raises(ValueError, match="repeat: a repeat count of"):
        coosparse.repeat(x, np.array([2**63, 0], dtype=np.uint64))
    # an int64 sum would wrap to a negative length here
    with pytest.raises(ValueError, match="repeat: dimension 0"):
        coosparse.repeat(x, [2**62 + 2**61, 2**62 + 2**61])
    y = COO([[1]], [5.0], (2,))
    out = backend.get(coosparse.repeat(backend.put(y), [2**62 + 2**61, 1]))
    assert out.shape == (2**62 + 2**61 + 1,) and _cols(out) == [((2**62 + 2**61,), 5.0)]


def test_repeat_entry_count_is_refused_at_once(small_memory):
    x = coosparse.random((100,), nnz=50, seed=0)
    _fast(lambda: coosparse.repeat(x, 10**6), MemoryError, "repeat: the result would hold")


# ----------------------------------------------------------------------------- reshape, concatenate
def test_reshape_beyond_the_limit_is_refused():
    x = COO(np.zeros((2, 0), np.int64), np.zeros(0), (2**33, 2**33))
    with pytest.raises(ValueError, match="reshape: dimension 0 of the result would have size 73786976294838206464"):
        coosparse.reshape(x, (-1,))
    assert coosparse.reshape(COO([[1], [2]], [1.0], (2, 2**62)), (-1,)).indices.tolist() == [[2**62 + 2]]


def test_concatenate_near_the_limit(backend):
    a = COO([[BIG - 1]], [1.0], (BIG,))
    b = COO([[0, BIG - 1]], [2.0, 3.0], (BIG,))
    out = backend.get(coosparse.concatenate([backend.put(a), backend.put(b)]))
    assert out.shape == (2**63,)
    assert _cols(out) == [((BIG - 1,), 1.0), ((BIG,), 2.0), ((2**63 - 1,), 3.0)]
    with pytest.raises(ValueError, match="concatenate: dimension 0 of the result would have size"):
        coosparse.concatenate([a, b, a])
    # an empty last piece at offset 2**63 adds nothing (and no int64 scalar of 2**63 is formed)
    empty = COO(np.zeros((1, 0), np.int64), np.zeros(0), (0,))
    assert coosparse.concatenate([a, b, empty]).shape == (2**63,)


def test_unstack_of_a_huge_axis_is_refused_at_once():
    x = COO(np.zeros((1, 0), np.int64), np.zeros(0), (2**50,))
    _fast(lambda: coosparse.unstack(x), MemoryError, "unstack: the result would hold 1125899906842624 arrays")


# ----------------------------------------------------------------------------- outer, broadcast
def test_outer_entry_count_is_refused_at_once(small_memory):
    a = coosparse.random((10**4,), nnz=10**3, seed=0)
    _fast(lambda: coosparse.outer(a, a), MemoryError, "outer: the result would hold 1000000 entries")


def test_outer_refuses_unchecked_out_of_range_indices(backend):
    for a in (COO([[0, 9]], [1.0, 2.0], (3,), check=False), COO([[0, 0], [1, 9]], [1.0, 2.0], (3, 3), check=False)):
        b = COO([[1]], [1.0], (2,))
        with pytest.raises(IndexError):
            coosparse.outer(backend.put(a), backend.put(b))
            backend.check_errors()


def test_broadcast_to_near_the_limit(backend):
    a = COO([[0]], [1.0], (1,))
    with pytest.raises(ValueError, match="broadcast_to: dimension 0 of the result would have size"):
        coosparse.broadcast_to(a, (2**63 + 1,))
    with pytest.raises(ValueError, match="broadcast_to: dimension 0"):
        coosparse.broadcast_to(a, (2**64, 1))
    _fast(lambda: coosparse.broadcast_to(a, (2**62,)), MemoryError, "broadcast_to: the result would hold")
    # nothing stored: the shape alone, however large (no coordinate table is built)
    e = backend.put(COO(np.zeros((1, 0), np.int64), np.zeros(0), (1,)))
    out = coosparse.broadcast_to(e, (2**62, 2**62))
    assert out.shape == (2**62, 2**62) and out.nnz == 0


# ----------------------------------------------------------------------------- creation
def test_full_and_eye_name_the_problem():
    with pytest.raises(OverflowError, match=r"full: fill_value 9223372036854775808 does not fit dtype int64.*uint64"):
        coosparse.full(2, 2**63)
    with pytest.raises(OverflowError, match=r"full: fill_value 300 does not fit dtype int8 \[-128, 127\]"):
        coosparse.full(2, 300, dtype=np.int8)
    assert coosparse.full(2, 2**63, dtype=np.uint64).to_dense().tolist() == [2**63, 2**63]
    for k in (2**64, -(2**64), 2**63, 3, -3):
        e = coosparse.eye(3, k=k)
        assert e.nnz == 0 and e.shape == (3, 3)
        np.testing.assert_array_equal(e.to_dense(), np.eye(3, k=max(min(k, 3), -3)))
    with pytest.raises(ValueError, match="eye: dimension 0 of the result would have size"):
        coosparse.eye(2**64, 1)
    _fast(lambda: coosparse.eye(2**62), MemoryError, "eye: the result would hold 4611686018427387904 entries")


def test_repeat_of_duplicates_along_the_last_axis_is_not_sorted_by_accident(backend):
    # the copies of two duplicates interleave (0, 1, 0, 1): the result is sorted again, not flagged wrongly
    a = COO([[0, 0]], np.array([True, True]), (1,), sorted=True, fill_value=True)
    out = backend.get(coosparse.repeat(backend.put(a), 2, axis=0))
    idx = out.indices[0].tolist()
    assert out.is_sorted and idx == sorted(idx)
    np.testing.assert_array_equal(out.to_dense(), np.repeat(a.to_dense(), 2))
    # a scalar count never broadcasts over the axis (a length of 2**61 would be an array of 2**61 counts)
    big = COO([[5, 2**61 - 1]], [1.0, 2.0], (2**61,), sorted=True, unique=True)
    r = backend.get(coosparse.repeat(backend.put(big), 3, axis=0))
    assert r.shape == (3 * 2**61,) and _cols(r) == [((15 + j,), 1.0) for j in range(3)] + \
        [((3 * (2**61 - 1) + j,), 2.0) for j in range(3)]


def test_kron_is_the_product_of_the_dense_meanings(backend):
    # an operand's duplicates are summed first: a product per duplicate would overflow on its own
    # (float16: 65000 * 2 is inf, -65000 * 2 is -inf, their sum NaN, where (65000 - 65000) * 2 is 0)
    # and count bool duplicates twice
    a = COO([[0, 0, 1]], np.array([65000.0, -65000.0, 1.0], np.float16), (2,))
    b = COO([[0]], np.array([2.0], np.float16), (1,))
    out = backend.get(coosparse.kron(backend.put(a), backend.put(b)))
    np.testing.assert_array_equal(out.to_dense(), np.kron(a.to_dense(), b.to_dense()))
    assert out.is_coalesced
    t = COO([[0, 0]], np.array([True, True]), (1,))
    i = COO([[0]], np.array([3], np.int8), (1,))
    np.testing.assert_array_equal(backend.get(coosparse.kron(backend.put(t), backend.put(i))).to_dense(),
                                  np.kron(t.to_dense(), i.to_dense()))
