# Quick start: `make test` and `make bench`. Each creates .venv when missing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: test fuzz bench docs clean

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

# the long fuzz mode (docs/reliability.md): 2000 examples per row and kind, fresh seeds
fuzz: $(VENV)/.test-stamp
	COOSPARSE_FUZZ_EXAMPLES=$${COOSPARSE_FUZZ_EXAMPLES:-2000} $(PY) -m pytest -q -p no:cacheprovider tests/test_fuzz.py --hypothesis-show-statistics

bench: $(VENV)/.bench-stamp
	$(PY) -m coosparse.bench $(BENCH_ARGS)

docs: $(VENV)/.test-stamp
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
