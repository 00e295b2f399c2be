#!/usr/bin/env bash
# Runs the GPU checks on a machine with an NVIDIA GPU, from a folder of built binaries:
#   every GPU test binary (test_*), compute-sanitizer memcheck and racecheck on a small case,
#   every benchmark binary (bench_*), a headless run of bhviz on the CUDA backend, and the
#   distributed backend under mpirun on the CUDA backend (test_dist, bench_dist, bhviz).
# Logs go to OUT_DIR (default ./gpu-check-logs); a short summary is printed last.
#
#   scripts/gpu-check.sh BIN_DIR [OUT_DIR]
# On the lent GPU server: `source .gpu-bundle/env.sh; scripts/gpu-check.sh .gpu-bin $OUT`.
# The whole of it outgrows one 600 s call on an H200 (2026-11-27: cut off in bench_dist at 16 M),
# and the device tool brings back only a few files: run the tests and sanitizers
# (BHVIZ_SKIP_BENCH=1, ~510 s) into a folder under /tmp, tar it into $OUT, and the benchmarks
# in another call. At 853b777 (2026-11-27, H200) the sanitizer section alone took 472 s, 280 of
# them racecheck of test_cuda_backend (not timed before; the walk now splits small tests' groups
# over up to 8 warps each): split the check over three calls, BHVIZ_SKIP_SANITIZE=1
# BHVIZ_SKIP_MPI=1 (tests, render), BHVIZ_SKIP_TESTS=1 BHVIZ_SKIP_MPI=1 (the sanitizers), and
# BHVIZ_MPI_ONLY=1.
# At b4aa07b (2026-11-28) the sanitizer section alone ran past one call (564 s with the start-up,
# cut off in the racecheck of test_cuda_backend): split it with BHVIZ_SANITIZE_ONLY, e.g.
# "test_cuda_backend" in one call and the other binaries in another, and tar the logs into $OUT
# as each call ends. At c949f6a test_cuda_backend's racecheck alone ran past a call (its block
# runs); it now racechecks only its short tests (sanitize_filter). Timed at c949f6a (H200,
# 2026-11-28): test_cuda_backend memcheck 5 s, racecheck 64 s (short tests); every other binary
# but the two below, both tools, ~300 s; test_cuda_walk_mutual memcheck ~20 s, racecheck 45 s
# (one test; all seven took over 200 s); test_cuda_walk_potential racecheck 295 s (its one test,
# 2026-11-29), so the first call below takes ~430 s. So three
# calls, each with BHVIZ_SKIP_TESTS=1 BHVIZ_SKIP_MPI=1 BHVIZ_SKIP_BENCH=1 and:
#   BHVIZ_SANITIZE_ONLY="test_cuda_backend test_cuda_walk_mutual test_cuda_walk_potential"
#   BHVIZ_SANITIZE_SKIP="test_cuda_backend test_cuda_walk_mutual test_cuda_walk_potential"
# (the second, ~300 s, is every other binary), and the tests, render and MPI sections in a third.
# Environment: BHVIZ_SANITIZE_FILTER (gtest filter of test_cuda_stages's sanitizer runs),
# BHVIZ_SANITIZE_ONLY (space-separated test binaries the sanitizer section runs; default all),
# BHVIZ_SANITIZE_SKIP (space-separated test binaries it leaves out), BHVIZ_SKIP_BENCH=1,
# BHVIZ_SKIP_TESTS=1, BHVIZ_SKIP_SANITIZE=1, BHVIZ_SKIP_MPI=1, BHVIZ_MPI_ONLY=1 (only section 5;
# to split the checks over calls of a time limit), BHVIZ_DIST_RANKS (the rank counts of test_dist
# on the machine's GPUs, default "1 2 3"), BHVIZ_DIST_TIMEOUT (seconds per test_dist run, default
# 240). mpirun comes from the system or from the bundle (scripts/gpu-mpi-env.sh).
set -u

BIN_DIR=${1:?usage: gpu-check.sh BIN_DIR [OUT_DIR]}
OUT_DIR=${2:-gpu-check-logs}
mkdir -p "$OUT_DIR"
SUMMARY=()
FAILED=0

note() { SUMMARY+=("$(printf '%-34s %s' "$1" "$2")"); }
MPI_ONLY=${BHVIZ_MPI_ONLY:-0}
[ "$MPI_ONLY" = 1 ] && BHVIZ_SKIP_TESTS=1

