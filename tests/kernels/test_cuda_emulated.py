"""The emulated CUDA layer: host build, cache, bounds checks, and kernel parity with Numba.

The backend-parametrised suites run every public operation on the emulated
layer; these tests pin the kernel layer itself: each KERNEL_API function on
random data of every dtype gives the Numba layer's result bit for bit, and
every entry of cuda_kernels.KERNELS is launched by at least one of them.
The rows are called through ``emulated_host`` (NumPy in, NumPy out; the
kernels and launch checks are the strict emulation's).
"""
import os

import numpy as np
import pytest

from coosparse._kernels.cuda import sources as _sources

emulated = pytest.importorskip("coosparse._kernels.cuda.emulated")
if not emulated.available():
    pytest.skip(f"emulated CUDA layer unavailable: {emulated._build_error}", allow_module_level=True)

from coosparse._kernels.cuda import emulated_host as H  # noqa: E402
import emulation as strict  # noqa: E402
from coosparse._kernels.cuda.errors import check_device_errors  # noqa: E402
from coosparse._kernels.numba import layer as nb  # noqa: E402
from strategies import full_range_values  # noqa: E402

ACC_DTYPES = [np.int64, np.float32, np.float64, np.complex64, np.complex128]
ALL_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
              np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]
ADD_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
              np.float32, np.float64, np.complex64, np.complex128]


def _values(rng, shape, dtype):
    return full_range_values(rng, shape, dtype, scale=1e3)


@pytest.fixture(scope="module")
def launched():
    """Names of the kernels launched through the emulated layer during this module."""
    seen = set()
    real = emulated._layer._launch

    def spy(kernel, nthreads, args):
        seen.add(kernel)
        return real(kernel, nthreads, args)

    emulated._layer._launch = spy
    yield seen
    emulated._layer._launch = real


def test_library_is_cached(tmp_path, monkeypatch):
    path, _, _ = emulated.library_path()
    assert os.path.exists(path)  # built once by available(), keyed by the sources' hash
    assert _sources.sources_digest("x") != _sources.sources_digest("y")


def test_every_table_entry_has_a_launch_wrapper():
    tu = emulated.translation_unit()
    n = len(_sources.all_name_expressions())
    assert tu.count("coo_host::launch(") + tu.count("coo_host::launch_cooperative(") == n
    for expr in _sources.COOPERATIVE:  # their threads run as fibers (tests/kernels/test_cooperative_emulation.py)
        assert f"coo_host::launch_cooperative(&{expr}," in tu


def test_shim_has_no_plain_shared_memory():
    # shared arrays only through COO_SHARED (poisoned per block); cooperation only in COOPERATIVE kernels
    with open(os.path.join(_sources.INCLUDE_DIR, "coo_host_shim.cuh")) as f:
        shim = f.read()
    assert "#define __shared__" not in shim


@pytest.mark.parametrize("ndim", [0, 1, 2, 3])
def test_linear_index_and_unravel(launched, ndim):
    rng = np.random.default_rng(ndim)
    shape = tuple(rng.integers(1, 50, size=ndim))
    strides = np.array([int(np.prod(shape[d + 1:])) for d in range(ndim)], dtype=np.int64)
    n = 1000
    ix = np.stack([rng.integers(0, s, n) for s in shape]) if ndim else np.zeros((0, n), np.int64)
    k1, k2 = nb.linear_index(ix, strides), H.linear_index(ix, strides)
    np.testing.assert_array_equal(k1, k2)
    if ndim:
        np.testing.assert_array_equal(H.unravel_index(k2, strides), nb.unravel_index(k1, strides))


