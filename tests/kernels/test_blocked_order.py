"""The blocked order of the reductions (docs/design/determinism.md, "Reductions"), on every layer.

A segment of at most 256 entries is reduced left to right; a longer one as a
fixed tree: pieces of 256 entries, then groups of 32 values, each left to
right, until one value remains. The reference below builds that tree with
NumPy's ``accumulate`` (strictly left to right); the Numba layer and the
emulated CUDA layer (many threads, the last of each group combining it) must
give its bits exactly, for every op and dtype, around every boundary of the
tree. Integer sums and products and min/max must equal the plain
left-to-right reduction.
"""
import zlib

import numpy as np
import pytest

import coosparse

emulated = pytest.importorskip("coosparse._kernels.cuda.emulated")
if not emulated.available():
    pytest.skip(f"emulated CUDA layer unavailable: {emulated._build_error}", allow_module_level=True)

from coosparse._kernels.cuda import emulated_host as H  # noqa: E402
from coosparse._kernels.cuda import reduce as cuda_reduce  # noqa: E402
from coosparse._kernels.numba import layer as nb  # noqa: E402
from coosparse._kernels.numba import reduce as numba_reduce  # noqa: E402

LEAF, FAN = 256, 32
# one piece, one piece exactly, two pieces, one level of groups, a full group of 32 pieces and one
# more (two levels), three levels
LENGTHS = [1, 2, 255, 256, 257, 600, LEAF * FAN, LEAF * FAN + 1, LEAF * FAN * 3 + 77, LEAF * FAN * FAN + 300]


def test_constants_agree():
    assert numba_reduce.TREE_LEAF == cuda_reduce.TREE_LEAF == LEAF
    assert numba_reduce.TREE_FAN == cuda_reduce.TREE_FAN == FAN
    with open(emulated.sources.source_path("reduce.cu")) as f:
        text = f.read()
    assert f"#define COO_TREE_LEAF {LEAF}" in text and f"#define COO_TREE_FAN {FAN}" in text


def _seq(x, op):
    """Left to right: the last element of NumPy's accumulate (each step rounded in x's dtype)."""
    if op == "sum":
        return np.add.accumulate(x)[-1]
    if op == "prod":
        return np.multiply.accumulate(x)[-1]
    out = x[0]
    for v in x[1:]:
        if out == out and (v != v or (v > out if op == "max" else v < out)):
            out = v
    return out


def tree_reference(x, op):
    """The blocked order, written out: pieces of LEAF, then groups of FAN, each left to right."""
    if len(x) <= LEAF:
        return _seq(x, op)
    level = np.array([_seq(x[a:a + LEAF], op) for a in range(0, len(x), LEAF)], dtype=x.dtype)
    while len(level) > 1:
        level = np.array([_seq(level[a:a + FAN], op) for a in range(0, len(level), FAN)], dtype=x.dtype)
    return level[0]


def _data(rng, dtype, n, k):
    dt = np.dtype(dtype)
    if dt.kind == "i":
        return rng.integers(-(2**62), 2**62, (n, k)).astype(dt)
    v = rng.standard_normal((n, k)) * 0.5 + 1.0  # products near 1: neither vanish nor overflow soon
    if dt.kind == "c":
        v = v + 1j * rng.standard_normal((n, k)) * 1e-3
    return v.astype(dt)


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))


CASES = [("sum", np.int64), ("sum", np.float32), ("sum", np.float64), ("prod", np.int64), ("prod", np.float32),
         ("prod", np.float64), ("prod", np.complex64), ("prod", np.complex128), ("max", np.int64), ("max", np.float32),
         ("max", np.float64), ("min", np.int64), ("min", np.float32), ("min", np.float64)]


