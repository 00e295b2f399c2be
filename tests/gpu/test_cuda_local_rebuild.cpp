// A tree rebuilt around the targets on the device (sim/cuda/local_rebuild.cu) against its CPU
// twins (cpu::coverTargets, cpu::rekeyCells, cpu::buildTree): from the same tree, keys and moved
// particles, the cover's census, the keys, every particle array, the carried values and the
// topology built from the keys are the same bits. Fresh random inputs (BHVIZ_TEST_SEED repeats
// a run): a cusp whose deepest bins lie near a clump's centre (a small cover), bins at random
// (a large one), every particle, none, at several shares, leaf sizes and both curves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "../scenes.h"
#include "../tree_compare.h"
#include "gpu_test_support.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/cuda/cuda_stages.h"
#include "sim/cuda/local_rebuild.h"
#include "sim/rng.h"

using namespace bhviz::sim;

namespace {

using bhviz::test::haveGpu;

std::uint64_t baseSeed() { return bhviz::test::testSeed("test_cuda_local_rebuild"); }

enum class Bins { Cusp, Random, None };

struct Case {
  std::size_t n;
  int nLeaf;
  Curve curve;
  Bins bins;
  bool all;      ///< every particle a target
  double share;  ///< the cover's
};

std::string describe(const Case& c) {
  const char* bins[] = {"cusp", "random", "none"};
  return "n" + std::to_string(c.n) + "_leaf" + std::to_string(c.nLeaf) +
         (c.curve == Curve::Hilbert ? "_hilbert_" : "_morton_") + bins[int(c.bins)] +
         (c.all ? "_all" : "") + "_share" + std::to_string(int(c.share * 100));
}

std::string nameOf(const ::testing::TestParamInfo<Case>& info) { return describe(info.param); }

void PrintTo(const Case& c, std::ostream* os) { *os << describe(c); }

class CudaLocalRebuild : public ::testing::TestWithParam<Case> {};

TEST_P(CudaLocalRebuild, IsItsCpuTwinBitForBit) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const Case tc = GetParam();
  const std::uint64_t seed = baseSeed() * 7919u + tc.n * 31u + std::uint64_t(tc.nLeaf) * 17u +
                             std::uint64_t(tc.bins) * 5u + std::uint64_t(tc.share * 100);
  Particles h = bhviz::test::clusteredParticles(tc.n, seed);
  // Bins: 4 is the deepest; tick 1 makes only bin 4 active, tick 0 every bin.
  constexpr int kDepth = 4;
  Rng rng(seed + 1);
  for (std::size_t i = 0; i < h.size(); ++i) {
    const Vec4 x = h.posMass[i];
    const double r = std::sqrt(double(x.x) * x.x + double(x.y - 1.0f) * (x.y - 1.0f) + x.z * x.z);
    switch (tc.bins) {
      case Bins::Cusp:  // the clump's centre (y = 1) in the deepest bin
        h.bin[i] = static_cast<std::uint8_t>(r < 0.03 ? kDepth : r < 0.1 ? 3 : rng.next() % 3);
        break;
      case Bins::Random:
        h.bin[i] = static_cast<std::uint8_t>(rng.next() % (kDepth + 1));
        break;
      case Bins::None:
        h.bin[i] = static_cast<std::uint8_t>(rng.next() % kDepth);
        break;
    }
  }
  const cuda::ActiveRule rule{1, kDepth, tc.all};
  const MacSetup mac{MacCode::Bonsai, 0.6f, 1e-3f};

  cuda::DeviceParticles d;
  cuda::BuildWorkspace ws;
  cuda::DeviceTree tree;
  cuda::CoverWorkspace cw;
  cuda::uploadParticles(h, d);
  cuda::launchBuild(d, tc.curve, tc.nLeaf, mac, ws, tree, nullptr);
  // Every particle moves by v·dt: many leave their cells, some the frame.
  cuda::launchDrift(d, 0.05f, nullptr);
  Particles moved;
  cuda::downloadParticles(d, moved);
  Tree old;
  cuda::downloadTree(tree, ws, old, false);
  std::vector<std::uint64_t> keys = cuda::downloadKeys(ws, tc.n);

