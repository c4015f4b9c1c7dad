"""The baseline guard: every case's standing against its peers, stored, and compared run to run.

``make bench`` compares its run with ``docs/bench-baseline.json`` and lists
every case that got more than 10% slower *relative to the same run's peers*:
a case's standing is coosparse's speed-up over each peer of that run
(peer median / coosparse median) and over the memory floor timed beside it
(floor time / coosparse median). Machine load moves all libraries of a case
alike (they run alternately in one process), so the ratios are comparable
across runs where absolute times are not. A case's change is the geometric
mean, over the references present in both runs, of ``now / baseline``; below
``1 - tolerance`` the case is reported, with each reference's ratios.

The baseline is updated on purpose, by a change meant to move the figures:
``python -m coosparse.bench --update-baseline`` (``make bench-baseline``)
writes this run's ratios into it, keeping the cases this run did not measure.

The ratios depend on the CPU model, not only on the code: the same commit read
GraphBLAS/ours 0.99x for transpose + coalesce on an AMD EPYC and 0.71x on an
Intel Xeon, torch/ours 15.6x and 6.8x for coalesce. So the file holds one
entry per CPU model, and a run is compared only with its own model's entry
(none yet: nothing is compared, and ``--update-baseline`` starts one).

A flagged case is timed once more at the end of the run (its module's
worker, only that case) before it is reported: a slowdown the second
timing also shows is *confirmed*; one it does not show is listed apart as
*not confirmed* (a stall of the shared machine during the first timing), and
``--update-baseline`` keeps the stored ratios of such a case instead of
writing the stalled ones.

Examples
--------
>>> rows = [
...     {"op": "spmv", "workload": "w", "library": "coosparse", "median_s": 2.0, "floor_s": 1.0},
...     {"op": "spmv", "workload": "w", "library": "scipy", "median_s": 3.0, "speedup_vs_peer": 1.5},
... ]
>>> base = baseline_from(rows)
>>> base["cases"]["cpu|spmv|w"]
{'floor': 0.5, 'scipy': 1.5}
>>> slower = [dict(rows[0], median_s=2.5, floor_s=1.0), dict(rows[1], speedup_vs_peer=1.2)]
>>> [(r["op"], round(r["change"], 2)) for r in compare(slower, base)]
[('spmv', 0.8)]
"""
from __future__ import annotations

import json
import math
from pathlib import Path

TOLERANCE = 0.10
ABOUT = ("coosparse's ratios over each peer and over the memory floor, per case, one entry per CPU model "
         "(python -m coosparse.bench --update-baseline; docs/benchmarks.md, 'Baseline guard')")
"""A case is reported when its standing drops by more than this fraction."""
FLOOR = "floor"


def case_key(row):
    return f"{row.get('device', 'cpu')}|{row['op']}|{row['workload']}"


def standings(rows):
    """{case key: {reference: coosparse's ratio over it}}: each peer's speed-up and the floor's."""
    out = {}
    for r in rows:
        if r.get("error") or r.get("median_s") is None:
            continue
        refs = out.setdefault(case_key(r), {})
        if r["library"] == "coosparse":
            if r.get("floor_s"):
                refs[FLOOR] = r["floor_s"] / r["median_s"]
        elif r.get("speedup_vs_peer"):
            refs[r["library"]] = r["speedup_vs_peer"]
    return {k: dict(sorted(v.items())) for k, v in out.items() if v}


def baseline_from(rows, info=None, previous=None, keep=()):
    """A baseline document from result rows (merged over ``previous``: cases not run are kept).

    ``keep``: case keys whose stored ratios stay as they are although this run measured them
    (slowdowns a second timing did not confirm).
    """
    cases = dict((previous or {}).get("cases", {}))
    cases.update({k: v for k, v in standings(rows).items() if k not in keep or k not in cases})
    doc = {"cases": dict(sorted(cases.items()))}
    if info:
        doc["machine"] = {k: info.get(k) for k in ("cpu", "cores", "load_average", "command", "versions")}
        doc["machine"]["load_average_start"] = (info.get("settings") or {}).get("load_average_start")
    return doc


