#!/usr/bin/env bash
# Device check of the CUDA backend, prepared to run unattended on a lent GPU
# machine (the H200 image: python3 with cupy-cuda13x, numba, torch CUDA,
# pytest, hypothesis; no network). From the repository root:
#
#     bash scripts/gpu_check.sh            # writes under $OUT (else ./gpu-check-out)
#     GPU_CHECK_SKIP_BENCH=1 bash scripts/gpu_check.sh
#
# Steps (each logged; a failing step does not stop the next):
#   0. environment report                                   -> env.txt
#   1. install coosparse editable, offline (no reinstall of anything else)
#   2. NVRTC compile check of every instantiation, sm_80 + sm_90 -> compile.txt
#   3. the test suite's `cuda` backend (+ the cuda test files) -> pytest-gpu.log/.xml
#   4. CUDA-graph capture of the sync-free ops, CPU/GPU bit identity,
#      20M-entry benchmark against torch CUDA               -> gpu_check.log/.json
# Budget: under 6 minutes after the machine has started (timeouts below).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu-check-out}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
export PYTHONUNBUFFERED=1
export COOSPARSE_CACHE_DIR="${COOSPARSE_CACHE_DIR:-/tmp/coosparse-cache}"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/numba-cache}"
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
step() { echo "== [$(elapsed)s] $*" | tee -a "$OUT/summary.txt"; }

step "0. environment"
{
  date -u; uname -a
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv 2>&1
  "$PY" - <<'PY'
import importlib, sys
print("python", sys.version.split()[0], sys.executable)
for m in ("numpy", "numba", "scipy", "cupy", "torch", "pytest", "hypothesis"):
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:
        print(m, "MISSING", e)
try:
    import cupy
    print("cupy device", cupy.cuda.runtime.getDeviceProperties(0)["name"], "cc",
          cupy.cuda.Device(0).compute_capability)
except Exception as e:
    print("cupy device: none", e)
PY
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

step "1. install coosparse (editable, offline, no dependencies)"
if ! "$PY" -m pip install -q --no-deps --no-build-isolation --no-index -e . >>"$OUT/env.txt" 2>&1; then
  # fallback: make the package-dir mapping by links and use the checkout directly
  ln -sfn ../cuda_kernels coosparse/cuda_kernels
  ln -sfn ../interop coosparse/interop
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
  echo "editable install failed; using links + PYTHONPATH" | tee -a "$OUT/summary.txt"
fi
for m in pytest hypothesis; do
  "$PY" -c "import $m" 2>/dev/null || {
    echo "missing $m: trying wheels in .whl/" | tee -a "$OUT/summary.txt"
    ls .whl/*.whl >/dev/null 2>&1 && "$PY" -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl \
      && export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
  }
done
"$PY" -c "import coosparse, coosparse.cuda_kernels, coosparse._cuda.backend as b; print('coosparse', coosparse.__version__, 'backend', b.name)" \
  2>&1 | tee -a "$OUT/summary.txt"

step "2. compile check (NVRTC, sm_80 sm_90)"
timeout 60 "$PY" -m coosparse._cuda.compile_check sm_80 sm_90 > "$OUT/compile.txt" 2>&1
echo "compile_check rc=$?" | tee -a "$OUT/summary.txt"; tail -1 "$OUT/compile.txt" | tee -a "$OUT/summary.txt"

step "3. GPU test suite (backend 'cuda' and tests/test_cuda_*)"
# SIGINT first: pytest then stops cleanly and still writes its summary and the XML
timeout -s INT -k 10 150 "$PY" -m pytest -q -p no:cacheprovider -k "cuda and not emulated" tests \
  --durations=15 --junitxml="$OUT/pytest-gpu.xml" > "$OUT/pytest-gpu.log" 2>&1
echo "pytest rc=$?" | tee -a "$OUT/summary.txt"; tail -3 "$OUT/pytest-gpu.log" | tee -a "$OUT/summary.txt"

step "4. graph capture, bit identity, benchmark"
left=$(( 340 - $(elapsed) )); [ "$left" -lt 60 ] && left=60
bench_flag=""; [ -n "${GPU_CHECK_SKIP_BENCH:-}" ] && bench_flag="--skip-bench"
timeout "$left" "$PY" scripts/gpu_check.py --out "$OUT" $bench_flag > "$OUT/gpu_check.log" 2>&1
echo "gpu_check.py rc=$?" | tee -a "$OUT/summary.txt"; tail -30 "$OUT/gpu_check.log"
step "done"
