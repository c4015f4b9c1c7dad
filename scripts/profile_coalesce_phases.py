"""coalesce phases (2M uniform, 131072^2) against a copy of the same bytes, alternating, median of 9.

Prints a Markdown table (docs/benchmarks.md, issue 16). Run: ``.venv/bin/python scripts/profile_coalesce_phases.py``.
The byte counts are the phases' compulsory traffic (coosparse/_kernels/numba/coalesce.py).
"""
import time, sys, numpy as np, numba
from coosparse.bench import workloads
from coosparse._kernels.numba import coalesce as co, sort as _sort
from coosparse._kernels.numba.threads import run_parts
from coosparse._kernels.bounds import size_limits, row_major_sizes
nth = numba.get_num_threads()
a = workloads.uniform("medium")
indices = a.indices; values = a.values.reshape(-1, 1)
strides = np.array([131072, 1], np.int64); bound = 131072**2
n = indices.shape[1]; limits = size_limits(row_major_sizes(strides, bound))
nparts = 4 * nth
_, kb, _ = _sort.packed_plan(bound, n)
d1 = max(0, min((n - 1).bit_length() - co._BUCKET_BITS, 12, kb)); low_bits = kb - d1
st = {}
def hist():
    h = np.zeros((nparts, 1 << d1), dtype=np.int64); bad = np.zeros(nparts, dtype=np.int64)
    run_parts(co._hist_part, nparts, nth, indices, strides, limits, low_bits, h, bad)
    st["offsets"], st["bs"] = _sort.bucket_offsets(h)
def scatter():
    bs = st["bs"]; biggest = int(np.diff(bs).max()); st["sb"] = sb = max(biggest - 1, 0).bit_length()
    wd = np.uint32 if low_bits + sb <= 32 else np.int64
    st["sw"] = np.empty(n, dtype=wd); st["vals"] = np.empty((n, 1))
    run_parts(co._scatter_part, nparts, nth, indices, strides, limits, st["sw"], values, st["vals"], st["offsets"].copy(), bs, low_bits, sb)
def reduce():
    bs = st["bs"]; st["pb"] = pb = _sort.split_buckets(bs, nparts); st["uc"] = uc = np.zeros(bs.shape[0] - 1, np.int64)
    run_parts(co._reduce_part, nparts, nth, st["sw"], st["vals"], bs, pb, st["sb"], low_bits, uc)
def output():
    bs = st["bs"]; uc = st["uc"]; os_ = np.zeros(bs.shape[0], np.int64); np.cumsum(uc, out=os_[1:]); m = int(os_[-1])
    oi = np.empty((2, m), np.int64); ov = np.empty((m, 1))
    run_parts(co._output_part, nparts, nth, st["sw"], st["vals"], bs, os_, st["pb"], low_bits, strides, co.stride_shifts(strides), oi, ov)
hist(); scatter()
wb = st["sw"].itemsize
m = n  # ~1,999,887 distinct
phases = [("hist", hist, 16 * n), ("scatter", scatter, 16 * n + 8 * n + (wb + 8) * n),
          ("reduce", reduce, 2 * (wb + 8) * n), ("output", output, (wb + 8) * m + 24 * m),
          ("a.coalesce()", a.coalesce, 24 * n + 24 * m)]
bufs = {}
for name, f, nbytes in phases:
    bufs[name] = (np.ones(nbytes // 2, np.uint8), np.zeros(nbytes // 2, np.uint8))
res = {}
for r in range(9):
    for name, f, nbytes in phases:
        if name == "scatter": hist()
        t = time.perf_counter(); f(); res.setdefault(name, []).append(time.perf_counter() - t)
        s, d = bufs[name]
        t = time.perf_counter(); d[...] = s; res.setdefault(name + " copy", []).append(time.perf_counter() - t)
print(f"threads {nth}, d1 {d1}, word bytes {wb}")
print("| phase | bytes moved | time ms (median) | copy of the same bytes ms | fraction of copy bandwidth |")
print("|---|---|---|---|---|")
for name, f, nbytes in phases:
    t = np.median(res[name]); c = np.median(res[name + " copy"])
    print(f"| {name} | {nbytes / 1e6:.0f} MB | {1e3 * t:.1f} | {1e3 * c:.1f} | {c / t:.2f} |")
