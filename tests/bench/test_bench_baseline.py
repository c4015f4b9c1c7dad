"""The baseline guard: standings per case, the comparison, and the CLI that stores and checks them.

No timing is asserted: the rows are made up, and the CLI run only has to
write and read the file.
"""
from __future__ import annotations

import math

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
    assert baseline.load(path)["cases"] == second["cases"]
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
    assert baseline.load(path)["cases"]["cpu|spmv|w"] == {"floor": 0.5, "scipy": 2.0}
    assert cli.check_baseline(rows, {}, cli.parse_args(["--no-baseline"])) is None
