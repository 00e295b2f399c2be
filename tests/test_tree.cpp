// Octree invariants, moments against brute-force sums, and groups, on clustered random points
// (including exact duplicates, which force cells down to the deepest level).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "scenes.h"
#include "sim/common/group_runs.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/rng.h"

using namespace bhviz::sim;

namespace {

struct Built {
  std::vector<Vec4> pos;
  std::vector<std::uint64_t> keys;
  Tree tree;
};

Built build(std::size_t n, std::uint64_t seed, int nLeaf, Curve curve) {
  Built b;
  b.pos = bhviz::test::clusteredParticles(n, seed).posMass;
  const KeyFrame frame = keyFrameFor(cpu::boundingBox(b.pos));
  const std::vector<std::uint64_t> keys = cpu::computeKeys(b.pos, frame, curve);
  const std::vector<std::uint32_t> order = cpu::sortOrder(keys);
  std::vector<Vec4> sorted(n);
  for (std::size_t k = 0; k < n; ++k) {
    sorted[k] = b.pos[order[k]];
    b.keys.push_back(keys[order[k]]);
  }
  b.pos.swap(sorted);
  b.tree = cpu::buildTree(b.keys, frame, nLeaf);
  cpu::computeMoments(b.tree, b.pos, MacSetup{MacCode::Bonsai, 0.5f, 0.0f});
  return b;
}

bool inside(const Box& inner, const Box& outer) {
  return inner.lo.x >= outer.lo.x && inner.lo.y >= outer.lo.y && inner.lo.z >= outer.lo.z &&
         inner.hi.x <= outer.hi.x && inner.hi.y <= outer.hi.y && inner.hi.z <= outer.hi.z;
}

struct TreeCase {
  int nLeaf;
  Curve curve;
};

class TreeTest : public ::testing::TestWithParam<TreeCase> {
 protected:
  void SetUp() override {
    m_b = build(30000, 5 + GetParam().nLeaf, GetParam().nLeaf, GetParam().curve);
  }
  Built m_b;
};

}  // namespace

TEST_P(TreeTest, KeysAreSortedAndTheSortIsStable) {
  EXPECT_TRUE(std::is_sorted(m_b.keys.begin(), m_b.keys.end()));
  const std::vector<std::uint64_t> keys{5, 3, 5, 1, 3};
  EXPECT_EQ(cpu::sortOrder(keys), (std::vector<std::uint32_t>{3, 1, 4, 0, 2}));
}

TEST_P(TreeTest, EveryParticleIsInExactlyOneLeafAndLeavesAreSmall) {
  const Tree& t = m_b.tree;
  std::vector<int> owner(m_b.pos.size(), 0);
  bool sawDeepestLevel = false;
  for (std::uint32_t c = 0; c < t.cellCount(); ++c) {
    if (!t.isLeaf(c)) continue;
    if (t.level[c] == kMaxLevel)
      sawDeepestLevel = true;
    else
      EXPECT_LE(t.count[c], std::uint32_t(GetParam().nLeaf)) << "leaf " << c;
    EXPECT_GT(t.count[c], 0u);
    for (std::uint32_t i = t.first[c]; i < t.first[c] + t.count[c]; ++i) ++owner[i];
  }
  EXPECT_TRUE(std::all_of(owner.begin(), owner.end(), [](int k) { return k == 1; }));
  // The duplicates (3% of the points) share one key: only the deepest level can hold them.
  EXPECT_TRUE(sawDeepestLevel);
}

