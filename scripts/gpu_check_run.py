"""Order and budget of the one-shot GPU check: runs scripts/gpu_check.py section by section.

``scripts/gpu_check.sh`` calls this after the environment report. One run
takes at most ``--budget`` seconds (480: eight minutes of a lent machine's
fifteen) and yields, in this order, what is worth most first:

==============  ======================================================================
identity        CPU (Numba) vs GPU bit identity, every kernel family, saved case by case
bench           the medium-size benchmark of coalesce, the intersection family, scatter,
                reductions and linear algebra against torch CUDA and cupyx
capture         the sync-free list: one spin kernel for all cases, then CUDA-graph capture
                (outputs poisoned, two replays)
sanitize        bad input (the device error's message) and a small identity run, under
                compute-sanitizer memcheck where it exists
pytest          the test suite's ``cuda`` marks and the kernel tests on the ``cuda`` backend
gap             the FILL_MAX_GAP crossover (timings; last, and cut first)
identity-late   identity cases whose CPU result came after the identity section's deadline
==============  ======================================================================

Two background processes start at once: the CPU side of the identity check
(Numba compiles while the GPU works) and ``load`` (every kernel file built and
loaded, its PTX checked for ``.ftz``; it fills the on-disk kernel cache).

Budget: a section may run for at most its ``max_s``, and never into the time
``reserve_s`` kept for each section after it, so a slow or hanging section
(a cold compile, a spin that never ends) cannot starve the ones after it; the
first two sections come first, so nothing can starve them. Limits scale with
``--budget``. A section still running near its deadline gets SIGINT (it saves
what it has and stops), and SIGKILL at the deadline. Each section runs in a
process of its own (a device fault cannot take the others down) and writes
its results as it goes; this runner merges them into ``$OUT/gpu_check.json``
every few seconds and appends one line per section to ``$OUT/summary.txt``:
what ran, what was cut and why. The deadline is hard: SIGINT comes
``grace_for`` seconds before it, SIGKILL at it. The run ends PASSED, INCOMPLETE (nothing
failed, something was cut: exit 3) or FAILED (a check failed, or the run was
stopped by SIGINT/SIGTERM: exit 1).

``$OUT`` holds at most eight files (the lent machine returns no more):
env.txt, summary.txt, gpu_check.json, gpu_check.log, bench.json, bench.md,
pytest-gpu.log, pytest-gpu.xml. Scratch files go to ``--work``.
"""
from __future__ import annotations

import argparse
import dataclasses
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CHECK = os.path.join(HERE, "gpu_check.py")
BUDGET_S = 480
DRY_BUDGET_S = 1200  # the emulated device and Numba's first compile on a CPU: the same plan, 2.5 times longer
GRACE_S = 10
MIN_SECTION_S = 8
OUT_FILES = ("env.txt", "summary.txt", "gpu_check.json", "gpu_check.log", "bench.json", "bench.md",
             "pytest-gpu.log", "pytest-gpu.xml")


@dataclasses.dataclass(frozen=True)
class Section:
    name: str
    max_s: float  # the longest it may run (seconds of the 480-second budget; scaled with the budget)
    reserve_s: float  # kept for it whatever the sections before it take
    what: str


PLAN = (
    Section("identity", 150, 60, "CPU vs GPU bit identity, case by case"),
    Section("bench", 150, 60, "benchmark (medium): coalesce, intersections, scatter, reductions, linalg"),
    Section("capture", 45, 20, "sync-free list: one spin for all, then graph capture with poisoned outputs"),
    Section("sanitize", 45, 20, "bad input and a small identity run under compute-sanitizer"),
    Section("pytest", 60, 25, "the suite's cuda marks and the kernel tests on the cuda backend"),
    Section("gap", 20, 0, "FILL_MAX_GAP crossover"),
    Section("identity-late", 15, 10, "identity cases whose CPU result came late"),
)
SETUP_S = 15  # environment report and import, before the plan starts (within the budget)


def grace_for(allotted):
    """Seconds between SIGINT and SIGKILL for a section given ``allotted`` seconds (within them)."""
    return min(GRACE_S, 0.25 * allotted)


def deadline_for(plan, i, now, end, scale=1.0):
    """Unix time by which section ``i`` must end: its own cap, with the reserves of the later sections kept."""
    later = sum(s.reserve_s for s in plan[i + 1:]) * scale
    return min(now + plan[i].max_s * scale, end - later)


