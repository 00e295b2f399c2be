// The mutual near field (P2pMode::Mutual, seed 004) against the plain walk: the same forces to
// fp32 rounding, the same interaction counts and work, only active particles written, and many
// near pairs evaluated once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "force_difference.h"
#include "scenes.h"
#include "sim/backend.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/ic/initial_conditions.h"
#include "test_support.h"

using namespace bhviz;
using namespace bhviz::sim;

namespace {

struct Case {
  std::string name;
  Particles particles;
  int nLeaf = 16, nGroup = 64;
  MacSetup mac{MacCode::Bonsai, 0.5f, 0.0f};
};

/// A tree and groups of `c` with the given active flags (all when empty), and both walks.
struct Walks {
  Particles p;  // key order; accPot: the plain walk's forces
  std::vector<Vec4> plain, mutual;
  std::vector<std::uint32_t> plainWork, mutualWork;
  InteractionCounts plainCounts, mutualCounts;
  cpu::MutualCounts pairs;
  std::vector<std::uint8_t> active;
};

constexpr float kSentinel = -12345.0f;  // what an inactive particle's accPot holds before

Walks walkBoth(const Case& c, double activeFraction, std::uint32_t seed) {
  Walks w;
  w.p = c.particles;
  const Tree tree = cpu::buildSortedTree(w.p, Curve::Hilbert, c.nLeaf, c.mac);
  // Old accelerations for the acceleration MAC: a plain walk with θ first.
  std::vector<std::uint8_t> all(w.p.size(), 1);
  const cpu::WalkSettings theta{MacSetup{MacCode::BarnesHut, 0.5f, 0.0f}, true, 0.05f};
  cpu::walkGroups(tree, cpu::buildGroups(tree, w.p.posMass, w.p.accPot, all, c.nGroup), w.p.posMass,
                  all, theta, w.p.accPot);
  w.active.assign(w.p.size(), 1);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  if (activeFraction < 1.0) {
    for (auto& a : w.active) a = u(rng) < activeFraction ? 1 : 0;
  }
  const Groups groups = cpu::buildGroups(tree, w.p.posMass, w.p.accPot, w.active, c.nGroup);
  cpu::WalkSettings s{c.mac, true, 0.05f, P2pMode::Plain};
  w.plain.assign(w.p.size(), Vec4{kSentinel, kSentinel, kSentinel, kSentinel});
  w.mutual = w.plain;
  w.plainWork.assign(w.p.size(), 0);
  w.mutualWork = w.plainWork;
  w.plainCounts = cpu::walkSources(tree, w.p.posMass, groups, w.p.posMass, w.active, s,
                                   cpu::WalkMode::Write, w.plain, &w.plainWork);
  s.p2p = P2pMode::Mutual;
  w.mutualCounts = cpu::walkGroupsMutual(tree, groups, w.p.posMass, w.active, s, w.mutual,
                                         &w.mutualWork, &w.pairs);
  return w;
}

/// The mutual walk's forces are plain's to rounding; inactive particles are untouched.
void expectRoundingOnly(const Walks& w) {
  for (std::size_t i = 0; i < w.p.size(); ++i) {
    if (w.active[i]) continue;
    EXPECT_EQ(w.mutual[i].x, kSentinel) << i;
    EXPECT_EQ(w.mutual[i].w, kSentinel) << i;
  }
  test::expectRoundingOnly(test::forceDifference(w.plain, w.mutual, w.active));
}

std::vector<Case> cases(std::uint64_t seed) {
  MergerParams merger;
  return {
      {"plummer 16/64 bonsai", makePlummer(6000, seed), 16, 64},
      {"plummer 1/1 bh", makePlummer(2000, seed + 1), 1, 1, {MacCode::BarnesHut, 0.6f, 0.0f}},
      {"plummer 8/16 bh", makePlummer(5000, seed + 2), 8, 16, {MacCode::BarnesHut, 0.75f, 0.0f}},
      {"plummer 64/64 multipole",
       makePlummer(6000, seed + 3),
       64,
       64,
       {MacCode::Multipole, 0.5f, 1e-4f}},
      {"merger 32/128 acceleration",
       makeMerger(6000, seed + 4, merger),
       32,
       128,
       {MacCode::Acceleration, 0.5f, 2e-3f}},
      {"twins 16/32 bonsai", test::plummerWithTwins(4000, seed + 5), 16, 32},
  };
}

/// A fresh seed each run, printed so that a failure can be replayed.
std::uint64_t freshSeed() {
  static const std::uint64_t seed = std::random_device{}();
  return seed;
}

}  // namespace

TEST(MutualWalk, SameForcesCountsAndWorkAsPlain) {
  const std::uint64_t seed = freshSeed();
  for (const Case& c : cases(seed)) {
    SCOPED_TRACE(c.name + ", seed " + std::to_string(seed));
    const Walks w = walkBoth(c, 1.0, 1);
    expectRoundingOnly(w);
    EXPECT_EQ(w.mutualCounts.cell, w.plainCounts.cell);
    EXPECT_EQ(w.mutualCounts.particle, w.plainCounts.particle);
    EXPECT_EQ(w.mutualCounts.targets, w.plainCounts.targets);
    EXPECT_EQ(w.mutualWork, w.plainWork);
    EXPECT_EQ(w.pairs.plainWork, w.plainCounts.particle);
  }
}

