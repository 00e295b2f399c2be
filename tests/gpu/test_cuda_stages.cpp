// Each CUDA tree-construction stage against its CPU twin, on fresh random clustered points
// (with exact duplicates, which drive cells down to the deepest level): bounding box, keys,
// sort order and gathered particles, and tree topology must be identical; moments agree within
// fp32 tolerances. Output buffers are poisoned (0xFF) before the checked run, so an entry the
// device never wrote cannot pass. Every test skips when there is no CUDA device.
//
// The inputs are fresh each run: the seed is printed, and BHVIZ_TEST_SEED=<n> repeats a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <random>
#include <sstream>
#include <string>

#include "../scenes.h"
#include "../tree_compare.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/cuda/cuda_stages.h"
#include "sim/ic/initial_conditions.h"
#include "sim/rng.h"

using namespace bhviz::sim;

namespace {

bool haveGpu() {
  static const bool have = cuda::deviceCount() > 0;
  return have;
}

std::uint64_t baseSeed() { return bhviz::test::testSeed("test_cuda_stages"); }

using bhviz::test::clusteredParticles;

using bhviz::test::expectSameTopology;

bool sameBits(const Box& a, const Box& b) { return std::memcmp(&a, &b, sizeof(Box)) == 0; }

/// Uploads `h` and runs the stages before the tree (box, keys, sort) on the device; returns the
/// sorted keys, which the CPU's tree is built from.
std::vector<std::uint64_t> sortOnDevice(const Particles& h, cuda::DeviceParticles& d,
                                        cuda::BuildWorkspace& ws) {
  cuda::uploadParticles(h, d);
  cuda::launchBoundingBox(d, ws, nullptr);
  cuda::launchKeys(d, Curve::Hilbert, ws, nullptr);
  cuda::launchSort(d, ws, nullptr);
  return cuda::downloadKeys(ws, h.size());
}

/// After a sort of `h` on the device (`keys`: the CPU's keys of h, in input order): the stable
/// permutation, the sorted keys and every gathered particle array must be the CPU's, bit for bit.
/// Returns the sorted keys, which the CPU's tree is built from.
std::vector<std::uint64_t> expectTheCpuSort(const Particles& h,
                                            const std::vector<std::uint64_t>& keys,
                                            const cuda::DeviceParticles& d,
                                            const cuda::BuildWorkspace& ws) {
  const std::vector<std::uint32_t> order = cpu::sortOrder(keys);
  EXPECT_SAME_ARRAY(cuda::downloadOrder(ws, h.size()), order);
  std::vector<std::uint64_t> sortedKeys(h.size());
  for (std::size_t k = 0; k < h.size(); ++k) sortedKeys[k] = keys[order[k]];
  EXPECT_SAME_ARRAY(cuda::downloadKeys(ws, h.size()), sortedKeys);
  Particles sorted = h, gpuSorted;
  cpu::reorder(sorted, order);
  cuda::downloadParticles(d, gpuSorted);
  EXPECT_SAME_ARRAY(gpuSorted.posMass, sorted.posMass);
  EXPECT_SAME_ARRAY(gpuSorted.vel, sorted.vel);
  EXPECT_SAME_ARRAY(gpuSorted.accPot, sorted.accPot);
  EXPECT_SAME_ARRAY(gpuSorted.id, sorted.id);
  EXPECT_SAME_ARRAY(gpuSorted.tag, sorted.tag);
  EXPECT_SAME_ARRAY(gpuSorted.bin, sorted.bin);
  return sortedKeys;
}

/// The sort and the tree of a build as launchBuild makes them (launchSortAndTree: the keys sorted
/// on the digits the tree's levels read, the runs of equal sorted digits put in order afterwards),
/// on `h` uploaded again: the permutation, the sorted keys and every gathered array must be the
/// CPU's full stable sort's, bit for bit. Returns the CPU's sorted keys, which its tree is built
/// from.
std::vector<std::uint64_t> sortAndTreeOnDevice(const Particles& h, int nLeaf,
                                               cuda::DeviceParticles& d, cuda::BuildWorkspace& ws,
                                               cuda::DeviceTree& tree) {
  cuda::uploadParticles(h, d);
  cuda::launchBoundingBox(d, ws, nullptr);
  cuda::launchKeys(d, Curve::Hilbert, ws, nullptr);
  cuda::launchSortAndTree(d, ws, nLeaf, tree, nullptr);
  EXPECT_EQ(ws.sortedLevels, kMaxLevel) << "the runs' order completes the sort";
  const KeyFrame frame = keyFrameFor(cpu::boundingBox(h.posMass));
  return expectTheCpuSort(h, cpu::computeKeys(h.posMass, frame, Curve::Hilbert), d, ws);
}

/// Collects violations of a per-cell tolerance and reports the count and the first one.
class Violations {
 public:
  explicit Violations(std::string what) : m_what(std::move(what)) {}
  void check(bool ok, std::uint32_t cell, double gpu, double cpu, double tol) {
    if (ok) return;
    if (m_count++ == 0) {
      std::ostringstream s;
      s.precision(9);
      s << "cell " << cell << ": gpu " << gpu << " cpu " << cpu << " tolerance " << tol;
      m_first = s.str();
    }
  }
  ~Violations() { EXPECT_EQ(m_count, 0u) << m_what << " out of tolerance; first: " << m_first; }

