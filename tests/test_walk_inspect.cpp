// The walk made visible (sim/cpu/walk_inspect.h): the recorded trace against the walk's own
// interaction list, the MAC explanation against mustOpen, and the inspection tree against the
// backend's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "scenes.h"
#include "sim/common/local_expansion.h"
#include "sim/cpu/cpu_backend.h"
#include "sim/cpu/walk_inspect.h"
#include "sim/ic/initial_conditions.h"
#include "sim/rng.h"
#include "test_support.h"

using namespace bhviz;
using namespace bhviz::sim;

namespace {

SimParams paramsFor(MacKind mac) {
  SimParams p;
  p.mac = mac;
  p.theta = 0.6f;
  p.softening = 0.05f;
  return p;
}

std::vector<std::uint32_t> sorted(std::vector<std::uint32_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::string num(float v) {
  char s[32];
  std::snprintf(s, sizeof s, "%.3g", static_cast<double>(v));
  return s;
}

const MacKind kMacs[] = {MacKind::BarnesHut, MacKind::Bonsai, MacKind::Multipole,
                         MacKind::Acceleration};

}  // namespace

// For every MAC and every group of a Plummer sphere: the trace's final accepted, leaf and opened
// cells are exactly the walk's interaction list (as sets, and so in number), each cell is tested
// once, and each front holds exactly the children of the cells the previous front opened.
TEST(WalkTrace, FinalSetsEqualTheInteractionListForEveryMac) {
  const Particles in = makePlummer(3000, 5);
  for (MacKind kind : kMacs) {
    SCOPED_TRACE(std::string(toString(kind)));
    const SimParams p = paramsFor(kind);
    CpuBackend backend;
    backend.upload(in);
    // Twice, so the acceleration MAC runs on old accelerations rather than its θ fallback.
    backend.computeForces(Clock{0.0, 0, 0, p.dtMax}, p, ForceTargets::All, false);
    backend.computeForces(Clock{0.0, 0, 0, p.dtMax}, p, ForceTargets::All, true);
    const MacSetup mac = macSetup(p, true);
    const Tree& tree = backend.tree();
    const Groups& groups = backend.groups();
    ASSERT_GT(groups.size(), 20u);
    std::size_t opened = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const auto exported = backend.interactionsOfGroup(g);
      const auto fronts = cpu::traceWalk(tree, groups.box[g], groups.accMin[g], mac);
      const cpu::InteractionList traced = cpu::listOfTrace(fronts);
      ASSERT_EQ(traced.cells.size(), exported.list.cells.size()) << "group " << g;
      ASSERT_EQ(traced.leaves.size(), exported.list.leaves.size()) << "group " << g;
      ASSERT_EQ(traced.opened.size(), exported.list.opened.size()) << "group " << g;
      ASSERT_EQ(sorted(traced.cells), sorted(exported.list.cells)) << "group " << g;
      ASSERT_EQ(sorted(traced.leaves), sorted(exported.list.leaves)) << "group " << g;
      ASSERT_EQ(sorted(traced.opened), sorted(exported.list.opened)) << "group " << g;
      opened += traced.opened.size();

      ASSERT_EQ(fronts.front().cells, std::vector<std::uint32_t>{0});
      for (std::size_t k = 0; k + 1 < fronts.size(); ++k) {
        std::vector<std::uint32_t> children;
        for (std::size_t i = 0; i < fronts[k].cells.size(); ++i) {
          if (fronts[k].verdicts[i] != cpu::CellVerdict::Opened) continue;
          const std::uint32_t c = fronts[k].cells[i];
          for (std::uint32_t j = tree.child[c]; j < tree.child[c] + tree.childCount[c]; ++j) {
            children.push_back(j);
          }
        }
        ASSERT_EQ(children, fronts[k + 1].cells) << "group " << g << " front " << k + 1;
        ASSERT_EQ(fronts[k + 1].verdicts.size(), fronts[k + 1].cells.size());
      }
      // The last front opens nothing (or the walk would go on).
      for (cpu::CellVerdict v : fronts.back().verdicts) ASSERT_NE(v, cpu::CellVerdict::Opened);
    }
    EXPECT_GT(opened, groups.size());  // the walks really descend
  }
}