TEST(MutualWalk, OnlyActiveParticlesGetForcesAndTheyAreThePlainOnes) {
  const std::uint64_t seed = freshSeed();
  for (double fraction : {0.3, 0.02}) {
    for (const Case& c : cases(seed + 100)) {
      SCOPED_TRACE(c.name + ", active " + std::to_string(fraction) + ", seed " +
                   std::to_string(seed));
      const Walks w = walkBoth(c, fraction, static_cast<std::uint32_t>(seed));
      expectRoundingOnly(w);
      EXPECT_EQ(w.mutualCounts.particle, w.plainCounts.particle);
      EXPECT_EQ(w.mutualWork, w.plainWork);
    }
  }
}

TEST(MutualWalk, ManyNearPairsAreEvaluatedOnceWhenEveryParticleIsActive) {
  const Case c{"plummer 16/64", makePlummer(20000, 2026), 16, 64};
  const Walks w = walkBoth(c, 1.0, 1);
  // A pair is mutual only where each side's leaf is on the other's list: here 38 % of plain's
  // pair work (the MAC tests a group's box against a leaf, so the two lists need not agree).
  EXPECT_GT(2 * w.pairs.onceBoth, w.pairs.plainWork * 3 / 10);
  EXPECT_LT(w.pairs.pairs, w.pairs.plainWork * 9 / 10);
  // Each mutual evaluation stands for two of plain's and each one-way evaluation for one; plain
  // also evaluates each particle with itself, which a group's pairs within it leave out.
  const std::uint64_t asPlain = 2 * w.pairs.onceBoth + (w.pairs.pairs - w.pairs.onceBoth);
  EXPECT_LE(asPlain, w.pairs.plainWork);
  EXPECT_GE(asPlain + w.p.size(), w.pairs.plainWork);
}

TEST(MutualWalk, TheBackendsMutualStepIsThePlainOne) {
  SimParams plain;
  plain.nLeaf = 16;
  plain.nGroup = 64;
  SimParams mutual = plain;
  mutual.p2p = P2pMode::Mutual;
  InteractionCounts a, b;
  const Particles pa = test::treeForces(test::plummer20k(), plain, true, &a);
  const Particles pb = test::treeForces(test::plummer20k(), mutual, true, &b);
  ASSERT_EQ(pa.size(), pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) ASSERT_EQ(pa.id[i], pb.id[i]);
  test::expectRoundingOnly(test::forceDifference(pa.accPot, pb.accPot));
  EXPECT_EQ(a.particle, b.particle);
  EXPECT_EQ(a.cell, b.cell);
}

TEST(MutualWalk, ABackendWithoutItRefusesItNamingTheOptionAndTheBackend) {
  SimParams p;
  p.p2p = P2pMode::Mutual;
  const BackendLimits device{kMaxLeafSize, 128, false};
  try {
    validate(p, device, "cuda");
    FAIL() << "mutual accepted by a backend without it";
  } catch (const InvalidParameter& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("p2p = mutual"), std::string::npos) << what;
    EXPECT_NE(what.find("cuda backend"), std::string::npos) << what;
  }
  EXPECT_NO_THROW(validate(p, BackendLimits{}, "cpu"));
  p.p2p = P2pMode::Plain;
  EXPECT_NO_THROW(validate(p, device, "cuda"));
}

// Without the potential (a substep that ends only some steps: WalkSettings::potential false) the
// plain walk, written or added, and the mutual one give the accelerations they give with it, and
// every target keeps the potential it had (the CPU twin of the CUDA walk's test).
TEST(MutualWalk, WithoutThePotentialEveryWalkKeepsItAndGivesTheSameAccelerations) {
  Particles p = makePlummer(6000, freshSeed() + 7);
  const MacSetup mac{MacCode::Bonsai, 0.5f, 0.0f};
  const Tree tree = cpu::buildSortedTree(p, Curve::Hilbert, 16, mac);
  std::vector<std::uint8_t> active(p.size());
  std::mt19937 rng(static_cast<std::uint32_t>(freshSeed()));
  for (auto& a : active) a = rng() % 3 == 0 ? 1 : 0;
  const Groups groups = cpu::buildGroups(tree, p.posMass, p.accPot, active, 64);
  const std::vector<Vec4> start(p.size(), Vec4{kSentinel, kSentinel, kSentinel, kSentinel});
  for (const P2pMode mode : {P2pMode::Plain, P2pMode::Mutual}) {
    cpu::WalkSettings s{mac, true, 0.05f, mode};
    std::vector<Vec4> with = start, without = start;
    cpu::walkGroups(tree, groups, p.posMass, active, s, with);
    s.potential = false;
    cpu::walkGroups(tree, groups, p.posMass, active, s, without);
    std::vector<Vec4> added = without;
    if (mode == P2pMode::Plain) {
      cpu::walkSources(tree, p.posMass, groups, p.posMass, active, s, cpu::WalkMode::Add, added,
                       nullptr);
    }
    const std::string what = mode == P2pMode::Plain ? "plain" : "mutual";
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (!active[i]) continue;
      ASSERT_NE(with[i].w, kSentinel) << what << ": the potential, with it";
      EXPECT_EQ(without[i].w, kSentinel) << what << " " << i;
      if (mode == P2pMode::Plain) {  // the same operations: the same bits
        EXPECT_EQ(without[i].x, with[i].x) << what << " " << i;
        EXPECT_EQ(without[i].y, with[i].y) << what << " " << i;
        EXPECT_EQ(without[i].z, with[i].z) << what << " " << i;
        EXPECT_EQ(added[i].w, kSentinel) << "added " << i;
        EXPECT_EQ(added[i].x, 2.0f * without[i].x) << "added " << i;
      }
    }
    // The mutual walk's counter-forces are added atomically, in any order: to rounding.
    if (mode == P2pMode::Mutual) {
      for (std::size_t i = 0; i < p.size(); ++i) with[i].w = without[i].w;
      test::expectRoundingOnly(test::forceDifference(with, without, active));
    }
  }
}
