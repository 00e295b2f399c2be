// The tree statistics (sim/tree_statistics.h) against the tree they describe: after a force
// evaluation on the CPU backend, its tree is walked here from the root, cell by cell (levels
// from the walk's own depth, not the tree's level array), and each target's interactions come
// from its group's interaction list; the statistics must say the same. Fresh random scenes
// each run (BHVIZ_TEST_SEED repeats one).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <vector>

#include "scenes.h"
#include "sim/cpu/cpu_backend.h"
#include "sim/ic/initial_conditions.h"
#include "sim/tree_statistics.h"

using namespace bhviz::sim;

namespace {

std::uint64_t seed() { return bhviz::test::testSeed("test_tree_statistics"); }

/// The tree counted by walking it from the root.
struct Walked {
  std::vector<std::uint64_t> cellsPerLevel, leavesPerLevel;
  std::map<std::uint32_t, std::uint64_t> leavesByCount;  ///< particles held → leaves
  std::uint64_t cells = 0, leaves = 0, leafParticles = 0;
  bool overfullAboveDeepest = false;  ///< a leaf above kMaxLevel holds more than N_leaf
};

Walked walkTree(const Tree& t, int leafSize) {
  Walked w;
  std::vector<std::pair<std::uint32_t, int>> stack{{0u, 0}};  // cell, depth
  while (!stack.empty()) {
    const auto [c, depth] = stack.back();
    stack.pop_back();
    ++w.cells;
    if (w.cellsPerLevel.size() <= std::size_t(depth)) {
      w.cellsPerLevel.resize(depth + 1);
      w.leavesPerLevel.resize(depth + 1);
    }
    ++w.cellsPerLevel[depth];
    if (t.childCount[c] == 0) {
      ++w.leaves;
      ++w.leavesPerLevel[depth];
      ++w.leavesByCount[t.count[c]];
      w.leafParticles += t.count[c];
      if (t.count[c] > std::uint32_t(leafSize) && depth < kMaxLevel) w.overfullAboveDeepest = true;
      continue;
    }
    std::uint32_t held = 0;
    for (std::uint32_t k = t.child[c]; k < t.child[c] + t.childCount[c]; ++k) {
      held += t.count[k];
      stack.push_back({k, depth + 1});
    }
    EXPECT_EQ(held, t.count[c]) << "children of cell " << c << " hold another count";
  }
  return w;
}

/// The work of each target (the particles the groups hold that were active), from its group's
/// interaction list: cells plus the particles of the leaves; -1 for a particle not a target.
std::vector<std::int64_t> workFromLists(const CpuBackend& b, const std::vector<bool>& active) {
  std::vector<std::int64_t> work(b.size(), -1);
  const Groups& g = b.groups();
  for (std::size_t k = 0; k < g.size(); ++k) {
    const CpuBackend::GroupInteractions gi = b.interactionsOfGroup(k);
    std::int64_t w = static_cast<std::int64_t>(gi.list.cells.size());
    for (std::uint32_t leaf : gi.list.leaves) w += b.tree().count[leaf];
    for (std::uint32_t i = g.first[k]; i < g.first[k] + g.count[k]; ++i) {
      if (active[i]) work[i] = w;
    }
  }
  return work;
}

/// Every statistic against the walked tree and the interaction lists.
void expectDescribes(const TreeStatistics& s, CpuBackend& b, int leafSize,
                     const std::vector<bool>& active) {
  const std::size_t n = b.size();
  const Walked w = walkTree(b.tree(), leafSize);
  EXPECT_FALSE(w.overfullAboveDeepest) << "a leaf above the deepest level holds more than N_leaf";
  EXPECT_EQ(w.leafParticles, n) << "the leaves hold every particle once";

  EXPECT_EQ(s.particles, n);
  EXPECT_EQ(s.cells, w.cells);
  EXPECT_EQ(s.leaves, w.leaves);
  EXPECT_EQ(s.groups, b.groups().size());
  EXPECT_EQ(s.leafSize, leafSize);
  ASSERT_EQ(std::size_t(s.levels), w.cellsPerLevel.size());
  for (int l = 0; l < kTreeLevels; ++l) {
    const bool in = std::size_t(l) < w.cellsPerLevel.size();
    EXPECT_EQ(s.cellsPerLevel[l], in ? w.cellsPerLevel[l] : 0u) << "cells of level " << l;
    EXPECT_EQ(s.leavesPerLevel[l], in ? w.leavesPerLevel[l] : 0u) << "leaves of level " << l;
  }

  // Occupancy: each count up to N_leaf in its own bin, the few larger (the deepest level's
  // coincident particles) in the last; every particle in exactly one leaf.
  std::uint64_t overfull = 0, overfullParticles = 0;
  for (const auto& [count, leaves] : w.leavesByCount) {
    if (count > std::uint32_t(leafSize)) {
      overfull += leaves;
      overfullParticles += std::uint64_t(count) * leaves;
    }
  }
  std::uint64_t held = 0, leaves = 0;
  for (int k = 0; k < kOccupancyBins; ++k) {
    const std::uint64_t expected = k <= leafSize
                                       ? (w.leavesByCount.count(k) ? w.leavesByCount.at(k) : 0u)
                                   : k == leafSize + 1 ? overfull
                                                       : 0u;
    EXPECT_EQ(s.leavesByOccupancy[k], expected) << "leaves of " << k << " particles";
    if (k <= leafSize) held += std::uint64_t(k) * s.leavesByOccupancy[k];
    leaves += s.leavesByOccupancy[k];
  }
  EXPECT_EQ(s.leavesByOccupancy[0], 0u) << "an empty leaf";
  EXPECT_EQ(s.overfullParticles, overfullParticles);
  EXPECT_EQ(held + s.overfullParticles, n) << "Σ occupancy × leaves = N";
  EXPECT_EQ(leaves, s.leaves);

  // Interactions: the histogram, sum and extremes of the lists' work, over the targets only.
  const std::vector<std::int64_t> listed = workFromLists(b, active);
  std::array<std::uint64_t, kInteractionBins> bins{};
  std::uint64_t targets = 0, total = 0;
  std::int64_t lo = -1, hi = 0;
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(listed[i] >= 0, bool(active[i])) << "particle " << i << ": a target in no group";
    if (listed[i] < 0) continue;
    ++targets;
    total += std::uint64_t(listed[i]);
    lo = lo < 0 ? listed[i] : std::min(lo, listed[i]);
    hi = std::max(hi, listed[i]);
    int bin = 0;  // floor(log2), counted the slow way
    while ((std::int64_t(2) << bin) <= listed[i]) ++bin;
    ++bins[bin];
  }
  EXPECT_EQ(s.targets, targets);
  EXPECT_EQ(s.interactions, total);
  EXPECT_EQ(std::int64_t(s.minInteractions), std::max<std::int64_t>(lo, 0));
  EXPECT_EQ(std::int64_t(s.maxInteractions), hi);
  for (int k = 0; k < kInteractionBins; ++k) {
    EXPECT_EQ(s.interactionsLog2[k], bins[k]) << "targets with 2^" << k << ".. interactions";
  }
  EXPECT_EQ(std::accumulate(s.interactionsLog2.begin(), s.interactionsLog2.end(), 0ull), targets);
  // The same total as the walk's own per-particle work and its counters.
  const std::vector<std::uint32_t> work = b.forceParts()->work();
  EXPECT_EQ(std::accumulate(work.begin(), work.end(), 0ull), s.interactions);
  const InteractionCounts c = b.profile().interactions;
  EXPECT_EQ(c.cell + c.particle, s.interactions);
  EXPECT_EQ(c.targets, s.targets);
}

