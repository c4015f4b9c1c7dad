"""``python -m coosparse.bench``: every case module, every peer installed, one table.

Each case module (``coosparse/bench/cases_*.py``) runs in a worker process
(:mod:`coosparse.bench._worker`); within it, every case times all its
libraries alternately (see :mod:`coosparse.bench.harness`). A library that
raises is reported as an error; one that kills the worker (a signal) is
reported as crashed and the worker is restarted without it.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import baseline, coldstart, discover, report, workloads
from .harness import MMAP_THRESHOLD
from ._worker import TAG, run_job
from .progress import Progress

DEFAULT_SIZE = "medium"
DEFAULT_REPEAT = 7


def _csv(values):
    out = []
    for v in values or []:
        out += [x.strip() for x in v.split(",") if x.strip()]
    return out


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m coosparse.bench",
        description="Compare coosparse with torch.sparse, scipy.sparse, pydata/sparse and cupyx "
                    "(whichever are installed) on generated workloads.")
    p.add_argument("--size", choices=("small", "medium", "large"), default=DEFAULT_SIZE,
                   help=f"workload size (default {DEFAULT_SIZE}: 2,000,000 entries in 131072 x 131072)")
    p.add_argument("--op", action="append", metavar="OP",
                   help="only these ops (name, first word, or glob; repeat or comma-separate)")
    p.add_argument("--library", action="append", metavar="LIB",
                   help="only these peers (torch, scipy, pydata, cupyx; prefix match); coosparse always runs")
    p.add_argument("--device", choices=("cpu", "cuda", "cuda-emulated"), action="append",
                   help="devices to run (default: cpu, and cuda when a GPU is present; cuda-emulated: the "
                        "test suite's stand-in GPU, slow, to check the GPU cases without one). On cuda, "
                        "times come from CUDA events over several calls")
    p.add_argument("--repeat", type=int, default=None,
                   help=f"timed runs per library (default {DEFAULT_REPEAT}; --suite coldstart: cold processes "
                        "per case, default 1)")
    p.add_argument("--max-case-seconds", type=float, default=8.0, metavar="S",
                   help="keep a case's timed runs near S seconds: three rounds of every library, then "
                        "further rounds for coosparse and the cheapest peers while time is left "
                        "(default 8; 0: always --repeat)")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs per library first (default 1)")
    p.add_argument("--no-memory", dest="memory", action="store_false", help="skip the peak-memory run")
    p.add_argument("--out", default="bench-results", help="directory for results.{md,json} and speedups.png")
    p.add_argument("--update-docs", action="store_true",
                   help="also write the tables into docs/benchmarks.md and README.md and the chart into docs/img/")
    p.add_argument("--baseline", default=None, metavar="PATH",
                   help="compare with this baseline: list the cases more than 10%% slower relative to the "
                        "same run's peers (default: docs/bench-baseline.json of the repository, when present)")
    p.add_argument("--update-baseline", action="store_true",
                   help="write this run's ratios into the baseline (cases not run are kept): for a change "
                        "meant to move the figures")
    p.add_argument("--no-baseline", dest="use_baseline", action="store_false", help="no baseline comparison")
    p.add_argument("--no-confirm", dest="confirm", action="store_false",
                   help="report the baseline guard's cases without timing them a second time")
    p.add_argument("--in-process", action="store_true", help="run case modules in this process (no crash isolation)")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    p.add_argument("--suite", default="default", metavar="SUITE",
                   help="which suite of case modules to run: default, dask (Dask clusters, minutes), "
                        "all (both), or coldstart (each operation's first call in a fresh process with an "
                        "empty Numba cache; see coosparse/bench/coldstart.py) (default: default)")
    p.add_argument("--breakdown", action="store_true",
                   help="--suite coldstart: also record every kernel's compile time (one more process per case)")
    p.add_argument("--list", action="store_true", help="list case modules and workloads, then exit")
    args = p.parse_args(argv)
    args.op = _csv(args.op)
    args.library = _csv(args.library)
    args.repeat_given = args.repeat is not None
    if args.repeat is None:
        args.repeat = DEFAULT_REPEAT
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    return args


def cuda_available():
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        pass
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


class _Collector:
    """Turns worker events into rows and progress."""

    def __init__(self, progress, module, rows=None):
        self.progress, self.module = progress, module
        self.rows = [] if rows is None else rows
        self.labels = None
        self.current = None  # (case index, library or None) while a case runs
        self.done, self.fatal = False, None

    def __call__(self, event, **kw):
        if event == "cases":
            if self.labels is None:
                self.labels = kw["labels"]
                self.progress.add_total(len(self.labels))
        elif event == "start":
            self.current = (kw["case"], kw["library"])
            op, wl = self.labels[kw["case"]]
            self.progress.status(f"{op} [{wl[:30]}] {kw['library'] or 'timing'}")
        elif event == "rows":
            self.rows += kw["rows"]
            self.current = None
            self.progress.advance()
        elif event == "memory":
            op, wl = self.labels[kw["case"]]
            for r in self.rows:
                if (r["op"], r["workload"], r["library"]) == (op, wl, kw["library"]):
                    r["peak_bytes"] = kw["peak_bytes"]
        elif event == "done":
            self.done = True
        elif event == "fatal":
            self.fatal = kw["error"]


def _run_worker(job, collector, env=None):
    cmd = [sys.executable, "-m", "coosparse.bench._worker", json.dumps(job)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, bufsize=1, env=env)
    try:
        for line in proc.stdout:
            if line.startswith(TAG):
                ev = json.loads(line[len(TAG):])
                collector(ev.pop("event"), **ev)
            else:
                collector.progress.write(line.rstrip("\n"))
    except BaseException:  # Ctrl-C: stop the worker too
        proc.kill()
        proc.wait()
        raise
    return proc.wait()


def run_module(module, device, args, progress, rows=None, only=None, memory=None):
    """All cases of one module on one device; returns result rows (appended to ``rows`` if given).

    ``only``: [op, workload] pairs, to run just those cases of the module.
    """
    collector = _Collector(progress, module, rows)
    memory = args.memory if memory is None else memory
    job = {"module": module, "size": args.size, "device": device, "libraries": args.library,
           "ops": args.op, "repeat": args.repeat, "max_case_s": args.max_case_seconds, "warmup": args.warmup,
           "memory": memory, "start_case": 0, "exclude": [], "only": only}
    if args.in_process:
        try:
            run_job(job, emit=collector)
        except Exception as e:
            progress.write(f"{module}: skipped ({type(e).__name__}: {e})")
        return collector.rows
    for _attempt in range(8):
        rc = _run_worker(job, collector)
        if collector.done:
            break
        if collector.fatal:
            last = collector.fatal.strip().splitlines()[-1]
            progress.write(f"{module} [{device}]: skipped ({last})")
            break
        why = f"crashed ({signal.Signals(-rc).name})" if rc < 0 else f"crashed (exit {rc})"
        if collector.current is None:
            progress.write(f"{module} [{device}]: worker {why} outside a case")
            break
        case, lib = collector.current
        op, wl = collector.labels[case]
        progress.write(f"{op} [{wl}]: {lib or 'timing'} {why}; restarting without it")
        if lib is None:  # died while timing: give the whole case up
            collector.rows.append({"op": op, "workload": wl, "library": "coosparse", "device": device,
                                   "median_s": None, "min_s": None, "max_s": None, "speedup_vs_peer": None,
                                   "peak_bytes": None, "error": why})
            progress.advance()
            job["start_case"] = case + 1
        else:
            job["exclude"].append([case, lib, why])
            job["start_case"] = case
        collector.current = None
    if memory and collector.rows and getattr(discover.load(module), "MEASURE_MEMORY", True):
        _measure_memory(job, collector, progress)
    return collector.rows


def _measure_memory(job, collector, progress):
    """Peak memory in a second worker whose glibc returns freed blocks to the OS.

    A fixed mmap threshold makes readings exact but gives every large
    allocation fresh pages, which would distort timings: so it is set only for
    this worker, which times nothing.
    """
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_=str(MMAP_THRESHOLD))
    collector.done = False
    progress.status(f"{job['module']}: peak memory")
    mem_job = dict(job, phase="memory", start_case=0)
    rc = _run_worker(mem_job, collector, env=env)
    if not collector.done:
        progress.write(f"{job['module']}: peak-memory worker stopped (exit {rc}); some peaks are missing")


def _repo_root():
    here = Path(__file__).resolve().parents[2]
    return here if (here / "mkdocs.yml").exists() else Path.cwd()


def baseline_path(args):
    """The baseline file of this run: --baseline, else the repository's docs/bench-baseline.json."""
    return Path(args.baseline) if args.baseline else _repo_root() / "docs" / "bench-baseline.json"