def compare(rows, baseline, tolerance=TOLERANCE):
    """Cases more than ``tolerance`` slower than ``baseline`` relative to their peers, worst first.

    Each item: ``op``, ``workload``, ``device``, ``change`` (geometric mean of
    now / baseline over the shared references; 0.8 = 20% slower) and
    ``references`` {name: (baseline ratio, ratio now)}.
    """
    base = (baseline or {}).get("cases", {})
    out = []
    for key, now in standings(rows).items():
        then = base.get(key)
        shared = [ref for ref in now if then and then.get(ref)]
        if not shared:
            continue
        change = math.exp(sum(math.log(now[ref] / then[ref]) for ref in shared) / len(shared))
        if change < 1.0 - tolerance:
            device, op, workload = key.split("|", 2)
            out.append({"key": key, "op": op, "workload": workload, "device": device, "change": change,
                        "references": {ref: (then[ref], now[ref]) for ref in shared}})
    return sorted(out, key=lambda r: r["change"])


def confirm(regressions, rerun_rows, baseline, tolerance=TOLERANCE):
    """Split ``regressions`` by a second timing of their cases: ``(confirmed, not_confirmed)``.

    Each item gains ``rerun_change`` (the second timing's change; None when the rerun gave no
    result, which counts as confirmed: nothing contradicts the first timing).
    """
    again = {r["key"]: r["change"] for r in compare(rerun_rows, baseline, tolerance=-math.inf)}
    confirmed, not_confirmed = [], []
    for r in regressions:
        r = dict(r, rerun_change=again.get(r["key"]))
        slow = r["rerun_change"] is None or r["rerun_change"] < 1.0 - tolerance
        (confirmed if slow else not_confirmed).append(r)
    return confirmed, not_confirmed


UNKNOWN_CPU = "unknown CPU"


def load(path):
    """The baseline document at ``path`` (one entry per CPU model), or None when there is none.

    A file of the single-machine layout (``cases`` at the top) reads as the entry of the CPU model
    its ``machine`` names.
    """
    p = Path(path)
    if not p.exists():
        return None
    doc = json.loads(p.read_text())
    if "machines" not in doc:
        cpu = (doc.get("machine") or {}).get("cpu") or UNKNOWN_CPU
        doc = {"about": ABOUT, "machines": {cpu: doc}}
    return doc


def entry_for(doc, cpu):
    """The baseline entry (``cases``, ``machine``) of CPU model ``cpu`` in ``doc``, or None."""
    return ((doc or {}).get("machines") or {}).get(cpu or UNKNOWN_CPU)


def with_entry(doc, cpu, entry):
    """``doc`` with ``entry`` as CPU model ``cpu``'s (the other models' entries kept)."""
    machines = dict((doc or {}).get("machines") or {})
    machines[cpu or UNKNOWN_CPU] = entry
    return {"about": ABOUT, "machines": dict(sorted(machines.items()))}


def save(path, doc):
    Path(path).write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")


def _case_line(r):
    refs = ", ".join(f"{ref} {a:.2f}x -> {b:.2f}x" for ref, (a, b) in r["references"].items())
    dev = "" if r["device"] == "cpu" else f" ({r['device']})"
    again = r.get("rerun_change")
    rerun = "" if again is None else f"; timed again: {1 - again:.0%} slower"
    return f"- {r['op']}{dev} [{r['workload']}]: {1 - r['change']:.0%} slower ({refs}{rerun})"


def format_regressions(regressions, path, tolerance=TOLERANCE, not_confirmed=()):
    """Plain text (also valid Markdown) listing the cases slower than the baseline.

    ``not_confirmed``: flagged cases whose second timing was within the tolerance, listed apart.
    """
    if not regressions:
        text = f"Baseline guard ({path}): no case more than {tolerance:.0%} slower than the baseline"
    else:
        head = (f"Baseline guard ({path}): {len(regressions)} case(s) more than {tolerance:.0%} slower than the "
                "baseline, relative to the same run's peers and memory floor")
        text = "\n".join([head + ":", ""] + [_case_line(r) for r in regressions])
    if not_confirmed:
        text += ("\n\n" f"Not confirmed: {len(not_confirmed)} case(s) flagged but within {tolerance:.0%} of the "
                 "baseline when timed again (the stored ratios are kept by --update-baseline):\n\n"
                 + "\n".join(_case_line(r) for r in not_confirmed))
    return text