 private:
  std::string m_what;
  std::size_t m_count = 0;
  std::string m_first;
};

struct StageCase {
  std::size_t n;
  int nLeaf;
  Curve curve;
  MacCode mac;
  bool plummer = false;  ///< a Plummer sphere instead of the clustered points
};

void PrintTo(const StageCase& c, std::ostream* os) {
  *os << (c.plummer ? "plummer " : "clustered ") << "n=" << c.n << " nLeaf=" << c.nLeaf
      << (c.curve == Curve::Hilbert ? " hilbert" : " morton") << " mac=" << static_cast<int>(c.mac);
}

std::string caseName(const ::testing::TestParamInfo<StageCase>& info) {
  static const char* macs[] = {"bh", "bonsai", "multipole", "acceleration"};
  const StageCase& c = info.param;
  return std::string(c.plummer ? "plummer_" : "") + "n" + std::to_string(c.n) + "_leaf" +
         std::to_string(c.nLeaf) + "_" + (c.curve == Curve::Hilbert ? "hilbert" : "morton") + "_" +
         macs[static_cast<int>(c.mac)];
}

std::vector<StageCase> allCases() {
  std::vector<StageCase> cases;
  int k = 0;
  const auto mac = [&k] { return static_cast<MacCode>(k++ % 4); };
  for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(1000), std::size_t(100000)}) {
    for (int nLeaf : {1, 16, 64}) {
      for (Curve curve : {Curve::Hilbert, Curve::Morton}) cases.push_back({n, nLeaf, curve, mac()});
    }
  }
  cases.push_back({1000000, 16, Curve::Hilbert, MacCode::Bonsai});
  cases.push_back({1000000, 1, Curve::Morton, MacCode::Multipole});
  cases.push_back({1000000, 64, Curve::Hilbert, MacCode::Acceleration});
  cases.push_back({200000, 16, Curve::Hilbert, MacCode::Bonsai, true});
  cases.push_back({200000, 8, Curve::Morton, MacCode::Multipole, true});
  return cases;
}

void poisonAll(cuda::BuildWorkspace& ws, cuda::DeviceTree& tree) {
  ws.box.poison();
  ws.frame.poison();
  for (int k = 0; k < 2; ++k) {
    ws.keys[k].poison();
    ws.order[k].poison();
  }
  ws.scratch.poison();
  ws.levelOffsets.poison();
  ws.levelTable.poison();
  tree.poison();
}

