// The device's sort and tree build against the CPU's: the build of every level at once at its
// edges (no particle, one, N_leaf and one more, a pile of equal keys, N_leaf from 1 to its
// largest, chunks of several tiles a block) with its parents, when its buffers overflow, and the
// digits it reads (those sorted: the last deepest level and one more, in whole radix passes;
// built again after a sort on every bit when a cell of the last of them splits), at the edges of
// that rule; and a build's sort on the digits its tree reads (sort.cu), the runs it leaves put in
// order afterwards, which must give the full stable sort's order bit for bit, and the sort on
// every bit a tree deeper than its sorted digits needs. Every test skips when there is no CUDA
// device.
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
#include "gpu_test_support.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/cuda/cuda_stages.h"
#include "sim/ic/initial_conditions.h"
#include "sim/rng.h"
#include "sort_support.h"

using namespace bhviz::sim;

namespace {

using bhviz::test::haveGpu;

std::uint64_t baseSeed() { return bhviz::test::testSeed("test_cuda_sort_and_tree"); }

using bhviz::test::clusteredParticles;
using bhviz::test::expectSameTopology;
using bhviz::test::expectTheCpuSort;
using bhviz::test::sortAndTreeOnDevice;
using bhviz::test::sortOnDevice;

/// Every cell's children name it as their parent, and the root has none (the moments climb
/// through the parents; cpu::buildTree keeps none to compare).
void expectParentsOf(const cuda::DeviceTree& tree, const Tree& h) {
  std::vector<std::uint32_t> parent(tree.cells);
  cuda::copyToHost(parent.data(), tree.parent.data(), parent.size() * sizeof(std::uint32_t));
  ASSERT_FALSE(parent.empty());
  EXPECT_EQ(parent[0], cuda::kNoParent);
  std::size_t wrong = 0;
  for (std::size_t c = 0; c < h.cellCount(); ++c) {
    for (unsigned k = 0; k < h.childCount[c]; ++k) wrong += parent[h.child[c] + k] != c;
  }
  EXPECT_EQ(wrong, 0u) << "children whose parent is another cell";
}

/// The tree of `p` built one of the two ways a simulation builds it (a sort on every bit then
/// launchTree, or a build's sort on the tree's digits: launchSortAndTree), checked against the
/// CPU's tree of the sorted keys, parents too; returns the CPU's tree.
Tree expectTheCpuTree(const Particles& p, int nLeaf, bool fullSort, cuda::DeviceParticles& d,
                      cuda::BuildWorkspace& ws, cuda::DeviceTree& tree) {
  const std::vector<std::uint64_t> keys =
      fullSort ? sortOnDevice(p, d, ws) : sortAndTreeOnDevice(p, nLeaf, d, ws, tree);
  if (fullSort) cuda::launchTree(ws, p.size(), nLeaf, tree, nullptr);
  Tree gpuTree;
  cuda::downloadTree(tree, ws, gpuTree, false);
  Tree cpuTree = cpu::buildTree(keys, gpuTree.frame, nLeaf);
  expectSameTopology(gpuTree, cpuTree);
  expectParentsOf(tree, gpuTree);
  return cpuTree;
}

/// The digits a build reads after a tree of `lastDepth` levels (0: none yet): every digit after a
/// sort on every bit and for a first build, else the last tree's deepest level and
/// kSortLevelsAhead more, in whole radix passes.
int digitsRead(bool fullSort, int lastDepth) {
  if (fullSort || lastDepth == 0) return kMaxLevel;
  return cuda::sortedLevelsFor(std::min(lastDepth - 1 + cuda::kSortLevelsAhead, kMaxLevel));
}

}  // namespace

