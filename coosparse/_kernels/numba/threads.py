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
import ctypes
import itertools
import os
import sys
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


# set in a forked child whose parent had started GNU OpenMP (Numba's "omp" layer): any
# parallel kernel would make Numba terminate the child, so backend_for raises instead
fork_unsafe_layer = None


def _forget_pool_in_child():
    # a forked child has none of the parent's pool threads: start afresh
    global _pool, _pool_size, _lock, fork_unsafe_layer
    _pool, _pool_size, _lock = None, 0, threading.Lock()
    parallel = sys.modules.get("numba.np.ufunc.parallel")
    if parallel is not None and getattr(parallel, "_threading_layer", None) == "omp" and sys.platform == "linux":
        fork_unsafe_layer = "omp"


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_in_child)


# ---- fork safety: the threading layer of the prange kernels ------------------------------
def _tbb_loadable():
    """True when Numba's TBB layer can load; makes a pip-installed ``tbb`` findable first.

    The ``tbb`` wheel puts ``libtbb.so.12`` in ``<prefix>/lib``, which the dynamic
    loader does not search in a virtual environment; loading it once by path makes
    Numba's own ``CDLL("libtbb.so.12")`` find it.
    """
    from numba.np.ufunc import parallel

    def compatible():
        try:
            parallel._check_tbb_version_compatible()
            from numba.np.ufunc import tbbpool  # noqa: F401
        except Exception:  # missing, too old, or a private API that moved
            return False
        return True

    if compatible():
        return True
    if not sys.platform.startswith("linux"):
        return False
    import site

    for base in (sys.prefix, getattr(site, "USER_BASE", None) or "", sys.base_prefix):
        path = os.path.join(base, "lib", "libtbb.so.12")
        if os.path.exists(path):
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError:
                continue
            return compatible()
    return False


def configure_threading_layer():
    """Pick a fork-safe and thread-safe Numba threading layer (TBB) for the prange kernels.

    Called once, when the Numba kernel layer is first imported. Numba's default
    on Linux is GNU OpenMP, under which a child forked after a parallel kernel
    ran is terminated by its first parallel kernel (``multiprocessing`` fork
    pools, Dask, PyTorch DataLoader workers). TBB is both fork-safe and
    thread-safe, so it is chosen when it loads, unless the user chose a layer
    (``NUMBA_THREADING_LAYER``, ``numba.config.THREADING_LAYER``) or a parallel
    kernel already ran in this process (the layer is fixed by then). Returns
    the layer requested, or None when Numba's own choice stands. The coalesce
    kernels do not use a threading layer at all (:func:`run_parts`).
    """
    from numba.core import config
    from numba.np.ufunc import parallel

    if parallel._is_initialized:
        return None
    if os.environ.get("NUMBA_THREADING_LAYER") or str(config.THREADING_LAYER).lower() != "default":
        return None
    if _tbb_loadable():
        config.THREADING_LAYER = "tbb"
        return "tbb"
    return None


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
