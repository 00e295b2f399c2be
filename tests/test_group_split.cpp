// The acceleration MAC's group split (sim/common/group_split.h): runs halved at their middle
// target while their |a_old| spans more than the limit; hand-checked runs, the pieces of real
// groups (fresh seeds), and the walk over them against exact direct summation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "scenes.h"
#include "sim/common/group_split.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/direct_sum.h"
#include "sim/ic/initial_conditions.h"

using namespace bhviz;
using namespace bhviz::sim;

namespace {

std::uint64_t baseSeed() { return test::testSeed("test_group_split"); }

using Pieces = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

/// splitRun over particles whose |a_old| is acc[i] (a target unless inactive[i]).
Pieces pieces(const std::vector<float>& acc, const GroupSplit& s,
              const std::vector<bool>& inactive = {}) {
  Pieces out;
  splitRun(
      0, std::uint32_t(acc.size()), s,
      [&](std::uint32_t i) { return inactive.empty() || !inactive[i]; },
      [&](std::uint32_t i) { return acc[i]; },
      [&](std::uint32_t f, std::uint32_t n) { out.emplace_back(f, n); });
  return out;
}

}  // namespace

TEST(GroupSplit, OnlyTheAccelerationMacSplits) {
  EXPECT_EQ(groupSplit({MacCode::Acceleration, 0.5f, 2e-3f}).accSpread, 2.0f);
  for (MacCode c : {MacCode::BarnesHut, MacCode::Bonsai, MacCode::Multipole}) {
    EXPECT_EQ(groupSplit({c, 0.5f, 1e-3f}).accSpread, 0.0f);
  }
}

// Worked by hand, GroupSplit{2, 4}: 16 targets, the last at |a| 0.1, the others at 1: the run
// spans 10× → halves of 8; the first spans 1× (kept), the second 10× → halves of 4 (kept: 4
// targets are never split).
TEST(GroupSplit, HandCheckedRuns) {
  const GroupSplit s{2.0f, 4u};
  std::vector<float> acc(16, 1.0f);
  acc[15] = 0.1f;
  EXPECT_EQ(pieces(acc, s), (Pieces{{0, 8}, {8, 4}, {12, 4}}));
  // Within the limit (exactly 2×): whole.
  std::vector<float> within(16, 1.0f);
  within[3] = 0.5f;
  EXPECT_EQ(pieces(within, s), (Pieces{{0, 16}}));
  // Odd counts: the second piece starts at target 7 / 2 = 3.
  EXPECT_EQ(pieces({1, 1, 1, 1, 1, 1, 0.1f}, s), (Pieces{{0, 3}, {3, 4}}));
  // |a| = 0 spans without bound: split down to the smallest pieces allowed.
  std::vector<float> zero(32, 1.0f);
  zero[0] = 0.0f;
  EXPECT_EQ(pieces(zero, s), (Pieces{{0, 4}, {4, 4}, {8, 8}, {16, 16}}));
  // No split asked, no finite |a| (fminf and fmaxf pass over a NaN), few targets: whole.
  EXPECT_EQ(pieces(acc, GroupSplit{}), (Pieces{{0, 16}}));
  EXPECT_EQ(pieces(std::vector<float>(16, NAN), s), (Pieces{{0, 16}}));
  EXPECT_EQ(pieces({1.0f, 0.0f, 1.0f, 1.0f}, s), (Pieces{{0, 4}}));
}

// Inactive particles are no targets: they count for no |a| and no half, and stay in the piece
// before the next target.
TEST(GroupSplit, InactiveParticlesNeitherCountNorSplit) {
  const GroupSplit s{2.0f, 2u};
  //                      0     1     2     3     4     5     6     7
  const std::vector<float> acc{1.0f, 9e-9f, 1.0f, 1.0f, 0.3f, 9e-9f, 1.0f, 0.3f};
  const std::vector<bool> inactive{false, true, false, false, false, true, false, false};
  // Targets 0, 2, 3, 4, 6, 7 span 3.3×: split at target 3 (particle 4); [0, 4) holds targets
  // 0, 2, 3 at 1× (kept), [4, 8) holds 4, 6, 7 at 3.3×: split at its target 1 (particle 6).
  EXPECT_EQ(pieces(acc, s, inactive), (Pieces{{0, 4}, {4, 2}, {6, 2}}));
}

