"""The one-shot GPU check (scripts/gpu_check.sh): its order, its budget, and a dry run on the emulated device.

The lent machine gives the check one run of at most eight minutes, so the
order (identity, then the benchmark, then the rest) and the budget are what
decide which results come back. The budget logic is checked with a simulated
clock for every section hanging; a dry run with a section made to hang
(``GPU_CHECK_SIMULATE_SLOW``) shows the identity and bench sections still run
and save their results, the hanging one is cut at its deadline, the ones
after it run, and ``$OUT`` keeps within the eight files the machine returns.
"""
import importlib.util
import json
import math
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPO, "scripts", f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # (dataclasses look their module up)
    spec.loader.exec_module(mod)
    return mod


run = _load("gpu_check_run")
NEEDS = {"identity": 90, "bench": 120, "capture": 30, "sanitize": 30, "pytest": 50, "gap": 10, "identity-late": 5}


def _simulate(hanging, budget=run.BUDGET_S):
    """Seconds each section gets when the sections in ``hanging`` never finish (a simulated clock)."""
    scale = budget / run.BUDGET_S
    t, end, got = run.SETUP_S, budget, {}
    for i, sec in enumerate(run.PLAN):
        deadline = run.deadline_for(run.PLAN, i, t, end, scale)
        if deadline - t < run.MIN_SECTION_S * min(scale, 1):
            got[sec.name] = 0.0
            continue
        need = math.inf if sec.name in hanging else NEEDS[sec.name] * scale
        took = min(need, deadline - t)  # the deadline is hard (SIGKILL at it)
        got[sec.name] = took
        t += took
    return got, t


def test_every_reserve_is_enough_to_start():
    for sec in run.PLAN:
        assert sec.reserve_s == 0 or sec.reserve_s * min(run.DRY_BUDGET_S, 240) / run.BUDGET_S >= run.MIN_SECTION_S * 0.5
        assert sec.reserve_s == 0 or sec.reserve_s >= run.MIN_SECTION_S


def test_the_order_puts_identity_and_bench_first():
    assert [s.name for s in run.PLAN][:3] == ["identity", "bench", "capture"]
    assert [s.name for s in run.PLAN].index("pytest") > [s.name for s in run.PLAN].index("sanitize")
    # the two first sections fit whole, with every later section's reserve kept
    assert run.SETUP_S + run.PLAN[0].max_s + run.PLAN[1].max_s + sum(s.reserve_s for s in run.PLAN[2:]) <= run.BUDGET_S


@pytest.mark.parametrize("budget", [run.BUDGET_S, run.DRY_BUDGET_S, 240])
@pytest.mark.parametrize("hanging", [()] + [(s.name,) for s in run.PLAN] + [tuple(s.name for s in run.PLAN)])
def test_a_hanging_section_cannot_starve_the_others(hanging, budget):
    scale = budget / run.BUDGET_S
    got, total = _simulate(set(hanging), budget)
    assert total <= budget
    for sec in run.PLAN:
        if sec.name in ("identity", "bench"):  # whatever hangs: their whole share (or what they need)
            want = sec.max_s * scale if sec.name in hanging else NEEDS[sec.name] * scale
            assert got[sec.name] == pytest.approx(want), (sec.name, got)
        else:  # the others: at least their reserve (or what they need)
            need = math.inf if sec.name in hanging else NEEDS[sec.name] * scale
            assert got[sec.name] >= min(need, sec.reserve_s * scale) - 1e-9, (sec.name, got)
        if sec.name in hanging:
            assert got[sec.name] <= sec.max_s * scale + 1e-9


def test_the_old_order_lost_identity():
    # the plan the check had (sync first, ~71 one-second spins, then identity within 150 s) is
    # what this order avoids: a sync section that needs its whole 71 s plus compiles leaves the
    # identity section nothing; in the new plan, identity runs first
    got, _ = _simulate({"capture"})
    assert got["identity"] == NEEDS["identity"] and got["bench"] == NEEDS["bench"]


