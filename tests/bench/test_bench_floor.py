"""The benchmark's memory floor and chart: what they compute, never how fast anything is."""
import importlib.util
import struct

import numpy as np
import pytest

import coosparse
from coosparse.bench import harness, report
from coosparse.bench.harness import Case, Impl


def test_result_nbytes():
    a = coosparse.random((50, 60), nnz=40, seed=0)
    assert harness.result_nbytes(a) == a.indices.nbytes + a.values.nbytes
    assert harness.result_nbytes(np.zeros(10)) == 80
    assert harness.result_nbytes((np.zeros(3), [np.zeros(2, np.int32), None], 5)) == 24 + 8
    torch = pytest.importorskip("torch")
    assert harness.result_nbytes(torch.zeros(4, dtype=torch.float32)) == 16
    t = torch.sparse_coo_tensor(torch.tensor([[0, 1]]), torch.tensor([1.0, 2.0]), (3,), check_invariants=True)
    assert harness.result_nbytes(t) == 2 * 8 + 2 * 4


def test_run_case_reports_the_floor():
    x = np.ones(1 << 16)
    case = Case("copy", "w", [Impl("coosparse", lambda: x.copy()), Impl("peer", lambda: x * 1.0)],
                input_bytes=x.nbytes)
    rows = harness.run_case(case, repeat=3, warmup=0)
    assert case.output_bytes == x.nbytes  # measured on coosparse's result
    assert {r["library"] for r in rows} == {"coosparse", "peer"}  # the floor copy is no row
    for r in rows:
        assert r["floor_bytes"] == 2 * x.nbytes and r["floor_s"] > 0
        assert r["x_floor"] == pytest.approx(r["median_s"] / r["floor_s"])
    # no declared input bytes: no floor
    rows = harness.run_case(Case("f", "w", [Impl("coosparse", lambda: 1)]), repeat=1, warmup=0)
    assert rows[0]["floor_s"] is None and rows[0]["x_floor"] is None
    assert "| f | w | " in report.summary_markdown(rows) and " – |" in report.summary_markdown(rows)


def _rows(n):
    out = []
    for i in range(n):
        base = {"op": f"op{i}", "workload": "a workload", "device": "cpu", "min_s": 0.01, "max_s": 0.02}
        out.append(dict(base, library="coosparse", median_s=0.01, speedup_vs_peer=None, x_floor=2.5))
        out.append(dict(base, library="torch", median_s=0.05, speedup_vs_peer=5.0))
        out.append(dict(base, library="scipy", median_s=0.005, speedup_vs_peer=0.5))
    return out


def test_chart_one_row_per_case_about_1200_pixels_wide(tmp_path):
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib is optional")
    small = report.write_chart(tmp_path / "s.png", _rows(3), title="t")
    big = report.write_chart(tmp_path / "b.png", _rows(20), title="t")
    (w1, h1), (w2, h2) = (struct.unpack(">II", open(p, "rb").read(24)[16:24]) for p in (small, big))
    assert w1 == w2 == 1200
    assert h2 > h1  # rows add height, not width
    assert "2.5" in report.summary_markdown(_rows(1))
