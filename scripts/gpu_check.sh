#!/usr/bin/env bash
# The one-shot device check of the CUDA backend, prepared to run unattended on a lent GPU
# machine (the H200 image: python3 with cupy-cuda13x, numba, torch CUDA, pytest, hypothesis,
# compute-sanitizer; no network). Nothing is installed: the package is used from this checkout
# through PYTHONPATH. From the repository root:
#
#     bash scripts/gpu_check.sh              # results under $OUT (else ./gpu-check-out)
#     bash scripts/gpu_check.sh --dry-run    # the same order and budget on the emulated device
#
# One run takes at most GPU_CHECK_BUDGET seconds (default 480: eight minutes) and yields, in
# this order (scripts/gpu_check_run.py: sections, budgets, what is cut when):
#   identity   CPU vs GPU bit identity, every kernel family, saved case by case
#   bench      medium-size benchmark of coalesce, intersections, scatter, reductions, linalg
#              against torch CUDA and cupyx                        -> bench.json, bench.md
#   capture    the sync-free list: one spin kernel for all cases, CUDA-graph capture with
#              poisoned outputs replayed twice
#   sanitize   bad input (the device error's own message) + a small identity run, under
#              compute-sanitizer memcheck (GPU_CHECK_SANITIZE=0: without)
#   pytest     the suite's cuda marks and kernel tests on the cuda backend -> pytest-gpu.log/.xml
#   gap, identity-late   (timings of FILL_MAX_GAP; identity cases whose CPU side came late)
# Every section writes its results as it goes (gpu_check.json is merged every few seconds);
# summary.txt says what ran, what was cut and why. Exit 0 PASSED, 3 INCOMPLETE (something was
# cut, nothing failed), 1 FAILED (a check failed, or the run was stopped by SIGINT/SIGTERM).
# $OUT gets at most eight files (env.txt, summary.txt, gpu_check.json, gpu_check.log,
# bench.json, bench.md, pytest-gpu.log, pytest-gpu.xml): the lent machine returns no more.
set -uo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
T0=$(date +%s)
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
: > "$OUT/summary.txt"
export PYTHONUNBUFFERED=1
if [ "$DRY" = 0 ]; then  # (a dry run keeps the checkout's caches: Numba's and the emulated kernels' are warm)
  export COOSPARSE_CACHE_DIR="${COOSPARSE_CACHE_DIR:-/tmp/coosparse-cache}"
  export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/numba-cache}"
fi
export COOSPARSE_TEST_BACKENDS="${COOSPARSE_TEST_BACKENDS:-numba,cuda$( [ "$DRY" = 1 ] && echo ,cuda-emulated)}"
WORK="$(mktemp -d /tmp/gpu-check-work.XXXXXX)"
STOPPED=""
RUN_PID=""
on_signal() {  # the runner gets it too: it cuts the running section, writes the summary, exits FAILED
  STOPPED="$1"
  [ -n "$RUN_PID" ] && kill -"$1" "$RUN_PID" 2>/dev/null
}
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM

echo "== environment (dry run: $DRY)" | tee -a "$OUT/summary.txt"
{
  date -u; uname -a
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv 2>&1
  command -v compute-sanitizer >/dev/null && compute-sanitizer --version 2>&1 | tail -1
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

# coosparse from this checkout: a copy with the package-dir mapping (cuda_kernels/ and interop/
# inside the package, as the wheel has them); nothing installed. A dry run uses the checkout's own
# editable install when the interpreter has one.
SRC="$WORK/src"
mkdir -p "$SRC"
if [ "$DRY" = 1 ] && "$PY" -c "import coosparse, sys; sys.exit(not coosparse.__file__.startswith('$REPO/'))" 2>/dev/null; then
  :
else
  cp -r "$REPO/coosparse" "$SRC/coosparse"
  rm -rf "$SRC/coosparse/cuda_kernels" "$SRC/coosparse/interop"
  cp -r "$REPO/cuda_kernels" "$SRC/coosparse/cuda_kernels"
  cp -r "$REPO/interop" "$SRC/coosparse/interop"
  export PYTHONPATH="$SRC${PYTHONPATH:+:$PYTHONPATH}"
fi
cd "$SRC"  # (python -m puts the working directory first on sys.path: not the checkout)
"$PY" -c "import coosparse, coosparse.cuda_kernels, coosparse.interop; print('coosparse', coosparse.__version__, coosparse.__file__)" \
  >> "$OUT/env.txt" 2>&1 || echo "import of coosparse FAILED (env.txt)" | tee -a "$OUT/summary.txt"

DRYFLAG=""; [ "$DRY" = 1 ] && DRYFLAG="--dry-run"
"$PY" "$REPO/scripts/gpu_check_run.py" $DRYFLAG --out "$OUT" --work "$WORK" --python "$PY" --t0 "$T0" &
RUN_PID=$!
wait "$RUN_PID"; RC=$?
while kill -0 "$RUN_PID" 2>/dev/null; do wait "$RUN_PID"; RC=$?; done  # (a trapped signal ends `wait` early)
if [ -n "$STOPPED" ] && [ "$RC" = 0 ]; then RC=1; fi
echo "results in $OUT ($(ls "$OUT" | wc -l) files); exit $RC" >> "$OUT/summary.txt"
cat "$OUT/summary.txt"
rm -rf "$WORK"
exit "$RC"
