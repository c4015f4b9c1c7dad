"""coalesce (SPEC 3) against the dense NumPy reference, on every kernel layer."""
import numpy as np
import pytest
from hypothesis import given

import coosparse
from coosparse import COO, SUPPORTED_DTYPES
from coosparse.ops.coalesce import _in_column_order
from reference import dense_reference
from strategies import coo_parts, values_of


def expected_coalesced(indices, values, shape):
    """Sorted unique indices and their in-order sums, from np.add.at on a dense array."""
    sn = indices.shape[0]
    sparse_shape = shape[:sn]
    if indices.shape[1] == 0:
        return indices, values
    if sn == 0:  # every entry sits at the one position: add a leading axis of size 1
        dense = dense_reference(np.zeros((1, indices.shape[1]), np.int64), values, (1,) + tuple(shape))
        return np.zeros((0, 1), np.int64), dense
    dense = dense_reference(indices, values, shape)
    flat = np.unique(np.ravel_multi_index(tuple(indices), sparse_shape))
    idx = np.array(np.unravel_index(flat, sparse_shape), dtype=np.int64).reshape(sn, -1)
    return idx, dense[tuple(idx)]


def check_coalesce(backend, indices, values, shape, sorted=False, unique=False):
    a = backend.put(COO(indices, values, shape, sorted=sorted, unique=unique))
    c = backend.get(a.coalesce())
    want_idx, want_val = expected_coalesced(indices, values, shape)
    assert c.is_sorted and c.is_unique and c.is_coalesced
    assert c.dtype == values.dtype and c.shape == tuple(shape)
    assert c.indices.dtype == np.int64 and c.indices.flags.c_contiguous
    np.testing.assert_array_equal(c.indices, want_idx)
    np.testing.assert_array_equal(c.values, want_val)
    return c


@given(coo_parts())
def test_coalesce_matches_dense_reference(backend, parts):
    indices, values, shape, s, u = parts
    check_coalesce(backend, indices, values, shape, s, u)


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=str)
def test_every_dtype_with_duplicates(backend, dtype):
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 4, size=(2, 60))
    check_coalesce(backend, idx, values_of(rng, 60, (), dtype), (4, 4))
    check_coalesce(backend, idx, values_of(rng, 60, (2,), dtype), (4, 4, 2))


def test_nnz_zero_and_one(backend):
    for shape in [(5,), (3, 4), (0, 4), ()]:
        sn = len(shape)
        c = check_coalesce(backend, np.zeros((sn, 0), np.int64), np.zeros(0), shape)
        assert c.nnz == 0
    a = COO([[2], [1]], np.array([7.0]), (3, 4))
    assert a.is_coalesced and a.coalesce() is a  # nnz <= 1 implies both flags


def test_all_duplicates(backend):
    idx = np.full((2, 1000), 3)
    c = check_coalesce(backend, idx, np.arange(1000.0), (4, 5))
    assert c.nnz == 1 and c.values[0] == 499500.0


def test_sparse_ndim_zero_and_zero_size_dense(backend):
    # 0-d array: every entry is the one scalar position
    c = check_coalesce(backend, np.zeros((0, 3), np.int64), np.array([1.0, 2.0, 4.0]), ())
    assert c.nnz == 1 and c.values.tolist() == [7.0]
    # sparse_ndim 0 with dense dims
    check_coalesce(backend, np.zeros((0, 2), np.int64), np.ones((2, 3)), (3,))
    # dense dimension of size 0
    check_coalesce(backend, np.array([[1, 0, 1]]), np.zeros((3, 0)), (2, 0))


