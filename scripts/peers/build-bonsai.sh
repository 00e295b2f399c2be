#!/usr/bin/env bash
# Builds Bonsai's single-GPU executable (runtime/ -> bonsai2_slowdust; github treecode/Bonsai,
# Bédorf, Gaburov & Portegies Zwart 2012) for Hopper (sm_90) with static cudart, so that it runs on a
# GPU machine that cannot fetch anything, and puts the stripped binary into .gpu-prof/bonsai/
# (git-ignored; packed as .gpu-prof/bonsai.tar.xz, xz -9, when over 15 MB).
# Configuration: no MPI, no OpenGL, no galactics, CUB radix sort (upstream's default), the Kepler+
# warp gravity kernel (COMPILE_SM35=ON selects dev_approximate_gravity_warp_new.cu, which uses
# __shfl_sync/__ballot_sync; OFF would select the Fermi kernel with -arch sm_20), CMake Release.
# Usage: scripts/peers/build-bonsai.sh [GITDIR_OR_URL [COMMIT]]
#   GITDIR_OR_URL  a (bare) git directory or clone URL of Bonsai; default: the fetch tool's mirror
#                  /work/.mirror/treecode+Bonsai/repo
#   COMMIT         default 581fa8e70501ce85660c7eac0d61c0e5c5bece4a (2024-05-19, "Merge pull
#                  request #52 from treecode/remove_texture_usage"), the one built and checked.
#                  Only runtime/ and inputExamples/model3_child_compact.tipsy are taken (the mirror
#                  lacks the large images/*.ppm blobs, which only the OpenGL renderer uses).
# Env: PEERS (default /work/peers) holds the source bonsai/ and the build bonsai-build/; NVCC
# (default /usr/local/cuda/bin/nvcc); JOBS (default 2).
# Needs CMake >= 3.10 (tested 3.25.1; with CMake >= 3.27 the FindCUDA module is kept by
# CMAKE_POLICY_DEFAULT_CMP0146=OLD), nvcc 13 (tested 13.0.88), g++ 12 with OpenMP. Nothing of
# Bonsai is copied into this repository.
# Patches, with sed, in the build copy only ($PEERS/bonsai/runtime):
#   P1 CMakeLists.txt: cmake_minimum_required 2.8 -> 3.10 (CMake >= 3.27 warns, 4.x refuses < 3.5).
#   P2 CMakeLists.txt: -std=c++14 -> -std=c++17 (twice: host flags and nvcc OPTIONS); CCCL 3
#      (thrust/cub of CUDA 13) requires C++17.
#   P3 CMakeLists.txt: the COMPILE_SM35 branch's GENCODE (upstream: no -arch at all, so nvcc 13
#      would build for its default sm_75) gets -gencode arch=compute_90,code=sm_90: SASS for
#      sm_90 only (H100/H200); -Xptxas=-v -ftz=true -lineinfo kept as upstream.
#   P4 CMakeLists.txt: "-msse4 -march=native" -> "-msse4": the binary is built here and run on
#      another host; -march=native would tie the host code to this build machine's CPU.
#   P5 CMakeLists.txt: the file(COPY ../images/ ...) line is dropped (images absent, see above;
#      only the renderer reads them). The copy of model3_child_compact.tipsy is kept.
#   P6 CUDAkernels/sortKernels.cu: ": public thrust::unary_function<uint4, uint>" dropped (CCCL 3
#      removed thrust::unary_function; the functor needs no base class).
#   P7 CUDAkernels/parallel.cu: ": public binary_function<uint2,uint2,bool>" dropped (likewise;
#      std::binary_function is gone from C++17 on).
#   P8 CMakeLists.txt: include_directories(${CUDA_TOOLKIT_ROOT_DIR}/../../thrust) ->
#      ${CUDA_TOOLKIT_ROOT_DIR}/include/cccl: CUDA 13 moved thrust/cub/libcu++ there; nvcc finds
#      them itself, but the .cpp files (g++) include <thrust/device_ptr.h> via my_cuda_rt.h.
#   P9 src/sort_bodies_gpu.cpp: #include "nvToolsExt.h" -> <nvtx3/nvToolsExt.h> (CUDA 13 dropped
#      NVTX v2; nothing of it is called, and NVTX 3 is header-only, so nothing more is linked).
#   P10 src/load_kernels.cpp: tree-walk blocks per SM capped at 16 (the fix for the crash "CUDA
#      Runtime API error 700: an illegal memory access" at the first step on H100 SXM / H200).
#      getTreeWalkBlocksPerSM (include/node_specs.h) returns 32 for every major >= 3, so with 132
#      SMs nBlocksForTreeWalk = 4224, and build.cpp (allocateParticleMemory, and the same line in
#      reallocateParticleMemory) sizes the tree-walk stack in an int:
#        2*(LMEM_STACK_SIZE*NTHREAD + LMEM_EXTRA_SIZE)*nBlocksForTreeWalk + 4096
#        = 2*(2048*128 + 2048)*4224 + 4096 = 2,231,898,112 > INT_MAX -> wraps to -2,063,069,184,
#      so max(12*N + 4096, that) leaves generalBuffer1 at 12*N + 4096 uints (50 MB at N = 2^20),
#      while dev_approximate_gravity gives each block a private stack of CELL_LIST_MEM_PER_WARP*4
#      = 262,144 uints at MEM_BUF[262144*blockIdx.x] (plus 2^24 uints after gridDim.x of them for
#      the overflow walk): 1.12e9 uints (4.5 GB) needed. Every block past the first ~48 writes
#      its root cells (the cellList init at the top of approximate_gravity) beyond the buffer.
#      It hits any GPU with >= 128 SMs (4065 blocks); 108-SM A100 and 114-SM H100 PCIe stay below.
#      16 blocks of NTHREAD = 128 threads are already more than an SM can hold (no CUDA GPU has
#      over 2048 threads/SM; with its 64 registers/thread the kernel fits 8 blocks/SM on sm_90),
#      and groups are handed out by an atomicAdd on active_inout[n], a resident block exits only
#      once that queue is empty, so every block past the resident ones started and left at once:
#      the walk itself is unchanged. With 132*16 = 2112 blocks the stack is 1,115,951,104 uints
#      (4.46 GB on the device, and as much pinned on the host), which fits an int.
#   P11 CUDAkernels/dev_approximate_gravity_warp_new.cu: the group index that lane 0 takes from
#      the work queue reaches the other lanes by __shfl_sync(FULL_MASK, bid, 0) instead of
#      shmem[0] with no barrier (Volta+ independent thread scheduling lets lanes 1..31 read
#      shmem[0], the warp's tmpList slot 0, before lane 0 has written it: a stale cell/particle
#      index taken as a group index). Hardening; equivalent on a converged warp.
#   P12 same file: __syncwarp() before the overflow walk's shared 2^24 stack is used and again
#      before its spin lock (active_inout[n+1]) is released: upstream only lane 0 spins for the
#      lock, and under independent thread scheduling lanes 1..31 could enter treewalk<8> and write
#      root cells into the stack that another block is walking with. Hardening; only runs for
#      groups whose walk overflowed the 65,536-entry per-warp stack.
#   P11 and P12 change dev_approximate_gravity's ptxas report from 224 to 240 bytes of stack frame
#      (324 -> 340 bytes of spill stores; 64 registers either way, so 8 blocks per SM resident).
#      They are off by default: the peer is measured as close to upstream as it runs (P1-P10;
#      on the H200, 2026-11-28, both builds ran clean under memcheck and within 1-3 % of each
#      other's step times, docs/BENCHMARKS.md). HARDEN=1 applies them.
#   P13 src/gpu_iterate.cpp: with BONSAI_DUMP_FORCES=<file> set, the first gravity evaluation's
#      positions (bodies_Ppos, mass in w) and accelerations (bodies_acc1) are written to <file>
#      (int32 n, then n float4 positions, then n float4 accelerations, host byte order), so that
#      bench_peer_error measures Bonsai's force error as bhviz's is measured (against exact
#      direct summation; an unwritable file is reported on stderr and skipped). Inert without the
#      variable (one getenv at the first step).
# Env (besides the above): HARDEN (default 0: P1-P10 only). ORIG=1 also builds two control
# binaries, after the main one: .gpu-prof/bonsai-orig/ (P1-P9: upstream's code, which crashes on
# 132-SM GPUs) and .gpu-prof/bonsai-p10/ (P1-P10), each an incremental rebuild of the two files that
# P10-P12 touch (restored from git first); then P11-P12 are put back and rebuilt, so the build tree
# ends as .gpu-prof/bonsai/ was built. COMMIT in each folder says which patches it has.
# scripts/peers/check-bonsai.sh runs them on the GPU machine, also under compute-sanitizer memcheck.
# Only the bonsai2_slowdust target is built (not the bonsai_amuse library, which would compile
# everything a second time). cudart is linked statically by FindCUDA (CUDA_USE_STATIC_CUDA_RUNTIME
# ON, stated anyway); the binary still needs libgomp.so.1 (OpenMP: an I/O thread beside the
# integrator), libstdc++, libm, libgcc_s, libc and, at run time, the driver's libcuda.so.1.
# No runtime files are needed for --plummer (the model is generated in memory). It writes
# gpuLog.log (kernel timings, per-step lines) into the working directory.
# The stripped binary is about 5 MB, so it normally stays unpacked in .gpu-prof/bonsai/ (only a
# build over 15 MB is packed; then first tar xJf .gpu-prof/bonsai.tar.xz -C .gpu-prof).
# Run there, in a writable working directory:
#   ulimit -s unlimited    # as upstream's README says
#   .gpu-prof/bonsai/bonsai2_slowdust --plummer 1048576 --theta 0.5 --eps 0.05 --dt 0.0625 --iend 10 --log
#   .gpu-prof/bonsai/bonsai2_slowdust --plummer 4194304 --theta 0.5 --eps 0.05 --dt 0.0625 --iend 10 --log
#   (theta: -o/--theta 0.4 | 0.5 | 0.75 (0.75 is Bonsai's default); eps 0.05 is the default and is
#   squared inside (Plummer softening eps^2 = 0.0025); --dt 1/16 is the default shared time step;
#   -I/--iend N stops after iteration N (N+1 gravity evaluations, iteration 0 included); -T/--tend
#   would stop at an N-body time instead (default 1). --plummer N generates N bodies per process,
#   total mass 1, G = 1 (ICGenerators.h / plummer.h). --dev K picks the GPU. --direct would replace
#   the tree walk by the N^2 sum.)
# Where the times are (stderr; APPTIME and TIME need --log, TIME also goes to stdout):
#   APPTIME [0]: Iter: i  <s: wall time of the gravity walk of step i, stream synced>  n: N
#     EventTime: <ms: the gravity kernel alone, CUDA events>  and <LET ms, 0 on one GPU>  Sum: <ms>
#   TIME [00] TOTAL: <s>  Grav: <s> (GPUgrav <s>, LET Com: 0)  Build: <s> ... tPredCor: <s>
#     For iterations < 32 gpu_iterate.cpp resets these sums at the start of every step, so each of
#     the first 32 TIME lines is that one step: TOTAL = the whole step (predict, sort + tree build,
#     gravity, correct, energies, and a host loop that sums interaction counts, printed before it
#     as "Stats calculation took: <s>"), Grav = gravity walk, Build = sort + tree build +
#     properties. From iteration 32 on they accumulate.
#   iter=i : time= t  Etot= ...  de= <relative energy error> ... t_sim= <s since start> (always,
#     stdout and stderr). Step 0 includes warm-up: average steps >= 1.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:-/work/.mirror/treecode+Bonsai/repo}
commit=${2:-581fa8e70501ce85660c7eac0d61c0e5c5bece4a}
peers=${PEERS:-/work/peers}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
jobs=${JOBS:-2}
dest=$root/.gpu-prof/bonsai

