// The Tree panel's statistics without a window: the feed that fetches them for the panel (only
// while it is open, at most twice a second, afresh after a rebuild) and the texts of the
// hovered bars. The panel's drawing runs in test_window (every panel open).
#include <gtest/gtest.h>

#include <chrono>

#include "app/window/tree_stats_view.h"
#include "sim/ic/initial_conditions.h"
#include "sim/simulation.h"

using namespace bhviz;
using std::chrono::milliseconds;

namespace {

sim::Simulation plummer(std::size_t n) {
  sim::SimParams p;
  return sim::Simulation(sim::makeCpuBackend(), sim::makePlummer(n, 8), p);
}

}  // namespace

TEST(TreeStatsFeed, FetchesWhileOpenAtMostTwiceASecond) {
  sim::Simulation sim = plummer(2000);
  app::TreeStatsFeed feed;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(feed.update(sim, false, t0)) << "the panel is closed";
  EXPECT_FALSE(feed.view().valid);
  ASSERT_TRUE(feed.update(sim, true, t0));
  EXPECT_TRUE(feed.view().valid);
  EXPECT_EQ(feed.view().stats.targets, 2000u);
  EXPECT_EQ(feed.view().stats.particles, 2000u);
  EXPECT_EQ(feed.view().time, sim.time());
  EXPECT_FALSE(feed.update(sim, true, t0 + milliseconds(200)));
  sim.advance(1);
  EXPECT_FALSE(feed.update(sim, true, t0 + milliseconds(400)));
  EXPECT_EQ(feed.view().time, 0.0) << "the view keeps the last fetch until the next";
  EXPECT_TRUE(feed.update(sim, true, t0 + milliseconds(500)));
  EXPECT_EQ(feed.view().time, sim.time());
  EXPECT_GT(sim.time(), 0.0);

  // A minute of frames at 60 per second: two fetches a second, none while closed.
  int fetches = 0;
  for (int frame = 0; frame < 3600; ++frame) {
    const bool open = frame < 1800;
    fetches += feed.update(sim, open, t0 + milliseconds(1000 + frame * 1000 / 60));
  }
  EXPECT_GE(fetches, 58);
  EXPECT_LE(fetches, 61);

  // A new simulation: forgotten, and fetched at the next frame whatever the interval.
  feed.reset();
  EXPECT_FALSE(feed.view().valid);
  sim::Simulation other = plummer(3000);
  const auto later = t0 + milliseconds(61000);
  ASSERT_TRUE(feed.update(other, true, later));
  EXPECT_EQ(feed.view().stats.particles, 3000u);
  EXPECT_FALSE(feed.update(other, true, later + milliseconds(10)));
}

TEST(TreeStatsText, CountsWithThousands) {
  EXPECT_EQ(app::countText(0), "0");
  EXPECT_EQ(app::countText(999), "999");
  EXPECT_EQ(app::countText(1000), "1,000");
  EXPECT_EQ(app::countText(1234567), "1,234,567");
}

TEST(TreeStatsText, HoveredBarsSayTheirNumbers) {
  sim::TreeStatistics s;
  s.cells = 1000;
  s.leaves = 400;
  s.particles = 5000;
  s.targets = 10000;
  s.leafSize = 16;
  s.cellsPerLevel[3] = 250;
  s.leavesPerLevel[3] = 100;
  s.leavesByOccupancy[12] = 50;
  s.leavesByOccupancy[1] = 1;
  s.leavesByOccupancy[17] = 1;
  s.overfullParticles = 900;
  s.interactionsLog2[10] = 5123;
  s.interactionsLog2[0] = 1;
  EXPECT_EQ(app::levelBarText(s, 3), "level 3: 250 cells (25.0 % of 1,000), 100 of them leaves");
  EXPECT_EQ(app::occupancyBarText(s, 12),
            "leaves of 12 particles: 50 (12.5 % of leaves, 12.0 % of particles)");
  EXPECT_EQ(app::occupancyBarText(s, 1),
            "leaves of 1 particle: 1 (0.2 % of leaves, 0.0 % of particles)");
  EXPECT_EQ(app::occupancyBarText(s, 17),
            "leaves of more than 16 particles (deepest level): 1 (0.2 % of leaves, 18.0 % of "
            "particles)");
  EXPECT_EQ(app::interactionBarText(s, 10),
            "2^10-2^11 interactions (1,024-2,047): 5,123 particles (51.2 % of targets)");
  EXPECT_EQ(app::interactionBarText(s, 0),
            "2^0-2^1 interactions (0-1): 1 particle (0.0 % of targets)");
  // Outside the histograms: nothing.
  EXPECT_EQ(app::levelBarText(s, sim::kTreeLevels), "");
  EXPECT_EQ(app::occupancyBarText(s, 18), "");
  EXPECT_EQ(app::interactionBarText(s, sim::kInteractionBins), "");
}

// The texts of a real tree's bars add up: every level's share and every bin's.
TEST(TreeStatsText, SharesOfARealTreeAddUp) {
  const sim::Simulation sim = plummer(5000);
  const sim::TreeStatistics s = sim.backend().treeStatistics();
  ASSERT_GT(s.levels, 2);
  const std::string root = app::levelBarText(s, 0);
  EXPECT_EQ(root.rfind("level 0: 1 cell (", 0), 0u) << root;
  EXPECT_NE(root.find("% of " + app::countText(s.cells) + "), 0 of them leaves"), std::string::npos)
      << root;
  std::uint64_t binned = 0;
  for (int b = 0; b < sim::kInteractionBins; ++b) {
    binned += s.interactionsLog2[b];
    if (s.interactionsLog2[b] == 0) continue;
    EXPECT_NE(app::interactionBarText(s, b).find(": " + app::countText(s.interactionsLog2[b]) +
                                                 " particle"),
              std::string::npos)
        << app::interactionBarText(s, b);
  }
  EXPECT_EQ(binned, 5000u);
}