# Runs "$@", appending its output to the log $1; records pass/fail under the label $2.
run_logged() {
  local log=$1 label=$2
  shift 2
  echo "=== $label: $*" | tee -a "$log"
  local start=$SECONDS
  "$@" >>"$log" 2>&1
  local rc=$?
  local took=$((SECONDS - start))
  if [ $rc -eq 0 ]; then
    note "$label" "ok (${took}s)"
  else
    note "$label" "FAILED rc=$rc (${took}s), see $(basename "$log")"
    FAILED=1
  fi
  return $rc
}

gtest_counts() {  # the gtest totals of a log, on one line
  grep -E '^\[ +(PASSED|SKIPPED|FAILED) +\] [0-9]+ test' "$1" | tr -s ' ' | paste -sd ' ' -
}

if command -v nvidia-smi >/dev/null; then
  GPU=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)
else
  GPU="no nvidia-smi"
fi
echo "gpu-check: $GPU"

# 1. Tests. Those that run bhviz find it through BHVIZ_EXE (their build path is not here).
[ -x "$BIN_DIR/bhviz" ] && export BHVIZ_EXE="$(cd "$BIN_DIR" && pwd)/bhviz"
TEST_LOG="$OUT_DIR/tests.log"
: >"$TEST_LOG"
[ "${BHVIZ_SKIP_TESTS:-0}" = 1 ] || for t in "$BIN_DIR"/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  case "$name" in test_dist*) continue ;; esac  # under mpirun, below
  one_log=$(mktemp)
  run_logged "$one_log" "$name" "$t" --gtest_color=no
  note "  $name totals" "$(gtest_counts "$one_log" | tail -c 200)"
  cat "$one_log" >>"$TEST_LOG"
  rm -f "$one_log"
done

if [ "${BHVIZ_SKIP_TESTS:-0}" != 1 ] && ! ls "$BIN_DIR"/test_* >/dev/null 2>&1; then
  note "tests" "FAILED: no test binary in $BIN_DIR"
  FAILED=1
fi

# 2. Sanitizers on small cases of every GPU test binary.
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
sanitize_filter() {  # binary, tool
  # racecheck of test_cuda_backend's block runs took 220 s (TreeRefit) and 104 s (Potentials) on
  # an H200 at c949f6a, and TheLastWalkAgain more: past a call with the rest. Their kernels (the
  # walk, the moments' refit) are racechecked through test_cuda_walk and test_cuda_stages; memcheck
  # still runs them.
  # The trees used again (test_cuda_tree_reuse) run the same kernels on 50,000 particles: memcheck
  # only.
  if [ "$1/$2" = test_cuda_tree_reuse/racecheck ]; then
    echo ""
    return
  fi
  if [ "$1/$2" = test_cuda_backend/racecheck ]; then
    echo "CudaDirectSum.*:CudaBackend.NonFinite*:CudaBackend.TheCheckAfterASubstep*:CudaBackend.BlockStepsWithOneBin*:CudaBackend.DiagnosticsOnTheDeviceEqualTheHostSumsMidStep"
    return
  fi
  # racecheck of every mutual test ran past two minutes (run127); one test of 20 k particles
  # (N_group 64, with the potential: nearKernel<2, true> and counterKernel<true>, all targets
  # and sparse, a list walked again). The other slot counts and the potential-free variants
  # are memchecked only.
  if [ "$1/$2" = test_cuda_walk_mutual/racecheck ]; then
    echo "CudaMutualWalk.ListsLongerThanTheWorkspaceAreWalkedAgainIntoMore"
    return
  fi
  case "$1" in
    test_cuda_stages) echo "${BHVIZ_SANITIZE_FILTER:-*n1000_leaf16_*:*n2_*:CudaStages.MomentsUpTheTree*}" ;;
    test_cuda_sort_and_tree) echo "CudaSortAndTree.TreeBuildOfEveryLevelAtOnce*:CudaSortAndTree.TreeBuildRetries*:CudaSortAndTree.TreeBuildReads*:CudaSortAndTree.TreeBuildLevelsAtTheEdges*:CudaSortAndTree.SortOnTheTrees*:CudaSortAndTree.ATreeDeeper*" ;;
    test_cuda_walk) echo "*n1000_leaf16_group64_*:*n2_leaf1_*:*n1000_*acceleration*:CudaWalk.Schedule*:CudaWalk.LastWork*" ;;
    test_cuda_backend) echo "CudaDirectSum.*:CudaBackend.NonFinite*:CudaBackend.TheCheckAfterASubstep*:CudaBackend.BlockStepsWithOneBin*:CudaBackend.DiagnosticsOnTheDeviceEqualTheHostSumsMidStep:CudaBackend.Potentials*:CudaBackend.TheLastWalkAgain*" ;;
    test_cuda_tree_reuse) echo "CudaBackend.TreeRefit*:CudaBackend.AProbe*" ;;
    test_cuda_domains) echo "CudaDomains.OrbCountsAndDecompositionsAreTheCpuTwins:CudaDomains.PackedExchangeIsTheHostExchange:CudaDomains.GatherRemoveAndAppendAreTheCpuBackends:CudaDomains.ImportedLetWalkIsTheCpuWalk:CudaDomains.LetCutOnTheDeviceIsTheCpuCut:CudaDomains.LetBytesWalkedOnTheDeviceAreTheLetTree:CudaDomains.MomentsGiveCubesCrossedByDomainFacesTheirParts:CudaSample.*" ;;
    test_cuda_tree_statistics) echo "*plummer_n20000_*:*merger_n50000_leaf8_*:CudaTreeStatisticsEmpty.*" ;;
    # Not run under the sanitizers: the same kernels as test_cuda_backend run longer (racecheck
    # takes minutes; 0 hazards when measured), and the limits' test runs the executable.
    test_cuda_determinism | test_cuda_limits) echo "" ;;
    *) echo "*" ;;
  esac
}
if [ "$MPI_ONLY" = 1 ]; then
  :
