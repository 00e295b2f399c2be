#!/usr/bin/env bash
# Collects the binaries the GPU machine runs (tests labelled gpu, the render tests, benchmarks,
# bhviz) from a CUDA build into .gpu-bin/ (git-ignored), for the device tool's `carry`. Then,
# there:
#   source .gpu-bundle/env.sh; scripts/gpu-check.sh .gpu-bin $OUT
# Configure the build the set comes from with -DCMAKE_CUDA_ARCHITECTURES=90-real (SASS for sm_90
# only, no PTX): every binary holds its own copy of the kernels, and with the PTX the set packed
# (xz -6) was 63.7 MB at d84d4ec, past the device tool's 64 MiB carry with .gpu-bundle; without
# it 38 MB. The project's default (90: SASS and PTX) stays for users, whose newer GPUs JIT it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
dest=$root/.gpu-bin
rm -rf "$dest" && mkdir -p "$dest"
# test_render also runs on the NVIDIA GL there: both sprite passes must draw the same picture.
for f in "$build"/tests/gpu/test_* "$build"/tests/test_render "$build"/tests/test_render_look \
  "$build"/tests/test_dist \
  "$build"/bench/bench_* "$build"/bhviz; do
  case "$(basename "$f")" in bench_cpu) continue ;; esac  # the CPU benchmark runs here
  [ -f "$f" ] && [ -x "$f" ] && cp "$f" "$dest/"
done
# Symbols beyond the dynamic ones are not needed there; the carry limit is 64 MiB in all.
strip --strip-unneeded "$dest"/* 2>/dev/null || true
du -sh "$dest"
ls "$dest"
