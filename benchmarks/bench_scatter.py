"""as_strided_scatter and to_dense vs torch / NumPy: python benchmarks/bench_scatter.py"""
from coosparse.bench import cases_scatter
from coosparse.bench.harness import ensure_fixed_mmap_threshold, format_rows, run_case

if __name__ == "__main__":
    ensure_fixed_mmap_threshold()
    rows = [r for c in cases_scatter.cases() for r in run_case(c, repeat=5)]
    print(format_rows(rows))
    for r in rows:
        if r["op"] == "as_strided_scatter":
            moved = 2 * 16_777_216 * 4 + 8_388_608 * 4
            copied = 16_777_216 * 4 + 8_388_608 * 4  # memcpy reads and writes this many
            gbs = (2 * copied if r["library"] == "memcpy" else moved) / r["median_s"] / 1e9
            print(f"  {r['library']:<10} {gbs:6.1f} GB/s of DRAM traffic (read + write)")
