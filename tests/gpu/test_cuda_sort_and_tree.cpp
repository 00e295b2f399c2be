// The device's sort and tree build against the CPU's: the level-by-level build when its buffers
// overflow, when it keeps or repeats its searches, and the levels it launches (the last depth and
// two more, built again with every level when deeper), at the edges of that rule; and a build's
// sort on the digits its tree reads (sort.cu), the runs it leaves put in order afterwards, which
// must give the full stable sort's order bit for bit, and the sort on every bit a tree deeper than
// its sorted digits needs. Every test skips when there is no CUDA device.
//
// The inputs are fresh each run: the seed is printed, and BHVIZ_TEST_SEED=<n> repeats a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "../scenes.h"
#include "../tree_compare.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/cuda/cuda_stages.h"
#include "sim/ic/initial_conditions.h"
#include "sim/rng.h"
#include "sort_support.h"

using namespace bhviz::sim;

namespace {

bool haveGpu() {
  static const bool have = cuda::deviceCount() > 0;
  return have;
}

std::uint64_t baseSeed() { return bhviz::test::testSeed("test_cuda_sort_and_tree"); }

using bhviz::test::clusteredParticles;
using bhviz::test::expectSameTopology;
using bhviz::test::expectTheCpuSort;
using bhviz::test::sortAndTreeOnDevice;
using bhviz::test::sortOnDevice;

}  // namespace

// Buffers far too small for the tree: the build must notice the overflow and start again with
// larger ones, and still produce the CPU's tree.
TEST(CudaSortAndTree, TreeBuildRetriesWhenItsBuffersOverflow) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const std::size_t n = 20000;
  const int nLeaf = 2;
  const Particles h = clusteredParticles(n, baseSeed() + 17);
  cuda::DeviceParticles d;
  cuda::BuildWorkspace ws;
  cuda::DeviceTree tree;
  tree.firstGuess = 3;
  const std::vector<std::uint64_t> keys = sortOnDevice(h, d, ws);
  cuda::launchTree(ws, n, nLeaf, tree, nullptr);
  Tree gpuTree;
  cuda::downloadTree(tree, ws, gpuTree, false);
  const Tree cpuTree = cpu::buildTree(keys, gpuTree.frame, nLeaf);
  EXPECT_GT(cpuTree.cellCount(), 1000u);
  expectSameTopology(gpuTree, cpuTree);
}

// Each level's count kernel keeps its binary searches for the write kernel, for as many cells as
// the largest level of the last build had (BuildWorkspace::childStarts); cells past those are
// searched again. A first build keeps n/16 (and a margin), fewer than this tree's largest level
// (N_leaf 2), so both paths run; the second keeps them all. Both give the CPU's tree.
TEST(CudaSortAndTree, TreeBuildKeepsItsSearchesOrSearchesAgainTheSameTree) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const std::size_t n = 60000;
  const int nLeaf = 2;
  const Particles h = clusteredParticles(n, baseSeed() + 19);
  cuda::DeviceParticles d;
  cuda::BuildWorkspace ws;
  cuda::DeviceTree tree;
  const std::vector<std::uint64_t> keys = sortOnDevice(h, d, ws);
  // What launchTree keeps for a first build (n / 16 cells, a quarter and 1024 more), poisoned: a
  // search read back that was never stored would show.
  ws.childStarts.reserve(8 * (n / 16 + n / 64 + 1024));
  ws.childStarts.poison();
  for (int build = 0; build < 2; ++build) {
    SCOPED_TRACE(build == 0 ? "first build" : "second build");
    cuda::launchTree(ws, n, nLeaf, tree, nullptr);
    Tree gpuTree;
    cuda::downloadTree(tree, ws, gpuTree, false);
    const Tree cpuTree = cpu::buildTree(keys, gpuTree.frame, nLeaf);
    std::size_t largest = 0;
    for (std::size_t L = 1; L < cpuTree.levelBegin.size(); ++L) {
      largest = std::max<std::size_t>(largest, cpuTree.levelBegin[L] - cpuTree.levelBegin[L - 1]);
    }
    const std::size_t kept = ws.childStarts.capacity() / 8;
    if (build == 0) {
      EXPECT_GT(largest, kept) << "the first build must search some cells again";
    } else {
      EXPECT_GE(kept, largest) << "the second build keeps every search";
    }
    expectSameTopology(gpuTree, cpuTree);
  }
}

