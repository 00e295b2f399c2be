#!/usr/bin/env bash
# The CPU test suite under AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer:
# configures a separate RelWithDebInfo build without CUDA (build-asan/, or $BHVIZ_ASAN_BUILD_DIR)
# whose every target, tests and the bhviz executable they run included, is instrumented, builds
# it and runs `ctest -LE gpu` there. Any report in our code fails its test: ASan stops at the
# first error, UBSan is fatal (-fno-sanitize-recover=undefined), and a leak makes the process
# exit non-zero. One suppression, for a read inside Debian's libhdf5, with its reason in
# tests/sanitize/asan.supp; Mesa's driver is kept loaded instead of suppressed (below).
# Arguments go to ctest (e.g. -R Snapshot). docs/FRESH-CHECK.md has the measured times.
#
# test_snapshot's output shows ASan's SEGV and FPE lines from inside libhdf5: Debian's library
# crashing on the fuzzers' reproducers (tests/data/fuzz/) in the isolated reader's child, as it
# does without ASan. That crash is what the isolation is for, and the tests check the parent's
# one-line refusal; they are not failures (and a deadly signal cannot be suppressed by name).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BHVIZ_ASAN_BUILD_DIR:-$root/build-asan}
jobs=$(nproc 2>/dev/null || echo 2)
"$root/scripts/install-deps.sh" --tests

# The flags go in through the cache from here, not into the CMakeLists (no global flag edits there).
sanitize='-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer'
mkdir -p "$build"
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
[ -f "$build/CMakeCache.txt" ] && generator=()  # keep the generator an earlier run chose
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBHVIZ_CUDA=OFF \
  -DBHVIZ_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS="$sanitize" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; exit 1; }
cmake --build "$build" -j "$jobs"

# halt_on_error: the first report ends the process (its test fails). allocator_may_return_null:
# an allocation the allocator cannot serve returns NULL (new throws std::bad_alloc), as it does
# without ASan, instead of ASan's report: libhdf5 asks for 256 GiB on a corrupt header and then
# fails cleanly (tests/data/fuzz/hdf5-huge-metadata.hdf5). Settings already in the environment
# come last and win.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:allocator_may_return_null=1:suppressions=$root/tests/sanitize/asan.supp${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$root/tests/sanitize/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# OpenMPI's components stay loaded to the end, so that LeakSanitizer names their frames
# (tests/sanitize/lsan.supp); the mpi tests also unwind malloc's stacks the slow way, through
# OpenMPI's frames that keep no frame pointer (tests/CMakeLists.txt).
export OMPI_MCA_mca_base_component_disable_dlclose=1
# Mesa's DRI driver (llvmpipe) stays loaded: EGL and GLX dlclose it when a display is closed,
# and LeakSanitizer, which runs at exit, then no longer sees the driver's globals. What they
# held (112 B per GL context, 5,435 B in the window) is reported as leaked "from an unloaded
# module", a frame no suppression can name (gcc 12's runtime has no `leak:<unknown module>`).
# Preloaded, the library is never unmapped, its globals are scanned, and nothing is reported:
# no suppression is needed. Every process of the run loads it (Xvfb does anyway). In ours the
# ASan runtime is then second in the library list, which is harmless (the driver defines no
# allocator, and ASan's interceptors still come before libc's): verify_asan_link_order=0
# allows it. (fast_unwind_on_malloc=0, for full stacks through Mesa, deadlocks in libgcc's
# unwinder when llvmpipe's JIT registers its code: not an option.)
dri=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/dri/swrast_dri.so
if [ -e "$dri" ]; then
  export LD_PRELOAD="$dri${LD_PRELOAD:+:$LD_PRELOAD}"
  export ASAN_OPTIONS="verify_asan_link_order=0:$ASAN_OPTIONS"
else
  echo "bhviz: $dri not found: GL tests may fail on leaks in Mesa's unloaded driver" >&2
fi
# Symbolised stacks need llvm-symbolizer (package llvm, installed above for --tests).
command -v llvm-symbolizer >/dev/null 2>&1 &&
  export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer)}

cd "$build"
ctest --output-on-failure -j "$jobs" -LE gpu "$@"