elif [ "${BHVIZ_SKIP_SANITIZE:-0}" = 1 ]; then
  note "compute-sanitizer" "skipped (BHVIZ_SKIP_SANITIZE=1)"
elif [ -x "$SAN" ]; then
  SAN_LOG="$OUT_DIR/sanitizer.log"
  : >"$SAN_LOG"
  for t in "$BIN_DIR"/test_cuda_*; do  # the CUDA kernels (not the GL ones)
    [ -x "$t" ] || continue
    name=$(basename "$t")
    # BHVIZ_SANITIZE_ONLY: the binaries of this call, to split the section over calls.
    if [ -n "${BHVIZ_SANITIZE_ONLY:-}" ] && [[ " $BHVIZ_SANITIZE_ONLY " != *" $name "* ]]; then
      continue
    fi
    if [[ " ${BHVIZ_SANITIZE_SKIP:-} " == *" $name "* ]]; then
      continue
    fi
    for tool in memcheck racecheck; do
      # test_cuda_rewind runs whole simulations: racecheck of them takes over ten minutes (the
      # same kernels are racechecked through test_cuda_backend and test_cuda_walk).
      [ "$tool/$name" = racecheck/test_cuda_rewind ] && continue
      filter=$(sanitize_filter "$name" "$tool")
      if [ -z "$filter" ]; then  # an empty gtest filter would run nothing and pass
        note "compute-sanitizer $tool $name" "not run (see sanitize_filter)"
        continue
      fi
      run_logged "$SAN_LOG" "compute-sanitizer $tool $name" "$SAN" --tool "$tool" \
        --error-exitcode 3 "$t" --gtest_color=no "--gtest_filter=$filter"
    done
  done
  note "  sanitizer summaries" "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$SAN_LOG" | paste -sd ' ' -)"
else
  note "compute-sanitizer" "skipped (not found)"
fi

# 3. Benchmarks: each with the arguments that fill docs/BENCHMARKS.md (BHVIZ_QUICK=1: fewer).
bench_args() {
  case "$1" in
    bench_gpu)
      if [ "${BHVIZ_QUICK:-0}" = 1 ]; then echo "--n 1000000 --theta 0.5"
      else echo "--scenario plummer,galaxy --n 1000000,4000000 --theta 0.4,0.5,0.75 --csv $OUT_DIR/bench_gpu.csv"; fi ;;
    bench_block_steps)  # the M31 table of docs/BENCHMARKS.md (block against shared, on cusps)
      echo "--backend cuda --scenario m31 --n 1000000 --softening 0.015625 --time 1.0 --shared-dt 0.03125 0.015625 0.0078125 --block-dt-max 0.125 --max-bin-depth 10 --eta 0.4 0.2 0.1 --rebuild auto every --reference-eta 0.025 --reference-depth 12 --csv $OUT_DIR/bench_block_steps.csv" ;;
    bench_cpu) echo "--benchmark_filter=n:100000/" ;;
    bench_frame) echo "--n 1000000,4000000" ;;
    *) echo "" ;;
  esac
}
if [ "${BHVIZ_SKIP_BENCH:-0}" != 1 ] && [ "$MPI_ONLY" != 1 ]; then
  BENCH_LOG="$OUT_DIR/bench.log"
  : >"$BENCH_LOG"
  for b in "$BIN_DIR"/bench_*; do
    [ -x "$b" ] || continue
    case "$(basename "$b")" in bench_dist) continue ;; esac  # under mpirun, below
    # shellcheck disable=SC2046  # the arguments are meant to split
    run_logged "$BENCH_LOG" "$(basename "$b")" "$b" $(bench_args "$(basename "$b")")
  done
  # The demo look (population colours, dust, depth of field), its cost apart, and the followed
  # camera's, at 1 M and 16 M.
  [ -x "$BIN_DIR/bench_frame" ] && run_logged "$BENCH_LOG" "bench_frame --demo-look" \
    "$BIN_DIR/bench_frame" --n 1000000,16000000 --demo-look