TEST_P(TreeTest, ChildrenPartitionTheirParentAndLieInsideIt) {
  const Tree& t = m_b.tree;
  ASSERT_EQ(t.levelBegin.front(), 0u);
  ASSERT_EQ(t.levelBegin.back(), t.cellCount());
  EXPECT_EQ(t.count[0], m_b.pos.size());
  for (std::uint32_t c = 0; c < t.cellCount(); ++c) {
    if (t.isLeaf(c)) {
      EXPECT_TRUE(t.level[c] == kMaxLevel || t.count[c] <= std::uint32_t(GetParam().nLeaf));
      continue;
    }
    EXPECT_GT(t.count[c], std::uint32_t(GetParam().nLeaf));
    ASSERT_LE(t.childCount[c], 8);
    std::uint32_t next = t.first[c];
    for (std::uint32_t k = t.child[c]; k < t.child[c] + t.childCount[c]; ++k) {
      EXPECT_EQ(t.level[k], t.level[c] + 1);
      EXPECT_EQ(t.first[k], next) << "children must be contiguous and in order";
      next += t.count[k];
      EXPECT_TRUE(inside(t.box[k], t.box[c]));
      // Geometric containment: a child's keys extend its parent's key prefix.
      const int shift = 3 * (kMaxLevel - t.level[c]);
      for (std::uint32_t i = t.first[k]; i < t.first[k] + t.count[k]; ++i) {
        ASSERT_EQ(m_b.keys[i] >> shift, m_b.keys[t.first[c]] >> shift);
      }
    }
    EXPECT_EQ(next, t.first[c] + t.count[c]);
  }
}

TEST_P(TreeTest, MomentsEqualBruteForceSums) {
  const Tree& t = m_b.tree;
  Rng rng(99);
  for (int trial = 0; trial < 300; ++trial) {
    const auto c = static_cast<std::uint32_t>(trial < 50 ? trial : rng.below(t.cellCount()));
    double m = 0, x = 0, y = 0, z = 0;
    for (std::uint32_t i = t.first[c]; i < t.first[c] + t.count[c]; ++i) {
      const Vec4 p = m_b.pos[i];
      m += p.w, x += p.w * double(p.x), y += p.w * double(p.y), z += p.w * double(p.z);
    }
    x /= m, y /= m, z /= m;
    double qxx = 0, qyy = 0, qzz = 0, qxy = 0, qxz = 0, qyz = 0, b2max = 0;
    Box box;
    for (std::uint32_t i = t.first[c]; i < t.first[c] + t.count[c]; ++i) {
      const Vec4 p = m_b.pos[i];
      const double dx = p.x - x, dy = p.y - y, dz = p.z - z;
      qxx += p.w * dx * dx, qyy += p.w * dy * dy, qzz += p.w * dz * dz;
      qxy += p.w * dx * dy, qxz += p.w * dx * dz, qyz += p.w * dy * dz;
      b2max = std::max(b2max, dx * dx + dy * dy + dz * dz);
      grow(box, xyz(p));
    }
    const Vec4 cm = t.comMass[c];
    const Quadrupole& q = t.quad[c];
    const double size = std::max(1e-6, double(t.bmax[c]));
    EXPECT_NEAR(cm.w, m, 1e-6 * m) << "cell " << c;
    EXPECT_NEAR(cm.x, x, 1e-5 * size + 1e-6);
    EXPECT_NEAR(cm.y, y, 1e-5 * size + 1e-6);
    EXPECT_NEAR(cm.z, z, 1e-5 * size + 1e-6);
    const double qscale = m * size * size;
    for (auto [got, want] :
         {std::pair{q.xx, qxx}, {q.yy, qyy}, {q.zz, qzz}, {q.xy, qxy}, {q.xz, qxz}, {q.yz, qyz}}) {
      EXPECT_NEAR(got, want, 2e-4 * qscale + 1e-12) << "cell " << c;
    }
    EXPECT_EQ(t.box[c].lo.x, box.lo.x);
    EXPECT_EQ(t.box[c].hi.z, box.hi.z);
    EXPECT_GE(t.bmax[c] * (1 + 1e-5) + 1e-6, std::sqrt(b2max)) << "bmax must bound every particle";
  }
}

