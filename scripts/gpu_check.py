"""Device checks of the CUDA backend, run by scripts/gpu_check.sh on a lent GPU machine.

Sections (each independent: a failure is recorded and the next one runs;
``gpu_check.json`` is rewritten after every section, so a timeout loses
nothing that finished):

1. ``load``: every kernel file compiled by the loader (NVRTC with the
   loader's options, for this GPU's architecture) and loaded; the PTX of
   every file has no ``.ftz`` instruction.
2. ``sync``: the direct synchronisation test. A ~1 s spin kernel is queued,
   then the operation is called: an operation that does not synchronise
   returns to the host long before the stream drains. A synchronising one
   (``coalesce``, the control) waits for the spin.
3. ``capture``: each sync-free operation captured in a CUDA graph on a
   non-blocking stream (relaxed mode: any host<->device copy or stream
   synchronisation invalidates the capture), replayed, compared with the
   eager result. Includes to_dense, an unsorted-probe sparse_mask and an
   overlapping as_strided_scatter.
4. ``identity``: CPU (Numba) and GPU results bit-identical, with subnormal
   float32/float64 values, float16, complex and int64. The CPU results are
   computed in a separate process started first (``--cpu-reference``), so
   Numba's compilation overlaps the GPU sections.
5. ``badinput``: check=False COOs with out-of-range indices and lying flags:
   no fault, and each reported by ``check_device_errors`` (run in a process of
   its own, under ``compute-sanitizer`` with ``GPU_CHECK_SANITIZE=1``).
6. ``gap``: as_strided_scatter's fused fill pass against copy + scatter for
   growing gaps between view elements (the measured crossover for
   ``FILL_MAX_GAP``).
7. ``bench``: every case module of ``coosparse.bench`` on ``--device cuda``
   (CUDA events over several calls), module by module into ``bench.json``.

``--dry-run`` runs what a CPU can: the loader's compile and PTX check, the
sync and capture sections on the emulated device (a transfer in a sync-free
operation raises there), the identity section against the emulated device,
and the bench cases on ``cuda-emulated`` at the smallest size.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import traceback

import numpy as np

import coosparse

# the sync-free cases and the emulated device's COO moves live with the tests
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
import emulation  # noqa: E402
import sync_free_cases as sync_free  # noqa: E402

RESULTS = {"failures": []}
OUT = "."


def log(*a):
    print(*a, flush=True)


def save():
    RESULTS["coosparse_version"] = coosparse.__version__
    tmp = os.path.join(OUT, "gpu_check.json.tmp")
    with open(tmp, "w") as f:
        json.dump(RESULTS, f, indent=1, default=str)
    os.replace(tmp, os.path.join(OUT, "gpu_check.json"))


def fail(section, what):
    RESULTS["failures"].append(f"{section}: {what}")
    log(f"[{section}] FAIL {what}")


def section(name):
    def deco(fn):
        def run(*args, **kw):
            t0 = time.perf_counter()
            log(f"== {name}")
            try:
                RESULTS[name] = fn(*args, **kw)
            except Exception as e:  # record and go on
                RESULTS[name] = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
                fail(name, f"section raised {type(e).__name__}: {e}")
                log(traceback.format_exc())
            RESULTS.setdefault("seconds", {})[name] = round(time.perf_counter() - t0, 2)
            save()
        return run
    return deco


# ---------------------------------------------------------------------------- devices
class Gpu:
    name = "cuda"

    def __init__(self):
        import cupy

        self.cupy = cupy

    def put(self, x):
        if isinstance(x, coosparse.COO):
            return x.to("cuda")
        return self.cupy.asarray(x)

    def get(self, x):
        if isinstance(x, coosparse.COO):
            return x.to("cpu")
        return x.get() if hasattr(x, "get") else x

    def synchronize(self):
        self.cupy.cuda.Device().synchronize()


class Emulated:
    """The test suite's stand-in GPU (coosparse.testing.device): what --dry-run runs on."""

    name = "cuda-emulated"
    strict = emulation

    def put(self, x):
        with self.strict.allow_transfers():
            return self.strict.to_device(x)

    def get(self, x):
        with self.strict.allow_transfers():
            return self.strict.to_host(x)

    def synchronize(self):
        pass