# 1. Sources at $commit, as plain trees (git archive: no work tree needed in a bare mirror).
gitdir=$src
if [ ! -d "$src" ]; then
  gitdir=$peers/bonsai.git
  [ -d "$gitdir" ] || git clone --bare "$src" "$gitdir"
fi
git --git-dir="$gitdir" cat-file -e "$commit^{commit}"
rm -rf "$peers/bonsai"
mkdir -p "$peers/bonsai/inputExamples"
git --git-dir="$gitdir" archive --prefix=runtime/ "$commit:runtime" | tar x -C "$peers/bonsai"
git --git-dir="$gitdir" cat-file blob "$commit:inputExamples/model3_child_compact.tipsy" \
  > "$peers/bonsai/inputExamples/model3_child_compact.tipsy"
echo "$commit" > "$peers/bonsai/COMMIT"

# 2. Patches P1-P9 (see the header); each grep checks that its sed took.
rt=$peers/bonsai/runtime
cm=$rt/CMakeLists.txt
sed -i 's/^CMAKE_MINIMUM_REQUIRED(VERSION 2\.8)/CMAKE_MINIMUM_REQUIRED(VERSION 3.10)/' "$cm"
grep -q '^CMAKE_MINIMUM_REQUIRED(VERSION 3\.10)' "$cm"
sed -i 's/-std=c++14/-std=c++17/g' "$cm"
[ "$(grep -c -- '-std=c++17' "$cm")" = 3 ]
[ "$(grep -c -- '-std=c++14' "$cm")" = 0 ]
sed -i 's/^\(  set(GENCODE\) \(-Xptxas=-v -ftz=true -lineinfo)\)/\1 -gencode arch=compute_90,code=sm_90 \2/' "$cm"
grep -q '^  set(GENCODE -gencode arch=compute_90,code=sm_90 -Xptxas=-v -ftz=true -lineinfo)' "$cm"
sed -i 's/add_definitions( "-msse4  -march=native")/add_definitions( "-msse4")/' "$cm"
grep -q 'add_definitions( "-msse4")' "$cm"
[ "$(grep -c 'march=native' "$cm")" = 0 ]
sed -i '/^file(COPY ${CMAKE_SOURCE_DIR}\/..\/images\//d' "$cm"
[ "$(grep -c 'images/' "$cm")" = 0 ]
sed -i 's/^struct ExtractBits: public thrust::unary_function<uint4, uint>$/struct ExtractBits/' \
  "$rt/CUDAkernels/sortKernels.cu"
