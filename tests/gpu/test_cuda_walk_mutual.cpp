// The mutual near field on the device (walk_mutual.h) against the plain CUDA walk on the same tree
// and groups: the same forces to fp32 rounding, exactly the same counts and work, the particles
// that are not targets untouched, the potential kept where it is not computed, and through the
// backend the same steps as the plain near field.
//
// The inputs are fresh each run: the seed is printed, and BHVIZ_TEST_SEED=<n> repeats a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../force_difference.h"
#include "../scenes.h"
#include "gpu_test_support.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/cuda/cuda_backend.h"
#include "sim/cuda/walk_mutual.h"
#include "sim/simulation.h"
#include "walk_scene.h"

using namespace bhviz::sim;
using namespace bhviz::test::walk;

namespace {

using bhviz::test::haveGpu;

std::uint64_t testSeed() { return bhviz::test::testSeed("test_cuda_walk_mutual"); }

struct Case {
  std::string name;
  Particles particles;
  int nLeaf = 16, nGroup = 64;
  MacSetup mac{MacCode::Bonsai, 0.5f, 0.0f};
};

std::vector<Case> cases(std::uint64_t seed) {
  return {
      {"plummer 16/64 bonsai", makePlummer(30000, seed), 16, 64},
      {"plummer 1/1 bh", makePlummer(3000, seed + 1), 1, 1, {MacCode::BarnesHut, 0.6f, 0.0f}},
      {"plummer 8/16 bh", makePlummer(8000, seed + 2), 8, 16, {MacCode::BarnesHut, 0.75f, 0.0f}},
      {"plummer 64/64 multipole",
       makePlummer(20000, seed + 3),
       64,
       64,
       {MacCode::Multipole, 0.5f, 1e-4f}},
      {"merger 32/128 acceleration",
       makeMerger(20000, seed + 4, MergerParams{}),
       32,
       128,
       {MacCode::Acceleration, 0.5f, 2e-3f}},
      {"twins 16/32 bonsai", bhviz::test::plummerWithTwins(8000, seed + 5), 16, 32},
      // Leaves larger than groups (the group tuner's N_group / 16 does this): a leaf's sources
      // belong to several groups, and a 32-source chunk is cut into several runs.
      {"plummer 64/16 bonsai", makePlummer(20000, seed + 6), 64, 16},
      {"merger 16/4 bh",
       makeMerger(8000, seed + 7, MergerParams{}),
       16,
       4,
       {MacCode::BarnesHut, 0.6f, 0.0f}},
  };
}

constexpr float kSentinel = -12345.0f;  // what a particle that is no target holds before

/// Both walks of one case on one device scene: the same tree, groups and starting state.
struct Walks {
  Particles plain, mutual;
  InteractionCounts plainCounts, mutualCounts;
  std::vector<std::uint32_t> plainWork, mutualWork;
  cuda::NearPairs pairs;
  std::vector<std::uint8_t> target;  // per particle (key order)
};

Walks walkBoth(const Case& c, bool sparse, bool potential, std::uint64_t seed,
               std::uint32_t capacity = 0) {
  Scene scene;
  Particles h = c.particles;
  setBins(h, sparse, seed);
  scene.build(h, c.nLeaf, c.mac);
  // Old accelerations for the acceleration MAC: a plain walk with θ first.
  const cuda::WalkSettings theta{MacSetup{MacCode::BarnesHut, 0.5f, 0.0f}, true, 0.05f};
  scene.forces(kAll, c.nGroup, theta);
  Particles start;
  cuda::downloadParticles(scene.d, start);
  // Every target's force is written; the others keep the sentinel (or, without the potential,
  // each target its old potential).
  for (auto& a : start.accPot) {
    a = potential ? Vec4{kSentinel, kSentinel, kSentinel, kSentinel}
                  : Vec4{kSentinel, kSentinel, kSentinel, a.w};
  }
  const cuda::ActiveRule rule = sparse ? kSparse : kAll;
  cuda::WalkSettings s{c.mac, true, 0.05f};
  s.potential = potential;
  Walks w;
  cuda::DeviceBuffer<std::uint32_t> work;
  work.reserve(start.size());
  const auto run = [&](bool mutual, Particles& out, InteractionCounts& counts,
                       std::vector<std::uint32_t>& outWork) {
    cuda::uploadParticles(start, scene.d);
    cuda::fillBytes(work.data(), 0, start.size() * sizeof(std::uint32_t));
    cuda::launchGroups(scene.tree, scene.d, scene.ws, rule, c.nGroup, scene.groups, scene.device,
                       nullptr);
    if (mutual) {
      cuda::MutualWorkspace ws;
      if (capacity > 0) {  // room for fewer keys than the lists have: the walk runs again
        ws.capacity = capacity;
        for (auto& k : ws.keys) k.reserve(capacity);
      }
      cuda::launchWalkMutual(scene.tree, scene.groups, scene.d, s, work.data(),
                             scene.counters.data(), scene.device, ws, nullptr);
      w.pairs = cuda::downloadNearPairs(ws);
    } else {
      cuda::WalkOutput o;
      o.work = work.data();
      cuda::launchWalk(cuda::WalkSources{scene.tree.walkCell.data(), scene.tree.box.data(),
                                         scene.tree.cells, scene.d.posMass.data()},
                       scene.groups, scene.d, s, o, scene.counters.data(), scene.device, nullptr);
    }
    counts = cuda::downloadCounters(scene.counters.data());
    cuda::downloadParticles(scene.d, out);
    outWork.resize(start.size());
    cuda::copyToHost(outWork.data(), work.data(), start.size() * sizeof(std::uint32_t));
  };
  run(false, w.plain, w.plainCounts, w.plainWork);
  run(true, w.mutual, w.mutualCounts, w.mutualWork);
  w.target.resize(start.size());
  for (std::size_t i = 0; i < start.size(); ++i) {
    w.target[i] = cuda::isTarget(rule, start.bin[i]) ? 1 : 0;
  }
  return w;
}

/// Forces of the targets to rounding, the rest untouched (and the same particles in both).
void expectSameForces(const Walks& w, bool potential) {
  ASSERT_EQ(w.plain.size(), w.mutual.size());
  std::size_t untouched = 0;
  for (std::size_t i = 0; i < w.plain.size(); ++i) {
    ASSERT_EQ(w.plain.id[i], w.mutual.id[i]);
    if (!potential) {
      ASSERT_EQ(w.plain.accPot[i].w, w.mutual.accPot[i].w) << i;
    }
    if (w.target[i]) continue;
    ASSERT_EQ(w.mutual.accPot[i].x, kSentinel) << i;
    untouched += 1;
  }
  EXPECT_EQ(untouched, std::count(w.target.begin(), w.target.end(), std::uint8_t{0}));
  if (potential) {
    bhviz::test::expectRoundingOnly(
        bhviz::test::forceDifference(w.plain.accPot, w.mutual.accPot, w.target));
  } else {  // the accelerations alone: the potential compared is the kept one, equal
    std::vector<Vec4> a = w.plain.accPot, b = w.mutual.accPot;
    for (std::size_t i = 0; i < a.size(); ++i) a[i].w = b[i].w = 1.0f;
    bhviz::test::expectRoundingOnly(bhviz::test::forceDifference(a, b, w.target));
  }
}

void expectSameCounts(const Walks& w) {
  EXPECT_EQ(w.mutualCounts.cell, w.plainCounts.cell);
  EXPECT_EQ(w.mutualCounts.particle, w.plainCounts.particle);
  EXPECT_EQ(w.mutualCounts.targets, w.plainCounts.targets);
  EXPECT_EQ(w.mutualCounts.groups, w.plainCounts.groups);
  EXPECT_EQ(w.mutualWork, w.plainWork);
}

}  // namespace