// The inspection tree rebuilt from a downloaded state (what the app does on a pick, for any
// backend) is the backend's tree: same cells, same groups, same lists.
TEST(WalkScene, RebuiltFromAStateEqualsTheBackendsTree) {
  const Particles in = makePlummer(3000, 9);
  const SimParams p = paramsFor(MacKind::Bonsai);
  CpuBackend backend;
  backend.upload(in);
  backend.computeForces(Clock{0.0, 0, 0, p.dtMax}, p, ForceTargets::All, false);
  Particles state;
  backend.download(state);
  // Shuffled, as another backend's order would be.
  std::reverse(state.posMass.begin(), state.posMass.end());
  std::reverse(state.vel.begin(), state.vel.end());
  std::reverse(state.accPot.begin(), state.accPot.end());
  std::reverse(state.id.begin(), state.id.end());
  std::reverse(state.tag.begin(), state.tag.end());
  std::reverse(state.bin.begin(), state.bin.end());
  const cpu::WalkScene scene = cpu::buildWalkScene(state, p, true);
  ASSERT_EQ(scene.tree.cellCount(), backend.tree().cellCount());
  EXPECT_EQ(scene.tree.count, backend.tree().count);
  EXPECT_EQ(scene.groups.first, backend.groups().first);
  EXPECT_EQ(scene.particles.id, backend.particles().id);
  for (std::uint32_t id : {0u, 1234u, 2999u}) {
    const std::int64_t i = cpu::indexOfId(scene.particles, id);
    ASSERT_GE(i, 0);
    EXPECT_EQ(scene.particles.id[static_cast<std::size_t>(i)], id);
    const std::int64_t g = cpu::groupContaining(scene.groups, static_cast<std::uint32_t>(i));
    ASSERT_GE(g, 0);
    const auto exported = backend.interactionListOf(id);
    EXPECT_EQ(static_cast<std::size_t>(g), exported.group);
    const auto gi = static_cast<std::size_t>(g);
    const cpu::InteractionList list = cpu::buildInteractionList(scene.tree, scene.groups.box[gi],
                                                                scene.groups.accMin[gi], scene.mac);
    EXPECT_EQ(list.cells, exported.list.cells);
    EXPECT_EQ(list.leaves, exported.list.leaves);
    EXPECT_EQ(list.opened, exported.list.opened);
  }
  EXPECT_EQ(cpu::indexOfId(scene.particles, 3000), -1);
}

// The cells the inspection shows as expanded about their group's centre are those the walk
// expanded: summed over every group of the scene (each of its particles a target), the walk's own
// count (TargetBlock's, InteractionCounts::expanded) for every MAC, and none at rho 0; by distance
// alone and with the mass rule (which needs |a_old|: the scene is of the state the second walk
// started from). The text of an expanded cell says so, with the distances it compares.
TEST(WalkScene, ExpandedCellsAreTheWalksOwn) {
  const Particles in = makePlummer(4000, 21);
  for (const MacKind mac : {MacKind::Bonsai, MacKind::Multipole, MacKind::Acceleration}) {
    for (const float ratio : {0.0f, 0.08f, 0.2f}) {
      for (const float budget : {0.0f, 1.0f}) {
        SCOPED_TRACE(std::string(toString(mac)) + " rho " + std::to_string(ratio) + " budget " +
                     std::to_string(budget));
        SimParams p = paramsFor(mac);
        p.expansionRatio = ratio;
        p.expansionBudget = budget;
        CpuBackend backend;
        backend.upload(in);
        backend.computeForces(Clock{0.0, 0, 0, p.dtMax}, p, ForceTargets::All, false);
        Particles state;
        backend.download(state);
        const std::uint64_t before = backend.profile().interactions.expanded;  // it accumulates
        backend.computeForces(Clock{0.0, 0, 0, p.dtMax}, p, ForceTargets::All, true);
        const std::uint64_t walked = backend.profile().interactions.expanded - before;
        const cpu::WalkScene scene = cpu::buildWalkScene(state, p, true);
        std::uint64_t shown = 0;
        for (std::size_t g = 0; g < scene.groups.size(); ++g) {
          const cpu::InteractionList list = cpu::buildInteractionList(
              scene.tree, scene.groups.box[g], scene.groups.accMin[g], scene.mac);
          const ExpansionCentre e = cpu::groupExpansion(scene, g);
          for (std::uint32_t c : list.cells) {
            shown += expands(e, scene.tree.comMass[c]) ? scene.groups.count[g] : 0;
          }
        }
        EXPECT_EQ(shown, walked);
        if (ratio == 0.0f) {
          EXPECT_EQ(walked, 0u);
        } else if (ratio == 0.2f) {
          EXPECT_GT(walked, 0u);
        }
      }
    }
  }
  // One group's walk: the expanded cells' count and explanations.
  SimParams p = paramsFor(MacKind::Bonsai);
  p.expansionRatio = 0.2f;
  const cpu::GroupWalk walk(in, p, 17);
  ASSERT_GT(walk.expandedCount(), 0u);
  ASSERT_LT(walk.expandedCount(), walk.list().cells.size());
  for (std::uint32_t c : walk.list().cells) {
    const cpu::MacExplanation e = walk.explain(c);
    EXPECT_EQ(e.expanded, walk.expanded(c));
    EXPECT_EQ(e.test.find("expanded about that centre") != std::string::npos, e.expanded) << e.test;
    EXPECT_EQ(e.test.find("accepted (multipole)") != std::string::npos, !e.expanded) << e.test;
  }
  // With forces in the state (|a_old|), cells nearer than (group radius)/rho are expanded too
  // when light enough, and the text says which rule took each.
  p.expansionRatio = 0.08f;
  p.expansionBudget = 4.0f;
  const cpu::GroupWalk withForces(test::treeForces(in, p), p, 17);
  std::size_t byMass = 0;
  for (std::uint32_t c : withForces.list().cells) {
    const cpu::MacExplanation e = withForces.explain(c);
    const bool light = e.test.find("light for its distance") != std::string::npos;
    EXPECT_EQ(e.test.find("expanded about that centre") != std::string::npos, e.expanded);
    if (light) {
      EXPECT_TRUE(e.expanded) << e.test;
      ++byMass;
    }
  }
  EXPECT_GT(byMass, 0u) << "no cell expanded by the mass rule";
}

