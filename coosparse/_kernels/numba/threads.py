"""Running nogil Numba kernels part by part on a few Python threads.

Every kernel of the Numba layer splits its work into ``nparts`` fixed parts
(chunks of entries, ranges of buckets, rows or segments) and runs part ``t``
as ``fn(t, nparts, ...)``. Plain ``@njit(nogil=True)`` kernels driven this
way compile several times faster than ``parallel=True`` ones (measured: about
2 s instead of about 10 s per value dtype for coalesce; 0.3 s instead of 2 s
for a merge's two passes), load without a Numba threading layer, and do not
spin between phases. Threads take the next part when they are free, so a
thread the OS delays does not hold the others up; which thread runs which part
never changes a result, because the parts themselves are fixed.

No kernel uses Numba's threading layer (``prange``), so a process forked at
any time (``multiprocessing`` fork pools, Dask, PyTorch DataLoader workers)
runs the kernels, whatever layer other code in the parent started: the child
only needs a fresh pool, made at its first parallel call.
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


def count():
    """The number of threads the kernels use: ``numba.get_num_threads()``.

    That call starts Numba's threading layer (a thread pool the kernels never
    use: they run on :func:`run_parts`), so it is made only once the layer has
    started anyway (a user's ``numba.set_num_threads`` starts it); until then
    the answer is Numba's default, ``NUMBA_NUM_THREADS``, which is what
    ``get_num_threads()`` would return.

    Every kernel call asks: the modules are looked up once (a ``from`` import runs
    importlib's Python code at each call: 30-70 us of a 3 ms SpMV with the caches cold).
    """
    numba, parallel = _numba_modules or _load_numba_modules()
    if getattr(parallel, "_is_initialized", True):
        return numba.get_num_threads()
    return max(1, int(numba.config.NUMBA_NUM_THREADS))


_numba_modules = None


def _load_numba_modules():
    global _numba_modules
    import numba  # loaded with the first kernel module, before any count is asked for
    from numba.np.ufunc import parallel

    _numba_modules = (numba, parallel)
    return _numba_modules


SERIAL_BELOW = 1 << 15
"""Work (entries, elements) below which a kernel runs as one part on the calling thread.

Waking the pool costs more than such work, and on a loaded machine a part
handed to another thread can wait for that thread to be scheduled."""


def plan(work, nthreads, serial_below=SERIAL_BELOW, per_thread=4):
    """(nparts, nthreads) for ``work``: one part on the calling thread below ``serial_below``,
    else ``per_thread`` parts per thread (a thread the OS delays is covered by the others)."""
    if work < serial_below or nthreads <= 1:
        return 1, 1
    return per_thread * nthreads, nthreads


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
