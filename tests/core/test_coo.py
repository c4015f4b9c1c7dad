"""The COO type (SPEC 1): layout, validation, flag hints, copies."""
import warnings

import numpy as np
import pytest
from hypothesis import given

import coosparse
from coosparse import COO, SUPPORTED_DTYPES
from strategies import coo_parts


def test_attributes_hybrid():
    idx = np.array([[0, 2], [1, 1]], dtype=np.int32)
    vals = np.arange(12.0).reshape(2, 2, 3)
    a = COO(idx, vals, (3, 4, 2, 3))
    assert a.indices.dtype == np.int64 and a.indices.flags.c_contiguous
    assert (a.sparse_ndim, a.dense_ndim, a.ndim) == (2, 2, 4)
    assert a.sparse_shape == (3, 4) and a.dense_shape == (2, 3) and a.shape == (3, 4, 2, 3)
    assert a.nnz == 2 and a.dtype == np.float64 and a.device == "cpu" and a.size == 72
    assert not a.is_sorted and not a.is_unique and not a.is_coalesced
    assert "shape=(3, 4, 2, 3)" in repr(a) and "sparse_ndim=2" in repr(a) and "nnz=2" in repr(a)


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=str)
def test_every_dtype_accepted(dtype):
    a = COO([[0, 1]], np.ones(2, dtype=dtype), (2,))
    assert a.dtype == dtype
    target = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    assert a.astype(target).dtype == target


def test_unsupported_dtypes_rejected():
    for vals in (np.array(["a", "b"]), np.array([1, 2], dtype=object), np.ones(2, np.longdouble)):
        if vals.dtype in SUPPORTED_DTYPES:  # longdouble is float64 on some platforms
            continue
        with pytest.raises(TypeError, match="not supported"):
            COO([[0, 1]], vals, (2,))


def test_nnz_le_1_implies_both_flags():
    assert COO(np.zeros((2, 0), int), np.zeros(0), (3, 3)).is_coalesced
    assert COO([[1], [2]], [5.0], (3, 3)).is_coalesced


def test_zero_d_and_zero_size():
    a = COO(np.zeros((0, 2), np.int64), np.array([1.0, 2.0]), ())
    assert a.ndim == 0 and a.sparse_ndim == 0 and a.nnz == 2 and a.size == 1
    with pytest.raises(TypeError):
        len(a)
    b = COO(np.zeros((2, 0), np.int64), np.zeros(0), (0, 5))
    assert b.size == 0 and b.nnz == 0
    with pytest.raises(IndexError, match="dimension 0"):
        COO([[0], [0]], [1.0], (0, 5))
    assert COO([[0, 3]], [1.0, 2.0], 4).shape == (4,)  # an int shape is 1-d, as in NumPy


def _unchanged(idx, vals, call):
    i0, v0 = idx.copy(), vals.copy()
    call()
    np.testing.assert_array_equal(idx, i0)
    np.testing.assert_array_equal(vals, v0)


@pytest.mark.parametrize(
    "idx, vals, shape, exc, match",
    [
        ([[0, 5, 1]], [1.0, 2.0, 3.0], (5,), IndexError, "index 5 at position 1 .*dimension 0 with size 5"),
        ([[0, 1], [1, -1]], [1.0, 2.0], (2, 2), IndexError, "index -1 at position 1 .*dimension 1"),
        ([[0.0, 1.0]], [1.0, 2.0], (2,), TypeError, "indices must be integers"),
        ([[True, False]], [1.0, 2.0], (2,), TypeError, "indices must be integers"),
        ([[0, 1]], [1.0, 2.0, 3.0], (2,), ValueError, "3 entries|2 entries"),
        ([0, 1], [1.0, 2.0], (2,), ValueError, "shape \\(sparse_ndim, nnz\\)"),
        ([[[0, 1]]], [1.0, 2.0], (2,), ValueError, "shape \\(sparse_ndim, nnz\\)"),
        ([[0, 1], [0, 1], [0, 1]], [1.0, 2.0], (2, 2), ValueError, "3 sparse dimensions"),
        ([[0, 1]], [[1.0], [2.0]], (2, 3), ValueError, "dense shape"),
        ([[0, 1]], 1.0, (2,), ValueError, "entries along axis 0"),
        ([[0, 1]], [1.0, 2.0], (2, -1), ValueError, "dimension 1 has size -1"),
        ([[0, 1]], [1.0, 2.0], "ab", TypeError, "shape must be a sequence"),
    ],
)
def test_bad_input_raises_and_modifies_nothing(idx, vals, shape, exc, match):
    idx, vals = np.array(idx), np.array(vals)
    _unchanged(idx, vals, lambda: pytest.raises(exc, COO, idx, vals, shape).match(match))


