// The golden determinism test: fixed scenes (tests/determinism.h) run on the CPU backend with
// 1, 2 and 4 OpenMP threads (and the machine's default count, if another) must end in the same
// bits for every thread count, and those bits must hash to the committed value.
//
// The golden hashes hold for the project's build: g++ 12 on x86-64 without -march (SSE2: no
// fused multiply–adds whatever -ffp-contract says). Checked: -O3, -O2 and -O0, ASan + UBSan,
// -march=x86-64-v3 with -ffp-contract=off, 16 threads, glibc 2.36 and 2.39 (the initial
// conditions call libm: log, exp, sin, cos, erf, atanh, pow). They change with -march=x86-64-v3
// (or native) alone, where g++'s default -ffp-contract=fast fuses the kicks and force sums, or
// -ffast-math. clang++ 14 -O3 gives the merger's hashes but other Plummer velocities: sim/ic's
// isotropicSphere draws a velocity's speed and direction in one unsequenced expression, which
// g++ and clang evaluate in opposite orders.
//
// They may change only with a deliberate, reviewed change to the physics (the per-element math
// of sim/common, the tree, the MACs, the groups, the walk's summation order, the integrator, the
// bin rules) or to the initial conditions (sim/ic, sim/rng.h). To regenerate: build, run
//   build/tests/test_determinism
// which prints every scene's hashes per thread count, check that every thread count agrees, and
// copy the values into kGolden below, saying in the commit why they changed.
//
// When it fails, the message says which of two things happened:
//   - the thread counts disagree: the CPU backend's result depends on the schedule (a parallel
//     reduction, a sort or an order that follows which thread came first): a determinism bug,
//     whatever the golden value;
//   - every thread count agrees on another value: the physics, the initial conditions or the
//     floating-point code changed (see above); the initial-conditions hash says whether the
//     change is already in the initial state.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "determinism.h"
#include "sim/backend.h"

using namespace bhviz;
using namespace bhviz::sim;
using test::DeterminismScene;
using test::hex;

namespace {

struct Golden {
  std::uint64_t initial;  ///< stateHash of the initial conditions
  std::uint64_t final;    ///< stateHash after the scene's steps
};

// g++ 12.2 -O3 (Release), x86-64, Debian 12 (glibc 2.36); see the top of the file. Changed
// 2026-11-27: the drift carries its rounding (sim/common/timestep.h); 2026-11-28: the Plummer
// scene expands its far cells about their groups of 10 or more (local_expansion.h).
constexpr Golden kGoldenBlockStepMerger{0x3c9222e658f381ddull, 0x387c81a2539520c5ull};
constexpr Golden kGoldenSharedStepPlummer{0xcffea8ebf9f57eb0ull, 0xbaaa14258a431af3ull};
constexpr Golden kGoldenRefittedMerger{0x3c9222e658f381ddull, 0x7c8ae6943de005a5ull};

/// Sets the OpenMP thread count for its lifetime (dynamic adjustment off, so the count asked for
/// is the count used) and restores the caller's settings.
class ThreadCount {
 public:
  explicit ThreadCount(int threads)
      : m_threads(omp_get_max_threads()), m_dynamic(omp_get_dynamic()) {
    omp_set_dynamic(0);
    omp_set_num_threads(threads);
  }
  ~ThreadCount() {
    omp_set_num_threads(m_threads);
    omp_set_dynamic(m_dynamic);
  }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int m_threads, m_dynamic;
};

/// Threads a parallel region gets now (OMP_THREAD_LIMIT may hold it below what was asked).
int threadsInUse() {
  int n = 0;
#pragma omp parallel
  {
#pragma omp single
    n = omp_get_num_threads();
  }
  return n;
}

std::vector<int> threadCounts() {
  std::vector<int> counts{1, 2, 4};
  const int machine = omp_get_max_threads();
  if (std::find(counts.begin(), counts.end(), machine) == counts.end()) counts.push_back(machine);
  return counts;
}

struct ThreadRun {
  int threads = 0;
  test::SceneRun run;
  double seconds = 0.0;
};

std::string report(const DeterminismScene& scene, const std::vector<ThreadRun>& runs,
                   const Golden& golden) {
  std::ostringstream s;
  s << scene.name << " (" << runs.front().run.final.size() << " particles, " << scene.steps
    << " steps of dtMax, " << runs.front().run.substeps
    << " substeps, t = " << runs.front().run.time
    << "):\n  threads  initial conditions  final state\n";
  for (const ThreadRun& r : runs) {
    char line[128];
    std::snprintf(line, sizeof line, "  %7d  %s  %s  (%.2f s)\n", r.threads,
                  hex(r.run.initialHash).c_str(), hex(r.run.finalHash).c_str(), r.seconds);
    s << line;
  }
  s << "  golden   " << hex(golden.initial) << "  " << hex(golden.final) << "\n";
  return s.str();
}

/// Where two final states (both in id order) first differ, and by how much at most in position.
std::string firstDifference(const Particles& a, const Particles& b) {
  std::ostringstream s;
  double worst = 0.0;
  std::size_t first = a.size();
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (!test::sameParticle(a, b, i) && first == a.size()) first = i;
    worst = std::max({worst, std::fabs(double(a.posMass[i].x) - b.posMass[i].x),
                      std::fabs(double(a.posMass[i].y) - b.posMass[i].y),
                      std::fabs(double(a.posMass[i].z) - b.posMass[i].z)});
  }
  if (first == a.size()) return "the same particles; only the substep count differs";
  s << "first differing particle id " << a.id[first] << " (bins " << int(a.bin[first]) << " and "
    << int(b.bin[first]) << "), largest position difference " << worst;
  return s.str();
}

