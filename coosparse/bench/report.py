"""Benchmark output: terminal table, Markdown, JSON, the speed-up chart, machine info.

A result row is a dict as made by :func:`coosparse.bench.harness.run_case`
(``op``, ``workload``, ``library``, ``median_s``, ``min_s``, ``max_s``,
``speedup_vs_peer`` = peer median / coosparse median, ``peak_bytes``, ...)
plus ``device`` and, for a library that failed or crashed, ``error``.

Examples
--------
>>> rows = [
...     {"op": "coalesce", "workload": "uniform", "library": "coosparse", "device": "cpu",
...      "median_s": 0.1, "min_s": 0.09, "max_s": 0.12, "speedup_vs_peer": None, "peak_bytes": 2**25},
...     {"op": "coalesce", "workload": "uniform", "library": "torch", "device": "cpu",
...      "median_s": 0.3, "min_s": 0.29, "max_s": 0.33, "speedup_vs_peer": 3.0, "peak_bytes": 2**26},
... ]
>>> rows[0]["x_floor"] = 4.2  # coosparse's time over the case's memory floor
>>> print(summary_markdown(rows))
| op | workload | coosparse | x floor | torch |
|---|---|---|---|---|
| coalesce | uniform | 100 ms | 4.2 | 3.00x |
"""
from __future__ import annotations

import json
import os
import platform
import shlex
import sys
from importlib import metadata

PEER_ORDER = ("coosparse", "graphblas", "torch", "torch-cuda", "scipy", "pydata", "sparse", "cupyx")
LIBRARY_DISTS = {
    "coosparse": "coosparse", "numpy": "numpy", "numba": "numba", "scipy": "scipy",
    "torch": "torch", "pydata/sparse": "sparse", "python-graphblas": "python-graphblas",
    "suitesparse-graphblas": "suitesparse-graphblas", "cupy": None, "matplotlib": "matplotlib",
}


# ---------------------------------------------------------------- machine
def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_bytes():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _version(dist):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _cupy_version():
    for dist in ("cupy-cuda12x", "cupy-cuda13x", "cupy-cuda11x", "cupy"):
        v = _version(dist)
        if v:
            return v
    return None


def _gpu_name():
    try:
        import torch

        if torch.cuda.is_available():
            return torch.cuda.get_device_name(0)
    except Exception:
        pass
    try:
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(0)
        name = props["name"]
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:
        return None


def _command(argv):
    """The command line as a reader would type it (``python -m coosparse.bench ...``)."""
    argv = list(argv) if argv is not None else [sys.executable, "-m", "coosparse.bench"] + sys.argv[1:]
    if argv and os.path.basename(argv[0]).startswith("python"):
        argv = ["python"] + argv[1:]
    return shlex.join(argv)


def _loadavg():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def machine_info(argv=None):
    """CPU, cores, memory, GPU, OS, Python and library versions, and the command line."""
    versions = {name: _version(dist) for name, dist in LIBRARY_DISTS.items() if dist}
    versions["cupy"] = _cupy_version()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "cores_usable": usable,
        "memory_bytes": _memory_bytes(),
        "gpu": _gpu_name(),
        "os": platform.platform(),
        "load_average": _loadavg(),
        "python": platform.python_version(),
        "versions": {k: v for k, v in versions.items() if v},
        "command": _command(argv),
        "argv": list(argv) if argv is not None else None,
    }


# ---------------------------------------------------------------- helpers
def _ms(s):
    return "" if s is None else (f"{1e3 * s:.0f} ms" if s >= 0.1 else f"{1e3 * s:.1f} ms")


def _label(r):
    dev = r.get("device", "cpu")
    return r["op"] + ("" if dev == "cpu" else f" ({dev})")


def _groups(rows):
    """Rows grouped by (op label, workload), in first-seen order."""
    groups = {}
    for r in rows:
        groups.setdefault((_label(r), r["workload"]), []).append(r)
    return groups


def _peers(rows, variants=True):
    """Libraries other than coosparse; ``variants`` keeps coosparse's own variants ('coosparse-compact')."""
    seen = []
    for r in rows:
        lib = r["library"]
        if lib != "coosparse" and lib not in seen and (variants or not lib.startswith("coosparse")):
            seen.append(lib)
    order = {p: i for i, p in enumerate(PEER_ORDER)}
    return sorted(seen, key=lambda p: (order.get(p, len(order)), p))


def _ratio(r):
    if r.get("error"):
        return "crashed" if "crash" in r["error"] else "error"
    sp = r.get("speedup_vs_peer")
    return "" if sp is None else f"{sp:.2f}x"


