"""The cold-start suite (``python -m coosparse.bench --suite coldstart``) runs its cases in fresh
processes and reports them; no time is asserted (figures depend on the machine and its load)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from coosparse.bench import coldstart

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _child(first, second=0.001, kernels=None, label="a + b", case="add"):
    return {"import_s": 0.2, "total_s": first + 1, "load": 1.0,
            "steps": [{"case": case, "label": label, "first_s": first, "first_cpu_s": first, "second_s": second,
                       "kernels": kernels}]}


def test_summary_takes_medians_and_the_warm_run():
    kernels = [{"kernel": "coosparse._kernels.numba.union._merge_add_idx_part", "args": "(...)", "seconds": 0.5,
                "parallel": False},
               {"kernel": "numba.np.arrayobj.ol_np_empty.<locals>.impl", "args": "(...)", "seconds": 0.1,
                "parallel": False}]
    row = coldstart.summarise("add", "coosparse", [_child(3.0), _child(1.0), _child(2.0)], _child(0.05),
                              _child(2.5, kernels=kernels))
    assert row["cold_s"] == 2.0 and row["warm_s"] == 0.05 and row["cold_runs_s"] == [3.0, 1.0, 2.0]
    assert row["label"] == "a + b" and len(row["kernels"]) == 2
    table = coldstart.markdown([row, coldstart.summarise("add", "pydata", [_child(0.4)], _child(0.3), None)])
    assert "| `a + b` | 2.00 s | 50 ms | 0.40 s | 0.30 s |" in table
    assert "`import`" in table
    bd = coldstart.breakdown_markdown([row])
    assert "| add | 1 coosparse, 1 Numba | 0.60 | union._merge_add_idx_part 0.50" in bd


def test_summary_reports_errors_and_missing_equivalents():
    assert coldstart.summarise("add", "coosparse", [{"error": "boom"}], None, None)["error"] == "boom"
    empty = {"import_s": 0.1, "total_s": 0.2, "load": 1.0, "steps": []}
    row = coldstart.summarise("sampled_matmul", "pydata", [empty], empty, None)
    assert row["error"] == "no equivalent"
    assert "| sampled_matmul | – | – |" in coldstart.markdown([row]).replace("`", "")


def test_cases_filter():
    assert coldstart.case_names(["add"]) == ["add"]
    assert coldstart.case_names([])[-1] == coldstart.SCRIPT and len(coldstart.case_names([])) == 11


def test_cli_runs_a_case_in_fresh_processes(tmp_path):
    # np.sqrt on a coalesced array needs no kernel: its breakdown lists none of coosparse's
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", "coosparse.bench", "--suite", "coldstart", "--op", "sqrt",
                        "--library", "coosparse", "--size", "small", "--breakdown", "--no-progress",
                        "--out", str(out)], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert p.returncode == 0, p.stderr
    data = json.loads((out / "coldstart.json").read_text())
    (row,) = [r for r in data["rows"] if r["library"] == "coosparse"]
    assert row["case"] == "sqrt" and not row.get("error")
    assert row["cold_s"] > 0 and row["warm_s"] > 0 and len(row["cold_runs_s"]) == 1
    assert [k for k in row["kernels"] if k["kernel"].startswith("coosparse.")] == []
    assert "`np.sqrt(a)`" in (out / "coldstart.md").read_text()
