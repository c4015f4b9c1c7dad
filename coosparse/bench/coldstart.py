"""First use: each operation's first call in a fresh process with an empty Numba cache.

``python -m coosparse.bench --suite coldstart`` runs every case below in a
new Python process whose ``NUMBA_CACHE_DIR`` is a new, empty directory (what a
new virtual environment, a CI job, a container or a Dask worker image meets),
and times, inside that process: the imports, the first call (the kernels it
needs compiled and cached), and a second call. A further process on the same,
now filled, cache gives the warm-cache first call (every later session).
pydata/sparse, also built on Numba, is measured the same way where it offers
the operation. Nothing here is a test: the figures depend on the machine and
its load (reported beside them), and no test asserts a time.

Cases: ``coalesce``, ``a * b``, ``a + b``, ``a @ x``, ``a @ b``,
``a.sum(axis=1)``, ``a[idx]``, ``np.sqrt(a)``, ``sampled_matmul``,
``to_dense``, each on its own; and ``script``, the ten calls in that order in
one process (its operands come from coalescing, as a user's script would). The
arrays: ``n x n`` with ``nnz`` random entries and float64 values (medium: 3000
x 3000, 9,000 entries); an operation's operands are built with NumPy and
handed over coalesced (``check=False``), so a case's first call compiles only
what that operation needs.

``--breakdown`` adds one more cold process per case that records each Numba
compilation (``numba.core.event``, exclusive of the compilations nested in
it): which kernel, its argument types, its seconds, and whether it is a
``parallel=True`` kernel. Numba's own helpers compiled on the way (``np.empty``
for one dtype, ...) are listed under their Numba names. That process imports
Numba before the first call, so its first-call time is not the headline one.

Usage::

    python -m coosparse.bench --suite coldstart                  # all cases, one cold run each
    python -m coosparse.bench --suite coldstart --op add --repeat 3 --breakdown
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TAG = "@@coldstart "

SIZES = {"small": (300, 900), "medium": (3000, 9000), "large": (30000, 90000)}

# name, label, coosparse call, pydata/sparse call (None: no equivalent). Calls are expressions
# over the operands built by _operands: a, b (coalesced), ra, rb (raw: (indices, values) with
# duplicates), x (vector), X, Y (dense factors), idx (row numbers).
CASES = [
    ("coalesce", "a.coalesce()", "coosparse.COO(ra[0], ra[1], shape).coalesce()",
     "sparse.COO(ra[0], ra[1], shape=shape)"),
    ("multiply", "a * b", "a * b", "a * b"),
    ("add", "a + b", "a + b", "a + b"),
    ("matvec", "a @ x", "a @ x", "a @ x"),
    ("matmul", "a @ b", "a @ b", "a @ b"),
    ("sum", "a.sum(axis=1)", "a.sum(axis=1)", "a.sum(axis=1)"),
    ("getitem", "a[idx]", "a[idx]", "a[idx]"),
    ("sqrt", "np.sqrt(a)", "np.sqrt(a)", "np.sqrt(a)"),
    ("sampled_matmul", "sampled_matmul(a, X, Y)", "coosparse.sampled_matmul(a, X, Y)", None),
    ("to_dense", "a.to_dense()", "a.to_dense()", "a.todense()"),
]
SCRIPT = "script"
LIBRARIES = ("coosparse", "pydata")


# ---------------------------------------------------------------- the child process
def _operands(n, nnz, seed=0):
    """NumPy arrays for every case: raw (with duplicates) and coalesced pairs, dense operands."""
    import numpy as np

    rng = np.random.default_rng(seed)
    raw, coalesced = [], []
    for _ in range(2):
        idx = rng.integers(0, n, (2, nnz))
        val = rng.random(nnz)
        raw.append((idx, val))
        keys, inverse = np.unique(idx[0] * n + idx[1], return_inverse=True)
        sums = np.zeros(keys.size)
        np.add.at(sums, inverse, val)
        coalesced.append((np.stack([keys // n, keys % n]), sums))
    dense = {"x": rng.random(n), "X": rng.random((n, 16)), "Y": rng.random((16, n)),
             "idx": rng.integers(0, n, 300)}
    return raw, coalesced, dense


class _Recorder:
    """Numba compilations, each timed exclusive of the compilations nested in it."""

    def __init__(self):
        from numba.core import event

        self.stack, self.kernels = [], []
        recorder = self

        class Listener(event.Listener):
            def on_start(self, ev):
                recorder.stack.append([time.perf_counter(), time.thread_time(), 0.0, 0.0])

            def on_end(self, ev):
                start, start_cpu, nested, nested_cpu = recorder.stack.pop()
                spent = time.perf_counter() - start
                spent_cpu = time.thread_time() - start_cpu  # the compiling thread's CPU: less load-bound
                if recorder.stack:
                    recorder.stack[-1][2] += spent
                    recorder.stack[-1][3] += spent_cpu
                disp = ev.data["dispatcher"]
                fn = disp.py_func
                recorder.kernels.append({
                    "kernel": f"{fn.__module__}.{fn.__qualname__}",
                    "args": str(ev.data["args"]),
                    "seconds": spent - nested,
                    "cpu_seconds": spent_cpu - nested_cpu,
                    "parallel": bool(disp.targetoptions.get("parallel")),
                })

        event.register("numba:compile", Listener())

    def take(self):
        out, self.kernels = self.kernels, []
        return out


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def child(job):
    """Run one case (``job``: library, case, size, breakdown) in this process; print its figures."""
    t0 = time.perf_counter()
    import numpy as np

    lib = job["library"]
    if lib == "coosparse":
        import coosparse as module  # timed: the first import is part of what a user waits for
    else:
        import sparse as module
    import_s = time.perf_counter() - t0
    n, nnz = SIZES[job["size"]]
    raw, coalesced, dense = _operands(n, nnz)
    shape = (n, n)
    if lib == "coosparse":
        a, b = (module.COO(i, v, shape, sorted=True, unique=True, check=False) for i, v in coalesced)
    else:
        a, b = (module.COO(i, v, shape=shape, has_duplicates=False, sorted=True) for i, v in coalesced)
    env = {"np": np, lib if lib == "coosparse" else "sparse": module, "a": a, "b": b, "ra": raw[0],
           "rb": raw[1], "shape": shape, **dense}
    recorder = _Recorder() if job.get("breakdown") else None
    cases = CASES if job["case"] == SCRIPT else [c for c in CASES if c[0] == job["case"]]
    steps = []
    for name, label, ours, theirs in cases:
        code = ours if lib == "coosparse" else theirs
        if code is None:
            continue
        if job["case"] == SCRIPT and name == "coalesce":  # the script's operands come from coalescing
            code = ("coosparse.COO(ra[0], ra[1], shape).coalesce(), coosparse.COO(rb[0], rb[1], shape).coalesce()"
                    if lib == "coosparse" else
                    "sparse.COO(ra[0], ra[1], shape=shape), sparse.COO(rb[0], rb[1], shape=shape)")
        fn = eval(compile(f"lambda: ({code})", f"<{name}>", "eval"), env)  # noqa: S307 - the table above
        result = {}

        def call():
            result["r"] = fn()

        first, first_cpu = _timed(call)
        if job["case"] == SCRIPT and name == "coalesce":
            env["a"], env["b"] = result["r"]
        second, _ = _timed(call)
        steps.append({"case": name, "label": label, "first_s": first, "first_cpu_s": first_cpu,
                      "second_s": second, "kernels": recorder.take() if recorder else None})
    out = {"import_s": import_s, "steps": steps, "total_s": time.perf_counter() - t0,
           "load": _loadavg()}
    sys.stdout.write(TAG + json.dumps(out) + "\n")
    sys.stdout.flush()


def _loadavg():
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


# ---------------------------------------------------------------- the parent
def _run_child(job, cache_dir, timeout=900):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    # run as a script, not as ``-m coosparse.bench.coldstart``: that would import coosparse
    # before the child's clock starts
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), json.dumps(job)],
                          capture_output=True, text=True, env=env, timeout=timeout)
    for line in proc.stdout.splitlines():
        if line.startswith(TAG):
            return json.loads(line[len(TAG):])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
    return {"error": tail[0][:200]}


def available_libraries(patterns=()):
    """coosparse, and pydata/sparse when installed (and not filtered out by ``--library``)."""
    import importlib.util

    libs = ["coosparse"]
    if importlib.util.find_spec("sparse") is not None and (not patterns or any("pydata".startswith(p) or
                                                                             p == "sparse" for p in patterns)):
        libs.append("pydata")
    return libs


def case_names(ops=()):
    # the child runs this file as a script (outside the package): package imports stay in the parent's functions
    from .discover import op_matches

    names = [c[0] for c in CASES] + [SCRIPT]
    return [n for n in names if op_matches(n, ops)]


def measure(case, library, size="medium", repeat=1, breakdown=False):
    """Figures of one case for one library: ``repeat`` cold processes, one warm one, an optional breakdown."""
    job = {"library": library, "case": case, "size": size}
    colds, warm, kernels = [], None, None
    dirs = []
    try:
        for _ in range(repeat):
            d = tempfile.mkdtemp(prefix="coosparse-coldstart-")
            dirs.append(d)
            colds.append(_run_child(job, d))
        if not any("error" in c for c in colds):
            warm = _run_child(job, dirs[-1])
        if breakdown:
            d = tempfile.mkdtemp(prefix="coosparse-coldstart-")
            dirs.append(d)
            kernels = _run_child(dict(job, breakdown=True), d)
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    return summarise(case, library, colds, warm, kernels)


def summarise(case, library, colds, warm, kernels):
    """One result row from the children's reports (the medians over the cold runs)."""
    row = {"case": case, "library": library}
    errors = [c["error"] for c in colds + ([warm] if warm else []) if "error" in c]
    if errors:
        row["error"] = errors[0]
        return row
    if not colds[0]["steps"]:
        row["error"] = "no equivalent"
        return row

    def med(runs, key):
        return statistics.median(sum(s[key] for s in r["steps"]) for r in runs)

    row.update({
        "label": colds[0]["steps"][0]["label"] if case != SCRIPT else "the ten calls in one script",
        "cold_s": med(colds, "first_s"), "cold_cpu_s": med(colds, "first_cpu_s"),
        "cold_runs_s": [sum(s["first_s"] for s in r["steps"]) for r in colds],
        "second_s": med(colds, "second_s"),
        "warm_s": sum(s["first_s"] for s in warm["steps"]) if warm else None,
        "import_s": statistics.median(r["import_s"] for r in colds),
        "warm_import_s": warm["import_s"] if warm else None,
        "load": [r["load"] for r in colds],
    })
    if case == SCRIPT:
        row["steps"] = [{"case": s["case"], "cold_s": s["first_s"],
                         "warm_s": w["first_s"] if warm else None}
                        for s, w in zip(colds[-1]["steps"], (warm or colds[-1])["steps"])]
    if kernels and "error" not in kernels:
        row["kernels"] = [k for s in kernels["steps"] for k in (s["kernels"] or [])]
    return row


