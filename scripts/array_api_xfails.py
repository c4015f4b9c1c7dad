#!/usr/bin/env python
"""Regenerate tests/array-api-xfails.txt from a run of the Array API conformance suite.

Usage (from the repository root, with the project's virtualenv):

    ./.venv/bin/python scripts/array_api_xfails.py [--suite ../shared/array-api-tests] [--dry-run]

Runs the suite exactly as ``make test`` does (``--max-examples=2 --derandomize``)
but without the expected-failure list, records every test that fails, and
rewrites the list: one id per line, each preceded by its one-line reason as a
comment. Ids already in the list keep their reason; a new failure gets the
first line of its error as a provisional reason, marked ``NEW``, to be
rewritten by hand. Ids that now pass are dropped and reported. A run takes
the suite's usual time (several minutes).

File format (read by the suite's ``--xfails-file``): comment lines start with
``#``; a comment is the reason of the ids that follow it, up to the next
comment or blank line; an id matches a test id exactly or, without its
``[...]`` part, every parametrisation of that test.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIST = ROOT / "tests" / "array-api-xfails.txt"
HEADER = """\
# Expected failures of the Array API conformance suite (../shared/array-api-tests) for coosparse,
# run by `make test` with -o strict_xfail=True (an expected failure that passes is an error).
# Regenerate with `./.venv/bin/python scripts/array_api_xfails.py` (keeps the reasons of ids that stay).
# Format: a comment line is the reason of the ids below it, up to the next comment or blank line.
"""


def read_list(path):
    """{id: reason} of an existing list, in file order."""
    reasons = {}
    reason = ""
    if not path.exists():
        return reasons
    for line in path.read_text().splitlines():
        s = line.strip()
        if not s:
            reason = ""
        elif s.startswith("#"):
            reason = s.lstrip("#").strip()
        else:
            reasons[line.rstrip("\n")] = reason
    return reasons


class _Recorder:
    """pytest plugin: the id and first error line of every failing test (call, setup or teardown)."""

    def __init__(self):
        self.failed = {}
        self.seen = set()

    def pytest_runtest_logreport(self, report):
        self.seen.add(report.nodeid)
        if report.failed and report.nodeid not in self.failed:
            msg = getattr(report.longrepr, "reprcrash", None)
            text = msg.message if msg is not None else str(report.longrepr)
            self.failed[report.nodeid] = " ".join(text.strip().splitlines()[:1])[:140]

    def ran(self, pattern):
        """Whether a test the list entry ``pattern`` names ran in this session."""
        return pattern in self.seen or any(i.startswith(pattern + "[") for i in self.seen)


def run_suite(suite, extra):
    import pytest

    if os.environ.get("PYTHONHASHSEED") != "0":  # the draws follow the hash seed too (see Makefile)
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})

    os.environ["ARRAY_API_TESTS_MODULE"] = "coosparse"
    rec = _Recorder()
    sys.path.insert(0, str(ROOT))  # tests.array_api_conformance, as `make array-api-tests` loads it
    args = ["-c", str(suite / "pytest.ini"), f"--rootdir={suite}", "-p", "no:cacheprovider",
            "-p", "tests.array_api_conformance",
            "--max-examples=2", "--derandomize", "--disable-deadline", "--disable-warnings", "-q",
            "--skips-file", str(ROOT / "tests" / "array-api-skips.txt"),  # flaky ids, as make does
            str(suite / "array_api_tests"), *extra]
    pytest.main(args, plugins=[rec])
    return rec


def write_list(path, ids, reasons, new_reasons):
    groups = {}
    for i in ids:  # group consecutive-in-order ids by reason, keeping suite order
        r = reasons.get(i) or f"NEW: {new_reasons.get(i, 'fails')}"
        groups.setdefault(r, []).append(i)
    out = [HEADER]
    for r, members in groups.items():
        out.append(f"# {r}")
        out.extend(members)
        out.append("")
    path.write_text("\n".join(out))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", default=str(ROOT.parent / "shared" / "array-api-tests"),
                   help="the array-api-tests folder (default: ../shared/array-api-tests)")
    p.add_argument("--list", default=str(LIST), help="the expected-failure list to rewrite")
    p.add_argument("--dry-run", action="store_true", help="print the summary, do not rewrite the list")
    p.add_argument("pytest_args", nargs="*", help="extra arguments for pytest (e.g. -k statistical)")
    ns = p.parse_args(argv)
    suite = Path(ns.suite).resolve()
    if not (suite / "array_api_tests").is_dir():
        sys.exit(f"no Array API suite at {suite}; pass --suite")
    path = Path(ns.list)
    old = read_list(path)
    rec = run_suite(suite, ns.pytest_args)
    kept = [i for i in old if not rec.ran(i)]  # not run this time (e.g. -k): left as they are
    ids = list(rec.failed) + kept
    gone = [i for i in old if rec.ran(i) and i not in rec.failed]
    new = [i for i in ids if i not in old]
    print(f"\n{len(ids)} failing ids: {len(ids) - len(new)} already listed, {len(new)} new; "
          f"{len(gone)} listed ids no longer fail (dropped)")
    for i in gone:
        print(f"  now passes: {i}")
    for i in new:
        print(f"  new failure: {i}  ({rec.failed[i]})")
    if not ns.dry_run:
        write_list(path, ids, old, rec.failed)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