fi

# 4. The command line on the CUDA backend: a million-particle merger, a few steps, and its
#    picture rendered headless (EGL on the GPU) with the tree overlay written on the device.
if [ -x "$BIN_DIR/bhviz" ] && [ "$MPI_ONLY" != 1 ]; then
  run_logged "$OUT_DIR/bhviz.log" "bhviz headless merger 1M (cuda)" "$BIN_DIR/bhviz" --headless \
    --backend cuda --scenario merger --n 1000000 --steps 4 --stats "$OUT_DIR/bhviz-stats.json" \
    --screenshot "$OUT_DIR/merger-1m.png" --overlay tree --overlay-levels 3:5
fi

# 5. The distributed backend on the CUDA backend, under mpirun: test_dist with 1 and 2 ranks (two
#    ranks share a one-GPU machine's GPU), memcheck of both ranks, bench_dist (K = 1: the
#    distributed path's overhead; K = 2), and bhviz itself with 2 ranks.
HERE=$(cd "$(dirname "$0")" && pwd)
[ -f "$HERE/gpu-mpi-env.sh" ] && source "$HERE/gpu-mpi-env.sh"
export NCCL_NVLS_ENABLE=0
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${BHVIZ_SKIP_MPI:-0}" = 1 ]; then
  note "mpi" "skipped (BHVIZ_SKIP_MPI=1)"
elif ! command -v mpirun >/dev/null; then
  note "mpi" "skipped (no mpirun)"
elif [ -x "$BIN_DIR/test_dist" ]; then
  MPI_LOG="$OUT_DIR/mpi.log"
  : >"$MPI_LOG"
  MPIRUN=(mpirun --allow-run-as-root --oversubscribe -x BHVIZ_TEST_DIST_BACKEND=cuda
          -x OMP_NUM_THREADS=4 -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH)
  # BHVIZ_DIST_RANKS: the rank counts that share the machine's GPUs (default "1 2 3"); each run
  # ends after BHVIZ_DIST_TIMEOUT seconds (default 240; each takes ~5 s), so that a hang fails,
  # naming the test it stopped in (the log's last "[ RUN ]", written line by line) and, from
  # two minutes on, where each rank waits (BHVIZ_TEST_STACKS_AFTER: tests/dist/stack_watch.h).
  for k in ${BHVIZ_DIST_RANKS:-1 2 3}; do
    run_logged "$MPI_LOG" "test_dist cuda, $k rank(s)" timeout "${BHVIZ_DIST_TIMEOUT:-240}" \
      "${MPIRUN[@]}" -x BHVIZ_TEST_STACKS_AFTER=120 -np "$k" stdbuf -oL -eL "$BIN_DIR/test_dist" \
      --gtest_color=no
  done
  if [ "$GPUS" -ge 2 ]; then
    # A GPU per rank: the LETs move by NCCL (required here, so that the host path cannot stand
    # in for it), and again through the host on the same GPUs.
    run_logged "$MPI_LOG" "test_dist cuda, 2 ranks on 2 GPUs, NCCL" "${MPIRUN[@]}" \
      -x BHVIZ_TEST_DIST_NCCL=1 -np 2 "$BIN_DIR/test_dist" --gtest_color=no
    run_logged "$MPI_LOG" "test_dist cuda, 2 ranks on 2 GPUs, LETs through the host" \
      "${MPIRUN[@]}" -x BHVIZ_TEST_DIST_LETS=host -np 2 "$BIN_DIR/test_dist" --gtest_color=no
  fi
  note "  test_dist totals" "$(gtest_counts "$MPI_LOG" | tail -c 200)"
  if [ "${BHVIZ_SKIP_SANITIZE:-0}" != 1 ] && [ -x "$SAN" ]; then
    run_logged "$MPI_LOG" "compute-sanitizer memcheck test_dist x2" "${MPIRUN[@]}" -np 2 \
      "$SAN" --tool memcheck --error-exitcode 3 "$BIN_DIR/test_dist" --gtest_color=no \
      "--gtest_filter=Dist.TwoBackendsAtOnce:Dist.DiagnosticsAndNonFiniteCoverEveryRank:EveryMac/DistForces.*/bonsai"
    note "  mpi sanitizer summaries" "$(grep -E 'ERROR SUMMARY' "$MPI_LOG" | paste -sd ' ' -)"
  fi
  if [ -x "$BIN_DIR/bench_dist" ] && [ "${BHVIZ_SKIP_BENCH:-0}" != 1 ]; then
    for n in 1000000 4000000 16000000; do
      ks="1 2"
      [ "$n" = 1000000 ] && ks="1 2 3 4"  # the imbalance target: K = 2, 3, 4 at 1 M
      for k in $ks; do
        run_logged "$MPI_LOG" "bench_dist cuda N=$n K=$k" "${MPIRUN[@]}" -np "$k" \
          "$BIN_DIR/bench_dist" --backend cuda --scenario merger --n "$n" --steps 10 --warmup 3 \
          --csv "$OUT_DIR/bench_dist_${n}_${k}.csv"
      done
    done
  fi
  if [ -x "$BIN_DIR/bhviz" ]; then
    run_logged "$MPI_LOG" "bhviz headless merger 1M, 2 ranks (cuda)" "${MPIRUN[@]}" -np 2 \
      "$BIN_DIR/bhviz" --headless --backend cuda --scenario merger --n 1000000 --steps 4 \
      --stats "$OUT_DIR/bhviz-mpi-stats.json" --screenshot "$OUT_DIR/merger-1m-2ranks.png" \
      --overlay domains
  fi
