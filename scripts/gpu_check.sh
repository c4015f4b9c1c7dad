#!/usr/bin/env bash
# The device check of the CUDA backend, prepared to run unattended on a lent GPU
# machine (the H200 image: python3 with cupy-cuda13x, numba, torch CUDA, pytest,
# hypothesis, no network; nothing is installed). From the repository root:
#
#     bash scripts/gpu_check.sh              # results under $OUT (else ./gpu-check-out)
#     bash scripts/gpu_check.sh --dry-run    # everything a CPU can check, here
#     GPU_CHECK_SKIP_BENCH=1 bash scripts/gpu_check.sh
#
# Steps (each logged; a failing step does not stop the next; the exit status is
# non-zero when any step failed or any check failed):
#   0. environment report                                       -> env.txt
#   1. the package from this checkout, by PYTHONPATH (no pip)
#   2. the CPU side of the identity check, in the background (Numba compiles
#      while the GPU sections run)
#   3. scripts/gpu_check.py: load + no .ftz, direct synchronisation test
#      (~1 s spin kernel), CUDA-graph capture, CPU/GPU bit identity
#      (subnormals, float16), FILL_MAX_GAP crossover   -> gpu_check.log, gpu_check.json
#   3b. out-of-range indices / lying flags, in a process of its own
#      (GPU_CHECK_SANITIZE=1: under compute-sanitizer memcheck)
#   4. the test suite's `cuda` backend and GPU test files
#      (NVRTC compile test deselected: CI runs it)              -> pytest-gpu.log, pytest-gpu.xml
#   5. every `make bench` case on --device cuda (CUDA events)   -> bench.json, bench.md
# Results are written as each step (and each bench module) finishes, so a
# timeout loses only the step it cut. Budget: under 6 minutes on a warm machine
# (GPU_CHECK_BUDGET seconds, default 330).
set -uo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
DRY=0
[ "${1:-}" = "--dry-run" ] && DRY=1
if [ "$DRY" = 1 ]; then
  OUT="${OUT:-$(mktemp -d /tmp/gpu-check-dry.XXXXXX)}"
  PY="${PYTHON:-$REPO/.venv/bin/python}"
  [ -x "$PY" ] || PY=python3
else
  OUT="${OUT:-$REPO/gpu-check-out}"
  PY="${PYTHON:-python3}"
fi
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export COOSPARSE_CACHE_DIR="${COOSPARSE_CACHE_DIR:-/tmp/coosparse-cache}"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/numba-cache}"
if [ "$DRY" = 1 ]; then BUDGET="${GPU_CHECK_BUDGET:-3600}"; else BUDGET="${GPU_CHECK_BUDGET:-330}"; fi
export COOSPARSE_TEST_BACKENDS="${COOSPARSE_TEST_BACKENDS:-numba,cuda$( [ "$DRY" = 1 ] && echo ,cuda-emulated)}"
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
left() { echo $(( BUDGET - $(elapsed) )); }
step() { echo "== [$(elapsed)s] $*" | tee -a "$OUT/summary.txt"; }
FAIL=0
note_rc() {  # note_rc <what> <rc>
  echo "$1 rc=$2" | tee -a "$OUT/summary.txt"
  [ "$2" = 0 ] || FAIL=1
}