grep -q '^struct ExtractBits$' "$rt/CUDAkernels/sortKernels.cu"
sed -i 's/^ struct domainCompare2 : public binary_function<uint2,uint2,bool>$/ struct domainCompare2/' \
  "$rt/CUDAkernels/parallel.cu"
grep -q '^ struct domainCompare2$' "$rt/CUDAkernels/parallel.cu"
sed -i 's|^include_directories(${CUDA_TOOLKIT_ROOT_DIR}/../../thrust)$|include_directories(${CUDA_TOOLKIT_ROOT_DIR}/include/cccl)|' "$cm"
grep -q '^include_directories(${CUDA_TOOLKIT_ROOT_DIR}/include/cccl)$' "$cm"
sed -i 's|^#include "nvToolsExt.h"$|#include <nvtx3/nvToolsExt.h>|' "$rt/src/sort_bodies_gpu.cpp"
grep -q '^#include <nvtx3/nvToolsExt.h>$' "$rt/src/sort_bodies_gpu.cpp"

# Patches P10-P12 (see the header); a function, since ORIG=1 applies them a second time.
lk=$rt/src/load_kernels.cpp
gk=$rt/CUDAkernels/dev_approximate_gravity_warp_new.cu
patch_p10() {
  sed -i 's/^  nBlocksForTreeWalk \t= nMultiProcessors\*blocksPerSM;$/  nBlocksForTreeWalk \t= nMultiProcessors*(blocksPerSM > 16 ? 16 : blocksPerSM);/' "$lk"
  grep -q '^  nBlocksForTreeWalk[[:blank:]]*= nMultiProcessors\*(blocksPerSM > 16 ? 16 : blocksPerSM);$' "$lk"
}
patch_p11_p12() {
  sed -i 's/^    bid   = shmemv\[0\];$/    bid   = __shfl_sync(FULL_MASK, bid, 0);/' "$gk"
  grep -q '^    bid   = __shfl_sync(FULL_MASK, bid, 0);$' "$gk"
  [ "$(grep -c 'bid   = shmemv\[0\]' "$gk")" = 0 ]
  sed -i -e 's/^\(      int \*lmem1 = &MEM_BUF\[gridDim\.x\*(CELL_LIST_MEM_PER_WARP<<nWarps2)\];\)$/      __syncwarp();\n\1/' \
    -e 's/^      assert(success);$/      assert(success);\n      __syncwarp();/' "$gk"
  [ "$(grep -c '^      __syncwarp();$' "$gk")" = 2 ]
  grep -B1 '^      int \*lmem1 = &MEM_BUF\[gridDim' "$gk" | grep -q '^      __syncwarp();$'
}
patch_p10
if [ "${HARDEN:-0}" != 0 ]; then patch_p11_p12; fi
patch_p13() {
  local gi=$rt/src/gpu_iterate.cpp
  sed -i 's|^    gravStream->sync(); //Syncs the gravity stream, including any gravity computations due to LET actions$|&\n    { static const char *dumpPath = getenv("BONSAI_DUMP_FORCES"); static bool dumped = false; if (dumpPath != NULL \&\& !dumped) { dumped = true; localTree.bodies_Ppos.d2h(); localTree.bodies_acc1.d2h(); FILE *df = fopen(dumpPath, "wb"); if (df == NULL) { fprintf(stderr, "P13: cannot write %s\\n", dumpPath); } else { int dn = localTree.n; fwrite(\&dn, sizeof dn, 1, df); fwrite(\&localTree.bodies_Ppos[0], sizeof(real4), dn, df); fwrite(\&localTree.bodies_acc1[0], sizeof(real4), dn, df); fclose(df); } } } // P13|' "$gi"
  [ "$(grep -c '// P13$' "$gi")" = 1 ]
}
patch_p13