TEST_P(TreeTest, GroupsAreSmallContiguousRunsInsideOneCell) {
  const Tree& t = m_b.tree;
  const std::size_t n = m_b.pos.size();
  const std::vector<Vec4> acc(n, Vec4{1, 0, 0, 0});
  std::vector<std::uint8_t> active(n, 1);
  const int nGroup = 64;
  Groups g = cpu::buildGroups(t, m_b.pos, acc, active, nGroup);
  std::uint32_t next = 0;
  std::size_t merged = 0;
  for (std::size_t k = 0; k < g.size(); ++k) {
    EXPECT_EQ(g.first[k], next);
    EXPECT_LE(g.count[k], std::uint32_t(nGroup));
    next += g.count[k];
    // The run is a whole cell, a piece of a leaf with more than nGroup particles, or a run of
    // consecutive children of one cell (so it lies inside that parent cell).
    const std::uint32_t end = g.first[k] + g.count[k];
    bool compact = false, wholeCell = false;
    for (std::uint32_t c = 0; c < t.cellCount() && !compact; ++c) {
      wholeCell = t.first[c] == g.first[k] && t.count[c] == g.count[k];
      compact =
          wholeCell || (t.isLeaf(c) && t.first[c] <= g.first[k] && end <= t.first[c] + t.count[c]);
      if (compact || t.isLeaf(c)) continue;
      bool startsAtChild = false, endsAtChild = false;
      for (std::uint32_t j = t.child[c]; j < t.child[c] + t.childCount[c]; ++j) {
        startsAtChild = startsAtChild || t.first[j] == g.first[k];
        endsAtChild = endsAtChild || t.first[j] + t.count[j] == end;
      }
      compact = startsAtChild && endsAtChild;
    }
    EXPECT_TRUE(compact) << "group " << k;
    if (!wholeCell) ++merged;
    for (std::uint32_t i = g.first[k]; i < g.first[k] + g.count[k]; ++i) {
      EXPECT_EQ(distSqPointBox(xyz(m_b.pos[i]), g.box[k]), 0.0f);
    }
  }
  EXPECT_EQ(next, n);
  if (t.count[0] > std::uint32_t(nGroup)) {
    EXPECT_GT(merged, 0u) << "small siblings are merged";
  }
  // Only groups with active particles are listed, and their boxes cover only those.
  std::fill(active.begin(), active.end(), 0);
  active[100] = active[20000] = 1;
  g = cpu::buildGroups(t, m_b.pos, acc, active, nGroup);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g.box[0].lo.x, m_b.pos[100].x);
  EXPECT_EQ(g.box[0].hi.x, m_b.pos[100].x);
}

namespace {

/// A block substep's targets: a tenth of the particles in one region, 1 % of the others.
std::vector<std::uint8_t> sparseTargets(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::uint8_t> active(n, 0);
  // A run of keys (one region, as a cusp's deepest bin), and a few particles elsewhere.
  for (std::size_t i = 0; i < n; ++i) {
    active[i] = (i >= n / 3 && i < n / 3 + n / 10) || rng.uniform() < 0.01 ? 1 : 0;
  }
  return active;
}

/// The exact box of the active particles in [first, end).
Box activeBox(const std::vector<Vec4>& pos, const std::vector<std::uint8_t>& active,
              std::uint32_t first, std::uint32_t end) {
  Box b;
  for (std::uint32_t i = first; i < end; ++i) {
    if (active[i]) grow(b, xyz(pos[i]));
  }
  return b;
}

std::uint32_t activeIn(const std::vector<std::uint8_t>& active, std::uint32_t first,
                       std::uint32_t end) {
  std::uint32_t m = 0;
  for (std::uint32_t i = first; i < end; ++i) m += active[i];
  return m;
}

}  // namespace