@pytest.mark.parametrize("op,dtype", CASES, ids=[f"{o}-{np.dtype(d).name}" for o, d in CASES])
@pytest.mark.parametrize("with_perm", [False, True])
def test_segment_reduce_follows_the_tree(op, dtype, with_perm):
    rng = np.random.default_rng(zlib.crc32(f"{op} {np.dtype(dtype).name} {with_perm}".encode()))
    lengths = LENGTHS if dtype in (np.float32, np.float64) and not with_perm else LENGTHS[:-1]
    starts = np.concatenate([[0], np.cumsum(rng.permutation(lengths))]).astype(np.int64)
    n = int(starts[-1])
    vals = _data(rng, dtype, n, 2)
    if np.dtype(dtype).kind == "f" and op in ("max", "min"):
        vals[rng.random(vals.shape) < 0.0005] = np.nan
    perm = rng.permutation(n).astype(np.int64) if with_perm else None
    a = nb.segment_reduce(vals, perm, starts, op)
    b = H.segment_reduce(vals, perm, starts, op)
    _same(a, b)
    ordered = vals if perm is None else vals[perm]
    for s in range(len(starts) - 1):
        for c in range(2):
            x = ordered[starts[s]:starts[s + 1], c]
            want = tree_reference(x, op)
            if np.dtype(dtype).kind == "c":  # (NumPy's complex product may fuse; the layers' bits agree above)
                np.testing.assert_allclose(a[s, c], want, rtol=1e-5)
                continue
            assert a[s, c].tobytes() == np.asarray(want, dtype=vals.dtype).tobytes(), (op, s, len(x))
            if np.dtype(dtype).kind == "i" or op in ("max", "min"):  # any grouping: left to right
                assert a[s, c].tobytes() == np.asarray(_seq(x, op), dtype=vals.dtype).tobytes()


ONE_D = [("sum", np.float64), ("sum", np.float32), ("sum", np.int64), ("prod", np.float64), ("prod", np.float32)]


@pytest.mark.parametrize("op,dtype", ONE_D, ids=[f"{o}-{np.dtype(d).name}" for o, d in ONE_D])
@pytest.mark.parametrize("nthreads", [1, 2])
def test_one_value_per_entry_long_segments_follow_the_tree(op, dtype, nthreads):
    """One value per entry, no permutation, a large input: the long segments are reduced by their
    own kernel (pieces four at a time, every tail length), the short ones left to right; both
    layers give the tree's bits."""
    rng = np.random.default_rng(zlib.crc32(f"1-D {op} {np.dtype(dtype).name}".encode()))
    lengths = LENGTHS[:-1] + [LEAF * 4, LEAF * 4 + 1, LEAF * 7 + 3, LEAF * 8 - 1] + list(rng.integers(1, 40, 3000))
    starts = np.concatenate([[0], np.cumsum(rng.permutation(lengths))]).astype(np.int64)
    n = int(starts[-1])
    assert n >= numba_reduce._LARGE_1D
    vals = _data(rng, dtype, n, 1)
    a = numba_reduce.segment_reduce(vals, starts[:0], False, starts, op, nthreads)
    _same(a, H.segment_reduce(vals, None, starts, op))
    for s in range(len(starts) - 1):
        x = vals[starts[s]:starts[s + 1], 0]
        want = np.asarray(tree_reference(x, op), dtype=vals.dtype)
        assert a[s, 0].tobytes() == want.tobytes(), (op, s, len(x))


def test_float_sums_of_long_segments_differ_from_left_to_right():
    # the tree is not the left-to-right sum (the test above could otherwise pass by chance)
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(LEAF * 40) * 1e3).astype(np.float32)
    starts = np.array([0, x.shape[0]], np.int64)
    got = nb.segment_reduce(x.reshape(-1, 1), None, starts, "sum")[0, 0]
    assert got == tree_reference(x, "sum")
    assert got != np.add.accumulate(x)[-1]


def test_segment_sum_keeps_coalesces_order():
    # coalesce sums duplicates left to right (SPEC 3): segment_sum is not blocked
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((LEAF * 40, 1)) * 1e3).astype(np.float32)
    starts = np.array([0, x.shape[0]], np.int64)
    for layer in (nb, H):
        assert layer.segment_sum(x, None, starts)[0, 0] == np.add.accumulate(x[:, 0])[-1]


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128, np.int64])
def test_fused_rows_follow_the_tree(op, dtype):
    if np.dtype(dtype).kind == "c" and op != "prod":
        return
    rng = np.random.default_rng(7)
    n, bound = 40_000, 6  # runs of ~6700 entries: pieces and one level of groups
    keys = rng.integers(0, bound, n).astype(np.int64)
    keys[:300] = bound + 2  # and one short run
    vals = _data(rng, dtype, n, 2)
    skeys = np.sort(keys, kind="stable")
    order = np.argsort(keys, kind="stable")
    starts = nb.segment_starts(skeys)
    want = nb.segment_reduce(vals, order.astype(np.int64), starts, op)
    for layer in (nb, H):
        st, out = layer.reduce_sorted(skeys, vals[order], op)
        _same(st, starts)
        _same(out, want)
        for ks, is_sorted, v in ((keys, False, vals), (skeys, True, vals[order])):
            counts, table = layer.reduce_by_key(ks, v, bound + 3, op, is_sorted)
            present = np.flatnonzero(counts)
            _same(table[present], want)


