#!/usr/bin/env bash
# Applies .clang-format to every C++ and CUDA source of the repository (git's tracked files and
# the untracked ones it does not ignore), or with --check lists the files it would change and
# exits 1 if there are any (CI runs the check). Needs clang-format (Debian's clang-format-14
# or newer: scripts/install-deps.sh installs it with the test tools).
#
#   scripts/format.sh          # rewrite in place
#   scripts/format.sh --check  # change nothing; status 1 when a file is not formatted
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# The sources are formatted by clang-format 14 (Debian 12's): other majors break lines
# differently, so the check holds only with 14 and says so elsewhere.
fmt=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
if [ -z "$fmt" ]; then
  echo "bhviz: clang-format is not installed (apt-get install clang-format)" >&2
  exit 2
fi
mode=${1:-fix}
major=$("$fmt" --version | sed -n 's/.*version \([0-9]*\).*/\1/p' | head -1)
if [ "$major" != 14 ]; then
  echo "bhviz: $fmt is clang-format $major; the sources follow clang-format 14:" \
       "install clang-format-14 to check or apply the format" >&2
  [ "$mode" = --check ] && exit 0
  exit 2
fi
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.cpp' '*.h' '*.cu' '*.cuh' |
                     while read -r f; do [ -f "$f" ] && echo "$f"; done)
if [ "$mode" = --check ]; then
  bad=()
  for f in "${files[@]}"; do
    if ! "$fmt" --style=file "$f" | cmp -s - "$f"; then bad+=("$f"); fi
  done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "bhviz: ${#bad[@]} of ${#files[@]} sources are not formatted (scripts/format.sh fixes them):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "bhviz: all ${#files[@]} sources formatted ($("$fmt" --version | head -1))"
  exit 0
fi
"$fmt" --style=file -i "${files[@]}"
echo "bhviz: formatted ${#files[@]} sources"
