"""multiply / add / sparse_mask vs torch and pydata/sparse on the issue-3 workload.

    python benchmarks/bench_intersect.py [small|medium|large] [repeat]

One process, implementations alternating, median of ``repeat`` (default 5).
"""
import sys

import torch

from coosparse.bench import cases_intersect
from coosparse.bench.harness import ensure_fixed_mmap_threshold, format_rows, run_case

if __name__ == "__main__":
    ensure_fixed_mmap_threshold()
    torch.set_num_threads(2)  # the machine's cores; numba uses them too
    size = sys.argv[1] if len(sys.argv) > 1 else "medium"
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    rows = [r for c in cases_intersect.cases(size) for r in run_case(c, repeat=repeat)]
    print(format_rows(rows))