struct Case {
  const char* scene;
  std::size_t n;
  int leafSize;
};

class TreeStatisticsOf : public ::testing::TestWithParam<Case> {};

Particles sceneOf(const Case& c, std::uint64_t s) {
  const std::string name = c.scene;
  if (name == "clustered") return bhviz::test::clusteredParticles(c.n, s);
  if (name == "merger") return makeMerger(c.n, s);
  return makePlummer(c.n, s);
}

}  // namespace

// Every particle a target (the first evaluation, shared steps).
TEST_P(TreeStatisticsOf, EveryTargetDescribesItsTree) {
  const Case& c = GetParam();
  SimParams p;
  p.nLeaf = c.leafSize;
  CpuBackend b;
  b.upload(sceneOf(c, seed() + c.n + c.leafSize));
  b.computeForces(Clock{0.0, 0, 0, p.dtMax}, p, ForceTargets::All, false);
  const TreeStatistics s = b.treeStatistics();
  EXPECT_EQ(s.targets, c.n);
  expectDescribes(s, b, c.leafSize, std::vector<bool>(c.n, true));
}

// A block substep: only the particles whose bin is due are targets; the tree still holds all.
TEST_P(TreeStatisticsOf, ActiveTargetsOfABlockSubstep) {
  const Case& c = GetParam();
  SimParams p;
  p.nLeaf = c.leafSize;
  Particles state = sceneOf(c, seed() + 7 * c.n + c.leafSize);
  for (std::size_t i = 0; i < state.size(); ++i) state.bin[i] = std::uint8_t(state.id[i] % 4);
  const Clock clock{0.0, 2, 3, p.dtMax};  // tick 2 of depth 3: bins 2 and 3 are due
  CpuBackend b;
  b.upload(state);
  b.computeForces(clock, p, ForceTargets::Active, false);
  std::vector<bool> active(c.n);
  std::size_t due = 0;
  for (std::size_t i = 0; i < c.n; ++i) {
    active[i] = b.particles().bin[i] >= 2;
    due += active[i];
  }
  const TreeStatistics s = b.treeStatistics();
  EXPECT_EQ(s.targets, due);
  EXPECT_LT(s.targets, c.n);
  expectDescribes(s, b, c.leafSize, active);
}