/// Runs the scene for every thread count and checks the hashes; `one` receives the first run.
void checkScene(const DeterminismScene& scene, const Golden& golden,
                test::SceneRun* one = nullptr) {
  std::vector<ThreadRun> runs;
  for (int threads : threadCounts()) {
    const ThreadCount use(threads);
    ASSERT_EQ(threadsInUse(), threads)
        << "OpenMP would not run " << threads << " threads (OMP_THREAD_LIMIT?)";
    const auto start = std::chrono::steady_clock::now();
    ThreadRun r{threads, test::runScene(scene, makeCpuBackend()), 0.0};
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    runs.push_back(std::move(r));
  }
  const std::string table = report(scene, runs, golden);
  const test::SceneRun& first = runs.front().run;
  bool agree = true;
  for (const ThreadRun& r : runs) {
    agree = agree && r.run.initialHash == first.initialHash && r.run.finalHash == first.finalHash &&
            r.run.substeps == first.substeps;
  }
  if (!agree) {
    std::string where;
    for (const ThreadRun& r : runs) {
      if (r.run.finalHash != first.finalHash || r.run.substeps != first.substeps) {
        where += "  " + std::to_string(r.threads) +
                 " threads against 1: " + firstDifference(r.run.final, first.final) + "\n";
      }
    }
    FAIL()
        << table << where
        << "THE THREAD COUNTS DISAGREE: the CPU backend's result depends on the OpenMP schedule (a "
           "parallel reduction, sort or order that follows the threads). This is a determinism "
           "bug, not a physics change: do not update the golden hashes.";
  }
  if (first.initialHash != golden.initial) {
    ADD_FAILURE()
        << table
        << "Every thread count agrees, on new initial conditions: sim/ic, sim/rng.h or the "
           "platform's libm changed them (and so the final state). If that was deliberate "
           "and reviewed, update kGolden (see the top of tests/test_determinism.cpp).";
  } else if (first.finalHash != golden.final) {
    ADD_FAILURE() << table
                  << "Every thread count agrees, on a new final state from the same initial "
                     "conditions: the physics, the integrator or the build's floating-point code "
                     "(-march with FMA, -ffast-math) changed. If that was deliberate and reviewed, "
                     "update kGolden (see the top of tests/test_determinism.cpp).";
  } else {
    std::printf("%s", table.c_str());  // on failure the message holds the table
  }
  if (one != nullptr) *one = first;
}

}  // namespace

TEST(Determinism, BlockStepMergerIsTheSameForEveryThreadCount) {
  const DeterminismScene scene = test::blockStepMerger();
  test::SceneRun run;
  checkScene(scene, kGoldenBlockStepMerger, &run);
  if (HasFatalFailure()) return;
  // The scene must keep exercising the block steps: several bins, more substeps than steps.
  EXPECT_GE(test::occupiedBins(run.final), 3) << "the scene must use several bins";
  EXPECT_GT(run.substeps, std::uint64_t(4 * scene.steps));
}

TEST(Determinism, SharedStepPlummerIsTheSameForEveryThreadCount) {
  const DeterminismScene scene = test::sharedStepPlummer();
  checkScene(scene, kGoldenSharedStepPlummer);
}

TEST(Determinism, RefittedMergerIsTheSameForEveryThreadCount) {
  const DeterminismScene scene = test::refittedMerger();
  test::SceneRun run;
  checkScene(scene, kGoldenRefittedMerger, &run);
  if (HasFatalFailure()) return;
  // Refitted trees change the forces at the level of the force error: another final state.
  EXPECT_NE(run.finalHash, kGoldenBlockStepMerger.final);
}
