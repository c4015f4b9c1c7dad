"""The benchmark CLI produces its files, and the workloads are what they claim.

No timings are asserted here (benchmarks live in ``make bench``).
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from coosparse.bench import discover, report, workloads


def _keys(a):
    return a.indices[0] * a.shape[1] + a.indices[1]


def test_workloads_are_deterministic_and_flagged():
    a1, a2 = workloads.uniform("small", seed=3), workloads.uniform("small", seed=3)
    np.testing.assert_array_equal(a1.indices, a2.indices)
    np.testing.assert_array_equal(a1.values, a2.values)
    assert a1.shape == (131072, 131072) and a1.nnz == 200_000 and a1.dtype == np.float64
    assert not a1.is_sorted and not a1.is_unique
    u = workloads.uniform("small", duplicates=False)
    assert u.is_unique and np.unique(_keys(u)).size == u.nnz


@pytest.mark.parametrize("coalesced", [False, True])
def test_uniform_pair_shares_half(coalesced):
    a, b = workloads.uniform_pair("small", coalesced=coalesced)
    assert a.is_coalesced == coalesced == b.is_coalesced and a.is_unique and b.is_unique
    shared = np.intersect1d(_keys(a), _keys(b)).size
    assert shared == a.nnz // 2 == 100_000
    if coalesced:
        assert np.all(np.diff(_keys(a)) > 0) and np.all(np.diff(_keys(b)) > 0)


def test_rmat_is_power_law_and_graph500_sized():
    g = workloads.rmat("small")
    assert g.shape == (2**14, 2**14) and g.nnz == 16 * 2**14
    deg = np.bincount(g.indices[0], minlength=g.shape[0])
    assert deg.max() > 50 * np.median(deg[deg > 0])  # heavy tail, unlike the uniform workload
    c = workloads.rmat("small", coalesced=True)
    assert c.is_coalesced and np.all(np.diff(_keys(c)) > 0)


def test_tensor3d_densifies():
    t = workloads.tensor3d("small")
    assert t.ndim == 3 and t.shape == (128, 128, 128) and t.nnz == 200_000


def test_filters():
    assert discover.op_matches("multiply (coalesced)", ["multiply"])
    assert discover.op_matches("sparse_mask dense", ["sparse_mask*"])
    assert not discover.op_matches("add", ["multiply"])
    assert discover.library_matches("torch-cuda", ["torch"])
    assert discover.library_matches("coosparse", ["scipy"])
    assert not discover.library_matches("scipy", ["torch"])
    assert "cases_coalesce" in discover.case_modules()


def test_report_handles_errors_and_crashes():
    rows = [
        {"op": "mul", "workload": "w", "library": "coosparse", "median_s": 0.01, "min_s": 0.01,
         "max_s": 0.02, "speedup_vs_peer": None, "peak_bytes": 1 << 20},
        {"op": "mul", "workload": "w", "library": "torch", "median_s": None, "min_s": None, "max_s": None,
         "speedup_vs_peer": None, "peak_bytes": None, "error": "crashed (SIGFPE)"},
    ]
    assert "crashed" in report.format_table(rows)
    assert "| mul | w | 10.0 ms | – | crashed |" in report.summary_markdown(rows)  # x floor unknown: –
    assert report.replace_block("a <!-- bench:begin -->old<!-- bench:end --> b", "new") == (
        "a <!-- bench:begin -->\nnew\n<!-- bench:end --> b")


def test_cli_writes_its_files(tmp_path):
    out = tmp_path / "res"
    proc = subprocess.run(
        [sys.executable, "-m", "coosparse.bench", "--size", "small", "--op", "coalesce", "--repeat", "1",
         "--warmup", "0", "--no-memory", "--no-progress", "--out", str(out),
         "--baseline", str(tmp_path / "baseline.json"), "--update-baseline"],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "coalesce" in proc.stdout and "coosparse" in proc.stdout
    stored = json.loads((tmp_path / "baseline.json").read_text())  # the baseline guard's file
    (entry,) = stored["machines"].values()  # one entry, this machine's CPU model
    assert entry["machine"]["cpu"] in stored["machines"]
    assert entry["cases"] and all("floor" in refs for refs in entry["cases"].values())
    data = json.loads((out / "results.json").read_text())
    assert data["machine"]["cores"] >= 1 and "numpy" in data["machine"]["versions"]
    assert "--size small" in data["machine"]["command"]
    assert {r["library"] for r in data["results"]} >= {"coosparse"}
    assert "| coalesce |" in (out / "results.md").read_text()
    chart = out / "speedups.png"
    if importlib.util.find_spec("matplotlib") is None:  # the chart is optional (make test has no matplotlib)
        assert not chart.exists()
    elif any(r.get("speedup_vs_peer") for r in data["results"]):
        assert chart.stat().st_size > 1000


def test_cli_survives_a_crashing_library(tmp_path, monkeypatch):
    """A library that kills its process is reported as crashed; the others still run."""
    from coosparse.bench import cli
    from coosparse.bench.progress import Progress

    pkg = tmp_path / "crashpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "cases_boom.py").write_text(
        "import os, signal\n"
        "from coosparse.bench.harness import Case, Impl\n"
        "def cases(size='medium', libraries=None):\n"
        "    return [Case('boom', 'w', [Impl('coosparse', lambda: sum(range(100))),\n"
        "                               Impl('dies', lambda: os.kill(os.getpid(), signal.SIGFPE)),\n"
        "                               Impl('ok', lambda: sum(range(200)))])]\n"
    )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path)] + sys.path))
    args = cli.parse_args(["--repeat", "1", "--no-memory", "--no-progress"])
    rows = {r["library"]: r for r in cli.run_module("crashpkg.cases_boom", "cpu", args, Progress(enabled=False))}
    assert rows["dies"]["error"] == "crashed (SIGFPE)"
    assert rows["ok"]["median_s"] is not None and rows["coosparse"]["median_s"] is not None


def test_peak_memory_sees_large_blocks_with_the_threshold_fixed():
    """The peak-memory worker's setting (fixed mmap threshold) makes a 50 MiB block show up."""
    from coosparse.bench.harness import MMAP_THRESHOLD

    code = (
        "import numpy as np\n"
        "from coosparse.bench.harness import peak_memory\n"
        "np.ones(50 * 2**20 // 8)\n"  # freed: must not hide the next allocation
        "print(peak_memory(lambda: np.ones(50 * 2**20 // 8)))\n"
    )
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_=str(MMAP_THRESHOLD))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert 45 * 2**20 <= int(out.stdout) <= 80 * 2**20
