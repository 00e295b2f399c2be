// The CUDA twin of a rank's domains stage against the CPU's, on fresh random inputs: the ORB's
// weights below random cuts and whole decompositions (the same integers, so the same cuts and
// the same domain of every particle), the particles gathered, and the exchange's removal and
// appending; then a CUDA backend's ForceParts against a CPU backend's on the same state.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <utility>

#include "../scenes.h"
#include "gpu_test_support.h"
#include "sim/backend.h"
#include "sim/cuda/cuda_backend.h"
#include "sim/cuda/domains.h"
#include "sim/cuda/let.h"
#include "sim/dist/orb.h"
#include "sim/ic/initial_conditions.h"

using namespace bhviz::sim;

namespace {

using bhviz::test::haveGpu;

struct Fixture {
  Particles p;
  std::vector<std::uint32_t> work;
};

Fixture randomState(std::size_t n, std::uint64_t seed) {
  Fixture f;
  f.p = makePlummer(n, seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint32_t> w(0, 5000);
  std::uniform_int_distribution<int> b(0, 6);
  f.work.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    f.work[i] = w(rng);
    f.p.bin[i] = static_cast<std::uint8_t>(b(rng));
  }
  return f;
}

/// The particles below `cut` along `axis`, and the others.
std::pair<Particles, Particles> splitBelow(const Particles& all, int axis, float cut) {
  std::pair<Particles, Particles> halves;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Vec4& q = all.posMass[i];
    Particles& to = (axis == 0 ? q.x : axis == 1 ? q.y : q.z) < cut ? halves.first : halves.second;
    to.resize(to.size() + 1);
    copyParticle(all, i, to, to.size() - 1);
  }
  return halves;
}

/// The two backends hold the same `held` particles in the same slots, bit for bit.
void expectSameParticles(const Backend& cpu, const Backend& gpu, std::size_t held) {
  Particles c, g;
  cpu.download(c);
  gpu.download(g);
  ASSERT_EQ(c.size(), held);
  EXPECT_EQ(c.id, g.id);
  EXPECT_EQ(c.tag, g.tag);
  EXPECT_EQ(c.bin, g.bin);
  EXPECT_EQ(0, std::memcmp(c.posMass.data(), g.posMass.data(), c.size() * sizeof(Vec4)));
  EXPECT_EQ(0, std::memcmp(c.vel.data(), g.vel.data(), c.size() * sizeof(Vec4)));
  EXPECT_EQ(0, std::memcmp(c.accPot.data(), g.accPot.data(), c.size() * sizeof(Vec4)));
}

Box boundsOf(const Particles& p) {
  Box b;
  for (const Vec4& q : p.posMass) grow(b, Vec3{q.x, q.y, q.z});
  return b;
}

}  // namespace

TEST(CudaDomains, OrbCountsAndDecompositionsAreTheCpuTwins) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  for (std::uint64_t seed : {1, 2, 3}) {
    const Fixture f = randomState(50000 + 7919 * seed, seed);
    const std::size_t n = f.p.size();
    std::vector<std::uint64_t> weight(n);
    for (std::size_t i = 0; i < n; ++i) weight[i] = orbWeight(f.work[i], f.p.bin[i]);
    cuda::DeviceParticles d;
    cuda::uploadParticles(f.p, d);
    cuda::DeviceBuffer<std::uint32_t> work;
    work.reserve(n);
    cuda::copyToDevice(work.data(), f.work.data(), n * sizeof(std::uint32_t));

    // Random cuts of random domains, one level.
    {
      HostOrbParticles host(f.p.posMass, weight);
      auto device =
          cuda::makeDeviceOrbParticles(d.posMass.data(), work.data(), d.bin.data(), n, nullptr);
      std::mt19937_64 rng(seed * 17);
      std::uniform_real_distribution<float> x(-2.0f, 2.0f);
      for (int round = 0; round < 20; ++round) {
        std::vector<OrbCut> cuts(5);
        cuts[0] = {static_cast<int>(rng() % 3), x(rng), 2};
        std::vector<std::uint64_t> a(5, 7), b(5, 7);
        host.weighBelow(cuts, a);
        device->weighBelow(cuts, b);
        ASSERT_EQ(a, b) << "seed " << seed << " round " << round;
      }
    }
    // Whole decompositions, K = 1..7, weights measured or 1.
    for (bool unit : {false, true}) {
      for (int K = 1; K <= 7; ++K) {
        HostOrbParticles host(f.p.posMass, unit ? std::vector<std::uint64_t>(n, 1) : weight);
        auto device = cuda::makeDeviceOrbParticles(d.posMass.data(), unit ? nullptr : work.data(),
                                                   d.bin.data(), n, nullptr);
        const auto none = [](std::vector<std::uint64_t>&) {};
        const dist::OrbResult a = dist::decompose(K, boundsOf(f.p), host, none);
        const dist::OrbResult b = dist::decompose(K, boundsOf(f.p), *device, none);
        ASSERT_EQ(a.weight, b.weight) << "K " << K;
        ASSERT_EQ(host.domains(), device->domains()) << "K " << K;
        for (int r = 0; r < K; ++r) {  // what leaves each rank, selected on the device
          std::vector<std::uint32_t> ia, ib;
          std::vector<int> da, db;
          host.leavers(r, ia, da);
          device->leavers(r, ib, db);
          ASSERT_EQ(ia, ib) << "K " << K << " rank " << r;
          ASSERT_EQ(da, db) << "K " << K << " rank " << r;
        }
      }
    }
  }
}