def _cell(text):
    """Text safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _mb(b):
    return "?" if b is None else f"{b / 2**20:.0f}"


def _floor(r):
    """A row's time as a multiple of its case's memory floor ('–' when the case declares no bytes)."""
    x = None if r is None or r.get("error") else r.get("x_floor")
    return "–" if not x else (f"{x:.1f}" if x < 100 else f"{x:.0f}")


# ---------------------------------------------------------------- outputs
def format_table(rows, width=None):
    """Terminal table: per case one line per library, with coosparse's speed-up over it."""
    head = (f"{'op':<30} {'workload':<36} {'library':<17} {'median':>9} {'min-max ms':>15} "
            f"{'coosparse is':>14} {'x floor':>7} {'peak MB':>8}")
    lines = [head, "-" * len(head)]
    for (label, workload), rs in _groups(rows).items():
        for r in rs:
            if r.get("error"):
                body = f"{'':>9} {'':>15} {_ratio(r):>14} {'':>7} {'':>8}  {r['error'][:60]}"
            else:
                spread = f"{1e3 * r['min_s']:.1f}-{1e3 * r['max_s']:.1f}"
                sp = r.get("speedup_vs_peer")
                faster = f"{sp:.2f}x {'faster' if sp >= 1 else 'slower'}" if sp else ""
                if sp and sp < 1:
                    faster = f"{1 / sp:.2f}x slower"
                body = (f"{_ms(r['median_s']):>9} {spread:>15} {faster:>14} {_floor(r):>7} "
                        f"{_mb(r.get('peak_bytes')):>8}")
            lines.append(f"{label:<30.30} {workload:<36.36} {r['library']:<17.17} {body}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def summary_markdown(rows):
    """One line per (op, workload): coosparse's median time and its speed-up over each peer."""
    peers = _peers(rows)
    out = ["| op | workload | coosparse | x floor | " + " | ".join(peers) + " |",
           "|---|---|---|---|" + "---|" * len(peers)]
    for (label, workload), rs in _groups(rows).items():
        by_lib = {r["library"]: r for r in rs}
        ours = by_lib.get("coosparse")
        cells = [_ms(ours["median_s"]) if ours and not ours.get("error") else "error", _floor(ours)]
        cells += [_ratio(by_lib[p]) if p in by_lib else "–" for p in peers]
        out.append(f"| {_cell(label)} | {_cell(workload)} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def details_markdown(rows):
    """Every row: median, spread, speed-up, peak memory, notes."""
    out = ["| op | workload | library | median | min–max | coosparse speed-up | x floor | floor | peak MB | note |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for (label, workload), rs in _groups(rows).items():
        for r in rs:
            if r.get("error"):
                out.append(f"| {_cell(label)} | {_cell(workload)} | {r['library']} | | | {_ratio(r)} | | | | "
                           f"{_cell(r['error'][:120])} |")
                continue
            spread = f"{_ms(r['min_s'])} – {_ms(r['max_s'])}"
            floor = (f"{_ms(r['floor_s'])} ({r['floor_bytes'] / 1e6:.0f} MB)" if r.get("floor_s") else "–")
            out.append(f"| {_cell(label)} | {_cell(workload)} | {r['library']} | {_ms(r['median_s'])} | {spread} | "
                       f"{_ratio(r)} | {_floor(r)} | {floor} | {_mb(r.get('peak_bytes'))} | "
                       f"{_cell(r.get('note', ''))} |")
    return "\n".join(out)


def _load_text(info):
    start = (info.get("settings") or {}).get("load_average_start")
    end = info.get("load_average")
    if not start and not end:
        return ""
    parts = ([f"{start[0]:g} before the run"] if start else []) + ([f"{end[0]:g} after"] if end else [])
    return "; load average " + ", ".join(parts)


def machine_markdown(info):
    mem = f"{info['memory_bytes'] / 2**30:.0f} GiB" if info.get("memory_bytes") else "?"
    vers = ", ".join(f"{k} {v}" for k, v in info["versions"].items())
    lines = [
        f"- machine: {info['cpu']}, {info['cores']} cores ({info['cores_usable']} usable), {mem} RAM"
        + (f", GPU {info['gpu']}" if info.get("gpu") else "")
        + _load_text(info),
        f"- software: Python {info['python']}, {vers}",
        f"- command: `{info['command']}`",
    ]
    if info.get("settings"):
        s = info["settings"]
        lines.append(f"- settings: size {s['size']}, {s['repeat']} timed runs per library (at least 3, fewer for the "
                     f"slow libraries of a case that would pass {s.get('max_case_seconds', 0):g} s), after {s['warmup']} warm-up, "
                     f"devices {', '.join(s['devices'])}; took {s.get('elapsed_s', 0):.0f} s"
                     + (" (interrupted: partial results)" if s.get("interrupted") else ""))
    return "\n".join(lines)


def to_markdown(rows, info):
    return "\n\n".join([
        "# coosparse benchmark",
        machine_markdown(info),
        "Speed-up = the peer's median time / coosparse's median time (above 1: coosparse is faster). "
        "x floor = the median time / the case's memory floor: the bytes it must move (inputs read once, "
        "result written once) copied into a preallocated buffer, timed alternately with the libraries "
        "(1.0 = memory speed; docs/benchmarks.md). "
        "Peak MB: how far the operation raised the process's resident peak (host memory).",
        "## Summary", summary_markdown(rows),
        "## All results", details_markdown(rows),
    ]) + "\n"


def write_json(path, rows, info):
    with open(path, "w") as f:
        json.dump({"machine": info, "results": rows}, f, indent=1)


def write_chart(path, rows, title=None):
    """Horizontal bars, one row per case: coosparse's speed-up over each peer (log axis).

    Right of each row: coosparse's median time and its multiple of the case's
    memory floor. About 1200 pixels wide; the height grows with the rows.
    Returns ``path``, or None when matplotlib or the speed-ups are missing.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator
    except ImportError:
        return None
    peers = _peers(rows, variants=False)
    groups = [(k, {r["library"]: r for r in rs}) for k, rs in _groups(rows).items()]
    groups = [g for g in groups if any(g[1].get(p, {}).get("speedup_vs_peer") for p in peers)]
    if not groups or not peers:
        return None
    colors = {p: plt.get_cmap("tab10")(i % 10) for i, p in enumerate(peers)}
    bar_in, gap_in = 0.26, 0.34  # inches per bar and between rows
    slots = [[p for p in peers if by_lib.get(p, {}).get("speedup_vs_peer")] for _, by_lib in groups]
    height = sum(len(s) for s in slots) * bar_in + len(groups) * gap_in + 1.8
    fig, ax = plt.subplots(figsize=(12.0, max(3.0, height)))
    ax.set_xscale("log")
    y, yticks, all_x, labelled = 0.0, [], [], set()
    for ((label, workload), by_lib), present in zip(groups, slots):
        top = y
        for p in present:
            sp = by_lib[p]["speedup_vs_peer"]
            # bars grow from 1x: right where coosparse is faster, left where it is slower
            ax.barh(y + 0.5, sp - 1.0, left=1.0, height=0.86, color=colors[p],
                    label=None if p in labelled else f"vs {p}")
            labelled.add(p)
            ax.text(sp * (1.03 if sp >= 1 else 0.97), y + 0.5, f"{sp:.1f}x", va="center",
                    ha="left" if sp >= 1 else "right", fontsize=9)
            all_x.append(sp)
            y += 1.0
        mid = (top + y) / 2
        yticks.append((mid, f"{label}\n{workload[:40]}"))
        ours = by_lib.get("coosparse")
        if ours and not ours.get("error"):
            xf = ours.get("x_floor")
            note = _ms(ours["median_s"]) + (f"\n{xf:.1f}x floor" if xf else "")
            ax.text(1.01, mid, note, transform=ax.get_yaxis_transform(), va="center", ha="left", fontsize=9)
        ax.axhline(y + gap_in / bar_in / 2, color="0.85", linewidth=0.6)
        y += gap_in / bar_in
    ax.axvline(1.0, color="black", linewidth=0.9)
    lo = min(0.5, min(all_x) / 1.6)
    hi = max(2.0, max(all_x) * 1.8)
    ax.set_xlim(lo, hi)
    ticks = [2.0 ** k for k in range(-10, 12) if lo <= 2.0 ** k <= hi]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.tick_params(axis="x", labelsize=10)
    ax.set_ylim(y, -0.3)  # first case on top
    ax.set_yticks([t for t, _ in yticks])
    ax.set_yticklabels([t for _, t in yticks], fontsize=9.5)
    ax.tick_params(axis="y", length=0)
    ax.set_xlabel("coosparse speed-up (peer time / coosparse time; log scale, right of 1x: coosparse faster)",
                  fontsize=10)
    ax.text(1.01, 1.0, "coosparse time,\nx memory floor", transform=ax.transAxes, va="bottom", ha="left",
            fontsize=9, style="italic")
    ncol = min(len(labelled), 4)  # more peers wrap to a second legend row (clear of the right column)
    legend_rows = -(-len(labelled) // ncol)
    ax.legend(fontsize=9.5, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=ncol, frameon=False)
    fig.set_figheight(fig.get_figheight() + 0.3 * (legend_rows - 1))
    h = fig.get_figheight()
    if title:
        fig.suptitle(title, fontsize=11, y=1 - 0.12 / h, va="top")
    fig.subplots_adjust(left=0.25, right=0.86, top=1 - (0.85 + 0.3 * (legend_rows - 1)) / h, bottom=0.75 / h)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def replace_block(text, block, tag="bench"):
    """Replace what lies between the ``<!-- {tag}:begin -->`` / ``end`` markers in ``text``.

    ``text`` is returned unchanged when the markers are missing.
    """
    begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        return text
    return text[: i + len(begin)] + "\n" + block.strip() + "\n" + text[j:]
