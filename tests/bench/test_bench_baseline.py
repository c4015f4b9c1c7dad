"""The baseline guard: standings per case, the comparison, and the CLI that stores and checks them.

No timing is asserted: the rows are made up, and the CLI run only has to
write and read the file.
"""
from __future__ import annotations

import math
import os
import sys

import pytest

from coosparse.bench import baseline


def _rows(ours, peers, floor=None, op="spmv", workload="w", device="cpu"):
    rows = [{"op": op, "workload": workload, "library": "coosparse", "device": device, "median_s": ours,
             "floor_s": floor}]
    for lib, t in peers.items():
        rows.append({"op": op, "workload": workload, "library": lib, "device": device, "median_s": t,
                     "speedup_vs_peer": t / ours})
    return rows


def test_standings_are_ratios_over_peers_and_the_floor():
    s = baseline.standings(_rows(2.0, {"scipy": 4.0, "graphblas": 1.0}, floor=0.5))
    assert s == {"cpu|spmv|w": {"floor": 0.25, "graphblas": 0.5, "scipy": 2.0}}
    errors = [{"op": "x", "workload": "w", "library": "coosparse", "median_s": None, "error": "crashed"}]
    assert baseline.standings(errors) == {}


def test_compare_reports_only_drops_beyond_the_tolerance():
    base = baseline.baseline_from(_rows(1.0, {"scipy": 2.0, "torch": 3.0}, floor=0.5))
    # the whole machine twice as slow: every library and the floor alike -> nothing to report
    assert baseline.compare(_rows(2.0, {"scipy": 4.0, "torch": 6.0}, floor=1.0), base) == []
    # coosparse alone 5% slower: within the tolerance
    assert baseline.compare(_rows(1.05, {"scipy": 2.0, "torch": 3.0}, floor=0.5), base) == []
    # coosparse alone 25% slower: reported, with each reference's ratios
    (r,) = baseline.compare(_rows(1.25, {"scipy": 2.0, "torch": 3.0}, floor=0.5), base)
    assert r["op"] == "spmv" and math.isclose(r["change"], 0.8)
    assert r["references"]["scipy"] == (2.0, 1.6)
    # a peer that got slower masks part of it (geometric mean over the references)
    (r,) = baseline.compare(_rows(1.25, {"scipy": 2.5, "torch": 3.0}), base)
    assert math.isclose(r["change"], math.sqrt(1.0 * 0.8))
    # cases or references missing from the baseline are not compared
    assert baseline.compare(_rows(9.0, {"pydata": 1.0}, op="other"), base) == []
    assert baseline.compare(_rows(9.0, {"pydata": 1.0}), base) == []


def test_baseline_merges_and_round_trips(tmp_path):
    first = baseline.baseline_from(_rows(1.0, {"scipy": 2.0}, op="a") + _rows(1.0, {"scipy": 2.0}, op="b"))
    second = baseline.baseline_from(_rows(1.0, {"scipy": 3.0}, op="a"), previous=first)
    assert second["cases"]["cpu|a|w"] == {"scipy": 3.0} and second["cases"]["cpu|b|w"] == {"scipy": 2.0}
    path = tmp_path / "b.json"
    baseline.save(path, second)
    assert baseline.entry_for(baseline.load(path), None)["cases"] == second["cases"]  # the one-machine layout
    assert baseline.load(tmp_path / "missing.json") is None
    text = baseline.format_regressions(baseline.compare(_rows(2.0, {"scipy": 3.0}, op="a"), second), path)
    assert "a [w]: 50% slower (scipy 3.00x -> 1.50x)" in text


@pytest.mark.parametrize("factor", [0.01, 100.0])
def test_cli_checks_and_updates_the_baseline(tmp_path, factor):
    """The CLI's guard in process (the subprocess run that stores a baseline is in test_bench_cli)."""
    from coosparse.bench import cli

    path = tmp_path / "baseline.json"
    rows = _rows(1.0, {"scipy": 2.0}, floor=0.5)
    baseline.save(path, baseline.baseline_from(_rows(1.0, {"scipy": 2.0 * factor}, floor=0.5 * factor)))
    args = cli.parse_args(["--baseline", str(path), "--out", str(tmp_path / "res")])
    info = {}
    text = cli.check_baseline(rows, info, args)
    for r in rows:
        r.update(min_s=r["median_s"], max_s=r["median_s"], floor_bytes=1e6, peak_bytes=None)
    slower = factor > 1  # the stored ratios were 100x better: this run is slower
    assert ("slower than the baseline, relative to" in text) == slower
    assert len(info["baseline"]["regressions"]) == int(slower)
    written = cli.write_outputs(rows, dict(info, command="x", cpu="c", cores=2, cores_usable=2, versions={},
                                           python="3"), args)
    assert ("99% slower" in (tmp_path / "res" / "results.md").read_text()) == slower
    assert written
    args = cli.parse_args(["--baseline", str(path), "--update-baseline"])
    text = cli.check_baseline(rows, {}, args)
    assert "baseline updated" in text
    assert baseline.entry_for(baseline.load(path), None)["cases"]["cpu|spmv|w"] == {"floor": 0.5, "scipy": 2.0}
    assert cli.check_baseline(rows, {}, cli.parse_args(["--no-baseline"])) is None


