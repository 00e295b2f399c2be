#include "app/window/tree_stats_view.h"

#include <cstdio>

namespace bhviz::app {

namespace {

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole > 0 ? 100.0 * double(part) / double(whole) : 0.0;
}

}  // namespace

bool TreeStatsFeed::update(const sim::Simulation& sim, bool open,
                           std::chrono::steady_clock::time_point now) {
  if (!open) return false;
  if (m_view.valid && std::chrono::duration<double>(now - m_fetchedAt).count() < kInterval) {
    return false;
  }
  m_view.stats = sim.backend().treeStatistics();
  m_view.time = sim.time();
  m_view.valid = true;
  m_fetchedAt = now;
  return true;
}

void TreeStatsFeed::reset() { m_view = {}; }

std::string countText(std::uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string levelBarText(const sim::TreeStatistics& s, int level) {
  if (level < 0 || level >= sim::kTreeLevels) return {};
  const std::uint64_t cells = s.cellsPerLevel[level], leaves = s.leavesPerLevel[level];
  char line[160];
  std::snprintf(line, sizeof line, "level %d: %s cell%s (%.1f %% of %s), %s of them leaves", level,
                countText(cells).c_str(), cells == 1 ? "" : "s", percent(cells, s.cells),
                countText(s.cells).c_str(), countText(leaves).c_str());
  return line;
}

std::string occupancyBarText(const sim::TreeStatistics& s, int particles) {
  if (particles < 0 || particles > s.leafSize + 1 || particles >= sim::kOccupancyBins) return {};
  const std::uint64_t leaves = s.leavesByOccupancy[particles];
  const bool overfull = particles == s.leafSize + 1;
  const std::uint64_t held = overfull ? s.overfullParticles : leaves * std::uint64_t(particles);
  char what[64];
  if (overfull) {
    std::snprintf(what, sizeof what, "more than %d particles (deepest level)", s.leafSize);
  } else {
    std::snprintf(what, sizeof what, "%d particle%s", particles, particles == 1 ? "" : "s");
  }
  char line[200];
  std::snprintf(line, sizeof line, "leaves of %s: %s (%.1f %% of leaves, %.1f %% of particles)",
                what, countText(leaves).c_str(), percent(leaves, s.leaves),
                percent(held, s.particles));
  return line;
}

std::string interactionBarText(const sim::TreeStatistics& s, int bin) {
  if (bin < 0 || bin >= sim::kInteractionBins) return {};
  const std::uint64_t lo = std::uint64_t(1) << bin, hi = (std::uint64_t(2) << bin) - 1;
  const std::uint64_t targets = s.interactionsLog2[bin];
  char line[200];
  std::snprintf(line, sizeof line,
                "2^%d-2^%d interactions (%s-%s): %s particle%s (%.1f %% of targets)", bin, bin + 1,
                countText(bin == 0 ? 0 : lo).c_str(), countText(hi).c_str(),
                countText(targets).c_str(), targets == 1 ? "" : "s", percent(targets, s.targets));
  return line;
}

}  // namespace bhviz::app
