// A tree rebuilt around the targets (sim/cpu/local_rebuild.cpp): the cells covering the targets
// have their particles keyed and sorted again and their subtrees spliced into the last tree.
// The spliced tree must be exactly the tree a whole build of the same keys gives: for random
// covers (the root, leaves, duplicates, wide moves) on fresh random inputs (BHVIZ_TEST_SEED
// repeats a run), and for fixed ones (cells at two levels, one new subtree deeper than the old
// tree, a cell of the deepest level, none).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "scenes.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/ic/initial_conditions.h"
#include "sim/rng.h"
#include "tree_compare.h"

namespace bhviz::test {
namespace {

using sim::Particles;
using sim::Tree;

/// A state in key order, its sorted keys and the tree of them.
struct Sorted {
  Particles p;
  std::vector<std::uint64_t> keys;
  Tree tree;
};

Sorted sortAndBuild(Particles p, int nLeaf) {
  Sorted s;
  s.tree = sim::cpu::buildSortedTree(p, sim::Curve::Hilbert, nLeaf,
                                     sim::macSetup(sim::SimParams{}, false), nullptr, nullptr,
                                     nullptr, &s.keys);
  s.p = std::move(p);
  return s;
}

/// The same topology (tree_compare.h), and a's moment arrays sized for its cells.
void expectSameTree(const Tree& a, const Tree& b) {
  expectSameTopology(a, b);
  EXPECT_EQ(a.comMass.size(), b.cellCount());
}

/// Moves the particles of the active set by up to `reach` in each axis (they may leave their
/// cells), as a cusp's particles do over one substep.
void moveActive(Particles& p, const std::vector<std::uint8_t>& active, float reach,
                std::uint64_t seed) {
  sim::Rng rng(seed);
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (!active[i]) continue;
    p.posMass[i].x += float(rng.uniform(-reach, reach));
    p.posMass[i].y += float(rng.uniform(-reach, reach));
    p.posMass[i].z += float(rng.uniform(-reach, reach));
  }
}

struct Case {
  const char* scene;
  int nLeaf;
  double activeShare;  // of the particles near the densest point
  float reach;
  double coverShare;  // coverTargets' share
};

class LocalRebuild : public ::testing::TestWithParam<Case> {};

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  char s[96];
  std::snprintf(s, sizeof s, "%s_leaf%d_active%03d_reach%03d_share%03d", c.scene, c.nLeaf,
                int(c.activeShare * 1000), int(c.reach * 1000), int(c.coverShare * 100));
  return s;
}

}  // namespace

