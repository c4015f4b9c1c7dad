"""Scale-out with Dask: row sums and SpMV of an R-MAT graph larger than a worker's memory.

Its own suite (``python -m coosparse.bench --suite dask``, ``make bench-dask``):
it starts Dask clusters and takes minutes, so the default run leaves it out.

The workload: a Graph500 R-MAT graph (a=0.57, b=0.19, c=0.19, edge factor 16,
random vertex relabelling) of ``2**SCALE`` vertices, generated row block by
row block on the cluster's workers (:func:`rmat_row_block`) and written to a
temporary directory as ``.npy`` files, once, before any timing. Each block is
coalesced (as pydata/sparse holds every array). At ``medium`` (SCALE 22:
4,194,304 vertices, about 66 million entries, 1.5 GiB as COO) the graph is
three times one worker's ``memory_limit`` (512 MiB), so no worker can hold
it: every run streams the blocks from the files (the page cache), builds each
chunk, reduces it and lets it go.

Timed, end to end (read the blocks, build the chunks, compute, gather the
result on the client), on LocalClusters of worker processes with one thread
each and ``NUMBA_NUM_THREADS=1`` (one core per worker, for both libraries):

- ``dask row sums``: ``x.sum(axis=1)``;
- ``dask SpMV``: ``x @ v`` with ``v`` a dense vector scattered to the
  workers once.

Libraries: ``coosparse`` (2 workers), ``coosparse-1worker``, ``pydata`` (2
workers: the same graph of tasks with ``sparse.COO`` chunks built with
``sorted=True, has_duplicates=False``, so it does not re-sort), and
``pydata-1worker``. The speed-up column compares each with ``coosparse`` on 2
workers; the workload label carries the entry count, from which throughput
(entries per second) follows. Memory is not read (it lives in the workers).

512 MiB rather than less: a worker process that has imported Dask, NumPy,
Numba and coosparse (or pydata/sparse) and run one kernel is 200-260 MB
resident already, and Dask pauses a worker at 80% of its limit.
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import numpy as np

from .harness import Case, Impl
from .workloads import RMAT_ABC, RMAT_EDGEFACTOR

SUITE = "dask"
MEASURE_MEMORY = False
OPS = ["dask row sums", "dask SpMV"]

MEMORY_LIMIT = 512 * 2**20
#: Graph500 SCALE per size, and the number of row blocks (chunks)
SCALE = {"small": 18, "medium": 22, "large": 23}
BLOCKS = {"small": 8, "medium": 64, "large": 128}


def rmat_row_block(scale, nblocks, k, seed=0, edgefactor=RMAT_EDGEFACTOR, abc=RMAT_ABC):
    """Row block ``k`` of ``nblocks`` of an R-MAT graph, generated on its own: (indices, values).

    The graph has ``2**scale`` vertices relabelled by one random permutation
    (the same in every block, drawn from ``seed``), so blocks hold a fair share
    of the edges. An original vertex ``r`` has out-degree Poisson with mean
    ``edgefactor * 2**scale * p(r)``, where ``p(r) = (a+b)**zeros(r) *
    (c+d)**ones(r)`` is the R-MAT probability of its row bits; each of its
    edges draws its column bit by bit given the row bit (``b/(a+b)`` or
    ``d/(c+d)`` for a 1), as the Graph500 generator does. Rows are drawn
    independently (Poisson), so the edge count is ``edgefactor * 2**scale`` on
    average rather than exactly. The block comes back coalesced (row-major
    order, repeated edges dropped after the first), indices local to the block
    (rows ``0 .. 2**scale / nblocks``), values uniform in [0, 1).

    Examples
    --------
    >>> idx, val = rmat_row_block(10, 4, 1)
    >>> idx.shape[0], int(idx[0].max()) < 256, bool(np.all(np.diff(idx[0] * 1024 + idx[1]) > 0))
    (2, True, True)
    """
    n = 1 << scale
    if n % nblocks:
        raise ValueError(f"{nblocks} blocks do not divide {n} rows")
    rows_per = n // nblocks
    a, b, c = abc
    d = 1.0 - a - b - c
    perm = np.random.default_rng([seed, 0]).permutation(n)
    inv = np.empty(n, dtype=np.int64)
    inv[perm] = np.arange(n, dtype=np.int64)
    orig = inv[k * rows_per:(k + 1) * rows_per]  # original vertices whose new labels lie in block k
    ones = np.zeros(orig.shape[0], dtype=np.int64)
    for bit in range(scale):
        ones += (orig >> bit) & 1
    p = (a + b) ** (scale - ones) * (c + d) ** ones
    rng = np.random.default_rng([seed, 1, k])
    deg = rng.poisson(edgefactor * n * p)
    r = np.repeat(orig, deg)
    col = np.zeros(r.shape[0], dtype=np.int64)
    p_one = np.array([b / (a + b), d / (c + d)])
    for bit in range(scale):
        col |= (rng.random(r.shape[0]) < p_one[(r >> bit) & 1]).astype(np.int64) << bit
    keys = (perm[r] - k * rows_per) * n + perm[col]
    values = rng.random(keys.shape[0])
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    first = np.ones(keys.shape[0], dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    keys, values = keys[first], values[order[first]]
    return np.stack([keys // n, keys % n]), values


def _write_block(directory, scale, nblocks, k, seed):
    idx, val = rmat_row_block(scale, nblocks, k, seed)
    np.save(os.path.join(directory, f"{k}-indices.npy"), idx)
    np.save(os.path.join(directory, f"{k}-values.npy"), val)
    return idx.shape[1]


def _blocks_on_disk(client, scale, nblocks, seed=0):
    """Write the graph's blocks (on the workers); reuse them from ``$COOSPARSE_BENCH_DASK_DIR`` if set.

    Without the variable the blocks go to a temporary directory removed at exit.
    With it they stay there (about 1.5 GiB at ``medium``) for the next run.
    """
    keep = os.environ.get("COOSPARSE_BENCH_DASK_DIR")
    if keep:
        directory = os.path.join(keep, f"rmat-{scale}-{nblocks}-{seed}")
        done = os.path.join(directory, "entries.txt")
        if os.path.exists(done):
            with open(done) as f:
                return int(f.read()), directory
        os.makedirs(directory, exist_ok=True)
    else:
        directory = tempfile.mkdtemp(prefix="coosparse-bench-dask-")
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
    nnz = sum(client.gather(client.map(_write_block, [directory] * nblocks, [scale] * nblocks,
                                       [nblocks] * nblocks, range(nblocks), [seed] * nblocks)))
    if keep:
        with open(os.path.join(directory, "entries.txt"), "w") as f:
            f.write(str(nnz))
    return nnz, directory


def _load(directory, k):
    return (np.load(os.path.join(directory, f"{k}-indices.npy")),
            np.load(os.path.join(directory, f"{k}-values.npy")))


def load_coosparse(directory, k, shape):
    """Chunk ``k`` as a coosparse COO (coalesced: both flags, no check)."""
    from coosparse import COO  # runs on a Dask worker: imported there

    idx, val = _load(directory, k)
    return COO(idx, val, shape, sorted=True, unique=True, check=False)


def load_pydata(directory, k, shape):
    """Chunk ``k`` as a pydata/sparse COO, told it is sorted and duplicate-free (no re-sort)."""
    import sparse

    idx, val = _load(directory, k)
    return sparse.COO(idx, val, shape=shape, sorted=True, has_duplicates=False)


def _cluster(n_workers):
    from distributed import Client, LocalCluster

    import dask

    # One core per worker for both libraries. The variable must be in the worker's environment
    # when it starts (Numba reads it on import, and refuses a change once it has threads), so
    # it goes in the pre-spawn environment, which the nanny also writes into this process: put
    # this process's value back afterwards.
    before = os.environ.get("NUMBA_NUM_THREADS")
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ.NUMBA_NUM_THREADS": "1"}):
            cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                   memory_limit=MEMORY_LIMIT, dashboard_address=":0")
    finally:
        if before is None:
            os.environ.pop("NUMBA_NUM_THREADS", None)
        else:
            os.environ["NUMBA_NUM_THREADS"] = before
    client = Client(cluster)
    atexit.register(lambda: (client.close(), cluster.close()) if client.status != "closed" else None)
    return client


def _graph(library, directory, nblocks, n):
    import dask.array as da
    from dask import delayed

    rows = n // nblocks
    if library == "coosparse":
        from coosparse.dask import from_chunks  # optional dependency: imports Dask

        return from_chunks([delayed(load_coosparse)(directory, k, (rows, n)) for k in range(nblocks)],
                           chunks=((rows,) * nblocks, (n,)))
    import sparse

    meta = sparse.COO.from_numpy(np.zeros((0, 0)))
    return da.concatenate([da.from_delayed(delayed(load_pydata)(directory, k, (rows, n)), (rows, n),
                                           dtype=np.float64, meta=meta) for k in range(nblocks)])


def cases(size="medium", libraries=None):
    """Start the clusters, write the graph's blocks, and return the two timed cases."""
    import dask.array as da

    want = lambda lib: libraries is None or lib in libraries  # noqa: E731
    use_pydata = want("pydata")
    if use_pydata:
        try:
            import sparse  # noqa: F401
        except ImportError:
            use_pydata = False
    scale, nblocks = SCALE[size], BLOCKS[size]
    n = 1 << scale
    gen = _cluster(2)  # its own cluster: the timed ones start fresh, without the generator's leftovers
    nnz, directory = _blocks_on_disk(gen, scale, nblocks)
    gen.close()
    gen.cluster.close()
    two, one = _cluster(2), _cluster(1)
    coo_bytes = nnz * (2 * 8 + 8)
    label = (f"R-MAT 2^{scale}, {nnz:,} entries ({coo_bytes / 2**30:.2f} GiB = "
             f"{coo_bytes / MEMORY_LIMIT:.1f}x a worker's {MEMORY_LIMIT // 2**20} MiB), {nblocks} chunks")
    v = np.random.default_rng(1).random(n)
    impls = {"row sums": [], "SpMV": []}
    libs = [("coosparse", two, "coosparse"), ("coosparse-1worker", one, "coosparse")]
    if use_pydata:
        libs += [("pydata", two, "pydata"), ("pydata-1worker", one, "pydata")]
    for name, client, kind in libs:
        x = _graph(kind, directory, nblocks, n)
        vd = da.from_delayed(client.scatter(v, broadcast=True), (n,), dtype=np.float64)
        rs, mv = x.sum(axis=1), x @ vd
        workers = len(client.scheduler_info()["workers"])
        note = f"{workers} worker(s), 1 thread each"
        impls["row sums"].append(Impl(name, (lambda e=rs, c=client: c.compute(e).result()), note=note))
        impls["SpMV"].append(Impl(name, (lambda e=mv, c=client: c.compute(e).result()), note=note))
    return [Case(f"dask {op}", label, impls[op], input_bytes=coo_bytes,
                 params={"entries": nnz, "memory_limit": MEMORY_LIMIT, "blocks": nblocks})
            for op in ("row sums", "SpMV")]
