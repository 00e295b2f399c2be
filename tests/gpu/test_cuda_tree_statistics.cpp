// The CUDA backend's tree statistics (sim/cuda/tree_statistics.cu) against the CPU twin's on the
// same particles, and against the device's own per-particle work counted on the host.
//
// The trees are identical (keys, sort and topology are exact on both), so everything about the
// tree — cells and leaves per level, occupancy, groups, targets — must match exactly. The
// interactions need not: a MAC test that lands within rounding of its threshold may go the other
// way on the GPU (its moments are summed in another order), which changes a few groups' lists by
// a few entries. So the interactions are held to the walk tests' bound (the total within 1e-3),
// and each histogram bin may differ only by the few targets near a power of two (≤ 1 % of the
// targets, and ≤ 4 beyond that). Exactness of the kernels themselves is checked separately, on
// the device's own work.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "scenes.h"
#include "sim/cpu/cpu_backend.h"
#include "sim/cuda/cuda_backend.h"
#include "sim/cuda/device_buffer.h"
#include "sim/ic/initial_conditions.h"
#include "sim/tree_statistics.h"

using namespace bhviz::sim;

namespace {

#define REQUIRE_GPU() \
  if (cuda::deviceCount() == 0) GTEST_SKIP() << "no CUDA device"

std::uint64_t seed() { return bhviz::test::testSeed("test_cuda_tree_statistics"); }

struct Case {
  const char* scene;
  std::size_t n;
  int leafSize;
  bool blockStep;  ///< a substep where bins 2 and 3 of 0..3 are due, else every particle
};

Particles sceneOf(const Case& c, std::uint64_t s) {
  const std::string name = c.scene;
  Particles p = name == "clustered" ? bhviz::test::clusteredParticles(c.n, s)
                : name == "merger"  ? makeMerger(c.n, s)
                                    : makePlummer(c.n, s);
  for (std::size_t i = 0; i < p.size(); ++i) p.bin[i] = std::uint8_t(p.id[i] % 4);
  return p;
}

Clock clockOf(const Case& c, const SimParams& p) {
  return c.blockStep ? Clock{0.0, 2, 3, p.dtMax} : Clock{0.0, 0, 0, p.dtMax};
}

ForceTargets targetsOf(const Case& c) {
  return c.blockStep ? ForceTargets::Active : ForceTargets::All;
}

void expectSameTree(const TreeStatistics& g, const TreeStatistics& c) {
  EXPECT_EQ(g.particles, c.particles);
  EXPECT_EQ(g.cells, c.cells);
  EXPECT_EQ(g.leaves, c.leaves);
  EXPECT_EQ(g.groups, c.groups);
  EXPECT_EQ(g.levels, c.levels);
  EXPECT_EQ(g.leafSize, c.leafSize);
  EXPECT_EQ(g.cellsPerLevel, c.cellsPerLevel);
  EXPECT_EQ(g.leavesPerLevel, c.leavesPerLevel);
  EXPECT_EQ(g.leavesByOccupancy, c.leavesByOccupancy);
  EXPECT_EQ(g.overfullParticles, c.overfullParticles);
  EXPECT_EQ(g.targets, c.targets);
}

void expectCloseInteractions(const TreeStatistics& g, const TreeStatistics& c) {
  const double total = double(c.interactions);
  EXPECT_LE(std::fabs(double(g.interactions) - total), 1e-3 * total)
      << "interactions: gpu " << g.interactions << " cpu " << c.interactions;
  const double allowed = std::max(4.0, 0.01 * double(c.targets));
  for (int b = 0; b < kInteractionBins; ++b) {
    EXPECT_LE(std::fabs(double(g.interactionsLog2[b]) - double(c.interactionsLog2[b])), allowed)
        << "targets with 2^" << b << ".. interactions: gpu " << g.interactionsLog2[b] << " cpu "
        << c.interactionsLog2[b];
  }
  EXPECT_NEAR(double(g.minInteractions), double(c.minInteractions),
              std::max(4.0, 0.02 * c.minInteractions));
  EXPECT_NEAR(double(g.maxInteractions), double(c.maxInteractions),
              std::max(4.0, 0.02 * c.maxInteractions));
}

class CudaTreeStatistics : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(CudaTreeStatistics, EqualToTheCpuTwins) {
  REQUIRE_GPU();
  const Case& c = GetParam();
  SimParams p;
  p.nLeaf = c.leafSize;
  const Particles state = sceneOf(c, seed() + c.n + c.leafSize);
  auto cpu = makeCpuBackend();
  auto gpu = cuda::makeCudaBackend(c.n);
  for (Backend* b : {cpu.get(), gpu.get()}) {
    b->upload(state);
    b->computeForces(clockOf(c, p), p, targetsOf(c), false);
  }
  const TreeStatistics sc = cpu->treeStatistics(), sg = gpu->treeStatistics();
  ASSERT_GT(sc.cells, 0u);
  expectSameTree(sg, sc);
  expectCloseInteractions(sg, sc);
  // And the GPU's own counters: the statistics' total is the walk's.
  const InteractionCounts k = gpu->profile().interactions;
  EXPECT_EQ(sg.interactions, k.cell + k.particle);
  EXPECT_EQ(sg.targets, k.targets);
}

// The kernels exactly: the histogram, sum and extremes of the device's own per-particle work
// (downloaded through ForceParts), counted on the host for the same targets.
TEST_P(CudaTreeStatistics, KernelsCountTheDevicesOwnWork) {
  REQUIRE_GPU();
  const Case& c = GetParam();
  SimParams p;
  p.nLeaf = c.leafSize;
  const Clock clock = clockOf(c, p);
  auto gpu = cuda::makeCudaBackend(c.n);
  gpu->upload(sceneOf(c, seed() + 3 * c.n + c.leafSize));
  gpu->forceParts()->build(clock, p, targetsOf(c), false);  // computeForces in its parts
  gpu->forceParts()->walkLocal();
  const std::vector<std::uint32_t> work = gpu->forceParts()->work();
  Particles now;
  gpu->download(now);  // the order of the work
  ASSERT_EQ(work.size(), now.size());
  std::array<std::uint64_t, kInteractionBins> bins{};
  std::uint64_t targets = 0, total = 0;
  std::uint32_t lo = 0, hi = 0;
  for (std::size_t i = 0; i < now.size(); ++i) {
    if (c.blockStep && now.bin[i] < 2) continue;  // not due at tick 2 of depth 3
    const std::uint32_t w = work[i];
    EXPECT_GT(w, 0u) << "a target with no interaction";
    lo = targets == 0 ? w : std::min(lo, w);
    hi = std::max(hi, w);
    ++targets;
    total += w;
    int b = 0;
    while (b < 31 && (std::uint64_t(2) << b) <= w) ++b;
    ++bins[b];
  }
  const TreeStatistics s = gpu->treeStatistics();
  EXPECT_EQ(s.targets, targets);
  EXPECT_EQ(s.interactions, total);
  EXPECT_EQ(s.minInteractions, lo);
  EXPECT_EQ(s.maxInteractions, hi);
  EXPECT_EQ(s.interactionsLog2, bins);
  // Asked twice, the same answer (the record is zeroed each time).
  const TreeStatistics again = gpu->treeStatistics();
  EXPECT_EQ(again.interactionsLog2, s.interactionsLog2);
  EXPECT_EQ(again.leavesByOccupancy, s.leavesByOccupancy);
  EXPECT_EQ(again.interactions, s.interactions);
}

INSTANTIATE_TEST_SUITE_P(
    Scenes, CudaTreeStatistics,
    ::testing::Values(Case{"plummer", 20000, 16, false}, Case{"plummer", 20000, 16, true},
                      Case{"plummer", 300000, 1, false}, Case{"plummer", 100000, 1024, false},
                      Case{"merger", 50000, 8, false}, Case{"merger", 50000, 32, true},
                      Case{"clustered", 30000, 16, false}, Case{"clustered", 30000, 4, true}),
    [](const ::testing::TestParamInfo<Case>& info) {
      return std::string(info.param.scene) + "_n" + std::to_string(info.param.n) + "_leaf" +
             std::to_string(info.param.leafSize) + (info.param.blockStep ? "_block" : "_all");
    });

// No tree before the first evaluation, nor after an upload (the old tree was of other particles).
TEST(CudaTreeStatisticsEmpty, WithoutATree) {
  REQUIRE_GPU();
  auto gpu = cuda::makeCudaBackend(1000);
  EXPECT_EQ(gpu->treeStatistics().cells, 0u);
  SimParams p;
  gpu->upload(makePlummer(1000, seed()));
  gpu->computeForces(Clock{0.0, 0, 0, p.dtMax}, p, ForceTargets::All, false);
  EXPECT_EQ(gpu->treeStatistics().targets, 1000u);
  gpu->upload(makePlummer(2000, seed() + 1));
  const TreeStatistics s = gpu->treeStatistics();
  EXPECT_EQ(s.cells, 0u);
  EXPECT_EQ(s.targets, 0u);
}
