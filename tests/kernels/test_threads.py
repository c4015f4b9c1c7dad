"""The part runner behind the coalesce kernels: every part once, any thread count."""
import os
import threading

import numpy as np
import pytest

import coosparse
from coosparse._kernels.numba.threads import run_parts


@pytest.mark.parametrize("nthreads", [1, 2, 5])
def test_every_part_runs_once(nthreads):
    seen = []
    lock = threading.Lock()

    def part(t, nparts, out):
        with lock:
            out.append((t, nparts))

    run_parts(part, 7, nthreads, seen)
    assert sorted(seen) == [(t, 7) for t in range(7)]


def test_exceptions_propagate():
    def part(t, nparts):
        if t == 3:
            raise RuntimeError("part 3")

    with pytest.raises(RuntimeError, match="part 3"):
        run_parts(part, 6, 2)


def test_concurrent_coalesce_from_threads_is_deterministic():
    a = coosparse.random((500, 700), nnz=100_000, duplicates=True, seed=4)
    want = a.coalesce()
    results = [None] * 4

    def go(i):
        results[i] = a.coalesce()

    threads = [threading.Thread(target=go, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        assert r.values.tobytes() == want.values.tobytes()
        np.testing.assert_array_equal(r.indices, want.indices)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_coalesce_after_fork():
    a = coosparse.random((500, 700), nnz=100_000, duplicates=True, seed=4)
    want = a.coalesce()  # the pool exists in the parent now
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: must not wait for the parent's pool threads
        ok = a.coalesce().values.tobytes() == want.values.tobytes()
        os.write(w, b"1" if ok else b"0")
        os._exit(0)
    os.close(w)
    got = os.read(r, 1)
    os.waitpid(pid, 0)
    assert got == b"1"
