#!/usr/bin/env bash
# Fuzzes the snapshot readers (Tipsy, HDF5) for SECONDS each (default 20): configures a separate
# clang build with libFuzzer, ASan and UBSan (build-fuzz/, or $BHVIZ_FUZZ_BUILD_DIR), writes a
# seed corpus with our own writers, and runs each target. Exit status 0 when no target found
# anything; otherwise the crashing input is left in the build directory (crash-*, oom-*,
# leak-*, timeout-*) and the status is libFuzzer's. Needs clang, libclang-rt-dev (libFuzzer)
# and libomp-dev (scripts/install-deps.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-20}
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS per target, >= 1] (got '$seconds')" >&2
  exit 2
fi
build=${BHVIZ_FUZZ_BUILD_DIR:-$root/build-fuzz}
cxx=${BHVIZ_FUZZ_CXX:-$(command -v clang++ || command -v clang++-14 || true)}
if [ -z "$cxx" ]; then
  echo "bhviz: fuzzing needs clang++ (apt-get install clang libclang-rt-dev libomp-dev)" >&2
  exit 2
fi

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

# Leaks are not checked: libhdf5 keeps global state until exit. A malloc the allocator cannot
# serve returns NULL, as it does outside the sanitizer: libhdf5 asks for 256 GiB on some corrupt
# headers and then fails cleanly (tests/data/fuzz/hdf5-huge-metadata.hdf5). Our own allocations
# would still fail loudly (std::bad_alloc escapes the target), and any allocation that succeeds
# above -malloc_limit_mb is reported by libFuzzer.
# tests/fuzz/asan.supp silences reads past a buffer inside libhdf5 itself (see there).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1:suppressions=$root/tests/fuzz/asan.supp}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# A crash, a huge allocation or a hang whose innermost frame (past libc, the sanitizer and libFuzzer) is
# libhdf5's is Debian's bug, not ours: bhviz reads HDF5 in a child process with bounded memory
# and time (sim/io/isolated.h), so the run passes when that path refuses the input cleanly
# (BHVIZ_FUZZ_ISOLATED=1), and fails otherwise.
crashed_in_libhdf5() {  # LOG: the first stack frame outside libc, the sanitizer and libFuzzer
  grep -E '^ +#[0-9]+ 0x[0-9a-f]+ in ' "$1" |
    grep -vE 'interceptor|sysdeps|libc\.so|__asan|__sanitizer|fuzzer::| in (malloc|calloc|realloc) ' |
    head -1 | grep -q 'libhdf5'
}
status=0
for target in tipsy hdf5; do
  corpus=$build/corpus-$target  # grows across runs; the seeds are read too, never written
  mkdir -p "$corpus"
  # HDF5 files carry a superblock and object headers: our smallest is a few KiB.
  max_len=4096
  [ "$target" = hdf5 ] && max_len=32768
  echo "bhviz: fuzzing the $target reader for $seconds s"
  log=$build/fuzz-$target.log
  rm -f "$build"/crash-* "$build"/oom-* "$build"/timeout-* "$build"/leak-*
  rc=0
  (cd "$build" && "./tests/fuzz/fuzz_$target" -max_total_time="$seconds" -max_len="$max_len" \
      -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 -print_final_stats=1 \
      "$corpus" "$seeds/$target") >"$log" 2>&1 || rc=$?
  tail -n 25 "$log"
  [ $rc -eq 0 ] && continue
  crash=$(ls "$build"/crash-* "$build"/oom-* "$build"/timeout-* 2>/dev/null | head -1 || true)
  if [ "$target" = hdf5 ] && [ -n "$crash" ] && crashed_in_libhdf5 "$log" &&
     (cd "$build" && BHVIZ_FUZZ_ISOLATED=1 ./tests/fuzz/fuzz_hdf5 "$crash" >"$log.isolated" 2>&1); then
    echo "bhviz: libhdf5 failed inside itself on $crash (Debian's library, not our code);"
    echo "       bhviz's isolated reader refuses that input with one SnapshotError: not a failure."
    echo "       Keep it as a regression input (tests/data/fuzz/) if it is new."
    continue
  fi
  status=$rc
  echo "bhviz: the $target fuzzer failed (status $rc); the input is in $build, the log in $log" >&2
done
exit "$status"