TEST(CudaDomains, GatherRemoveAndAppendAreTheCpuBackends) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const Fixture f = randomState(30000, 9);
  auto gpu = cuda::makeCudaBackend(f.p.size());
  auto cpu = makeCpuBackend();
  gpu->upload(f.p);
  cpu->upload(f.p);
  std::mt19937_64 rng(4);
  std::vector<std::uint32_t> leaving;
  for (std::uint32_t i = 0; i < f.p.size(); ++i) {
    if (rng() % 7 == 0) leaving.push_back(i);
  }
  const Particles a = cpu->forceParts()->gather(leaving);
  const Particles b = gpu->forceParts()->gather(leaving);
  ASSERT_EQ(a.id, b.id);
  ASSERT_EQ(0, std::memcmp(a.posMass.data(), b.posMass.data(), a.size() * sizeof(Vec4)));
  // Fewer particles after (the staying ones beyond the new end fill the holes), then many more
  // (past the device arrays' capacity: they grow keeping what they hold). Ids overlap: only
  // the layout matters here.
  std::size_t held = f.p.size();
  for (const std::size_t arrivals : {std::size_t{1234}, std::size_t{60000}}) {
    SCOPED_TRACE(arrivals);
    const Particles arriving = makePlummer(arrivals, 77);
    cpu->forceParts()->exchange(leaving, arriving);
    gpu->forceParts()->exchange(leaving, arriving);
    held = held - leaving.size() + arriving.size();
    ASSERT_NO_FATAL_FAILURE(expectSameParticles(*cpu, *gpu, held));
    leaving.resize(leaving.size() / 2);  // the first half again: all below the new size
  }
  Particles g;
  gpu->download(g);
  // Duplicate or out-of-range indices are refused.
  EXPECT_THROW(gpu->forceParts()->exchange({1, 1}, Particles{}), std::invalid_argument);
  EXPECT_THROW(gpu->forceParts()->gather({static_cast<std::uint32_t>(g.size())}),
               std::out_of_range);
}

