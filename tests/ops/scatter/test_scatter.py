"""as_strided_scatter (SPEC 5) against a slow pure-Python reference."""
import itertools
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import coosparse
from coosparse._kernels.numba.scatter import PARALLEL_MIN
from coosparse.ops.scatter import view_may_overlap
from strategies import full_range_values as random_values

DTYPES = coosparse.SUPPORTED_DTYPES


def reference(x, src, size, stride, offset):
    """Loop over src in C order on a C-contiguous copy of x (raises IndexError out of range)."""
    out = np.array(x, order="C", copy=True).reshape(-1)
    for i in itertools.product(*[range(n) for n in size]):
        a = offset + sum(k * s for k, s in zip(i, stride))
        if not 0 <= a < out.size:
            raise IndexError(a)
        out[a] = src[i]
    return out.reshape(np.shape(x))


def random_input(rng, dtype):
    """A small input with random shape and layout: C, F, sliced, negative strides or 0-d."""
    kind = rng.integers(0, 5)
    if kind == 0:
        return random_values(rng, (), dtype)
    shape = tuple(int(n) for n in rng.integers(1, 9, size=rng.integers(1, 4)))
    x = random_values(rng, shape, dtype)
    if kind == 1:
        return np.asfortranarray(x)
    if kind == 2:
        big = random_values(rng, tuple(2 * n for n in shape), dtype)
        return big[tuple(slice(None, None, 2) for _ in shape)]
    if kind == 3:
        return x[tuple(slice(None, None, -1) for _ in shape)]
    return x


def random_view(rng, n_out, overlap):
    d = int(rng.integers(1, 5))
    size = tuple(int(n) for n in rng.integers(0 if rng.random() < 0.1 else 1, 4, size=d))
    if overlap:
        stride = tuple(int(s) for s in rng.integers(-3, 4, size=d))
    else:  # build a non-overlapping view: each stride beyond the span of the smaller ones
        order = rng.permutation(d)
        stride = [0] * d
        span = 0
        for k in order:
            s = span + 1 + int(rng.integers(0, 3))
            stride[k] = s * (1 if rng.random() < 0.7 else -1)
            span += (size[k] - 1) * s if size[k] else 0
        stride = tuple(stride)
    lo = sum((n - 1) * s for n, s in zip(size, stride) if s < 0 and n)
    hi = sum((n - 1) * s for n, s in zip(size, stride) if s > 0 and n)
    if rng.random() < 0.85 and -lo <= n_out - 1 - hi:  # mostly in range, sometimes not
        offset = int(rng.integers(-lo, n_out - hi))
    else:
        offset = int(rng.integers(0, max(n_out, 1) + 1))
    return size, stride, offset


