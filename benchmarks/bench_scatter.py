"""as_strided_scatter and to_dense vs torch / NumPy: python benchmarks/bench_scatter.py [small|medium|large]"""
import sys

from coosparse.bench import cases_scatter
from coosparse.bench.harness import format_rows, run_cases

if __name__ == "__main__":
    size = sys.argv[1] if len(sys.argv) > 1 else "medium"
    cases = cases_scatter.cases(size)
    rows = run_cases(cases, repeat=5)
    print(format_rows(rows))
    strided = next(c for c in cases if c.op == "as_strided_scatter")
    moved = strided.params["bytes_moved"]  # read input and src, write the result
    copied = strided.input_bytes  # memcpy reads and writes this many
    for r in rows:
        if r["op"] == "as_strided_scatter":
            gbs = (2 * copied if r["library"] == "memcpy" else moved) / r["median_s"] / 1e9
            print(f"  {r['library']:<10} {gbs:6.1f} GB/s of DRAM traffic (read + write)")
