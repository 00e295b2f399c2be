# Sourced (bash) on a bare NVIDIA GPU server right after `source .gpu-bundle/env.sh`, from the
# project's root there:  source .gpu-bundle/env.sh; source scripts/gpu-mpi-env.sh
# Makes `mpirun -np K ...` work from Debian's OpenMPI 4.1.4 that scripts/gpu-bundle.sh ships in
# .gpu-bundle/deps and env.sh unpacks into /tmp/deps (`dpkg -x`, so no maintainer scripts ran):
# - `mpirun`: dpkg -x does not make Debian's alternatives links (/usr/bin/mpirun ->
#   /etc/alternatives/mpirun -> mpirun.openmpi -> orterun), so /tmp/deps/mpi-bin holds an
#   `mpirun` (and `mpiexec`) link to /tmp/deps/usr/bin/orterun and goes first on PATH.
# - OPAL_PREFIX=/tmp/deps/usr: OpenMPI was built for prefix /usr; this relocates its component
#   directory (lib/x86_64-linux-gnu/openmpi/lib/openmpi3) and help files (share/openmpi).
#   PMIX_INSTALL_PREFIX and PMIX_MCA_mca_base_component_path do the same for libpmix2.
# - OMPI_MCA_*: one machine, shared memory only. The bundle leaves out UCX, libfabric, PSM,
#   verbs and libnl, so those components cannot load: they are excluded by name (reachable
#   weighted, not netlink, which needs libnl; only btl tcp uses it) and load errors are not
#   shown. /etc/openmpi/openmpi-mca-params.conf is not read from /tmp/deps
#   (sysconfdir stays /etc/openmpi), so its defaults are repeated here. plm isolated launches
#   the ranks locally without ssh (not on the image); vader's single copy is off (CMA's
#   process_vm_readv is often refused in containers); oversubscription is allowed, ranks are
#   not bound, and root may run mpirun (the server's user).
# The bundle's mpirun is used whenever it is there, even beside a system one: our binaries link
# the bundle's libmpi, and a system mpirun of another version loads its own components against
# the bundle's libpmix on LD_LIBRARY_PATH (seen on the lent H100: Ubuntu 24.04's mpirun failed
# with "mca_pmix_ext3x.so: undefined symbol: PMIx_Info_create"). Without the bundle a system
# mpirun is left alone: only the quiet-down variables and NCCL's are set. NCCL_NVLS_ENABLE=0 in either case: NVLink SHARP multicast stays off on lent machines.
export NCCL_NVLS_ENABLE=0
export OMPI_MCA_mca_base_component_show_load_errors=0
export OMPI_MCA_btl_base_warn_component_unused=0
_ompi_run=
for _f in /tmp/deps/usr/bin/orterun /tmp/deps/usr/bin/mpirun.openmpi; do
  [ -x "$_f" ] && { _ompi_run=$_f; break; }
done
if [ -n "$_ompi_run" ] || ! command -v mpirun >/dev/null 2>&1; then
  if [ -n "$_ompi_run" ]; then
    mkdir -p /tmp/deps/mpi-bin
    ln -sfn "$_ompi_run" /tmp/deps/mpi-bin/mpirun
    ln -sfn "$_ompi_run" /tmp/deps/mpi-bin/mpiexec
    export PATH=/tmp/deps/mpi-bin:/tmp/deps/usr/bin${PATH:+:$PATH}
    export OPAL_PREFIX=/tmp/deps/usr
    export PMIX_INSTALL_PREFIX=/tmp/deps/usr/lib/x86_64-linux-gnu/pmix2
    export PMIX_MCA_mca_base_component_path=/tmp/deps/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix
    export OMPI_MCA_plm=isolated
    export OMPI_MCA_pml=ob1
    export OMPI_MCA_btl=self,vader
    export OMPI_MCA_mtl='^ofi,psm,psm2'
    export OMPI_MCA_osc='^ucx,pt2pt'
    export OMPI_MCA_reachable=weighted
    export OMPI_MCA_btl_vader_single_copy_mechanism=none
    export OMPI_MCA_rmaps_base_oversubscribe=1
    export OMPI_MCA_hwloc_base_binding_policy=none
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  else
    echo "gpu-mpi-env.sh: no mpirun on PATH and none in /tmp/deps (source .gpu-bundle/env.sh first)" >&2
  fi
fi
unset _ompi_run _f
# NCCL (the LETs GPU to GPU, sim/dist/nccl_link.h) is loaded at run time as libnccl.so.2: where
# the loader cannot find it, the first one found in the CUDA toolkit or in Python's NVIDIA
# wheels (the GPU image's PyTorch ships one) goes on LD_LIBRARY_PATH.
if ! ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2 '; then
  _nccl=$(ls /usr/local/cuda/lib64/libnccl.so.2 /usr/local/cuda/lib/libnccl.so.2 \
    /usr/local/cuda-*/lib*/libnccl.so.2 2>/dev/null | head -1)
  if [ -z "$_nccl" ] && command -v python3 >/dev/null; then
    _nccl=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0] + "/lib/libnccl.so.2")' \
      2>/dev/null)
  fi
  if [ -n "$_nccl" ] && [ -f "$_nccl" ]; then
    export LD_LIBRARY_PATH=$(dirname "$_nccl")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
  unset _nccl
fi