// The exchange without the host (DeviceExchange): the leavers of three domains packed on the
// GPU are the CPU backend's strays, gathered and grouped by destination as the host path sends
// them; the arrivals placed from a device or a pinned host buffer leave the CPU's particles.
TEST(CudaDomains, PackedExchangeIsTheHostExchange) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const Fixture f = randomState(30000, 12);
  auto gpu = cuda::makeCudaBackend(f.p.size());
  auto cpu = makeCpuBackend();
  gpu->upload(f.p);
  cpu->upload(f.p);
  // Three domains: x < 0.1 is rank 0's; above it, y < -0.2 rank 1's and the rest rank 2's.
  OrbCuts cuts;
  cuts.ranks = 3;
  cuts.cut.resize(6);
  cuts.cut[0] = OrbCut{0, 0.1f, 1};
  cuts.cut[3 + 1] = OrbCut{1, -0.2f, 2};
  DeviceExchange* device = gpu->forceParts()->deviceExchange();
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(cpu->forceParts()->deviceExchange(), nullptr);
  const int rank = 1;
  std::vector<std::uint32_t> leaving;
  std::vector<int> to;
  cpu->forceParts()->strays(cuts, rank, leaving, to);
  const Particles movers = cpu->forceParts()->gather(leaving);
  // The host path's order: by destination, each in the particles' order.
  std::vector<std::size_t> order(leaving.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return to[a] < to[b]; });
  std::vector<int> expectedCounts(3, 0);
  for (int r : to) ++expectedCounts[static_cast<std::size_t>(r)];
  ASSERT_GT(expectedCounts[0], 1000);
  ASSERT_GT(expectedCounts[2], 1000);

  const std::vector<int> counts = device->packLeavers(cuts, rank);
  EXPECT_EQ(counts, expectedCounts);
  const PackedParticle* sent = device->sentHost();
  for (std::size_t k = 0; k < order.size(); ++k) {
    const PackedParticle want = pack(movers, order[k]);
    ASSERT_EQ(sent[k].id, want.id) << k;
    ASSERT_EQ(0, std::memcmp(&sent[k].posMass, &want.posMass, sizeof(Vec4))) << k;
    ASSERT_EQ(0, std::memcmp(&sent[k].vel, &want.vel, sizeof(Vec4))) << k;
    ASSERT_EQ(0, std::memcmp(&sent[k].accPot, &want.accPot, sizeof(Vec4))) << k;
    ASSERT_EQ(sent[k].tag, want.tag) << k;
    ASSERT_EQ(sent[k].bin, want.bin) << k;
  }
  // Fewer arrivals than leavers through pinned host memory, then more through device memory
  // (past the arrays' capacity).
  std::size_t held = f.p.size();
  bool throughHost = true;
  for (const std::size_t arrivals : {std::size_t{777}, std::size_t{40000}}) {
    SCOPED_TRACE(arrivals);
    if (!throughHost) {  // the first arrivals lie anywhere: some leave again
      cpu->forceParts()->strays(cuts, rank, leaving, to);
      std::vector<int> want(3, 0);
      for (int r : to) ++want[static_cast<std::size_t>(r)];
      ASSERT_EQ(device->packLeavers(cuts, rank), want);
    }
    const Particles arriving = makePlummer(arrivals, 80 + arrivals);
    const std::vector<PackedParticle> packed = packAll(arriving);
    if (throughHost) {
      std::memcpy(device->receiveHost(arrivals), packed.data(), arrivals * sizeof(PackedParticle));
    } else {
      cuda::copyToDevice(device->receiveDevice(arrivals), packed.data(),
                         arrivals * sizeof(PackedParticle));
    }
    device->placeArrivals();
    cpu->forceParts()->exchange(leaving, arriving);
    held = held - leaving.size() + arrivals;
    ASSERT_NO_FATAL_FAILURE(expectSameParticles(*cpu, *gpu, held));
    throughHost = false;
  }
}

