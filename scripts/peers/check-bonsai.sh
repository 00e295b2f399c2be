#!/usr/bin/env bash
# Checks the Bonsai build(s) of scripts/peers/build-bonsai.sh on the GPU machine (run from the
# repository root, with .gpu-prof/bonsai and, if built with ORIG=1, .gpu-prof/bonsai-p10 (P1-P10)
# and .gpu-prof/bonsai-orig (P1-P9) carried). For each binary: a plain run at small N, then the
# same under compute-sanitizer memcheck (the build has -lineinfo, so a fault is printed with
# kernel, file:line and a device backtrace); then, for the patched binaries (not -orig), the
# benchmark command at 1M and 4M for 10 steps. RACECHECK=1 adds a racecheck run of bonsai/
# (shared-memory hazards inside a warp, i.e. the warp-synchronous code) at N = 16384.
# Full logs go to $OUT (or /tmp/bonsai-debug); stdout gets a short summary of each step.
# Run it last in a call, or on a machine given back afterwards: after bonsai-orig's faults,
# bench_frame stalled in every later run on the same machine (twice, 2026-11-28; the other CUDA
# programs ran on), and ran normally on a fresh one.
# Env: SMALL_N (65536), BIG_N ("1048576 4194304"), RACECHECK (0), VARIANTS ("bonsai bonsai-p10 bonsai-orig").
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp/bonsai-debug}
mkdir -p "$out"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
small=${SMALL_N:-65536}
big=${BIG_N:-1048576 4194304}
ulimit -s unlimited || echo "note: ulimit -s unlimited refused"
nvidia-smi --query-gpu=name,driver_version,memory.total,mig.mode.current --format=csv,noheader
"$cs" --version | tail -1

summ() {  # $1 = rc, $2 = app log, $3 = sanitizer log (optional); the full logs are in $out
  echo "   rc=$1 $( [ "$1" = 124 ] && echo '(timeout)')"
  { grep -aiE 'error|illegal|fail' "$2" | head -n 4
    grep -a 'APPTIME' "$2" | tail -n 2; grep -a 'TIME \[' "$2" | tail -n 1
    grep -a '^iter=' "$2" | tail -n 1; } | cut -c1-220 | sed 's/^/   | /'
  if [ -n "${3:-}" ] && [ -f "$3" ]; then
    grep -aE -A9 '^========= (Invalid|Program hit|Race|Error|.*[Hh]azard)' "$3" | head -n 30 \
      | cut -c1-200 | sed 's/^/   # /'
    grep -a 'ERROR SUMMARY\|RACECHECK SUMMARY' "$3" | sed 's/^/   # /'
  fi
}

for v in ${VARIANTS:-bonsai bonsai-p10 bonsai-orig}; do
  b=$root/.gpu-prof/$v/bonsai2_slowdust
  if [ ! -x "$b" ]; then echo "== $v: no binary at $b, skipped"; continue; fi
  w=$out/work-$v; mkdir -p "$w"; cd "$w" || exit 1
  args="--plummer $small --theta 0.5 --eps 0.05 --dt 0.0625 --iend 1 --log"

  echo "== $v plain, N=$small, iend 1"
  timeout 120 "$b" $args > "$out/$v-plain-$small.log" 2>&1; rc=$?
  summ $rc "$out/$v-plain-$small.log"

  echo "== $v memcheck, N=$small, iend 1"
  timeout 120 "$cs" --tool memcheck --show-backtrace device --print-limit 10 \
    --log-file "$out/$v-memcheck-$small.txt" "$b" $args > "$out/$v-memcheck-$small.log" 2>&1; rc=$?
  summ $rc "$out/$v-memcheck-$small.log" "$out/$v-memcheck-$small.txt"

  if [ "${RACECHECK:-0}" = 1 ] && [ "$v" = bonsai ]; then
    echo "== $v racecheck, N=16384, iend 0"
    timeout 120 "$cs" --tool racecheck --racecheck-report hazard --print-limit 10 \
      --log-file "$out/$v-racecheck.txt" "$b" --plummer 16384 --theta 0.5 --iend 0 \
      > "$out/$v-racecheck.log" 2>&1; rc=$?
    summ $rc "$out/$v-racecheck.log" "$out/$v-racecheck.txt"
  fi

  if [ "$v" != bonsai-orig ]; then
    for n in $big; do
      echo "== $v benchmark command, N=$n, theta 0.5, iend 10"
      timeout 120 "$b" --plummer "$n" --theta 0.5 --eps 0.05 --dt 0.0625 --iend 10 --log \
        > "$out/$v-run-$n.log" 2>&1; rc=$?
      summ $rc "$out/$v-run-$n.log"
    done
  fi
  cd "$root" || exit 1
done
ls -l "$out"