// The build makes every level at once (tree_build.cu): at its edges, against the CPU's tree. No
// particle and one (the root alone), N_leaf particles (a root leaf) and one more; a pile of equal
// keys past N_leaf (a leaf at the last level); N_leaf 1, 3 (a window of four), 1000 and the
// largest, 1024 (a window as long as a tile); and 1.3 M particles, whose blocks take several tiles
// each (their running slots per level).
TEST(CudaSortAndTree, TreeBuildOfEveryLevelAtOnceAtItsEdges) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  struct Case {
    const char* what;
    Particles p;
    int nLeaf;
  };
  const auto firstOf = [](const Particles& p, std::size_t n) {
    Particles q = p;
    q.resize(n);
    return q;
  };
  const Particles clustered = clusteredParticles(60000, baseSeed() + 41);
  Particles pile = firstOf(clustered, 300);
  for (std::size_t i = 0; i < pile.size(); ++i) pile.posMass[i] = {0.25f, 0.5f, 0.75f, 1.0f};
  pile.posMass[0] = {0.0f, 0.0f, 0.0f, 1.0f};  // the frame around the pile
  pile.posMass[1] = {1.0f, 1.0f, 1.0f, 1.0f};
  std::vector<Case> cases;
  cases.push_back({"one particle", firstOf(clustered, 1), 16});
  cases.push_back({"N_leaf particles", firstOf(clustered, 16), 16});
  cases.push_back({"N_leaf and one", firstOf(clustered, 17), 16});
  cases.push_back({"a pile of equal keys", pile, 8});
  cases.push_back({"N_leaf 1", clustered, 1});
  cases.push_back({"N_leaf 3", clustered, 3});
  cases.push_back({"N_leaf 1000", clustered, 1000});
  cases.push_back({"N_leaf 1024", clustered, kMaxLeafSize});
  cases.push_back({"1.3 M, tiles a block", makePlummer(1300000, baseSeed() + 43), 16});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    cuda::DeviceParticles d;
    cuda::BuildWorkspace ws;
    cuda::DeviceTree tree;
    const Tree cpuTree = expectTheCpuTree(c.p, c.nLeaf, true, d, ws, tree);
    if (c.p.size() == 300) {
      EXPECT_EQ(cpuTree.depth(), kMaxLevel + 1) << "the pile's leaf is at the last level";
    }
  }
  // No particle: the empty root (no bounding box either: the frame downloadTree reads is set).
  cuda::BuildWorkspace ws;
  cuda::DeviceTree tree;
  const KeyFrame frame{};
  ws.frame.reserve(1);
  cuda::copyToDevice(ws.frame.data(), &frame, sizeof frame);
  cuda::launchTree(ws, 0, 16, tree, nullptr);
  Tree gpuTree;
  cuda::downloadTree(tree, ws, gpuTree, false);
  expectSameTopology(gpuTree, cpu::buildTree({}, gpuTree.frame, 16));
  expectParentsOf(tree, gpuTree);
}

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
  const Tree cpuTree = expectTheCpuTree(h, nLeaf, true, d, ws, tree);
  EXPECT_GT(cpuTree.cellCount(), 1000u);
}

// A build's sort covers the last tree's deepest level and kSortLevelsAhead more
// (sortLevelsForTree, rounded up to whole passes: sortedLevelsFor), and the tree reads those
// digits; a tree that splits a cell of the last of them is built again after a sort on every bit.
// Shallow, the same shallow particles again, far deeper (the second attempt), and shallow twice
// more: every build gives the CPU's tree. After a full sort the build reads every digit.
TEST(CudaSortAndTree, TreeBuildReadsTheSortedDigitsAndStartsAgainWhenDeeper) {
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
                          {&shallow, 16, "shallow again after deep"}};
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
      const Tree cpuTree = expectTheCpuTree(*b.p, b.nLeaf, fullSort, d, ws, tree);
      const int read = digitsRead(fullSort, lastDepth);
      std::printf("  %s: depth %d, %d digits read\n", b.what, cpuTree.depth(), ws.treeLevels);
      if (read == kMaxLevel || cpuTree.depth() - 1 > read) {  // its deepest level
        EXPECT_EQ(ws.treeLevels, kMaxLevel) << "a full sort, a first build, or one deeper";
      } else {
        EXPECT_EQ(ws.treeLevels, read) << "after a tree of depth " << lastDepth;
      }
      lastDepth = cpuTree.depth();
    }
  }
}

