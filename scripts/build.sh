#!/usr/bin/env bash
# Configures and builds bhviz (Release) into build/. Extra arguments go to CMake's configure,
# e.g. scripts/build.sh -DBHVIZ_CUDA=OFF
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BHVIZ_BUILD_DIR:-$root/build}
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build" -j "$jobs"
