#!/usr/bin/env bash
# Fuzzes the snapshot readers (Tipsy, HDF5): configures a separate clang build with libFuzzer,
# ASan and UBSan (build-fuzz/, or $BHVIZ_FUZZ_BUILD_DIR), writes a seed corpus with our own
# writers, then
#   1. replays the committed corpus and reproducers (tests/data/fuzz/) and the seeds through both
#      targets, each input alone (scripts/fuzz-replay.sh);
#   2. fuzzes each target in-process from fixed -seed values for a fixed number of runs, with
#      address randomization off, so that it finds the same inputs on every run;
#   3. fuzzes each target for SECONDS (default 20; 0 skips this step) in fork mode, which collects
#      crashes, out-of-memory and timeouts in build-fuzz/findings/TARGET/ and carries on.
# Steps 1 and 2 are the deterministic gate for our code. Every failing input is triaged by the
# innermost stack frame that is libhdf5's or ours (tests/fuzz/triage.sh, symbolized or not):
# inside Debian's libhdf5 and refused by bhviz's isolated reader is reported, not a failure.
# The run fails when an input fails in our code, when the isolated reader does not refuse an
# input libhdf5 fails on, or when a target of step 3 fuzzed less than 90 % of SECONDS.
# One summary line per step and target, with the executions. Exit status 0 passed, 1 failed,
# 2 misuse. Needs clang, libclang-rt-dev (libFuzzer) and libomp-dev (scripts/install-deps.sh);
# llvm (llvm-symbolizer) for readable stacks.
#   BHVIZ_FUZZ_SEEDS ("1 2 3"), BHVIZ_FUZZ_RUNS_TIPSY (200000), BHVIZ_FUZZ_RUNS_HDF5 (4000): step 2.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-20}
if ! [[ $seconds =~ ^(0|[1-9][0-9]*)$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS per target of open-ended fuzzing, 0 for none] (got '$seconds')" >&2
  exit 2
fi
build=${BHVIZ_FUZZ_BUILD_DIR:-$root/build-fuzz}
cxx=${BHVIZ_FUZZ_CXX:-$(command -v clang++ || command -v clang++-14 || true)}
if [ -z "$cxx" ]; then
  echo "bhviz: fuzzing needs clang++ (apt-get install clang libclang-rt-dev libomp-dev)" >&2
  exit 2
fi
export BHVIZ_FUZZ_CXX=$cxx BHVIZ_FUZZ_BUILD_DIR=$build BHVIZ_ROOT=$root
fuzz_seeds=${BHVIZ_FUZZ_SEEDS:-1 2 3}
declare -A fuzz_runs=([tipsy]=${BHVIZ_FUZZ_RUNS_TIPSY:-200000} [hdf5]=${BHVIZ_FUZZ_RUNS_HDF5:-4000})
# HDF5 files carry a superblock and object headers: our smallest is a few KiB.
declare -A max_len=([tipsy]=4096 [hdf5]=32768)

mkdir -p "$build"
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBHVIZ_FUZZ=ON -DBHVIZ_CUDA=OFF \
  -DBHVIZ_BUILD_TESTS=OFF -DBHVIZ_BUILD_BENCH=OFF >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; exit 1; }
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target fuzz_tipsy fuzz_hdf5 make_fuzz_seeds

seeds=$build/seeds
rm -rf "$seeds"
"$build/tests/fuzz/make_fuzz_seeds" "$seeds"

# shellcheck source=tests/fuzz/triage.sh
source "$root/tests/fuzz/triage.sh"
fuzz_setup_env
summary=()
failures=()

# 1. The committed inputs and the seeds, each alone.
replay_rc=0
bash "$root/scripts/fuzz-replay.sh" 2>&1 | tee "$build/replay.log" || replay_rc=$?
while IFS= read -r line; do summary+=("$line"); done < <(grep '^bhviz: fuzz replay ' "$build/replay.log")
[ "$replay_rc" -eq 0 ] || failures+=("replay: an input fails in our code or escapes the isolated reader (above)")