def test_lying_flag_hints_raise_naming_the_position():
    idx = np.array([[0, 2, 1, 3]])
    vals = np.ones(4)
    with pytest.raises(ValueError, match="sorted=True is false: entry 2 .*\\(1,\\)"):
        COO(idx, vals, (4,), sorted=True)
    dup = np.array([[0, 1, 1, 3], [0, 2, 2, 0]])
    with pytest.raises(ValueError, match="unique=True is false: entry 2 .*\\(1, 2\\)"):
        COO(dup, vals, (4, 4), sorted=True, unique=True)
    dup2 = np.array([[3, 1, 0, 1]])
    with pytest.raises(ValueError, match="unique=True is false: entries 1 and 3 share index \\(1,\\)"):
        COO(dup2, vals, (4,), unique=True)
    # wide shape: verified through joint ranks
    wide = np.array([[5, 2**40], [0, 0]])
    with pytest.raises(ValueError, match="sorted=True"):
        COO(wide[:, ::-1], np.ones(2), (2**62, 4), sorted=True)
    _unchanged(idx, vals, lambda: pytest.raises(ValueError, COO, idx, vals, (4,), sorted=True))
    # check=False trusts the caller
    assert COO(idx, vals, (4,), sorted=True, check=False).is_sorted


@pytest.mark.parametrize("shape", [(70_000, 3), (70_000 * 3,), (700, 100, 3)])
@pytest.mark.parametrize("where", [1, 65_535, 65_536, 65_537, 131_072, 209_999])
def test_lying_hints_are_found_on_both_sides_of_the_check_pieces(shape, where):
    """The CPU checks the order in pieces of 65,536 entries (+1 overlap): a step down or a repeat at
    any position, a piece's first or last included, is found and named, and a step down anywhere is
    reported before an earlier repeat (as the whole-array check does)."""
    n = 210_000
    keys = np.arange(n, dtype=np.int64)  # in order, distinct
    idx = np.stack(np.unravel_index(keys, shape)).astype(np.int64)
    vals = np.ones(n)
    assert COO(idx, vals, shape, sorted=True, unique=True).is_coalesced
    down = idx.copy()
    down[:, where] = down[:, where - 1] if where % 2 else idx[:, 0]  # a repeat, or back to the first key
    if where % 2:
        with pytest.raises(ValueError, match=f"unique=True is false: entry {where} "):
            COO(down, vals, shape, sorted=True, unique=True)
        assert COO(down, vals, shape, sorted=True).is_sorted  # a repeat is in order
    else:
        with pytest.raises(ValueError, match=f"sorted=True is false: entry {where} "):
            COO(down, vals, shape, sorted=True, unique=True)
    both = idx.copy()
    both[:, 3] = both[:, 2]  # a repeat early, a step down later: sorted is the lie named
    both[:, where + 1 if where + 1 < n else where] = idx[:, 0]
    pos = where + 1 if where + 1 < n else where
    with pytest.raises(ValueError, match=f"sorted=True is false: entry {pos} "):
        COO(both, vals, shape, sorted=True, unique=True)


@given(coo_parts())
def test_true_hints_verify(parts):
    idx, vals, shape, s, u = parts
    a = COO(idx, vals, shape, sorted=s, unique=u)
    assert a.is_sorted >= s and a.is_unique >= u
    np.testing.assert_array_equal(a.indices, idx)


