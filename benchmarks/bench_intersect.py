"""multiply / add / sparse_mask vs torch and pydata/sparse on the issue-3 workload.

    python benchmarks/bench_intersect.py [small|medium|large] [repeat]

One process, implementations alternating, median of ``repeat`` (default 5).
"""
import sys

import torch

from coosparse.bench import cases_intersect
from coosparse.bench.harness import format_rows, run_cases

if __name__ == "__main__":
    torch.set_num_threads(2)  # the machine's cores; numba uses them too
    size = sys.argv[1] if len(sys.argv) > 1 else "medium"
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    rows = run_cases(cases_intersect.cases(size), repeat=repeat)
    print(format_rows(rows))
