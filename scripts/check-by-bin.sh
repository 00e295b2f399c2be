#!/usr/bin/env sh
# The test of bench_block_steps --by-bin (bench/CMakeLists.txt). On a small CPU run:
#   - every run's table by final bin holds each particle once (its counts sum to N);
#   - its worst 1 % is the ceil(N/100) particles, shared out in full over the bins (100 %) and
#     over the shells of initial radius (100 %);
#   - a shared run's one bin has the median and p99 of the main table's row for that run (the
#     bins' errors are the run's);
#   - a block run uses more than one bin;
#   - the table of block against shared steps at equal p99 has each block run once per rebuild
#     mode, with its p99, evaluations and wall time as the main table has them; where its p99
#     lies between two shared runs of its mode (not marked *), the shared evaluations and wall
#     time it gives lie between theirs; and its work ratio is the shared evaluations over the
#     block run's. (Which mode's shared runs a block run takes is test_block_steps_ratio's.)
#   scripts/check-by-bin.sh BENCH_BLOCK_STEPS
set -eu
bin=${1:?usage: check-by-bin.sh BENCH_BLOCK_STEPS}
n=4096
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" --backend cpu --scenario m31 --n "$n" --time 0.5 --block-dt-max 0.5 --max-bin-depth 6 \
  --shared-dt 0.125 0.0625 0.03125 --eta 0.4 --reference-eta 0.1 --rebuild auto every \
  --by-bin --shells 4 \
  >"$out" || {
  rc=$?
  cat "$out"
  exit "$rc"
}
awk -v n="$n" '
  function trim(s) { gsub(/^ +| +$/, "", s); return s }
  function close_table() {
    if (label == "") return
    if (count != n) { printf "%s: the bins hold %d particles, not %d\n", label, count, n; bad = 1 }
    if (share < 99.5 || share > 100.5) { printf "%s: the worst 1 %% shares sum to %g\n", label, share; bad = 1 }
    if (label ~ /^block/ && rows < 2) { printf "%s: one bin only\n", label; bad = 1 }
    if (label ~ /^shared/) {
      if (rows != 1) { printf "%s: %d bins\n", label, rows; bad = 1 }
      if (lastMedian != median[label] || lastP99 != p99[label]) {
        printf "%s: its bin has median %s and p99 %s, the run %s and %s\n", label, lastMedian,
          lastP99, median[label], p99[label]
        bad = 1
      }
    }
    tables++
    label = ""
  }
  # The main table: | mode | dt or eta | rebuild | ... | median | p99 |, keyed as the labels
  # are (its dt or eta printed to 4 digits: this run'"'"'s values need no more).
  /^\| (shared|block) \|/ {
    split($0, f, "|"); key = trim(f[2]) " " trim(f[3]) " " trim(f[4])
    median[key] = trim(f[14]); p99[key] = trim(f[15])
    evals[key] = trim(f[6]); wall[key] = trim(f[8])
    if (trim(f[2]) == "shared") {
      mode = trim(f[4]); k = ++sharedRuns[mode]; sp[mode, k] = trim(f[15]) + 0; se[mode, k] = trim(f[6]) + 0
      sw[mode, k] = trim(f[8]) + 0
    }
    next
  }
  # The table at equal p99, last: | block 0.4 auto | p99[*] | evaluations | wall s | ...
  /^Block against shared steps at equal p99/ { atEqualP99 = 1; next }
  atEqualP99 && /^\| block [0-9]/ {
    split($0, f, "|"); key = trim(f[2]); p = trim(f[3]); outside = sub(/\*$/, "", p); ratios++
    if (seen[key]++) { printf "%s twice at equal p99\n", key; bad = 1 }
    if (p != p99[key] || trim(f[4]) != evals[key] || trim(f[5]) != wall[key]) {
      printf "%s at equal p99: %s, %s, %s; the main table %s, %s, %s\n", key, p, trim(f[4]),
        trim(f[5]), p99[key], evals[key], wall[key]
      bad = 1
    }
    e = trim(f[6]) + 0; work = trim(f[8]); sub(/×/, "", work)
    if (work + 0 < 0.95 * e / trim(f[4]) || work + 0 > 1.05 * e / trim(f[4])) {
      printf "%s: work ratio %s, but %s shared evaluations over %s\n", key, work, e, trim(f[4]); bad = 1
    }
    if (!outside) {  # between the shared runs of its mode whose p99s bracket it
      mode = key; sub(/.* /, "", mode); lo = -1; hi = -1; q = p + 0
      for (k = 1; k <= sharedRuns[mode]; k++) {
        if (sp[mode, k] >= q && (lo < 0 || sp[mode, k] < sp[mode, lo])) lo = k
        if (sp[mode, k] <= q && (hi < 0 || sp[mode, k] > sp[mode, hi])) hi = k
      }
      if (lo < 0 || hi < 0) { printf "%s: not marked *, but no %s shared runs bracket its p99\n", key, mode; bad = 1 }
      else {
        if (e < se[mode, lo] - 0.05 || e > se[mode, hi] + 0.05) {
          printf "%s: %s shared evaluations, outside %s..%s\n", key, e, se[mode, lo], se[mode, hi]; bad = 1
        }
        t = trim(f[7]) + 0; tlo = sw[mode, lo] < sw[mode, hi] ? sw[mode, lo] : sw[mode, hi]
        thi = sw[mode, lo] < sw[mode, hi] ? sw[mode, hi] : sw[mode, lo]
        if (t < tlo - 0.0005 || t > thi + 0.0005) {
          printf "%s: shared wall %s s, outside its %s runs'"'"' %s..%s\n", key, t, mode, tlo, thi; bad = 1
        }
      }
      inside++
    }
    next
  }
  / by final bin / {
    close_table(); label = $0; sub(/:.*/, "", label); count = 0; share = 0; rows = 0
    w = $0; sub(/.*the worst 1 % = /, "", w); sub(/ .*/, "", w)
    if (w != int((n + 99) / 100)) { printf "%s: the worst 1 %% are %s particles\n", label, w; bad = 1 }
    next
  }
  label != "" && /^\| [0-9]+ \|/ {
    split($0, f, "|"); count += f[4]; s = f[7]; sub(/%.*/, "", s); share += s; rows++
    lastMedian = trim(f[5]); lastP99 = trim(f[6]); next
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
    if (tables != 8 || shells != 8) { printf "expected 8 tables and 8 shell lines, got %d and %d\n", tables, shells; bad = 1 }
    if (ratios != 2) { printf "expected the block run at equal p99 once per rebuild mode, got %d rows\n", ratios; bad = 1 }
    if (inside < 1) { printf "no block run between two shared runs: the interpolation is untested\n"; bad = 1 }
    exit bad
  }' "$out" || {
  cat "$out"
  exit 1
}
echo "check-by-bin: 8 runs, every table adds up"
