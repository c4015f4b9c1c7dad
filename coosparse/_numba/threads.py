"""Running nogil Numba kernels part by part on a few Python threads.

The coalesce kernels split their work into ``nparts`` fixed parts (chunks of
entries or ranges of buckets) and run part ``t`` as ``fn(t, nparts, ...)``.
Plain ``@njit(nogil=True)`` kernels driven this way compile several times
faster than ``parallel=True`` ones, load without a threading layer, and do not
spin between phases. Threads take the next part when they are free, so a
thread the OS delays does not hold the others up; which thread runs which part
never changes a result, because the parts themselves are fixed.
"""
import concurrent.futures
import itertools
import os
import threading

_lock = threading.Lock()
_pool = None
_pool_size = 0


def _get_pool(workers):
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size < workers:
            _pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="coosparse")
            _pool_size = workers
        return _pool


def _forget_pool_in_child():
    # a forked child has none of the parent's pool threads: start afresh
    global _pool, _pool_size, _lock
    _pool, _pool_size, _lock = None, 0, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_in_child)


def run_parts(fn, nparts, nthreads, *args):
    """Call ``fn(t, nparts, *args)`` for every t in range(nparts) on up to ``nthreads`` threads.

    The calling thread works too; the first exception raised propagates.
    """
    nthreads = max(1, min(nthreads, nparts))
    if nthreads == 1:
        for t in range(nparts):
            fn(t, nparts, *args)
        return
    counter = itertools.count()  # next() is atomic under the GIL

    def worker():
        while True:
            t = next(counter)
            if t >= nparts:
                return
            fn(t, nparts, *args)

    pool = _get_pool(nthreads - 1)
    futures = [pool.submit(worker) for _ in range(nthreads - 1)]
    try:
        worker()
    finally:
        for f in futures:
            # a helper that has not started (its thread serves another caller) is
            # not waited for: the parts are all taken by then
            if not f.cancel():
                f.result()
