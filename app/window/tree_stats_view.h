#pragma once
// What the Tree panel's statistics show (sim::TreeStatistics) and how they reach it: the main
// loop fetches them from the backend through TreeStatsFeed, at most twice a second and only while
// the panel is open; the panel (panels_tree_stats.cpp) reads the feed's view and never asks the
// backend itself. The texts of the hovered bars are here too, free of ImGui, for the tests.

#include <chrono>
#include <string>

#include "sim/simulation.h"
#include "sim/tree_statistics.h"

namespace bhviz::app {

/// The statistics the panel draws.
struct TreeStatsView {
  sim::TreeStatistics stats;
  double time = 0.0;   ///< simulation time of the state they describe [time]
  bool valid = false;  ///< fetched at least once from the running simulation
};

/// Fetches the running backend's statistics for the panel.
class TreeStatsFeed {
 public:
  /// The least time between two fetches [s]: each is a pass over the cells and particles (two
  /// small kernels and a copy on CUDA, a command to every rank under mpirun).
  static constexpr double kInterval = 0.5;

  /// Fetches from the simulation's backend when the panel is `open` and the last fetch is
  /// kInterval old at `now`; true when it did.
  bool update(const sim::Simulation& sim, bool open, std::chrono::steady_clock::time_point now);
  /// A new simulation: its statistics are fetched at the next update, the old ones forgotten.
  void reset();
  const TreeStatsView& view() const { return m_view; }

 private:
  TreeStatsView m_view;
  std::chrono::steady_clock::time_point m_fetchedAt;
};

/// 12345678 → "12,345,678".
std::string countText(std::uint64_t n);

// The hovered bar's numbers.
/// "level 7: 12,345 cells (3.2 % of 385,000), 9,876 of them leaves"
std::string levelBarText(const sim::TreeStatistics& s, int level);
/// "leaves of 12 particles: 812 (4.1 % of leaves, 6.3 % of particles)"; the last bin, leafSize + 1,
/// is "leaves of more than N_leaf particles".
std::string occupancyBarText(const sim::TreeStatistics& s, int particles);
/// "2^10–2^11 interactions (1,024–2,047): 5,123 particles (12.3 % of targets)"
std::string interactionBarText(const sim::TreeStatistics& s, int bin);

}  // namespace bhviz::app