TEST_P(LocalRebuild, TheSplicedTreeIsTheWholeBuildOfTheSameKeys) {
  const Case& c = GetParam();
  const std::uint64_t seed = testSeed("test_local_rebuild") + std::uint64_t(c.nLeaf) * 7919u +
                             std::uint64_t(c.activeShare * 1e4) + std::uint64_t(c.reach * 1e5);
  const std::size_t n = 20000;
  const Particles start =
      std::string(c.scene) == "plummer" ? sim::makePlummer(n, seed) : clusteredParticles(n, seed);
  Sorted s = sortAndBuild(start, c.nLeaf);

  // The active particles: those nearest some particle's position (a cusp), in key order.
  sim::Rng rng(seed + 1);
  const sim::Vec4 centre = s.p.posMass[rng.next() % n];
  std::vector<std::pair<float, std::uint32_t>> byDistance(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const sim::Vec4 x = s.p.posMass[i];
    const float dx = x.x - centre.x, dy = x.y - centre.y, dz = x.z - centre.z;
    byDistance[i] = {dx * dx + dy * dy + dz * dz, i};
  }
  std::sort(byDistance.begin(), byDistance.end());
  std::vector<std::uint8_t> active(n, 0);
  for (std::size_t k = 0; k < std::size_t(c.activeShare * n); ++k) active[byDistance[k].second] = 1;

  const std::vector<std::uint32_t> cover = sim::cpu::coverTargets(s.tree, active, c.coverShare);
  ASSERT_FALSE(cover.empty());
  // The cover: disjoint cells in key order holding every active particle.
  std::vector<std::uint8_t> covered(n, 0);
  std::uint32_t end = 0;
  for (const std::uint32_t cell : cover) {
    EXPECT_GE(s.tree.first[cell], end) << "cells overlap or are out of key order";
    end = s.tree.first[cell] + s.tree.count[cell];
    for (std::uint32_t i = s.tree.first[cell]; i < end; ++i) covered[i] = 1;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (active[i]) {
      ASSERT_TRUE(covered[i]) << "an active particle outside the cover";
    }
  }
  // The rule, by brute force: each covered cell holds targets and stops the split (a leaf, or
  // its targets at least the share of its particles), and every cell above it split, up to the
  // smallest cell holding every target.
  const auto targetsIn = [&](std::uint32_t cell) {
    std::size_t k = 0;
    for (std::uint32_t i = s.tree.first[cell]; i < s.tree.first[cell] + s.tree.count[cell]; ++i) {
      k += active[i];
    }
    return k;
  };
  const std::size_t total = targetsIn(0);
  std::vector<std::uint32_t> parent(s.tree.cellCount(), 0);
  for (std::uint32_t cell = 0; cell < s.tree.cellCount(); ++cell) {
    for (std::uint32_t j = 0; j < s.tree.childCount[cell]; ++j)
      parent[s.tree.child[cell] + j] = cell;
  }
  for (const std::uint32_t cell : cover) {
    const std::size_t k = targetsIn(cell);
    EXPECT_GT(k, 0u) << "cell " << cell;
    EXPECT_TRUE(s.tree.isLeaf(cell) || double(k) >= c.coverShare * s.tree.count[cell])
        << "cell " << cell << " should have been split";
    for (std::uint32_t a = cell; a != 0 && targetsIn(a) < total;) {
      a = parent[a];
      EXPECT_LT(double(targetsIn(a)), c.coverShare * s.tree.count[a])
          << "cell " << a << " above cell " << cell << " should have stopped the split";
    }
  }

  moveActive(s.p, active, c.reach, seed + 2);
  std::vector<std::uint64_t> keys = s.keys;
  Particles moved = s.p;
  sim::cpu::rekeyCells(s.tree, cover, sim::Curve::Hilbert, moved, keys);
  // Still sorted, outside the cover unchanged, and each particle's key is its position's where
  // it stayed in its cell's cube.
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  std::size_t rekeyed = 0, inCube = 0;
  const std::vector<std::uint64_t> fromPositions =
      sim::cpu::computeKeys(moved.posMass, s.tree.frame, sim::Curve::Hilbert);
  for (std::size_t i = 0; i < n; ++i) {
    if (!covered[i]) {
      ASSERT_EQ(keys[i], s.keys[i]);
      ASSERT_EQ(moved.id[i], s.p.id[i]);
      continue;
    }
    ++rekeyed;
    inCube += keys[i] == fromPositions[i];
  }
  std::printf(
      "  %zu cells cover %zu particles; %zu keys are their positions' (the rest left "
      "their cell's cube)\n",
      cover.size(), rekeyed, inCube);
  EXPECT_GT(inCube, rekeyed / 2);
  // Each covered range keeps its cell's prefix (its place in key order).
  for (const std::uint32_t cell : cover) {
    const int bits = 3 * (sim::kMaxLevel - s.tree.level[cell]);
    const std::uint64_t prefix = bits >= 64 ? 0 : s.keys[s.tree.first[cell]] >> bits;
    for (std::uint32_t i = s.tree.first[cell]; i < s.tree.first[cell] + s.tree.count[cell]; ++i) {
      ASSERT_EQ(bits >= 64 ? 0 : keys[i] >> bits, prefix) << "cell " << cell;
    }
  }

  const Tree whole = sim::cpu::buildTree(keys, s.tree.frame, c.nLeaf);
  const Tree spliced = sim::cpu::spliceSubtrees(s.tree, keys, cover, c.nLeaf);
  expectSameTree(spliced, whole);
  RecordProperty("cells", int(whole.cellCount()));
  RecordProperty("depth old/new",
                 std::to_string(s.tree.depth()) + "/" + std::to_string(whole.depth()));
}

INSTANTIATE_TEST_SUITE_P(
    Covers, LocalRebuild,
    ::testing::Values(Case{"plummer", 16, 0.05, 0.02f, 0.25}, Case{"plummer", 16, 0.05, 0.2f, 0.25},
                      Case{"plummer", 4, 0.02, 0.05f, 0.5}, Case{"plummer", 64, 0.3, 0.1f, 0.1},
                      Case{"plummer", 16, 1.0, 0.05f, 0.25},     // the root
                      Case{"plummer", 16, 0.0005, 0.01f, 1.0},   // leaves
                      Case{"clustered", 1, 0.05, 0.001f, 0.25},  // duplicates: the deepest level
                      Case{"clustered", 8, 0.1, 0.5f, 0.25}, Case{"clustered", 2, 0.6, 0.02f, 0.9}),
    caseName);

// A cover must be disjoint cells: a cell and its child, or one cell twice, are refused.
TEST(LocalRebuildCover, OverlappingCellsAreRefused) {
  const Sorted s = sortAndBuild(sim::makePlummer(2000, 3), 8);
  ASSERT_GT(s.tree.childCount[0], 0);
  const std::uint32_t child = s.tree.child[0];
  EXPECT_THROW(sim::cpu::spliceSubtrees(s.tree, s.keys, {0, child}, 8), std::invalid_argument);
  EXPECT_THROW(sim::cpu::spliceSubtrees(s.tree, s.keys, {child, child}, 8), std::invalid_argument);
  EXPECT_THROW(sim::cpu::spliceSubtrees(s.tree, s.keys, {std::uint32_t(s.tree.cellCount())}, 8),
               std::out_of_range);
  // Unchanged keys: the spliced tree is the old one.
  expectSameTree(sim::cpu::spliceSubtrees(s.tree, s.keys, {child}, 8), s.tree);
}