// A build launches the levels of the last tree's depth and two more (tree_build.cu,
// treeLevelsToLaunch); a tree deeper than that is built again with every level. Shallow, the same
// shallow particles again (the tuned levels), far deeper (the second attempt), and shallow
// twice more: every build gives the CPU's tree.
TEST(CudaSortAndTree, TreeBuildLaunchesTheLastDepthsLevelsAndStartsAgainWhenDeeper) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const std::size_t n = 20000;
  const Particles shallow = makePlummer(n, baseSeed() + 23);
  const Particles deep = clusteredParticles(n, baseSeed() + 29);  // duplicates: every level
  struct Build {
    const Particles* p;
    int nLeaf;
    const char* what;
  };
  const Build builds[] = {{&shallow, 16, "first, shallow"},
                          {&shallow, 16, "shallow again"},
                          {&deep, 1, "deeper"},
                          {&shallow, 16, "shallow after deep"},
                          {&shallow, 16, "shallow, tuned again"}};
  // The sort on every bit then the tree, and a build's sort on the digits the tree reads, which
  // the tree deeper than its levels sorts again (launchTree).
  for (const bool fullSort : {true, false}) {
    SCOPED_TRACE(fullSort ? "full sort" : "sort on the tree's digits");
    cuda::DeviceParticles d;
    cuda::BuildWorkspace ws;
    cuda::DeviceTree tree;
    int lastDepth = 0;
    for (const Build& b : builds) {
      SCOPED_TRACE(b.what);
      std::vector<std::uint64_t> keys;
      if (fullSort) {
        keys = sortOnDevice(*b.p, d, ws);
        cuda::launchTree(ws, n, b.nLeaf, tree, nullptr);
      } else {
        keys = sortAndTreeOnDevice(*b.p, b.nLeaf, d, ws, tree);
      }
      Tree gpuTree;
      cuda::downloadTree(tree, ws, gpuTree, false);
      const Tree cpuTree = cpu::buildTree(keys, gpuTree.frame, b.nLeaf);
      expectSameTopology(gpuTree, cpuTree);
      const int tuned = std::min(lastDepth + 2, kMaxLevel);
      std::printf("  %s: depth %d, %d levels launched\n", b.what, cpuTree.depth(), ws.treeLevels);
      if (lastDepth == 0 || cpuTree.depth() > tuned) {
        EXPECT_EQ(ws.treeLevels, kMaxLevel) << "a first build, or one deeper than the tuned levels";
      } else {
        EXPECT_EQ(ws.treeLevels, tuned) << "the last depth " << lastDepth << " and two";
      }
      lastDepth = cpuTree.depth();
    }
  }
}