def check_against_reference(backend, x, src, size, stride, offset):
    keep = x.copy()
    try:
        want = reference(x, src, size, stride, offset)
    except IndexError:
        with pytest.raises(IndexError):
            coosparse.as_strided_scatter(backend.put(x), backend.put(src), size, stride, offset)
        np.testing.assert_array_equal(x, keep)
        return False
    got = backend.get(coosparse.as_strided_scatter(backend.put(x), backend.put(src), size, stride, offset))
    assert got.flags.c_contiguous and got.dtype == x.dtype and got.shape == x.shape
    assert not np.shares_memory(got, x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(x, keep)  # input never modified
    return True


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("overlap", [False, True], ids=["disjoint", "overlapping"])
def test_matches_reference(backend, dtype, overlap):
    rng = np.random.default_rng(zlib.crc32(f"{np.dtype(dtype)} {overlap}".encode()))  # not the per-process str hash
    done = 0
    for _ in range(40):
        x = random_input(rng, dtype)
        size, stride, offset = random_view(rng, x.size, overlap)
        src = random_values(rng, size, dtype)
        if rng.random() < 0.3 and src.ndim:  # non-contiguous src
            src = random_values(rng, size + (2,), dtype)[..., 1]
        done += check_against_reference(backend, x, src, size, stride, offset)
    assert done >= 10  # most random views are in range


@given(
    shape=st.lists(st.integers(1, 5), min_size=0, max_size=3),
    size=st.lists(st.integers(0, 4), min_size=0, max_size=4),
    data=st.data(),
)
def test_hypothesis_views(backend, shape, size, data):
    x = np.arange(np.prod(shape, dtype=int), dtype=np.float64).reshape(shape)
    stride = data.draw(st.lists(st.integers(-6, 6), min_size=len(size), max_size=len(size)))
    offset = data.draw(st.integers(0, max(x.size - 1, 0)))
    src = -1.0 - np.arange(np.prod(size, dtype=int), dtype=np.float64).reshape(size)
    check_against_reference(backend, x, src, tuple(size), tuple(stride), offset)


def test_overlap_last_writer_in_c_order_wins(backend):
    x = np.zeros(5)
    src = np.arange(1.0, 7.0).reshape(2, 3)
    got = backend.get(coosparse.as_strided_scatter(backend.put(x), backend.put(src), (2, 3), (1, 1), 0))
    # address j gets the last src element with i0 + i1 == j
    np.testing.assert_array_equal(got, [1.0, 4.0, 5.0, 6.0, 0.0])
    got = backend.get(coosparse.as_strided_scatter(backend.put(x), backend.put(np.arange(4.0)), (4,), (0,), 2))
    np.testing.assert_array_equal(got, [0, 0, 3, 0, 0])


@pytest.mark.parametrize("size,stride", [((3, 3), (2, 3)), ((2, 2), (3, 2)), ((4, 3), (-3, -1))])
def test_disjoint_but_not_provably_so(backend, size, stride):
    # the test is sufficient, not exact: these views take the ordered path and stay correct
    x = np.zeros(40)
    src = np.arange(1.0, 1.0 + np.prod(size)).reshape(size)
    offset = 11
    got = backend.get(coosparse.as_strided_scatter(backend.put(x), backend.put(src), size, stride, offset))
    np.testing.assert_array_equal(got, reference(x, src, size, stride, offset))


def test_overlap_test_is_sound():
    rng = np.random.default_rng(1)
    for _ in range(300):
        d = int(rng.integers(1, 4))
        size = tuple(int(n) for n in rng.integers(1, 5, size=d))
        stride = tuple(int(s) for s in rng.integers(-9, 10, size=d))
        addresses = [sum(i * s for i, s in zip(ix, stride)) for ix in itertools.product(*map(range, size))]
        if not view_may_overlap(size, stride):
            assert len(set(addresses)) == len(addresses), (size, stride)
        if len(set(addresses)) < len(addresses):
            assert view_may_overlap(size, stride)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128, np.bool_], ids=str)
@pytest.mark.parametrize("layout", ["C", "F", "reversed"])
def test_large_views_use_every_thread(backend, dtype, layout):
    # above PARALLEL_MIN the fused kernel splits the output between threads
    rng = np.random.default_rng(2)
    x = random_values(rng, (300, 400), dtype)
    x = {"C": x, "F": np.asfortranarray(x), "reversed": x[::-1, ::-1]}[layout]
    cases = [((60000,), (2,), 1), ((150, 133), (800, 3), 5), ((100, 100, 3), (1200, 11, -1), 2),
             ((40000,), (3,), 0), ((20, 1000), (5000, 1), 17)]
    for size, stride, offset in cases:
        src = random_values(rng, size, dtype)
        assert src.size >= PARALLEL_MIN // 2
        want = np.array(x, order="C", copy=True)
        view = np.lib.stride_tricks.as_strided(
            want.reshape(-1)[offset:], size, [s * want.itemsize for s in stride]
        ) if min(stride) > 0 else None
        if view is not None:
            view[...] = src
        else:
            want = reference(x, src, size, stride, offset)
        got = backend.get(coosparse.as_strided_scatter(backend.put(x), backend.put(src), size, stride, offset))
        np.testing.assert_array_equal(got, want)


def test_zero_size_and_zero_d(backend):
    x = np.arange(6.0).reshape(2, 3)
    # an empty view writes nothing, whatever its strides and offset
    got = backend.get(coosparse.as_strided_scatter(backend.put(x), backend.put(np.zeros((0, 4))), (0, 4), (100, 7), 3))
    np.testing.assert_array_equal(got, x)
    assert not np.shares_memory(got, x)
    empty = np.zeros((0, 3))
    got = backend.get(coosparse.as_strided_scatter(backend.put(empty), backend.put(np.zeros(0)), (0,), (1,), 0))
    assert got.shape == (0, 3)
    with pytest.raises(IndexError):
        coosparse.as_strided_scatter(empty, np.zeros(1), (1,), (1,), 0)
    s = np.array(4.0)
    got = backend.get(coosparse.as_strided_scatter(backend.put(s), backend.put(np.array(9.0)), (), (), 0))
    assert got.shape == () and got == 9.0 and s == 4.0
    got = backend.get(coosparse.as_strided_scatter(backend.put(x), backend.put(np.array(9.0)), (), (), 4))
    np.testing.assert_array_equal(got.reshape(-1), [0, 1, 2, 3, 9, 5])


