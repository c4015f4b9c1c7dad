"""The layered house (docs/architecture.md): imports point down, families mirror, rooms stay small.

Reads every module's imports (those inside functions included: Python runs them too)
and checks the layer contract, the family order, the absence of cycles, the mirror of
the kernel families, the size of every source file, and what ``import coosparse`` costs.
"""
import ast
import os
import subprocess
import sys
from collections import defaultdict

import pytest

from coosparse._kernels.api import KERNEL_FAMILIES

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# the package and the two top-level folders shipped inside it (pyproject's package-dir)
ROOTS = {"coosparse": "coosparse", "interop": "coosparse.interop", "cuda_kernels": "coosparse.cuda_kernels"}

LAYERS = (
    # (layer, module prefixes): a module belongs to the layer of its longest matching prefix
    (0, ("coosparse.cuda_kernels", "coosparse.testing")),
    (1, ("coosparse._kernels",)),
    (2, ("coosparse._core",)),
    (3, ("coosparse.ops",)),
    (4, ("coosparse.api",)),
    (5, ("coosparse", "coosparse.interop", "coosparse.dask", "coosparse._dask_hook", "coosparse._dask_sizeof")),
    (6, ("coosparse.bench", "coosparse.__main__")),
)
LAYER_NAMES = {0: "CUDA sources and the emulated device", 1: "kernels", 2: "core", 3: "ops", 4: "api",
               5: "public namespace, bridges, Dask", 6: "applications: the benchmark, python -m coosparse"}

OPS_FAMILIES = ("coalesce", "scatter", "dense", "device", "broadcast", "elementwise", "shape", "indexing",
                "search", "select", "join", "rearrange", "reduce", "linalg", "random")
"""The op families in dependency order: each imports only the ones before it."""

KERNEL_ORDER = tuple(KERNEL_FAMILIES)

CU_WITHOUT_KERNELS = {
    "coalesce": "a composition of the linear_index, sort and segment rows (the Numba layer fuses them)",
    "elementwise": "merge_gather is the union rows plus row gathers",
    "spgemm": "its count and expand kernels are in linalg.cu, sharing the B-row helper of SpMM",
    "files": "the file bridge's host work: the CUDA rows read their arrays back or compose array operations",
}
"""Kernel families with no ``cuda_kernels/<family>.cu``, and why."""

MAX_LINES = 800


def _modules():
    """module name -> source path, for every module of the package and its mapped folders."""
    out = {}
    for top, pkg in ROOTS.items():
        for dirpath, _, files in os.walk(os.path.join(REPO, top)):
            if "__pycache__" in dirpath:
                continue
            for f in files:
                if f.endswith(".py"):
                    rel = os.path.relpath(os.path.join(dirpath, f), os.path.join(REPO, top))[:-3].split(os.sep)
                    if rel[-1] == "__init__":
                        rel = rel[:-1]
                    out[".".join([pkg] + rel)] = os.path.join(dirpath, f)
    return out


MODULES = _modules()