# ---------------------------------------------------------------- reports
def _s(x):
    return "–" if x is None else (f"{x:.2f} s" if x >= 0.1 else f"{1e3 * x:.0f} ms")


def markdown(rows):
    """The first-call table: one line per case, cold and warm for each library."""
    libs = [lib for lib in LIBRARIES if any(r["library"] == lib for r in rows)]
    head = "| first call | " + " | ".join(f"{lib} cold | {lib} warm cache" for lib in libs) + " |"
    lines = [head, "|---|" + "---|---|" * len(libs)]
    by = {(r["case"], r["library"]): r for r in rows}
    for case in dict.fromkeys(r["case"] for r in rows):
        label = next((r.get("label") for r in rows if r["case"] == case and r.get("label")), case)
        label = f"`{label}`" if case != SCRIPT else f"**{label}**"
        cells = []
        for lib in libs:
            r = by.get((case, lib))
            if r is None or r.get("error"):
                cells += ["–" if r is None or r.get("error") == "no equivalent" else "error", "–"]
            else:
                cells += [_s(r["cold_s"]), _s(r["warm_s"])]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    imports = [r for r in rows if not r.get("error")]
    if imports:
        cells = []
        for lib in libs:
            r = next((x for x in imports if x["library"] == lib), None)
            cells += [_s(r["import_s"]) if r else "–", _s(r["warm_import_s"]) if r else "–"]
        lines.append("| `import` (not in the figures above) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def breakdown_markdown(rows, top=8):
    """Per case: compile seconds in all, and the kernels that took longest."""
    lines = ["| case | functions compiled | seconds | longest (seconds) |", "|---|---|---|---|"]
    for r in rows:
        ks = r.get("kernels")
        if r["library"] != "coosparse" or ks is None:
            continue
        total = sum(k["seconds"] for k in ks)
        ours = [k for k in ks if k["kernel"].startswith("coosparse.")]
        par = sum(1 for k in ours if k["parallel"])
        longest = sorted(ks, key=lambda k: -k["seconds"])[:top]
        names = ", ".join(f"{_short(k['kernel'])}{' (parallel)' if k['parallel'] else ''} {k['seconds']:.2f}"
                          for k in longest)
        what = f"{len(ours)} coosparse" + (f" ({par} parallel)" if par else "") + f", {len(ks) - len(ours)} Numba"
        lines.append(f"| {r['case']} | {what} | {total:.2f} | {names} |")
    return "\n".join(lines)


def _short(name):
    for prefix in ("coosparse._kernels.numba.", "numba.np.", "numba.cpython.", "numba.misc.", "numba.core."):
        if name.startswith(prefix):
            return name[len(prefix):].replace(".<locals>", "")
    return name


def machine_line(load_start, load_end):
    from . import report  # see case_names

    info = report.machine_info()
    return (f"- machine: {info['cpu']}, {info['cores']} cores; load average {load_start} before the run, "
            f"{load_end} after\n- software: Python {info['python']}, "
            + ", ".join(f"{k} {v}" for k, v in info["versions"].items() if k in ("coosparse", "numba", "numpy",
                                                                                  "pydata/sparse")))


def run(args, progress, root=None):
    """The suite for the CLI: rows for every case and library, then the reports (``args`` from cli;
    ``root``: the repository, whose docs/benchmarks.md ``--update-docs`` rewrites)."""
    from pathlib import Path

    from . import report  # see case_names

    libs = available_libraries(args.library)
    cases = case_names(args.op)
    repeat = args.repeat if args.repeat_given else 1
    progress.add_total(len(cases) * len(libs))
    load_start = report._loadavg()
    rows = []
    for case in cases:
        for lib in libs:
            progress.status(f"{case} [{lib}] cold x{repeat}")
            rows.append(measure(case, lib, args.size, repeat, args.breakdown))
            progress.advance()
    load_end = report._loadavg()
    text = machine_line(load_start, load_end) + "\n\n" + markdown(rows)
    if args.breakdown:
        text += "\n\nCompile time per case (coosparse; exclusive seconds):\n\n" + breakdown_markdown(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "coldstart.md").write_text(text + "\n")
    (out / "coldstart.json").write_text(json.dumps({"rows": rows, "load_start": load_start,
                                                    "load_end": load_end, "size": args.size}, indent=1))
    written = [out / "coldstart.md", out / "coldstart.json"]
    if args.update_docs and root is not None:
        page = Path(root) / "docs" / "benchmarks.md"
        if page.exists():
            old = page.read_text()
            new = report.replace_block(old, text, tag="coldstart")
            if new != old:
                page.write_text(new)
                written.append(page)
    return rows, text, written


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    child(json.loads(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
