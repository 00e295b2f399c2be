#!/usr/bin/env bash
# Replays inputs through both fuzz targets, each input alone and without fuzzing (libFuzzer runs
# the files it is given): by default the committed corpus and reproducers (tests/data/fuzz/) and
# the seeds of make_fuzz_seeds. Needs the fuzz build (scripts/fuzz.sh makes it; build-fuzz/, or
# $BHVIZ_FUZZ_BUILD_DIR). An input that fails is triaged (tests/fuzz/triage.sh): inside libhdf5
# and refused by bhviz's isolated reader is libhdf5's bug and is reported; anything else is ours.
# Deterministic: scripts/fuzz.sh runs this first, as the gate for our code.
#   scripts/fuzz-replay.sh [FILE|DIR ...]
# Exit status 1 when an input fails in our code (or escapes the isolated reader), 2 on misuse.
# BHVIZ_FUZZ_SYMBOLIZE=0 reads raw stack frames, as on a machine with no symbolizer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BHVIZ_FUZZ_BUILD_DIR:-$root/build-fuzz}
for target in tipsy hdf5; do
  if [ ! -x "$build/tests/fuzz/fuzz_$target" ]; then
    echo "bhviz: no fuzz build in $build (scripts/fuzz.sh 0 makes it)" >&2
    exit 2
  fi
done

inputs=()
[ $# -eq 0 ] && set -- "$root/tests/data/fuzz" "$build/seeds"
for arg in "$@"; do
  if [ -d "$arg" ]; then
    while IFS= read -r f; do inputs+=("$(cd "$(dirname "$f")" && pwd)/${f##*/}"); done \
      < <(find "$arg" -type f ! -name '*.md' | LC_ALL=C sort)
  elif [ -f "$arg" ]; then
    inputs+=("$(cd "$(dirname "$arg")" && pwd)/${arg##*/}")
  else
    echo "bhviz: no such input: $arg" >&2
    exit 2
  fi
done
[ ${#inputs[@]} -gt 0 ] || { echo "bhviz: no inputs to replay" >&2; exit 2; }

export BHVIZ_ROOT=$root
# shellcheck source=tests/fuzz/triage.sh
source "$root/tests/fuzz/triage.sh"
fuzz_setup_env

status=0
for target in tipsy hdf5; do
  fuzz_replay "$target" "$build/tests/fuzz/fuzz_$target" "$build/replay/clean-$target" \
    "$build/replay/$target" "${inputs[@]}"
  echo "$r_line"
  [ "$r_bad" -eq 0 ] || status=1
done
exit "$status"