def test_large_random_with_duplicates(backend):
    # big enough for the multi-bucket, multi-thread sort and the block-wise sums
    a = coosparse.random((3000, 5000), nnz=300_000, duplicates=True, seed=3)
    idx, vals = a.indices, a.values
    c = backend.get(backend.put(a).coalesce())
    flat = np.ravel_multi_index(tuple(idx), (3000, 5000))
    order = np.argsort(flat, kind="stable")
    uniq, seg = np.unique(flat[order], return_inverse=True)
    sums = np.zeros(uniq.size)
    np.add.at(sums, seg, vals[order])  # sequential, in original order within each segment
    np.testing.assert_array_equal(np.ravel_multi_index(tuple(c.indices), (3000, 5000)), uniq)
    np.testing.assert_array_equal(c.values, sums)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_large_random_with_a_dense_dimension(backend, dtype):
    # value rows of several columns (a dense dimension; complex sums travel as pairs) through
    # the multi-bucket, multi-part route, which moves one value per entry differently
    rng = np.random.default_rng(4)
    n = 120_000
    idx = rng.integers(0, 300, size=(2, n))
    vals = (rng.random((n, 3)) + (1j * rng.random((n, 3)) if dtype == np.complex64 else 0)).astype(dtype)
    c = backend.get(backend.put(COO(idx, vals, (300, 300, 3))).coalesce())
    flat = np.ravel_multi_index(tuple(idx), (300, 300))
    uniq, seg = np.unique(flat, return_inverse=True)
    sums = np.zeros((uniq.size, 3), dtype=dtype)
    np.add.at(sums, seg, vals)  # sequential, in original order within each segment
    np.testing.assert_array_equal(np.ravel_multi_index(tuple(c.indices), (300, 300)), uniq)
    np.testing.assert_array_equal(c.values, sums)


def test_sorted_not_unique_and_unique_not_sorted(backend):
    rng = np.random.default_rng(5)
    flat = np.sort(rng.integers(0, 50, 200))
    idx = np.array(np.unravel_index(flat, (5, 10)))
    check_coalesce(backend, idx, rng.random(200), (5, 10), sorted=True)
    perm = rng.permutation(50)[:30]
    idx = np.array(np.unravel_index(perm, (5, 10)))
    check_coalesce(backend, idx, rng.random(30), (5, 10), unique=True)


def test_deterministic_bit_identical(backend):
    a = backend.put(coosparse.random((1000, 1000), nnz=200_000, duplicates=True, dtype=np.float32, seed=9))
    c1, c2 = backend.get(a.coalesce()), backend.get(a.coalesce())
    assert c1.values.tobytes() == c2.values.tobytes()
    assert c1.indices.tobytes() == c2.indices.tobytes()


def test_float32_sums_follow_original_order(backend):
    # (1e8 + 1) - 1e8 is 0 in float32 in this order; any other order gives 1
    idx = np.array([[4, 1, 4, 0, 4]])
    vals = np.array([1e8, 5, 1, 2, -1e8], dtype=np.float32)
    c = check_coalesce(backend, idx, vals, (6,))
    assert c.values.tolist() == [2.0, 5.0, 0.0]
    c = check_coalesce(backend, idx, vals[[4, 1, 2, 3, 0]], (6,))  # -1e8 + 1 + 1e8
    assert c.values.tolist() == [2.0, 5.0, 0.0]
    c = check_coalesce(backend, idx, vals[[2, 1, 0, 3, 4]], (6,))  # 1 + 1e8 - 1e8
    assert c.values.tolist() == [2.0, 5.0, 0.0]
    c = check_coalesce(backend, idx, vals[[0, 1, 4, 3, 2]], (6,))  # 1e8 - 1e8 + 1
    assert c.values.tolist() == [2.0, 5.0, 1.0]


def test_float16_accumulates_in_float32(backend):
    # in float16 2048 + 1 + 1 stays 2048; in float32 it is 2050, exact in float16
    c = check_coalesce(backend, np.array([[1, 1, 1]]), np.array([2048, 1, 1], np.float16), (2,))
    assert c.values.dtype == np.float16 and c.values.tolist() == [2050.0]


def test_integer_sums_wrap_like_the_dtype(backend):
    c = check_coalesce(backend, np.array([[0, 0]]), np.array([100, 100], np.int8), (1,))
    assert c.values.tolist() == [-56]
    big = np.array([2**64 - 1, 2], np.uint64)
    c = check_coalesce(backend, np.array([[0, 0]]), big, (1,))
    assert c.values.tolist() == [1]


