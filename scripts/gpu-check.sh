#!/usr/bin/env bash
# Runs the GPU checks on a machine with an NVIDIA GPU, from a folder of built binaries:
#   every GPU test binary (test_*), compute-sanitizer memcheck and racecheck on a small case,
#   every benchmark binary (bench_*), and the headless render when a bhviz binary is there.
# Logs go to OUT_DIR (default ./gpu-check-logs); a short summary is printed last.
#
#   scripts/gpu-check.sh BIN_DIR [OUT_DIR]
# On the lent GPU server: `source .gpu-bundle/env.sh; scripts/gpu-check.sh .gpu-bin $OUT`.
# Environment: BHVIZ_SANITIZE_FILTER (gtest filter of the sanitizer runs), BHVIZ_SKIP_BENCH=1.
set -u

BIN_DIR=${1:?usage: gpu-check.sh BIN_DIR [OUT_DIR]}
OUT_DIR=${2:-gpu-check-logs}
mkdir -p "$OUT_DIR"
SUMMARY=()
FAILED=0

note() { SUMMARY+=("$(printf '%-34s %s' "$1" "$2")"); }

# Runs "$@", appending its output to the log $1; records pass/fail under the label $2.
run_logged() {
  local log=$1 label=$2
  shift 2
  echo "=== $label: $*" | tee -a "$log"
  local start=$SECONDS
  "$@" >>"$log" 2>&1
  local rc=$?
  local took=$((SECONDS - start))
  if [ $rc -eq 0 ]; then
    note "$label" "ok (${took}s)"
  else
    note "$label" "FAILED rc=$rc (${took}s), see $(basename "$log")"
    FAILED=1
  fi
  return $rc
}

gtest_counts() {  # the gtest totals of a log, on one line
  grep -E '^\[ +(PASSED|SKIPPED|FAILED) +\] [0-9]+ test' "$1" | tr -s ' ' | paste -sd ' ' -
}

if command -v nvidia-smi >/dev/null; then
  GPU=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)
else
  GPU="no nvidia-smi"
fi
echo "gpu-check: $GPU"

# 1. Tests.
TEST_LOG="$OUT_DIR/tests.log"
: >"$TEST_LOG"
for t in "$BIN_DIR"/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  one_log=$(mktemp)
  run_logged "$one_log" "$name" "$t" --gtest_color=no
  note "  $name totals" "$(gtest_counts "$one_log" | tail -c 200)"
  cat "$one_log" >>"$TEST_LOG"
  rm -f "$one_log"
done

# 2. Sanitizers on a small case.
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
FILTER=${BHVIZ_SANITIZE_FILTER:-'*n1000_leaf16_*:*n2_*'}
if [ -x "$SAN" ] && [ -x "$BIN_DIR/test_cuda_stages" ]; then
  SAN_LOG="$OUT_DIR/sanitizer.log"
  : >"$SAN_LOG"
  for tool in memcheck racecheck; do
    run_logged "$SAN_LOG" "compute-sanitizer $tool" "$SAN" --tool "$tool" --error-exitcode 3 \
      "$BIN_DIR/test_cuda_stages" --gtest_color=no "--gtest_filter=$FILTER"
  done
  note "  sanitizer summaries" "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$SAN_LOG" | paste -sd ' ' -)"
else
  note "compute-sanitizer" "skipped (not found, or no test_cuda_stages)"
fi

# 3. Benchmarks.
if [ "${BHVIZ_SKIP_BENCH:-0}" != 1 ]; then
  BENCH_LOG="$OUT_DIR/bench.log"
  : >"$BENCH_LOG"
  for b in "$BIN_DIR"/bench_*; do
    [ -x "$b" ] || continue
    run_logged "$BENCH_LOG" "$(basename "$b")" "$b"
  done
fi

# 4. Headless render (once the app exists): a few frames of a small scene on the CUDA backend.
if [ -x "$BIN_DIR/bhviz" ]; then
  FRAMES=$(mktemp -d)
  run_logged "$OUT_DIR/render.log" "bhviz headless render" "$BIN_DIR/bhviz" --headless \
    --backend cuda --n 100000 --steps 10 --frames "$FRAMES"
  note "  frames written" "$(find "$FRAMES" -name '*.png' | wc -l)"
  first=$(find "$FRAMES" -name '*.png' | sort | head -1)
  [ -n "$first" ] && cp "$first" "$OUT_DIR/render-first.png"
fi

[ -f "${BENCH_LOG:-/nonexistent}" ] && { echo; echo "--- bench"; grep -vE '^===' "$BENCH_LOG" | tail -40; }
echo
echo "--- gpu-check summary ($GPU)"
printf '%s\n' "${SUMMARY[@]}"
[ $FAILED -eq 0 ] && echo "RESULT: all passed" || echo "RESULT: FAILURES"
exit $FAILED