# 3. Configure and build (fresh). FindCUDA passes CMAKE_CXX_FLAGS(_RELEASE) and the OpenMP flag
# to nvcc's host compiler; CUDA_USE_STATIC_CUDA_RUNTIME links libcudart_static.a (+ -lrt -ldl).
rm -rf "$peers/bonsai-build"
nice cmake -S "$rt" -B "$peers/bonsai-build" -DCMAKE_POLICY_DEFAULT_CMP0146=OLD \
  -DCMAKE_BUILD_TYPE=Release -DCUDA_TOOLKIT_ROOT_DIR="$(dirname "$(dirname "$nvcc")")" \
  -DCUDA_NVCC_EXECUTABLE="$nvcc" -DCUDA_USE_STATIC_CUDA_RUNTIME=ON \
  -DUSE_MPI=OFF -DUSE_MPIMT=OFF -DUSE_OPENGL=OFF -DUSE_GALACTICS=OFF -DUSE_GALACTICS_IFORT=OFF \
  -DUSE_DUST=OFF -DUSE_CUB=ON -DUSE_THRUST=OFF -DCOMPILE_SM35=ON
nice cmake --build "$peers/bonsai-build" -j "$jobs" --target bonsai2_slowdust

# 4. Stripped binary; packed as one .tar.xz (xz -9) when over 15 MB, and the folder removed; there,
# unpack with   tar xJf .gpu-prof/bonsai.tar.xz -C .gpu-prof
rm -rf "$dest" "$dest.tar.xz" && mkdir -p "$dest"
cp "$peers/bonsai-build/bonsai2_slowdust" "$dest/bonsai2_slowdust"
strip --strip-unneeded "$dest/bonsai2_slowdust"
echo "$commit P1-P10$( [ "${HARDEN:-0}" = 0 ] || echo ' P11 P12') P13" > "$dest/COMMIT"
[ "$(ldd "$dest/bonsai2_slowdust" | grep -c libcudart)" = 0 ]
ldd "$dest/bonsai2_slowdust"
ls -l "$dest"
if [ "$(cat "$dest"/* | wc -c)" -gt 15000000 ]; then
  XZ_OPT=-9 tar cJf "$dest.tar.xz" -C "$(dirname "$dest")" bonsai
  rm -rf "$dest"
  ls -l "$dest.tar.xz"
