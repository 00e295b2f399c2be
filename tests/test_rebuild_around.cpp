// A tree rebuilt around the targets (Backend::rebuildAroundTargets, the rebuild tuner's third
// choice). On the CPU backend: after a drift the targets walk a tree as fresh as a rebuilt one
// where they are (as few interactions, the same accuracy against direct summation), far fewer
// than on the refitted tree, and every particle is kept. In a Simulation whose backend reports
// the timings of a fixed model (so that no test depends on the machine's load): the tuner
// rebuilds around small evaluations' targets where that costs less than their aging and rebuilds
// whole before the large ones, and a replay from a kept state makes the same choices and bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "sim/common/group_runs.h"
#include "sim/ic/scenario_file.h"
#include "sim/simulation.h"
#include "test_support.h"

using namespace bhviz;
using namespace bhviz::sim;

namespace {

double perTarget(const InteractionCounts& c) {
  return double(c.cell + c.particle) / double(c.targets);
}

/// M31 (20,000 particles) with the innermost 5 % in the deepest of four bins (the targets at an
/// odd tick), the next 15 % in the one above, the others in the shallowest.
Particles cuspBins() {
  Particles p = buildScenario(builtinScenario("m31"), 20000, 7);
  std::vector<float> r(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Vec4 x = p.posMass[i];
    r[i] = std::sqrt(x.x * x.x + x.y * x.y + x.z * x.z);
  }
  std::vector<float> sorted = r;
  std::sort(sorted.begin(), sorted.end());
  const float r5 = sorted[sorted.size() / 20], r20 = sorted[sorted.size() / 5];
  for (std::size_t i = 0; i < p.size(); ++i) {
    p.bin[i] = static_cast<std::uint8_t>(r[i] < r5 ? 4 : r[i] < r20 ? 3 : 1);
  }
  return p;
}

/// Force errors of `p`'s targets (every one, at most 2,000) against direct summation.
ForceError targetsError(const Particles& p, const Clock& clock) {
  std::vector<std::uint32_t> targets;
  for (std::uint32_t i = 0; i < p.size(); ++i) {
    if (isActive(p.bin[i], clock.tick, clock.depth)) targets.push_back(i);
  }
  if (targets.size() > 2000) targets.resize(2000);
  return forceError(p, targets, directSum(p, targets, 0.01f));
}

}  // namespace

TEST(RebuildAround, TheTargetsWalkATreeAsFreshAsARebuiltOne) {
  SimParams p;
  p.softening = 0.01f;
  p.mac = MacKind::Bonsai;  // no old accelerations: the three trees are tested alike
  const Particles start = cuspBins();
  const Clock all{0.0, 0, 4, 1.0f / 16.0f}, centre{0.0, 1, 4, 1.0f / 16.0f};
  std::size_t targets = 0;
  for (const std::uint8_t b : start.bin) targets += isActive(b, centre.tick, centre.depth);
  ASSERT_GE(targets, 1000u);
  ASSERT_LT(targets, start.size() / 8) << "a cusp's few";

  // The same state three ways after a drift that ages the tree: refitted, rebuilt around the
  // targets, rebuilt. (At 20,000 particles the cusp is shallow, and a drift this long ages the
  // tree outside the cover too: a twelfth of the aging is left at 1/32, a quarter at 1/8, half
  // at 1/2.)
  constexpr float kDrift = 1.0f / 8.0f;
  const auto drifted = [&](CpuBackend& b) { test::builtAndDrifted(b, start, all, p, kDrift); };
  CpuBackend refit, around, rebuilt;
  drifted(refit);
  ASSERT_TRUE(refit.refitForces(centre, p, ForceTargets::Active, true));
  drifted(around);
  ASSERT_TRUE(around.rebuildAroundTargets(centre, p, ForceTargets::Active, true))
      << "a rebuild around the targets is not a whole rebuild";
  drifted(rebuilt);
  rebuilt.computeForces(centre, p, ForceTargets::Active, true);

  const double r = perTarget(refit.profile().interactions);
  const double a = perTarget(around.profile().interactions);
  const double f = perTarget(rebuilt.profile().interactions);
  std::printf("interactions per target: refitted %.0f, around the targets %.0f, rebuilt %.0f\n", r,
              a, f);
  EXPECT_GT(r, 1.1 * f) << "the drift must age the tree, or nothing is tested";
  EXPECT_LT(a - f, 0.35 * (r - f)) << "most of the aging is where the targets are";
  EXPECT_GT(around.profile()[Stage::Sort], 0.0) << "its sort is timed as the rebuild's";

  // Every particle kept, and the forces as accurate as the rebuilt tree's.
  const Particles ap = sortedById(around.particles()), fp = sortedById(rebuilt.particles());
  for (std::uint32_t i = 0; i < ap.size(); ++i) ASSERT_EQ(ap.id[i], i);
  EXPECT_EQ(std::memcmp(ap.posMass.data(), fp.posMass.data(), ap.size() * sizeof(Vec4)), 0);
  const ForceError ea = targetsError(ap, centre), ef = targetsError(fp, centre);
  EXPECT_LT(ea.median, 1.1 * ef.median + 1e-7);
  EXPECT_LT(ea.p99, 1.2 * ef.p99 + 1e-7);

  // Another N_leaf: no tree of it to rebuild around, so a whole rebuild.
  p.nLeaf = 8;
  EXPECT_FALSE(around.rebuildAroundTargets(centre, p, ForceTargets::Active, true));
}