// On random cells of a clustered tree and random group boxes, for every MAC: the explanation's
// verdict is mustOpen's (called here directly, not through the walk's helpers), and its text
// carries the numbers of the test.
TEST(MacExplanation, VerdictIsTheMacsAndTheTextHasTheNumbers) {
  const std::uint64_t seed = test::testSeed("test_walk_inspect");
  Rng rng(seed);
  const Particles in = test::clusteredParticles(5000, seed);
  for (MacKind kind : kMacs) {
    SCOPED_TRACE(std::string(toString(kind)));
    SimParams p = paramsFor(kind);
    if (kind == MacKind::Multipole) p.macParam = 1e-3f;
    const cpu::WalkScene scene = cpu::buildWalkScene(in, p, true);
    const Tree& t = scene.tree;
    ASSERT_EQ(scene.mac.code, static_cast<MacCode>(kind));
    int verdicts[3] = {0, 0, 0};
    for (int trial = 0; trial < 2000; ++trial) {
      const auto c = static_cast<std::uint32_t>(rng.next() % t.cellCount());
      // Half the groups anywhere, half near the cell (where it is opened more often).
      const Vec3 com = xyz(t.comMass[c]);
      const float near = 3.0f * t.side(c);
      const Vec3 centre = trial % 2 == 0
                              ? Vec3{float(rng.uniform(-5, 5)), float(rng.uniform(-5, 5)),
                                     float(rng.uniform(-2, 2))}
                              : Vec3{com.x + float(rng.uniform(-near, near)),
                                     com.y + float(rng.uniform(-near, near)),
                                     com.z + float(rng.uniform(-near, near))};
      const float h = float(rng.uniform(0.001, 0.5));
      const Box group{{centre.x - h, centre.y - h, centre.z - h},
                      {centre.x + h, centre.y + h, centre.z + h}};
      const float accMin = float(rng.uniform(0.01, 10.0));
      const cpu::MacExplanation e = cpu::explainMac(t, c, group, accMin, scene.mac);

      const float d2 = distSqPointBox(xyz(t.comMass[c]), group);
      const bool overlap = overlaps(t.box[c], group);
      const bool open = mustOpen(scene.mac.code, t.opening[c], d2, accMin, overlap);
      const cpu::CellVerdict expected = !open         ? cpu::CellVerdict::Accepted
                                        : t.isLeaf(c) ? cpu::CellVerdict::Leaf
                                                      : cpu::CellVerdict::Opened;
      ASSERT_EQ(e.verdict, expected) << "cell " << c << ": " << e.test;
      ++verdicts[static_cast<int>(e.verdict)];
      EXPECT_EQ(e.particles, t.count[c]);
      EXPECT_FLOAT_EQ(e.distance, std::sqrt(d2));
      EXPECT_EQ(e.test.find("-> accepted") != std::string::npos, !open) << e.test;
      if (overlap) {
        EXPECT_NE(e.test.find("overlaps"), std::string::npos) << e.test;
        continue;
      }
      const float d = std::sqrt(d2);
      const float l = tightSide(t.box[c]);
      std::vector<std::string> numbers;
      switch (kind) {
        case MacKind::BarnesHut:
          numbers = {num(t.side(c) / d), num(p.theta), num(t.side(c))};
          break;
        case MacKind::Bonsai:
          numbers = {num(d), num(std::sqrt(t.opening[c])), num(l), num(p.theta),
                     num(comOffset(t.box[c], xyz(t.comMass[c])))};
          break;
        case MacKind::Multipole:
          numbers = {num(d), num(std::sqrt(t.opening[c])), num(t.bmax[c]), num(p.macParam)};
          break;
        case MacKind::Acceleration:
          numbers = {num(d2 * d2 * accMin), num(t.opening[c]), num(t.comMass[c].w), num(l),
                     num(accMin)};
          break;
      }
      for (const std::string& n : numbers) {
        ASSERT_NE(e.test.find(" " + n), std::string::npos) << n << " missing from: " << e.test;
      }
    }
    // The random cells reached every verdict, so each branch of the text was checked.
    EXPECT_GT(verdicts[0], 10);
    EXPECT_GT(verdicts[1], 10);
    EXPECT_GT(verdicts[2], 10);
  }
}