fi

# 5. ORIG=1: the control binaries .gpu-prof/bonsai-orig/ (P1-P9) and .gpu-prof/bonsai-p10/
# (P1-P10), see the header; each an incremental rebuild of the two files P10-P12 touch.
variant() {  # $1 = folder suffix, $2 = what COMMIT says
  nice cmake --build "$peers/bonsai-build" -j "$jobs" --target bonsai2_slowdust
  rm -rf "$dest-$1" && mkdir -p "$dest-$1"
  cp "$peers/bonsai-build/bonsai2_slowdust" "$dest-$1/bonsai2_slowdust"
  strip --strip-unneeded "$dest-$1/bonsai2_slowdust"
  echo "$commit $2" > "$dest-$1/COMMIT"
  ls -l "$dest-$1"
}
if [ "${ORIG:-0}" = 1 ]; then
  for f in "$lk" "$gk"; do
    git --git-dir="$gitdir" cat-file blob "$commit:runtime/${f#"$rt"/}" > "$f"
  done
  [ "$(grep -c 'blocksPerSM > 16' "$lk")" = 0 ] && [ "$(grep -c '__syncwarp\|bid, 0)' "$gk")" = 0 ] || exit 1
  variant orig "P1-P9 only"
  patch_p10
  variant p10 "P1-P10"
  if [ "${HARDEN:-0}" != 0 ]; then  # back to the state of $dest
    patch_p11_p12
    nice cmake --build "$peers/bonsai-build" -j "$jobs" --target bonsai2_slowdust
  fi
fi
