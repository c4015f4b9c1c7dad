"""Host scratch memory reused across calls (coosparse/_kernels/scratch.py): buffers are lent to one
caller at a time, start on a cache line, are kept up to a bound, and never become part of a result
(coalesce's bucketed route uses them here; sampled_matmul in tests/ops/linalg/test_sddmm_scratch.py)."""
import threading

import numpy as np
import pytest

from coosparse._kernels.bounds import row_major_sizes, size_limits
from coosparse._kernels.numba import coalesce as nbco
from coosparse._kernels import scratch


@pytest.fixture
def pool(monkeypatch):
    """An empty pool that lends buffers from 1 KiB (the tests' inputs are small) up to 1 MiB."""
    monkeypatch.setattr(scratch, "MIN_BYTES", 1024)
    monkeypatch.setattr(scratch, "KEEP_BYTES", 1 << 20)
    scratch.clear()
    yield scratch
    scratch.clear()


def test_a_returned_buffer_is_lent_again(pool):
    a = pool.take((300, 4), np.float64)
    assert a.shape == (300, 4) and a.dtype == np.float64 and a.flags.c_contiguous
    assert a.ctypes.data % pool.ALIGN == 0  # on a cache line
    pool.give(a)
    assert pool.kept_bytes() == 9600 + pool.ALIGN
    b = pool.take(2400, np.uint32)  # 9,600 bytes again: the same memory
    assert np.shares_memory(a, b) and pool.kept_bytes() == 0 and b.ctypes.data % pool.ALIGN == 0
    c = pool.take(2400, np.uint32)  # the kept one is lent out: a buffer of its own
    assert not np.shares_memory(b, c)
    pool.give(b, c)
    pool.give(b)  # given twice: kept once
    assert pool.kept_bytes() == 2 * (9600 + pool.ALIGN)
    d = pool.take((3, 10, 40), np.complex128)  # larger than either: a new one, both kept ones stay
    assert d.nbytes == 19200 and not np.shares_memory(d, b) and not np.shares_memory(d, c)
    pool.clear()
    assert pool.kept_bytes() == 0
    assert pool.take((0, 5), np.float64).shape == (0, 5)


def test_sizes_outside_the_bounds_are_plain_arrays(pool):
    small, large = pool.take(10, np.int64), pool.take((1 << 20) + 8, np.uint8)
    edge = pool.take((1 << 20) - pool.ALIGN, np.uint8)  # with its alignment room exactly KEEP_BYTES: kept
    pool.give(small, large, np.empty(5000), np.empty(5000, np.uint8))  # not the pool's: ignored
    assert pool.kept_bytes() == 0
    pool.give(edge)
    assert pool.kept_bytes() == 1 << 20


def test_a_much_larger_buffer_is_left_for_a_larger_request(pool):
    big = pool.take(100_000, np.uint8)
    pool.give(big)
    small = pool.take(2000, np.uint8)
    assert not np.shares_memory(big, small) and pool.kept_bytes() == 100_000 + pool.ALIGN


def test_kept_bytes_are_bounded(pool):
    bufs = [pool.take(300_000, np.uint8) for _ in range(5)]
    pool.give(*bufs)
    assert pool.kept_bytes() <= 1 << 20 and pool.kept_bytes() == 3 * (300_000 + pool.ALIGN)


def _strides(shape):
    strides, s = [], 1
    for size in reversed(shape):
        strides.append(s)
        s *= size
    return np.array(strides[::-1], dtype=np.int64), s


def _bucketed(idx, vals, shape, nthreads=2):
    strides, bound = _strides(shape)
    return nbco.coalesce_bucketed(idx, strides, bound, vals, nthreads, size_limits(row_major_sizes(strides, bound)))


def _reference(idx, vals, shape):
    keys = np.ravel_multi_index(tuple(idx), shape)
    order = np.argsort(keys, kind="stable")
    uniq, first = np.unique(keys[order], return_index=True)
    sums = np.zeros((uniq.size,) + vals.shape[1:], dtype=vals.dtype)
    np.add.at(sums, np.repeat(np.arange(uniq.size), np.diff(np.append(first, keys.size))), vals[order])
    return np.array(np.unravel_index(uniq, shape), dtype=np.int64), sums


@pytest.mark.parametrize("k", [1, 8])
def test_coalesce_results_never_share_the_scratch(pool, k):
    rng = np.random.default_rng(k)
    shape = (500, 400)
    inputs = [(rng.integers(0, 500, (2, 40_000)) % np.array([[500], [400]]), rng.standard_normal((40_000, k)))
              for _ in range(3)]
    results = [_bucketed(idx, vals, shape) for idx, vals in inputs]  # later calls reuse the scratch
    assert pool.kept_bytes() > 0
    for (idx, vals), (got_idx, got_vals) in zip(inputs, results):
        want_idx, want_vals = _reference(idx, vals, shape)
        np.testing.assert_array_equal(got_idx, want_idx)
        assert got_vals.tobytes() == want_vals.tobytes()


def test_coalesce_from_threads_at_once(pool):
    rng = np.random.default_rng(5)
    shape = (300, 300)
    inputs = [(rng.integers(0, 300, (2, 30_000)), rng.standard_normal((30_000, 1))) for _ in range(4)]
    wants = [_reference(idx, vals, shape) for idx, vals in inputs]
    errors = []

    def work(i):
        try:
            for _ in range(5):
                got_idx, got_vals = _bucketed(*inputs[i], shape, nthreads=1)
                np.testing.assert_array_equal(got_idx, wants[i][0])
                assert got_vals.tobytes() == wants[i][1].tobytes()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_a_forked_child_starts_with_an_empty_pool(pool):
    import os
    if not hasattr(os, "fork"):
        pytest.skip("no fork")
    pool.give(pool.take(5000, np.uint8))
    assert pool.kept_bytes() == 5000 + pool.ALIGN
    pid = os.fork()
    if pid == 0:  # the child: exit status 0 when its pool is empty and usable
        ok = pool.kept_bytes() == 0 and pool.take(5000, np.uint8).nbytes == 5000
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert pool.kept_bytes() == 5000 + pool.ALIGN