def test_confirm_splits_flagged_cases_by_their_second_timing():
    base = baseline.baseline_from(_rows(1.0, {"scipy": 2.0}, op="a") + _rows(1.0, {"scipy": 2.0}, op="b")
                                  + _rows(1.0, {"scipy": 2.0}, op="c"))
    first = _rows(2.0, {"scipy": 2.0}, op="a") + _rows(2.0, {"scipy": 2.0}, op="b") + _rows(2.0, {"scipy": 2.0}, op="c")
    flagged = baseline.compare(first, base)
    assert {r["op"] for r in flagged} == {"a", "b", "c"}
    # a: a stall the second timing does not show; b: slow again; c: no second result
    again = _rows(1.02, {"scipy": 2.0}, op="a") + _rows(1.9, {"scipy": 2.0}, op="b")
    confirmed, not_confirmed = baseline.confirm(flagged, again, base)
    assert [r["op"] for r in not_confirmed] == ["a"]
    assert sorted(r["op"] for r in confirmed) == ["b", "c"]
    assert math.isclose(not_confirmed[0]["rerun_change"], 1 / 1.02)
    assert [r["rerun_change"] for r in confirmed if r["op"] == "c"] == [None]
    text = baseline.format_regressions(confirmed, "p", not_confirmed=not_confirmed)
    assert "2 case(s) more than 10% slower" in text
    assert "Not confirmed: 1 case(s)" in text and "- a [w]: 50% slower (scipy 2.00x -> 1.00x; timed again: 2% slower)" in text
    assert "no case more than" in baseline.format_regressions([], "p", not_confirmed=not_confirmed)


def test_update_keeps_the_stored_ratios_of_unconfirmed_cases(tmp_path):
    """A stalled first timing that the second does not confirm is not written into the baseline."""
    from coosparse.bench import cli

    path = tmp_path / "baseline.json"
    baseline.save(path, baseline.baseline_from(_rows(1.0, {"scipy": 2.0}, op="a") + _rows(1.0, {"scipy": 2.0}, op="b")))
    rows = _rows(2.0, {"scipy": 2.0}, op="a") + _rows(2.0, {"scipy": 2.0}, op="b")
    asked = []

    def rerun(regressions):
        asked.extend(r["op"] for r in regressions)
        return _rows(1.0, {"scipy": 2.0}, op="a") + _rows(2.0, {"scipy": 2.0}, op="b")

    info = {}
    text = cli.check_baseline(rows, info, cli.parse_args(["--baseline", str(path), "--update-baseline"]), rerun=rerun)
    assert sorted(asked) == ["a", "b"]
    assert [r["op"] for r in info["baseline"]["regressions"]] == ["b"]
    assert [r["op"] for r in info["baseline"]["not_confirmed"]] == ["a"]
    assert "Not confirmed" in text and "baseline updated" in text
    cases = baseline.entry_for(baseline.load(path), None)["cases"]
    assert cases["cpu|a|w"] == {"scipy": 2.0} and cases["cpu|b|w"] == {"scipy": 1.0}
    # --no-confirm: no second timing, every flagged case reported and written
    asked.clear()
    info = {}
    cli.check_baseline(rows, info, cli.parse_args(["--baseline", str(path), "--no-confirm"]), rerun=rerun)
    assert asked == [] and len(info["baseline"]["regressions"]) == 1  # a is 2x slower than stored, b level


def test_rerun_times_only_the_flagged_cases(tmp_path, monkeypatch):
    """The second timing runs the flagged case's module with only that case."""
    from coosparse.bench import cli

    pkg = tmp_path / "rerunpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "cases_two.py").write_text(
        "from coosparse.bench.harness import Case, Impl\n"
        "def cases(size='medium', libraries=None):\n"
        "    return [Case('one', 'w', [Impl('coosparse', lambda: sum(range(100))), Impl('p', lambda: 1)]),\n"
        "            Case('two', 'w', [Impl('coosparse', lambda: sum(range(100))), Impl('p', lambda: 1)])]\n"
    )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path)] + sys.path))
    args = cli.parse_args(["--repeat", "1", "--no-memory", "--no-progress"])
    rows = [{"op": op, "workload": "w", "library": "coosparse", "device": "cpu", "module": "rerunpkg.cases_two"}
            for op in ("one", "two")]
    again = cli.rerun_cases([{"key": "cpu|two|w", "op": "two", "workload": "w"}], rows, args)
    assert {r["op"] for r in again} == {"two"} and {r["library"] for r in again} == {"coosparse", "p"}


def test_each_cpu_model_is_compared_with_its_own_entry(tmp_path):
    """Ratios differ between CPU models: a run meets only its own model's entry; another model's run
    compares nothing and, with --update-baseline, adds its own entry beside the first."""
    from coosparse.bench import cli

    path = tmp_path / "baseline.json"
    amd = {"cpu": "AMD EPYC"}
    cli.check_baseline(_rows(1.0, {"scipy": 2.0}), dict(amd), cli.parse_args(["--baseline", str(path), "--update-baseline"]))
    slower = _rows(2.0, {"scipy": 2.0})
    intel = {"cpu": "Intel Xeon"}
    text = cli.check_baseline(slower, intel, cli.parse_args(["--baseline", str(path)]))
    assert "no baseline for this CPU model (Intel Xeon; stored: AMD EPYC)" in text and "baseline" not in intel
    text = cli.check_baseline(slower, dict(intel), cli.parse_args(["--baseline", str(path), "--update-baseline"]))
    doc = baseline.load(path)
    assert sorted(doc["machines"]) == ["AMD EPYC", "Intel Xeon"]
    assert baseline.entry_for(doc, "Intel Xeon")["cases"]["cpu|spmv|w"] == {"scipy": 1.0}
    assert baseline.entry_for(doc, "AMD EPYC")["cases"]["cpu|spmv|w"] == {"scipy": 2.0}
    info = dict(amd)  # the AMD run is still compared with the AMD entry: 50% slower
    cli.check_baseline(slower, info, cli.parse_args(["--baseline", str(path), "--no-confirm"]))
    assert [round(r["change"], 2) for r in info["baseline"]["regressions"]] == [0.5]