def check_baseline(rows, info, args, rerun=None):
    """Compare with the baseline (and update it when asked); the text to print, or None.

    ``rerun(regressions)``: result rows of those cases timed again (None: no second timing).
    """
    if not args.use_baseline:
        return None
    path = baseline_path(args)
    doc = baseline.load(path)
    cpu = info.get("cpu")
    base = baseline.entry_for(doc, cpu)
    text, keep = None, set()
    if base is not None:
        regressions, not_confirmed = baseline.compare(rows, base), []
        if regressions and rerun is not None and args.confirm:
            regressions, not_confirmed = baseline.confirm(regressions, rerun(regressions), base)
            keep = {r["key"] for r in not_confirmed}
        info["baseline"] = {"path": str(path), "regressions": regressions, "not_confirmed": not_confirmed}
        text = baseline.format_regressions(regressions, path, not_confirmed=not_confirmed)
    elif doc is not None:
        text = (f"Baseline guard ({path}): no baseline for this CPU model ({cpu or baseline.UNKNOWN_CPU}; "
                f"stored: {', '.join(doc['machines']) or 'none'}); ratios differ between CPU models, so nothing "
                "is compared" + ("" if args.update_baseline else " (--update-baseline starts one)"))
    if args.update_baseline:
        entry = baseline.baseline_from(rows, info, previous=base, keep=keep)
        baseline.save(path, baseline.with_entry(doc, cpu, entry))
        text = (text + "\n" if text else "") + f"baseline updated: {path}"
    return text