TEST_P(TreeTest, FewGroupsAreCutIntoRunsOfTheirTargets) {
  const std::size_t n = m_b.pos.size();
  std::vector<Vec4> acc(n);
  for (std::size_t i = 0; i < n; ++i) acc[i] = {1.0f + 0.001f * float(i % 997), 0, 0, 0};
  const std::vector<std::uint8_t> active = sparseTargets(n, 77);
  const Groups groups = cpu::buildGroups(m_b.tree, m_b.pos, acc, active, 64);
  const auto g = static_cast<std::uint32_t>(groups.size());
  ASSERT_LT(g, kRunsBelow);
  const std::uint32_t perGroup = runsPerGroup(g);
  ASSERT_GT(perGroup, 1u);
  Groups runs = groups;
  cpu::cutIntoRuns(runs, m_b.pos, active);

  std::size_t r = 0;
  for (std::uint32_t k = 0; k < g; ++k) {
    const std::uint32_t end = groups.first[k] + groups.count[k];
    const std::uint32_t m = activeIn(active, groups.first[k], end);
    const std::uint32_t q = std::min(m, perGroup);
    ASSERT_LE(r + q, runs.size());
    // The runs partition the group in key order, each holding ⌊m/q⌋ or ⌈m/q⌉ of its targets,
    // each after the first starting at a target; box exact over its own targets, inside the
    // group's; the group's |a_old| minimum, and its m targets for the expansion's rule.
    std::uint32_t next = groups.first[k];
    for (std::uint32_t j = 0; j < q; ++j, ++r) {
      EXPECT_EQ(runs.first[r], next) << "group " << k << " run " << j;
      const std::uint32_t runEnd = runs.first[r] + runs.count[r];
      next = runEnd;
      const std::uint32_t own = activeIn(active, runs.first[r], runEnd);
      EXPECT_GE(own, m / q);
      EXPECT_LE(own, (m + q - 1) / q);
      if (j > 0) {
        EXPECT_TRUE(active[runs.first[r]]) << "group " << k << " run " << j;
      }
      const Box exact = activeBox(m_b.pos, active, runs.first[r], runEnd);
      EXPECT_EQ(runs.box[r].lo.x, exact.lo.x);
      EXPECT_EQ(runs.box[r].lo.y, exact.lo.y);
      EXPECT_EQ(runs.box[r].lo.z, exact.lo.z);
      EXPECT_EQ(runs.box[r].hi.x, exact.hi.x);
      EXPECT_EQ(runs.box[r].hi.y, exact.hi.y);
      EXPECT_EQ(runs.box[r].hi.z, exact.hi.z);
      EXPECT_TRUE(inside(runs.box[r], groups.box[k]));
      EXPECT_EQ(runs.accMin[r], groups.accMin[k]);
      EXPECT_EQ(runs.expansionTargets(r, own), m);
    }
    EXPECT_EQ(next, end) << "group " << k;
  }
  EXPECT_EQ(r, runs.size());
  EXPECT_GT(runs.size(), groups.size() + 100) << "the dense region's ~50 groups are cut";
  ASSERT_EQ(runs.expandAs.size(), runs.size());

  // Enough groups: none is cut.
  const std::vector<std::uint8_t> all(n, 1);
  Groups many = cpu::buildGroups(m_b.tree, m_b.pos, acc, all, 1);
  ASSERT_GE(many.size(), kRunsBelow);
  const Groups before = many;
  cpu::cutIntoRuns(many, m_b.pos, all);
  EXPECT_EQ(many.first, before.first);
  EXPECT_EQ(many.count, before.count);
  EXPECT_TRUE(many.expandAs.empty());
}

