#!/usr/bin/env sh
# The test of bench_block_steps --by-bin (bench/CMakeLists.txt): on a small CPU run, every run's
# table by final bin holds each particle once (its counts sum to N), its worst 1 % shares sum to
# 100 %, and so do the worst 1 %'s shares by shell; and the deepest bin of a block run is deeper
# than a shared run's only one.
#   scripts/check-by-bin.sh BENCH_BLOCK_STEPS
set -eu
bin=${1:?usage: check-by-bin.sh BENCH_BLOCK_STEPS}
n=4096
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" --backend cpu --scenario m31 --n "$n" --time 0.5 --block-dt-max 0.5 --max-bin-depth 6 \
  --shared-dt 0.03125 --eta 0.4 --reference-eta 0.1 --rebuild auto --by-bin --shells 4 >"$out"
awk -v n="$n" '
  function close_table() {
    if (label == "") return
    if (count != n) { printf "%s: the bins hold %d particles, not %d\n", label, count, n; bad = 1 }
    if (share < 99.5 || share > 100.5) { printf "%s: the worst 1 %% shares sum to %g\n", label, share; bad = 1 }
    if (label ~ /^block/ && rows < 2) { printf "%s: one bin only\n", label; bad = 1 }
    if (label ~ /^shared/ && rows != 1) { printf "%s: %d bins\n", label, rows; bad = 1 }
    tables++
    label = ""
  }
  / by final bin / { close_table(); label = $0; sub(/:.*/, "", label); count = 0; share = 0; rows = 0; next }
  label != "" && /^\| [0-9]+ \|/ {
    split($0, f, "|"); count += f[4]; s = f[7]; sub(/%.*/, "", s); share += s; rows++; next
  }
  /^the worst 1 % by shell/ {
    close_table()
    total = 0; m = split($0, parts, ";")
    for (i = 1; i < m; i++) { s = parts[i]; sub(/.*: /, "", s); sub(/ %.*/, "", s); total += s }
    if (total < 99.5 || total > 100.5) { printf "shells: the worst 1 %% shares sum to %g\n", total; bad = 1 }
    shells++
  }
  END {
    close_table()
    if (tables != 2 || shells != 2) { printf "expected 2 tables and 2 shell lines, got %d and %d\n", tables, shells; bad = 1 }
    exit bad
  }' "$out" || { cat "$out"; exit 1; }
echo "check-by-bin: 2 runs, every table adds up"