def write_outputs(rows, info, args):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report.write_json(out / "results.json", rows, info)
    md = report.to_markdown(rows, info)
    if info.get("baseline"):
        b = info["baseline"]
        md += ("\n## Baseline guard\n\n"
               + baseline.format_regressions(b["regressions"], b["path"], not_confirmed=b.get("not_confirmed", ()))
               + "\n")
    (out / "results.md").write_text(md)
    chart = report.write_chart(out / "speedups.png", rows,
                               title=f"coosparse vs peers, {args.size} ({info['cpu']})")
    written = [out / "results.md", out / "results.json"] + ([chart] if chart else [])
    if args.update_docs:
        root = _repo_root()
        block = "\n\n".join([report.machine_markdown(info), report.summary_markdown(rows)])
        for page in (root / "docs" / "benchmarks.md", root / "README.md"):
            if page.exists():
                text = page.read_text()
                new = report.replace_block(text, block if page.name != "README.md"
                                           else report.summary_markdown(rows) + "\n\n"
                                           + f"`{info['command']}` on {info['cpu']} "
                                           f"({info['cores']} cores); full results: docs/benchmarks.md.")
                if new != text:
                    page.write_text(new)
                    written.append(page)
        if chart:
            img = root / "docs" / "img"
            img.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(chart, img / "bench-speedups.png")
            written.append(img / "bench-speedups.png")
    return written


