#!/usr/bin/env bash
# The strong and weak scaling table of the distributed backend from bench_dist runs at several
# rank counts (docs/BENCHMARKS.md): strong, N fixed; weak, N per rank fixed (N·K in all). Each
# row's step is bench_dist's median wall time; efficiency is T(1) / (K·T(K)) strong and
# T(1) / T(K) weak, against the K = 1 run of the same call.
#
#   scripts/dist-scaling.sh [--bench PATH] [--ranks "1 2 4"] [--csv-dir DIR] [--mpirun "CMD"]
#                           [bench_dist options: --backend cuda --scenario merger --n 16000000 ...]
#
# --mpirun defaults to `mpirun --allow-run-as-root --oversubscribe`; the bench_dist options go to
# every run (--n is the strong N and the weak N per rank; --csv is set per run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench=$root/build/bench/bench_dist
ranks="1 2 4"
csvdir=$(mktemp -d)
launcher="mpirun --allow-run-as-root --oversubscribe"
n=1000000
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bench) bench=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --csv-dir) csvdir=$2; mkdir -p "$csvdir"; shift 2 ;;
    --mpirun) launcher=$2; shift 2 ;;
    --n) n=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
case " $ranks " in *" 1 "*) ;; *) echo "dist-scaling.sh: --ranks must include 1 (the baseline)" >&2; exit 2 ;; esac
[ -x "$bench" ] || { echo "dist-scaling.sh: no bench_dist at $bench" >&2; exit 2; }

# The median step of a run: the step_wall_ms column of its CSV (every row holds it).
step_ms() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "step_wall_ms") c = i; next }
           NR == 2 { print $c; exit }' "$1"
}
run() {  # label K N
  local csv=$csvdir/$1.csv
  $launcher -np "$2" "$bench" "${args[@]}" --n "$3" --csv "$csv" > "$csvdir/$1.log" 2>&1 ||
    { echo "dist-scaling.sh: bench_dist -np $2 --n $3 failed:" >&2; tail -5 "$csvdir/$1.log" >&2; exit 1; }
  step_ms "$csv"
}

base=$(run strong-1 1 "$n")
echo "| K | strong: N | step (ms) | efficiency | weak: N | step (ms) | efficiency |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for k in $ranks; do
  if [ "$k" = 1 ]; then
    strong=$base weak=$base
  else
    strong=$(run "strong-$k" "$k" "$n")
    weak=$(run "weak-$k" "$k" $((n * k)))
  fi
  awk -v k="$k" -v n="$n" -v b="$base" -v s="$strong" -v w="$weak" 'BEGIN {
    printf "| %d | %d | %.2f | %.1f %% | %d | %.2f | %.1f %% |\n",
           k, n, s, 100 * b / (k * s), n * k, w, 100 * b / w }'
done
echo "(bench_dist's CSVs and logs: $csvdir)"
