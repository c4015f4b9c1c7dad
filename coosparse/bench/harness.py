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

import numpy as np

from .._kernels.backend import writeable
from .._core.coo import COO
from ..testing import device as emulated_device

MMAP_THRESHOLD = 65536  # bytes; MALLOC_MMAP_THRESHOLD_ of the peak-memory worker


@dataclass
class Impl:
    """One library's way of doing an operation: ``fn()`` runs it once."""

    library: str
    fn: Callable[[], Any]
    note: str = ""
    calls: int = 1  # back-to-back calls per timed sample (set by :func:`time_alternating`)


@dataclass
class Case:
    """One operation on one workload, done by several libraries.

    ``input_bytes``: the bytes of the operands the operation must read;
    ``output_bytes``: the bytes of its result (None: measured on coosparse's
    result by :func:`result_nbytes` at the first call). Their sum over the
    copy bandwidth measured beside the case is its memory floor
    (:func:`floor_impl`; docs/benchmarks.md).
    """

    op: str
    workload: str
    impls: list[Impl]
    input_bytes: int = 0
    params: dict = field(default_factory=dict)
    output_bytes: int | None = None


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
        # writeable views: a COO's parts are read-only, and torch warns on read-only arrays
        idx, vals = torch.from_numpy(writeable(a.indices)), torch.from_numpy(writeable(a.values))
    elif a.device.startswith("cuda:"):
        idx, vals = torch.as_tensor(a.indices, device=a.device), torch.as_tensor(a.values, device=a.device)
    else:
        return None
    return torch.sparse_coo_tensor(idx, vals, a.shape, is_coalesced=a.is_coalesced, check_invariants=False)


def scipy_csr(a):
    """``a`` (a 2-D CPU COO) as scipy's CSR array, with 32-bit indices where they fit.

    scipy keeps the index dtype it is given (int64 from a COO's indices) but
    builds its own matrices (files, constructors given small integers) with
    32-bit indices when they fit, and runs 10-20% faster on them (R-MAT
    SpMV 4.0 vs 4.5 ms, row sums, row gather, transpose alike): the
    benchmark races that form. Duplicates are summed (scipy's conversion).
    """
    import scipy.sparse as sp  # optional dependency: the scipy peer

    m = sp.csr_array((writeable(a.values), (a.indices[0], a.indices[1])), shape=a.shape)
    if max(m.shape + (m.nnz,)) < 2**31:
        m = sp.csr_array((m.data, m.indices.astype(np.int32), m.indptr.astype(np.int32)), shape=m.shape)
    return m


GPU_DEVICES = ("cuda", "cuda-emulated")
"""Devices a case module's ``cases(..., device=)`` may be asked for besides 'cpu'.

'cuda-emulated' is the test suite's stand-in GPU (``coosparse.testing.device``):
slow, no peers, for checking a module's GPU code path without a GPU
(``scripts/gpu_check.sh --dry-run``).
"""


def on_device(x, device):
    """``x`` (a COO or a NumPy array) on ``device`` ('cpu', 'cuda', 'cuda-emulated'); build data on the CPU, then move it."""
    if device == "cpu":
        return x
    if isinstance(x, COO):
        return x.to(device)
    if device == "cuda-emulated":
        return emulated_device.to_device(x)
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


# ---------------------------------------------------------------- the memory floor
FLOOR_LIBRARY = "memory floor"
"""The pseudo-library timed beside every case: a copy of the case's bytes (never a result row)."""
FLOOR_MAX_BUFFER = 1 << 29  # bytes per copy buffer; larger floors are scaled from this copy


def result_nbytes(res):
    """Bytes of an operation's result: a COO's indices and values, an array's data, a tuple's sum.

    Torch tensors (dense or sparse COO) count too; anything else counts 0.
    """
    if res is None or isinstance(res, (bool, int, float, complex, str)):
        return 0
    if isinstance(res, (tuple, list)):
        return sum(result_nbytes(r) for r in res)
    if hasattr(res, "indices") and hasattr(res, "values") and hasattr(res, "fill_value"):  # COO
        return int(res.indices.nbytes) + int(res.values.nbytes)
    if type(res).__module__.startswith("torch"):
        if getattr(res, "is_sparse", False):
            res = res.coalesce() if not res.is_coalesced() else res
            return result_nbytes(res._indices()) + result_nbytes(res._values())
        return int(res.numel() * res.element_size())
    nb = getattr(res, "nbytes", None)
    return int(nb) if nb is not None else 0