INSTANTIATE_TEST_SUITE_P(Scenes, TreeStatisticsOf,
                         ::testing::Values(Case{"plummer", 1000, 1}, Case{"plummer", 1000, 16},
                                           Case{"plummer", 20000, 8}, Case{"plummer", 20000, 64},
                                           Case{"merger", 6000, 16}, Case{"merger", 6000, 32},
                                           Case{"clustered", 8000, 16}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.scene) + "_n" +
                                  std::to_string(info.param.n) + "_leaf" +
                                  std::to_string(info.param.leafSize);
                         });

// The coincident pile of the clustered scene cannot be split: its leaf, at the deepest level,
// is the "more than N_leaf" bin, and its particles are counted there.
TEST(TreeStatistics, CoincidentParticlesFillTheOverfullBin) {
  CpuBackend b;
  b.upload(bhviz::test::clusteredParticles(10000, seed() + 3));
  SimParams p;
  b.computeForces(Clock{0.0, 0, 0, p.dtMax}, p, ForceTargets::All, false);
  const TreeStatistics s = b.treeStatistics();
  EXPECT_GE(s.leavesByOccupancy[p.nLeaf + 1], 1u);
  EXPECT_GT(s.overfullParticles, std::uint64_t(p.nLeaf));
  EXPECT_GE(s.leavesPerLevel[kMaxLevel], 1u);
  EXPECT_EQ(s.levels, kMaxLevel + 1);
}

// A smaller θ opens more cells: more interactions per target, the extremes too, and the
// histogram's weight moves up; the tree itself is the same.
TEST(TreeStatistics, InteractionsGrowAsThetaShrinks) {
  const Particles state = makePlummer(10000, seed() + 11);
  SimParams p;
  p.mac = MacKind::BarnesHut;
  TreeStatistics before;
  for (float theta : {0.9f, 0.6f, 0.4f, 0.25f}) {
    SCOPED_TRACE(theta);
    p.theta = theta;
    CpuBackend b;
    b.upload(state);
    b.computeForces(Clock{0.0, 0, 0, p.dtMax}, p, ForceTargets::All, false);
    const TreeStatistics s = b.treeStatistics();
    if (before.targets > 0) {
      EXPECT_GT(s.meanInteractions(), 1.2 * before.meanInteractions());
      EXPECT_GE(s.maxInteractions, before.maxInteractions);
      EXPECT_EQ(s.cellsPerLevel, before.cellsPerLevel);
      EXPECT_EQ(s.leavesByOccupancy, before.leavesByOccupancy);
      // The median bin does not move down.
      auto medianBin = [](const TreeStatistics& t) {
        std::uint64_t seen = 0;
        for (int k = 0; k < kInteractionBins; ++k) {
          seen += t.interactionsLog2[k];
          if (2 * seen >= t.targets) return k;
        }
        return kInteractionBins;
      };
      EXPECT_GE(medianBin(s), medianBin(before));
    }
    before = s;
  }
}

// Before any evaluation, and after an upload, there is no tree to describe.
TEST(TreeStatistics, EmptyWithoutATree) {
  CpuBackend b;
  EXPECT_EQ(b.treeStatistics().cells, 0u);
  b.upload(makePlummer(500, seed()));
  SimParams p;
  b.computeForces(Clock{0.0, 0, 0, p.dtMax}, p, ForceTargets::All, false);
  EXPECT_GT(b.treeStatistics().cells, 0u);
  b.upload(makePlummer(600, seed() + 1));
  const TreeStatistics s = b.treeStatistics();
  EXPECT_EQ(s.cells, 0u);
  EXPECT_EQ(s.targets, 0u);
  EXPECT_EQ(s.levels, 0);
}

// The sum of two statistics (the ranks of a distributed run): counts add, extremes combine,
// and an empty one changes nothing.
TEST(TreeStatistics, SumOfTwoTrees) {
  SimParams p;
  const Clock clock{0.0, 0, 0, p.dtMax};
  CpuBackend a, b;
  a.upload(makePlummer(3000, seed() + 21));
  b.upload(makeMerger(4000, seed() + 22));
  a.computeForces(clock, p, ForceTargets::All, false);
  b.computeForces(clock, p, ForceTargets::All, false);
  const TreeStatistics sa = a.treeStatistics(), sb = b.treeStatistics();
  TreeStatistics sum;
  sum += sa;
  sum += TreeStatistics{};
  sum += sb;
  EXPECT_EQ(sum.particles, 7000u);
  EXPECT_EQ(sum.targets, 7000u);
  EXPECT_EQ(sum.cells, sa.cells + sb.cells);
  EXPECT_EQ(sum.interactions, sa.interactions + sb.interactions);
  EXPECT_EQ(sum.minInteractions, std::min(sa.minInteractions, sb.minInteractions));
  EXPECT_EQ(sum.maxInteractions, std::max(sa.maxInteractions, sb.maxInteractions));
  EXPECT_EQ(sum.levels, std::max(sa.levels, sb.levels));
  for (int l = 0; l < kTreeLevels; ++l) {
    EXPECT_EQ(sum.cellsPerLevel[l], sa.cellsPerLevel[l] + sb.cellsPerLevel[l]);
  }
}