/// The uncertainty of a stored fp32 coordinate of magnitude |x|, a few units in the last place:
/// no fp32 centre of mass can be closer to the true one, whatever the cell size.
double ulpSlack(Vec4 c) {
  const double m = std::max({std::fabs(c.x), std::fabs(c.y), std::fabs(c.z)});
  return 16.0 * m * 0x1.0p-23;
}

void checkMoments(const Tree& g, const Tree& c, const std::vector<Vec4>& pos, const MacSetup& mac) {
  Violations mass("mass"), com("centre of mass"), quad("quadrupole"), box("box"),
      bmaxLow("bmax below the farthest particle"), bmaxHigh("bmax far above the CPU's"),
      openSelf("opening vs openingValue(gpu moments)"), openCpu("opening vs the CPU's");
  for (std::uint32_t k = 0; k < c.cellCount(); ++k) {
    const Vec4 mg = g.comMass[k], mc = c.comMass[k];
    const double side = c.side(k);
    mass.check(std::fabs(mg.w - mc.w) <= 1e-5 * mc.w, k, mg.w, mc.w, 1e-5 * mc.w);
    const double comTol = 1e-5 * side + ulpSlack(mc);
    const double dcom =
        std::max({std::fabs(mg.x - mc.x), std::fabs(mg.y - mc.y), std::fabs(mg.z - mc.z)});
    com.check(dcom <= comTol, k, dcom, 0.0, comTol);

    const double b = std::max(g.bmax[k], c.bmax[k]);
    const double qTol = 1e-4 * mc.w * b * b + 2.0 * mc.w * b * ulpSlack(mc);
    const Quadrupole& qg = g.quad[k];
    const Quadrupole& qc = c.quad[k];
    const double dq =
        std::max({std::fabs(qg.xx - qc.xx), std::fabs(qg.yy - qc.yy), std::fabs(qg.zz - qc.zz),
                  std::fabs(qg.xy - qc.xy), std::fabs(qg.xz - qc.xz), std::fabs(qg.yz - qc.yz)});
    quad.check(dq <= qTol, k, dq, 0.0, qTol);
    box.check(sameBits(g.box[k], c.box[k]), k, g.box[k].lo.x, c.box[k].lo.x, 0.0);

    // bmax must bound the distance from the GPU's own centre of mass to every particle.
    double far = 0.0;
    for (std::uint32_t i = c.first[k]; i < c.first[k] + c.count[k]; ++i) {
      const double dx = double(pos[i].x) - mg.x, dy = double(pos[i].y) - mg.y,
                   dz = double(pos[i].z) - mg.z;
      far = std::max(far, std::sqrt(dx * dx + dy * dy + dz * dz));
    }
    bmaxLow.check(double(g.bmax[k]) >= far, k, g.bmax[k], far, 0.0);
    const double bTol = 1e-4 * c.bmax[k] + 2.0 * ulpSlack(mc);
    bmaxHigh.check(g.bmax[k] <= c.bmax[k] + bTol, k, g.bmax[k], c.bmax[k], bTol);

    // The opening value from the GPU's moments, through the same per-element function.
    const CellShape shape{mg.w, g.side(k), g.box[k], xyz(mg), g.bmax[k], qg.xx + qg.yy + qg.zz};
    const double self = openingValue(mac.code, mac.theta, mac.param, shape);
    openSelf.check(std::fabs(g.opening[k] - self) <= 1e-5 * std::fabs(self), k, g.opening[k], self,
                   1e-5 * std::fabs(self));
    // Against the CPU: relative 1e-4, plus what the moments' own tolerances allow (the
    // critical radius moves at most by the COM shift, the bmax change and, for the multipole
    // MAC, the change of (3 B2/Δ)^(1/4)).
    if (mac.code == MacCode::Acceleration) {
      openCpu.check(std::fabs(g.opening[k] - c.opening[k]) <= 1e-4 * c.opening[k], k, g.opening[k],
                    c.opening[k], 1e-4 * c.opening[k]);
    } else {
      const double rg = std::sqrt(double(g.opening[k])), rc = std::sqrt(double(c.opening[k]));
      double tol = 1e-4 * rc + std::sqrt(3.0) * comTol + std::fabs(double(g.bmax[k]) - c.bmax[k]);
      if (mac.code == MacCode::Multipole) {
        const auto s = [&](const Quadrupole& q) {
          return std::sqrt(std::sqrt(3.0 * (double(q.xx) + q.yy + q.zz) / mac.param));
        };
        tol += std::fabs(s(qg) - s(qc)) + 1e-4 * s(qc);
      }
      openCpu.check(std::fabs(rg - rc) <= tol, k, rg, rc, tol);
    }
  }
}

