"""Finding the case modules and building their cases (used by the CLI and its workers).

A case module is any ``coosparse.bench.cases_<area>`` with a function
``cases(size="medium", libraries=None, [device="cpu"]) -> list[Case]``.
Optional module attributes the CLI honours:

- ``OPS``: the op names the module produces (lets ``--op`` skip building its data);
- a ``device`` parameter on ``cases``: the module has GPU variants ('cuda',
  and 'cuda-emulated' for checking them without a GPU); modules without one
  run on the CPU only. Build the data on the CPU and move it with
  ``harness.on_device``; GPU peers are ``harness.gpu_peers(device)``;
- ``SUITE``: the suite the module belongs to (default ``"default"``); the CLI
  runs one suite (``--suite``), so long modules (``cases_dask``: clusters,
  minutes) stay out of the default run;
- ``MEASURE_MEMORY = False``: skip the peak-memory run (e.g. the memory is in
  other processes).
"""
from __future__ import annotations

import fnmatch
import importlib
import inspect
import os
import pkgutil

PEERS = ("coosparse", "graphblas", "torch", "scipy", "pydata", "cupyx")


def case_modules():
    """Names of the case modules present, sorted (``cases_coalesce``, ...)."""
    return sorted(m.name for m in pkgutil.iter_modules([os.path.dirname(__file__)]) if m.name.startswith("cases_"))


def suite_of(name):
    """The module's ``SUITE`` ('default' when it names none)."""
    return getattr(load(name), "SUITE", "default")


def load(name):
    """A case module by short name ('cases_coalesce') or full dotted path."""
    return importlib.import_module(name if "." in name else f"coosparse.bench.{name}")


def _parameters(mod):
    try:
        return inspect.signature(mod.cases).parameters
    except (TypeError, ValueError):
        return {}


def accepts_device(mod):
    return "device" in _parameters(mod)


def op_matches(op, patterns):
    """``op`` matches a pattern exactly, by its first word, or as a glob."""
    if not patterns:
        return True
    first = op.split()[0].split("[")[0].split("(")[0]
    return any(op == p or first == p or fnmatch.fnmatchcase(op, p) for p in patterns)


def library_matches(library, patterns):
    """coosparse (and its variants) always run; peers by name prefix ('torch' matches 'torch-cuda')."""
    if library.startswith("coosparse") or not patterns:
        return True
    return any(library == p or library.startswith(p) for p in patterns)


def module_may_match(mod, ops):
    declared = getattr(mod, "OPS", None)
    if not ops or not declared:
        return True
    return any(op_matches(o, ops) for o in declared)


def build_cases(mod, size, device, libraries, ops):
    """The module's cases for ``device``, filtered by op and library (impls without a match dropped)."""
    # libraries=None: modules name their impls as they like ('torch', 'torch-cuda'),
    # so the prefix filter is applied here, to what they return
    params = _parameters(mod)
    kwargs = {k: v for k, v in (("size", size), ("libraries", None)) if k in params}
    if "device" in params:
        kwargs["device"] = device
    elif device != "cpu":
        return []
    out = []
    for case in mod.cases(**kwargs):
        if not op_matches(case.op, ops):
            continue
        case.impls = [i for i in case.impls if library_matches(i.library, libraries)]
        if case.impls:
            out.append(case)
    return out