// The moments among domains (ForceParts::build's cuts) on the GPU: three domains of fresh random
// weights, cut on the planes of the tree's frame; every cell's opening value is the one the
// shared code makes of the GPU's moments with the parts of its cube the host counts
// (paramOfParts, orbDomainsMeetingCell), and the multipole MAC opens the cubes the faces cross
// wider than it would without the cuts. Built through the backends, the walks agree.
TEST(CudaDomains, MomentsGiveCubesCrossedByDomainFacesTheirParts) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const std::uint64_t seed = bhviz::test::testSeed("test_cuda_domains");
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Fixture s = randomState(30000, seed);
  for (MacKind macKind : {MacKind::Multipole, MacKind::Bonsai}) {
    SCOPED_TRACE(std::string(toString(macKind)));
    SimParams p;
    p.mac = macKind;
    const MacSetup mac = macSetup(p, false);
    cuda::DeviceParticles d;
    cuda::uploadParticles(s.p, d);
    cuda::BuildWorkspace ws;
    cuda::DeviceTree tree;
    cuda::launchBuild(d, p.curve, p.nLeaf, mac, ws, tree, nullptr);
    const KeyFrame f = cuda::downloadFrame(ws);
    std::vector<std::uint64_t> w(s.p.size());
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = orbWeight(s.work[i], s.p.bin[i]);
    dist::HostOrbParticles orb(s.p.posMass, w);
    dist::OrbSettings settings;
    settings.grid = f;
    Box root;
    for (const Vec4& q : s.p.posMass) grow(root, xyz(q));
    const dist::OrbResult r = dist::decompose(
        3, root, orb, [](std::vector<std::uint64_t>&) {}, settings);
    cuda::DeviceBuffer<OrbCut> cuts;
    cuts.reserve(r.cuts.cut.size());
    cuda::copyToDevice(cuts.data(), r.cuts.cut.data(), r.cuts.cut.size() * sizeof(OrbCut));
    cuda::launchMoments(tree, d, ws, mac, nullptr, {cuts.data(), r.cuts.levels(), r.cuts.ranks});
    Tree g;
    cuda::downloadTree(tree, ws, g, true);
    const OrbCutsView host = viewOf(r.cuts);
    int shared = 0, wider = 0;
    for (std::uint32_t k = 0; k < g.cellCount(); ++k) {
      const int meeting = orbDomainsMeetingCell(host, f, g.box[k], g.level[k]);
      const Quadrupole& q = g.quad[k];
      const CellShape shape{g.comMass[k].w,    g.side(k), g.box[k],
                            xyz(g.comMass[k]), g.bmax[k], q.xx + q.yy + q.zz};
      const float expected =
          openingValue(mac.code, mac.theta, paramOfParts(mac.code, mac.param, 1, meeting), shape);
      ASSERT_NEAR(g.opening[k], expected, 1e-5f * expected)
          << "cell " << k << " at level " << int(g.level[k]) << ", " << meeting << " domains";
      if (meeting < 2) continue;
      ++shared;
      // Wider than rounding apart (the GPU's FMAs): the multipole MAC's share of Δ_mul.
      wider += g.opening[k] > (1.0f + 1e-4f) * openingValue(mac.code, mac.theta, mac.param, shape);
    }
    std::printf("%s: %d of %zu cells in cubes the faces cross, %d opened wider\n",
                std::string(toString(macKind)).c_str(), shared, g.cellCount(), wider);
    EXPECT_GT(shared, 10);
    if (macKind == MacKind::Multipole) {
      EXPECT_GT(wider, shared / 2);
    } else {
      EXPECT_EQ(wider, 0) << "only the multipole MAC's budget is shared";
    }

    // Through the backends (ForceParts::build with the frame and the cuts, as a rank builds):
    // the CUDA backend's walk does the CPU's interactions (to the few a rounding flips), and
    // with the multipole MAC more than without the cuts.
    const Clock clock{0.0, 0, 0, p.dtMax};
    const auto interactions = [&](Backend& b, const OrbCuts* cutsGiven) {
      b.upload(s.p);
      b.forceParts()->build(clock, p, ForceTargets::All, false, &f, cutsGiven);
      b.forceParts()->walkLocal();
      return double(b.forceParts()->workSum());
    };
    auto cpuBackend = makeCpuBackend();
    auto gpuBackend = cuda::makeCudaBackend(s.p.size());
    const double onCpu = interactions(*cpuBackend, &r.cuts);
    const double onGpu = interactions(*gpuBackend, &r.cuts);
    const double withoutCuts = interactions(*cpuBackend, nullptr);
    std::printf("  interactions: CPU %.0f, GPU %.0f, without the cuts %.0f\n", onCpu, onGpu,
                withoutCuts);
    EXPECT_NEAR(onGpu, onCpu, 1e-4 * onCpu);
    if (macKind == MacKind::Multipole) {
      EXPECT_GT(onCpu, 1.001 * withoutCuts);
    } else {
      EXPECT_EQ(onCpu, withoutCuts);
    }
  }
}