class CudaStagesTest : public ::testing::TestWithParam<StageCase> {};

}  // namespace

TEST_P(CudaStagesTest, EachStageMatchesItsCpuTwin) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const StageCase tc = GetParam();
  const std::uint64_t seed = baseSeed() * 1000003u + tc.n * 131u + std::uint64_t(tc.nLeaf) * 7u +
                             static_cast<std::uint64_t>(tc.curve);
  const Particles h = tc.plummer ? makePlummer(tc.n, seed) : clusteredParticles(tc.n, seed);
  // θ for the distance MACs; Δ_mul and α are 1e-3 (param is unused by bh and bonsai).
  const MacSetup mac{tc.mac, 0.6f, 1e-3f};

  cuda::DeviceParticles d;
  cuda::BuildWorkspace ws;
  cuda::DeviceTree tree;
  // A first build sizes every buffer; the checked build after the poisoning allocates nothing.
  cuda::uploadParticles(h, d);
  cuda::launchBuild(d, tc.curve, tc.nLeaf, mac, ws, tree, nullptr);
  cuda::synchronize(nullptr);
  poisonAll(ws, tree);
  d.poison();
  cuda::uploadParticles(h, d);

  // Bounding box and key frame: min/max are exact, so bit-identical.
  cuda::launchBoundingBox(d, ws, nullptr);
  const Box cpuBox = cpu::boundingBox(h.posMass);
  EXPECT_TRUE(sameBits(cuda::downloadBox(ws), cpuBox)) << "bounding box";
  const KeyFrame frame = keyFrameFor(cpuBox);
  const KeyFrame gpuFrame = cuda::downloadFrame(ws);
  EXPECT_EQ(std::memcmp(&gpuFrame, &frame, sizeof(KeyFrame)), 0) << "key frame";

  // Keys: the same encodeKey(quantize(...)) on both sides.
  cuda::launchKeys(d, tc.curve, ws, nullptr);
  const std::vector<std::uint64_t> keys = cpu::computeKeys(h.posMass, frame, tc.curve);
  const std::vector<std::uint64_t> gpuKeys = cuda::downloadKeys(ws, tc.n);
  EXPECT_SAME_ARRAY(gpuKeys, keys);

  // Sort: the stable permutation, the sorted keys and every gathered particle array.
  cuda::launchSort(d, ws, nullptr);
  const std::vector<std::uint64_t> sortedKeys = expectTheCpuSort(h, keys, d, ws);
  if (HasFailure()) return;  // later stages would only repeat the difference
  Particles sorted = h;
  cpu::reorder(sorted, cpu::sortOrder(keys));

  // Tree topology: identical arrays.
  cuda::launchTree(ws, tc.n, tc.nLeaf, tree, nullptr);
  Tree cpuTree = cpu::buildTree(sortedKeys, frame, tc.nLeaf);
  Tree gpuTree;
  cuda::downloadTree(tree, ws, gpuTree, false);
  expectSameTopology(gpuTree, cpuTree);
  if (HasFailure()) return;

  // Moments: fp32 on the device against double sums on the CPU.
  cuda::launchMoments(tree, d, ws, mac, nullptr);
  cuda::downloadTree(tree, ws, gpuTree, true);
  cpu::computeMoments(cpuTree, sorted.posMass, mac);
  checkMoments(gpuTree, cpuTree, sorted.posMass, mac);
  RecordProperty("cells", static_cast<int>(cpuTree.cellCount()));
  RecordProperty("depth", cpuTree.depth());
}