step "0. environment (dry run: $DRY)"
{
  date -u; uname -a
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv 2>&1
  "$PY" - <<'PY'
import importlib, sys
print("python", sys.version.split()[0], sys.executable)
for m in ("numpy", "numba", "scipy", "cupy", "torch", "pytest", "hypothesis"):
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:
        print(m, "MISSING", type(e).__name__, e)
try:
    import cupy
    print("cupy device", cupy.cuda.runtime.getDeviceProperties(0)["name"], "cc",
          cupy.cuda.Device(0).compute_capability)
except Exception as e:
    print("cupy device: none", type(e).__name__, e)
try:
    from cupy_backends.cuda.libs import nvrtc
    print("nvrtc (CuPy's)", nvrtc.getVersion())
except Exception as e:
    print("nvrtc: none", type(e).__name__, e)
PY
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

step "1. coosparse from this checkout (a copy with the package-dir mapping; nothing installed)"
SRC="$(mktemp -d /tmp/coosparse-src.XXXXXX)"
cp -r "$REPO/coosparse" "$SRC/coosparse"
rm -rf "$SRC/coosparse/cuda_kernels" "$SRC/coosparse/interop"
cp -r "$REPO/cuda_kernels" "$SRC/coosparse/cuda_kernels"
cp -r "$REPO/interop" "$SRC/coosparse/interop"
export PYTHONPATH="$SRC${PYTHONPATH:+:$PYTHONPATH}"
cd "$SRC"  # (python -m puts the working directory first on sys.path: not the checkout)
"$PY" -c "import coosparse, coosparse.cuda_kernels, coosparse.interop; print('coosparse', coosparse.__version__, coosparse.__file__)" \
  2>&1 | tee -a "$OUT/summary.txt"
note_rc "import" "${PIPESTATUS[0]}"

DRYFLAG=""; [ "$DRY" = 1 ] && DRYFLAG="--dry-run"
step "2. CPU reference of the identity check (background)"
REF="$SRC/cpu-reference.npz"
"$PY" "$REPO/scripts/gpu_check.py" $DRYFLAG --out "$SRC" --cpu-reference "$REF" > "$SRC/cpu-reference.log" 2>&1 &
REF_PID=$!

step "3. load, synchronisation, graph capture, bit identity, gap crossover"
t=$(( $(left) - 170 )); [ "$t" -lt 90 ] && t=90
timeout -k 10 "$t" "$PY" "$REPO/scripts/gpu_check.py" $DRYFLAG --out "$OUT" --reference "$REF" \
  --sections load,sync,capture,identity,gap --deadline $(( $(date +%s) + t - 15 )) > "$OUT/gpu_check.log" 2>&1
note_rc "gpu_check.py (checks)" "$?"
wait "$REF_PID" 2>/dev/null; echo "cpu reference rc=$?" >> "$OUT/gpu_check.log"
cat "$SRC/cpu-reference.log" >> "$OUT/gpu_check.log"
grep -E "FAIL|failures" "$OUT/gpu_check.log" | tail -20 | tee -a "$OUT/summary.txt"

step "3b. out-of-range input and lying flags (a process of its own: a fault cannot take other steps down)"
SAN=()
if [ -n "${GPU_CHECK_SANITIZE:-}" ] && command -v compute-sanitizer >/dev/null; then
  SAN=(compute-sanitizer --tool memcheck --error-exitcode 99)
fi
timeout -k 10 120 ${SAN[@]+"${SAN[@]}"} "$PY" "$REPO/scripts/gpu_check.py" $DRYFLAG --out "$OUT" --sections badinput \
  >> "$OUT/gpu_check.log" 2>&1
note_rc "gpu_check.py (bad input${SAN:+, compute-sanitizer})" "$?"

step "4. test suite on the GPU (backend 'cuda' and the GPU test files; NVRTC compile test deselected)"
if "$PY" -c "import pytest, hypothesis" 2>/dev/null; then
  if [ "$DRY" = 1 ]; then  # no GPU here: the same command on a small emulated selection
    SEL=(-k "emulated or sync_free_operations" "$REPO/tests/test_smoke.py" "$REPO/tests/kernels/test_cuda_strict.py")
  else
    SEL=(-k "cuda and not emulated" "$REPO/tests"
         --ignore="$REPO/tests/kernels/test_cuda_compile.py" --ignore="$REPO/tests/kernels/test_cuda_emulated.py"
         --ignore="$REPO/tests/kernels/test_cuda_strict.py")
  fi
  t=$(( $(left) - 80 )); [ "$t" -lt 60 ] && t=60
  # SIGINT first: pytest then stops cleanly and still writes its summary and the XML
  timeout -s INT -k 15 "$t" "$PY" -m pytest -q -p no:cacheprovider "${SEL[@]}" --durations=10 \
    --junitxml="$OUT/pytest-gpu.xml" > "$OUT/pytest-gpu.log" 2>&1
  note_rc "pytest" "$?"
  tail -3 "$OUT/pytest-gpu.log" | tee -a "$OUT/summary.txt"
else
  echo "pytest/hypothesis missing: suite not run" | tee -a "$OUT/summary.txt"; FAIL=1
fi

if [ -z "${GPU_CHECK_SKIP_BENCH:-}" ]; then
  step "5. benchmark: every case module on the GPU (CUDA events)"
  t=$(( $(left) - 5 )); [ "$t" -lt 30 ] && t=30
  timeout -k 10 "$t" "$PY" "$REPO/scripts/gpu_check.py" $DRYFLAG --out "$OUT" --sections bench \
    --deadline $(( $(date +%s) + t - 40 )) >> "$OUT/gpu_check.log" 2>&1
  note_rc "gpu_check.py (bench)" "$?"
  [ -f "$OUT/bench.md" ] && tail -40 "$OUT/bench.md"
fi

step "done in $(elapsed)s; results in $OUT; $( [ "$FAIL" = 0 ] && echo PASSED || echo FAILED)"
rm -rf "$SRC"
exit "$FAIL"