# libFuzzer's choices depend on the values it sees compared, addresses among them (a pointer in
# a dictionary entry): the same seed takes the same path only with address randomization off and
# the same stack, so the seeded runs get a fixed environment and relative paths (the stack
# starts below them), raw stack frames (no symbolizer path in it; fuzz_triage names them) and
# not the user's ASAN_OPTIONS.
cp "$root/tests/fuzz/asan.supp" "$build/asan.supp"
fixed_env=(env -i PATH=/usr/bin:/bin
  ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:suppressions=asan.supp:symbolize=0
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
if setarch "$(uname -m)" -R true >/dev/null 2>&1; then
  fixed_env+=("$(command -v setarch)" "$(uname -m)" -R)
else
  echo "bhviz: cannot turn address randomization off (setarch -R): the seeded runs may vary"
fi

# A step's inputs that failed in our code (or escaped the isolated reader), as one failure.
step_failures() {
  if [ "$t_bad" -gt 0 ]; then
    failures+=("$1: $t_bad input(s) fail in our code or escape the isolated reader; first: $t_first_bad")
  fi
  return 0
}

# 2. TARGET from each fixed seed, in-process, a fixed number of runs, starting from the committed
# inputs that replayed clean (fresh HDF5 seeds carry the time they were written). A failure stops
# that seed's run (its input is triaged from this log); the next seed starts afresh.
seeded_fuzz() {
  local target=$1 bin=$build/tests/fuzz/fuzz_$1 out=$build/findings/seeded-$1 total=0 s rc n
  local runs=${fuzz_runs[$1]} stops="" artifact
  rm -rf "$out"
  mkdir -p "$out/start"
  find "$build/replay/clean-$target" -maxdepth 1 -type f -name "$target-*" \
    -exec cp {} "$out/start/" \;
  fuzz_step_begin
  for s in $fuzz_seeds; do
    mkdir -p "$out/corpus-$s"
    rc=0
    (cd "$build" && "${fixed_env[@]}" "./tests/fuzz/fuzz_$target" -seed="$s" -runs="$runs" \
      -reload=0 -print_funcs=0 -max_len="${max_len[$target]}" "${fuzz_limits[@]}" \
      -print_final_stats=1 -artifact_prefix="findings/seeded-$target/seed$s-" \
      "findings/seeded-$target/corpus-$s" "findings/seeded-$target/start") \
      >"$out/seed$s.log" 2>&1 || rc=$?
    n=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$out/seed$s.log" | tail -1)
    total=$((total + ${n:-0}))
    [ "$rc" -eq 0 ] && continue
    artifact=$(find "$out" -maxdepth 1 -type f -name "seed$s-*" ! -name '*.log' | head -1 || true)
    if [ -z "$artifact" ]; then
      echo "bhviz:   seeded $target, seed $s: the fuzzer failed with no input (status $rc); log: $out/seed$s.log"
      tail -n 20 "$out/seed$s.log" | sed 's/^/bhviz:     | /' || true
      failures+=("seeded $target: seed $s failed (status $rc)")
      continue
    fi
    fuzz_triage "$target" "$bin" "$artifact" "$artifact" "$out/seed$s.log"
    # The stack to show: the input alone, symbolized, when it fails that way too.
    if [ "$t_verdict" = ours ] && ! "$bin" "${fuzz_limits[@]}" "$artifact" >"$artifact.alone.log" 2>&1; then
      t_log=$artifact.alone.log
    fi
    stops+="${stops:+, }seed $s at run ${n:-?}"
    fuzz_note "seeded $target, seed $s, run ${n:-?}" "$artifact"
  done
  fuzz_step_end "$out"
  step_failures "seeded $target"
  local line="bhviz: fuzz seeded $target: $total executions (seeds $fuzz_seeds, $runs runs each"
  line+="${stops:+; stopped: $stops}), $(fuzz_count_words)"
  echo "$line"
  summary+=("$line")
}

# 3. TARGET for SECONDS in fork mode: a child process fuzzes, and a crash, an out-of-memory or a
# timeout leaves its input in findings/TARGET/ and a new child carries on. Each finding is then
# re-run alone and triaged (libFuzzer deletes the children's logs).
timed_fuzz() {
  local target=$1 bin=$build/tests/fuzz/fuzz_$1 findings=$build/findings/$1
  local corpus=$build/corpus-$1 log=$build/fuzz-$1.log  # the corpus grows across runs
  rm -rf "$findings"
  mkdir -p "$findings" "$corpus"
  echo "bhviz: fuzzing the $target reader for $seconds s"
  "$bin" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 -max_total_time="$seconds" \
    -max_len="${max_len[$target]}" "${fuzz_limits[@]}" -artifact_prefix="$findings/" \
    "$corpus" "$build/replay/clean-$target" >"$log" 2>&1 || true  # the last child's status
  grep -E '^#[0-9]+: |^INFO: (fuzzed for|exiting)' "$log" | tail -n 3 || true
  local last execs fuzzed
  last=$(grep -E '^#[0-9]+: ' "$log" | tail -1 || true)
  execs=$(sed -nE 's/^#([0-9]+): .*/\1/p' <<<"$last")
  fuzzed=$(sed -nE 's/^INFO: fuzzed for ([0-9]+) seconds.*/\1/p' "$log" | tail -1)
  [ -n "$fuzzed" ] || fuzzed=$(sed -nE 's/.* time: ([0-9]+)s .*/\1/p' <<<"$last")
  execs=${execs:-0} fuzzed=${fuzzed:-0}

  fuzz_step_begin
  local artifact
  while IFS= read -r artifact; do
    fuzz_triage "$target" "$bin" "$artifact" "$artifact"
    fuzz_note "fuzz $target" "$artifact"
  done < <(find "$findings" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'oom-*' -o \
             -name 'timeout-*' -o -name 'leak-*' \) ! -name '*.log' | LC_ALL=C sort)
  fuzz_step_end "$findings"
  step_failures "fuzz $target"

  local line="bhviz: fuzz $target: $execs executions in $fuzzed s ($((fuzzed * 100 / seconds)) % of"
  line+=" $seconds s), $(fuzz_count_words)"
  echo "$line"
  summary+=("$line")
  if [ $((fuzzed * 10)) -lt $((seconds * 9)) ] || [ "$execs" -eq 0 ]; then
    failures+=("fuzz $target: $execs executions in $fuzzed s of $seconds s; log: ${log#"$root"/}")
    grep -vE 'WARNING: AddressSanitizer failed to allocate' "$log" | tail -n 15 |
      sed 's/^/bhviz:     | /' || true
  fi
}

for target in tipsy hdf5; do seeded_fuzz "$target"; done
if [ "$seconds" -gt 0 ]; then
  for target in tipsy hdf5; do timed_fuzz "$target"; done
fi

echo "bhviz: fuzz summary"
printf '%s\n' "${summary[@]}"
if [ ${#failures[@]} -gt 0 ]; then
  echo "bhviz: fuzz FAILED:" >&2
  printf 'bhviz:   %s\n' "${failures[@]}" >&2
  exit 1
fi
echo "bhviz: fuzz passed (findings inside libhdf5 are in ${build#"$root"/}/findings/; a new one that"
echo "       reproduces alone is worth keeping in tests/data/fuzz/ as hdf5-WHAT.hdf5)"