// The parts of a force evaluation on the GPU against the CPU's: a LET cut by each from its own
// tree of the same particles for the same region, walked by the other's groups, gives the same
// forces to fp32 rounding as the CPU's own walk of the CPU's LET. The imported walk adds to the
// forces (the add mode) and expands its far cells about each group (ρ's default): the CPU's
// counts show that the scene exercises both.
TEST(CudaDomains, ImportedLetWalkIsTheCpuWalk) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const auto [a, b] = splitBelow(makePlummer(20000, 5), 0, 0.0f);
  SimParams p;
  const Clock clock{0.0, 0, 0, p.dtMax};
  auto source = makeCpuBackend();
  source->upload(b);
  source->forceParts()->build(clock, p, ForceTargets::All, false);
  auto cpu = makeCpuBackend();
  auto gpu = cuda::makeCudaBackend(a.size());
  for (Backend* t : {cpu.get(), gpu.get()}) {
    t->upload(a);
    t->forceParts()->build(clock, p, ForceTargets::All, false);
    const LetTree let = source->forceParts()->essentialTree(t->forceParts()->targetRegion());
    ASSERT_GT(let.cellCount(), 1u);
    t->forceParts()->walkLocal();
    const std::uint64_t local = t->profile().interactions.expanded;
    t->forceParts()->walkImported(let);
    EXPECT_GT(p.expansionRatio, 0.0f);
    EXPECT_GT(t->profile().interactions.expanded, local)
        << (t == cpu.get() ? "cpu" : "cuda") << ": the imported walk expands cells";
  }
  Particles c, g;
  cpu->download(c);
  gpu->download(g);
  std::vector<std::uint32_t> order(c.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](auto x, auto y) { return c.id[x] < c.id[y]; });
  std::vector<std::uint32_t> gorder(g.size());
  std::iota(gorder.begin(), gorder.end(), 0u);
  std::sort(gorder.begin(), gorder.end(), [&](auto x, auto y) { return g.id[x] < g.id[y]; });
  double worst = 0.0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const Vec4 x = c.accPot[order[k]], y = g.accPot[gorder[k]];
    ASSERT_EQ(c.id[order[k]], g.id[gorder[k]]);
    const double dx = x.x - y.x, dy = x.y - y.y, dz = x.z - y.z;
    const double mag = std::sqrt(double(x.x) * x.x + double(x.y) * x.y + double(x.z) * x.z);
    worst = std::max(worst, std::sqrt(dx * dx + dy * dy + dz * dz) / mag);
  }
  EXPECT_LT(worst, 2e-4) << "the GPU's walks of its tree and the LET against the CPU's";
  const std::vector<std::uint32_t> wc = cpu->forceParts()->work();
  const std::vector<std::uint32_t> wg = gpu->forceParts()->work();
  EXPECT_EQ(std::accumulate(wc.begin(), wc.end(), 0ull),
            std::accumulate(wg.begin(), wg.end(), 0ull));
  // The sum reduced on the device (whether to decompose again) is the host's sum of the counts.
  EXPECT_EQ(gpu->forceParts()->workSum(), std::accumulate(wg.begin(), wg.end(), 0ull));
  EXPECT_GT(gpu->forceParts()->workSum(), 0u);
}

