"""Running one nogil Numba kernel per thread from Python threads.

The coalesce kernels split their work into ``nthreads`` fixed parts (chunks of
entries or ranges of buckets) and run part ``t`` as ``fn(t, nthreads, ...)``.
Plain ``@njit(nogil=True)`` kernels driven this way compile several times
faster than ``parallel=True`` ones, load without a threading layer, and do not
spin between phases. Which thread runs which part never changes a result.
"""
import concurrent.futures
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


def run_parts(fn, nthreads, *args):
    """Call ``fn(t, nthreads, *args)`` for every t in range(nthreads), concurrently.

    Part 0 runs on the calling thread; exceptions propagate (the first one raised).
    """
    if nthreads <= 1:
        fn(0, 1, *args)
        return
    pool = _get_pool(nthreads - 1)
    futures = [pool.submit(fn, t, nthreads, *args) for t in range(1, nthreads)]
    try:
        fn(0, nthreads, *args)
    finally:
        for f in futures:
            f.result()
