// Each CUDA tree-construction stage against its CPU twin, on fresh random clustered points
// (with exact duplicates, which drive cells down to the deepest level): bounding box, keys,
// sort order and gathered particles, and tree topology must be identical; moments agree within
// fp32 tolerances. Output buffers are poisoned (0xFF) before the checked run, so an entry the
// device never wrote cannot pass. Also the moments' launches, the buffers, errors and the close
// kicks' forecast; the tree build's own rules and a build's sort are test_cuda_sort_and_tree's.
// Every test skips when there is no CUDA device.
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
#include "gpu_test_support.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/cuda/cuda_stages.h"
#include "sim/ic/initial_conditions.h"
#include "sim/rng.h"
#include "sort_support.h"

using namespace bhviz::sim;

namespace {

using bhviz::test::haveGpu;

std::uint64_t baseSeed() { return bhviz::test::testSeed("test_cuda_stages"); }

using bhviz::test::clusteredParticles;

using bhviz::test::expectSameTopology;
using bhviz::test::expectTheCpuSort;

bool sameBits(const Box& a, const Box& b) { return std::memcmp(&a, &b, sizeof(Box)) == 0; }

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

  // Keys: the CPU's, and Skilling's transform itself (encodeKey), which both backends' table
  // must give (hilbert_table.h).
  cuda::launchKeys(d, tc.curve, ws, nullptr);
  const std::vector<std::uint64_t> keys = cpu::computeKeys(h.posMass, frame, tc.curve);
  const std::vector<std::uint64_t> gpuKeys = cuda::downloadKeys(ws, tc.n);
  EXPECT_SAME_ARRAY(gpuKeys, keys);
  std::vector<std::uint64_t> defined(tc.n);
  for (std::size_t i = 0; i < tc.n; ++i) {
    defined[i] = encodeKey(tc.curve, quantize(xyz(h.posMass[i]), frame));
  }
  EXPECT_SAME_ARRAY(gpuKeys, defined);

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