// The same rule at its edges, on trees of a chosen depth (three particles: two spanning the frame,
// one a short distance from the first, at N_leaf 1). The levels launched: every level first;
// then the tuned count, kept while it lies within [last depth + 2, last depth + 4] (a tree three
// levels shallower keeps it, so the count is not the last depth + 2), else the last depth + 2.
// A tree of exactly the levels launched needs no second attempt; one level more (its last
// launched level holds a cell) is built again with every level.
TEST(CudaSortAndTree, TreeBuildLevelsAtTheEdgesOfTheirRule) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  // Separations 2^(-k/4) of the third particle from the first.
  constexpr int kSeparations = 72;
  const auto threeParticles = [](int k) {
    Particles p;
    p.resize(3);
    p.posMass[0] = {0.0f, 0.0f, 0.0f, 1.0f};
    p.posMass[1] = {1.0f, 1.0f, 1.0f, 1.0f};
    p.posMass[2] = {float(std::pow(2.0, -0.25 * k)), 0.0f, 0.0f, 1.0f};
    for (std::uint32_t i = 0; i < 3; ++i) p.id[i] = i;
    return p;
  };
  // The depth of each separation, from the CPU's tree.
  std::vector<int> depthOf(kSeparations, 0);
  for (int k = 0; k < kSeparations; ++k) {
    const Particles p = threeParticles(k);
    const KeyFrame f = keyFrameFor(cpu::boundingBox(p.posMass));
    std::vector<std::uint64_t> keys = cpu::computeKeys(p.posMass, f, Curve::Hilbert);
    std::sort(keys.begin(), keys.end());
    depthOf[k] = cpu::buildTree(keys, f, 1).depth();
  }
  const auto separationFor = [&](int depth) {
    for (int k = 0; k < kSeparations; ++k) {
      if (depthOf[k] == depth) return k;
    }
    ADD_FAILURE() << "no tree of depth " << depth;
    return 0;
  };
  const int d = depthOf[8];
  // The depths built one after another: first (every level); the same (d + 2 launched); d + 2
  // (exactly the levels launched); d + 5 (d + 4 launched, one level short: again); d + 5 (d + 7);
  // d + 4 (d + 7, the last depth + 3); d + 4 (d + 7 kept, not d + 6).
  const int depths[] = {d, d, d + 2, d + 5, d + 5, d + 4, d + 4};
  // Both sorts, as in the test above: a tree of exactly the levels launched is built from the
  // short sort, one a level deeper again after a sort on every bit.
  for (const bool fullSort : {true, false}) {
    SCOPED_TRACE(fullSort ? "full sort" : "sort on the tree's digits");
    cuda::DeviceParticles dp;
    cuda::BuildWorkspace ws;
    cuda::DeviceTree tree;
    int lastDepth = 0, tunedLevels = 0;
    bool edgeKept = false, edgeRetried = false, bandKept = false;
    for (const int depth : depths) {
      const Particles p = threeParticles(separationFor(depth));
      SCOPED_TRACE("depth " + std::to_string(depth) + " after " + std::to_string(lastDepth));
      std::vector<std::uint64_t> keys;
      if (fullSort) {
        keys = sortOnDevice(p, dp, ws);
        cuda::launchTree(ws, p.size(), 1, tree, nullptr);
      } else {
        keys = sortAndTreeOnDevice(p, 1, dp, ws, tree);
      }
      Tree gpuTree;
      cuda::downloadTree(tree, ws, gpuTree, false);
      const Tree cpuTree = cpu::buildTree(keys, gpuTree.frame, 1);
      expectSameTopology(gpuTree, cpuTree);
      ASSERT_EQ(cpuTree.depth(), depth);
      int first = kMaxLevel;
      if (lastDepth > 0) {
        const bool inBand = tunedLevels >= lastDepth + 2 && tunedLevels <= lastDepth + 4;
        first = inBand ? tunedLevels : std::min(lastDepth + 2, kMaxLevel);
        bandKept |= inBand && first != lastDepth + 2;
        tunedLevels = first;
      }
      const bool retry = first < kMaxLevel && depth > first;
      edgeKept |= first < kMaxLevel && depth == first;
      edgeRetried |= retry && depth == first + 1;
      EXPECT_EQ(ws.treeLevels, retry ? kMaxLevel : first);
      lastDepth = depth;
    }
    EXPECT_TRUE(edgeKept) << "a tree of exactly the levels launched";
    EXPECT_TRUE(edgeRetried) << "a tree one level deeper";
    EXPECT_TRUE(bandKept) << "a tuned count kept within the band";
  }
}

// A build sorts the keys on the digits its tree reads and puts each run of keys with the same
// sorted digits in order afterwards (sort.cu). Clumps of eight particles a millionth of the box
// across (one of them eight copies of one point), in a shallow tree of N_leaf 16: a clump shares
// every sorted digit, so the shorter sort leaves it in input order, and only the runs' pass can
// make the full sort's order (equal keys by index). The parts run one by one, so that the test
// sees the sort leave that work.
TEST(CudaSortAndTree, SortOnTheTreesDigitsThenItsRunsIsTheFullSort) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  constexpr std::size_t kClumps = 3000, kPerClump = 8;
  constexpr int nLeaf = 16;
  Rng rng(baseSeed() + 31);
  Particles h;
  h.resize(kClumps * kPerClump);
  for (std::size_t c = 0; c < kClumps; ++c) {
    const Vec3 centre{float(rng.uniform()), float(rng.uniform()), float(rng.uniform())};
    for (std::size_t k = 0; k < kPerClump; ++k) {
      const float spread = c == 0 ? 0.0f : 1e-6f;
      const std::size_t i = c * kPerClump + k;
      h.posMass[i] = {centre.x + spread * float(rng.uniform()),
                      centre.y + spread * float(rng.uniform()),
                      centre.z + spread * float(rng.uniform()), 1.0f};
    }
  }
  // Input order shuffled, so that no clump arrives in key order.
  std::vector<std::uint32_t> shuffle(h.size());
  for (std::uint32_t i = 0; i < shuffle.size(); ++i) shuffle[i] = i;
  for (std::size_t i = shuffle.size() - 1; i > 0; --i) {
    std::swap(shuffle[i], shuffle[std::size_t(rng.uniform() * double(i + 1)) % (i + 1)]);
  }
  cpu::reorder(h, shuffle);
  for (std::uint32_t i = 0; i < h.size(); ++i) h.id[i] = i;

  cuda::DeviceParticles d;
  cuda::BuildWorkspace ws;
  cuda::DeviceTree tree;
  (void)sortAndTreeOnDevice(h, nLeaf, d, ws, tree);  // a first build sorts every digit
  const int levels = cuda::treeLevelsToLaunch(ws, tree);
  ASSERT_LE(levels, 14) << "a tree shallow enough that each clump shares every sorted digit";

  cuda::uploadParticles(h, d);
  cuda::launchBoundingBox(d, ws, nullptr);
  cuda::launchKeys(d, Curve::Hilbert, ws, nullptr);
  cuda::launchSortKeys(ws, h.size(), levels, nullptr);
  EXPECT_GE(ws.sortedLevels, levels) << "at least the levels launched (whole radix passes)";
  EXPECT_LT(ws.sortedLevels, kMaxLevel) << "not every bit";
  const std::vector<std::uint64_t> partial = cuda::downloadKeys(ws, h.size());
  EXPECT_FALSE(std::is_sorted(partial.begin(), partial.end()))
      << "the clumps' lower digits are left for the runs' pass";
  cuda::launchTree(ws, h.size(), nLeaf, tree, nullptr);
  EXPECT_EQ(ws.treeLevels, levels) << "no second attempt";
  cuda::launchOrderRuns(ws, h.size(), nullptr);
  cuda::launchGather(d, ws, nullptr);

  const KeyFrame frame = keyFrameFor(cpu::boundingBox(h.posMass));
  const std::vector<std::uint64_t> sortedKeys =
      expectTheCpuSort(h, cpu::computeKeys(h.posMass, frame, Curve::Hilbert), d, ws);
  Tree gpuTree;
  cuda::downloadTree(tree, ws, gpuTree, false);
  expectSameTopology(gpuTree, cpu::buildTree(sortedKeys, frame, nLeaf));
}