TEST(CudaMutualWalk, SameForcesCountsAndWorkAsPlain) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const std::uint64_t seed = testSeed();
  for (const Case& c : cases(seed)) {
    SCOPED_TRACE(c.name + ", BHVIZ_TEST_SEED=" + std::to_string(seed));
    const Walks w = walkBoth(c, false, true, seed);
    expectSameForces(w, true);
    expectSameCounts(w);
    // Every particle a target, so every row is one: each pair evaluated both ways stands for
    // two of plain's evaluations, each one-way pair for one (plain counts each particle with
    // itself too, and so does a group's near field within itself, one way).
    EXPECT_EQ(2 * w.pairs.onceBoth + (w.pairs.pairs - w.pairs.onceBoth), w.plainCounts.particle);
    EXPECT_GT(w.pairs.entries, 0u);
  }
}

TEST(CudaMutualWalk, OnlyTargetsGetForcesAndTheyAreThePlainOnes) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const std::uint64_t seed = testSeed() + 100;
  for (const Case& c : cases(seed)) {
    SCOPED_TRACE(c.name + " sparse, BHVIZ_TEST_SEED=" + std::to_string(seed - 100));
    const Walks w = walkBoth(c, true, true, seed);
    expectSameForces(w, true);
    expectSameCounts(w);
  }
}