def test_prune_drops_explicit_zeros(backend):
    idx = np.array([[0, 1, 1, 2, 3]])
    vals = np.array([0.0, 1.0, -1.0, 2.0, 0.0])
    a = backend.put(COO(idx, vals, (4,)))
    kept = backend.get(a.coalesce())
    assert kept.nnz == 4  # explicit zeros are legal values and kept
    c = backend.get(a.coalesce(prune=True))
    assert c.is_coalesced and c.indices.tolist() == [[2]] and c.values.tolist() == [2.0]
    # hybrid: a block is dropped only when all of it is zero
    h = backend.put(COO([[0, 1]], np.array([[0.0, 0.0], [0.0, 3.0]]), (2, 2)))
    c = backend.get(h.coalesce(prune=True))
    assert c.indices.tolist() == [[1]]
    # an already coalesced array is pruned too
    d = backend.put(COO([[0, 1]], np.array([0.0, 3.0]), (2,), sorted=True, unique=True))
    assert backend.get(d.coalesce(prune=True)).indices.tolist() == [[1]]


def test_prune_compares_a_complex_nan_fill_part_by_part(backend):
    # fill nan+1j: nan+5j and 2+1j differ from it (kept), nan+1j (any NaN payload) is the fill (dropped);
    # a NaN in either part made every value with a NaN part look like the fill
    fill = complex(np.nan, 1.0)
    a = COO([[0, 1, 2, 3]], np.array([complex(np.nan, 5.0), 2 + 1j, fill, complex(1.0, np.nan)]), (5,),
            fill_value=fill)
    c = backend.get(backend.put(a).coalesce(prune=True))
    assert c.indices.tolist() == [[0, 1, 3]]
    np.testing.assert_array_equal(c.to("cpu").to_dense(), a.to_dense())


def test_coalesced_input_returned_as_is(backend):
    a = backend.put(COO([[0, 2]], np.array([1.0, 2.0]), (3,), sorted=True, unique=True))
    assert a.coalesce() is a


def _wide_reference(indices, values):
    sums = {}
    for col, v in zip(map(tuple, indices.T.tolist()), values):
        sums[col] = sums[col] + v if col in sums else v
    keys = sorted(sums)
    return np.array(keys, dtype=np.int64).T.reshape(indices.shape[0], -1), np.array([sums[k] for k in keys])


@pytest.mark.parametrize("shape", [(2**32, 2**32), (2**62, 3, 5), (3, 2**40, 2**40)])
def test_wide_shapes_exact(backend, shape):
    # prod(shape) >= 2**63: no int64 linear index exists
    rng = np.random.default_rng(11)
    base = np.stack([rng.integers(0, s, 50, dtype=np.int64) for s in shape])
    base[:, 1] = [s - 1 for s in shape]  # the largest index
    idx = base[:, rng.integers(0, 50, 400)]
    vals = rng.standard_normal(400)
    c = backend.get(backend.put(COO(idx, vals, shape)).coalesce())
    want_idx, want_val = _wide_reference(idx, vals)
    assert c.is_coalesced
    np.testing.assert_array_equal(c.indices, want_idx)
    np.testing.assert_array_equal(c.values, want_val)


def test_torch_crash_shape(backend):
    # torch 2.13 dies with SIGFPE on this shape for uncoalesced products; we must not
    a = coosparse.random((65536, 65536), nnz=5000, duplicates=True, seed=2)
    c = backend.get(backend.put(a).coalesce())
    flat = np.ravel_multi_index(tuple(a.indices), a.shape)
    np.testing.assert_array_equal(np.ravel_multi_index(tuple(c.indices), a.shape), np.unique(flat))


def test_unchecked_out_of_range_raises_not_crashes():
    a = COO([[0, 7, 1]], np.ones(3), (3,), check=False)
    with pytest.raises(IndexError):
        a.coalesce()


def test_coalesce_rejects_non_coo():
    with pytest.raises(TypeError, match="COO"):
        coosparse.coalesce(np.ones(3))


