"""The sections of the one-shot GPU check (scripts/gpu_check.sh runs them through gpu_check_run.py).

Each call runs the sections named by ``--sections`` and writes their results
to ``--result`` (a JSON file, rewritten after every case, so whatever stops
the process keeps what finished). ``gpu_check_run.py`` orders and budgets the
calls and merges the files into ``$OUT/gpu_check.json``.

Sections:

``identity``
    CPU (Numba) and GPU results bit-identical, case by case: every kernel
    family (coalesce, the intersection family, unions, scatters, dense
    conversions, reductions over sparse, all and dense axes, SpMV/SpMM,
    dense x COO, SDDMM, SpGEMM), float32/float64 with subnormal sums and
    products, complex64, float16. The CPU side is computed by a background
    process (``--cpu-reference DIR``, started first, one ``.npz`` per case as
    it finishes), so Numba's compilation overlaps the GPU; the GPU side saves
    its results too (``--work``), and a case whose CPU result comes after the
    section's deadline is compared by ``identity-late``.
``bench``
    ``coosparse.bench`` at medium size for coalesce, the intersection family,
    scatter, reductions and linear algebra, against torch CUDA and cupyx (CUDA
    events), written to ``bench.json``/``bench.md`` after every case.
``capture``
    The sync-free list (tests/sync_free_cases.py): first the direct
    synchronisation test, one ~2 s spin kernel for all cases (an operation
    that synchronises waits for the spin; the others return before it ends;
    ``coalesce``, which must synchronise, is the control); then each case
    captured in a CUDA graph on a non-blocking stream, its outputs that do not
    alias inputs poisoned (two bit patterns) before each of two replays, each
    replay compared with the eager result.
``badinput``
    check=False COOs with out-of-range indices and lying flags: no fault, and
    each reported with the device error's own message (``check_device_errors``
    or the next synchronising call). gpu_check_run.py runs it, with a small
    ``identity``, under ``compute-sanitizer`` where that exists.
``gap``
    as_strided_scatter's fused fill pass against copy + scatter for growing
    gaps (the measured crossover for ``FILL_MAX_GAP``).
``load``
    Every kernel file built by the loader and loaded, and no ``.ftz`` in the
    PTX of the files compiled with the loader's options (background).

``--dry-run`` runs everything a CPU can, on the emulated device
(coosparse.testing.device): identity against the emulated CUDA layer, the
sync-free cases under the emulation's transfer check instead of the spin and
the capture, the bench cases on ``cuda-emulated`` at small size.
``GPU_CHECK_SIMULATE_SLOW=<section>[,...]`` makes a section hang (a test
shows the later sections still run).
"""
from __future__ import annotations

import argparse
import contextlib
import glob
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

RESULTS = {}
RESULT_PATH = None
DEVICE_ERROR_PREFIX = "a CUDA kernel met invalid input"


class Interrupted(Exception):
    """The section was cut (SIGINT from the runner at its deadline, or from outside)."""


def log(*a):
    print(*a, flush=True)


def save():
    if RESULT_PATH is None:
        return
    tmp = RESULT_PATH + ".tmp"
    with open(tmp, "w") as f:
        json.dump(RESULTS, f, indent=1, default=str)
    os.replace(tmp, RESULT_PATH)


def fail(name, what):
    RESULTS[name].setdefault("failures", []).append(what)
    log(f"[{name}] FAIL {what}")


def record(name, key, value):
    """One finished case of section ``name``: kept and saved at once."""
    RESULTS[name].setdefault("cases", {})[key] = value
    save()


def run_section(name, fn, *args, **kw):
    RESULTS[name] = {"status": "running", "cases": {}, "failures": []}
    save()
    t0 = time.perf_counter()
    log(f"== {name}")
    try:
        if name in os.environ.get("GPU_CHECK_SIMULATE_SLOW", "").split(","):
            log(f"[{name}] simulated slow section: hanging until cut")
            while True:
                time.sleep(0.2)
        extra = fn(*args, **kw)
        if extra:
            RESULTS[name].update(extra)
        RESULTS[name]["status"] = "ran"
    except (KeyboardInterrupt, Interrupted):
        RESULTS[name]["status"] = "cut"
        RESULTS[name]["why"] = "interrupted (SIGINT: its deadline, or from outside)"
        log(f"[{name}] interrupted; {len(RESULTS[name]['cases'])} cases kept")
    except Exception as e:  # record and go on
        RESULTS[name]["status"] = "error"
        RESULTS[name]["error"] = f"{type(e).__name__}: {e}"
        fail(name, f"section raised {type(e).__name__}: {e}")
        log(traceback.format_exc())
    RESULTS[name]["seconds"] = round(time.perf_counter() - t0, 2)
    save()