// A cusp's few targets, evaluated under two MACs: under the acceleration MAC their groups are cut
// into runs (sim/common/group_runs.h), at forces within α; under the Bonsai MAC they stay whole.
// (The runs themselves, and their interactions: tests/test_tree.cpp.)
TEST(RebuildAround, UnderTheAccelerationMacTheCuspsFewGroupsAreWalkedInRuns) {
  const Particles start = cuspBins();
  const Clock all{0.0, 0, 4, 1.0f / 16.0f}, centre{0.0, 1, 4, 1.0f / 16.0f};
  struct Evaluated {
    std::size_t groups;
    double perTarget;
    ForceError error;
  };
  const auto evaluate = [&](MacKind mac) {
    SimParams p;
    p.softening = 0.01f;
    p.mac = mac;
    CpuBackend b;
    b.upload(start);
    b.computeForces(all, p, ForceTargets::All, false);
    b.computeForces(all, p, ForceTargets::All, true);  // |a_old| of this MAC's forces
    b.resetProfile();
    b.computeForces(centre, p, ForceTargets::Active, true);
    return Evaluated{b.treeCensus().groups, perTarget(b.profile().interactions),
                     targetsError(sortedById(b.particles()), centre)};
  };
  // The same tree and targets: the groups differ only by the cut.
  const Evaluated acc = evaluate(MacKind::Acceleration), bonsai = evaluate(MacKind::Bonsai);
  std::printf("groups: acceleration MAC %zu (%.0f interactions a target, p99 %.2g), bonsai %zu\n",
              acc.groups, acc.perTarget, acc.error.p99, bonsai.groups);
  ASSERT_GT(bonsai.groups, 0u);
  ASSERT_LT(bonsai.groups, kRunsBelow);
  EXPECT_GT(acc.groups, 2 * bonsai.groups) << "the cusp's groups of ~64 targets cut";
  EXPECT_LE(acc.groups, kMaxRuns * bonsai.groups);
  EXPECT_LT(acc.error.p99, 2.0 * double(effectiveMacParam(SimParams{})))
      << "forces within the acceleration MAC's α";
}