def test_dry_run_with_a_hanging_section(tmp_path):
    """The whole dry run, small: capture hangs; identity and bench run and keep their results."""
    out = tmp_path / "out"
    env = dict(os.environ, OUT=str(out), GPU_CHECK_BUDGET="240", GPU_CHECK_SIMULATE_SLOW="capture",
               GPU_CHECK_IDENTITY_CASES="coalesce float64|sum over every axis float32|matmul(coo, vector) float64",
               GPU_CHECK_IDENTITY_N="2000", GPU_CHECK_SANITIZE_N="500", GPU_CHECK_BENCH_MODULES="cases_coalesce",
               PYTHON=sys.executable)
    r = subprocess.run(["bash", os.path.join(REPO, "scripts", "gpu_check.sh"), "--dry-run"], env=env,
                       capture_output=True, text=True, timeout=900)
    summary = (out / "summary.txt").read_text()
    assert r.returncode in (1, 3), summary + r.stderr[-2000:]  # capture was cut: not PASSED
    files = sorted(os.listdir(out))
    assert len(files) <= 8 and set(files) <= set(run.OUT_FILES), files
    doc = json.loads((out / "gpu_check.json").read_text())
    rows = {row["section"]: row for row in doc["summary"]}
    assert list(rows) == [s.name for s in run.PLAN]
    assert rows["capture"]["status"] == "CUT", rows["capture"]
    assert rows["capture"]["seconds"] <= 45 * 0.5 + 5  # its own max, scaled: it took no one else's time
    ident = doc["sections"]["identity"]
    assert ident["cases"] and all(v.startswith("bit-identical") for v in ident["cases"].values()), ident
    bench = json.loads((out / "bench.json").read_text())
    assert bench["rows"] and doc["sections"]["bench"]["status"] == "ran"
    for later in ("sanitize", "pytest", "gap"):  # the sections after the hanging one still ran
        assert rows[later]["status"] != "CUT" or "deadline" in rows[later]["detail"], rows[later]
    assert doc["sections"]["badinput"]["cases"]
    assert "INCOMPLETE" in summary or "FAILED" in summary


class _FakeStream:
    """A stream on a simulated GPU: kernels run one after another in real time (a spin kernel: its cycles)."""

    RATE = 1e9  # simulated clock cycles per second

    def __init__(self):
        self.busy_until = 0.0

    def launch(self, seconds):
        import time

        self.busy_until = max(time.perf_counter(), self.busy_until) + seconds

    def record(self, event=None):
        event = event or _FakeEvent()
        event.t = self.busy_until
        return event

    def synchronize(self):
        import time

        while time.perf_counter() < self.busy_until:
            time.sleep(0.005)


class _FakeEvent:
    stream = None

    def __init__(self):
        self.t = 0.0

    def record(self, stream=None):
        self.t = (stream or _FakeEvent.stream).busy_until

    def synchronize(self):
        _FakeEvent.stream.synchronize()

    @property
    def done(self):
        import time

        return time.perf_counter() >= self.t


def test_one_spin_tells_synchronising_operations_apart(monkeypatch):
    """The capture section's synchronisation test (one spin for every case), on a simulated stream."""
    import types

    check = _load("gpu_check")
    stream = _FakeStream()
    _FakeEvent.stream = stream
    cuda = types.SimpleNamespace(Event=_FakeEvent, get_current_stream=lambda: stream,
                                 get_elapsed_time=lambda a, b: 1e3 * (b.t - a.t))

    def raw_kernel(src, name):
        return lambda grid, block, args: stream.launch(int(args[0]) / _FakeStream.RATE)

    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=cuda, RawKernel=raw_kernel))
    check.RESULTS["capture"] = {"cases": {}, "failures": []}
    ops = {"queues only": lambda: stream.launch(0.001), "reads a size": stream.synchronize,
           "queues again": lambda: None, "coalesce (control: synchronises)": stream.synchronize}
    got = check._sync_test(ops, spin_s=0.3)
    assert got["queues only"] == got["queues again"] == "returns at once", got
    assert got["reads a size"].startswith("SYNCHRONISES") and got["coalesce (control: synchronises)"].startswith(
        "SYNCHRONISES"), got
