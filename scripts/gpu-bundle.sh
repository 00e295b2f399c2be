#!/usr/bin/env bash
# Prepares .gpu-bundle/ for a bare NVIDIA GPU server: the shared recipe (GL loader, GLFW and its
# X11 libraries; ../shared/gpu-server/bundle.sh) plus what else bhviz links that such an image
# lacks: libstb0 (Debian's imgui links it), Debian's libhdf5 with its szip chain (the server's
# may be another build or missing) and libgomp, and Debian's OpenMPI runtime for `mpirun -np K`
# on that one machine: openmpi-bin (orterun), openmpi-common (help files), libopenmpi3 with
# libpmix2, libhwloc15, libevent-core/-pthreads and libmunge2 (libpmix.so.2 links it). Not
# shipped: libucx0, libfabric1, libpsm*, libibverbs1, libnl-3 (InfiniBand/OFI/UCX components
# and the netlink reachable one, which then fail to load, silenced) and libhwloc-plugins;
# scripts/gpu-mpi-env.sh, sourced after env.sh, puts `mpirun` on PATH and limits OpenMPI to
# shared memory (btl self,vader). env.sh there unpacks every deps/*.deb into /tmp/deps, on
# LD_LIBRARY_PATH; only libraries a bare image lacks belong here, so that none shadows a newer
# one of the server's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p .git/info  # bundle.sh records .gpu-bundle/ in .git/info/exclude
[ -f .gpu-bundle/env.sh ] || ../shared/gpu-server/bundle.sh
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
wanted=(libstb0 libhdf5-103-1 libsz2 libaec0 libgomp1
        openmpi-bin openmpi-common libopenmpi3 libpmix2 libhwloc15 libmunge2
        libevent-core-2.1-7 libevent-pthreads-2.1-7)
for p in "${wanted[@]}"; do
  ls .gpu-bundle/deps/"${p}"_*.deb >/dev/null 2>&1 && continue
  mkdir -p /tmp/amd64/partial
  ls /tmp/amd64/*Packages* >/dev/null 2>&1 || apt-get $o update -qq
  (cd .gpu-bundle/deps && apt-get $o download -qq "$p")
done
ls .gpu-bundle/deps