def test_copy_and_astype():
    a = COO([[2, 0]], np.array([1.5, 2.5]), (3,))
    b = a.copy()
    assert not np.shares_memory(b.indices, a.indices) and not np.shares_memory(b.values, a.values)
    with pytest.raises(ValueError, match="read-only"):  # a COO is immutable; its parts are read-only
        b.values[0] = 9
    assert a.values[0] == 1.5
    # float -> int does not commute with summing duplicates: a non-unique array is coalesced first
    c = a.astype(np.int32)
    assert c.dtype == np.int32 and c.indices.tolist() == [[0, 2]] and c.values.tolist() == [2, 1]
    assert c.is_coalesced
    assert a.astype(np.float64, copy=False) is a
    u = COO([[2, 0]], np.array([1.5, 2.5]), (3,), unique=True)
    c = u.astype(np.int32)
    assert c.values.tolist() == [1, 2] and not c.is_sorted and c.is_unique
    d = u.astype(np.float32, copy=False)
    assert d.indices is u.indices
    assert a.astype(np.complex128, copy=False).indices is a.indices  # (a cast that keeps the sums)
    with pytest.raises(TypeError):
        a.astype(object)


def test_to_cpu_and_bad_device():
    a = COO([[0]], [1.0], (1,))
    assert a.to("cpu") is a
    with pytest.raises(ValueError, match="device"):
        a.to("tpu")


def test_not_implicitly_dense():
    with pytest.raises(TypeError, match="to_dense"):
        np.asarray(COO([[0]], [1.0], (1,)))


def test_negation_keeps_flags():
    a = COO([[0, 1]], np.array([1.0, 2.0]), (2,), sorted=True, unique=True)
    n = -a
    assert n.is_coalesced and n.values.tolist() == [-1.0, -2.0]
    assert coosparse.COO is COO


class _FakeDeviceArray:
    """Looks like a CuPy array to the device checks (no GPU needed)."""

    __module__ = "cupy._fake"

    class device:  # noqa: N801 - mimics cupy's attribute
        id = 0


def test_indices_and_values_on_different_devices_raise():
    with pytest.raises(ValueError, match="indices live on cpu but values on cuda:0"):
        coosparse.COO(np.zeros((1, 1), dtype=np.int64), _FakeDeviceArray(), (2,))
    with pytest.raises(ValueError, match="indices live on cuda:0 but values on cpu"):
        coosparse.COO(_FakeDeviceArray(), np.zeros(1), (2,))


def test_masked_parts_are_refused_not_unmasked():
    # np.asarray would keep the masked entries' data and drop the mask
    vals = np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    idx = np.array([[0, 1, 2]])
    with pytest.raises(TypeError, match="masked arrays are not supported"):
        COO(idx, vals, (3,))
    with pytest.raises(TypeError, match="masked arrays are not supported"):
        COO(np.ma.masked_array(idx, mask=[[0, 0, 1]]), np.ones(3), (3,))
    # the plain parts they name in the message work
    assert COO(idx, vals.filled(0.0), (3,)).todense().tolist() == [1.0, 0.0, 3.0]
    assert COO(idx, vals.data, (3,)).todense().tolist() == [1.0, 2.0, 3.0]


# ----------------------------------------------------------------------------- astype of duplicates
_ALL = [np.dtype(t) for t in coosparse.SUPPORTED_DTYPES]