// The LET cut on the device against the CPU's cut of the same tree (built on the device and
// downloaded): the same cells in the same order (a borderline MAC test could round the other
// way on the GPU, so equal or nearly), and walking either gives the same forces.
TEST(CudaDomains, LetCutOnTheDeviceIsTheCpuCut) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const auto [a, b] = splitBelow(makePlummer(40000, 21), 1, 0.1f);
  for (MacKind macKind : {MacKind::BarnesHut, MacKind::Bonsai, MacKind::Multipole}) {
    SCOPED_TRACE(std::string(toString(macKind)));
    SimParams p;
    p.mac = macKind;
    const Clock clock{0.0, 0, 0, p.dtMax};
    const MacSetup mac = macSetup(p, false);
    cuda::DeviceParticles d;
    cuda::uploadParticles(b, d);
    cuda::BuildWorkspace ws;
    cuda::DeviceTree tree;
    cuda::launchBuild(d, p.curve, p.nLeaf, mac, ws, tree, nullptr);
    auto target = makeCpuBackend();
    target->upload(a);
    target->forceParts()->build(clock, p, ForceTargets::All, false);
    const TargetRegion region = target->forceParts()->targetRegion();
    cuda::LetScratch scratch;
    cuda::DeviceBytes cutBytes;
    const LetTree onGpu = cuda::cutEssentialTree(tree, d, cuda::downloadFrame(ws), mac, region,
                                                 scratch, cutBytes, nullptr);
    Tree hostTree;
    cuda::downloadTree(tree, ws, hostTree, true);
    Particles sorted;
    cuda::downloadParticles(d, sorted);
    const LetTree onCpu = essentialTree(hostTree, sorted.posMass, mac, region);
    ASSERT_GT(onCpu.cellCount(), 1u);
    const double cells = double(onCpu.cellCount());
    EXPECT_NEAR(double(onGpu.cellCount()), cells, 1e-3 * cells + 2);
    if (onGpu.cellCount() == onCpu.cellCount()) {
      EXPECT_EQ(onGpu.tree.child, onCpu.tree.child);
      EXPECT_EQ(onGpu.tree.childCount, onCpu.tree.childCount);
      EXPECT_EQ(onGpu.tree.first, onCpu.tree.first);
      EXPECT_EQ(onGpu.tree.count, onCpu.tree.count);
      EXPECT_EQ(onGpu.tree.levelBegin, onCpu.tree.levelBegin);
      ASSERT_EQ(onGpu.posMass.size(), onCpu.posMass.size());
      EXPECT_EQ(0, std::memcmp(onGpu.posMass.data(), onCpu.posMass.data(),
                               onCpu.posMass.size() * sizeof(Vec4)));
    }
    // A second cut with the same scratch gives the same LET.
    const LetTree again = cuda::cutEssentialTree(tree, d, cuda::downloadFrame(ws), mac, region,
                                                 scratch, cutBytes, nullptr);
    EXPECT_EQ(toBytes(again), toBytes(onGpu));
    // The bytes travel and are accepted.
    const std::vector<std::byte> bytes = toBytes(onGpu);
    EXPECT_NO_THROW(letFromBytes(bytes.data(), bytes.size()));
    // Cut as bytes in device memory (what a GPU rank sends), after a LET already there: the
    // host's bytes of the same cut, padding included, and the first LET left as it was.
    cuda::DeviceBytes sent;
    const LetSize first = cuda::cutEssentialTreeBytes(tree, d, cuda::downloadFrame(ws), mac, region,
                                                      scratch, sent, nullptr);
    const LetSize second = cuda::cutEssentialTreeBytes(tree, d, cuda::downloadFrame(ws), mac,
                                                       region, scratch, sent, nullptr);
    EXPECT_EQ(first.bytes, bytes.size());
    EXPECT_EQ(first.cells, onGpu.cellCount());
    EXPECT_EQ(first.particles, onGpu.posMass.size());
    ASSERT_EQ(sent.size(), first.bytes + second.bytes);
    std::vector<std::byte> both(sent.size());
    cuda::copyToHost(both.data(), sent.data(), both.size());
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), both.begin()));
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), both.begin() + bytes.size()));
    // The forces of the target's groups from either LET.
    auto withGpu = makeCpuBackend(), withCpu = makeCpuBackend();
    for (auto* t : {withGpu.get(), withCpu.get()}) {
      t->upload(a);
      t->forceParts()->build(clock, p, ForceTargets::All, false);
      t->forceParts()->walkLocal();
    }
    withGpu->forceParts()->walkImported(onGpu);
    withCpu->forceParts()->walkImported(onCpu);
    Particles x, y;
    withGpu->download(x);
    withCpu->download(y);
    double worst = 0.0;
    for (std::size_t k = 0; k < x.size(); ++k) {
      const Vec4 u = x.accPot[k], v = y.accPot[k];
      const double dd = std::hypot(double(u.x) - v.x, double(u.y) - v.y, double(u.z) - v.z);
      worst = std::max(worst, dd / std::hypot(double(v.x), double(v.y), double(v.z)));
    }
    EXPECT_LT(worst, 1e-5);
  }
}