  // The carried values: each slot's particle id, which must travel with the particle.
  cuda::DeviceBuffer<std::uint32_t> carried;
  carried.reserve(tc.n);
  cuda::copyToDevice(carried.data(), moved.id.data(), tc.n * sizeof(std::uint32_t));

  // The CPU twins on the same tree, keys and particles.
  std::vector<std::uint8_t> active(tc.n);
  std::size_t targets = 0;
  for (std::size_t i = 0; i < tc.n; ++i) {
    active[i] = cuda::isTarget(rule, moved.bin[i]) ? 1 : 0;
    targets += active[i];
  }
  const std::vector<std::uint32_t> cover = cpu::coverTargets(old, active, tc.share);
  std::uint32_t coveredParticles = 0;
  for (const std::uint32_t c : cover) coveredParticles += old.count[c];
  Particles expected = moved;
  cpu::rekeyCells(old, cover, tc.curve, expected, keys);

  const cuda::CoverCensus census =
      cuda::launchCoverAndRekey(d, tree, rule, tc.share, tc.curve, ws, cw, carried.data(), nullptr);
  EXPECT_EQ(census.cells, cover.size());
  EXPECT_EQ(census.particles, coveredParticles);
  // The smallest cell holding every target: its level is the prefix every covered key shares.
  if (targets > 0) {
    std::uint32_t c = 0;
    for (bool down = true; down;) {
      down = false;
      for (std::uint32_t j = 0; j < old.childCount[c]; ++j) {
        const std::uint32_t k = old.child[c] + j;
        std::size_t in = 0;
        for (std::uint32_t i = old.first[k]; i < old.first[k] + old.count[k]; ++i) in += active[i];
        if (in == targets) c = k, down = true;
      }
    }
    EXPECT_EQ(census.commonLevel, old.level[c]);
  } else {
    EXPECT_EQ(census.cells, 0u);
  }
  RecordProperty("targets", static_cast<int>(targets));
  RecordProperty("covered", static_cast<int>(coveredParticles));

  Particles got;
  cuda::downloadParticles(d, got);
  EXPECT_SAME_ARRAY(cuda::downloadKeys(ws, tc.n), keys);
  EXPECT_SAME_ARRAY(got.posMass, expected.posMass);
  EXPECT_SAME_ARRAY(got.vel, expected.vel);
  EXPECT_SAME_ARRAY(got.accPot, expected.accPot);
  EXPECT_SAME_ARRAY(got.id, expected.id);
  EXPECT_SAME_ARRAY(got.tag, expected.tag);
  EXPECT_SAME_ARRAY(got.bin, expected.bin);
  std::vector<std::uint32_t> carriedBack(tc.n);
  cuda::copyToHost(carriedBack.data(), carried.data(), tc.n * sizeof(std::uint32_t));
  EXPECT_SAME_ARRAY(carriedBack, expected.id);
  if (::testing::Test::HasFailure()) return;

  // The topology from those keys, on the device as on the CPU.
  cuda::launchTree(ws, tc.n, tc.nLeaf, tree, nullptr);
  Tree gpuTree;
  cuda::downloadTree(tree, ws, gpuTree, false);
  bhviz::test::expectSameTopology(gpuTree, cpu::buildTree(keys, old.frame, tc.nLeaf));
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const std::size_t n : {std::size_t(3000), std::size_t(200000)}) {
    for (const int nLeaf : {1, 16, 64}) {
      const Curve curve = nLeaf == 16 ? Curve::Morton : Curve::Hilbert;
      out.push_back({n, nLeaf, curve, Bins::Cusp, false, 0.25});
      out.push_back({n, nLeaf, curve, Bins::Random, false, 0.25});
    }
    out.push_back({n, 16, Curve::Hilbert, Bins::Cusp, false, 0.5});
    out.push_back({n, 16, Curve::Hilbert, Bins::Cusp, false, 1.0});
    out.push_back({n, 16, Curve::Morton, Bins::Cusp, false, 0.05});
    out.push_back({n, 16, Curve::Hilbert, Bins::Random, true, 0.25});
    out.push_back({n, 16, Curve::Hilbert, Bins::None, false, 0.25});
  }
  out.push_back({1000000, 16, Curve::Hilbert, Bins::Cusp, false, 0.25});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Covers, CudaLocalRebuild, ::testing::ValuesIn(cases()), nameOf);

}  // namespace