def _check_against_stable_sort(backend, a):
    idx, vals, shape = a.indices, a.values, a.shape
    c = backend.get(backend.put(a).coalesce())
    flat = np.ravel_multi_index(tuple(idx), shape)
    order = np.argsort(flat, kind="stable")
    uniq, seg = np.unique(flat[order], return_inverse=True)
    sums = np.zeros(uniq.size, dtype=vals.dtype)
    np.add.at(sums, seg, vals[order])
    np.testing.assert_array_equal(np.ravel_multi_index(tuple(c.indices), shape), uniq)
    np.testing.assert_array_equal(c.values, sums)


def test_64_bit_word_route(backend):
    # 50 key bits: the in-bucket words do not fit 32 bits
    _check_against_stable_sort(backend, coosparse.random((2**25, 2**25), nnz=60_000, duplicates=True, seed=8))


def test_skewed_keys_one_huge_bucket(backend):
    rng = np.random.default_rng(6)
    n = 80_000
    flat = np.where(rng.random(n) < 0.95, rng.integers(0, 300, n), rng.integers(0, 2**30, n))
    idx = np.array(np.unravel_index(flat, (2**15, 2**15)))
    _check_against_stable_sort(backend, COO(idx, rng.standard_normal(n), (2**15, 2**15)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int8, np.bool_])
@pytest.mark.parametrize("shape, nnz", [((60, 50), 700), ((5, 3000), 2000), ((3000, 3000), 40_000), ((2, 40), 30)])
def test_transpose_of_coalesced_takes_the_counting_sort(backend, dtype, shape, nnz):
    """a.T of a coalesced matrix is ordered by column: coalesce sorts it by row with a stable
    counting sort, the same result as the general path, and leaves the row pointer cached."""
    rng = np.random.default_rng(nnz)
    idx = np.stack([rng.integers(0, s, nnz) for s in shape])
    a = coosparse.COO(idx, (rng.standard_normal(nnz) * 10).astype(dtype), shape).coalesce()
    t = backend.put(a).T
    assert t.is_unique and not t.is_sorted
    c = t.coalesce()
    assert c.is_coalesced
    general = coosparse.COO(a.indices[::-1].copy(), a.values, shape[::-1], check=False).coalesce()
    got = backend.get(c)
    np.testing.assert_array_equal(got.indices, general.indices)
    assert got.values.tobytes() == general.values.tobytes()
    ptr = backend.get(c._cached_companion(("row_pointer", 1, shape[1])))
    np.testing.assert_array_equal(ptr, np.searchsorted(general.indices[0], np.arange(shape[1] + 1)))


@pytest.mark.parametrize("how", ["T", "swapaxes", "hybrid swapaxes"])
def test_transpose_marks_its_column_order_and_coalesce_trusts_it(backend, monkeypatch, how):
    """The transpose of a coalesced matrix carries an (empty) column-order companion: coalesce
    then skips the pass over both index rows that proves the order, with the same result as
    the general path; an array without the mark is still checked."""
    import coosparse.ops.coalesce as co

    rng = np.random.default_rng(7)
    shape, nnz = (300, 200), 5000
    idx = np.stack([rng.integers(0, s, nnz) for s in shape])
    vals = rng.standard_normal((nnz, 3) if how == "hybrid swapaxes" else nnz)
    a = backend.put(coosparse.COO(idx, vals, shape + vals.shape[1:]).coalesce())
    t = a.T if how == "T" else np.swapaxes(a, 0, 1)
    assert t.is_unique and not t.is_sorted
    assert t._cached_companion(co.COLUMN_ORDER) is not None and t.nbytes == t.indices.nbytes + t.values.nbytes
    host = backend.get(a)
    general = coosparse.COO(host.indices[::-1].copy(), host.values, t.shape, check=False).coalesce()

    def no_check(idx):
        raise AssertionError("the column order was checked again")

    monkeypatch.setattr(co, "_in_column_order", no_check)
    c = backend.get(t.coalesce())
    assert c.is_coalesced
    np.testing.assert_array_equal(c.indices, general.indices)
    assert c.values.tobytes() == general.values.tobytes()
    # no mark (a fresh array of the same entries, or the companions dropped): checked
    t.drop_companions()
    with pytest.raises(AssertionError, match="checked again"):
        t.coalesce()
    # a transpose that stays sorted (a size-1 axis) or of an unsorted array carries no mark
    row = backend.put(coosparse.COO([[0, 0], [1, 3]], np.ones(2), (1, 5), sorted=True, unique=True))
    assert row.T.is_sorted and row.T._cached_companion(co.COLUMN_ORDER) is None
    loose = backend.put(coosparse.COO(idx, rng.standard_normal(nnz), shape))
    assert loose.T._cached_companion(co.COLUMN_ORDER) is None


