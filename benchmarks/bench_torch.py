"""torch bridge vs torch 2.13 CPU: python benchmarks/bench_torch.py [small|medium|large] [repeat]

Reports from_torch + to_torch for 1e3 and 1e7 entries (zero-copy: independent of
nnz) and forward+backward of sparse_mask and multiply on the issue workloads.
"""
import sys

from coosparse.bench import cases_torch
from coosparse.bench.harness import format_rows, run_cases

if __name__ == "__main__":
    size = sys.argv[1] if len(sys.argv) > 1 else "medium"
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    rows = run_cases(cases_torch.cases(size), repeat=repeat)
    print(format_rows(rows))
    rc = cases_torch.torch_multiply_crashes()
    print(f"torch uncoalesced x uncoalesced mul at {cases_torch.SHAPE}: "
          + ("crashed, signal %d" % -rc if rc < 0 else "exit code %d" % rc) + " (run in a subprocess)")