// A GPU rank's LETs as bytes in device memory (DeviceLets), received through the host or into
// device memory: the walk over them gives the forces of the same LET walked as a LetTree, bit
// for bit; bytes that are not a whole LET are refused, naming what is wrong.
TEST(CudaDomains, LetBytesWalkedOnTheDeviceAreTheLetTree) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const auto [a, b] = splitBelow(makePlummer(30000, 9), 2, -0.05f);
  SimParams p;
  const Clock clock{0.0, 0, 0, p.dtMax};
  auto source = cuda::makeCudaBackend(b.size());
  source->upload(b);
  source->forceParts()->build(clock, p, ForceTargets::All, false);
  auto viaTree = cuda::makeCudaBackend(a.size());
  auto viaBytes = cuda::makeCudaBackend(a.size());
  for (Backend* t : {viaTree.get(), viaBytes.get()}) {
    t->upload(a);
    t->forceParts()->build(clock, p, ForceTargets::All, false);
    t->forceParts()->walkLocal();
  }
  const TargetRegion region = viaTree->forceParts()->targetRegion();
  const LetTree let = source->forceParts()->essentialTree(region);
  ASSERT_GT(let.cellCount(), 1u);
  viaTree->forceParts()->walkImported(let);
  // Sent by the source's DeviceLets, staged through its pinned memory.
  DeviceLets* out = source->forceParts()->deviceLets();
  ASSERT_NE(out, nullptr);
  out->clearSent();
  const LetSize sent = out->appendCut(region);
  const std::vector<std::byte> bytes = toBytes(let);
  ASSERT_EQ(sent.bytes, bytes.size());
  EXPECT_EQ(0, std::memcmp(out->sentHost(), bytes.data(), bytes.size()));
  DeviceLets* in = viaBytes->forceParts()->deviceLets();
  std::memcpy(in->receiveHost(bytes.size()), bytes.data(), bytes.size());
  in->uploadReceived();
  const LetSize received = in->walkReceived(0, bytes.size());
  EXPECT_EQ(received.cells, let.cellCount());
  EXPECT_EQ(received.particles, let.posMass.size());
  Particles x, y;
  viaBytes->download(x);
  viaTree->download(y);
  ASSERT_EQ(x.size(), y.size());
  EXPECT_EQ(0, std::memcmp(x.accPot.data(), y.accPot.data(), x.size() * sizeof(Vec4)));
  EXPECT_EQ(x.id, y.id);

  // Damaged bytes, received into device memory: a short LET, a foreign header, a child link
  // past the last cell.
  auto refused = [&](const std::vector<std::byte>& bad) {
    cuda::copyToDevice(in->receiveDevice(bad.size()), bad.data(), bad.size());
    EXPECT_THROW(in->walkReceived(0, bad.size()), std::invalid_argument);
  };
  refused(std::vector<std::byte>(bytes.begin(), bytes.end() - 16));
  std::vector<std::byte> foreign = bytes;
  foreign[0] = std::byte{0};
  refused(foreign);
  LetTree broken = let;
  broken.tree.child[0] = static_cast<std::uint32_t>(broken.cellCount());
  broken.tree.childCount[0] = 2;
  refused(toBytes(broken));
  broken.tree.child[0] = UINT32_MAX;  // wraps past 2^32 in 32-bit arithmetic
  broken.tree.childCount[0] = 1;
  refused(toBytes(broken));
}

namespace {

// Backend::downloadSample on the device (the camera's aim, a large run's view): the particles
// whose id is a multiple of the stride, selected and gathered on the GPU, are the CPU's
// everyNthId of the same state, every array bit for bit.
TEST(CudaSample, DownloadSampleIsEveryNthIdOfTheState) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  std::mt19937_64 seeds(std::random_device{}());
  for (std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(300'001)}) {
    const std::uint64_t seed = seeds();
    Particles state = randomState(n, seed).p;
    for (std::size_t i = 0; i < n; ++i) {  // ids no longer 0..n-1 in order: a rank's share
      state.id[i] = static_cast<std::uint32_t>(3 * i + (seed % 3));
    }
    auto gpu = cuda::makeCudaBackend(n);
    gpu->upload(state);
    for (std::uint32_t stride : {1u, 2u, 7u, 4096u}) {
      Particles sample;
      gpu->downloadSample(sample, stride);
      const Particles want = everyNthId(state, stride);
      ASSERT_EQ(sample.size(), want.size()) << "n " << n << " stride " << stride;
      // Both in the device's order of the state (upload keeps it): compare element-wise.
      for (std::size_t k = 0; k < want.size(); ++k) {
        ASSERT_EQ(sample.id[k], want.id[k]) << "seed " << seed;
        ASSERT_EQ(std::memcmp(&sample.posMass[k], &want.posMass[k], sizeof(Vec4)), 0);
        ASSERT_EQ(std::memcmp(&sample.vel[k], &want.vel[k], sizeof(Vec4)), 0);
        ASSERT_EQ(sample.tag[k], want.tag[k]);
        ASSERT_EQ(sample.bin[k], want.bin[k]);
      }
    }
  }
}

}  // namespace
