#!/usr/bin/env bash
# Builds Ryoanji's single-GPU benchmark (ryoanji/test/demo.cu -> ryoanji_demo; github exafmm/ryoanji,
# Keller et al. 2023) for Hopper (sm_90) with static cudart, so that it runs on a GPU machine that
# cannot fetch anything, and puts the stripped binaries into .gpu-prof/ryoanji/ (git-ignored; packed
# as .gpu-prof/ryoanji.tar.xz when over 15 MB, as now):
#   ryoanji_demo          theta 0.6 (as upstream: theta is hard-coded in demo.cu)
#   ryoanji_demo_theta05  theta 0.5 (the one-line sed below, in the build copy only)
# Usage: scripts/peers/build-ryoanji.sh [GITDIR_OR_URL [COMMIT]]
#   GITDIR_OR_URL  a (bare) git directory or clone URL of Ryoanji; default: the fetch tool's mirror
#                  /work/.mirror/exafmm+ryoanji/repo
#   COMMIT         default f24f8a8e360b185cefd7870d7cfcb2d05f357339 (2025-07-08, "Merge commit
#                  '74239d06'"), the one built and checked. cstone/ is a git subtree there (no
#                  submodules).
# Env: PEERS (default /work/peers) holds the sources ryoanji/, ryoanji-theta05/ and the builds
# ryoanji-build/, ryoanji-build-theta05/; NVCC (default /usr/local/cuda/bin/nvcc); JOBS (default 2).
# Needs CMake >= 3.22, nvcc 13 (tested 13.0.88), g++ 12, and a GTest (else CMake downloads it) and
# MPI that CMake finds (configure only; ryoanji_demo links neither). Nothing of Ryoanji is copied
# into this repository.
# Run there, after tar xJf .gpu-prof/ryoanji.tar.xz -C .gpu-prof
# (demo args: power [directRef=1 [numShells=0]], N = 2^power - 1):
#   .gpu-prof/ryoanji/ryoanji_demo_theta05 20        # with the direct-sum error check
#   .gpu-prof/ryoanji/ryoanji_demo_theta05 26 0      # 67,108,863 bodies; no direct sum (1e17 flop)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:-/work/.mirror/exafmm+ryoanji/repo}
commit=${2:-f24f8a8e360b185cefd7870d7cfcb2d05f357339}
peers=${PEERS:-/work/peers}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
jobs=${JOBS:-2}
dest=$root/.gpu-prof/ryoanji

# 1. Sources at $commit, as plain trees (git archive: no work tree needed in a bare mirror).
gitdir=$src
if [ ! -d "$src" ]; then
  gitdir=$peers/ryoanji.git
  [ -d "$gitdir" ] || git clone --bare "$src" "$gitdir"
fi
git --git-dir="$gitdir" cat-file -e "$commit^{commit}"
rm -rf "$peers/ryoanji" "$peers/ryoanji-theta05"
mkdir -p "$peers/ryoanji"
git --git-dir="$gitdir" archive "$commit" | tar x -C "$peers/ryoanji"
echo "$commit" > "$peers/ryoanji/COMMIT"

# CCCL 3 (CUDA 13) removed cub::Sum; cuda::std::plus is its replacement. Two lines: the first is
# in cstone_gpu, which the demo links; the second (ewald.cu) only in targets the demo does not need.
sed -i 's/cub::Sum()/cuda::std::plus<>{}/' \
  "$peers/ryoanji/cstone/include/cstone/focus/rebalance_gpu.cu" \
  "$peers/ryoanji/ryoanji/src/ryoanji/interface/ewald.cu"

# theta 0.5 copy: demo.cu has `T           theta     = 0.6;` and no option for it.
cp -a "$peers/ryoanji" "$peers/ryoanji-theta05"
sed -i 's/^\(    T           theta     = \)0\.6;/\10.5;/' "$peers/ryoanji-theta05/ryoanji/test/demo.cu"
grep -q '^    T           theta     = 0\.5;' "$peers/ryoanji-theta05/ryoanji/test/demo.cu"

# 2./3. Configure and build. CMake 3.25 does not know that nvcc 13 has C++20 (cuda_std_20), so it
# passes no -std and nvcc defaults to C++17, but cstone needs std::span: hence -std=c++20.
# Static cudart (CMake's default, stated anyway); demo.cu and its libraries are all .cu, so the
# top-level -march=native (CXX flags only) does not reach this binary.
build() { # source dir, build dir; fresh, as git archive dates the sources to the commit
  rm -rf "$2"
  nice cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$nvcc" \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_RUNTIME_LIBRARY=Static -DCMAKE_CUDA_FLAGS=-std=c++20
  nice cmake --build "$2" -j "$jobs" --target ryoanji_demo
}
build "$peers/ryoanji" "$peers/ryoanji-build"
build "$peers/ryoanji-theta05" "$peers/ryoanji-build-theta05"

# 4. Stripped binaries (7.75 MB each). Over 15 MB together, so they travel as one .tar.xz (1.5 MB:
# the two differ only in one constant) and the folder is removed; there, unpack with
#   tar xJf .gpu-prof/ryoanji.tar.xz -C .gpu-prof
rm -rf "$dest" "$dest.tar.xz" && mkdir -p "$dest"
cp "$peers/ryoanji-build/ryoanji/test/ryoanji_demo" "$dest/ryoanji_demo"
cp "$peers/ryoanji-build-theta05/ryoanji/test/ryoanji_demo" "$dest/ryoanji_demo_theta05"
strip --strip-unneeded "$dest"/*
echo "$commit" > "$dest/COMMIT"
ldd "$dest/ryoanji_demo"
ls -l "$dest"
if [ "$(cat "$dest"/* | wc -c)" -gt 15000000 ]; then
  tar cJf "$dest.tar.xz" -C "$(dirname "$dest")" ryoanji
  rm -rf "$dest"
  ls -l "$dest.tar.xz"
fi