def test_column_order_is_checked_before_the_counting_sort():
    # flagged unique, ordered by column except one pair: the general path (same answer as NumPy)
    idx = np.array([[2, 0, 1, 1], [0, 1, 1, 0]])
    a = coosparse.COO(idx, np.arange(4.0), (3, 2), unique=True)
    c = a.coalesce()
    np.testing.assert_array_equal(c.to_dense(), [[0.0, 1.0], [3.0, 2.0], [0.0, 0.0]])
    assert c.is_coalesced and np.all(np.diff(c.indices[0] * 2 + c.indices[1]) > 0)


@pytest.mark.parametrize("where", [1, 65535, 65536, 65537, 131072, 149998])
def test_column_order_check_sees_a_break_anywhere(where):
    # the CPU checks the order in pieces: a break in any pair, at a piece's edge too, is found
    # (the array then takes the general path, whose answer the dense reference gives)
    n = 150000
    keys = np.arange(n, dtype=np.int64) * 3  # column-major keys of a (n, n) matrix: col * n + row
    idx = np.stack([keys % n, keys // n])
    assert _in_column_order(idx)
    idx[:, [where - 1, where]] = idx[:, [where, where - 1]]
    assert not _in_column_order(idx)
    a = coosparse.COO(idx, np.arange(n, dtype=np.float64), (n, n), unique=True)
    c = a.coalesce()
    lin = c.indices[0] * n + c.indices[1]
    assert c.is_coalesced and np.all(np.diff(lin) > 0)
    order = np.argsort(idx[0] * n + idx[1], kind="stable")
    np.testing.assert_array_equal(c.values, np.arange(n, dtype=np.float64)[order])


def _check_by_keys(backend, idx, vals, shape):
    """coalesce of a shape too large to densify: against a stable sort of the linear keys with
    the duplicates added in their original order (np.add.at, unbuffered) in the accumulation
    dtype (float16 in float32, bool and integers in 64 bits, wrapping), cast back."""
    sn = len(shape) - (vals.ndim - 1)
    flat = np.ravel_multi_index(tuple(idx), shape[:sn])
    order = np.argsort(flat, kind="stable")
    uniq, seg = np.unique(flat[order], return_inverse=True)
    dt = vals.dtype
    acc = {"b": np.int64, "i": np.int64, "u": np.uint64}.get(dt.kind, np.float32 if dt == np.float16 else dt)
    sums = np.zeros((uniq.size,) + vals.shape[1:], dtype=acc)
    np.add.at(sums, seg, vals[order].astype(acc))
    want = sums != 0 if dt.kind == "b" else sums.astype(dt)
    c = backend.get(backend.put(COO(idx, vals, shape)).coalesce())
    assert c.is_coalesced and c.dtype == dt and c.shape == tuple(shape)
    np.testing.assert_array_equal(c.indices, np.array(np.unravel_index(uniq, shape[:sn])).reshape(sn, -1))
    np.testing.assert_array_equal(c.values, want)


@pytest.mark.parametrize("n", [32767, 32768])  # the last input of the one-bucket route, the first bucketed
@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=str)
def test_every_dtype_either_side_of_the_one_bucket_route(backend, n, dtype):
    """Duplicates of every dtype, one value or a block per entry (none for a dense dimension of
    size 0), on a shape with 46 key bits: the one-bucket route's words hold them beside 15 position
    bits, and its buckets of any size take capped radix passes; the bucketed route from 32,768."""
    rng = np.random.default_rng(n)
    shape = (2**23, 2**23)
    pool = np.stack([rng.integers(0, s, n // 8) for s in shape])
    idx = pool[:, rng.integers(0, n // 8, n)]
    for dense in [(), (2,), (0,)]:
        _check_by_keys(backend, idx, values_of(rng, n, dense, dtype), shape + dense)


@pytest.mark.parametrize("n", [2, 5, 31, 32, 33])
def test_tiny_inputs_with_many_key_bits(backend, n):
    """A handful of entries whose keys need up to 62 bits: the one-bucket radix sort of at most 32
    words uses 4-bit digits, at most 8 passes (wider digits then), whatever the key bits."""
    rng = np.random.default_rng(n)
    kb = 63 - max(n - 1, 0).bit_length()  # as many key bits as the packed words hold beside the positions
    for shape in [(2 ** (kb // 2), 2 ** (kb - kb // 2)), (3, 2 ** (kb - 2)), (2**20, 5, 2 ** (kb - 23))]:
        assert (int(np.prod(shape, dtype=object)) - 1).bit_length() <= kb
        pool = np.stack([rng.integers(0, s, max(n // 2, 1)) for s in shape])
        idx = pool[:, rng.integers(0, pool.shape[1], n)]
        _check_by_keys(backend, idx, rng.standard_normal(n), shape)


class _Host:
    """The CPU kernels only (the scatter's stores are theirs)."""
    put = get = staticmethod(lambda x: x)


def _misaligned(shape, dtype):
    """An array that starts 8 bytes past a cache line (the scatter's line stores must not run)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(nbytes + 128, dtype=np.uint8)
    off = -raw.ctypes.data % 64 + 8
    return raw[off:off + nbytes].view(dtype).reshape(shape)


@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("shape", [(2**20, 2**20), (1024, 1024)], ids=["64-bit words", "32-bit words"])
@pytest.mark.parametrize("dtype, dense", [(np.float64, ()), (np.float32, ()), (np.int32, ()), (np.complex128, ()),
                                          (np.float64, (8,)), (np.float32, (16,)), (np.float64, (3,))])
def test_scatter_line_stores(monkeypatch, aligned, shape, dtype, dense):
    """The bucketed scatter stores whole cache lines past the caches: 4- and 8-byte words and
    values gathered per bucket in groups of lines (a chunk's groups it fills alone); temporaries
    that do not start a line take plain stores. Value rows of whole lines take the by-position
    route, which moves no value in its scatter."""
    from coosparse._kernels import scratch
    from coosparse._kernels.numba import coalesce as co

    n = 300_000  # temporaries of 1 MiB and more: the scratch pool's, which start a line
    rng = np.random.default_rng(len(dense) + np.dtype(dtype).itemsize)
    pool = np.stack([rng.integers(0, s, n // 4) for s in shape])
    idx = pool[:, rng.integers(0, n // 4, n)]
    seen = []
    groups = co._write_groups
    monkeypatch.setattr(co, "_write_groups", lambda *a: seen.append(groups(*a)) or seen[-1])
    if not aligned:
        monkeypatch.setattr(scratch, "take", _misaligned)
    vals = values_of(rng, n, dense, dtype)
    _check_by_keys(_Host, idx, vals, shape + dense)
    if co.rows_move_whole(vals.reshape(n, -1)):
        assert not seen
        return
    lims = seen[0][0]
    one_per_entry = not dense and dtype != np.complex128
    assert bool((lims[..., 1] > lims[..., 0]).any()) == (aligned and one_per_entry)


def test_scatter_line_stores_with_strided_value_rows():
    """The kernel called with value rows that are not unit-stride (a Fortran-ordered block) gives
    what C-ordered rows give: rows of whole lines are stored as blocks only from unit-stride rows."""
    from coosparse._kernels.numba import coalesce as co

    rng = np.random.default_rng(3)
    n, shape = 100_000, (1024, 1024)
    idx = np.ascontiguousarray(rng.integers(0, 1024, (2, n)))
    strides = np.array([1024, 1], dtype=np.int64)
    vals = rng.standard_normal((n, 8))
    want = co.coalesce_linear(idx, strides, 1024 * 1024, vals, 2)
    got = co.coalesce_linear(idx, strides, 1024 * 1024, np.asfortranarray(vals), 2)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    _check_by_keys(_Host, idx, vals, shape + (8,))
