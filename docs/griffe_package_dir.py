"""griffe extension: follow setuptools' ``package-dir`` mapping (pyproject.toml).

coosparse ships ``interop/`` as ``coosparse.interop`` (and ``cuda_kernels/``
as ``coosparse.cuda_kernels``). griffe finds packages by their directory, so
it cannot see a mapped sub-package; this extension reads the mapping and
attaches each mapped directory's modules under their installed names, so the
API reference documents ``coosparse.interop.scipy`` and friends statically.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import griffe

ROOT = Path(__file__).resolve().parents[1]


def _mapping():
    with open(ROOT / "pyproject.toml", "rb") as f:
        cfg = tomllib.load(f)
    return cfg.get("tool", {}).get("setuptools", {}).get("package-dir", {})


class PackageDirMapping(griffe.Extension):
    def on_package(self, *, pkg, loader, **kwargs):
        for dotted, directory in sorted(_mapping().items()):
            parts = dotted.split(".")
            if len(parts) < 2 or parts[0] != pkg.name or not (ROOT / directory / "__init__.py").exists():
                continue
            parent = pkg
            for p in parts[1:-1]:
                parent = parent.members[p]
            parent.set_member(parts[-1], self._visit_dir(parts[-1], ROOT / directory, parent, loader))

    def _visit(self, name, path, parent, loader):
        return griffe.visit(
            name, path, path.read_text(), parent=parent, extensions=loader.extensions,
            docstring_parser=loader.docstring_parser, docstring_options=loader.docstring_options,
            lines_collection=loader.lines_collection, modules_collection=loader.modules_collection,
        )

    def _visit_dir(self, name, directory, parent, loader):
        mod = self._visit(name, directory / "__init__.py", parent, loader)
        for f in sorted(directory.glob("*.py")):
            if f.name != "__init__.py":
                mod.set_member(f.stem, self._visit(f.stem, f, mod, loader))
        for sub in sorted(directory.iterdir()):
            if sub.is_dir() and (sub / "__init__.py").exists():  # a sub-package (interop/torch/)
                mod.set_member(sub.name, self._visit_dir(sub.name, sub, mod, loader))
        return mod
