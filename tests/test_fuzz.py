"""The permanent fuzz suite: every row of ``tests/fuzz_table.py``, run the same way.

For every row: valid calls must succeed and match the reference, with every
True flag of a COO result true; invalid calls must raise one of the row's
documented exception types; no call may modify its inputs. Rows marked
``subprocess`` (inputs that once crashed the interpreter) run in a child
process, so a segfault fails the test instead of the run.

Budget: ``COOSPARSE_FUZZ_EXAMPLES`` examples per row and kind (default 12 in
``make test``/CI, a couple of minutes in all); ``make fuzz`` runs the long mode
(2000 per row, random seeds, statistics printed). See docs/reliability.md.
"""
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from coosparse import COO
from fuzz_table import ROWS, verify_flags

EXAMPLES = int(os.environ.get("COOSPARSE_FUZZ_EXAMPLES", "0") or 0)
LONG = EXAMPLES > 0
CHILD = os.environ.get("COOSPARSE_FUZZ_CHILD") == "1"


COUNTS = {}  # (row, kind) -> examples run


class _Figures:
    """Prints how many examples each row ran, in pytest's closing summary (also with -q)."""

    def pytest_terminal_summary(self, terminalreporter):
        if not COUNTS:
            return
        terminalreporter.write_line(f"fuzz examples: {sum(COUNTS.values())} in all")
        for (row, kind), n in sorted(COUNTS.items()):
            terminalreporter.write_line(f"fuzz examples: {n:6d}  {row} [{kind}]")


@pytest.fixture(scope="module", autouse=True)
def _report_counts(request):
    if not request.config.pluginmanager.has_plugin("coosparse-fuzz-figures"):
        request.config.pluginmanager.register(_Figures(), "coosparse-fuzz-figures")
    yield


def _count(row, kind):
    COUNTS[(row.name, kind)] = COUNTS.get((row.name, kind), 0) + 1


def _settings(row):
    n = EXAMPLES or (4 if row.long else 12)
    return settings(max_examples=n, deadline=None, derandomize=not LONG, database=None,
                    suppress_health_check=list(HealthCheck))


def _snapshot(x):
    if isinstance(x, COO):
        return ("coo", x.indices.copy(), np.array(x.values, copy=True), x.is_sorted, x.is_unique,
                x.fill_value, x.shape)
    if isinstance(x, np.ndarray):
        return ("array", np.array(x, copy=True), x.flags.writeable)
    return ("other", x)


def _same(before, x):
    kind = before[0]
    if kind == "coo":
        _, idx, val, s, u, fill, shape = before
        assert (x.is_sorted, x.is_unique, x.shape) == (s, u, shape), "input flags/shape changed"
        np.testing.assert_array_equal(x.indices, idx, err_msg="input indices modified")
        np.testing.assert_array_equal(x.values, val, err_msg="input values modified")
    elif kind == "array":
        np.testing.assert_array_equal(x, before[1], err_msg="input array modified")
        assert x.flags.writeable == before[2]


def _inputs(call):
    return list(call.args) + list(call.kwargs.values())


def run_valid(row, call):
    _count(row, "valid")
    inputs = _inputs(call)
    before = [_snapshot(x) for x in inputs]
    with np.errstate(all="ignore"):
        result = call()
    for b, x in zip(before, inputs):
        _same(b, x)
    if isinstance(result, COO):
        verify_flags(result)
    row.check(call, result)


def run_invalid(row, call):
    _count(row, "invalid")
    inputs = _inputs(call)
    before = [_snapshot(x) for x in inputs]
    try:
        with np.errstate(all="ignore"):
            result = call()
    except row.errors:
        pass
    except Exception as e:  # an undocumented exception type is a failure
        raise AssertionError(f"{call!r} raised {type(e).__name__}: {e}; documented: {row.errors}") from e
    else:
        raise AssertionError(f"{call!r} returned {result!r}; expected one of {row.errors}")
    for b, x in zip(before, inputs):
        _same(b, x)


VALID = [r for r in ROWS if not r.valid.is_empty]
INVALID = [r for r in ROWS if r.invalid is not None and not r.subprocess]
CRASH_PRONE = [r for r in ROWS if r.invalid is not None and r.subprocess]


@pytest.mark.parametrize("row", VALID, ids=lambda r: r.name)
def test_valid_calls_match_the_reference(row):
    @_settings(row)
    @given(row.valid)
    def inner(call):
        run_valid(row, call)

    inner()


@pytest.mark.parametrize("row", INVALID, ids=lambda r: r.name)
def test_invalid_calls_raise_documented_errors(row):
    @_settings(row)
    @given(row.invalid)
    def inner(call):
        run_invalid(row, call)

    inner()


@pytest.mark.skipif(not CHILD, reason="runs inside test_crash_prone_rows_in_a_subprocess")
@pytest.mark.parametrize("row", CRASH_PRONE, ids=lambda r: r.name)
def test_crash_prone_child(row):
    @_settings(row)
    @given(row.invalid)
    def inner(call):
        run_invalid(row, call)

    inner()


@pytest.mark.skipif(CHILD, reason="the child runs the rows themselves")
def test_crash_prone_rows_in_a_subprocess():
    env = dict(os.environ, COOSPARSE_FUZZ_CHILD="1")
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k", "crash_prone_child"],
        capture_output=True, text=True, timeout=1800, env=env, cwd=os.path.dirname(__file__),
    )
    if p.returncode < 0:
        pytest.fail(f"the fuzz child died with signal {-p.returncode}:\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}")
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-2000:]
    for line in p.stdout.splitlines():
        if line.startswith("fuzz examples:") and "in all" not in line:
            n, rest = line.split(":", 1)[1].split(None, 1)
            COUNTS[(rest.rsplit(" [", 1)[0] + " (in a subprocess)", "invalid")] = int(n)
