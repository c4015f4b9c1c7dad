"""``python -m coosparse warmup``: compile the common kernels ahead of time.

coosparse's CPU kernels are compiled by Numba at their first use and cached on
disk (next to the package, or in Numba's user cache, or, on a read-only
install, in ``<tmp>/coosparse-numba-cache-<uid>``; ``NUMBA_CACHE_DIR`` wins).
In a fresh environment the first calls therefore wait for compilation. This
command pays that cost up front, where a user wants it: in a Dockerfile, a CI
cache step, a Dask worker image.

It runs the common operations (coalesce, the arithmetic and comparison
operators, products, reductions, indexing, joins, conversions) on small arrays
of the common dtypes, both below and above the sizes where a kernel splits its
work between threads, in parallel worker processes (one per dtype, ``--jobs``
at a time), with a progress bar. Every kernel it compiles is cached where the
operations themselves would cache it, so later processes load it in
milliseconds.

Examples::

    python -m coosparse warmup                       # every dtype, all CPU cores
    python -m coosparse warmup --dtypes float64,float32 --jobs 2
    python -m coosparse warmup --ops coalesce,a+b    # some operations only
    python -m coosparse warmup --list                # what it would run

Workers running at once share the cache; each saves a compiled kernel under a
lock (Numba's cache index is read, extended and rewritten on every save).
"""
from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import threading
import time

import numpy as np

import coosparse

DTYPES = ("float64", "float32", "int64", "int32", "complex128", "bool")
"""The dtypes warmed by default. Sums of every integer and bool dtype accumulate in int64 and
moves of values go by item width, so these cover most kernels of the other dtypes too."""

SIZES = (100, 40_000)
"""Entries per operand: one part on the calling thread, and parts spread over the threads."""

STEPS = (
    "coalesce", "a+b", "a-b", "a*b", "a*b (unsorted)", "a+b (3-D)", "a*b (3-D)", "sparse_mask (3-D)", "maximum", "a>0",
    "a@x", "a@X", "a@b", "a@b (many products)",
    "sampled_matmul", "sum", "sum(axis=0)", "sum(axis=1)", "max(axis=1)", "a[idx]", "a[slice]", "transpose", "to_dense",
    "from_dense", "concatenate",
)
"""What one worker runs per size (names for ``--ops``)."""

_TAG = "@@warmup "


# ---------------------------------------------------------------- the worker
def _steps(dtype, n):
    """(name, call) pairs for one dtype and size; operands built once, outside the calls."""
    shape = (2000, 2000)
    dt = np.dtype(dtype)
    a = coosparse.random(shape, nnz=n, dtype=dt, duplicates=True, seed=1)
    b = coosparse.random(shape, nnz=n, dtype=dt, duplicates=True, seed=2)
    ac, bc = a.coalesce(), b.coalesce()
    x = np.ones(shape[1], dt)
    # 64 columns: a dense factor above the size where its transpose leaves NumPy for the kernel
    xx = np.ones((shape[1], 64), dt)
    yy = np.ascontiguousarray(xx.T)  # a C-ordered K x N factor: sampled_matmul transposes it
    # 40 entries per row: its square has more products than SpGEMM's one pass takes (the count kernel)
    wide = coosparse.random(shape, nnz=40 * shape[0], dtype=dt, seed=3).coalesce()
    idx = np.arange(0, shape[0], 7)
    dense = ac[:200].to_dense()
    # three sparse axes: from 2 ** 16 entries in all, the merges go row by row over the trailing
    # axes' keys (their own pointer, key and write kernels)
    cube = (200, 100, 200)
    c3, d3 = (coosparse.random(cube, nnz=n, dtype=dt, seed=s).coalesce() for s in (4, 5))
    return [
        ("coalesce", lambda: a.coalesce()),
        ("a+b", lambda: ac + bc),
        ("a-b", lambda: ac - bc),
        ("a*b", lambda: ac * bc),
        ("a*b (unsorted)", lambda: a * bc),
        ("a+b (3-D)", lambda: c3 + d3),
        ("a*b (3-D)", lambda: c3 * d3),
        ("sparse_mask (3-D)", lambda: coosparse.sparse_mask(c3, d3)),
        ("maximum", lambda: np.maximum(ac, bc)),
        ("a>0", lambda: ac > 0),
        ("a@x", lambda: ac @ x),
        ("a@X", lambda: ac @ xx),
        ("a@b", lambda: ac @ bc),
        ("a@b (many products)", lambda: wide @ wide),
        ("sampled_matmul", lambda: coosparse.sampled_matmul(ac, xx, yy)),
        ("sum", lambda: ac.sum()),
        ("sum(axis=0)", lambda: ac.sum(axis=0)),
        ("sum(axis=1)", lambda: ac.sum(axis=1)),
        ("max(axis=1)", lambda: ac.max(axis=1)),
        ("a[idx]", lambda: ac[idx]),
        ("a[slice]", lambda: ac[10:1500, 3:]),
        ("transpose", lambda: ac.T.coalesce()),
        ("to_dense", lambda: ac.to_dense()),
        ("from_dense", lambda: coosparse.from_dense(dense)),
        ("concatenate", lambda: coosparse.concatenate([ac, bc], axis=1)),
    ]


