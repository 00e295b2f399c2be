#!/usr/bin/env sh
# Runs BINARY once per ARGS string (split on spaces, no globbing) and fails unless every run
# exits with STATUS, showing the output of a run that did not; used by the benchmarks'
# option tests (bench/CMakeLists.txt).
#   scripts/expect-exit.sh STATUS BINARY 'ARGS' ['ARGS' ...]
set -f
status=${1:-}
bin=${2:-}
case "$status" in
  '' | *[!0-9]*)
    echo "expect-exit.sh: STATUS must be a number, not '$status'" >&2
    exit 2
    ;;
esac
if [ -z "$bin" ] || [ $# -lt 3 ]; then
  echo "usage: expect-exit.sh STATUS BINARY 'ARGS' ['ARGS' ...]" >&2
  exit 2
fi
shift 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for args in "$@"; do
  # shellcheck disable=SC2086  # the arguments are meant to split
  "$bin" $args >"$out" 2>&1
  rc=$?
  if [ "$rc" -ne "$status" ]; then
    echo "$(basename "$bin") $args: exit $rc, expected $status; its output:"
    head -20 "$out"
    exit 1
  fi
done
echo "$(basename "$bin"): $# invocations exited $status"