class Runner:
    def __init__(self, out, work, dry, budget, py, t0=None):
        self.out, self.work, self.dry, self.py = out, work, dry, py
        self.t0 = time.time() if t0 is None else t0
        self.end = self.t0 + budget
        self.scale = budget / BUDGET_S
        self.rows, self.background = [], {}
        self.interrupted = None
        self.current = None
        os.makedirs(os.path.join(work, "results"), exist_ok=True)
        self.log = open(os.path.join(out, "gpu_check.log"), "a", buffering=1)

    # ------------------------------------------------------------------ output
    def note(self, line):
        with open(os.path.join(self.out, "summary.txt"), "a") as f:
            f.write(line + "\n")
        print(line, flush=True)

    def merge(self):
        """$OUT/gpu_check.json from every section's own file (a section process rewrites its file as it goes)."""
        sections = {}
        for path in sorted(glob.glob(os.path.join(self.work, "results", "*.json"))):
            try:
                with open(path) as f:
                    sections.update(json.load(f))
            except (OSError, ValueError):
                continue  # being replaced: the next merge has it
        failures = [f"{name}: {what}" for name, r in sections.items() for what in r.get("failures", [])]
        doc = {"dry_run": self.dry, "budget_s": round(self.end - self.t0), "plan": [dataclasses.asdict(s) for s in PLAN],
               "summary": self.rows, "failures": failures, "sections": sections}
        tmp = os.path.join(self.out, "gpu_check.json.tmp")
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1, default=str)
        os.replace(tmp, os.path.join(self.out, "gpu_check.json"))
        return sections

    # ------------------------------------------------------------------ processes
    def _check_cmd(self, sections, result, deadline, *extra, reference=True):
        cmd = [self.py, CHECK, "--sections", sections, "--out", self.out, "--work", self.work,
               "--result", os.path.join(self.work, "results", result + ".json"), "--deadline", f"{deadline:.1f}",
               *extra]
        if reference:
            cmd += ["--reference", os.path.join(self.work, "ref")]
        return cmd + (["--dry-run"] if self.dry else [])

    def spawn(self, cmd, log=None):
        return subprocess.Popen(cmd, stdout=log or self.log, stderr=subprocess.STDOUT, start_new_session=True,
                                cwd=os.getcwd())

    def stop(self, proc, sig=signal.SIGINT, grace=GRACE_S):
        """``sig`` to the process group of ``proc``, then SIGKILL after ``grace`` seconds."""
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()

    def wait(self, proc, deadline, grace):
        """(return code, cut) of ``proc``, merged every 2 s; SIGINT ``grace`` seconds before ``deadline``
        (the section saves what it has and stops), SIGKILL at it: the deadline is a hard bound."""
        while True:
            try:
                rc = proc.wait(timeout=max(min(2.0, deadline - grace - time.time()), 0.05))
                return rc, False
            except subprocess.TimeoutExpired:
                self.merge()
            if self.interrupted or time.time() >= deadline - grace:
                self.stop(proc, grace=max(deadline - time.time(), 1.0) if not self.interrupted else grace)
                return proc.returncode, True

    def start_background(self):
        ref = os.path.join(self.work, "ref")
        n = [] if not os.environ.get("GPU_CHECK_IDENTITY_N") else ["--identity-n", os.environ["GPU_CHECK_IDENTITY_N"]]
        # Numba compiles cold on a fresh machine: a few processes split the cases and compile in parallel
        shards = max(1, min(4, (os.cpu_count() or 1) // 4))
        log = open(os.path.join(self.work, "cpu-reference.log"), "w")
        for i in range(shards):
            cpu = [self.py, CHECK, "--cpu-reference", ref, "--shard", f"{i}/{shards}", *n]
            env = dict(os.environ, NUMBA_NUM_THREADS=str(max(1, (os.cpu_count() or 1) // (shards + 1))))
            self.background[f"cpu-reference {i}/{shards}"] = subprocess.Popen(
                cpu + (["--dry-run"] if self.dry else []), stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True, env=env)
        self.background["load"] = self.spawn(self._check_cmd("load", "load", self.end))

    def stop_background(self):
        for name, proc in self.background.items():
            if proc.poll() is None:
                self.stop(proc, signal.SIGTERM)
                self.note(f"  (background {name}: stopped at the end of the run)")
        path = os.path.join(self.work, "cpu-reference.log")
        if os.path.exists(path):
            with open(path) as f:
                self.log.write("== cpu-reference (background)\n" + f.read())

    # ------------------------------------------------------------------ sections
    def command(self, sec, deadline):
        n = os.environ.get("GPU_CHECK_IDENTITY_N")
        n_args = ["--identity-n", n] if n else []
        if sec.name == "identity":
            return self._check_cmd("identity", "identity", deadline, *n_args)
        if sec.name == "bench":
            return self._check_cmd("bench", "bench", deadline)
        if sec.name == "capture":
            return self._check_cmd("capture", "capture", deadline)
        if sec.name == "sanitize":
            small = os.environ.get("GPU_CHECK_SANITIZE_N", "2000")
            # small: the identity run's CPU side is computed in the same process
            cmd = self._check_cmd("badinput,identity", "sanitize", deadline, "--identity-n", small,
                                  "--label", "identity-sanitized", reference=False)
            san = shutil.which("compute-sanitizer")
            if san and not self.dry and os.environ.get("GPU_CHECK_SANITIZE", "1") != "0":
                return [san, "--tool", "memcheck", "--error-exitcode", "99", "--print-limit", "20"] + cmd
            return cmd
        if sec.name == "pytest":
            return self.pytest_command()
        if sec.name == "gap":
            return self._check_cmd("gap", "gap", deadline)
        if sec.name == "identity-late":
            return self._check_cmd("identity-late", "identity-late", deadline)
        raise ValueError(sec.name)

    def pytest_command(self):
        tests = os.path.join(REPO, "tests")
        if self.dry:  # no GPU here: the same command on a small emulated selection
            sel = ["-k", "emulated or sync_free_operations", os.path.join(tests, "test_smoke.py"),
                   os.path.join(tests, "kernels", "test_cuda_strict.py")]
        else:  # the cuda marks first, then the kernel-level tests on the cuda backend
            sel = ["-k", "cuda and not emulated",
                   os.path.join(tests, "interop", "test_torch.py"), os.path.join(tests, "kernels"),
                   os.path.join(tests, "ops", "reduce"), os.path.join(tests, "ops", "linalg"),
                   "--ignore", os.path.join(tests, "kernels", "test_cuda_compile.py"),
                   "--ignore", os.path.join(tests, "kernels", "test_cuda_emulated.py"),
                   "--ignore", os.path.join(tests, "kernels", "test_cuda_strict.py"),
                   # (emulation-only files: they build the host library when collected)
                   "--ignore", os.path.join(tests, "kernels", "test_blocked_order.py"),
                   "--ignore", os.path.join(tests, "kernels", "test_cooperative_emulation.py")]
        return [self.py, "-m", "pytest", "-q", "-p", "no:cacheprovider", *sel, "--durations=10",
                "--junitxml", os.path.join(self.out, "pytest-gpu.xml")]

    def describe(self, sec, rc, cut, sections, seconds):
        """(status, detail) of a finished section, for summary.txt."""
        if sec.name == "pytest":
            tail = ""
            path = os.path.join(self.out, "pytest-gpu.log")
            if os.path.exists(path):
                with open(path) as f:
                    lines = [ln.strip() for ln in f if ln.strip()]
                tail = lines[-1] if lines else ""
            if cut:
                return "CUT", f"at its deadline ({seconds:.0f} s): {tail}"
            return ("ok" if rc in (0, 5) else "FAILED"), f"rc={rc}: {tail}"
        names = {"sanitize": ("badinput", "identity-sanitized")}.get(sec.name, (sec.name,))
        parts, status = [], "ok"
        for name in names:
            r = sections.get(name, {})
            cases = r.get("cases", {})
            nfail = len(r.get("failures", []))
            if r.get("status") == "cut" or (cut and r.get("status") in (None, "running")):
                status = "CUT"
            if nfail or r.get("status") == "error":
                status = "FAILED"
            total = r.get("total")
            detail = f"{name}: {len(cases)}{'/' + str(total) if total else ''} cases, {nfail} failures"
            if r.get("awaiting_cpu"):
                detail += f", {len(r['awaiting_cpu'])} awaiting the CPU (identity-late)"
            if name == "bench":
                detail = f"bench: {r.get('rows', 0)} rows; " + "; ".join(f"{m} {v}" for m, v in cases.items())
            parts.append(detail)
        if rc not in (0, None) and status == "ok" and not cut:
            status = "FAILED"
            parts.append(f"exit code {rc}" + (" (compute-sanitizer found errors)" if rc == 99 else ""))
        if cut and status == "ok":
            status = "CUT"
        if cut:
            parts.append(f"cut at its deadline after {seconds:.0f} s")
        return status, "; ".join(parts)

    def run(self):
        self.note(f"coosparse GPU check: dry run {self.dry}; budget {self.end - self.t0:.0f} s; plan: "
                  + ", ".join(f"{s.name} <= {s.max_s * self.scale:.0f} s" for s in PLAN))
        self.start_background()
        for i, sec in enumerate(PLAN):
            if self.interrupted:
                self.rows.append({"section": sec.name, "status": "NOT RUN", "detail": f"run {self.interrupted}"})
                self.note(f"{sec.name:14s} NOT RUN   (run {self.interrupted})")
                continue
            now = time.time()
            deadline = deadline_for(PLAN, i, now, self.end, self.scale)
            if deadline - now < MIN_SECTION_S * min(self.scale, 1):
                why = (f"no time left: {self.end - now:.0f} s of the budget remained, "
                       f"{sum(s.reserve_s for s in PLAN[i + 1:]) * self.scale:.0f} s kept for later sections")
                self.rows.append({"section": sec.name, "status": "CUT", "detail": why})
                self.note(f"{sec.name:14s} CUT       {why}")
                continue
            cmd = self.command(sec, deadline)
            self.log.write(f"== [{now - self.t0:.0f}s] {sec.name} (deadline +{deadline - now:.0f} s): {' '.join(cmd)}\n")
            log = open(os.path.join(self.out, "pytest-gpu.log"), "w") if sec.name == "pytest" else None
            if sec.name == "pytest" and sec.name in os.environ.get("GPU_CHECK_SIMULATE_SLOW", "").split(","):
                cmd = [self.py, "-c", "import time\nwhile True: time.sleep(0.2)"]
            self.current = self.spawn(cmd, log)
            rc, cut = self.wait(self.current, deadline, grace_for(deadline - now))
            self.current = None
            seconds = time.time() - now
            sections = self.merge()
            status, detail = self.describe(sec, rc, cut, sections, seconds)
            if self.interrupted:
                status, detail = "CUT", f"run {self.interrupted}; " + detail
            self.rows.append({"section": sec.name, "status": status, "seconds": round(seconds, 1), "detail": detail})
            self.note(f"{sec.name:14s} {status:9s} {seconds:5.0f} s  {detail}")
        self.stop_background()
        sections = self.merge()
        load = sections.get("load", {})
        self.note(f"{'load':14s} {'FAILED' if load.get('failures') else 'ok':9s} (background) "
                  f"{len(load.get('cases', {}))} kernel files built" + (f"; {load['error']}" if load.get("error") else ""))
        failures = [f"{n}: {w}" for n, r in sections.items() for w in r.get("failures", [])]
        failed = bool(failures) or any(r["status"] == "FAILED" for r in self.rows) or bool(self.interrupted)
        incomplete = any(r["status"] in ("CUT", "NOT RUN") for r in self.rows)
        verdict = "FAILED" if failed else ("INCOMPLETE" if incomplete else "PASSED")
        if self.interrupted:
            failures.append(f"the run was {self.interrupted}")
        self.merge()
        self.note(f"done in {time.time() - self.t0:.0f} s: {verdict}"
                  + "".join(f"\n  {f}" for f in failures[:30]))
        self.log.close()
        return 1 if failed else (3 if incomplete else 0)

    def on_signal(self, signum, frame):
        """SIGINT/SIGTERM: the running section is cut (wait() stops it), the rest is not run, the run FAILS."""
        self.interrupted = f"stopped by {signal.Signals(signum).name}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--budget", type=float, default=None,
                    help=f"seconds for the whole run (default $GPU_CHECK_BUDGET, else {BUDGET_S}; "
                         f"dry run {DRY_BUDGET_S}: the same plan, scaled, on a CPU)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--t0", type=float, default=None, help="unix time the run started (the budget counts from it)")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    if args.budget is None:
        args.budget = float(os.environ.get("GPU_CHECK_BUDGET", DRY_BUDGET_S if args.dry_run else BUDGET_S))
    runner = Runner(args.out, args.work, args.dry_run, args.budget, args.python, args.t0)
    signal.signal(signal.SIGINT, runner.on_signal)
    signal.signal(signal.SIGTERM, runner.on_signal)
    return runner.run()


if __name__ == "__main__":
    sys.exit(main())
