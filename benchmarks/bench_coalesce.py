"""coalesce vs torch / scipy on the issue workload: python benchmarks/bench_coalesce.py [small|medium|large]"""
import sys

from coosparse.bench import cases_coalesce
from coosparse.bench.harness import ensure_fixed_mmap_threshold, format_rows, run_case

if __name__ == "__main__":
    ensure_fixed_mmap_threshold()
    size = sys.argv[1] if len(sys.argv) > 1 else "medium"
    rows = [r for c in cases_coalesce.cases(size) for r in run_case(c)]
    print(format_rows(rows))