def floor_bytes(case):
    """Bytes a case must move at least (its input read once, its output written once); None when unknown."""
    if not case.input_bytes:
        return None
    return int(case.input_bytes) + int(case.output_bytes or 0)


def floor_impl(nbytes, device="cpu"):
    """An Impl copying ``nbytes / 2`` bytes into a preallocated buffer: ``nbytes`` moved, read + write.

    Its time is the case's memory floor: the bytes the case must move over the
    copy bandwidth of this machine, at this moment (it is timed alternately
    with the case's libraries). Buffers above FLOOR_MAX_BUFFER are not
    allocated: the copy of that many bytes is timed and scaled (``scale``).
    """
    half = max(nbytes // 2, 1)
    size = min(half, FLOOR_MAX_BUFFER)
    if device == "cpu":
        import numpy as xp
    elif device == "cuda-emulated":
        xp = emulated_device.xp
    else:
        import cupy as xp
    src = xp.ones(size, dtype="uint8")
    dst = xp.zeros(size, dtype="uint8")

    def copy():
        dst[...] = src

    impl = Impl(FLOOR_LIBRARY, copy, note=f"copy of {half:,} bytes into a preallocated buffer")
    impl.scale = half / size
    return impl


SAMPLE_S = 0.005  # a host-timed sample of a fast call runs back-to-back calls for about this long
MAX_CALLS = 64
CALIBRATION_CALLS = 3  # untimed calls that price a fast call before its samples are sized
CALIBRATE_BELOW_S = 4 * SAMPLE_S
"""A warm-up call under this is priced again by the calibration calls: on a loaded machine a
sub-millisecond call's warm-up read 5-10 ms now and then, and its samples were single cold calls."""


MIN_ROUNDS = 3
RESERVE = 0.25  # of a case's budget, always left for rounds after the third


def plan_rounds(costs, repeat, budget):
    """Timed rounds per library: ``repeat``, fewer (down to 3) for the slow ones when a case would take long.

    ``costs`` {library: seconds of one sample}. With a ``budget`` (seconds)
    every library gets three rounds, then the time left (at least
    :data:`RESERVE` of the budget, so that the fast libraries of a case whose
    slow peer spends it all still get theirs) buys further rounds one at a
    time, coosparse and the memory floor first, then the cheapest libraries:
    a slow peer stops at three samples while the libraries whose single
    calls a stall of the machine distorts most go on to ``repeat``.

    >>> plan_rounds({"coosparse": 0.1, "scipy": 0.1, "pydata": 2.0}, repeat=7, budget=8.0)
    {'coosparse': 7, 'scipy': 7, 'pydata': 3}
    >>> plan_rounds({"coosparse": 9.0}, repeat=5, budget=None)
    {'coosparse': 5}
    """
    if not budget:
        return {lib: repeat for lib in costs}
    least = min(repeat, MIN_ROUNDS)
    rounds = {lib: least for lib in costs}
    left = max(budget - least * sum(costs.values()), RESERVE * budget)
    by_priority = sorted(costs, key=lambda lib: (lib not in ("coosparse", FLOOR_LIBRARY), costs[lib]))
    for r in range(least, repeat):
        for lib in by_priority:
            if rounds[lib] == r and costs[lib] <= left:
                rounds[lib] += 1
                left -= costs[lib]
    return rounds


def time_alternating(impls, repeat=5, warmup=1, sync=None, timer=None, budget=None):
    """Run each impl ``warmup`` times, then ``repeat`` rounds of all impls in turn.

    Returns {library: [seconds per call, ...]}. ``sync`` (e.g. a device
    synchronise) is called before each clock read. ``timer(fn) -> seconds``
    replaces the host clock (:func:`cuda_event_timer`: CUDA events over many
    calls).

    Round r starts at impl r and goes on forwards in even rounds, backwards
    in odd ones, so no library always runs first, nor always right after the
    same peer. On the host clock an impl whose last warm-up call took under
    :data:`CALIBRATE_BELOW_S` is priced by :data:`CALIBRATION_CALLS` more
    calls, and one whose fastest call is under :data:`SAMPLE_S` is timed over
    back-to-back calls (``impl.calls``, up to :data:`MAX_CALLS`) per sample: a sub-millisecond call would otherwise
    read a scheduler stall or a previous peer's threads leaving the cores
    (~5 ms on a loaded machine) as its own time. Without warm-up calls the
    first round's single calls measure that.

    With a ``budget`` (seconds) the first round's samples plan the rest
    (:func:`plan_rounds`): a library is timed in only its first n rounds,
    so a slow peer can stop after three samples while the fast libraries,
    whose medians a single allocation stall moves further, go on to
    ``repeat`` within the same time. (The first round, not the probe call:
    that one pays coosparse's kernel compilation.)
    """
    sync = sync or (lambda: None)
    rounds = {}

    def batch(impl, seconds):
        if timer is None and seconds < CALIBRATE_BELOW_S:
            # the call that priced it may have met caches the peers had just evicted (a 0.03 ms row
            # slice read 0.3 ms so: 18 calls, a sample one preemption moves): a few warm calls decide
            for _ in range(CALIBRATION_CALLS):
                sync()
                t0 = time.perf_counter()
                impl.fn()
                sync()
                seconds = min(seconds, time.perf_counter() - t0)
            impl.calls = min(MAX_CALLS, max(1, int(SAMPLE_S / max(seconds, 1e-6))))

    for impl in impls:
        impl.calls = 1
        for w in range(warmup):
            sync()
            t0 = time.perf_counter()
            impl.fn()
            sync()
            if w == warmup - 1:
                batch(impl, time.perf_counter() - t0)
    times = {impl.library: [] for impl in impls}
    for r in range(repeat):
        # each round starts with the next library: the first allocation of a round can pay the
        # kernel's page-allocator stalls (measured: 200-400 ms for a fresh 64 MiB array, whoever
        # asks first, 20 ms after), so no library may always be first
        in_round = [impl for impl in impls if rounds.get(impl.library, repeat) > r]
        n = len(in_round)
        order = in_round[r % n:] + in_round[:r % n] if n else []
        if r % 2:  # the same first library, the others in reverse
            order = order[:1] + order[:0:-1]
        for impl in order:
            gc.collect()  # (the peers' idle OpenMP threads sleep: cli.PEER_ENV)
            if timer is not None:
                times[impl.library].append(timer(impl.fn))
                continue
            sync()
            t0 = time.perf_counter()
            for _ in range(impl.calls):
                impl.fn()
            sync()
            times[impl.library].append((time.perf_counter() - t0) / impl.calls)
        if r == 0 and not warmup:
            for impl in impls:
                batch(impl, times[impl.library][0])
        if r == 0 and budget:
            rounds = plan_rounds({i.library: times[i.library][0] * i.calls for i in impls}, repeat, budget)
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


def run_case(case, repeat=5, warmup=1, sync=None, timer=None, device="cpu", budget=None):
    """Time one case; returns a list of result rows.

    Beside the libraries a copy of the case's floor bytes is timed
    (:func:`floor_impl`); every row gets ``floor_s`` and
    ``x_floor`` (its median over the floor). ``budget``: as in
    :func:`time_alternating`. ``peak_bytes`` stays None: peak memory is read
    in a separate process (module doc).
    """
    if case.output_bytes is None:
        ours_impl = next((i for i in case.impls if i.library == "coosparse"), None)
        case.output_bytes = result_nbytes(ours_impl.fn()) if ours_impl is not None else 0
    fb = floor_bytes(case)
    impls = list(case.impls)
    floor = floor_impl(fb, device) if fb else None
    if floor is not None:
        impls.append(floor)
    times = time_alternating(impls, repeat=repeat, warmup=warmup, sync=sync, timer=timer, budget=budget)
    floor_s = statistics.median(times.pop(FLOOR_LIBRARY)) * floor.scale if floor is not None else None
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
                "output_bytes": case.output_bytes,
                "floor_bytes": fb,
                "floor_s": floor_s,
                "x_floor": (med / floor_s) if floor_s else None,
                "note": impl.note,
                "calls_per_sample": impl.calls,
            }
        )
    return rows


def run_cases(cases, repeat=5, warmup=1, sync=None, timer=None, device="cpu"):
    """Time every case (no memory: see the module doc); flat result rows."""
    return [r for case in cases
            for r in run_case(case, repeat=repeat, warmup=warmup, sync=sync, timer=timer, device=device)]


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