namespace {

/// The CPU backend, whose profile reports a fixed model's times in place of the clock's: a walk
/// costs 10 µs a target on a fresh tree and as much again for each evaluation the tree has aged
/// (refitted) since it was last made fresh where the targets are (rebuilt, or rebuilt around
/// them); a rebuild costs 2 ms beyond a refit, a rebuild around the targets 0.3 ms (`dearMs`
/// for the first `dearCount` of them). The tuners' choices follow from these numbers alone.
class ModelTimedBackend final : public Backend {
 public:
  explicit ModelTimedBackend(double dearMs = 0.3, std::uint64_t dearCount = 0)
      : m_dearMs(dearMs), m_dearCount(dearCount) {}
  BackendTraits traits() const override { return m_cpu.traits(); }
  void upload(const Particles& p) override { m_cpu.upload(p); }
  void download(Particles& p) const override { m_cpu.download(p); }
  std::size_t size() const override { return m_cpu.size(); }
  int openKicks(const Clock& clock, const SimParams& p) override {
    return m_cpu.openKicks(clock, p);
  }
  void drift(float dt) override { m_cpu.drift(dt); }
  void computeForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                     bool oldAccValid) override {
    m_cpu.computeForces(clock, p, targets, oldAccValid);
    evaluated(2.0, 0);
  }
  bool refitForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                   bool oldAccValid) override {
    const bool kept = m_cpu.refitForces(clock, p, targets, oldAccValid);
    evaluated(kept ? 0.0 : 2.0, kept ? m_age + 1 : 0);
    return kept;
  }
  bool rebuildAroundTargets(const Clock& clock, const SimParams& p, ForceTargets targets,
                            bool oldAccValid) override {
    const bool kept = m_cpu.rebuildAroundTargets(clock, p, targets, oldAccValid);
    ++m_around;
    evaluated(kept ? (m_around <= m_dearCount ? m_dearMs : 0.3) : 2.0, 0);
    return kept;
  }
  void closeKicks(const Clock& clock) override { m_cpu.closeKicks(clock); }
  std::vector<std::uint32_t> nonFiniteIds(std::size_t max) const override {
    return m_cpu.nonFiniteIds(max);
  }
  Diagnostics diagnostics(const Clock& clock) const override { return m_cpu.diagnostics(clock); }
  const StepProfile& profile() const override { return m_profile; }
  void resetProfile() override {
    m_cpu.resetProfile();
    m_profile = {};
  }
  TreeCensus treeCensus() const override { return m_cpu.treeCensus(); }
  TreeStatistics treeStatistics() const override { return m_cpu.treeStatistics(); }
  std::size_t boxCount(const BoxQuery& q) const override { return m_cpu.boxCount(q); }
  std::vector<DrawBox> boxes(const BoxQuery& q) const override { return m_cpu.boxes(q); }
  std::unique_ptr<Backend> makeScratch(std::size_t) const override {
    return std::make_unique<ModelTimedBackend>();
  }
  std::uint64_t arounds() const { return m_around; }

 private:
  /// The evaluation just made cost `beyondRefitMs` and walked a tree `age` evaluations old.
  void evaluated(double beyondRefitMs, int age) {
    m_age = age;
    m_profile = m_cpu.profile();
    for (double& ms : m_profile.ms) ms = 0.0;
    const double targets = double(m_profile.interactions.targets);
    m_profile[Stage::Tree] = beyondRefitMs;
    m_profile[Stage::Walk] = 1e-2 * targets * (1.0 + age);
  }

  CpuBackend m_cpu;
  StepProfile m_profile;
  int m_age = 0;
  std::uint64_t m_around = 0;
  double m_dearMs;
  std::uint64_t m_dearCount;
};

/// Block steps over six bins, the rebuilds as the tuners choose, under the Bonsai test.
SimParams blockParams() { return test::tunedBlockParams(MacKind::Bonsai); }

}  // namespace

TEST(RebuildAround, TheTunerTakesItWhereItCostsLessThanTheAgingAndAReplayFollows) {
  // The first rebuild around the targets costs 20 ms, as a GPU's first launches of its kernels
  // do: it runs cold, and its cost is not kept.
  auto owned = std::make_unique<ModelTimedBackend>(20.0, 1);
  const ModelTimedBackend& backend = *owned;
  Simulation s(std::move(owned), buildScenario(builtinScenario("m31"), 8192, 9), blockParams());
  s.advance(1);
  const std::unique_ptr<KeptState> kept = s.keep();
  const auto run = [&] {
    std::vector<TreeChoice> choices;
    for (int k = 0; k < 48; ++k) {
      s.substep();
      choices.push_back(s.lastTreeChoice());
    }
    return choices;
  };
  const std::uint64_t aroundBefore = backend.arounds();
  const std::vector<TreeChoice> first = run();
  const Particles a = sortedById(s.particles());
  const RebuildTunerState t = s.rebuildState();
  EXPECT_EQ(t.recorded(), 1u + s.substeps());
  EXPECT_EQ(backend.arounds() - aroundBefore,
            std::uint64_t(std::count(first.begin(), first.end(), TreeChoice::AroundTargets)));
  const auto taken = [&](TreeChoice c) { return std::count(first.begin(), first.end(), c); };
  std::printf("48 substeps: %ld rebuilt, %ld around the targets, %ld refitted\n",
              long(taken(TreeChoice::Rebuild)), long(taken(TreeChoice::AroundTargets)),
              long(taken(TreeChoice::Refit)));
  // Every evaluation of aging costs as much as a fresh walk: a rebuild around the targets (0.3
  // ms) beats a refit for any evaluation with more than 30 targets; the whole rebuild (2 ms)
  // pays for the largest, whose targets are at least a quarter of the particles (their cover is
  // the smallest cell holding them all: not offered).
  EXPECT_GT(taken(TreeChoice::AroundTargets), 8);
  EXPECT_GT(taken(TreeChoice::Rebuild), 1);
  EXPECT_DOUBLE_EQ(t.aroundMs, 0.3);

  s.restore(*kept);
  const std::vector<TreeChoice> second = run();
  const Particles b = sortedById(s.particles());
  EXPECT_TRUE(first == second);
  EXPECT_EQ(std::memcmp(a.posMass.data(), b.posMass.data(), a.size() * sizeof(Vec4)), 0);
  EXPECT_EQ(std::memcmp(a.vel.data(), b.vel.data(), a.size() * sizeof(Vec4)), 0);
}