# The peers' OpenMP teams (torch and GraphBLAS each load their own libgomp) spin after a call by
# default; on a 2-core machine a spinning team holds the core the next library's threads need
# (a 0.3 ms row slice measured 4-5 ms right after them, a timeslice). Idle threads sleep here, as
# coosparse's own pool does; a pause before each call instead made short calls start on a cold,
# slowed core (a 8 ms as_strided_scatter measured 25-86 ms). Set before any worker starts.
PEER_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}


def main(argv=None):
    args = parse_args(argv)
    for k, v in PEER_ENV.items():
        os.environ.setdefault(k, v)
    if args.suite == "coldstart":
        return _coldstart(args)
    modules = [m for m in discover.case_modules()
               if args.suite == "all" or discover.suite_of(m) == args.suite]
    if args.list:
        print("case modules:", ", ".join(modules) or "none")
        print("workloads:", ", ".join(workloads.WORKLOADS))
        return 0
    devices = args.device or (["cpu", "cuda"] if cuda_available() else ["cpu"])
    load_start = report._loadavg()  # other users' load: timings on a shared machine need it
    t0 = time.perf_counter()
    progress = Progress(enabled=args.progress)
    rows = []
    interrupted = False
    try:
        for device in devices:
            for module in modules:
                if args.op:
                    try:
                        if not discover.module_may_match(discover.load(module), args.op):
                            continue
                    except Exception:
                        pass  # the worker reports import errors
                run_module(module, device, args, progress, rows)
    except KeyboardInterrupt:
        interrupted = True  # keep what finished: the partial results are still written
    finally:
        progress.close()
    elapsed = time.perf_counter() - t0
    argv_used = sys.orig_argv if argv is None else [sys.executable, "-m", "coosparse.bench"] + list(argv)
    info = report.machine_info(argv=argv_used)
    info["settings"] = {"size": args.size, "repeat": args.repeat, "max_case_seconds": args.max_case_seconds, "warmup": args.warmup,
                        "devices": devices, "elapsed_s": elapsed,
                        "modules": modules, "interrupted": interrupted,
                        "load_average_start": load_start}
    if not rows:
        print("no results (no case module matched the filters)", file=sys.stderr)
        return 1
    print()
    print(report.format_table(rows))
    guard = check_baseline(rows, info, args, rerun=lambda regressions: rerun_cases(regressions, rows, args))
    if guard:
        print(guard)
    written = write_outputs(rows, info, args)
    print(f"{len(rows)} results in {elapsed:.0f} s; wrote " + ", ".join(str(w) for w in written))
    return 0


def rerun_cases(regressions, rows, args):
    """The flagged cases timed once more, each module's in a worker of its own (no memory run)."""
    modules = {}
    for r in rows:
        if r.get("module"):
            modules.setdefault(baseline.case_key(r), (r["module"], r.get("device", "cpu")))
    wanted = {}
    for reg in regressions:
        if reg["key"] in modules:
            wanted.setdefault(modules[reg["key"]], []).append([reg["op"], reg["workload"]])
    progress = Progress(enabled=args.progress, desc="timing flagged cases again")
    again = []
    try:
        for (module, device), only in wanted.items():
            run_module(module, device, args, progress, again, only=only, memory=False)
    finally:
        progress.close()
    return again


def _coldstart(args):
    """The cold-start suite: processes of its own per case, not case modules (coldstart.py)."""
    if args.list:
        print("cold-start cases:", ", ".join(coldstart.case_names()))
        return 0
    progress = Progress(enabled=args.progress, desc="coldstart")
    try:
        rows, text, written = coldstart.run(args, progress, root=_repo_root())
    finally:
        progress.close()
    print()
    print(text)
    print("wrote " + ", ".join(str(w) for w in written))
    return 0 if rows and not all(r.get("error") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
