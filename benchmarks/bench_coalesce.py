"""coalesce vs torch / scipy on the issue workload: python benchmarks/bench_coalesce.py [small|medium|large]"""
import sys

from coosparse.bench import cases_coalesce
from coosparse.bench.harness import format_rows, run_cases

if __name__ == "__main__":
    size = sys.argv[1] if len(sys.argv) > 1 else "medium"
    rows = run_cases(cases_coalesce.cases(size))
    print(format_rows(rows))