# ---------------------------------------------------------------------------- devices
class Gpu:
    name = "cuda"
    dry = False

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
    dry = True
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


def _arrays(r):
    if isinstance(r, coosparse.COO):
        return [r.indices, r.values]
    if isinstance(r, tuple):
        return [x for v in r for x in _arrays(v)]
    return [r]


# ---------------------------------------------------------------------------- load (background)
def check_load(dry):
    from coosparse._kernels.cuda import sources as _sources
    from coosparse._kernels.cuda.compile_check import CtypesNVRTC, compile_file, ftz_instructions, load_nvrtc

    name = "load"
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
    RESULTS[name].update(arch=arch, nvrtc=".".join(map(str, nvrtc.version)))
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
        if dry or fname in ("segment.cu", "union.cu", "reduce.cu", "linalg.cu"):  # (CI checks every file)
            ptx, _ = compile_file(nvrtc, fname, f"compute_{cc}")
            ftz = ftz_instructions(ptx)
            row["ftz_instructions"] = len(ftz)
            if ftz:
                fail(name, f"{fname}: {len(ftz)} .ftz instructions, e.g. {ftz[0]}")
        record(name, fname, row)
        log(f"[load] {fname}: {row}")


# ---------------------------------------------------------------------------- identity
# Operations whose arithmetic is CuPy's own kernels, not coosparse's: CuPy compiles its elementwise kernels
# with -ftz=true (and contraction), and its reductions add in an order of their own (not NumPy's pairwise
# sum): float results may differ there (docs/cuda.md, "Float semantics"). Reported, not failed.
CUPY_ARITHMETIC = ("mask_projection(accumulate)", "sum(hybrid, dense axes)")
MULTIPLY_SEEDS = (4, 5, 6, 14, 20, 21, 22, 23, 24, 25)  # the identity cases that multiply (below)
IDENTITY_DTYPES = {"float32": (np.float32, 1e-38), "float64": (np.float64, 1e-306), "complex64": (np.complex64, 1e-38),
                   "float16": (np.float16, 1.0)}  # (integers are exact: modular sums, no rounding to compare)


def identity_cases(n):
    """name -> fn(put) -> result (a COO or a dense array), built from fixed seeds (CPU and GPU see the same data).

    ``$GPU_CHECK_IDENTITY_CASES`` (names separated by ``|``) keeps only those cases (the tests' quick runs).
    """
    only = [c for c in os.environ.get("GPU_CHECK_IDENTITY_CASES", "").split("|") if c]
    cases = _identity_cases(n)
    return {k: v for k, v in cases.items() if k in only} if only else cases