def _lock_cache_saves():
    """Serialise Numba's cache saves between the workers (see the module doc); False where
    Numba's internals moved (the caller then runs one worker at a time)."""
    try:
        import fcntl
        import tempfile

        from numba.core import caching

        save = caching.IndexDataCacheFile.save
    except (ImportError, AttributeError):
        return False
    path = os.path.join(tempfile.gettempdir(), f"coosparse-warmup-{os.getuid()}.lock")

    def locked_save(self, key, data):
        with open(path, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                return save(self, key, data)
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    caching.IndexDataCacheFile.save = locked_save
    return True


def worker(dtype, ops):
    """Run the steps for ``dtype`` (names in ``ops``; all when empty), reporting each on stdout.

    ``import coosparse`` imports no Numba, so the cache lock goes in before any kernel compiles.
    """
    _lock_cache_saves()
    for n in SIZES:
        try:
            steps = _steps(dtype, n)
        except Exception as e:  # noqa: BLE001 - a dtype the operands cannot be made of
            _emit(step="operands", n=n, error=f"{type(e).__name__}: {e}"[:200])
            continue
        for name, call in steps:
            if ops and name not in ops:
                continue
            t0 = time.perf_counter()
            try:
                call()
                error = None
            except Exception as e:  # noqa: BLE001 - an operation the dtype does not support
                error = f"{type(e).__name__}: {e}"[:200]
            _emit(step=name, n=n, seconds=time.perf_counter() - t0, error=error)


def _emit(**event):
    sys.stdout.write(_TAG + json.dumps(event) + "\n")
    sys.stdout.flush()


# ---------------------------------------------------------------- the command
def _csv(text):
    return [x.strip() for x in (text or "").split(",") if x.strip()]


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m coosparse", description="coosparse command-line tools.")
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser("warmup", help="compile the common kernels for the common dtypes ahead of time",
                       description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    w.add_argument("--dtypes", default=",".join(DTYPES), help=f"comma-separated (default {','.join(DTYPES)})")
    w.add_argument("--ops", default="", help="comma-separated operations (default all; see --list)")
    w.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="worker processes at a time (default: the number of CPUs)")
    w.add_argument("--list", action="store_true", help="list the dtypes and operations, then exit")
    w.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    w.add_argument("--verbose", action="store_true", help="one line per operation, with its seconds")
    w.add_argument("--worker", metavar="DTYPE", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.dtypes, args.ops = _csv(args.dtypes), _csv(args.ops)
    unknown = [o for o in args.ops if o not in STEPS]
    if unknown:
        p.error(f"unknown operation(s) {', '.join(unknown)}; choose from {', '.join(STEPS)}")
    if args.jobs < 1:
        p.error("--jobs must be at least 1")
    return args


def warmup(args, out=sys.stderr):
    """Run one worker per dtype, ``args.jobs`` at a time; returns the number of skipped steps."""
    from .bench.progress import Progress  # the benchmark's bar: tqdm when installed, else plain lines

    steps_per_worker = len(SIZES) * len(args.ops or STEPS)
    progress = Progress(total=steps_per_worker * len(args.dtypes), desc="coosparse warmup", enabled=args.progress)
    env = dict(os.environ, COOSPARSE_COMPILE_NOTICE="0")
    events = queue.Queue()
    pending = list(args.dtypes)
    running = {}
    skipped = 0
    t0 = time.perf_counter()
    jobs = args.jobs if _lock_available() else 1

    def read(dtype, proc):
        for line in proc.stdout:
            if line.startswith(_TAG):
                events.put((dtype, json.loads(line[len(_TAG):])))
        events.put((dtype, {"exit": proc.wait()}))

    try:
        while pending or running:
            while pending and len(running) < jobs:
                dtype = pending.pop(0)
                cmd = [sys.executable, "-m", "coosparse", "warmup", "--worker", dtype, "--ops", ",".join(args.ops)]
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env, bufsize=1)
                running[dtype] = proc
                threading.Thread(target=read, args=(dtype, proc), daemon=True).start()
            dtype, ev = events.get()
            if "exit" in ev:
                if ev["exit"] != 0:
                    progress.write(f"{dtype}: worker exited with code {ev['exit']}")
                    skipped += 1
                del running[dtype]
                continue
            progress.advance()
            progress.status(f"{dtype} {ev['step']} (n={ev['n']})")
            if ev.get("error"):
                skipped += 1
                if args.verbose:
                    progress.write(f"{dtype} {ev['step']} (n={ev['n']}): skipped ({ev['error']})")
            elif args.verbose:
                progress.write(f"{dtype} {ev['step']} (n={ev['n']}): {ev['seconds']:.2f} s")
    finally:
        progress.close()
        for proc in running.values():
            proc.kill()
    print(f"coosparse warmup: {len(args.dtypes)} dtype(s) in {time.perf_counter() - t0:.0f} s"
          + (f"; {skipped} operation(s) not supported for a dtype, skipped" if skipped else ""), file=out)
    return skipped


def _lock_available():
    try:
        import fcntl  # noqa: F401
    except ImportError:  # no flock (Windows): one worker at a time keeps Numba's cache index whole
        return False
    return True


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.worker:
        worker(args.worker, args.ops)
        return 0
    if args.list:
        print("dtypes:", ", ".join(DTYPES))
        print("operations:", ", ".join(STEPS))
        print("sizes:", ", ".join(f"{n:,} entries" for n in SIZES))
        return 0
    warmup(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