// The groups of a real state (a Plummer sphere and a merger, fresh seeds, accelerations from a
// walk, some particles inactive): the pieces partition each unsplit group's run in key order,
// each holds a target, spans at most 2× or holds at most 4 targets, and carries the box and
// |a_old| minimum of its own targets.
TEST(GroupSplit, PiecesOfRealGroups) {
  for (const bool merger : {false, true}) {
    SCOPED_TRACE(merger ? "merger" : "plummer");
    const std::uint64_t seed = baseSeed() + (merger ? 11u : 0u);
    Particles p = merger ? makeMerger(30000, seed) : makePlummer(30000, seed);
    const MacSetup mac{MacCode::Acceleration, 0.5f, 2e-3f};
    const Tree tree = cpu::buildSortedTree(p, Curve::Hilbert, 16, mac);
    std::vector<std::uint8_t> active(p.size(), 1);
    const cpu::WalkSettings bh{MacSetup{MacCode::BarnesHut, 0.5f, 0.0f}, true, 0.05f};
    cpu::walkGroups(tree, cpu::buildGroups(tree, p.posMass, p.accPot, active, 64), p.posMass,
                    active, bh, p.accPot);
    std::mt19937 rng{static_cast<std::uint32_t>(seed)};
    for (auto& a : active) a = (rng() % 4) != 0;  // three quarters active

    const GroupSplit s = groupSplit(mac);
    const Groups whole = cpu::buildGroups(tree, p.posMass, p.accPot, active, 64);
    const Groups split = cpu::buildGroups(tree, p.posMass, p.accPot, active, 64, s);
    ASSERT_GT(split.size(), whole.size()) << "no group was split";
    std::size_t k = 0;
    for (std::size_t w = 0; w < whole.size(); ++w) {
      std::uint32_t next = whole.first[w];
      const std::uint32_t end = whole.first[w] + whole.count[w];
      while (next < end) {
        ASSERT_LT(k, split.size());
        ASSERT_EQ(split.first[k], next) << "group " << w;
        Box box;
        float lo = INFINITY, hi = 0.0f;
        std::uint32_t targets = 0;
        for (std::uint32_t i = split.first[k]; i < split.first[k] + split.count[k]; ++i) {
          if (!active[i]) continue;
          ++targets;
          grow(box, xyz(p.posMass[i]));
          lo = std::min(lo, accMagnitude(p.accPot[i]));
          hi = std::max(hi, accMagnitude(p.accPot[i]));
        }
        EXPECT_GT(targets, 0u);
        EXPECT_TRUE(targets <= s.minTargets || hi <= s.accSpread * lo) << "piece " << k;
        EXPECT_EQ(split.accMin[k], lo);
        EXPECT_EQ(std::memcmp(&split.box[k], &box, sizeof box), 0);
        next += split.count[k];
        ++k;
      }
      EXPECT_EQ(next, end);
    }
    EXPECT_EQ(k, split.size());
  }
}

// The walk over the pieces keeps the acceleration MAC's accuracy against exact direct
// summation and does less work. Each piece tests its cells against its own smallest |a_old|,
// which is at least its group's, so most of its particles get shorter lists: over 8 fresh merger
// seeds (30,000 particles, α 2e-3) the pieces did 0.86–0.88 of the work at 1.17–1.21× the
// median and 1.03–1.18× the p99 (bounds 1.35× and 1.3×). For the same work the whole groups
// need α ≈ 2.8e-3, and are then less accurate than the pieces (median ~1.1×, p99 ~1.2×).
TEST(GroupSplit, WalkOverPiecesStaysAccurate) {
  const std::uint64_t seed = baseSeed() + 29u;
  Particles p = makeMerger(30000, seed);
  const MacSetup mac{MacCode::Acceleration, 0.5f, 2e-3f};
  const float eps = 0.05f;
  const Tree tree = cpu::buildSortedTree(p, Curve::Hilbert, 16, mac);
  const std::vector<std::uint8_t> all(p.size(), 1);
  const cpu::WalkSettings bh{MacSetup{MacCode::BarnesHut, 0.5f, 0.0f}, true, eps};
  cpu::walkGroups(tree, cpu::buildGroups(tree, p.posMass, p.accPot, all, 64), p.posMass, all, bh,
                  p.accPot);
  const std::vector<std::uint32_t> sample = sampleIndices(p.size(), 2000, seed);
  const std::vector<Accel4d> exact = directSum(p, sample, eps);
  const cpu::WalkSettings s{mac, true, eps};
  const auto walk = [&](GroupSplit split, InteractionCounts& counts) {
    Particles out = p;
    counts = cpu::walkGroups(tree, cpu::buildGroups(tree, p.posMass, p.accPot, all, 64, split),
                             out.posMass, all, s, out.accPot);
    return forceError(out, sample, exact);
  };
  InteractionCounts wholeCounts, splitCounts;
  const ForceError whole = walk(GroupSplit{}, wholeCounts);
  const ForceError split = walk(groupSplit(mac), splitCounts);
  std::printf(
      "whole groups: median %.3g p99 %.3g, %llu interactions; pieces: median %.3g p99 "
      "%.3g, %llu\n",
      whole.median, whole.p99,
      static_cast<unsigned long long>(wholeCounts.cell + wholeCounts.particle), split.median,
      split.p99, static_cast<unsigned long long>(splitCounts.cell + splitCounts.particle));
  EXPECT_LE(split.median, 1.35 * whole.median);
  EXPECT_LE(split.p99, 1.3 * whole.p99);
  EXPECT_LE(splitCounts.cell + splitCounts.particle, wholeCounts.cell + wholeCounts.particle);
}