@pytest.mark.parametrize("n", [0, 1, 2, 257, 3000])
def test_sort_and_segments(launched, n):
    rng = np.random.default_rng(n)
    keys = rng.integers(0, max(n // 3, 1), n).astype(np.int64)
    s1, p1 = nb.sort_pairs(keys, max(n // 3, 1))
    s2, p2 = H.sort_pairs(keys, max(n // 3, 1))
    np.testing.assert_array_equal(s1, s2)
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(nb.segment_starts(s1), H.segment_starts(s2))


def test_sort_pairs_wide_keys_take_the_argsort_path():
    keys = np.array([2**61, 5, 2**61, 0, 5], np.int64)
    s, p = H.sort_pairs(keys, 2**62)  # 62 key bits + 3 position bits > 63: no packing
    np.testing.assert_array_equal(p, [3, 1, 4, 0, 2])
    np.testing.assert_array_equal(s, keys[p])


@pytest.mark.parametrize("dtype", ACC_DTYPES)
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("with_perm", [True, False])
def test_segment_sum_bit_identical(launched, dtype, k, with_perm):
    rng = np.random.default_rng(7)
    n = 2000
    keys = np.sort(rng.integers(0, 300, n)).astype(np.int64)
    starts = nb.segment_starts(keys)
    vals = _values(rng, (n, k), dtype)
    perm = rng.permutation(n).astype(np.int64) if with_perm else None
    a, b = nb.segment_sum(vals, perm, starts), H.segment_sum(vals, perm, starts)
    assert a.dtype == b.dtype
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_gather_rows(launched, dtype):
    rng = np.random.default_rng(3)
    vals = _values(rng, (500, 2), dtype)
    rows = rng.integers(0, 500, 700).astype(np.int64)
    expected = vals[rows]  # (Numba has no float16 model; NumPy is the reference)
    np.testing.assert_array_equal(H.gather_rows(vals, rows), expected)


@pytest.mark.parametrize("dtype", ADD_DTYPES)
@pytest.mark.parametrize("op", ["scatter_add", "scatter_set", "scatter_add replace"])
def test_scatter_duplicates_in_order(launched, dtype, op):
    rng = np.random.default_rng(11)
    size, n, k = 400, 1500, 2
    inner = np.array([0, 7], dtype=np.int64)  # overlapping: address a + 7 meets (a + 7) + 0
    addresses = rng.integers(0, size - 7, n).astype(np.int64)
    vals = _values(rng, (n, k), dtype)
    if np.dtype(dtype).kind in "fc":
        vals.reshape(-1)[::5] = -0.0  # runs of -0.0 keep their sign only under replace
    t1 = _values(rng, size, dtype)
    t0, t2 = t1.copy(), t1.copy()
    kw = {"replace": True} if op.endswith("replace") else {}
    getattr(nb, op.split()[0])(t1, addresses, vals, inner, **kw)
    getattr(H, op.split()[0])(t2, addresses, vals, inner, **kw)
    np.testing.assert_array_equal(t1.view(np.uint8), t2.view(np.uint8))
    if kw:  # replace: elements receiving entries hold their sum from -0.0 (the sequential meaning), others stay
        exp = t0.copy()
        flat = (addresses[:, None] + inner[None, :]).reshape(-1)
        exp[flat] = np.array(-0.0).astype(dtype) if np.dtype(dtype).kind != "c" else complex(-0.0, -0.0)
        with np.errstate(all="ignore"):
            for e, v in zip(flat, vals.reshape(-1)):
                exp[e] = exp[e] + v
        np.testing.assert_array_equal(t1.view(np.uint8), exp.view(np.uint8))


@pytest.mark.parametrize("dtype", ADD_DTYPES)
@pytest.mark.parametrize("hint", ["sorted", "distinct"])
@pytest.mark.parametrize("op", ["scatter_add", "scatter_set"])
def test_scatter_hints_skip_the_sort(launched, dtype, hint, op):
    # addresses the caller vouches for: non-decreasing ('sorted') or pairwise distinct
    # (blocks of one element where addresses repeat: the elements of two equal blocks of more would
    # interleave, so their element addresses are not non-decreasing)
    rng = np.random.default_rng(21)
    size = 300
    if hint == "sorted":
        inner = np.array([0], np.int64)
        addresses = np.sort(rng.integers(0, size // 2, 100)).astype(np.int64) * 2
    else:
        inner = np.array([0, 1], np.int64)
        addresses = rng.permutation(size // 2)[:100].astype(np.int64) * 2
    k = len(inner)
    vals = _values(rng, (len(addresses), k), dtype)
    target = _values(rng, size, dtype)
    exp = target.copy()
    with np.errstate(all="ignore"):
        for i, a in enumerate(addresses):  # the sequential meaning
            for c in range(k):
                exp[a + inner[c]] = exp[a + inner[c]] + vals[i, c] if op == "scatter_add" else vals[i, c]
    getattr(H, op)(target, addresses, vals, inner, hint=hint)
    np.testing.assert_array_equal(target.view(np.uint8), exp.view(np.uint8))
    check_device_errors()  # a true hint passes its check


@pytest.mark.parametrize("hint", ["sorted", "distinct"])
@pytest.mark.parametrize("op", ["scatter_add", "scatter_set"])
def test_lying_scatter_hints_are_reported(launched, op, hint):
    # flags built with check=False may lie: addresses neither sorted nor distinct under either hint
    # would let two GPU threads write one word in either order; the cheap check reports it (ORDER)
    t = np.zeros(8)
    addresses = np.array([4, 1, 4, 2], np.int64)
    getattr(H, op)(t, addresses, np.array([[1.0], [2.0], [3.0], [4.0]]), np.zeros(1, np.int64), hint=hint)
    with pytest.raises(ValueError, match="flag sorted=True is false"):
        check_device_errors()
    assert set(np.flatnonzero(t)) <= {1, 2, 4}  # nothing written elsewhere
    # duplicates of one value under 'distinct' leave the same word whatever the order: nothing to report
    t = np.zeros(8)
    H.scatter_set(t, np.array([3, 3], np.int64), np.array([[5.0], [5.0]]), np.zeros(1, np.int64), hint="distinct")
    check_device_errors()
    assert t[3] == 5.0
    # an entry skipped for leaving the target is not also an order error
    t = np.zeros(8)
    getattr(H, op)(t, np.array([1, 99, 2], np.int64), np.ones((3, 1)), np.zeros(1, np.int64), hint="sorted")
    with pytest.raises(IndexError, match="scatter outside") as e:
        check_device_errors()
    assert "sorted=True" not in str(e.value)


@pytest.mark.parametrize("dtype", [np.bool_, np.float16])
def test_scatter_set_bit_copies(launched, dtype):
    rng = np.random.default_rng(5)
    addresses = rng.integers(0, 50, 200).astype(np.int64)
    vals = _values(rng, (200, 1), dtype)
    t1 = np.zeros(50, dtype)
    t2 = t1.copy()
    for i, a in enumerate(addresses):  # the sequential meaning (Numba has no float16 model)
        t1[a] = vals[i, 0]
    H.scatter_set(t2, addresses, vals, np.zeros(1, np.int64))
    np.testing.assert_array_equal(t1, t2)


def test_scatter_into_a_strided_flat_view():
    from coosparse._core.arrays import flat_view

    out = np.zeros((6, 4))[:, ::-2]  # negative-free but strided target
    flat, base, es = flat_view(out)
    H.scatter_add(flat, np.array([base + es[0], base + es[0]], np.int64),
                         np.array([[1.0], [2.0]]), np.zeros(1, np.int64))
    assert out[1, 0] == 3.0 and out.sum() == 3.0


# ---------------------------------------------------------------------- bounds
@pytest.fixture
def validating(monkeypatch):
    """The emulated layer with host-side bound checks on (COOSPARSE_EMULATION_VALIDATE=1)."""
    monkeypatch.setattr(emulated._layer, "_validate", True)


def test_gather_rows_out_of_bounds_raises_when_validating(validating):
    with pytest.raises(IndexError, match="gather_rows"):
        H.gather_rows(np.zeros((3, 1)), np.array([0, 3], np.int64))
    with pytest.raises(IndexError):
        H.gather_rows(np.zeros((3, 1)), np.array([-1], np.int64))


def test_gather_rows_out_of_bounds_zeroes_and_reports():
    # without validation (the GPU's way) the kernel itself stays in bounds and reports
    got = H.gather_rows(np.arange(1.0, 4.0)[:, None], np.array([0, 3, -1, 2], np.int64))
    np.testing.assert_array_equal(got[:, 0], [1.0, 0.0, 0.0, 3.0])
    with pytest.raises(IndexError, match="gather read outside"):
        check_device_errors()
    check_device_errors()  # the report is cleared once raised


@pytest.mark.parametrize("op", ["scatter_add", "scatter_set"])
def test_scatter_skips_entries_whose_block_leaves_the_target(op):
    # the kernel-API rule (memory safety for COOs built with check=False):
    # valid block addresses are [-min(0, min inner), len - max(0, max inner))
    t = np.zeros(6)
    addresses = np.array([0, 4, 5, -1, 2, 1], np.int64)
    inner = np.array([0, 1], np.int64)
    vals = np.arange(1.0, 13.0).reshape(6, 2)
    getattr(H, op)(t, addresses, vals, inner)
    exp = np.zeros(6)
    for i, a in enumerate(addresses):
        if 0 <= a < 6 - 1:
            for c in range(2):
                exp[a + inner[c]] = exp[a + inner[c]] + vals[i, c] if op == "scatter_add" else vals[i, c]
    np.testing.assert_array_equal(t, exp)
    with pytest.raises(IndexError, match="scatter outside"):
        check_device_errors()


def test_segment_sum_bad_perm_raises_when_validating(validating):
    with pytest.raises(IndexError):
        H.segment_sum(np.ones((2, 1)), np.array([0, 5], np.int64), np.array([0, 2], np.int64))
    with pytest.raises(IndexError):
        H.segment_sum(np.ones((2, 1)), None, np.array([0, 3], np.int64))


def test_segment_sum_bad_perm_and_starts_are_reported():
    got = H.segment_sum(np.ones((2, 1)), np.array([0, 5], np.int64), np.array([0, 2], np.int64))
    assert got[0, 0] == 1.0  # the valid row is summed, the bad one skipped
    with pytest.raises(IndexError):
        check_device_errors()
    got = H.segment_sum(np.ones((2, 1)), None, np.array([0, 3], np.int64))
    assert got[0, 0] == 0.0
    with pytest.raises(ValueError, match="not sorted or not unique"):
        check_device_errors()


def test_unsupported_sum_dtype_raises():
    with pytest.raises(TypeError):
        H.segment_sum(np.ones((2, 1), np.float16), None, np.array([0, 2], np.int64))


# ---------------------------------------------------------------------- intersection family
# NumPy references of the kernel rows added by the intersection and strided-scatter issues
L = H


def _ref_match(src, probe):
    first = np.searchsorted(probe, src, side="left")
    return first, np.searchsorted(probe, src, side="right") - first


@pytest.mark.parametrize("n,m", [(0, 5), (5, 0), (1, 1), (300, 200), (2000, 3000)])
def test_match_merge_and_search(launched, n, m):
    rng = np.random.default_rng(n + m)
    probe = np.sort(rng.integers(0, 400, m)).astype(np.int64)
    src = rng.integers(-5, 410, n).astype(np.int64)
    f, c = _ref_match(src, probe)
    f2, c2 = L.match_search(src, probe)
    np.testing.assert_array_equal(f2, f)
    np.testing.assert_array_equal(c2, c)
    s = np.sort(src)
    f3, c3 = L.match_merge(s, probe)
    fr, cr = _ref_match(s, probe)
    np.testing.assert_array_equal(f3, fr)
    np.testing.assert_array_equal(c3, cr)


def test_compact_and_merge_matches(launched):
    first = np.array([0, 1, 3, 3, 3, 4, 7], np.int64)
    count = np.array([0, 2, 0, 0, 1, 3, 0], np.int64)
    rows, f, c = L.compact_matches(first, count)
    np.testing.assert_array_equal(rows, [1, 4, 5])
    np.testing.assert_array_equal(f, [1, 3, 4])
    np.testing.assert_array_equal(c, [2, 1, 3])
    assert L.compact_matches(first[:0], count[:0])[0].shape == (0,)
    assert L.compact_matches(first, np.zeros(7, np.int64))[0].shape == (0,)
    rng = np.random.default_rng(9)
    probe = np.sort(rng.integers(0, 100, 300)).astype(np.int64)
    src = np.sort(rng.integers(0, 120, 200)).astype(np.int64)
    fr, cr = _ref_match(src, probe)
    keep = np.flatnonzero(cr)
    rows, f, c = L.merge_matches(src, probe)
    np.testing.assert_array_equal(rows, keep)
    np.testing.assert_array_equal(f, fr[keep])
    np.testing.assert_array_equal(c, cr[keep])


def _ref_probe_sums(vals, perm, first, count):
    exp = np.zeros((len(first), vals.shape[1]), dtype=vals.dtype)
    for i in range(len(first)):
        for j in range(first[i], first[i] + count[i]):
            r = perm[j] if perm is not None else j
            exp[i] = vals[r] if j == first[i] else exp[i] + vals[r]
    return exp


@pytest.mark.parametrize("dtype", ACC_DTYPES)
@pytest.mark.parametrize("with_perm", [True, False])
@pytest.mark.parametrize("shared_runs", [False, True])
def test_probe_sum_in_probe_order(launched, dtype, with_perm, shared_runs):
    rng = np.random.default_rng(1)
    np_, k = 600, 2
    probe = np.sort(rng.integers(0, 150, np_)).astype(np.int64)
    src = rng.integers(0, 200, 400).astype(np.int64)  # repeats: rows share probe runs
    first, count = _ref_match(src, probe)
    vals = _values(rng, (np_, k), dtype)
    perm = rng.permutation(np_).astype(np.int64) if with_perm else None
    got = L.probe_sum(vals, perm, first, count, shared_runs=shared_runs)
    exp = _ref_probe_sums(vals, perm, first, count)
    np.testing.assert_array_equal(got.view(np.uint8), exp.view(np.uint8))


def _naive_product(x, y):
    """x * y with complex products as (ac - bd) + i(ad + bc), every operation rounded alone.

    That is Numba's complex multiply (no contraction) and the kernels'; NumPy's own
    complex multiply may use FMA instructions, so it is not the reference here.
    """
    if x.dtype.kind != "c":
        return x * y
    out = np.empty_like(x)
    out.real = x.real * y.real - x.imag * y.imag
    out.imag = x.real * y.imag + x.imag * y.real
    return out


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("with_perm", [True, False])
@pytest.mark.parametrize("with_rows", [True, False])
@pytest.mark.parametrize("shared_runs", [False, True])
def test_multiply_matched(launched, dtype, with_perm, with_rows, shared_runs):
    rng = np.random.default_rng(12)
    np_, k = 500, 2
    probe = np.sort(rng.integers(0, 150, np_)).astype(np.int64)
    src = rng.integers(0, 200, 300).astype(np.int64)
    first, count = _ref_match(src, probe)
    rows = None
    if with_rows:
        rows, first, count = L.compact_matches(first, count)
    pv = _values(rng, (np_, k), dtype)
    sv = _values(rng, (300, k), dtype)
    perm = rng.permutation(np_).astype(np.int64) if with_perm else None
    got = L.multiply_matched(sv, rows, pv, perm, first, count, shared_runs=shared_runs)
    with np.errstate(all="ignore"):
        exp = _naive_product(sv[rows if with_rows else np.arange(300)], _ref_probe_sums(pv, perm, first, count))
    exp[count == 0] = 0
    np.testing.assert_array_equal(got.view(np.uint8), exp.view(np.uint8))


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.uint64, np.float32, np.float64,
                                   np.complex64, np.complex128])
@pytest.mark.parametrize("negate", [False, True])
def test_union_values(launched, dtype, negate):
    rng = np.random.default_rng(13)
    a = np.unique(rng.integers(0, 100, 40)).astype(np.int64)
    b = np.unique(rng.integers(0, 100, 60)).astype(np.int64)
    a_pos, b_pos = L.merge_union(a, b)
    av, bv = _values(rng, (len(a), 3), dtype), _values(rng, (len(b), 3), dtype)
    got = L.union_values(av, bv, a_pos, b_pos, negate)
    exp = np.empty((len(a_pos), 3), dtype)
    with np.errstate(all="ignore"):
        for u, (p, q) in enumerate(zip(a_pos, b_pos)):
            if p >= 0 and q >= 0:
                exp[u] = av[p] - bv[q] if negate else av[p] + bv[q]
            elif p >= 0:
                exp[u] = av[p]
            else:
                exp[u] = -bv[q] if negate else bv[q]
    np.testing.assert_array_equal(got.view(np.uint8), exp.view(np.uint8))
    idx, vals = L.merge_add(a[None, :], b[None, :], av, bv, np.ones(1, dtype=np.int64), negate)
    np.testing.assert_array_equal(idx[0], np.union1d(a, b))
    np.testing.assert_array_equal(vals.view(np.uint8), exp.view(np.uint8))


def test_gather_columns_and_union(launched):
    rng = np.random.default_rng(2)
    a = np.unique(rng.integers(0, 100, 40)).astype(np.int64)
    b = np.unique(rng.integers(0, 100, 60)).astype(np.int64)
    a_pos, b_pos = L.merge_union(a, b)
    union = np.union1d(a, b)
    got = np.where(a_pos >= 0, a[np.maximum(a_pos, 0)], b[np.maximum(b_pos, 0)])
    np.testing.assert_array_equal(got, union)
    np.testing.assert_array_equal(a_pos >= 0, np.isin(union, a))
    np.testing.assert_array_equal(b_pos >= 0, np.isin(union, b))
    ok = b_pos >= 0
    np.testing.assert_array_equal(b[b_pos[ok]], union[ok])
    ai = np.stack([a // 10, a % 10])
    bi = np.stack([b // 10, b % 10])
    cols = L.union_columns(ai, bi, a_pos, b_pos)
    np.testing.assert_array_equal(cols, np.stack([union // 10, union % 10]))
    rows = rng.integers(0, len(a), 25).astype(np.int64)
    np.testing.assert_array_equal(L.gather_columns(ai, rows), ai[:, rows])
    for x, y in ((a[:0], b), (a, b[:0]), (a[:0], b[:0]), (a, a)):
        p, q = L.merge_union(x, y)
        assert len(p) == len(np.union1d(x, y))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_gather_or_zero_and_strided(launched, dtype):
    rng = np.random.default_rng(4)
    vals = _values(rng, (50, 3), dtype)
    rows = rng.integers(-3, 50, 80).astype(np.int64)
    exp = np.where((rows >= 0)[:, None], vals[np.maximum(rows, 0)], np.zeros(1, dtype))
    np.testing.assert_array_equal(L.gather_or_zero(vals, rows), exp)
    src = _values(rng, 200, dtype)
    addresses = rng.integers(0, 190, 30).astype(np.int64)
    inner = np.array([0, 3, 9], np.int64)
    np.testing.assert_array_equal(L.gather_strided(src, addresses, inner), src[addresses[:, None] + inner])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_gather_indexed_equals_numpy_on_both_layers(dtype):
    # a (7, 9, 4) block of a larger buffer read through its element strides (one reversed) and a
    # base, at random index columns; the Numba row fuses address, check and read, the CUDA row
    # composes linear_index and gather_strided: both give NumPy's bits
    rng = np.random.default_rng(5)
    buf = _values(rng, 7 * 9 * 4 + 11, dtype)
    x = buf[11:].reshape(7, 9, 4)[:, ::-1]
    strides = np.array([s // buf.itemsize for s in x.strides[:2]], np.int64)
    base = 11 + 8 * 4  # element (0, 0) of the reversed view
    inner = np.array([0, 1, 3], np.int64)
    idx = np.stack([rng.integers(0, 7, 40), rng.integers(0, 9, 40)]).astype(np.int64)
    want = x[idx[0], idx[1]][:, [0, 1, 3]]
    for layer in (nb, H):
        got = layer.gather_indexed(buf, idx, strides, (7, 9), base, inner)
        np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8))
    assert nb.gather_indexed(buf, idx[:, :0], strides, (7, 9), base, inner).shape == (0, 3)


@pytest.mark.parametrize("bad", [(0, 7), (1, 9), (1, -1), (0, -(2**62))])
def test_gather_indexed_refuses_an_index_outside_the_sizes(bad):
    x = np.arange(63.0)
    idx = np.zeros((2, 5), np.int64)
    idx[bad[0], 3] = bad[1]
    with pytest.raises(IndexError, match=f"out of bounds for dimension {bad[0]}"):
        nb.gather_indexed(x, idx, np.array([9, 1], np.int64), (7, 9), 0, np.zeros(1, np.int64))
    got = H.gather_indexed(x, idx, np.array([9, 1], np.int64), (7, 9), 0, np.zeros(1, np.int64))
    assert got[3, 0] == 0  # the GPU reads zero bits there and reports it
    with pytest.raises(IndexError):
        check_device_errors()


# ---------------------------------------------------------------------- strided views
def _ref_view_scatter(out, src, src_base, offset, sizes, strides, src_strides):
    for i in np.ndindex(*sizes):
        out[offset + int(np.dot(i, strides))] = src[src_base + int(np.dot(i, src_strides))]


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64, np.complex128])
@pytest.mark.parametrize("copy", [True, False])
@pytest.mark.parametrize("view", [((3, 4), (12, 2), 5),     # small gaps: the fused fill pass
                                  ((2, 3), (100, 1), 7),    # a gap over FILL_MAX_GAP: copy + scatter
                                  ((1,), (1,), 0)])         # one element at the head
def test_strided_scatter_sorted(launched, dtype, copy, view):
    rng = np.random.default_rng(6)
    size, stride, offset = view
    out = np.zeros(250, dtype)
    inp = _values(rng, 250, dtype)
    src = _values(rng, 40, dtype)
    sizes, strides = np.array(size), np.array(stride)
    sstrides = np.array([int(np.prod(size[k + 1:])) for k in range(len(size))])
    exp = inp.copy() if copy else out.copy()
    _ref_view_scatter(exp, src, 2, offset, sizes, strides, sstrides)
    L.strided_scatter_sorted(out, inp if copy else out, src, 2, offset, sizes, strides, sstrides, copy)
    np.testing.assert_array_equal(out, exp)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint64, np.complex128])
def test_strided_scatter_ordered_last_writer_wins(launched, dtype):
    rng = np.random.default_rng(8)
    out = _values(rng, 30, dtype)
    src = _values(rng, 50, dtype)
    sizes, strides, sstrides = np.array([5, 6]), np.array([2, 1]), np.array([6, 1])  # overlapping view
    exp = out.copy()
    _ref_view_scatter(exp, src, 0, 3, sizes, strides, sstrides)
    L.strided_scatter_ordered(out, src, 0, 3, sizes, strides, sstrides)
    np.testing.assert_array_equal(out, exp)


@pytest.mark.parametrize("view", [((3, 700), (1500, 2), 4),  # 32 lanes, three chunks a row (the last partial)
                                  ((5, 9), (10, 1), 1),      # two lanes: a short row
                                  ((2000,), (3,), 2),        # 1-d: no row division at all
                                  ((4, 3, 257), (2000, 600, 2), 0)])  # 3-d, one element past a full chunk
@pytest.mark.parametrize("copy", [True, False])
def test_strided_views_interleave_lanes(launched, view, copy):
    # neighbouring lanes take neighbouring elements: every element still written once, by one thread
    rng = np.random.default_rng(9)
    size, stride, offset = view
    n_out = offset + sum((a - 1) * b for a, b in zip(size, stride)) + 5
    out, inp = np.zeros(n_out, np.float64), _values(rng, n_out, np.float64)
    src = _values(rng, int(np.prod(size)) + 3, np.float64)
    sizes, strides = np.array(size), np.array(stride)
    sstrides = np.array([int(np.prod(size[k + 1:])) for k in range(len(size))])
    exp = inp.copy() if copy else out.copy()
    _ref_view_scatter(exp, src, 3, offset, sizes, strides, sstrides)
    L.strided_scatter_sorted(out, inp if copy else out, src, 3, offset, sizes, strides, sstrides, copy)
    np.testing.assert_array_equal(out, exp)
    # the ordered path (overlap allowed): the same view written through sorted addresses
    out2 = inp.copy()
    exp2 = inp.copy()
    _ref_view_scatter(exp2, src, 3, offset, sizes, strides, sstrides)
    L.strided_scatter_ordered(out2, src, 3, offset, sizes, strides, sstrides)
    np.testing.assert_array_equal(out2, exp2)


def test_view_lanes():
    from coosparse._kernels.cuda.scatter import view_lanes

    assert [view_lanes(n) for n in (1, 8, 9, 16, 17, 255, 256, 257, 10**6)] == [1, 1, 2, 2, 4, 32, 32, 32, 32]


def test_strided_views_out_of_bounds_raise_when_validating(validating):
    out = np.zeros(10, np.uint8)
    with pytest.raises(IndexError):
        L.strided_scatter_ordered(out, np.zeros(10, np.uint8), 0, 5, np.array([3]), np.array([3]), np.array([1]))
    with pytest.raises(IndexError):
        L.strided_scatter_sorted(out, out, np.zeros(2, np.uint8), 0, 0, np.array([3]), np.array([1]),
                                 np.array([1]), False)
    assert not out.any()


# ---- reductions: segment products, min/max, arg-min/max, bit for bit
def _segments(rng, n, nseg):
    keys = np.sort(rng.integers(0, nseg, n)).astype(np.int64)
    return nb.segment_starts(keys)


@pytest.mark.parametrize("dtype", ACC_DTYPES)
@pytest.mark.parametrize("with_perm", [True, False])
def test_segment_prod_bit_identical(launched, dtype, with_perm):
    rng = np.random.default_rng(11)
    n = 3000
    starts = _segments(rng, n, 400)
    vals = (rng.standard_normal((n, 2)) * 1.01).astype(dtype)
    if np.dtype(dtype).kind == "c":
        vals = vals + 1j * rng.standard_normal((n, 2)).astype(dtype)
    elif np.dtype(dtype).kind == "i":
        vals = _values(rng, (n, 2), dtype)  # full range: products wrap
    perm = rng.permutation(n).astype(np.int64) if with_perm else None
    a, b = nb.segment_prod(vals, perm, starts), H.segment_prod(vals, perm, starts)
    assert a.dtype == b.dtype == vals.dtype
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64])
@pytest.mark.parametrize("is_max", [True, False])
@pytest.mark.parametrize("with_perm", [True, False])
@pytest.mark.parametrize("nseg", [400, 2])  # short segments, and long ones (the arg tree: pieces of 256)
def test_segment_minmax_and_arg_bit_identical(launched, dtype, is_max, with_perm, nseg):
    rng = np.random.default_rng(12)
    n = 3000 if nseg > 2 else 9000
    starts = _segments(rng, n, nseg)
    vals = _values(rng, (n, 3), dtype)
    if np.dtype(dtype).kind == "f":
        vals[rng.random(vals.shape) < (0.01 if nseg > 2 else 0.0002)] = np.nan
    perm = rng.permutation(n).astype(np.int64) if with_perm else None
    a, b = nb.segment_minmax(vals, perm, starts, is_max), H.segment_minmax(vals, perm, starts, is_max)
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
    # reference: NumPy's max/min (NaN propagates) per segment
    ordered = vals if perm is None else vals[perm]
    f = np.max if is_max else np.min
    ref = np.stack([f(ordered[starts[s]:starts[s + 1]], axis=0) for s in range(starts.shape[0] - 1)])
    np.testing.assert_array_equal(a, ref)
    # arg: subs distinct and ascending within each segment, with gaps
    sub = np.zeros(n, np.int64)
    for s in range(starts.shape[0] - 1):
        m = int(starts[s + 1] - starts[s])
        sub[starts[s]:starts[s + 1]] = np.sort(rng.choice(m + 2, m, replace=False))
    sub_in = sub if perm is None else np.empty_like(sub)
    if perm is not None:
        sub_in[perm] = sub
    x = nb.segment_arg(vals, perm, starts, sub_in, is_max)
    y = H.segment_arg(vals, perm, starts, sub_in, is_max)
    for p, q in zip(x, y):
        np.testing.assert_array_equal(p.view(np.uint8), q.view(np.uint8))
    best, pos, gap = x
    np.testing.assert_array_equal(best, ref)
    fa = np.argmax if is_max else np.argmin
    for s in range(starts.shape[0] - 1):
        seg, ssub = ordered[starts[s]:starts[s + 1]], sub[starts[s]:starts[s + 1]]
        np.testing.assert_array_equal(pos[s], ssub[fa(seg, axis=0)])  # argmax: first NaN, else first max
        expect_gap = next(g for g in range(len(ssub) + 1) if g >= len(ssub) or ssub[g] != g)
        assert gap[s] == expect_gap


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("n", [1000, 70000])  # one part, and the parallel parts of the Numba kernel
def test_fused_reductions_bit_identical(launched, dtype, op, n):
    if np.dtype(dtype).kind == "c" and op != "prod":
        return
    rng = np.random.default_rng(13)
    bound = 500
    keys = rng.integers(0, bound, n).astype(np.int64)
    vals = (rng.standard_normal((n, 2)) * 1.01).astype(dtype)
    if np.dtype(dtype).kind == "f":
        vals[rng.random(vals.shape) < 0.001] = np.nan
    elif np.dtype(dtype).kind == "i":
        vals = _values(rng, (n, 2), dtype)
    skeys = np.sort(keys)
    a = nb.reduce_sorted(skeys, vals, op)
    b = H.reduce_sorted(skeys, vals, op)
    for p, q in zip(a, b):
        np.testing.assert_array_equal(p.view(np.uint8), q.view(np.uint8))
    np.testing.assert_array_equal(a[0], nb.segment_starts(skeys))
    for ks, is_sorted in ((keys, False), (skeys, True)):
        c = nb.reduce_by_key(ks, vals, bound + 3, op, is_sorted)
        d = H.reduce_by_key(ks, vals, bound + 3, op, is_sorted)
        for p, q in zip(c, d):
            np.testing.assert_array_equal(p.view(np.uint8), q.view(np.uint8))
        np.testing.assert_array_equal(c[0], np.bincount(keys, minlength=bound + 3))
        assert not c[1][bound:].any()  # keys without entries hold 0
        if is_sorted:  # the runs of the sorted keys, scattered by key
            present = np.flatnonzero(c[0])
            np.testing.assert_array_equal(c[1][present].view(np.uint8), a[1].view(np.uint8))


_REDUCE_CASES = [("sum", np.int64), ("sum", np.float32), ("sum", np.float64), ("sum", np.complex128),
                 ("prod", np.int64), ("prod", np.float32), ("prod", np.float64), ("prod", np.complex64),
                 ("prod", np.complex128), ("max", np.int64), ("max", np.float32), ("max", np.float64),
                 ("min", np.int64), ("min", np.float32), ("min", np.float64)]


@pytest.mark.parametrize("op,dtype", _REDUCE_CASES, ids=[f"{o}-{np.dtype(d).name}" for o, d in _REDUCE_CASES])
def test_segment_reduce_bit_identical(launched, op, dtype):
    # short segments (one thread each) and long ones (the tree: pieces of 256, groups of 32);
    # tests/kernels/test_blocked_order.py checks the order itself
    rng = np.random.default_rng(14)
    starts = np.concatenate([[0], np.cumsum([3, 300, 9000, 1, 257])]).astype(np.int64)
    n = int(starts[-1])
    vals = (rng.standard_normal((n, 2)) * 0.3 + 1).astype(dtype)
    if np.dtype(dtype).kind == "c":
        vals = vals + 1j * (rng.standard_normal((n, 2)) * 1e-3).astype(dtype)
    elif np.dtype(dtype).kind == "i":
        vals = _values(rng, (n, 2), dtype)
    else:
        vals[rng.random(vals.shape) < 0.001] = np.nan
    for perm in (None, rng.permutation(n).astype(np.int64)):
        a, b = nb.segment_reduce(vals, perm, starts, op), H.segment_reduce(vals, perm, starts, op)
        assert a.dtype == b.dtype == vals.dtype
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def test_segment_reductions_refuse_bad_input():
    starts = np.array([0, 2], np.int64)
    with pytest.raises(TypeError):
        H.segment_minmax(np.zeros((2, 1), np.complex64), None, starts, True)
    with pytest.raises(ValueError):
        H.segment_arg(np.zeros((2, 1)), None, starts, np.zeros(3, np.int64), True)
    with pytest.raises(ValueError, match="unknown reduction"):
        H.reduce_sorted(np.zeros(2, np.int64), np.zeros((2, 1)), "mean")


def test_segment_reductions_bad_perm_raises_when_validating(validating):
    starts = np.array([0, 2], np.int64)
    with pytest.raises(IndexError):
        H.segment_prod(np.zeros((2, 1)), np.array([0, 5]), starts)
    with pytest.raises(IndexError):
        H.segment_minmax(np.zeros((2, 1)), None, np.array([0, 3], np.int64), True)


@pytest.mark.parametrize("row", ["segment_prod", "segment_minmax", "segment_arg"])
def test_segment_reductions_bad_perm_and_starts_are_reported(row):
    # without validation (the GPU's way) the kernels stay in bounds and report
    vals = np.array([[2.0], [3.0]])
    extra = {"segment_prod": (), "segment_minmax": (True,), "segment_arg": (np.array([0, 1], np.int64), True)}[row]
    got = getattr(H, row)(vals, np.array([0, 5], np.int64), np.array([0, 2], np.int64), *extra)
    got = got[0] if row == "segment_arg" else got
    assert got[0, 0] == 2.0  # the valid row is reduced, the bad one skipped
    with pytest.raises(IndexError, match="gather read outside"):
        check_device_errors()
    got = getattr(H, row)(vals, None, np.array([0, 3], np.int64), *extra)
    got = got[0] if row == "segment_arg" else got
    assert got[0, 0] == 0.0  # a segment beyond the values: zero
    with pytest.raises(ValueError, match="not sorted or not unique"):
        check_device_errors()


def test_reduce_by_key_reports_keys_outside_the_bound_and_lying_order():
    vals = np.arange(1.0, 5.0)[:, None]
    counts, out = H.reduce_by_key(np.array([0, 1, 1, 7], np.int64), vals, 4, "sum", True)
    np.testing.assert_array_equal(counts, [1, 2, 0, 0])
    np.testing.assert_array_equal(out[:, 0], [1.0, 5.0, 0.0, 0.0])  # key 7 skipped
    with pytest.raises(IndexError, match="scatter outside"):
        check_device_errors()
    with pytest.raises(IndexError, match="outside the shape"):  # the sort clamps; raised at the size read
        H.reduce_by_key(np.array([0, 7, 1, 2], np.int64), vals, 4, "sum", False)
    with pytest.raises(ValueError, match="not sorted"):  # raised at the size read (synchronising row)
        H.reduce_by_key(np.array([2, 1, 1, 0], np.int64), vals, 4, "max", True)
    check_device_errors()
# ---- shape, indexing and joining ---------------------------------------
@pytest.mark.parametrize("n", [0, 1, 300, 5000])
def test_mask_search_expand_match_numba(launched, n):
    rng = np.random.default_rng(n)
    mask = rng.random(n) < 0.4
    np.testing.assert_array_equal(H.mask_positions(mask), nb.mask_positions(mask))
    keys = np.sort(rng.integers(0, 100, n))
    lo = rng.integers(-3, 103, 50)
    hi = lo + rng.integers(-2, 10, 50)
    for a, b in zip(H.search_ranges(keys, lo, hi), nb.search_ranges(keys, lo, hi)):
        np.testing.assert_array_equal(a, b)
    start, count = rng.integers(0, 1000, 40), rng.integers(0, 6, 40)
    for a, b in zip(H.expand_ranges(start, count), nb.expand_ranges(start, count)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_take_ranges_and_merge_take_match_numba(launched, dtype):
    rng = np.random.default_rng(7)
    n = 600
    indices = rng.integers(0, 50, (2, n))
    values = full_range_values(rng, (n, 3), dtype)
    start, count = rng.integers(0, n - 8, 30), rng.integers(0, 8, 30)
    for a, b in zip(H.take_ranges(indices, values, start, count), nb.take_ranges(indices, values, start, count)):
        np.testing.assert_array_equal(a, b)
    keys = np.concatenate([np.sort(rng.integers(0, 40, k)) for k in (200, 0, 250, 150)])
    offsets = np.array([0, 200, 200, 450, 600])
    for a, b in zip(H.merge_take(keys, offsets, indices, values), nb.merge_take(keys, offsets, indices, values)):
        np.testing.assert_array_equal(a, b)


def test_range_rows_stay_in_bounds_and_report():
    # bad input (the GPU's way: no validation): reads outside the source give zeros and are reported
    indices = np.arange(10, dtype=np.int64).reshape(2, 5)
    values = np.arange(5, dtype=np.uint64)[:, None]
    out, vals = H.take_ranges(indices, values, np.array([3, -2], np.int64), np.array([3, 1], np.int64))
    np.testing.assert_array_equal(out, [[0, 0, 0, 1], [3, 4, 0, 0], [8, 9, 0, 0]])
    np.testing.assert_array_equal(vals[:, 0], [3, 4, 0, 0])
    with pytest.raises(IndexError, match="gather read outside"):
        check_device_errors()
    # negative counts (ends not monotonic): a wrong answer, never a wild read
    rows, owner = H.expand_ranges(np.array([0, 10, 20], np.int64), np.array([3, -2, 1], np.int64))
    assert rows.shape == (2,) and ((0 <= owner) & (owner < 3)).all()
    with pytest.raises(ValueError, match="non-negative"):
        H.expand_ranges(np.array([0, 10], np.int64), np.array([1, -2], np.int64))


def test_merge_take_reports_unsorted_runs():
    keys = np.array([0, 5, 3, 1, 2], np.int64)  # run 0 = [0, 5, 3] is not sorted
    indices = keys[None, :].copy()
    values = np.arange(5.0)[:, None].view(np.uint64)
    H.merge_take(keys, np.array([0, 3, 5]), indices, values)
    with pytest.raises(ValueError, match="not sorted"):
        check_device_errors()
    with pytest.raises(ValueError, match="sorted=True is false"):
        nb.merge_take(keys, np.array([0, 3, 5]), indices, values)
    for bad in ([0, 3], [0, 4, 3, 5], [1, 5]):
        with pytest.raises(ValueError, match="run offsets"):
            H.merge_take(keys, np.array(bad), indices, values)
        with pytest.raises(ValueError, match="run offsets"):
            nb.merge_take(keys, np.array(bad), indices, values)
    with pytest.raises(TypeError, match="host metadata"):
        emulated.merge_take(*(strict.to_device(x) for x in (keys, np.array([0, 3, 5]), indices, values)))
# ---- linear algebra ------------------------------------------------
def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _linalg_values(rng, shape, dtype):
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-2**40, 2**40, size=shape).astype(dtype)
    return _values(rng, shape, dtype)


@pytest.mark.parametrize("dtype", ACC_DTYPES)
@pytest.mark.parametrize("grouped", ["sorted", "perm", "unsorted"])
@pytest.mark.parametrize("n,nrows", [(400, 24), (5000, 300)])  # (many tiles of staged entries a block)
def test_spmm_kernels(launched, dtype, grouped, n, nrows):
    # at most 8 columns: entries staged through shared memory (coo_linalg_spmm_staged); 12: coo_linalg_spmm
    rng = np.random.default_rng(30)
    k, rpb = 9, nrows // 3
    rows = np.sort(rng.integers(0, nrows, n)) if grouped == "sorted" else rng.integers(0, nrows, n)
    cols = rng.integers(0, k, n)
    vals = _linalg_values(rng, n, dtype)
    base = np.array([0, k, 2 * k], dtype=np.int64)
    for ncols in (1, 3, 8, 12):
        dense = _linalg_values(rng, (3 * k, ncols), dtype)
        for b in (None, base):
            if grouped == "unsorted":
                got = H.spmm_unsorted(rows, cols, vals, dense, nrows, rpb, b)
                want = nb.spmm_unsorted(rows, cols, vals, dense, nrows, rpb, b)
            else:
                perm = None
                r = rows
                if grouped == "perm":
                    perm = np.argsort(rows, kind="stable")
                    r = rows[perm]
                off = H.row_offsets(r, nrows)
                _same(off, nb.row_offsets(r, nrows))
                got = H.spmm(off, perm, cols, vals, dense, rpb, b)
                want = nb.spmm(off, perm, cols, vals, dense, rpb, b)
            _same(got, want)


@pytest.mark.parametrize("dtype", ACC_DTYPES)
def test_dense_spmm_kernel(launched, dtype):
    rng = np.random.default_rng(31)
    n, k, m, ncols = 300, 7, 4, 6
    krow, cols = rng.integers(0, k, n), rng.integers(0, ncols, n)
    vals = _linalg_values(rng, n, dtype)
    dense = _linalg_values(rng, (2 * m, k), dtype)
    _same(H.dense_spmm(dense, None, m, None, None, krow, cols, vals, ncols),
          nb.dense_spmm(dense, None, m, None, None, krow, cols, vals, ncols))
    batch = rng.integers(0, 3, n)
    perm = np.argsort(batch, kind="stable")
    boff = nb.row_offsets(batch[perm], 3)
    base = np.array([0, m, 0], dtype=np.int64)
    _same(H.dense_spmm(dense, base, m, boff, perm, krow, cols, vals, ncols),
          nb.dense_spmm(dense, base, m, boff, perm, krow, cols, vals, ncols))


@pytest.mark.parametrize("bad", ["short", "outside"])
@pytest.mark.parametrize("row", ["dense_spmm", "spmm"])
def test_batch_bases_are_bounds_checked(row, bad):
    # a product kernel never reads a batch base it was not given, nor a dense row through one:
    # the CPU refuses before the kernel runs, a GPU writes zeros for that batch and reports (GATHER)
    rng = np.random.default_rng(33)
    n, k, m, ncols = 40, 5, 3, 4
    krow, cols, vals = rng.integers(0, k, n), rng.integers(0, ncols, n), rng.random(n)
    batch = np.sort(rng.integers(0, 3, n))
    base = np.array([0, m], np.int64) if bad == "short" else np.array([0, m, 2 * m], np.int64)
    if row == "dense_spmm":
        dense = rng.random((2 * m, k))
        args = (dense, base, m, nb.row_offsets(batch, 3), None, krow, cols, vals, ncols)
    else:  # 3 batches of m rows each; a base plus the k columns must stay inside the dense rows
        dense = rng.random((2 * k, 2))
        base = base // m * k
        rows = rng.integers(0, 3 * m, n)
        order = np.argsort(rows, kind="stable")
        args = (nb.row_offsets(rows[order], 3 * m), order, krow, vals, dense, m, base, k)
    with pytest.raises(IndexError, match=f"{row}: (batch_base has|a batch base leaves)"):
        getattr(nb, row)(*args)
    out = getattr(H, row)(*args)
    with pytest.raises(IndexError, match="gather read outside"):
        check_device_errors()
    assert np.isfinite(out).all()  # (every output element written: zeros where a batch had no base)


@pytest.mark.parametrize("dtype", ACC_DTYPES)
@pytest.mark.parametrize("k", [0, 3, 8, 21, 64])
@pytest.mark.parametrize("sorted_rows", [False, True])
def test_sddmm_kernel(launched, dtype, k, sorted_rows):
    rng = np.random.default_rng(32)
    n, mrows, ncols = 200, 9, 11
    rows, cols = rng.integers(0, mrows, n), rng.integers(0, ncols, n)
    if sorted_rows:  # runs of one row (the CPU takes entries two at a time when k % 8 == 0)
        rows = np.sort(rows)
    x = _linalg_values(rng, (mrows, max(k, 1)), dtype)
    y = _linalg_values(rng, (max(k, 1), ncols), dtype)
    # unit strides (x rows, y^T rows) and strided reads (y's columns as they lie)
    yt = np.ascontiguousarray(y.T)
    for args in ((rows, x.shape[1], cols, yt.shape[1], x.reshape(-1), 1, yt.reshape(-1), 1, k),
                 (rows, x.shape[1], cols, 1, x.reshape(-1), 1, y.reshape(-1), ncols, k)):
        _same(H.sddmm(*args), nb.sddmm(*args))



@pytest.mark.parametrize("dtype", ACC_DTYPES)
@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (1, 1), (3, 200), (67, 9), (64, 64), (9, 1000), (259, 300)])
def test_dense_transpose(dtype, shape):
    """The tiled transpose (tiles of 8 x 64, ragged edges) is a.T exactly, on both layers,
    from C-ordered, Fortran-ordered and strided inputs; parts of several threads too (the last
    shape is over the size that NumPy's copy takes, so the tiles run)."""
    import numba

    rng = np.random.default_rng(36)
    a = _linalg_values(rng, (shape[0] * 2, shape[1] * 3), dtype)[::2, ::3]
    old = numba.get_num_threads()
    for src in (np.ascontiguousarray(a), np.asfortranarray(a), a):
        want = np.ascontiguousarray(src.T)
        for threads in (1, old):
            numba.set_num_threads(threads)
            try:
                got = nb.dense_transpose(src)
            finally:
                numba.set_num_threads(old)
            assert got.flags.c_contiguous
            _same(got, want)
        _same(H.dense_transpose(src), want)
        for layer in (nb, H):  # into a given array (reused scratch), whatever it held before
            out = np.full(want.shape, 7, dtype=want.dtype)
            got = layer.dense_transpose(src, out)
            _same(got, want)
            if layer is nb:  # (the emulated host layer copies its arguments to its device and back)
                assert got is out


@pytest.mark.parametrize("bad_at", [0, 1, 2, 6])
def test_sddmm_kernel_bad_column_in_a_run(launched, bad_at):
    """A bad column as the first or second entry of a pair (the CPU takes entries two at a time):
    refused on the CPU (IndexError), skipped (value 0) and reported on the GPU, every other value
    the same."""
    rng = np.random.default_rng(35)
    rows, cols = np.array([0, 0, 1, 1, 1, 2, 2]), np.array([1, 2, 0, 3, 2, 1, 3])  # 7: the last one alone
    cols[bad_at] = 9  # outside [0, 4)
    x, y = rng.random((3, 16)), rng.random((4, 16))
    args = (rows, 16, cols, 16, x.reshape(-1), 1, y.reshape(-1), 1, 16, 3, 4)
    with pytest.raises(IndexError):
        nb.sddmm(*args)
    got = H.sddmm(*args)
    with pytest.raises(IndexError):
        check_device_errors()
    want = np.einsum("ek,ek->e", x[rows], y[np.minimum(cols, 3)])
    want[bad_at] = 0
    np.testing.assert_allclose(got, want, rtol=1e-12)
    good = np.arange(7) != bad_at  # the valid entries alone: the CPU's bits
    args = (rows[good], 16, cols[good], 16, x.reshape(-1), 1, y.reshape(-1), 1, 16, 3, 4)
    _same(np.asarray(got)[good], nb.sddmm(*args))

@pytest.mark.parametrize("dtype", ACC_DTYPES)
@pytest.mark.parametrize("perms", [False, True])
def test_spgemm_kernel(launched, dtype, perms):
    rng = np.random.default_rng(33)
    na, nb_, nrows, kdim, ncols = 150, 120, 10, 12, 9
    ar, ac = rng.integers(0, nrows, na), rng.integers(0, kdim, na)
    br, bc = rng.integers(0, kdim, nb_), rng.integers(0, ncols, nb_)
    av, bv = _linalg_values(rng, na, dtype), _linalg_values(rng, nb_, dtype)
    if perms:
        ap, bp = np.argsort(ar, kind="stable"), np.argsort(br, kind="stable")
    else:
        order_a, order_b = np.argsort(ar, kind="stable"), np.argsort(br, kind="stable")
        ar, ac, av = ar[order_a], ac[order_a], av[order_a]
        br, bc, bv = br[order_b], bc[order_b], bv[order_b]
        ap = bp = None
    sa = ar if ap is None else ar[ap]
    starts = nb.segment_starts(sa)
    a_rows = sa[starts[:-1]]
    b_off = nb.row_offsets(br if bp is None else br[bp], kdim)
    args = (starts, a_rows, ap, ac, av, b_off, bp, bc, bv, ncols)
    (rc1, v1), (rc2, v2) = H.spgemm(*args), nb.spgemm(*args)
    _same(rc1, rc2)
    _same(v1, v2)
    args = (starts, None, ap, ac, av, b_off, bp, bc, bv, ncols)
    _same(H.spgemm(*args)[0], nb.spgemm(*args)[0])



@pytest.mark.parametrize("dtype", ACC_DTYPES)
@pytest.mark.parametrize("perms", [False, True])
def test_spgemm_kernel_very_sparse(launched, dtype, perms):
    """A very sparse product (a few products per row: written in one pass, then packed) with a few
    rows that reach a long row of B (sums of repeated columns): the CUDA layer's bits."""
    rng = np.random.default_rng(34)
    na, nrows, kdim, ncols = 400, 300, 200, 5000
    ar, ac = rng.integers(0, nrows, na), rng.integers(0, kdim, na)
    ac[:12] = 0  # B's row 0 is long: the rows of these entries have many products
    br = np.concatenate([np.zeros(40, np.int64), rng.integers(1, kdim, 300)])
    bc = np.concatenate([rng.integers(0, 60, 40), rng.integers(0, ncols, 300)])  # repeats: sums
    nb_ = br.shape[0]
    av, bv = _linalg_values(rng, na, dtype), _linalg_values(rng, nb_, dtype)
    ap, bp = np.argsort(ar, kind="stable"), np.argsort(br, kind="stable")
    if not perms:
        ar, ac, av, ap = ar[ap], ac[ap], av[ap], None
        br, bc, bv, bp = br[bp], bc[bp], bv[bp], None
    sa = ar if ap is None else ar[ap]
    starts = nb.segment_starts(sa)
    b_off = nb.row_offsets(br if bp is None else br[bp], kdim)
    for a_rows in (sa[starts[:-1]], None):
        args = (starts, a_rows, ap, ac, av, b_off, bp, bc, bv, ncols)
        (rc1, v1), (rc2, v2) = H.spgemm(*args), nb.spgemm(*args)
        _same(rc1, rc2)
        _same(v1, v2)

def test_every_kernel_is_launched(launched):
    # runs after the parity tests of this module (pytest keeps file order)
    if len(launched) < 3:
        pytest.skip("run together with the parity tests of this module")
    assert set(e for _, e in _sources.all_name_expressions()) - launched == set()


@pytest.mark.parametrize("dtype", [np.uint8, np.float64, np.complex128])
@pytest.mark.parametrize("n", [0, 1, 700, 40_000])
def test_counting_take_matches_numba(dtype, n):
    """The stable order of small keys: a counting/radix sort on Numba, sort_pairs + gathers on CUDA."""
    rng = np.random.default_rng(n)
    bound = 300
    keys = rng.integers(0, bound, n)
    second = np.sort(rng.integers(0, 1 << 20, n))  # a transpose's second row: in order
    values = _values(rng, (n, 2), dtype)
    for indices in (np.stack([keys, second]), np.stack([keys, second, keys])):  # packed and general paths
        expected = np.argsort(keys, kind="stable")
        got_nb = nb.counting_take(keys, bound, indices, values)
        got_h = H.counting_take(keys, bound, indices, values)
        np.testing.assert_array_equal(got_nb[0], np.searchsorted(keys[expected], np.arange(bound + 1)))
        np.testing.assert_array_equal(got_nb[1], indices[:, expected])
        np.testing.assert_array_equal(got_nb[2].view(np.uint8), values[expected].view(np.uint8))
        for a, b in zip(got_h, got_nb):
            np.testing.assert_array_equal(np.asarray(a).view(np.uint8), np.asarray(b).view(np.uint8))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64])
@pytest.mark.parametrize("bound, n, skew", [(300, 40_000, False), (5000, 1, False), (5000, 70_000, False),
                                            (131_073, 100_000, False), (70_000, 100_000, True),
                                            ((1 << 20) + 3, 60_000, False), (1 << 27, 50_000, False)])
def test_counting_take_of_a_transpose_matches_numba(dtype, bound, n, skew):
    """One value word per entry: the split sort (buckets by the key's high bits, each sorted in
    cache), its fallbacks (a bucket holding most keys; key spaces over 2**25) and CUDA agree."""
    rng = np.random.default_rng(bound + n)
    keys = rng.integers(0, bound, n)
    if skew:
        keys[rng.random(n) < 0.9] = 123  # one bucket holds most entries
    second = np.sort(rng.integers(0, 1 << 20, n))
    values = _values(rng, (n, 1), dtype)
    indices = np.stack([keys, second])
    expected = np.argsort(keys, kind="stable")
    got_nb = nb.counting_take(keys, bound, indices, values)
    np.testing.assert_array_equal(got_nb[0], np.searchsorted(keys[expected], np.arange(bound + 1)))
    np.testing.assert_array_equal(got_nb[1], indices[:, expected])
    np.testing.assert_array_equal(got_nb[2].view(np.uint8), values[expected].view(np.uint8))
    assert got_nb[2].dtype == values.dtype and got_nb[2].shape == (n, 1)
    if bound < 1 << 21:  # (CUDA's offsets: one per key)
        for a, b in zip(H.counting_take(keys, bound, indices, values), got_nb):
            np.testing.assert_array_equal(np.asarray(a).view(np.uint8), np.asarray(b).view(np.uint8))


@pytest.mark.parametrize("nthreads", [1, 2, 3])
def test_counting_take_split_in_parallel_parts(nthreads, monkeypatch):
    """Over 2**20 entries the split sort's passes run in parts (each bucket pass cut by entries)."""
    monkeypatch.setattr(nb, "_nthreads", lambda: nthreads)
    rng = np.random.default_rng(nthreads)
    n, bound = 1_200_000, 131_072
    keys = rng.integers(0, bound, n)
    keys[: n // 10] = rng.integers(0, 300, n // 10)  # uneven buckets: parts cut by entries, not buckets
    rng.shuffle(keys)
    indices = np.stack([keys, np.sort(rng.integers(0, 1 << 30, n))])
    values = rng.standard_normal((n, 1))
    expected = np.argsort(keys, kind="stable")
    offsets, idx, vals = nb.counting_take(keys, bound, indices, values)
    np.testing.assert_array_equal(offsets, np.searchsorted(keys[expected], np.arange(bound + 1)))
    np.testing.assert_array_equal(idx, indices[:, expected])
    np.testing.assert_array_equal(vals, values[expected])


def test_counting_take_split_refuses_keys_outside_the_bound_before_writing():
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 5000, 50_000)
    keys[-1] = 5000
    indices = np.stack([keys, np.arange(50_000)])
    with pytest.raises(IndexError, match="5000"):
        nb.counting_take(keys, 5000, indices, np.ones((50_000, 1)))


def test_counting_take_refuses_keys_outside_the_bound():
    keys = np.array([0, 5, 2], np.int64)
    indices = np.stack([keys, np.arange(3)])
    values = np.ones((3, 1))
    with pytest.raises(IndexError):
        nb.counting_take(keys, 4, indices, values)
    H.counting_take(keys, 4, indices, values)  # the GPU's way: reported, memory safe
    with pytest.raises(IndexError):
        check_device_errors()


def _tied_segments(rng, dtype, n):
    """``n`` values of ``dtype`` with many ties (NaN and -0.0 among floats) and up to 41 segments."""
    values = (rng.integers(-4, 5, n) * 1.5).astype(dtype)
    if values.dtype.kind == "f" and n:
        values[rng.random(n) < 0.1] = np.nan
        values[rng.random(n) < 0.05] = -0.0
    cuts = np.unique(np.concatenate([[0, n], rng.integers(0, n + 1, 40 if n else 0)]))
    return values, (cuts if n else np.array([0, 0]))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 300, 5000])
def test_sort_segments_and_lanes_match_numba(dtype, n):
    """Segments sorted stable with NaN last, and the lanes of a sort along the last axis: the Numba
    layer's merge sorts and the CUDA layer's stable argsorts give the same bits."""
    rng = np.random.default_rng(n + 1)
    values, offsets = _tied_segments(rng, dtype, n)
    got = nb.sort_segments(values, offsets)
    ref = np.concatenate([np.sort(values[a:b], kind="stable") for a, b in zip(offsets[:-1], offsets[1:])])
    assert got.tobytes() == ref.astype(dtype).tobytes()
    assert H.sort_segments(values, offsets).tobytes() == got.tobytes()
    lanes = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
    indices = np.stack([lanes, rng.integers(0, 9000, n)])
    for fill in (0, 1.5):
        a = nb.sort_lanes(values, offsets, indices, fill, 9000)
        b = H.sort_lanes(values, offsets, indices, fill, 9000)
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1].tobytes() == b[1].tobytes()


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 300, 5000])
def test_topk_lanes_match_numba(dtype, n):
    """The per-lane top-k positions: the Numba layer's selection (sorted buffer for k <= 16, a
    quickselect above) and the CUDA layer's stable argsorts agree, and match a sort per lane."""
    rng = np.random.default_rng(n + 7)
    values, offsets = _tied_segments(rng, dtype, n)
    length = int(np.diff(offsets).max(initial=0)) + 5
    fills = (0, 1.5, -3, np.nan) if values.dtype.kind == "f" else (0, 1, -3)
    for fill in fills:
        f = values.dtype.type(fill)
        for largest in (True, False):
            for k in (0, 1, 3, 16, 17, 60, length):
                want = []
                for lo, hi in zip(offsets[:-1], offsets[1:]):
                    v = values[lo:hi]
                    nan, fnan = np.isnan(v) if v.dtype.kind == "f" else np.zeros(v.shape, bool), np.isnan(f)
                    ne = ~((v == f) | (nan & fnan))
                    key = np.where(nan, np.inf, v.astype(np.float64))  # (-0.0 == 0.0; NaN largest)
                    fkey = np.inf if fnan else float(f)
                    elems = [(k_, i) for i, k_ in enumerate(key) if ne[i]] + [(fkey, None)] * (length - ne.sum())
                    elems.sort(key=lambda e: ((-e[0] if largest else e[0]), -1 if e[1] is None else e[1]))
                    # the fill's elements: equal to each other, so which of them rank first is moot
                    want += sorted(lo + i for _, i in elems[:k] if i is not None)
                a = nb.topk_lanes(values, offsets, fill, length, k, largest)
                b = H.topk_lanes(values, offsets, fill, length, k, largest)
                np.testing.assert_array_equal(a, want)
                np.testing.assert_array_equal(b, want)
