#!/usr/bin/env bash
# One command from a fresh Debian 12 / Ubuntu 24.04 checkout to a full test run: installs what
# is missing (the tests' tools too: install-deps.sh --tests), builds, and runs every test.
# Tests labelled gpu run only where an NVIDIA GPU answers (nvidia-smi -L); elsewhere they are
# excluded.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BHVIZ_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh" --tests
"$root/scripts/build.sh"
labels=(-LE gpu)
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  labels=()
  echo "bhviz: NVIDIA GPU found: running the gpu tests too"
else
  echo "bhviz: no NVIDIA GPU: skipping tests labelled gpu"
fi
cd "$build"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" "${labels[@]}"
