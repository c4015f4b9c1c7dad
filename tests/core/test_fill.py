"""Fill values (SPEC 8): storage, repr, pickling, to_dense, and the ops that need fill 0."""
import pickle

import numpy as np
import pytest

import coosparse
from coosparse import COO


def _a(fill, dtype=np.float64):
    return COO([[0, 2, 2]], np.array([1, 2, 3], dtype=dtype), (4,), fill_value=fill)


def test_default_fill_is_zero_of_dtype():
    a = _a(None, np.int32)
    assert a.fill_value == 0 and a.fill_value.dtype == np.int32
    assert "fill_value" not in repr(a)


@pytest.mark.parametrize("fill", [1.5, -1.0, np.inf, np.nan])
def test_fill_kept_by_repr_pickle_copy_astype(fill):
    a = _a(fill)
    assert f"fill_value={a.fill_value!r}" in repr(a)
    for b in (pickle.loads(pickle.dumps(a)), a.copy(), a.coalesce(), -(-a)):
        np.testing.assert_equal(b.fill_value, a.fill_value)
    assert a.astype(np.float32).fill_value.dtype == np.float32


def test_to_dense_uses_fill_where_nothing_is_stored():
    a = _a(7.0)
    np.testing.assert_array_equal(a.to_dense(), [1.0, 7.0, 5.0, 7.0])  # duplicates summed, no fill added
    np.testing.assert_array_equal((a * 2).to_dense(), [2.0, 14.0, 10.0, 14.0])


def test_unrepresentable_fill_is_refused():
    with pytest.raises(ValueError, match="not representable"):
        _a(0.5, np.int64)
    with pytest.raises(ValueError, match="scalar"):
        _a(np.ones(2))
    for fill, dtype in ((2**63, np.int64), (-1, np.uint8), (1 + 2j, np.float64), (300, np.int8),
                        (2**70, np.int64), (-2**64, np.uint64), (2**70, np.bool_), (2**200, np.float32),
                        (10**400, np.float64), (-10**400, np.complex128)):
        with pytest.raises(ValueError, match="not representable"):  # (2**63 used to wrap to -2**63; ints
            _a(fill, dtype)                                       # past 64 bits raised TypeError)
    with pytest.raises(ValueError, match="not representable"):
        coosparse.from_dense(np.zeros((2, 2), np.int64), fill_value=2**70)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_an_int_past_64_bits_rounds_to_a_float_fill(dtype):
    a = _a(2**70, dtype)  # as np.full((1,), 2**70, dtype) rounds it
    assert a.fill_value.dtype == dtype and a.fill_value == np.full((), 2**70, dtype)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("fill,dtype", [(0, np.complex128), (1.5, np.complex64), (2 + 0j, np.float32),
                                        (True, np.complex128), (-1, np.int8), (2**64 - 1, np.uint64)])
def test_representable_fills_convert_without_warnings(fill, dtype):
    a = _a(fill, dtype)
    assert a.fill_value.dtype == dtype and a.fill_value == fill


def _to_torch(a):
    pytest.importorskip("torch")
    from coosparse.interop.torch import to_torch

    return to_torch(a)


@pytest.mark.parametrize("op", [
    lambda a: coosparse.sparse_mask(a, a),
    lambda a: coosparse.mask_projection(a, a),
    lambda a: a.to_scipy(),
    _to_torch,
])
def test_ops_needing_fill_zero_name_the_fill(op):
    with pytest.raises(ValueError, match="fill_value"):
        op(_a(1.0))


@pytest.mark.parametrize("fill", [1.5, -1.0, np.inf, np.nan])
@pytest.mark.parametrize("op, ref", [
    (coosparse.add, np.add), (coosparse.subtract, np.subtract), (coosparse.multiply, np.multiply),
    (lambda a, b: a + np.arange(4.0), None), (lambda a, b: np.arange(4.0) * a, None),
    (lambda a, b: a * 3, None), (lambda a, b: 2 - a, None),
])
def test_union_and_intersection_family_take_any_fill(op, ref, fill):
    a = _a(fill)
    b = COO([[1, 2, 3]], np.array([4.0, -2.0, 8.0]), (4,), fill_value=2.0)
    with np.errstate(all="ignore"):
        ref = (ref or op)(a.to_dense(), b.to_dense())
        r = op(a, b)
    np.testing.assert_array_equal(r.to_dense() if isinstance(r, COO) else r, ref)


@pytest.mark.parametrize("fill", [0.0, 2.0, np.nan])
def test_coalesce_prune_drops_entries_equal_to_the_fill(fill):
    a = COO([[0, 1, 1, 2, 3]], np.array([fill, 1.0, 0.5, 5.0, fill]), (5,), fill_value=fill)
    c = a.coalesce(prune=True)
    assert c.is_coalesced and c.fill_value is not None
    np.testing.assert_array_equal(c.indices, [[1, 2]])
    np.testing.assert_array_equal(c.to_dense(), a.to_dense())
    h = COO([[0, 1]], np.array([[fill, fill], [fill, 1.0]]), (2, 2), fill_value=fill)
    np.testing.assert_array_equal(h.coalesce(prune=True).indices, [[1]])