/// The particles of `cell` moved onto one point of its cube (its new subtree then reaches the
/// deepest level) or spread uniformly over it.
void gatherOrSpread(Sorted& s, std::uint32_t cell, bool gather, std::uint64_t seed) {
  const sim::KeyCoords q = sim::decodeKey(sim::Curve::Hilbert, s.keys[s.tree.first[cell]]);
  const sim::Box cube = sim::cellCube(q, s.tree.level[cell], s.tree.frame);
  sim::Rng rng(seed);
  for (std::uint32_t i = s.tree.first[cell]; i < s.tree.first[cell] + s.tree.count[cell]; ++i) {
    sim::Vec4& x = s.p.posMass[i];
    if (gather) {
      x.x = 0.5f * (cube.lo.x + cube.hi.x), x.y = 0.5f * (cube.lo.y + cube.hi.y);
      x.z = 0.5f * (cube.lo.z + cube.hi.z);
    } else {
      x.x = float(rng.uniform(cube.lo.x, cube.hi.x)),
      x.y = float(rng.uniform(cube.lo.y, cube.hi.y));
      x.z = float(rng.uniform(cube.lo.z, cube.hi.z));
    }
  }
}

/// The last cell of `level` with children and more than `atLeast` particles that lies wholly
/// after cell `after`'s range, or before it (`before`); 0 where there is none.
std::uint32_t cellAt(const Tree& t, int level, std::uint32_t atLeast, std::uint32_t other,
                     bool before) {
  std::uint32_t found = 0;
  for (std::uint32_t c = t.levelBegin[level]; c < t.levelBegin[level + 1]; ++c) {
    const bool placed = before ? t.first[c] + t.count[c] <= t.first[other]
                               : t.first[c] >= t.first[other] + t.count[other];
    if (t.childCount[c] > 0 && t.count[c] > atLeast && placed) found = c;
  }
  return found;
}

// Fixed covers the random ones may miss: two cells at different levels, the one
// earlier in key order gathered (its new subtree deeper than the old tree) while the later one
// is spread, and the mirror; a cell of the deepest level; an empty cover.
TEST(LocalRebuildDepth, CellsAtTwoLevelsOneGatheredOneSpread) {
  for (const bool earlierGathered : {true, false}) {
    SCOPED_TRACE(earlierGathered ? "the earlier gathered" : "the later gathered");
    Sorted s = sortAndBuild(sim::makePlummer(8000, testSeed("test_local_rebuild") + 9), 8);
    // A: a cell with children; B: one with children two levels deeper (or one), outside A,
    // after it in key order or before it. The first such pair from the top.
    std::uint32_t a = 0, b = 0, earlier = 0, later = 0;
    for (int level = 1; level + 2 < s.tree.depth() && b == 0; ++level) {
      for (std::uint32_t c = s.tree.levelBegin[level]; c < s.tree.levelBegin[level + 1] && b == 0;
           ++c) {
        if (s.tree.childCount[c] == 0) continue;
        for (const int deeper : {level + 2, level + 1}) {
          if (b != 0) break;
          if ((b = cellAt(s.tree, deeper, 8, c, false)) != 0) {
            a = c, earlier = c, later = b;
          } else if ((b = cellAt(s.tree, deeper, 8, c, true)) != 0) {
            a = c, earlier = b, later = c;
          }
        }
      }
    }
    ASSERT_NE(b, 0u);
    std::printf("  cells at levels %d and %d\n", int(s.tree.level[a]), int(s.tree.level[b]));
    gatherOrSpread(s, earlier, earlierGathered, 11);
    gatherOrSpread(s, later, !earlierGathered, 12);
    std::vector<std::uint64_t> keys = s.keys;
    sim::cpu::rekeyCells(s.tree, {a, b}, sim::Curve::Hilbert, s.p, keys);
    const Tree whole = sim::cpu::buildTree(keys, s.tree.frame, 8);
    EXPECT_GT(whole.depth(), s.tree.depth()) << "a gathered cell reaches the deepest level";
    expectSameTree(sim::cpu::spliceSubtrees(s.tree, keys, {a, b}, 8), whole);
  }
  // A cell of the deepest level (a pile of duplicates at N_leaf 1), and no cell at all.
  Sorted s = sortAndBuild(clusteredParticles(4000, testSeed("test_local_rebuild") + 13), 1);
  const std::uint32_t deepest = s.tree.levelBegin[s.tree.depth() - 1];
  ASSERT_EQ(s.tree.level[deepest], sim::kMaxLevel);
  std::vector<std::uint64_t> keys = s.keys;
  sim::cpu::rekeyCells(s.tree, {deepest}, sim::Curve::Hilbert, s.p, keys);
  expectSameTree(sim::cpu::spliceSubtrees(s.tree, keys, {deepest}, 1),
                 sim::cpu::buildTree(keys, s.tree.frame, 1));
  expectSameTree(sim::cpu::spliceSubtrees(s.tree, s.keys, {}, 1), s.tree);
}

}  // namespace bhviz::test