@pytest.mark.parametrize("src", _ALL, ids=str)
def test_astype_casts_the_dense_meaning(src, backend):
    # every target dtype: the cast of the sums (in the source dtype), never the sum of the casts
    rng = np.random.default_rng(int(src.num))
    idx = rng.integers(0, 5, (2, 40))
    if src == np.bool_:
        vals = rng.random(40) < 0.5
    elif src.kind in "iu":
        vals = rng.integers(np.iinfo(src).min, np.iinfo(src).max, 40, dtype=src, endpoint=True)
    else:
        vals = (rng.choice([0.75, 0.5, -1.5, 1.5, -0.0, 2.25], 40)
                + (1j * rng.choice([0.5, -0.5], 40) if src.kind == "c" else 0)).astype(src)
    a = COO(idx, vals, (5, 5), fill_value=vals[0])
    want_sums = backend.get(backend.put(a).to_dense())
    for dst in _ALL:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (complex -> real drops the imaginary part, as NumPy)
            got = backend.get(backend.put(a).astype(dst))
            want = want_sums.astype(dst)
        assert got.dtype == dst
        d = got.to_dense()
        if dst.kind == "f":  # bits: the sign of zero too
            np.testing.assert_array_equal(d.view(f"u{dst.itemsize}"), want.view(f"u{dst.itemsize}"))
        else:
            np.testing.assert_array_equal(d, want)
        if not coosparse._core.dtypes.cast_keeps_sums(src, dst):
            assert got.is_coalesced


def test_astype_of_the_issue():
    a = COO([[0, 0, 1, 2, 2]], [0.75, 0.5, -1.5, 1.5, -1.5], (4,))
    assert a.astype(np.int64).to_dense().tolist() == [1, -1, 0, 0]
    assert a.astype(bool).to_dense().tolist() == [True, True, False, False]
    assert coosparse.astype(a, coosparse.bool).to_dense().tolist() == [True, True, False, False]
    # the other paths that cast: asarray(dtype=), promotion by concatenate
    assert coosparse.asarray(a, dtype=np.int64).to_dense().tolist() == [1, -1, 0, 0]
    b = COO([[0, 0]], np.array([100, 100], np.int8), (2,))
    assert coosparse.concatenate([b, COO([[0]], np.array([1], np.int16), (1,))]).to_dense().tolist() == [-56, 0, 1]
    assert b.astype(np.int16).to_dense().tolist() == [-56, 0]
    assert b.astype(np.int8).to_dense().tolist() == [-56, 0]


def test_row_pointer_is_a_cached_companion(backend):
    rng = np.random.default_rng(3)
    idx = np.stack([rng.integers(0, 30, 200), rng.integers(0, 7, 200)])
    a = COO(idx, rng.standard_normal(200), (30, 7)).coalesce()
    x = backend.put(a)
    base = x.indices.nbytes + x.values.nbytes
    assert x.nbytes == base
    p = x.row_pointer(cache=False)
    assert x.nbytes == base  # built, not kept
    np.testing.assert_array_equal(backend.get(p), np.searchsorted(a.indices[0], np.arange(31)))
    p = x.row_pointer()
    assert x._row_pointer() is x._row_pointer() and x.nbytes == base + 31 * 8
    np.testing.assert_array_equal(backend.get(x.row_pointer()), backend.get(p))
    assert x.copy().nbytes == base and x._with(values=x.values).nbytes == base  # new arrays start bare
    x.drop_companions()
    assert x.nbytes == base
    with pytest.raises(ValueError, match="not sorted"):
        COO(idx, np.ones(200), (30, 7)).row_pointer()
    with pytest.raises(ValueError, match="no sparse dimension"):
        COO(np.zeros((0, 1), np.int64), np.ones((1, 3)), (3,)).row_pointer()


def test_row_pointer_given_out_is_read_only():
    # the cached pointer serves later row operations: a caller writing to it would corrupt them
    a = COO([[0, 0, 2], [1, 3, 0]], np.ones(3), (4, 4)).coalesce()
    p = a.row_pointer()
    with pytest.raises(ValueError, match="read-only"):
        p[1] = 0
    assert a.sum(axis=1).to_dense().tolist() == [2.0, 0.0, 1.0, 0.0]
    assert a._row_pointer().tolist() == [0, 2, 2, 3, 3]


def test_row_pointer_refuses_a_lying_sorted_flag():
    a = COO([[2, 0, 1]], np.ones(3), (3,), sorted=True, unique=True, check=False)
    with pytest.raises(ValueError, match="sorted"):
        a.row_pointer()
    b = COO([[0, 5]], np.ones(2), (3,), sorted=True, unique=True, check=False)
    with pytest.raises(IndexError):
        b.row_pointer()
