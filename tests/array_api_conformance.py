"""pytest plugin for the Array API conformance run (``make array-api-tests``).

Loaded with ``-p tests.array_api_conformance`` by the Makefile and by
``scripts/array_api_xfails.py``; never collected by the project's own test
session (the name does not start with ``test_``).

The suite's conftest loads a Hypothesis profile built from
``--max-examples``/``--derandomize``. This plugin derives one from it
without the shrink and explain phases: a failing test (an expected failure
included) then fails on its first failing example instead of spending many
calls minimising it. Which tests pass and which fail is unchanged.
"""
import pytest
from hypothesis import Phase, settings


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    base = settings.get_profile("array-api-tests")
    phases = tuple(p for p in base.phases if p.name not in ("shrink", "explain"))
    settings.register_profile("coosparse-array-api", parent=base, phases=phases)
    settings.load_profile("coosparse-array-api")
