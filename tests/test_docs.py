"""Documentation checks: the site builds in strict mode, and every example runs.

Docstring examples are collected by importing each module by its installed
name (``coosparse.interop.scipy``, not ``interop/scipy.py``): ``interop/`` is
mapped into the package by pyproject's ``package-dir``, so ``pytest
--doctest-modules interop/`` would import it as a top-level package and break
its relative imports. Modules that need CuPy are skipped where it is missing.
"""
from __future__ import annotations

import doctest
import importlib
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import coosparse

ROOT = Path(__file__).resolve().parents[1]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
# running these would start a benchmark (re-exec) or need a GPU
NOT_DOCTESTED = {"coosparse.bench.__main__"}


def _module_names():
    names = []
    for pkg_name in ("coosparse", "coosparse.interop", "coosparse.cuda_kernels"):
        try:
            pkg = importlib.import_module(pkg_name)
        except ImportError:
            continue
        names.append(pkg_name)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=pkg_name + ".", onerror=lambda _: None):
            if info.name.startswith(("coosparse.interop.", "coosparse.cuda_kernels.")) and pkg_name == "coosparse":
                continue
            names.append(info.name)
    return sorted(set(names) - NOT_DOCTESTED)


def _import_or_skip(name):
    try:
        return importlib.import_module(name)
    except ImportError as e:
        missing = getattr(e, "name", "") or ""
        if missing.split(".")[0] in ("cupy", "cupyx", "cuda", "nvidia"):
            pytest.skip(f"{name} needs {missing}")
        raise


@pytest.mark.parametrize("name", _module_names())
def test_docstring_examples(name):
    mod = _import_or_skip(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=FLAGS, verbose=False)
    tests = [t for t in finder.find(mod, name) if t.examples]
    for t in tests:
        runner.run(t, out=lambda s: sys.stdout.write(s))
    res = runner.summarize(verbose=False)
    assert res.failed == 0, f"{res.failed} of {res.attempted} docstring examples failed in {name} (output above)"


# pages whose examples are runnable (the user guide's are written as doctests)
PAGES_WITH_EXAMPLES = ["getting-started.md", "user-guide.md", "numpy.md", "numpy-reductions.md", "indexing.md",
                       "shape.md", "migrating-from-scipy.md", "migrating-from-pydata.md"]


@pytest.mark.parametrize("page", PAGES_WITH_EXAMPLES)
def test_page_examples(page):
    path = ROOT / "docs" / page
    if not path.exists():
        pytest.skip(f"docs/{page} not written yet")
    pytest.importorskip("scipy")
    # code fences become blank lines, so a fence does not read as expected output
    text = re.sub(r"^\s*```.*$", "", path.read_text(), flags=re.M)
    test = doctest.DocTestParser().get_doctest(text, {}, page, str(path), 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS, verbose=False)
    runner.run(test, out=lambda s: sys.stdout.write(s))
    res = runner.summarize(verbose=False)
    assert res.attempted > 0 and res.failed == 0, f"{res.failed} of {res.attempted} examples failed in {page}"


def test_readme_example_runs():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README.md has no ```python example"
    code = blocks[0]
    used = set(re.findall(r"coosparse\.(\w+)", code))
    missing = sorted(n for n in used if not hasattr(coosparse, n))
    if missing:
        pytest.skip(f"README example uses coosparse.{', '.join(missing)}, not merged yet")
    exec(compile(code, "README.md", "exec"), {})


def test_site_builds_strict(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    api = (tmp_path / "site" / "api" / "coosparse" / "index.html").read_text()
    assert 'id="coosparse.COO"' in api
    assert 'id="coosparse.interop.scipy.from_scipy"' in (tmp_path / "site" / "api" / "interop" / "index.html").read_text()