@pytest.mark.parametrize("backend_name", ["numba", "cuda-emulated"])
def test_public_reductions_over_every_axis_follow_the_tree(backend_name):
    import emulation as strict

    rng = np.random.default_rng(8)
    n = LEAF * FAN * 2 + 5
    a = coosparse.COO(np.stack([rng.integers(0, 1000, n), rng.integers(0, 1000, n)]),
                      rng.standard_normal(n).astype(np.float32), (1000, 1000))
    want = tree_reference(a.values, "sum")
    cols = np.zeros(1000, np.float32)
    for j in np.unique(a.indices[1]):
        cols[j] = tree_reference(a.values[a.indices[1] == j], "sum")
    if backend_name == "cuda-emulated":
        with strict.allow_transfers():
            d = strict.to_device(a)
            got = strict.to_host(coosparse.sum(d))
            by_col = strict.to_host(coosparse.sum(d, axis=0))
    else:
        got, by_col = coosparse.sum(a), coosparse.sum(a, axis=0)
    assert np.asarray(got.values).tobytes() == np.asarray([want], np.float32).tobytes()
    _same(np.asarray(by_col.to_dense()), cols)


@pytest.mark.parametrize("fn", ["argmax", "argmin"])
def test_arg_extremes_of_long_segments(fn):
    # segment_arg's long segments go through the tree on the GPU: the same first occurrence as a
    # left-to-right visit, and NumPy's answer on the dense array
    import emulation as strict

    rng = np.random.default_rng(9)
    n = LEAF * FAN + 700
    keys = np.sort(rng.choice(200 * 300, n, replace=False))
    vals = np.round(rng.standard_normal(n), 1)  # many ties: the first occurrence must win
    a = coosparse.COO(np.stack(np.unravel_index(keys, (200, 300))), vals, (200, 300), sorted=True, unique=True)
    want_flat = getattr(np, fn)(a.to_dense())
    want_col = getattr(np, fn)(a.to_dense(), axis=0)
    with strict.allow_transfers():
        d = strict.to_device(a)
        got_flat = int(getattr(coosparse, fn)(d))
        got_col = strict.to_host(getattr(coosparse, fn)(d, axis=0)).to_dense()
    assert got_flat == want_flat == int(getattr(coosparse, fn)(a))
    np.testing.assert_array_equal(got_col, want_col)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])  # (the kernel dtypes of min / max)
@pytest.mark.parametrize("k", [1, 3])
def test_extremes_by_key_in_stored_order(op, dtype, k):
    # the unsorted route's table: each key's entries met in stored order, the first NaN (payload
    # kept) and the first of equal extremes (-0.0 beside 0.0) winning, as the segment kernel that
    # visits a stable sort's runs left to right; values in columns of a wider array (not contiguous)
    rng = np.random.default_rng(11)
    n, bound = 30_000, 700
    keys = rng.integers(0, bound, n).astype(np.int64)
    keys[keys == 5] = 6  # a key no entry holds
    dt = np.dtype(dtype)
    if dt.kind == "f":
        wide = rng.choice(np.array([-0.0, 0.0, 1.5, -1.5, 3.0, -3.0, np.inf, -np.inf], dt), (n, 2 * k))
        zeros = keys < bound // 2  # these keys hold only zeros of both signs: their extreme is a tie
        wide[zeros] = rng.choice(np.array([-0.0, 0.0], dt), (zeros.sum(), 2 * k))
        bits = wide.view(np.uint32 if dt.itemsize == 4 else np.uint64)
        nan = rng.random((n, 2 * k)) < 0.002
        bits[nan] = (np.uint32(0x7FC00000) if dt.itemsize == 4 else np.uint64(0x7FF8000000000000)) + \
            rng.integers(1, 1000, nan.sum()).astype(bits.dtype)  # NaNs of distinct payloads
    else:
        info = np.iinfo(dt)
        wide = rng.integers(info.min, info.max, (n, 2 * k), endpoint=True).astype(dt)
    vals = wide[:, ::2]
    order = np.argsort(keys, kind="stable")
    skeys = keys[order]
    starts = nb.segment_starts(skeys)
    want = nb.segment_minmax(np.ascontiguousarray(vals), order.astype(np.int64), starts, op == "max")
    for layer in (nb, H):
        counts, table = layer.reduce_by_key(keys, vals, bound, op, False)
        present = np.flatnonzero(counts)
        _same(present, np.unique(keys))
        _same(counts[present], np.diff(starts))
        _same(table[present], want)
        assert not table[counts == 0].any()