TEST(RebuildAround, ACostMeasuredLongAgoIsMeasuredAgain) {
  // The first three rebuilds around the targets cost 20 ms (a cover once far larger), the others
  // 0.3 ms. The first runs cold (not kept); the kinds tried next are found too dear, and tried
  // again (and kept) once their measurement is 32 rebuilds old.
  auto owned = std::make_unique<ModelTimedBackend>(20.0, 3);
  const ModelTimedBackend& backend = *owned;
  Simulation s(std::move(owned), buildScenario(builtinScenario("m31"), 4096, 11), blockParams());
  std::uint64_t dearAt = 0;  // rebuilds when the third (the last dear one) was made
  while (s.rebuildState().rebuilds < dearAt + 48 && s.substeps() < 1000) {
    s.substep();
    if (dearAt == 0 && backend.arounds() == 3) dearAt = s.rebuildState().rebuilds;
  }
  ASSERT_GT(dearAt, 0u) << "the kinds tried";
  ASSERT_GE(s.rebuildState().rebuilds, dearAt + 48);
  const std::uint64_t later = backend.arounds() - 3;
  std::printf(
      "rebuilt around the targets: the dear three by the %lluth rebuild, %llu in the 48 after\n",
      static_cast<unsigned long long>(dearAt), static_cast<unsigned long long>(later));
  EXPECT_GE(later, 4u) << "tried again, and kept, once the dear measurements were forgotten";
}

TEST(RebuildAround, ADeeperSubstepCountsTheTreesAgeFromTheRebuildAroundItsTargets) {
  // The age each evaluation is held to (the rebuild tuner's state after it): since the last
  // rebuild, or since the last rebuild around the targets where that was for this evaluation's
  // bin or a shallower one and no shallower evaluation has refitted since.
  auto owned = std::make_unique<ModelTimedBackend>();
  Simulation s(std::move(owned), buildScenario(builtinScenario("m31"), 8192, 9), blockParams());
  double rebuiltAt = s.time(), aroundAt = -1e300;
  int aroundBin = 0, fromAround = 0;
  for (int k = 0; k < 96; ++k) {
    s.substep();
    const double t = s.time();
    const int bin = shallowestAlignedBin(s.clock().tick, s.clock().depth);
    double expected = 0.0;
    switch (s.lastTreeChoice()) {
      case TreeChoice::Rebuild:
        rebuiltAt = t;
        break;
      case TreeChoice::AroundTargets:
        aroundAt = t;
        aroundBin = bin;
        break;
      case TreeChoice::Refit:
        if (bin < aroundBin) aroundAt = -1e300;
        if (aroundAt > rebuiltAt && bin >= aroundBin) {
          expected = t - aroundAt;
          ++fromAround;
        } else {
          expected = t - rebuiltAt;
        }
        break;
    }
    ASSERT_NEAR(s.rebuildState().age, expected, 1e-12) << "substep " << k;
  }
  EXPECT_GT(fromAround, 2) << "refits counted from a rebuild around the targets";
}