# ---------------------------------------------------------------------------- inputs
def values(rng, shape, dtype, scale=1.0):
    """Values of ``dtype``; ``scale`` tiny (e.g. 1e-38 for float32) makes sums and products subnormal."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (values(rng, shape, dtype.type(0).real.dtype, scale)
                + 1j * values(rng, shape, dtype.type(0).real.dtype, scale)).astype(dtype)
    if dtype.kind in "iu":
        return rng.integers(-1000, 1000, shape).astype(dtype)
    return (rng.standard_normal(shape) * scale).astype(dtype)


def random_coo(rng, shape, nnz, *, dtype=np.float64, scale=1.0, **flags):
    a = sync_free.random_coo(rng, shape, nnz, dtype=np.float64, scale=1.0, **flags)
    return a._with(values=values(rng, a.values.shape, dtype, scale))


def sync_free_ops(rng, dev, n):
    """name -> zero-argument callable on device inputs, for every operation documented as sync-free."""
    return sync_free.cases(dev.put, n=n, seed=int(rng.integers(2**31)))


def _arrays(r):
    if isinstance(r, coosparse.COO):
        return [r.indices, r.values]
    return [r]


# ---------------------------------------------------------------------------- sections
@section("load")
def check_load(dry):
    from coosparse._kernels.cuda import sources as _sources
    from coosparse._kernels.cuda.compile_check import CtypesNVRTC, compile_file, ftz_instructions, load_nvrtc

    out = {"files": {}}
    if dry:
        try:
            from coosparse._kernels.cuda import backend

            nvrtc, arch = backend.compiler(), "sm_90"
        except Exception:  # no CuPy here: the ctypes NVRTC the CI compile test uses
            backend, nvrtc, arch = None, CtypesNVRTC(load_nvrtc()), "sm_90"
    else:
        import cupy

        from coosparse._kernels.cuda import backend

        nvrtc = backend.compiler()
        arch = backend.target_arch(cupy.cuda.runtime.getDevice())
    out.update(arch=arch, nvrtc=".".join(map(str, nvrtc.version)))
    cc = arch.split("_")[1]
    for fname in _sources.KERNELS:
        t0 = time.perf_counter()
        if backend is not None:
            binary, lowered = backend.build(fname, arch, nvrtc=nvrtc)
        else:
            binary, lowered = compile_file(nvrtc, fname, arch)
        row = {"instantiations": len(lowered), "binary_bytes": len(binary),
               "build_s": round(time.perf_counter() - t0, 2)}
        if not dry:
            for expr in _sources.name_expressions(fname):
                backend.function(expr)
            row["loaded"] = True
        if dry or fname in ("segment.cu", "union.cu"):  # (CI checks every file; here this NVRTC, briefly)
            ptx, _ = compile_file(nvrtc, fname, f"compute_{cc}")
            ftz = ftz_instructions(ptx)
            row["ftz_instructions"] = len(ftz)
            if ftz:
                fail("load", f"{fname}: {len(ftz)} .ftz instructions, e.g. {ftz[0]}")
        out["files"][fname] = row
        log(f"[load] {fname}: {row}")
    return out


def _spin_kernel():
    import cupy

    k = cupy.RawKernel(r'''
    extern "C" __global__ void coo_check_spin(long long cycles) {
        long long t0 = clock64();
        while (clock64() - t0 < cycles) { }
    }''', "coo_check_spin")
    # calibrate: cycles per second at the clock the SM runs now
    cycles = 20_000_000
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    k((1,), (1,), (np.int64(cycles),))  # load + warm-up
    start.record()
    k((1,), (1,), (np.int64(cycles),))
    stop.record()
    stop.synchronize()
    per_s = cycles / (cupy.cuda.get_elapsed_time(start, stop) / 1e3)
    return k, per_s


@section("sync")
def check_sync(dev, dry, n=500_000, spin_s=1.0):
    """The direct synchronisation test (see the module docstring)."""
    rng = np.random.default_rng(0)
    ops = sync_free_ops(rng, dev, n)
    out = {}
    if dry:
        for name, fn in ops.items():
            fn()
            try:
                with dev.strict.sync_free():
                    fn()
                out[name] = "no transfer (emulated device)"
            except dev.strict.TransferError as e:
                out[name] = f"TRANSFERS: {e}"
                fail("sync", f"{name}: {e}")
        return out
    import cupy

    spin, per_s = _spin_kernel()
    out["spin_cycles_per_s"] = per_s
    cycles = np.int64(spin_s * per_s)
    control = dev.put(random_coo(rng, (2048, 4096), n))
    ops = dict(ops, **{"coalesce (control: synchronises)": lambda: control.coalesce()})
    for name, fn in ops.items():
        fn()  # warm-up: kernels loaded, memory pool filled, error word allocated
        cupy.cuda.Device().synchronize()
        spin((1,), (1,), (cycles,))
        t0 = time.perf_counter()
        fn()
        t_call = time.perf_counter() - t0
        cupy.cuda.get_current_stream().synchronize()
        t_all = time.perf_counter() - t0
        row = {"call_s": round(t_call, 4), "drained_s": round(t_all, 4)}
        control_op = name.startswith("coalesce")
        blocked = t_call > 0.5 * spin_s
        if t_all < 0.8 * spin_s:
            row["verdict"] = "INCONCLUSIVE (the spin did not last)"
            fail("sync", f"{name}: spin too short ({t_all:.3f} s)")
        elif control_op:
            row["verdict"] = "blocks, as expected (control)" if blocked else "CONTROL DID NOT BLOCK"
            if not blocked:
                fail("sync", "the control (coalesce) returned before the spin ended: the test cannot see syncs")
        else:
            row["verdict"] = "SYNCHRONISES" if blocked else "returns at once"
            if blocked:
                fail("sync", f"{name} waited {t_call:.3f} s for the queued spin kernel")
        out[name] = row
        log(f"[sync] {name}: {row}")
    return out


@section("capture")
def check_capture(dev, dry, n=500_000):
    rng = np.random.default_rng(1)
    if dry:
        ops = sync_free_ops(rng, dev, n // 25)
        out = {}
        for name, fn in ops.items():
            fn()
            with dev.strict.sync_free():
                fn()
            out[name] = "no transfer (emulated device: capture needs a GPU)"
        return out
    import cupy

    stream = cupy.cuda.Stream(non_blocking=True)
    out = {}
    with stream:
        ops = sync_free_ops(rng, dev, n)
    mode = getattr(cupy.cuda.runtime, "streamCaptureModeRelaxed", None)
    for name, fn in ops.items():
        try:
            with stream:
                eager = fn()  # warm-up on this stream, and the reference
                stream.synchronize()
                stream.begin_capture(mode) if mode is not None else stream.begin_capture()
                try:
                    captured = fn()
                finally:
                    graph = stream.end_capture()
                graph.launch(stream)
                stream.synchronize()
            same = all(bool(cupy.array_equal(p, q)) for p, q in zip(_arrays(eager), _arrays(captured)))
            out[name] = "captured, replay matches" if same else "captured, REPLAY DIFFERS"
            if not same:
                fail("capture", f"{name}: replay differs from the eager result")
        except Exception as e:
            out[name] = f"NOT CAPTURABLE: {type(e).__name__}: {e}"
            fail("capture", f"{name}: {type(e).__name__}: {e}")
            with contextlib.suppress(Exception):
                cupy.cuda.Device().synchronize()
        log(f"[capture] {name}: {out[name]}")
    from coosparse._kernels.cuda.errors import check_device_errors

    check_device_errors()
    return out


# Operations whose arithmetic is CuPy's own elementwise kernels, not coosparse's: CuPy compiles them with
# -ftz=true (and contraction), so float32 subnormals may differ there (docs/cuda.md). Reported, not failed.
CUPY_ARITHMETIC = ("mask_projection(accumulate)",)
MULTIPLY_SEEDS = (4, 5, 6, 14)  # the identity cases that multiply (below)
IDENTITY_DTYPES = {"float32": (np.float32, 1e-38), "float64": (np.float64, 1e-306), "complex64": (np.complex64, 1e-38),
                   "float16": (np.float16, 1.0)}  # (integers are exact: modular sums, no rounding to compare)


def identity_cases(n):
    """name -> fn(put) -> result (a COO or a dense array), built from fixed seeds (CPU and GPU see the same data)."""
    cases = {}
    for dname, (dtype, tiny) in IDENTITY_DTYPES.items():
        def build(seed, dtype=dtype, tiny=tiny):
            if seed in MULTIPLY_SEEDS:  # operands ~sqrt(tiny): their products are subnormal
                tiny = float(np.sqrt(tiny))
            rng = np.random.default_rng(seed)
            shape = (512, 1024)
            return {
                "u": random_coo(rng, shape, n, dtype=dtype, scale=tiny),  # sums and products subnormal
                "b": random_coo(rng, shape, n, dtype=dtype, scale=tiny),
                "c": random_coo(rng, shape, n, sorted=True, unique=True, dtype=dtype, scale=tiny),
                "c2": random_coo(rng, shape, n, sorted=True, unique=True, dtype=dtype, scale=tiny),
                "x": values(rng, shape, dtype, tiny),
                "big": values(rng, 4 * n, dtype, tiny),
                "src": values(rng, (n // 50, 50), dtype, tiny),
                # two rows, fill 1: a column's product has at most two factors (subnormal, not zero)
                "pair": random_coo(rng, (2, 4096), 4096, sorted=True, unique=True, dtype=dtype,
                                   scale=tiny)._with(fill_value=1),
            }

        def case(fn, seed, build=build):
            return lambda put: fn({k: put(v) for k, v in build(seed).items()})

        cases[f"coalesce {dname}"] = case(lambda d: d["u"].coalesce(), 1)
        cases[f"sparse_mask(dup x, mask) {dname}"] = case(lambda d: coosparse.sparse_mask(d["u"], d["c"]), 2)
        cases[f"sparse_mask(dup x, dup mask) {dname}"] = case(lambda d: coosparse.sparse_mask(d["u"], d["b"]), 3)
        cases[f"multiply(u, u) {dname}"] = case(lambda d: coosparse.multiply(d["u"], d["b"]), 4)
        cases[f"multiply(u, c, compact=False) {dname}"] = case(
            lambda d: coosparse.multiply(d["u"], d["c"], compact=False), 5)
        cases[f"multiply(c, c) {dname}"] = case(lambda d: coosparse.multiply(d["c"], d["c2"]), 6)
        cases[f"add(c, c) {dname}"] = case(lambda d: coosparse.add(d["c"], d["c2"]), 7)
        cases[f"to_dense(dup) {dname}"] = case(lambda d: d["u"].to_dense(), 8)
        cases[f"dense + COO {dname}"] = case(lambda d: d["x"] + d["u"], 9)
        cases[f"mask_projection(accumulate) {dname}"] = case(
            lambda d: coosparse.mask_projection(d["u"], d["b"], accumulate=True), 10)
        cases[f"as_strided_scatter(overlap) {dname}"] = case(
            lambda d: coosparse.as_strided_scatter(d["big"], d["src"], d["src"].shape, (7, 1), 3), 11)
        cases[f"sparse_mask(dense, mask) {dname}"] = case(lambda d: coosparse.sparse_mask(d["x"], d["u"]), 12)
        # reductions (issue 11): the GPU takes the sort strategies where the CPU fills a table by key
        cases[f"sum(dup, axis=1) {dname}"] = case(lambda d: coosparse.sum(d["u"], axis=1), 13)
        cases[f"prod(pair, axis=0, fill 1) {dname}"] = case(lambda d: coosparse.prod(d["pair"], axis=0), 14)
        cases[f"sum(c, axis=1) {dname}"] = case(lambda d: coosparse.sum(d["c"], axis=1), 16)
        if np.dtype(dtype).kind != "c":  # (complex numbers are unordered)
            cases[f"max(c, axis=0) {dname}"] = case(lambda d: coosparse.max(d["c"], axis=0), 15)
            cases[f"argmax(c, axis=1) {dname}"] = case(lambda d: coosparse.argmax(d["c"], axis=1), 17)
    return cases


def _host_arrays(r):
    if isinstance(r, coosparse.COO):
        return {"indices": np.asarray(r.indices), "values": np.asarray(r.values),
                "flags": np.array([r.is_sorted, r.is_unique])}
    return {"dense": np.asarray(r)}


def cpu_reference(path, n):
    """Compute every identity case on the CPU (Numba) and save the results (run in a background process)."""
    out = {}
    for name, fn in identity_cases(n).items():
        for k, v in _host_arrays(fn(lambda x: x)).items():
            out[f"{name}|{k}"] = v
    np.savez(path + ".tmp.npz", **out)
    os.replace(path + ".tmp.npz", path)


@section("identity")
def check_identity(dev, n, reference=None, deadline=None):
    wait_s = 240 if deadline is None else max(deadline - time.time() - 30, 0)
    if reference and not os.path.exists(reference):
        t0 = time.perf_counter()
        while not os.path.exists(reference) and time.perf_counter() - t0 < wait_s:
            time.sleep(0.5)
    if reference and os.path.exists(reference):
        ref = dict(np.load(reference))
        cpu = lambda name, fn: {k.split("|")[1]: v for k, v in ref.items() if k.split("|")[0] == name}  # noqa: E731
    else:
        log("[identity] no background reference: computing the CPU side here")
        cpu = lambda name, fn: _host_arrays(fn(lambda x: x))  # noqa: E731
    out = {}
    for name, fn in identity_cases(n).items():
        want = cpu(name, fn)
        got = _host_arrays(dev.get(fn(dev.put)))
        same = set(want) == set(got) and all(
            want[k].shape == got[k].shape and want[k].dtype == got[k].dtype
            and np.array_equal(np.ascontiguousarray(want[k]).view(np.uint8), np.ascontiguousarray(got[k]).view(np.uint8))
            for k in want)
        sub = ""
        if same and "values" in got and got["values"].dtype.kind in "fc":
            v = got["values"].view(got["values"].real.dtype) if got["values"].dtype.kind == "c" else got["values"]
            tiny = np.finfo(v.dtype).tiny
            nsub = int(np.count_nonzero((v != 0) & (np.abs(v) < tiny)))
            sub = f" ({nsub} subnormal values)"
        known = name.startswith(CUPY_ARITHMETIC)
        out[name] = ("bit-identical" + sub) if same else (
            "differs (CuPy's own arithmetic: -ftz=true; known, docs/cuda.md)" if known else "DIFFERS")
        if not same and not known:
            fail("identity", f"{name}: CPU and GPU results differ")
        log(f"[identity] {name}: {out[name]}")
    return out


def bad_input_ops(dev):
    """(name, fn, expected error) on check=False COOs with out-of-range indices or lying flags."""
    def coo(idx, vals, shape, **kw):
        return dev.put(coosparse.COO(np.asarray(idx), np.asarray(vals, dtype=np.float64), shape, check=False, **kw))

    big = 10**9
    bad = coo([[0, 3, big, 2, -7]], [1, 2, 3, 4, 5], (4,))
    bad2 = coo([[0, 1, 5, 1], [1, big, 0, -1]], [1, 2, 3, 4], (3, 3))
    liar = coo([[3, 1, 2, 2]], [1, 2, 3, 4], (4,), sorted=True, unique=True)
    good = coo([[0, 1, 2, 3]], [1, 2, 3, 4], (4,), sorted=True, unique=True)
    liar2 = coo([[0, 2, 1, 1], [0, 0, 1, 2]], [1, 2, 3, 4], (3, 3), sorted=True, unique=True)
    alias = coo([[0, 1], [5, 1]], [1, 2], (3, 3))  # (0, 5) has the key of (1, 2): only the sizes tell
    good2 = coo([[1], [2]], [1], (3, 3), sorted=True, unique=True)
    x, x2 = dev.put(np.arange(4.0)), dev.put(np.arange(9.0).reshape(3, 3))
    return [
        ("sparse_mask(dense, bad mask)", lambda: coosparse.sparse_mask(x, bad), IndexError),
        ("multiply(bad 2-d, dense)", lambda: coosparse.multiply(bad2, x2), IndexError),
        ("to_dense(bad)", lambda: bad.to_dense(), IndexError),
        ("dense + bad", lambda: x + bad, IndexError),
        ("coalesce(bad)", lambda: bad.coalesce(), IndexError),
        ("multiply(aliasing index, good, compact=False)",
         lambda: coosparse.multiply(alias, good2, compact=False), IndexError),
        ("add(liar, good)", lambda: coosparse.add(liar, good), ValueError),
        ("sparse_mask(liar, good)", lambda: coosparse.sparse_mask(liar, good), ValueError),
        ("sum(bad 2-d, axis=0)", lambda: coosparse.sum(bad2, axis=0), IndexError),
        ("sum(liar 2-d, axis=1)", lambda: coosparse.sum(liar2, axis=1), ValueError),
    ]


@section("badinput")
def check_bad_input(dev):
    """Out-of-range indices and lying flags (check=False): no fault, zeros, and a report (issue 14, defect 4)."""
    from coosparse._kernels.cuda.errors import check_device_errors

    out = {}
    for name, fn, error in bad_input_ops(dev):
        try:
            fn()
            check_device_errors()
            out[name] = "NOT REPORTED"
            fail("badinput", f"{name}: not reported")
        except (IndexError, ValueError) as e:
            ok = isinstance(e, error)
            out[name] = f"reported: {type(e).__name__}" if ok else f"WRONG ERROR {type(e).__name__}: {e}"
            if not ok:
                fail("badinput", out[name])
            check_device_errors()
        log(f"[badinput] {name}: {out[name]}")
    dev.synchronize()  # an illegal access would surface here
    return out


@section("gap")
def check_gap(dev, dry, n=8_000_000):
    """as_strided_scatter: fused fill pass vs copy + scatter for growing gaps (FILL_MAX_GAP's crossover)."""
    from coosparse._kernels.cuda import scatter as _layer

    if dry:
        n = 20_000
    rng = np.random.default_rng(2)
    x = dev.put(rng.random(n, dtype=np.float32))
    out = {"elements": n, "FILL_MAX_GAP": _layer.FILL_MAX_GAP, "rows": []}
    saved = _layer.FILL_MAX_GAP
    try:
        for gap in (2, 4, 8, 16, 32, 64, 128, 256):
            m = n // gap
            src = dev.put(rng.random(m, dtype=np.float32))
            row = {"gap": gap}
            for label, limit in (("fused", 1 << 30), ("copy+set", 0)):
                _layer.FILL_MAX_GAP = limit
                fn = lambda: coosparse.as_strided_scatter(x, src, (m,), (gap,))  # noqa: E731
                row[label + "_ms"] = 1e3 * _time(fn, dev, dry)
            row["fused_wins"] = row["fused_ms"] < row["copy+set_ms"]
            out["rows"].append(row)
            log(f"[gap] {row}")
    finally:
        _layer.FILL_MAX_GAP = saved
    wins = [r["gap"] for r in out["rows"] if r["fused_wins"]]
    out["largest_gap_where_fused_wins"] = max(wins) if wins else None
    return out


def _time(fn, dev, dry, calls=10, reps=5):
    if dry:
        fn()
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    from coosparse.bench.harness import cuda_event_timer

    fn()
    timer = cuda_event_timer(calls)
    return sorted(timer(fn) for _ in range(reps))[reps // 2]


@section("bench")
def run_bench(device, size, deadline):
    """Every case module on ``device``, module by module; rows written to bench.json as each finishes."""
    from types import SimpleNamespace

    from coosparse.bench import cli, discover, report
    from coosparse.bench.progress import Progress

    order = ["cases_coalesce", "cases_intersect", "cases_scatter", "cases_workloads", "cases_torch"]
    modules = sorted(discover.case_modules(), key=lambda m: (order.index(m) if m in order else len(order), m))
    args = SimpleNamespace(size=size, library=[], op=[], repeat=5, max_case_seconds=3.0, warmup=1, memory=False,
                           in_process=False)
    rows, done = [], {}
    for module in modules:
        if time.time() > deadline:
            done[module] = "skipped (time)"
            continue
        t0 = time.perf_counter()
        got = cli.run_module(module, device, args, Progress(enabled=False))
        rows += got
        done[module] = f"{len(got)} rows in {time.perf_counter() - t0:.0f} s"
        errors = [r for r in got if r.get("error") and r["library"].startswith("coosparse")]
        for r in errors:
            fail("bench", f"{r['op']} [{r['workload']}]: {r['error']}")
        with open(os.path.join(OUT, "bench.json"), "w") as f:
            json.dump({"device": device, "size": size, "rows": rows}, f, indent=1, default=str)
        with open(os.path.join(OUT, "bench.md"), "w") as f:
            f.write(report.format_table(rows) + "\n")
        log(f"[bench] {module}: {done[module]}")
    if rows:
        log(report.format_table(rows))
    return done


def main():
    global OUT
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-check-out"))
    ap.add_argument("--dry-run", action="store_true", help="no GPU: loader compile, emulated device, small sizes")
    ap.add_argument("--sections", default="load,sync,capture,identity,gap,bench")
    ap.add_argument("--cpu-reference", metavar="NPZ", help="only compute the identity section's CPU side into NPZ")
    ap.add_argument("--reference", metavar="NPZ", help="the CPU side computed by --cpu-reference (waited for)")
    ap.add_argument("--bench-size", default=os.environ.get("GPU_CHECK_BENCH_SIZE", "large"))
    ap.add_argument("--deadline", type=float, default=0,
                    help="unix time by which to finish: bench starts no module after it, identity waits until "
                         "30 s before it for the CPU reference")
    args = ap.parse_args()
    OUT = args.out
    os.makedirs(OUT, exist_ok=True)
    n_identity = 20_000 if args.dry_run else 200_000
    if args.cpu_reference:
        cpu_reference(args.cpu_reference, n_identity)
        return 0
    sections = set(args.sections.split(","))
    previous = os.path.join(OUT, "gpu_check.json")
    if os.path.exists(previous):  # a later step of gpu_check.sh adds to the same file
        with open(previous) as f:
            RESULTS.update(json.load(f))
    n_failures = len(RESULTS["failures"])
    dev = Emulated() if args.dry_run else Gpu()
    RESULTS["device"] = dev.name
    if "load" in sections:
        check_load(args.dry_run)
    if "sync" in sections:
        check_sync(dev, args.dry_run, n=20_000 if args.dry_run else 500_000)
    if "capture" in sections:
        check_capture(dev, args.dry_run)
    if "identity" in sections:
        check_identity(dev, n_identity, args.reference, args.deadline or None)
    if "gap" in sections:
        check_gap(dev, args.dry_run)
    if "badinput" in sections:
        check_bad_input(dev)
    if "bench" in sections:
        run_bench("cuda-emulated" if args.dry_run else "cuda", "small" if args.dry_run else args.bench_size,
                  args.deadline or time.time() + 3600)
    failed = RESULTS["failures"][n_failures:]
    log(f"{len(failed)} failures" + "".join(f"\n  {f}" for f in failed))
    save()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
