"""The examples in docstrings and in docs/user-guide.md run as doctests."""
import doctest
import importlib
import pathlib

import pytest

MODULES = [
    "coosparse._coo",
    "coosparse._coalesce",
    "coosparse._dense",
    "coosparse._random",
    "coosparse._keys",
    "coosparse.interop.scipy",
]
DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests(name):
    if name.endswith("scipy"):
        pytest.importorskip("scipy")
    result = doctest.testmod(importlib.import_module(name), optionflags=FLAGS)
    assert result.failed == 0


def test_user_guide_examples():
    pytest.importorskip("scipy")
    result = doctest.testfile(str(DOCS / "user-guide.md"), module_relative=False, optionflags=FLAGS)
    assert result.attempted > 20 and result.failed == 0