TEST(CudaMutualWalk, WithoutThePotentialEachTargetKeepsItsOwn) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const std::uint64_t seed = testSeed() + 200;
  const std::vector<Case> all = cases(seed);
  for (const Case& c : {all[0], all[4]}) {
    SCOPED_TRACE(c.name + ", BHVIZ_TEST_SEED=" + std::to_string(seed - 200));
    for (bool sparse : {false, true}) {
      const Walks w = walkBoth(c, sparse, false, seed);
      expectSameForces(w, false);
      expectSameCounts(w);
    }
  }
}

TEST(CudaMutualWalk, ManyNearPairsAreEvaluatedOnce) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const Case c{"plummer 16/64", makePlummer(100000, testSeed() + 300), 16, 64};
  const Walks w = walkBoth(c, false, true, testSeed());
  // The CPU's twin measured 38 % of plain's pair work mutual at 20 k (tests/test_walk_mutual.cpp);
  // the device's groups take their pairs within themselves one way, which the CPU takes once.
  EXPECT_GT(2 * w.pairs.onceBoth, w.plainCounts.particle * 3 / 10);
  EXPECT_LT(w.pairs.pairs, w.plainCounts.particle * 9 / 10);
}

TEST(CudaMutualWalk, ListsLongerThanTheWorkspaceAreWalkedAgainIntoMore) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const std::uint64_t seed = testSeed() + 400;
  const Case c{"plummer 16/64", makePlummer(20000, seed), 16, 64};
  for (bool sparse : {false, true}) {
    SCOPED_TRACE(std::string(sparse ? "sparse" : "all") +
                 ", BHVIZ_TEST_SEED=" + std::to_string(seed - 400));
    const Walks w = walkBoth(c, sparse, true, seed, 1000);
    expectSameForces(w, true);
    expectSameCounts(w);  // the work counted once, by the first walk
    EXPECT_GT(w.pairs.entries, 1000u);
  }
}