TEST_P(TreeTest, RunsOpenNoMoreCellsThanTheirGroupsWithinTheMacsBound) {
  // Under the acceleration MAC, a run's box lies inside its group's and keeps the group's
  // |a_old| minimum: every cell its group accepted it accepts, so no target interacts more, and
  // each accepted cell still passes the MAC as seen from each of the run's targets.
  Tree t = m_b.tree;
  const MacSetup mac{MacCode::Acceleration, 0.5f, 1e-3f};
  cpu::computeMoments(t, m_b.pos, mac);
  const std::size_t n = m_b.pos.size();
  const float eps2 = 1e-4f;
  const std::vector<std::uint8_t> active = sparseTargets(n, 78);
  std::vector<std::uint32_t> targets;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (active[i]) targets.push_back(i);
  }
  // Exact accelerations (double) of the targets; their |a| is the MAC's |a_old|.
  std::vector<Vec4> old(n, Vec4{1, 0, 0, 0});
  std::vector<Vec3> exact(n);
  for (std::uint32_t i : targets) {
    double a[3] = {0, 0, 0};
    for (std::size_t j = 0; j < n; ++j) {
      const double d[3] = {double(m_b.pos[j].x) - m_b.pos[i].x, double(m_b.pos[j].y) - m_b.pos[i].y,
                           double(m_b.pos[j].z) - m_b.pos[i].z};
      const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2;
      const double w = m_b.pos[j].w / (r2 * std::sqrt(r2));
      for (int c = 0; c < 3; ++c) a[c] += w * d[c];
    }
    exact[i] = {float(a[0]), float(a[1]), float(a[2])};
    old[i] = {exact[i].x, exact[i].y, exact[i].z, 0};
  }
  const Groups groups = cpu::buildGroups(t, m_b.pos, old, active, 64);
  Groups runs = groups;
  cpu::cutIntoRuns(runs, m_b.pos, active);
  ASSERT_GT(runs.size(), groups.size());

  const auto interactions = [&](const Box& box, float accMin) {
    const cpu::InteractionList l = cpu::buildInteractionList(t, box, accMin, mac);
    std::uint64_t k = l.cells.size();
    for (std::uint32_t leaf : l.leaves) k += t.count[leaf];
    return k;
  };
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const std::int64_t k = cpu::groupContaining(groups, runs.first[r]);
    ASSERT_GE(k, 0);
    EXPECT_LE(interactions(runs.box[r], runs.accMin[r]),
              interactions(groups.box[k], groups.accMin[k]))
        << "run " << r;
  }

  const cpu::WalkSettings ws{mac, true, std::sqrt(eps2)};
  std::vector<Vec4> whole(n), cut(n);
  const InteractionCounts a = cpu::walkGroups(t, groups, m_b.pos, active, ws, whole);
  const InteractionCounts b = cpu::walkGroups(t, runs, m_b.pos, active, ws, cut);
  EXPECT_EQ(a.targets, b.targets);
  EXPECT_LT(b.cell + b.particle, a.cell + a.particle);
  // Relative errors against the exact sums, sorted.
  const auto errors = [&](const std::vector<Vec4>& got) {
    std::vector<double> e;
    for (std::uint32_t i : targets) {
      const Vec3 d = xyz(got[i]) - exact[i];
      e.push_back(std::sqrt(double(dot(d, d)) / double(dot(exact[i], exact[i]))));
    }
    std::sort(e.begin(), e.end());
    return e;
  };
  const std::vector<double> ew = errors(whole), ec = errors(cut);
  const std::size_t p99 = ew.size() * 99 / 100;
  // Fewer cells opened take some of the surplus accuracy a group's larger box gave its targets
  // (here 27–29 % less work for a p99 ~20 % higher); the bound each target gets stays α|a_old|.
  EXPECT_GT(ew[p99], 0.0);
  EXPECT_LE(ec[p99], 1.5 * ew[p99]) << "whole groups' p99 " << ew[p99];
  EXPECT_LE(ec.back(), 1.5 * ew.back()) << "whole groups' worst " << ew.back();
  EXPECT_LT(ec.back(), 2 * mac.param) << "the MAC's α " << mac.param;
}

INSTANTIATE_TEST_SUITE_P(
    LeafSizesAndCurves, TreeTest,
    ::testing::Values(TreeCase{1, Curve::Hilbert}, TreeCase{16, Curve::Hilbert},
                      TreeCase{16, Curve::Morton}, TreeCase{64, Curve::Morton}),
    [](const auto& info) {
      return std::string(info.param.curve == Curve::Hilbert ? "Hilbert" : "Morton") + "Leaf" +
             std::to_string(info.param.nLeaf);
    });