// A tree deeper than the digits its build sorted: after a shallow tree, the same particles and a
// pile of 40 (more than N_leaf) a hundred-thousandth of the box across, put in the input in
// descending key order. The short sort leaves the pile as it came, the tree is deeper than the
// levels launched, and launchTree must sort every bit before building again: without that the
// pile's cells would split on unsorted digits.
TEST(CudaSortAndTree, ATreeDeeperThanItsSortIsSortedAgain) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  constexpr int nLeaf = 16;
  constexpr std::size_t kSpread = 3000, kPile = 40;
  Rng rng(baseSeed() + 37);
  Particles h;
  h.resize(kSpread + kPile);
  for (std::size_t i = 0; i < h.size(); ++i) {
    const float spread = i < kSpread ? 1.0f : 1e-5f;
    const Vec3 at = i < kSpread ? Vec3{0.0f, 0.0f, 0.0f} : Vec3{0.3f, 0.6f, 0.2f};
    h.posMass[i] = {at.x + spread * float(rng.uniform()), at.y + spread * float(rng.uniform()),
                    at.z + spread * float(rng.uniform()), 1.0f};
    h.id[i] = static_cast<std::uint32_t>(i);
  }
  // The pile in descending key order (the frame is the whole set's, as the device computes it).
  const KeyFrame frame = keyFrameFor(cpu::boundingBox(h.posMass));
  const std::vector<std::uint64_t> keys = cpu::computeKeys(h.posMass, frame, Curve::Hilbert);
  std::vector<std::uint32_t> order(h.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin() + kSpread, order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return keys[a] > keys[b]; });
  ASSERT_NE(keys[order[kSpread]], keys[order.back()]) << "the pile's keys differ";
  Particles withPile = h;
  cpu::reorder(withPile, order);
  Particles spread = h;
  spread.resize(kSpread);

  cuda::DeviceParticles d;
  cuda::BuildWorkspace ws;
  cuda::DeviceTree tree;
  (void)sortAndTreeOnDevice(spread, nLeaf, d, ws, tree);  // a first build sorts every digit
  (void)sortAndTreeOnDevice(spread, nLeaf, d, ws, tree);  // the tuned levels
  const int levels = cuda::sortLevelsForTree(ws, tree, nLeaf);
  ASSERT_LT(levels, 12) << "a shallow tree, sorted on few digits";
  const std::vector<std::uint64_t> sortedKeys = sortAndTreeOnDevice(withPile, nLeaf, d, ws, tree);
  EXPECT_EQ(ws.treeLevels, kMaxLevel) << "built again with every level";
  Tree gpuTree;
  cuda::downloadTree(tree, ws, gpuTree, false);
  const Tree cpuTree = cpu::buildTree(sortedKeys, gpuTree.frame, nLeaf);
  EXPECT_GT(cpuTree.depth(), levels + 2) << "the pile is deeper than the sorted digits";
  expectSameTopology(gpuTree, cpuTree);
}
