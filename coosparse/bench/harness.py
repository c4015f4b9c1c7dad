"""Side-by-side timing and peak-memory measurement (no timed assertions anywhere).

Timing runs under the allocator as users have it. Peak memory is read from
the kernel (``VmHWM`` after resetting it through ``/proc/self/clear_refs``),
so it sees every allocator: NumPy, Numba's runtime and torch alike. For that
reading to be exact, freed large blocks must go back to the OS, which needs
glibc's mmap threshold fixed when the process starts
(``MALLOC_MMAP_THRESHOLD_``) — a setting that also gives every large
allocation fresh pages and slows all libraries down, unevenly. So timing and
memory never share a process: ``python -m coosparse.bench`` times in one
worker and reads peaks in a second one started with the threshold fixed.
"""
from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable

MMAP_THRESHOLD = 65536  # bytes; MALLOC_MMAP_THRESHOLD_ of the peak-memory worker


@dataclass
class Impl:
    """One library's way of doing an operation: ``fn()`` runs it once."""

    library: str
    fn: Callable[[], Any]
    note: str = ""


@dataclass
class Case:
    """One operation on one workload, done by several libraries."""

    op: str
    workload: str
    impls: list[Impl]
    input_bytes: int = 0
    params: dict = field(default_factory=dict)


def torch_coo(a):
    """``a`` as a torch sparse COO tensor sharing its arrays, or None where torch is missing.

    Flagged coalesced exactly when ``a`` is; built without checks, once,
    outside any timing. A COO on a GPU gives a CUDA tensor (zero-copy); one on
    the emulated device has no torch peer (None).
    """
    try:
        import torch
    except ImportError:
        return None
    if a.device == "cpu":
        idx, vals = torch.from_numpy(a.indices), torch.from_numpy(a.values)
    elif a.device.startswith("cuda:"):
        idx, vals = torch.as_tensor(a.indices, device=a.device), torch.as_tensor(a.values, device=a.device)
    else:
        return None
    return torch.sparse_coo_tensor(idx, vals, a.shape, is_coalesced=a.is_coalesced, check_invariants=False)


GPU_DEVICES = ("cuda", "cuda-emulated")
"""Devices a case module's ``cases(..., device=)`` may be asked for besides 'cpu'.

'cuda-emulated' is the test suite's stand-in GPU (``coosparse._cuda.strict``):
slow, no peers, for checking a module's GPU code path without a GPU
(``scripts/gpu_check.sh --dry-run``).
"""


def on_device(x, device):
    """``x`` (a COO or a NumPy array) on ``device`` ('cpu', 'cuda', 'cuda-emulated'); build data on the CPU, then move it."""
    from .._coo import COO

    if device == "cpu":
        return x
    if device == "cuda-emulated":
        from .._cuda import strict

        return strict.to_device(x)
    if isinstance(x, COO):
        return x.to("cuda")
    import cupy

    return cupy.asarray(x)


def gpu_peers(device):
    """Peers that run on ``device``'s GPU: torch and cupyx on 'cuda', none on the emulated device."""
    return ("torch", "cupyx") if device == "cuda" else ()


def _read_status(key):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def peak_memory(fn):
    """Bytes by which ``fn()`` raised the process's resident peak (None where unknown)."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return None
    base = _read_status("VmRSS")
    result = fn()
    peak = _read_status("VmHWM")
    del result
    if base is None or peak is None:
        return None
    return max(peak - base, 0)


def time_alternating(impls, repeat=5, warmup=1, sync=None, timer=None):
    """Run each impl ``warmup`` times, then ``repeat`` rounds of all impls in turn.

    Returns {library: [seconds, ...]}. ``sync`` (e.g. a device synchronise)
    is called before each clock read. ``timer(fn) -> seconds`` replaces the
    host clock (:func:`cuda_event_timer`: CUDA events over many calls).
    """
    sync = sync or (lambda: None)
    for impl in impls:
        for _ in range(warmup):
            impl.fn()
        sync()
    times = {impl.library: [] for impl in impls}
    for _ in range(repeat):
        for impl in impls:
            gc.collect()
            if timer is not None:
                times[impl.library].append(timer(impl.fn))
                continue
            sync()
            t0 = time.perf_counter()
            impl.fn()
            sync()
            times[impl.library].append(time.perf_counter() - t0)
    return times


def cuda_event_timer(calls=10):
    """A timer for :func:`time_alternating`: CUDA events around ``calls`` back-to-back calls, seconds per call.

    The events are recorded on the current stream (CuPy's and torch's default
    stream: the legacy default stream both libraries queue on), so the time
    is the device's, from the first call's first kernel to the last call's
    last one, host gaps included (an operation that synchronises pays for it).
    """
    import cupy

    def timer(fn):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        cupy.cuda.Device().synchronize()
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        return cupy.cuda.get_elapsed_time(start, stop) / 1e3 / calls

    return timer


def run_case(case, repeat=5, warmup=1, sync=None, timer=None):
    """Time one case; returns a list of result rows.

    ``peak_bytes`` stays None: peak memory is read in a separate process (module doc).
    """
    times = time_alternating(case.impls, repeat=repeat, warmup=warmup, sync=sync, timer=timer)
    ours = statistics.median(times["coosparse"]) if "coosparse" in times else None
    rows = []
    for impl in case.impls:
        t = times[impl.library]
        med = statistics.median(t)
        rows.append(
            {
                "op": case.op,
                "workload": case.workload,
                "library": impl.library,
                "median_s": med,
                "min_s": min(t),
                "max_s": max(t),
                "times_s": t,
                "speedup_vs_peer": (med / ours) if ours and impl.library != "coosparse" else None,
                "peak_bytes": None,
                "input_bytes": case.input_bytes,
                "note": impl.note,
            }
        )
    return rows


def run_cases(cases, repeat=5, warmup=1, sync=None, timer=None):
    """Time every case (no memory: see the module doc); flat result rows."""
    return [r for case in cases for r in run_case(case, repeat=repeat, warmup=warmup, sync=sync, timer=timer)]


def format_rows(rows):
    """A plain-text table: one line per (op, library), coosparse's speed-up over each peer."""
    head = f"{'op':<34} {'library':<16} {'median ms':>10} {'spread ms':>12} {'speed-up':>9} {'peak MB':>8}"
    lines = [head, "-" * len(head)]
    for r in rows:
        spread = f"{1e3 * r['min_s']:.1f}-{1e3 * r['max_s']:.1f}"
        sp = f"{r['speedup_vs_peer']:.2f}x" if r["speedup_vs_peer"] else ""
        mem = f"{r['peak_bytes'] / 2**20:.0f}" if r["peak_bytes"] is not None else "?"
        lines.append(
            f"{r['op'] + ' [' + r['workload'] + ']':<34.34} {r['library']:<16} "
            f"{1e3 * r['median_s']:>10.1f} {spread:>12} {sp:>9} {mem:>8}"
        )
    return "\n".join(lines)
