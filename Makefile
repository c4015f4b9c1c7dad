# Quick start: `make test` and `make bench`. Each creates .venv when missing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: test bench docs clean

$(VENV)/.test-stamp: pyproject.toml requirements/test.txt requirements/docs.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements/test.txt
	$(PY) -m pip install -q --no-deps -e .
	touch $@

$(VENV)/.bench-stamp: $(VENV)/.test-stamp requirements/bench.txt
	$(PY) -m pip install -q -r requirements/bench.txt
	touch $@

test: $(VENV)/.test-stamp
	$(PY) -m pytest -q

bench: $(VENV)/.bench-stamp
	$(PY) -m coosparse.bench $(BENCH_ARGS)

docs: $(VENV)/.test-stamp
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