INSTANTIATE_TEST_SUITE_P(Stages, CudaStagesTest, ::testing::ValuesIn(allCases()), caseName);

// Buffers far too small for the tree: the build must notice the overflow and start again with
// larger ones, and still produce the CPU's tree.
TEST(CudaStages, TreeBuildRetriesWhenItsBuffersOverflow) {
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
TEST(CudaStages, TreeBuildKeepsItsSearchesOrSearchesAgainTheSameTree) {
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
TEST(CudaStages, TreeBuildLaunchesTheLastDepthsLevelsAndStartsAgainWhenDeeper) {
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
TEST(CudaStages, TreeBuildLevelsAtTheEdgesOfTheirRule) {
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

// The moments go up the tree in one launch, each parent computed by whichever thread completes
// its children (moments.cu). Whatever thread that is, and whatever the SMs cached, a parent must
// be the same bits every time: launches on poisoned outputs, with deep single-child chains
// (clustered duplicates at N_leaf 1) and after a build retried with larger buffers, give
// identical arrays (the walk's records too), and every cell's parent links back to it.
TEST(CudaStages, MomentsUpTheTreeAreTheSameBitsEveryLaunch) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const std::size_t n = 200000;
  const Particles h = clusteredParticles(n, baseSeed() + 23);
  const MacSetup mac{MacCode::Bonsai, 0.5f, 0.0f};
  cuda::DeviceParticles d;
  cuda::BuildWorkspace ws;
  cuda::DeviceTree tree;
  tree.firstGuess = 3;  // the first attempt overflows: the parents come from the retry
  cuda::uploadParticles(h, d);
  cuda::launchBuild(d, Curve::Hilbert, 1, mac, ws, tree, nullptr);
  Tree first;
  cuda::downloadTree(tree, ws, first, true);
  ASSERT_GT(first.levelBegin.size(), 15u) << "the test needs a deep tree";
  std::vector<std::uint32_t> parent(tree.cells);
  cuda::copyToHost(parent.data(), tree.parent.data(), tree.cells * sizeof(std::uint32_t));
  EXPECT_EQ(parent[0], cuda::kNoParent);
  for (std::uint32_t c = 0; c < first.cellCount(); ++c) {
    for (std::uint32_t k = first.child[c]; k < first.child[c] + first.childCount[c]; ++k) {
      ASSERT_EQ(parent[k], c) << "cell " << k;
    }
  }
  std::vector<cuda::WalkCell> records(tree.cells);
  cuda::copyToHost(records.data(), tree.walkCell.data(), tree.cells * sizeof(cuda::WalkCell));
  for (int launch = 0; launch < 5; ++launch) {
    tree.comMass.poison();
    tree.quad.poison();
    tree.box.poison();
    tree.bmax.poison();
    tree.opening.poison();
    tree.walkCell.poison();
    cuda::launchMoments(tree, d, ws, mac, nullptr);
    Tree again;
    cuda::downloadTree(tree, ws, again, true);
    const std::size_t cells = first.cellCount();
    EXPECT_EQ(std::memcmp(again.comMass.data(), first.comMass.data(), cells * sizeof(Vec4)), 0);
    EXPECT_EQ(std::memcmp(again.quad.data(), first.quad.data(), cells * sizeof(Quadrupole)), 0);
    EXPECT_EQ(std::memcmp(again.box.data(), first.box.data(), cells * sizeof(Box)), 0);
    EXPECT_EQ(std::memcmp(again.bmax.data(), first.bmax.data(), cells * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(again.opening.data(), first.opening.data(), cells * sizeof(float)), 0);
    std::vector<cuda::WalkCell> now(cells);
    cuda::copyToHost(now.data(), tree.walkCell.data(), cells * sizeof(cuda::WalkCell));
    EXPECT_EQ(std::memcmp(now.data(), records.data(), cells * sizeof(cuda::WalkCell)), 0);
  }
  // The mass of the whole tree is every particle's, and the root's box holds them all.
  double mass = 0.0;
  for (const Vec4& q : h.posMass) mass += q.w;
  EXPECT_NEAR(first.comMass[0].w, mass, 1e-5 * mass);
  for (const Vec4& q : h.posMass) ASSERT_EQ(distSqPointBox(xyz(q), first.box[0]), 0.0f);
}

TEST(CudaStages, BuffersGrowAndNeverShrink) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  cuda::DeviceBuffer<float> b;
  b.reserve(100);
  EXPECT_GE(b.capacity(), 100u);
  const float* p = b.data();
  b.reserve(50);
  EXPECT_EQ(b.data(), p);
  b.reserve(101);
  EXPECT_GE(b.capacity(), 150u);
}

TEST(CudaStages, ErrorsBecomeExceptions) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  EXPECT_THROW(cuda::deviceAlloc(std::size_t(1) << 62), std::runtime_error);
}

// The close kicks forecast the next open kicks' deepest bin (the CUDA backend takes the forecast
// instead of waiting for the open kicks at the start of a block substep): over every tick of two
// steps of a clock of depth 6, with new accelerations at each (their largest from 0.1 to 1000,
// so the deepest bin wanted changes), the forecast is the deepest bin the open kicks then give.
TEST(CudaStages, CloseKicksForecastTheDeepestBinOfTheNextOpenKicks) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const std::size_t n = 50000;
  const Particles h = makePlummer(n, baseSeed() + 61);
  Rng rng(baseSeed() + 62);
  Clock clock;
  clock.depth = 6;
  clock.dtMax = 0.125;
  SimParams params;
  params.softening = 0.05f;
  params.eta = 0.2f;
  cuda::DeviceParticles d;
  cuda::uploadParticles(h, d);
  cuda::DeviceBuffer<int> forecast, deepest;
  forecast.reserve(1);
  deepest.reserve(1);
  const cuda::NextOpenKicks next{params.softening, params.eta, static_cast<float>(clock.dtMax),
                                 forecast.data()};
  std::vector<Vec4> acc(n);
  std::vector<int> seen;
  for (std::uint64_t tick = 1; tick <= 2 * binPeriod(0, clock.depth); ++tick) {
    const double top = rng.uniform(-1.0, 3.0);
    for (Vec4& a : acc) a = {static_cast<float>(std::pow(10.0, rng.uniform(-2.0, top))), 0, 0, -1};
    cuda::copyToDevice(d.accPot.data(), acc.data(), n * sizeof(Vec4));
    clock.tick = tick;
    cuda::launchCloseKicks(d, clock, nullptr, nullptr, next);
    cuda::launchOpenKicks(d, clock, params, deepest.data(), nullptr);
    int f = -1, got = -2;
    cuda::copyToHost(&f, forecast.data(), sizeof f);
    cuda::copyToHost(&got, deepest.data(), sizeof got);
    ASSERT_EQ(f, got) << "tick " << tick;
    seen.push_back(got);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_GE(std::unique(seen.begin(), seen.end()) - seen.begin(), 3)
      << "the test needs the deepest bin to change over the ticks";
}

// A build sorts the keys on the digits its tree reads and puts each run of keys with the same
// sorted digits in order afterwards (sort.cu). Clumps of eight particles a millionth of the box
// across (one of them eight copies of one point), in a shallow tree of N_leaf 16: a clump shares
// every sorted digit, so the shorter sort leaves it in input order, and only the runs' pass can
// make the full sort's order (equal keys by index). The parts run one by one, so that the test
// sees the sort leave that work.
TEST(CudaStages, SortOnTheTreesDigitsThenItsRunsIsTheFullSort) {
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
TEST(CudaStages, ATreeDeeperThanItsSortIsSortedAgain) {
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