def test_errors_before_any_write():
    x = np.arange(10.0)
    keep = x.copy()
    with pytest.raises(IndexError, match=r"dimension 0 alone reaches \+10"):
        coosparse.as_strided_scatter(x, np.zeros(6), (6,), (2,), 0)
    with pytest.raises(IndexError, match="outside the 10 elements"):
        coosparse.as_strided_scatter(x, np.zeros(3), (3,), (-1,), 1)
    with pytest.raises(IndexError):
        coosparse.as_strided_scatter(x, np.zeros(1), (1,), (1,), 10)
    with pytest.raises(ValueError, match="src has shape"):
        coosparse.as_strided_scatter(x, np.zeros(4), (2, 2), (2, 1), 0)
    with pytest.raises(ValueError, match="same length"):
        coosparse.as_strided_scatter(x, np.zeros(2), (2,), (1, 1), 0)
    with pytest.raises(ValueError, match="non-negative"):
        coosparse.as_strided_scatter(x, np.zeros(0), (-1,), (1,), 0)
    with pytest.raises(ValueError, match="storage_offset"):
        coosparse.as_strided_scatter(x, np.zeros(2), (2,), (1,), -1)
    with pytest.raises(TypeError, match="cast safely"):
        coosparse.as_strided_scatter(x.astype(np.float32), np.zeros(2), (2,), (1,), 0)
    with pytest.raises(TypeError, match="not supported"):
        coosparse.as_strided_scatter(x.astype("U1"), np.zeros(2), (2,), (1,), 0)
    with pytest.raises(TypeError, match="sequence of integers"):
        coosparse.as_strided_scatter(x, np.zeros(2), (2.5,), (1,), 0)
    np.testing.assert_array_equal(x, keep)


def test_huge_strides_of_unit_dims_and_huge_extents():
    x = np.zeros(6)
    got = coosparse.as_strided_scatter(x, np.ones((1, 2, 1)), (1, 2, 1), (2**70, 3, -(2**80)), 1)
    np.testing.assert_array_equal(got, [0, 1, 0, 0, 1, 0])
    with pytest.raises(IndexError):
        coosparse.as_strided_scatter(x, np.ones((2, 2)), (2, 2), (2**62, 2**62), 0)
    with pytest.raises(IndexError):
        coosparse.as_strided_scatter(x, np.ones(2), (2,), (1,), 2**64)


def test_src_casting_and_python_values():
    x = np.zeros(4, dtype=np.float64)
    got = coosparse.as_strided_scatter(x, np.array([1, 2], dtype=np.int32), (2,), (2,), 0)
    np.testing.assert_array_equal(got, [1, 0, 2, 0])
    got = coosparse.as_strided_scatter(x, [5, 6], (2,), (1,), 2)
    np.testing.assert_array_equal(got, [0, 0, 5, 6])
    h = coosparse.as_strided_scatter(np.zeros(3, np.float16), np.array([1.5], np.float16), (1,), (1,), 1)
    assert h.dtype == np.float16 and h[1] == 1.5


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_sorted_kernel_parallel_copy_mode(threads):
    # the public layer runs the copy mode serially below 8 MiB of output, split by output range
    # above it (first touch by the writing threads, docs/strided-scatter.md);
    # the parallel split by output range is the kernel-API contract the CUDA layer mirrors
    from coosparse._kernels.numba import scatter as sc

    rng = np.random.default_rng(threads)
    x = rng.integers(0, 2**32, size=3 * PARALLEL_MIN + 7, dtype=np.uint64).astype(np.uint32)
    for size, stride, offset in [((PARALLEL_MIN,), (3,), 5), ((97, 300), (1000, 3), 11), ((0,), (1,), 0)]:
        src = rng.integers(0, 2**32, size=size, dtype=np.uint64).astype(np.uint32)
        out = np.zeros_like(x)
        sz, st = np.array(size, np.int64), np.array(stride, np.int64)
        ss = np.array(np.ones(len(size)) if not src.ndim else np.array(src.strides) // 4, np.int64)
        sc.strided_scatter_sorted(out, x, src.reshape(-1), 0, offset, sz, st, ss, True, threads)
        want = x.copy()
        if src.size:
            np.lib.stride_tricks.as_strided(want[offset:], size, [s * 4 for s in stride])[...] = src
        np.testing.assert_array_equal(out, want)