fi

# 6. Scaling over the machine's GPUs (BHVIZ_SCALING=1, two or more GPUs): bench_dist with one
#    rank per GPU for each "scenario:N:K,K,..." of BHVIZ_SCALING_RUNS (K = 1: the CUDA backend
#    alone is timed in the same run), LETs as BHVIZ_SCALING_LETS says (auto or host).
if [ "${BHVIZ_SCALING:-0}" = 1 ] && [ "${BHVIZ_SKIP_MPI:-0}" != 1 ] && [ "${GPUS:-0}" -ge 2 ] &&
  command -v mpirun >/dev/null && [ -x "$BIN_DIR/bench_dist" ]; then
  MPI_LOG=${MPI_LOG:-$OUT_DIR/mpi.log}
  runs=${BHVIZ_SCALING_RUNS:-"merger:16000000:1,2 plummer:16000000:1,2 merger:32000000:2"}
  for spec in $runs; do
    IFS=: read -r scen n ks <<<"$spec"
    for k in ${ks//,/ }; do
      [ "$k" -le "$GPUS" ] || continue
      run_logged "$MPI_LOG" "scaling $scen N=$n K=$k lets=${BHVIZ_SCALING_LETS:-auto}" \
        mpirun --allow-run-as-root --oversubscribe -x OMP_NUM_THREADS=8 -x NCCL_NVLS_ENABLE=0 \
        -x LD_LIBRARY_PATH -np "$k" "$BIN_DIR/bench_dist" --backend cuda --scenario "$scen" \
        --n "$n" --steps 10 --warmup 3 --lets "${BHVIZ_SCALING_LETS:-auto}" \
        --csv "$OUT_DIR/scaling_${scen}_${n}_${k}_${BHVIZ_SCALING_LETS:-auto}.csv"
    done
  done
fi

[ -f "${BENCH_LOG:-/nonexistent}" ] && { echo; echo "--- bench"; grep -vE '^===' "$BENCH_LOG" | tail -40; }
[ -f "${MPI_LOG:-/nonexistent}" ] && { echo; echo "--- mpi"; grep -E '^(bench_dist|rank|  *[0-9]|step|the local|K = |view gather|=== scaling)' "$MPI_LOG" | tail -60; }
echo
echo "--- gpu-check summary ($GPU)"
printf '%s\n' "${SUMMARY[@]}"
[ $FAILED -eq 0 ] && echo "RESULT: all passed" || echo "RESULT: FAILURES"
exit $FAILED
