# Quick start: `make test` and `make bench`. Each creates .venv when missing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: test array-api-tests fuzz bench bench-baseline bench-dask docs clean

$(VENV)/.test-stamp: pyproject.toml requirements/test.txt requirements/docs.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements/test.txt
	$(PY) -m pip install -q --no-deps -e .
	touch $@

$(VENV)/.bench-stamp: $(VENV)/.test-stamp requirements/bench.txt
	$(PY) -m pip install -q -r requirements/bench.txt
	touch $@

# The suite runs on TEST_WORKERS pytest-xdist processes (auto: one per core), a test file to
# each: most of a fresh clone's run is Numba compiling kernels, one core per process, so two
# processes on two cores halved it (serial: 1206 s, -n 2: 662 s). TEST_WORKERS=0 runs it in one.
TEST_WORKERS ?= auto
test: $(VENV)/.test-stamp
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile
	$(MAKE) --no-print-directory array-api-tests

# The Array API conformance suite (third-party, read-only, next to the repository as in CI:
# ../shared/array-api-tests), against the `coosparse` namespace, with the project's own
# expected-failure list (strict: a listed test that passes fails the run). A separate pytest
# session: its own conftest and rootdir, never collected by the project's session above.
# Regenerate the list with scripts/array_api_xfails.py. PYTHONHASHSEED=0: --derandomize fixes
# Hypothesis' seed, but some strategies iterate sets, so draws also follow Python's hash seed.
ARRAY_API_TESTS ?= ../shared/array-api-tests
array-api-tests: $(VENV)/.test-stamp
	@if [ -d "$(ARRAY_API_TESTS)/array_api_tests" ]; then \
	  PYTHONHASHSEED=0 ARRAY_API_TESTS_MODULE=coosparse $(PY) -m pytest -c $(ARRAY_API_TESTS)/pytest.ini \
	    --rootdir=$(ARRAY_API_TESTS) -p no:cacheprovider -p tests.array_api_conformance \
	    -q --max-examples=2 --derandomize \
	    --disable-deadline --disable-warnings -o strict_xfail=True \
	    --xfails-file tests/array-api-xfails.txt --skips-file tests/array-api-skips.txt \
	    $(ARRAY_API_TESTS)/array_api_tests/; \
	else \
	  echo "array-api-tests: $(ARRAY_API_TESTS) not found: the Array API conformance suite is SKIPPED" \
	       "(clone the repository next to shared/, or set ARRAY_API_TESTS=path/to/array-api-tests)"; \
	fi

# the long fuzz mode (docs/reliability.md): 2000 examples per row and kind, fresh seeds
fuzz: $(VENV)/.test-stamp
	COOSPARSE_FUZZ_EXAMPLES=$${COOSPARSE_FUZZ_EXAMPLES:-2000} $(PY) -m pytest -q -p no:cacheprovider tests/test_fuzz.py --hypothesis-show-statistics

# `make bench` lists every case more than 10% slower than docs/bench-baseline.json relative to the
# same run's peers; `make bench-baseline` stores this run's ratios there (for a change meant to
# move them: commit the file with the change)
bench: $(VENV)/.bench-stamp
	$(PY) -m coosparse.bench $(BENCH_ARGS)

bench-baseline: $(VENV)/.bench-stamp
	$(PY) -m coosparse.bench --update-baseline $(BENCH_ARGS)

# the Dask suite (docs/dask.md): LocalClusters, an R-MAT graph 3x a worker's memory; minutes
bench-dask: $(VENV)/.bench-stamp
	$(PY) -m coosparse.bench --suite dask --no-memory $(BENCH_ARGS)

docs: $(VENV)/.test-stamp
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
