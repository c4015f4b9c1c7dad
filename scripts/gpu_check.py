"""Device checks of the CUDA backend, run by scripts/gpu_check.sh on a lent GPU machine.

Sections (each independent; a failure is recorded and the next one runs):

1. ``load``: every kernel file compiled by ``cupy.RawModule`` on this GPU.
2. ``capture``: each operation that must not synchronise (multiply with
   compact=False and a coalesced operand, sparse_mask, mask_projection,
   as_strided_scatter) is captured in a CUDA graph on a non-blocking stream
   (relaxed mode: allocations allowed, but any device-to-host copy or stream
   synchronisation invalidates the capture), replayed, and compared with the
   eager result.
3. ``identity``: CPU (Numba) and GPU results bit-identical for coalesce,
   sparse_mask and multiply (SPEC 7), float32 and float64, with duplicates.
4. ``bench``: the issue workloads scaled to 20,000,000 entries, coosparse on
   the GPU against torch CUDA (median of 5 after a warm-up), and
   as_strided_scatter's bandwidth against a device-to-device copy.

Writes ``gpu_check.json`` under ``--out``. ``--dry-run`` runs sections 2-3
on the CPU layers with small sizes (what can be checked without a GPU).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
import traceback

import numpy as np

import coosparse

RESULTS = {}


def log(*a):
    print(*a, flush=True)


def section(name):
    def deco(fn):
        def run(*args, **kw):
            t0 = time.perf_counter()
            try:
                RESULTS[name] = fn(*args, **kw)
            except Exception as e:  # record and go on
                RESULTS[name] = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
                log(f"[{name}] FAILED: {type(e).__name__}: {e}")
            RESULTS.setdefault("seconds", {})[name] = round(time.perf_counter() - t0, 2)
        return run
    return deco


# ---------------------------------------------------------------------- helpers
def _random_coo(n, shape, rng, dtype=np.float64, duplicates=True, coalesced=False):
    total = int(np.prod(shape))
    if duplicates:
        keys = rng.integers(0, total, n, dtype=np.int64)
    else:
        keys = rng.choice(total, size=n, replace=False).astype(np.int64) if total < 4 * n else \
            np.unique(rng.integers(0, total, int(n * 1.2), dtype=np.int64))[:n]
        keys = rng.permutation(keys)
    if coalesced:
        keys = np.unique(keys)
    vals = rng.standard_normal(keys.shape[0]).astype(dtype)
    idx = np.stack(np.unravel_index(keys, shape)).astype(np.int64)
    return coosparse.COO(idx, vals, shape, sorted=coalesced, unique=coalesced or not duplicates, check=False)


def _same_bits(a, b):
    a, b = a.to("cpu"), b.to("cpu")
    return (
        a.shape == b.shape
        and (a.is_sorted, a.is_unique) == (b.is_sorted, b.is_unique)
        and np.array_equal(a.indices, b.indices)
        and a.values.dtype == b.values.dtype
        and np.array_equal(np.ascontiguousarray(a.values).view(np.uint8),
                           np.ascontiguousarray(b.values).view(np.uint8))
    )


def _ops(dense_x, a_coalesced, b_uncoalesced, mask, strided):
    """name -> zero-argument callable, for the sync-free operations that exist in this build."""
    ops = {}
    if hasattr(coosparse, "multiply"):
        ops["multiply(u, c, compact=False)"] = lambda: coosparse.multiply(b_uncoalesced, a_coalesced, compact=False)
    if hasattr(coosparse, "sparse_mask"):
        ops["sparse_mask(dense, mask)"] = lambda: coosparse.sparse_mask(dense_x, mask)
        ops["sparse_mask(coo, mask)"] = lambda: coosparse.sparse_mask(a_coalesced, mask)
    if hasattr(coosparse, "mask_projection"):
        ops["mask_projection(x, mask)"] = lambda: coosparse.mask_projection(b_uncoalesced, a_coalesced)
        ops["mask_projection(x, mask, accumulate)"] = lambda: coosparse.mask_projection(
            b_uncoalesced, a_coalesced, accumulate=True)
    if hasattr(coosparse, "as_strided_scatter"):
        x, src, size, stride = strided
        ops["as_strided_scatter"] = lambda: coosparse.as_strided_scatter(x, src, size, stride)
    return ops


def _result_arrays(r):
    if isinstance(r, coosparse.COO):
        return [r.indices, r.values]
    return [r]


# ---------------------------------------------------------------------- sections
@section("load")
def check_load():
    from coosparse._cuda import _sources, backend

    out = {}
    for fname in _sources.KERNELS:
        mod = backend.module(fname)
        out[fname] = len([mod.get_function(n) for n in _sources.name_expressions(fname)])
    log(f"[load] {sum(out.values())} kernels loaded from {len(out)} files")
    return out


@section("capture")
def check_capture(xp_put, n=1_000_000, dry=False):
    rng = np.random.default_rng(0)
    shape = (4096, 4096)
    a = xp_put(_random_coo(n, shape, rng, duplicates=False, coalesced=True))
    bu = xp_put(_random_coo(n, shape, rng, duplicates=True))
    mask = xp_put(_random_coo(n // 2, shape, rng, duplicates=False, coalesced=True))
    dense = rng.standard_normal(shape)
    x = rng.random(2 * n, dtype=np.float32)
    src = rng.random(n, dtype=np.float32)
    if not dry:
        import cupy

        dense, x, src = cupy.asarray(dense), cupy.asarray(x), cupy.asarray(src)
    ops = _ops(dense, a, bu, mask, (x, src, (n,), (2,)))
    out = {}
    for name, fn in ops.items():
        if dry:
            fn()
            out[name] = "ran (dry run: no capture on the CPU)"
            continue
        import cupy

        eager = fn()  # warm-up: compiles kernels and fills the memory pool
        cupy.cuda.Device().synchronize()
        stream = cupy.cuda.Stream(non_blocking=True)
        mode = getattr(cupy.cuda.runtime, "streamCaptureModeRelaxed", None)
        try:
            with stream:
                stream.begin_capture(mode) if mode is not None else stream.begin_capture()
                try:
                    captured = fn()
                finally:
                    graph = stream.end_capture()
            graph.launch(stream)
            stream.synchronize()
            same = all(bool(cupy.array_equal(p, q)) for p, q in zip(_result_arrays(eager), _result_arrays(captured)))
            out[name] = "captured, replay matches" if same else "captured, REPLAY DIFFERS"
        except Exception as e:
            out[name] = f"NOT CAPTURABLE (synchronises?): {type(e).__name__}: {e}"
            try:
                cupy.cuda.Device().synchronize()
            except Exception:
                pass
        log(f"[capture] {name}: {out[name]}")
    return out


@section("identity")
def check_identity(xp_put, n=300_000, gpu_context=None):
    rng = np.random.default_rng(1)
    shape = (2048, 4096)
    out = {}
    for dtype in (np.float32, np.float64):
        cases = {}
        a = _random_coo(n, shape, rng, dtype=dtype, duplicates=True)
        b = _random_coo(n, shape, rng, dtype=dtype, duplicates=True)
        c = _random_coo(n, shape, rng, dtype=dtype, duplicates=False, coalesced=True)
        cases["coalesce"] = lambda m: m(a).coalesce()
        if hasattr(coosparse, "sparse_mask"):
            cases["sparse_mask(dup x, mask)"] = lambda m: coosparse.sparse_mask(m(a), m(c))
            cases["sparse_mask(dup x, dup mask)"] = lambda m: coosparse.sparse_mask(m(a), m(b))
        if hasattr(coosparse, "multiply"):
            cases["multiply(u, u)"] = lambda m: coosparse.multiply(m(a), m(b))
            cases["multiply(u, c, compact=False)"] = lambda m: coosparse.multiply(m(a), m(c), compact=False)
            cases["multiply(c, u)"] = lambda m: coosparse.multiply(m(c), m(b))
        for name, f in cases.items():
            cpu = f(lambda v: v)
            with (gpu_context() if gpu_context else contextlib.nullcontext()):
                gpu = f(xp_put)
            ok = _same_bits(cpu, gpu)
            out[f"{name} {np.dtype(dtype).name}"] = "bit-identical" if ok else "DIFFERS"
            log(f"[identity] {name} {np.dtype(dtype).name}: {'bit-identical' if ok else 'DIFFERS'}")
    return out


def _timeit(fn, sync, reps=5):
    fn()
    sync()
    ts = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


@section("bench")
def bench(n=20_000_000):
    import cupy
    import torch

    def sync():
        cupy.cuda.Device().synchronize()
        torch.cuda.synchronize()

    rng = np.random.default_rng(0)
    shape = (131072, 131072)
    total = shape[0] * shape[1]
    rows = []

    def tcoo(a):
        return torch.sparse_coo_tensor(torch.as_tensor(a.indices, device="cuda"),
                                       torch.as_tensor(a.values, device="cuda"), a.shape,
                                       is_coalesced=a.is_coalesced, check_invariants=False)

    def row(op, ours, theirs, note=""):
        t_ours = _timeit(ours, sync)
        t_torch = _timeit(theirs, sync) if theirs else None
        r = {"op": op, "coosparse_ms": 1e3 * t_ours, "torch_ms": 1e3 * t_torch if t_torch else None,
             "speedup": (t_torch / t_ours) if t_torch else None, "note": note}
        rows.append(r)
        log(f"[bench] {op:<34} coosparse {r['coosparse_ms']:9.2f} ms   torch "
            f"{(r['torch_ms'] or float('nan')):9.2f} ms   x{(r['speedup'] or float('nan')):.2f} {note}")
        return r

    # coalesce: uniform entries with duplicates as drawn
    keys = rng.integers(0, total, n, dtype=np.int64)
    u = coosparse.COO(np.stack(np.unravel_index(keys, shape)).astype(np.int64),
                      rng.random(n), shape, check=False).to("cuda")
    tu = tcoo(u)
    row("coalesce (20M uniform, dups)", lambda: u.coalesce(), lambda: tu.coalesce())
    del u, tu, keys

    # intersection family: a, b coalesced with half the keys shared; bu = b in random order
    keys = np.unique(rng.integers(0, total, size=int(n * 1.6), dtype=np.int64))
    keys = rng.permutation(keys)
    ka = np.sort(keys[:n])
    kb = np.concatenate([keys[: n // 2], keys[n: n + n - n // 2]])
    kbu = rng.permutation(kb)

    def make(k, flags):
        return coosparse.COO(np.stack(np.unravel_index(k, shape)).astype(np.int64), rng.random(k.shape[0]),
                             shape, sorted=flags, unique=flags, check=False).to("cuda")

    a, b, bu = make(ka, True), make(np.sort(kb), True), make(kbu, False)
    ta, tb, tbu = tcoo(a), tcoo(b), tcoo(bu)
    if hasattr(coosparse, "multiply"):
        row("multiply c*c", lambda: coosparse.multiply(a, b), lambda: ta * tb)
        row("multiply u*c compact=False", lambda: coosparse.multiply(bu, a, compact=False), lambda: tbu * ta)
        row("multiply u*c compact", lambda: coosparse.multiply(bu, a), lambda: tbu * ta)
    if hasattr(coosparse, "add"):
        row("add c+c", lambda: coosparse.add(a, b), lambda: ta + tb)
    if hasattr(coosparse, "sparse_mask"):
        row("sparse_mask c|c", lambda: coosparse.sparse_mask(a, b), lambda: ta.sparse_mask(tb))
    del a, b, bu, ta, tb, tbu

    # as_strided_scatter: 40M float32 input, 20M-element stride-2 view; bandwidth vs a D2D copy
    if hasattr(coosparse, "as_strided_scatter"):
        x = cupy.random.random(2 * n, dtype=np.float32)
        src = cupy.random.random(n, dtype=np.float32)
        xt, st = torch.as_tensor(x, device="cuda"), torch.as_tensor(src, device="cuda")
        r = row("as_strided_scatter f32 40M/20M s2",
                lambda: coosparse.as_strided_scatter(x, src, (n,), (2,)),
                lambda: torch.as_strided_scatter(xt, st, (n,), (2,)))
        moved = 2 * x.nbytes + src.nbytes
        buf = cupy.empty(moved // 2, dtype=np.uint8)
        both = cupy.empty(moved // 2, dtype=np.uint8)
        t_copy = _timeit(lambda: cupy.copyto(buf, both), sync)
        copy_bw = 2 * buf.nbytes / t_copy
        ours_bw = moved / (r["coosparse_ms"] / 1e3)
        r["bandwidth_GBps"] = ours_bw / 1e9
        r["copy_bandwidth_GBps"] = copy_bw / 1e9
        r["fraction_of_copy"] = ours_bw / copy_bw
        log(f"[bench] as_strided_scatter {ours_bw / 1e9:.0f} GB/s = {100 * ours_bw / copy_bw:.0f}% of a "
            f"D2D copy ({copy_bw / 1e9:.0f} GB/s)")
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-check-out"))
    ap.add_argument("--dry-run", action="store_true", help="CPU layers only, small sizes")
    ap.add_argument("--skip-bench", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.dry_run:
        from coosparse._backend import use_cpu_backend

        # numba is the CPU side, the emulated CUDA layer stands in for the GPU
        with use_cpu_backend("cuda-emulated"):
            check_capture(lambda a: a, n=20_000, dry=True)
        check_identity(lambda a: a, n=20_000, gpu_context=lambda: use_cpu_backend("cuda-emulated"))
    else:
        check_load()
        put = (lambda a: a.to("cuda"))
        check_capture(put)
        check_identity(put)
        if not args.skip_bench:
            bench()
    RESULTS["coosparse_version"] = coosparse.__version__
    with open(os.path.join(args.out, "gpu_check.json"), "w") as f:
        json.dump(RESULTS, f, indent=1, default=str)
    failed = [k for k, v in RESULTS.items() if isinstance(v, dict) and "error" in v]
    bad = [f"{s}: {k}" for s in ("capture", "identity") for k, v in (RESULTS.get(s) or {}).items()
           if isinstance(v, str) and ("NOT" in v or "DIFFERS" in v)]
    log(f"sections failed: {failed or 'none'}; checks failed: {bad or 'none'}")
    return 1 if failed or bad else 0


if __name__ == "__main__":
    sys.exit(main())