def _resolve(name):
    """The longest known module that ``name`` (a module, or a name inside one) refers to."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports():
    """(importer, imported, lineno, local, commented) for every import of a package module."""
    out = []
    for mod, path in MODULES.items():
        src = open(path, encoding="utf-8").read()
        lines = src.split("\n")
        package = mod if path.endswith("__init__.py") else mod.rpartition(".")[0]

        def visit(node, depth):
            for child in ast.iter_child_nodes(node):
                local = depth + isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                if isinstance(child, ast.Import):
                    targets = [a.name for a in child.names]
                elif isinstance(child, ast.ImportFrom):
                    if child.level:
                        base = package.split(".")
                        base = base[: len(base) - child.level + 1]
                        source = ".".join(base + ([child.module] if child.module else []))
                    else:
                        source = child.module or ""
                    targets = [f"{source}.{a.name}" if _resolve(f"{source}.{a.name}") == f"{source}.{a.name}"
                               else source for a in child.names]
                else:
                    visit(child, local)
                    continue
                for t in targets:
                    target = _resolve(t) if t.startswith("coosparse") else None
                    if target and target != mod:
                        line = lines[child.lineno - 1]
                        above = lines[child.lineno - 2] if child.lineno > 1 else ""
                        commented = "#" in line or above.strip().startswith("#")
                        out.append((mod, target, child.lineno, depth > 0, commented))

        visit(ast.parse(src), 0)
    return out


IMPORTS = _imports()


def layer_of(mod):
    best, layer = -1, None
    for n, prefixes in LAYERS:
        for p in prefixes:
            if (mod == p or mod.startswith(p + ".")) and len(p) > best:
                best, layer = len(p), n
    return layer


def _family(mod, parent, families):
    """The family of ``mod`` under package ``parent`` (None for the package's own modules)."""
    if not mod.startswith(parent + "."):
        return None
    name = mod[len(parent) + 1:].split(".")[0]
    return name if name in families else None


def test_every_module_has_a_layer():
    assert [m for m in MODULES if layer_of(m) is None] == []


def test_imports_point_down_the_layers():
    """No module imports one of a higher layer (the public namespace imports everything below it)."""
    bad = [f"{a} (layer {layer_of(a)}, {LAYER_NAMES[layer_of(a)]}) imports {b} (layer {layer_of(b)}) at line {n}"
           for a, b, n, _, _ in IMPORTS if layer_of(b) > layer_of(a)]
    assert bad == []


def test_op_families_import_only_earlier_families():
    order = {f: i for i, f in enumerate(OPS_FAMILIES)}
    bad = []
    for a, b, n, _, _ in IMPORTS:
        fa, fb = _family(a, "coosparse.ops", order), _family(b, "coosparse.ops", order)
        if fa and fb and order[fb] > order[fa]:
            bad.append(f"{a} (family {fa}) imports {b} (family {fb}, later) at line {n}")
    assert bad == []
    assert sorted(m.split(".")[2] for m in MODULES if m.count(".") >= 2 and m.startswith("coosparse.ops.")
                  and (m.count(".") == 2 or MODULES[m].endswith("__init__.py"))) == sorted(OPS_FAMILIES)


@pytest.mark.parametrize("backend", ["numba", "cuda"])
def test_kernel_families_import_only_earlier_families(backend):
    parent = f"coosparse._kernels.{backend}"
    order = {f: i for i, f in enumerate(KERNEL_ORDER)}
    bad = []
    for a, b, n, _, _ in IMPORTS:
        fa, fb = _family(a, parent, order), _family(b, parent, order)
        if fa and fb and order[fb] > order[fa]:
            bad.append(f"{a} (family {fa}) imports {b} (family {fb}, later) at line {n}")
    assert bad == []


def test_no_import_cycle():
    """No strongly connected component of more than one module, counting imports inside functions."""
    graph = defaultdict(set)
    for a, b, *_ in IMPORTS:
        graph[a].add(b)
    index, low, stack, on, cycles = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))

    def connect(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in list(MODULES):
        if v not in index:
            connect(v)
    assert cycles == []


def test_local_imports_of_the_package_say_why():
    """An import inside a function is a deliberate exception (an optional dependency, the test
    device, the Dask entry point), with a comment on its line or the line above."""
    bad = [f"{a} line {n}: imports {b} inside a function without a comment saying why"
           for a, b, n, local, commented in IMPORTS if local and not commented]
    assert bad == []


def test_kernel_families_mirror():
    """Every family of the kernel API has its Numba module, its CUDA row module and its CUDA
    source (or a stated reason why not), and the CUDA rows of a family live in its module."""
    from coosparse._kernels.cuda.layer import CudaLayer
    from coosparse.cuda_kernels import KERNELS

    missing = []
    for family, rows in KERNEL_FAMILIES.items():
        for path in (f"coosparse/_kernels/numba/{family}.py", f"coosparse/_kernels/cuda/{family}.py"):
            if not os.path.exists(os.path.join(REPO, path)):
                missing.append(path)
        cu = f"cuda_kernels/{family}.cu"
        if os.path.exists(os.path.join(REPO, cu)) == (family in CU_WITHOUT_KERNELS):
            missing.append(f"{cu} (exists: {os.path.exists(os.path.join(REPO, cu))}; listed as without "
                           f"kernels: {family in CU_WITHOUT_KERNELS})")
        for row in rows:
            where = getattr(CudaLayer, row).__module__
            if where != f"coosparse._kernels.cuda.{family}":
                missing.append(f"CUDA row {row} is defined in {where}, not in the {family} family's module")
    assert missing == []
    # every CUDA source belongs to a family, and its kernels carry the family's name
    for fname, names in KERNELS.items():
        family = fname[:-3]
        assert family in KERNEL_FAMILIES, f"cuda_kernels/{fname} belongs to no kernel family"
        assert all(n.startswith(f"coo_{family}_") for n in names), (fname, names)


def test_no_source_file_over_800_lines():
    long = []
    for top in ROOTS:
        for dirpath, _, files in os.walk(os.path.join(REPO, top)):
            for f in files:
                if f.endswith((".py", ".cu", ".cuh")):
                    path = os.path.join(dirpath, f)
                    with open(path, encoding="utf-8") as fh:
                        n = sum(1 for _ in fh)
                    if n > MAX_LINES:
                        long.append(f"{os.path.relpath(path, REPO)}: {n} lines")
    assert long == []


def test_import_is_light():
    """``import coosparse`` loads nothing beyond NumPy, the standard library and coosparse itself
    (Numba, scipy, torch, cupy and dask are imported when first needed).

    Checked by what it loads, not by a clock: its time (0.15-0.26 s of CPU on the machines this
    project runs on) is the cold-start benchmark's figure (``--suite coldstart``, ``import_s``)."""
    code = ("import sys; import numpy; before = set(sys.modules); import coosparse; "
            "new = {m.split('.')[0] for m in sys.modules if m not in before}; "
            "print(','.join(sorted(m for m in new if m not in sys.stdlib_module_names and m != 'coosparse')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "", f"import coosparse imported {out.stdout.strip()}"