// Against the CPU's mutual walk (the oracle) on the same tree and groups: the targets' forces to
// the walks' own agreement (the MAC decides a few cells differently on host and device: as
// test_cuda_walk's twins, p99 within 1e-4), the pair work the same to 1e-3.
TEST(CudaMutualWalk, MatchesTheCpuMutualWalk) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const std::uint64_t seed = testSeed() + 600;
  const std::vector<Case> all = cases(seed);
  for (const Case& c : {all[0], all[2], all[6], all[7]}) {
    for (bool sparse : {false, true}) {
      SCOPED_TRACE(c.name + (sparse ? " sparse" : "") +
                   ", BHVIZ_TEST_SEED=" + std::to_string(seed - 600));
      Scene scene;
      Particles h = c.particles;
      setBins(h, sparse, seed);
      scene.build(h, c.nLeaf, c.mac);
      Tree tree;
      Particles sorted;
      cuda::downloadTree(scene.tree, scene.ws, tree, true);
      cuda::downloadParticles(scene.d, sorted);
      const cuda::ActiveRule rule = sparse ? kSparse : kAll;
      std::vector<std::uint8_t> active(sorted.size());
      for (std::size_t i = 0; i < active.size(); ++i) {
        active[i] = cuda::isTarget(rule, sorted.bin[i]) ? 1 : 0;
      }
      // The GPU's.
      cuda::launchGroups(scene.tree, scene.d, scene.ws, rule, c.nGroup, scene.groups, scene.device,
                         nullptr);
      cuda::MutualWorkspace ws;
      const cuda::WalkSettings s{c.mac, true, 0.05f};
      cuda::launchWalkMutual(scene.tree, scene.groups, scene.d, s, nullptr, scene.counters.data(),
                             scene.device, ws, nullptr);
      const InteractionCounts gpuCounts = cuda::downloadCounters(scene.counters.data());
      Particles gpu;
      cuda::downloadParticles(scene.d, gpu);
      // The CPU's.
      const Groups groups = cpu::buildGroups(tree, sorted.posMass, sorted.accPot, active, c.nGroup);
      cpu::WalkSettings cs{c.mac, true, 0.05f, P2pMode::Mutual};
      std::vector<Vec4> cpuAcc = sorted.accPot;
      const InteractionCounts cpuCounts =
          cpu::walkGroupsMutual(tree, groups, sorted.posMass, active, cs, cpuAcc, nullptr);
      std::vector<double> err;
      for (std::size_t i = 0; i < active.size(); ++i) {
        if (!active[i]) continue;
        const Vec4 g = gpu.accPot[i], q = cpuAcc[i];
        const double d =
            std::sqrt(double(g.x - q.x) * (g.x - q.x) + double(g.y - q.y) * (g.y - q.y) +
                      double(g.z - q.z) * (g.z - q.z));
        err.push_back(d / std::sqrt(double(q.x) * q.x + double(q.y) * q.y + double(q.z) * q.z));
      }
      ASSERT_FALSE(err.empty());
      std::sort(err.begin(), err.end());
      EXPECT_LE(err[err.size() * 99 / 100], 1e-4) << "99th percentile of |a_gpu − a_cpu| / |a_cpu|";
      EXPECT_EQ(gpuCounts.targets, cpuCounts.targets);
      EXPECT_LE(std::fabs(double(gpuCounts.particle) - double(cpuCounts.particle)),
                1e-3 * double(cpuCounts.particle));
    }
  }
}

// Through the backend: the mutual near field's run follows the plain one's step by step, block
// steps included (substeps whose groups hold particles in mid-step: sources, not targets).
TEST(CudaMutualWalk, TheBackendsStepsFollowThePlainOnes) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  EXPECT_TRUE(cuda::makeCudaBackend(1000)->traits().limits.mutualP2p);
  const Particles ic = makePlummer(20000, testSeed() + 500);
  SimParams plain;
  plain.softening = 0.05f;
  plain.stepping = TimeStepping::Block;
  plain.dtMax = 1.0f / 8.0f;
  plain.maxBinDepth = 5;
  plain.eta = 0.05f;
  plain.rebuildInterval = 1;  // no tuner: each run's choices would follow its own timings
  SimParams mutual = plain;
  mutual.p2p = P2pMode::Mutual;
  Simulation a(cuda::makeCudaBackend(ic.size()), ic, plain);
  Simulation b(cuda::makeCudaBackend(ic.size()), ic, mutual);
  a.advance(4);
  b.advance(4);
  EXPECT_EQ(a.substeps(), b.substeps());
  EXPECT_GT(a.substeps(), 8u);  // block steps: substeps with some particles in mid-step
  const Particles pa = sortedById(a.particles()), pb = sortedById(b.particles());
  ASSERT_EQ(pa.size(), pb.size());
  // Four steps of rounding differences in the forces: positions within 1e-5 of their scale.
  std::vector<double> d(pa.size());
  for (std::size_t i = 0; i < pa.size(); ++i) {
    ASSERT_EQ(pa.id[i], pb.id[i]);
    const Vec4 x = pa.posMass[i], y = pb.posMass[i];
    d[i] = std::sqrt(double(x.x - y.x) * (x.x - y.x) + double(x.y - y.y) * (x.y - y.y) +
                     double(x.z - y.z) * (x.z - y.z)) /
           std::max(1e-3, std::sqrt(double(x.x) * x.x + double(x.y) * x.y + double(x.z) * x.z));
  }
  std::sort(d.begin(), d.end());
  EXPECT_GT(d.back(), 0.0) << "the same bits: the mutual near field did not run";
  EXPECT_LT(d[d.size() * 99 / 100], 1e-5);
  EXPECT_LT(d.back(), 1e-3);
  EXPECT_NEAR(a.diagnostics().total(), b.diagnostics().total(),
              1e-5 * std::fabs(a.diagnostics().total()));
}
