"""One case module's cases, run in a child process of the CLI.

Why a child: a peer can kill the process outright (torch 2.13's sparse ``mul``
dies with SIGFPE on some shapes, SPEC 2). The parent reads the events this
worker prints, records which library was running when it died, and starts a
fresh worker that skips it. All libraries of one case still run alternately in
one process, as the harness requires.

Protocol: ``python -m coosparse.bench._worker '<json job>'``; every event is
one stdout line ``@@bench <json>``; other output is passed through.
"""
from __future__ import annotations

import json
import sys
import time
import traceback

from . import discover
from .harness import cuda_event_timer, peak_memory, result_nbytes, run_case

TAG = "@@bench "


def emit(**event):
    sys.stdout.write(TAG + json.dumps(event) + "\n")
    sys.stdout.flush()


def device_sync(device):
    """A function that waits for the device (None on the CPU and the emulated device)."""
    if device in ("cpu", "cuda-emulated"):
        return None
    syncs = []
    try:
        import cupy

        syncs.append(cupy.cuda.runtime.deviceSynchronize)
    except ImportError:
        pass
    try:
        import torch

        if torch.cuda.is_available():
            syncs.append(torch.cuda.synchronize)
    except ImportError:
        pass

    def sync():
        for s in syncs:
            s()

    return sync


def run_job(job, emit=emit):
    mod = discover.load(job["module"])
    cases = discover.build_cases(mod, job["size"], job["device"], job["libraries"], job["ops"])
    if job.get("only"):
        only = {tuple(c) for c in job["only"]}
        cases = [c for c in cases if (c.op, c.workload) in only]
    emit(event="cases", labels=[[c.op, c.workload] for c in cases])
    exclude = {(i, lib): why for i, lib, why in job.get("exclude", [])}
    if job.get("phase") == "memory":
        return _memory_job(cases, exclude, emit)
    sync = device_sync(job["device"])
    for i, case in enumerate(cases):
        if i < job.get("start_case", 0):
            continue
        failed, kept, round_s = [], [], 0.0
        for impl in case.impls:
            if (i, impl.library) in exclude:
                failed.append(_error_row(case, impl, exclude[(i, impl.library)], job["device"]))
                continue
            # the first call probes for errors (and is the first warm-up run)
            emit(event="start", case=i, library=impl.library)
            try:
                t0 = time.perf_counter()
                res = impl.fn()
                if impl.library == "coosparse" and case.output_bytes is None:
                    case.output_bytes = result_nbytes(res)  # the memory floor's output bytes
                del res
                if sync:
                    sync()
                round_s += time.perf_counter() - t0
                kept.append(impl)
            except Exception as e:  # a peer lacking a dtype/shape: report, keep going
                failed.append(_error_row(case, impl, f"{type(e).__name__}: {e}"[:200], job["device"]))
        emit(event="start", case=i, library=None)
        case.impls = kept
        rows = []
        if kept:
            timer = None
            if job["device"] == "cuda":  # CUDA events over several calls: ~0.2 s of device time per sample
                timer = cuda_event_timer(calls=max(1, min(50, int(0.2 / max(round_s / len(kept), 1e-4)))))
            rows = run_case(case, repeat=job["repeat"], warmup=max(job["warmup"] - 1, 0), sync=sync,
                            timer=timer, device=job["device"], budget=job.get("max_case_s"))
            for r in rows:
                r["device"] = job["device"]
                r["module"] = job["module"]
        emit(event="rows", case=i, rows=rows + failed)
    emit(event="done")


def _memory_job(cases, exclude, emit):
    """Peak memory of every impl (one warm-up call each), in a process started with a fixed mmap threshold."""
    for i, case in enumerate(cases):
        for impl in case.impls:
            if (i, impl.library) in exclude:
                continue
            try:
                impl.fn()  # compile / warm caches outside the reading
                peak = peak_memory(impl.fn)
            except Exception:  # already reported by the timing run
                continue
            emit(event="memory", case=i, library=impl.library, peak_bytes=peak)
    emit(event="done")


def _error_row(case, impl, error, device):
    return {"op": case.op, "workload": case.workload, "library": impl.library, "device": device,
            "median_s": None, "min_s": None, "max_s": None, "times_s": [], "speedup_vs_peer": None,
            "peak_bytes": None, "input_bytes": case.input_bytes, "note": impl.note, "error": error}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    job = json.loads(argv[0])
    try:
        run_job(job)
    except (KeyboardInterrupt, BrokenPipeError):  # the parent is stopping
        return 130
    except Exception:
        emit(event="fatal", error=traceback.format_exc()[-2000:])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