def _identity_cases(n):
    cases = {}
    for dname, (dtype, tiny) in IDENTITY_DTYPES.items():
        def build(seed, dtype=dtype, tiny=tiny):
            if seed in MULTIPLY_SEEDS:  # operands ~sqrt(tiny): their products are subnormal
                tiny = float(np.sqrt(tiny))
            rng = np.random.default_rng(seed)
            shape = (512, 1024)
            k = 37  # dot products of 37 terms: four full rounds of eight lanes and a tail
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
                # long segments: n entries in 4 columns (column sums of n/4 terms each)
                "tall": random_coo(rng, (max(n, 4096), 4), n, dtype=dtype, scale=tiny),
                # values near 1 with fill 1: a product over every axis that neither vanishes nor overflows
                "near1": random_coo(rng, shape, n, sorted=True, unique=True, dtype=dtype,
                                    scale=1.0)._with(fill_value=1),
                "hyb": random_coo(rng, (256, 64, 8), n // 8, sparse_ndim=2, dtype=dtype, scale=tiny),
                "rhs": values(rng, (1024, 3), dtype, tiny),
                "vec": values(rng, 1024, dtype, tiny),
                "lhs": values(rng, (3, 512), dtype, tiny),
                "fx": values(rng, (512, k), dtype, tiny),
                "fy": values(rng, (k, 1024), dtype, tiny),
                "sq": random_coo(rng, (1024, 1024), n // 8, sorted=True, unique=True, dtype=dtype, scale=tiny),
            }

        def case(fn, seed, build=build):
            return lambda put: fn({k: put(v) for k, v in build(seed).items()})

        def near1(d):
            a = d["near1"]
            return coosparse.prod(a._with(values=1 + a.values * (1e-3 if a.dtype != np.float16 else 1e-2)))

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
        cases[f"as_strided_scatter(fused fill) {dname}"] = case(
            lambda d: coosparse.as_strided_scatter(d["big"], d["big"][: 2 * n], (2 * n,), (2,)), 11)
        cases[f"sparse_mask(dense, mask) {dname}"] = case(lambda d: coosparse.sparse_mask(d["x"], d["u"]), 12)
        # the other families: a union with its gathers (elementwise), merges (join), range takes (indexing)
        cases[f"concatenate(c, c, axis=1) {dname}"] = case(
            lambda d: coosparse.concatenate([d["c"], d["c2"]], axis=1), 30)
        cases[f"c[100:400] {dname}"] = case(lambda d: d["c"][100:400], 31)
        cases[f"c[[3, 7, 7, 500]] {dname}"] = case(lambda d: d["c"][[3, 7, 7, 500]], 32)
        # reductions: the GPU takes the sort strategies where the CPU fills a table by key
        cases[f"sum(dup, axis=1) {dname}"] = case(lambda d: coosparse.sum(d["u"], axis=1), 13)
        cases[f"prod(pair, axis=0, fill 1) {dname}"] = case(lambda d: coosparse.prod(d["pair"], axis=0), 14)
        cases[f"sum(c, axis=1) {dname}"] = case(lambda d: coosparse.sum(d["c"], axis=1), 16)
        # long segments: the blocked order (docs/design/determinism.md) on both layers
        cases[f"sum over every axis {dname}"] = case(lambda d: coosparse.sum(d["u"]), 18)
        cases[f"sum(tall, axis=0) {dname}"] = case(lambda d: coosparse.sum(d["tall"], axis=0), 19)
        cases[f"prod over every axis (near 1, fill 1) {dname}"] = case(near1, 26)
        cases[f"sum(hybrid, dense axes) {dname}"] = case(lambda d: coosparse.sum(d["hyb"], axis=2), 27)
        if np.dtype(dtype).kind != "c":  # (complex numbers are unordered)
            cases[f"maximum(c, c) {dname}"] = case(lambda d: np.maximum(d["c"], d["c2"]), 29)
            cases[f"max(c, axis=0) {dname}"] = case(lambda d: coosparse.max(d["c"], axis=0), 15)
            cases[f"argmax(c, axis=1) {dname}"] = case(lambda d: coosparse.argmax(d["c"], axis=1), 17)
            cases[f"max over every axis {dname}"] = case(lambda d: coosparse.max(d["c"]), 28)
        if dname != "float16":  # (the products run in the value dtype; float16 has no linear algebra kernels)
            cases[f"matmul(sorted coo, dense) {dname}"] = case(lambda d: coosparse.matmul(d["c"], d["rhs"]), 20)
            cases[f"matmul(unsorted coo, dense) {dname}"] = case(lambda d: d["u"] @ d["rhs"], 21)
            cases[f"matmul(coo, vector) {dname}"] = case(lambda d: coosparse.matmul(d["c"], d["vec"]), 22)
            cases[f"matmul(dense, coo) {dname}"] = case(lambda d: d["lhs"] @ d["u"], 23)
            cases[f"sampled_matmul(k=37) {dname}"] = case(
                lambda d: coosparse.sampled_matmul(d["u"], d["fx"], d["fy"]), 24)
            cases[f"matmul(coo, coo) {dname}"] = case(lambda d: coosparse.matmul(d["sq"], d["sq"]), 25)
    return cases


def _host_arrays(r):
    if isinstance(r, coosparse.COO):
        return {"indices": np.asarray(r.indices), "values": np.asarray(r.values),
                "flags": np.array([r.is_sorted, r.is_unique])}
    return {"dense": np.asarray(r)}


def _save_npz(path, arrays):
    tmp = path + ".tmp.npz"
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


def _case_file(root, i):
    return os.path.join(root, f"{i:03d}.npz")


def cpu_reference(root, n, shard=0, shards=1):
    """The identity cases on the CPU (Numba), one file per case as it finishes (a background process).

    ``shards`` processes split the cases (case i goes to shard i mod shards): Numba compiles cold on a
    fresh machine, and the processes compile in parallel.
    """
    os.makedirs(root, exist_ok=True)
    for i, (name, fn) in enumerate(identity_cases(n).items()):
        if i % shards != shard:
            continue
        t0 = time.perf_counter()
        try:
            arrays = _host_arrays(fn(lambda x: x))
        except Exception as e:  # the GPU side reports it as a difference
            arrays = {"error": np.array(f"{type(e).__name__}: {e}")}
        arrays["name"] = np.array(name)
        _save_npz(_case_file(root, i), arrays)
        print(f"[cpu-reference] {name}: {time.perf_counter() - t0:.2f} s", flush=True)


def _compare(want, got):
    """(verdict, ok) of two saved results (dicts of arrays)."""
    if "error" in want or "error" in got:
        return f"ERROR cpu={want.get('error')} gpu={got.get('error')}", False
    keys = set(want) - {"name"}
    same = keys == set(got) - {"name"} and all(
        want[k].shape == got[k].shape and want[k].dtype == got[k].dtype
        and np.array_equal(np.ascontiguousarray(want[k]).view(np.uint8), np.ascontiguousarray(got[k]).view(np.uint8))
        for k in keys)
    if not same:
        return "DIFFERS", False
    out = "bit-identical"
    v = got.get("values", got.get("dense"))
    if v is not None and v.dtype.kind in "fc":
        r = v.view(v.real.dtype) if v.dtype.kind == "c" else v
        nsub = int(np.count_nonzero((r != 0) & (np.abs(r) < np.finfo(r.dtype).tiny)))
        out += f" ({nsub} subnormal values)"
    return out, True


def _load(path):
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def _verdict(name, want, got):
    verdict, ok = _compare(want, got)
    known = name.startswith(CUPY_ARITHMETIC)
    if not ok and known:
        return verdict + " (CuPy's own arithmetic or order; known, docs/cuda.md)", True
    return verdict, ok


def check_identity(dev, n, ref_dir=None, work=None, deadline=None, label="identity"):
    """GPU results of every case, compared with the CPU's as they come; both sides saved per case."""
    cases = list(identity_cases(n).items())
    gpu_dir = os.path.join(work, "gpu") if work and label == "identity" else None  # (for identity-late)
    if gpu_dir:
        os.makedirs(gpu_dir, exist_ok=True)
    pending = {}
    RESULTS[label]["total"] = len(cases)

    def compare_ready(wait_until=None):
        for i in sorted(pending):
            path = _case_file(ref_dir, i)
            while wait_until and not os.path.exists(path) and time.time() < wait_until:
                time.sleep(0.25)
            if not os.path.exists(path):
                continue
            name, got = pending.pop(i)
            verdict, ok = _verdict(name, _load(path), got)
            if not ok:
                fail(label, f"{name}: CPU and GPU results differ ({verdict})")
            record(label, name, verdict)
            log(f"[{label}] {name}: {verdict}")

    for i, (name, fn) in enumerate(cases):
        try:
            got = _host_arrays(dev.get(fn(dev.put)))
        except (KeyboardInterrupt, Interrupted):
            raise
        except Exception as e:
            got = {"error": np.array(f"{type(e).__name__}: {e}")}
        got["name"] = np.array(name)
        if gpu_dir:
            _save_npz(_case_file(gpu_dir, i), got)
        if ref_dir is None:  # no background reference (a small run): the CPU side here
            want = _host_arrays(fn(lambda x: x))
            verdict, ok = _verdict(name, want, got)
            if not ok:
                fail(label, f"{name}: CPU and GPU results differ ({verdict})")
            record(label, name, verdict)
            log(f"[{label}] {name}: {verdict}")
        else:
            pending[i] = (name, got)
            compare_ready()
    if ref_dir is not None:
        compare_ready(wait_until=deadline - 5 if deadline else time.time() + 240)
    if pending:
        RESULTS[label]["awaiting_cpu"] = [name for name, _ in pending.values()]
        log(f"[{label}] {len(pending)} cases wait for the CPU reference (compared by identity-late)")


def check_identity_late(ref_dir, work, deadline):
    """The identity cases whose CPU result came after the identity section's deadline."""
    gpu_dir = os.path.join(work, "gpu")
    earlier = os.path.join(work, "results", "identity.json")
    done = {}
    if os.path.exists(earlier):
        with open(earlier) as f:
            done = json.load(f).get("identity", {}).get("cases", {})
    for path in sorted(glob.glob(os.path.join(gpu_dir, "*.npz"))):
        got = _load(path)
        name = str(got["name"])
        if name in done:
            continue
        ref = os.path.join(ref_dir, os.path.basename(path))
        while not os.path.exists(ref) and time.time() < deadline - 2:
            time.sleep(0.25)
        if not os.path.exists(ref):
            record("identity-late", name, "no CPU reference in time")
            continue
        verdict, ok = _verdict(name, _load(ref), got)
        if not ok:
            fail("identity-late", f"{name}: CPU and GPU results differ ({verdict})")
        record("identity-late", name, verdict)
        log(f"[identity-late] {name}: {verdict}")


# ---------------------------------------------------------------------------- capture (sync + graphs)
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


def _sync_test(ops, spin_s=2.0):
    """One spin for every case: each call must return while the spin still runs (re-queued when it ends)."""
    import cupy

    name = "capture"
    spin, per_s = _spin_kernel()
    RESULTS[name]["spin_cycles_per_s"] = per_s
    cycles = np.int64(spin_s * per_s)
    stream = cupy.cuda.get_current_stream()
    out, pending, spins = {}, list(ops), 0
    while pending and spins < len(ops) + 3:
        spin((1,), (1,), (cycles,))
        ended = stream.record()
        t_spin = time.perf_counter()
        spins += 1
        while pending and not ended.done:
            label = pending[0]
            left = spin_s - (time.perf_counter() - t_spin)
            t0 = time.perf_counter()
            ops[label]()
            t_call = time.perf_counter() - t0
            if not ended.done:
                out[label] = "returns at once"
            elif t_call > 0.5 * left:
                out[label] = f"SYNCHRONISES (waited {t_call:.3f} s for the queued spin)"
            else:  # the spin ended on its own during the call: try again behind a fresh one
                break
            pending.pop(0)
        stream.synchronize()
    for label in pending:
        out[label] = "INCONCLUSIVE (the spin never outlasted the call)"
    return out


def _may_alias(a, arrays):
    import cupy

    return any(cupy.may_share_memory(a, b) for b in arrays)


def _poison(a, pattern):
    if a.size == 0:
        return
    if a.flags.c_contiguous or a.flags.f_contiguous:
        (a if a.flags.c_contiguous else a.T).reshape(-1).view(np.uint8).fill(pattern)
        return
    if a.dtype.kind == "b":
        a.fill(pattern == 0xA5)
    elif a.dtype.kind in "iu":
        a.fill(pattern)
    else:
        a.fill(np.nan if pattern == 0xA5 else -np.inf)


def _same(p, q):
    import cupy

    if p.shape != q.shape or p.dtype != q.dtype:
        return False
    if (p.flags.c_contiguous and q.flags.c_contiguous) and p.size:
        return bool(cupy.array_equal(p.reshape(-1).view(np.uint8), q.reshape(-1).view(np.uint8)))
    return bool(cupy.array_equal(p, q, equal_nan=p.dtype.kind in "fc"))


def check_capture(dev, n):
    name = "capture"
    ops = sync_free.cases(dev.put, n=n, seed=1)
    if dev.dry:  # no spin and no graphs without a GPU: the emulation's transfer check instead
        for label, fn in ops.items():
            fn()
            try:
                with dev.strict.sync_free():
                    fn()
                record(name, label, "no transfer (emulated device: the spin and the capture need a GPU)")
            except dev.strict.TransferError as e:
                fail(name, f"{label}: {e}")
                record(name, label, f"TRANSFERS: {e}")
        return
    import cupy

    from coosparse._kernels.cuda.errors import check_device_errors

    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        ops = sync_free.cases(dev.put, n=n, seed=1)
        eager = {}
        for label, fn in ops.items():  # warm-up: kernels loaded, memory pool filled, error word allocated
            eager[label] = fn()
        stream.synchronize()
        control = dev.put(random_coo(np.random.default_rng(1), (2048, 4096), n))
        sync = _sync_test(dict(ops, **{"coalesce (control: synchronises)": control.coalesce}))
    for label, verdict in sync.items():
        if label.startswith("coalesce"):  # the control must be seen to wait, else the test sees nothing
            if not verdict.startswith("SYNCHRONISES"):
                fail(name, f"{label}: {verdict} (the test cannot see synchronisation)")
        elif verdict.startswith(("SYNCHRONISES", "INCONCLUSIVE")):
            fail(name, f"{label}: {verdict}")
    RESULTS[name]["sync"] = sync
    save()
    mode = getattr(cupy.cuda.runtime, "streamCaptureModeRelaxed", None)
    for label, fn in ops.items():
        try:
            with stream:
                ref = eager[label]
                stream.begin_capture(mode) if mode is not None else stream.begin_capture()
                try:
                    captured = fn()
                finally:
                    graph = stream.end_capture()
                outs, refs = _arrays(captured), _arrays(ref)
                poisoned = [a for a in outs if not _may_alias(a, refs)]
                verdicts = []
                for pattern in (0xA5, 0x5A):  # two patterns: an element the replay leaves alone shows in one
                    for a in poisoned:
                        _poison(a, pattern)
                    graph.launch(stream)
                    stream.synchronize()
                    verdicts.append(all(_same(p, q) for p, q in zip(refs, outs)))
            verdict = (f"captured; {len(poisoned)} of {len(outs)} outputs poisoned; two replays "
                       + ("match" if all(verdicts) else f"DIFFER ({verdicts})"))
            if not all(verdicts):
                fail(name, f"{label}: a replay differs from the eager result")
        except (KeyboardInterrupt, Interrupted):
            raise
        except Exception as e:
            verdict = f"NOT CAPTURABLE: {type(e).__name__}: {e}"
            fail(name, f"{label}: {type(e).__name__}: {e}")
            with contextlib.suppress(Exception):
                cupy.cuda.Device().synchronize()
        record(name, label, verdict)
        log(f"[capture] {label}: {verdict}")
    check_device_errors()


# ---------------------------------------------------------------------------- bad input
def bad_input_ops(dev):
    """(name, fn, expected error class, texts one of which it names) on check=False COOs with bad input."""
    from coosparse._kernels.cuda import errors

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
    rhs = dev.put(np.ones((3, 2)))
    # the message names what the kernels met: an index, key, gather or scatter bit for IndexError (which one
    # depends on the kernel that met it first), the order bit for ValueError
    index = tuple(errors._TEXT[b] for b in (errors.INDEX, errors.KEY, errors.GATHER, errors.SCATTER))
    order = (errors._TEXT[errors.ORDER],)
    return [
        ("sparse_mask(dense, bad mask)", lambda: coosparse.sparse_mask(x, bad), IndexError, index),
        ("multiply(bad 2-d, dense)", lambda: coosparse.multiply(bad2, x2), IndexError, index),
        ("to_dense(bad)", lambda: bad.to_dense(), IndexError, index),
        ("dense + bad", lambda: x + bad, IndexError, index),
        ("coalesce(bad)", lambda: bad.coalesce(), IndexError, index),
        ("multiply(aliasing index, good, compact=False)",
         lambda: coosparse.multiply(alias, good2, compact=False), IndexError, index),
        ("add(liar, good)", lambda: coosparse.add(liar, good), ValueError, order),
        ("sparse_mask(liar, good)", lambda: coosparse.sparse_mask(liar, good), ValueError, order),
        ("sum(bad 2-d, axis=0)", lambda: coosparse.sum(bad2, axis=0), IndexError, index),
        ("sum(liar 2-d, axis=1)", lambda: coosparse.sum(liar2, axis=1), ValueError, order),
        ("matmul(bad 2-d, dense)", lambda: coosparse.matmul(bad2, rhs), IndexError, index),
        ("matmul(liar 2-d, dense)", lambda: coosparse.matmul(liar2, rhs), ValueError, order),
    ]


def check_bad_input(dev):
    """Out-of-range indices and lying flags (check=False): no fault, and the device error's own report."""
    from coosparse._kernels.cuda.errors import check_device_errors

    name = "badinput"
    for label, fn, error, texts in bad_input_ops(dev):
        try:
            fn()
            check_device_errors()
            verdict = "NOT REPORTED"
        except (IndexError, ValueError) as e:
            msg = str(e)
            said = [t for t in texts if t in msg]
            if type(e) is not error or not msg.startswith(DEVICE_ERROR_PREFIX) or not said:
                verdict = (f"WRONG REPORT {type(e).__name__}: {msg} (expected the device error's {error.__name__} "
                           f"naming one of {texts})")
            else:
                verdict = f"reported: {type(e).__name__} ({said[0]})"
            with contextlib.suppress(IndexError, ValueError):
                check_device_errors()  # nothing left over for the next case
        if not verdict.startswith("reported"):
            fail(name, f"{label}: {verdict}")
        record(name, label, verdict)
        log(f"[badinput] {label}: {verdict}")
    dev.synchronize()  # an illegal access would surface here


# ---------------------------------------------------------------------------- gap
def check_gap(dev, n=8_000_000):
    """as_strided_scatter: fused fill pass vs copy + scatter for growing gaps (FILL_MAX_GAP's crossover)."""
    from coosparse._kernels.cuda import scatter as _layer

    name = "gap"
    if dev.dry:
        n = 20_000
    rng = np.random.default_rng(2)
    x = dev.put(rng.random(n, dtype=np.float32))
    RESULTS[name].update(elements=n, FILL_MAX_GAP=_layer.FILL_MAX_GAP)
    saved, wins = _layer.FILL_MAX_GAP, []
    try:
        for gap in (2, 4, 8, 16, 32, 64, 128, 256):
            m = n // gap
            src = dev.put(rng.random(m, dtype=np.float32))
            row = {}
            for what, limit in (("fused", 1 << 30), ("copy+set", 0)):
                _layer.FILL_MAX_GAP = limit
                fn = lambda: coosparse.as_strided_scatter(x, src, (m,), (gap,))  # noqa: E731
                row[what + "_ms"] = 1e3 * _time(fn, dev)
            row["fused_wins"] = row["fused_ms"] < row["copy+set_ms"]
            if row["fused_wins"]:
                wins.append(gap)
            record(name, f"gap {gap}", row)
            log(f"[gap] {gap}: {row}")
    finally:
        _layer.FILL_MAX_GAP = saved
    return {"largest_gap_where_fused_wins": max(wins) if wins else None}


def _time(fn, dev, calls=10, reps=5):
    if dev.dry:
        fn()
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    from coosparse.bench.harness import cuda_event_timer

    fn()
    timer = cuda_event_timer(calls)
    return sorted(timer(fn) for _ in range(reps))[reps // 2]


# ---------------------------------------------------------------------------- bench
BENCH_MODULES = ("cases_coalesce", "cases_intersect", "cases_scatter", "cases_reduce", "cases_linalg")
"""The bench section's modules, in this order (the issue's: coalesce, intersections, scatter, reductions, linalg)."""


def run_bench(device, size, deadline, out_dir, ops=()):
    """The modules of BENCH_MODULES on ``device``; bench.json and bench.md rewritten after every case."""
    from types import SimpleNamespace

    from coosparse.bench import cli, report
    from coosparse.bench.progress import Progress

    name = "bench"
    args = SimpleNamespace(size=size, library=[], op=list(ops), repeat=5, max_case_seconds=2.0, warmup=1,
                           memory=False, in_process=False)
    rows = []

    def write():
        with open(os.path.join(out_dir, "bench.json.tmp"), "w") as f:
            json.dump({"device": device, "size": size, "rows": rows}, f, indent=1, default=str)
        os.replace(os.path.join(out_dir, "bench.json.tmp"), os.path.join(out_dir, "bench.json"))
        with open(os.path.join(out_dir, "bench.md"), "w") as f:
            f.write(report.format_table(rows) + "\n")

    class Saving(Progress):  # a case's rows arrive, then advance(): save there
        def advance(self, n=1):
            write()
            RESULTS[name]["rows"] = len(rows)
            save()

    RESULTS[name].update(device=device, size=size)
    only = [m for m in os.environ.get("GPU_CHECK_BENCH_MODULES", "").split(",") if m]
    for module in (m for m in BENCH_MODULES if not only or m in only):
        if time.time() > deadline - 15:
            record(name, module, "cut (its deadline: no module starts in its last 15 s)")
            continue
        t0 = time.perf_counter()
        record(name, module, "running")
        before = len(rows)
        try:
            cli.run_module(module, device, args, Saving(enabled=False), rows)
        except KeyboardInterrupt:
            record(name, module, f"cut after {len(rows) - before} rows (interrupted at its deadline)")
            write()
            raise
        got = rows[before:]
        for r in got:
            if r.get("error") and r["library"].startswith("coosparse"):
                fail(name, f"{r['op']} [{r['workload']}]: {r['error']}")
        record(name, module, f"{len(got)} rows in {time.perf_counter() - t0:.0f} s")
        write()
        log(f"[bench] {module}: {len(got)} rows")
    if rows:
        log(report.format_table(rows))


# ---------------------------------------------------------------------------- main
def main(argv=None):
    global RESULT_PATH
    ap = argparse.ArgumentParser()
    ap.add_argument("--sections", default="identity")
    ap.add_argument("--result", help="JSON file of this call's sections (rewritten after every case)")
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-check-out"), help="where bench.json/.md go")
    ap.add_argument("--work", help="scratch directory shared by the calls of one run (saved GPU results)")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: the emulated device, small sizes")
    ap.add_argument("--cpu-reference", metavar="DIR", help="only compute the identity cases on the CPU, into DIR")
    ap.add_argument("--shard", default="0/1", help="with --cpu-reference: this process's share, i/N")
    ap.add_argument("--reference", metavar="DIR", help="the CPU side written by --cpu-reference (waited for)")
    ap.add_argument("--identity-n", type=int, default=0, help="entries per identity operand (0: the default)")
    ap.add_argument("--label", default="identity", help="the identity section's name in the results")
    ap.add_argument("--bench-size", default=os.environ.get("GPU_CHECK_BENCH_SIZE", "medium"))
    ap.add_argument("--bench-ops", default=os.environ.get("GPU_CHECK_BENCH_OPS", ""),
                    help="only these bench ops (comma list; default: every op of the modules)")
    ap.add_argument("--deadline", type=float, default=0, help="unix time by which the sections must end")
    args = ap.parse_args(argv)
    n_identity = args.identity_n or (5_000 if args.dry_run else 200_000)
    if args.cpu_reference:
        shard, shards = (int(x) for x in args.shard.split("/"))
        cpu_reference(args.cpu_reference, n_identity, shard, shards)
        return 0
    RESULT_PATH = args.result
    os.makedirs(args.out, exist_ok=True)
    deadline = args.deadline or time.time() + 3600
    dev = Emulated() if args.dry_run else Gpu()
    for sec in args.sections.split(","):
        if sec == "load":
            run_section("load", check_load, args.dry_run)
        elif sec == "identity":
            run_section(args.label, check_identity, dev, n_identity, args.reference, args.work, deadline, args.label)
        elif sec == "identity-late":
            run_section("identity-late", check_identity_late, args.reference, args.work, deadline)
        elif sec == "capture":
            run_section("capture", check_capture, dev, 20_000 if args.dry_run else 500_000)
        elif sec == "badinput":
            run_section("badinput", check_bad_input, dev)
        elif sec == "gap":
            run_section("gap", check_gap, dev)
        elif sec == "bench":
            ops = [o for o in args.bench_ops.split(",") if o]
            run_bench_section = lambda: run_bench(  # noqa: E731
                "cuda-emulated" if args.dry_run else "cuda", "small" if args.dry_run else args.bench_size,
                deadline, args.out, ops)
            run_section("bench", run_bench_section)
        else:
            raise SystemExit(f"unknown section {sec!r}")
    failed = [f for r in RESULTS.values() for f in r.get("failures", [])]
    cut = [k for k, r in RESULTS.items() if r.get("status") == "cut"]
    log(f"{len(failed)} failures" + "".join(f"\n  {f}" for f in failed))
    return 130 if cut else (1 if failed else 0)


if __name__ == "__main__":
    sys.exit(main())