// The same rule at its edges, on trees of a chosen depth (three particles: two spanning the frame,
// one a short distance from the first, at N_leaf 1; depth() counts the levels, the root's too).
// After a tree of depth d (deepest level d - 1) the sort covers E = sortedLevelsFor(d - 1 +
// kSortLevelsAhead) digits; a tree whose deepest level is E splits no cell of level E and needs no
// second attempt; one a level deeper does.
// After a full sort every digit is read.
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
  const int e = digitsRead(false, d);
  ASSERT_LT(e + 1, kMaxLevel) << "room for a tree one level deeper than the sorted digits";
  // The depths built one after another: first (every digit); d again (e read); levels 0 to e
  // (exactly the digits read); d; levels 0 to e + 1 (a level deeper: again); d.
  const int depths[] = {d, d, e + 1, d, e + 2, d};
  for (const bool fullSort : {true, false}) {
    SCOPED_TRACE(fullSort ? "full sort" : "sort on the tree's digits");
    cuda::DeviceParticles dp;
    cuda::BuildWorkspace ws;
    cuda::DeviceTree tree;
    int lastDepth = 0;
    bool edgeKept = false, edgeRetried = false;
    for (const int depth : depths) {
      const Particles p = threeParticles(separationFor(depth));
      SCOPED_TRACE("depth " + std::to_string(depth) + " after " + std::to_string(lastDepth));
      const Tree cpuTree = expectTheCpuTree(p, 1, fullSort, dp, ws, tree);
      ASSERT_EQ(cpuTree.depth(), depth);
      const int read = digitsRead(fullSort, lastDepth);
      const int deepest = depth - 1;
      const bool retry = read < kMaxLevel && deepest > read;
      edgeKept |= read < kMaxLevel && deepest == read;
      edgeRetried |= retry && deepest == read + 1;
      EXPECT_EQ(ws.treeLevels, retry ? kMaxLevel : read);
      lastDepth = depth;
    }
    if (!fullSort) {
      EXPECT_TRUE(edgeKept) << "a tree of exactly the digits read";
      EXPECT_TRUE(edgeRetried) << "a tree one level deeper";
    }
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
  const int levels = cuda::sortLevelsForTree(tree, nLeaf);
  ASSERT_LE(levels, 14) << "a tree shallow enough that each clump shares every sorted digit";

  cuda::uploadParticles(h, d);
  cuda::launchBoundingBox(d, ws, nullptr);
  cuda::launchKeys(d, Curve::Hilbert, ws, nullptr);
  cuda::launchSortKeys(ws, h.size(), levels, nullptr);
  EXPECT_EQ(ws.sortedLevels, cuda::sortedLevelsFor(levels)) << "whole radix passes";
  EXPECT_GE(ws.sortedLevels, levels);
  EXPECT_LT(ws.sortedLevels, kMaxLevel) << "not every bit";
  const std::vector<std::uint64_t> partial = cuda::downloadKeys(ws, h.size());
  EXPECT_FALSE(std::is_sorted(partial.begin(), partial.end()))
      << "the clumps' lower digits are left for the runs' pass";
  cuda::launchTree(ws, h.size(), nLeaf, tree, nullptr);
  EXPECT_EQ(ws.treeLevels, cuda::sortedLevelsFor(levels)) << "no second attempt";
  cuda::launchOrderRuns(ws, h.size(), nullptr);
  cuda::launchGather(d, ws, nullptr);

  const KeyFrame frame = keyFrameFor(cpu::boundingBox(h.posMass));
  const std::vector<std::uint64_t> sortedKeys =
      expectTheCpuSort(h, cpu::computeKeys(h.posMass, frame, Curve::Hilbert), d, ws);
  Tree gpuTree;
  cuda::downloadTree(tree, ws, gpuTree, false);
  expectSameTopology(gpuTree, cpu::buildTree(sortedKeys, frame, nLeaf));
  expectParentsOf(tree, gpuTree);
}

// A tree deeper than the digits its build sorted: after a shallow tree, the same particles and a
// pile of 40 (more than N_leaf) a hundred-thousandth of the box across, put in the input in
// descending key order. The short sort leaves the pile as it came, the pile's cell of the last
// sorted level splits, and launchTree must sort every bit before building again: without that the
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
  const int levels = cuda::sortLevelsForTree(tree, nLeaf);
  ASSERT_LT(levels, 12) << "a shallow tree, sorted on few digits";
  const Tree cpuTree = expectTheCpuTree(withPile, nLeaf, false, d, ws, tree);
  EXPECT_EQ(ws.treeLevels, kMaxLevel) << "built again with every level";
  EXPECT_GT(cpuTree.depth(), levels + 2) << "the pile is deeper than the sorted digits";
}
