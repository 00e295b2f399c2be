#!/usr/bin/env sh
# Runs BINARY once per ARGS string (split on spaces) and fails unless every run exits with
# STATUS; used by the benchmarks' bad-option tests (bench/CMakeLists.txt).
#   scripts/expect-exit.sh STATUS BINARY 'ARGS' ['ARGS' ...]
status=$1
bin=$2
shift 2
for args in "$@"; do
  # shellcheck disable=SC2086  # the arguments are meant to split
  "$bin" $args >/dev/null 2>&1
  rc=$?
  if [ "$rc" -ne "$status" ]; then
    echo "$(basename "$bin") $args: exit $rc, expected $status"
    exit 1
  fi
done
echo "$(basename "$bin"): $# invocations exited $status"
