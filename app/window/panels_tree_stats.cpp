// The Tree panel's statistics: three bar histograms of the last force evaluation's tree (cells
// per level, leaves by the particles they hold, interactions per target), drawn with ImGui's
// draw list as plot_view.cpp draws its plots; the hovered bar is highlighted and its numbers
// shown. Contents only: drawTreePanel calls it inside its window or tab.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "app/window/panels.h"

namespace bhviz::app {

namespace {

constexpr float kChartHeight = 90.0f;  // [pixels]
constexpr float kLeftMargin = 46.0f;   // room for the count labels
constexpr float kBottomMargin = 16.0f;

/// One histogram: a bar per entry, with part of each bar (`inner`, if given) in a second colour.
struct BarChart {
  const char* id = "";
  std::vector<std::uint64_t> counts;
  std::vector<std::uint64_t> inner;          ///< ≤ counts, drawn from the bottom; empty: none
  std::string firstLabel, lastLabel;         ///< under the first and the last bar
  std::function<std::string(int)> describe;  ///< the hovered bar's text, by index into counts
};

float barHeight(std::uint64_t count, std::uint64_t max, bool logScale, float full) {
  if (count == 0 || max == 0) return 0.0f;
  const double f = logScale ? std::log10(1.0 + double(count)) / std::log10(1.0 + double(max))
                            : double(count) / double(max);
  return std::max(1.0f, static_cast<float>(f) * full);  // a non-empty bin stays visible
}

/// Draws the chart across the available width; its hovered bar's text as a tooltip.
void drawBars(const BarChart& c, bool logScale) {
  const float width = std::max(ImGui::GetContentRegionAvail().x, 120.0f);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(c.id, ImVec2(width, kChartHeight + kBottomMargin));
  if (c.counts.empty()) return;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p0(origin.x + kLeftMargin, origin.y + 4.0f);
  const ImVec2 p1(origin.x + width - 4.0f, origin.y + kChartHeight);
  const ImU32 axis = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 faint = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 bar = ImGui::GetColorU32(ImGuiCol_PlotHistogram);
  const ImU32 hot = ImGui::GetColorU32(ImGuiCol_PlotHistogramHovered);
  const ImU32 inner = ImGui::GetColorU32(ImGuiCol_PlotLines);
  const ImU32 shade = ImGui::GetColorU32(ImGuiCol_TextDisabled, 0.25f);  // the hovered column
  const std::uint64_t max = *std::max_element(c.counts.begin(), c.counts.end());
  const int bars = static_cast<int>(c.counts.size());
  const float step = (p1.x - p0.x) / static_cast<float>(bars);
  const float gap = step > 4.0f ? 1.0f : 0.0f;
  int hovered = -1;
  if (ImGui::IsItemHovered()) {
    const float mx = ImGui::GetIO().MousePos.x;
    if (mx >= p0.x && mx < p1.x) hovered = std::min(bars - 1, int((mx - p0.x) / step));
  }
  for (int i = 0; i < bars; ++i) {
    const float x0 = p0.x + step * static_cast<float>(i), x1 = x0 + std::max(step - gap, 1.0f);
    const float h = barHeight(c.counts[i], max, logScale, p1.y - p0.y);
    if (i == hovered) dl->AddRectFilled(ImVec2(x0, p0.y), ImVec2(x1, p1.y), shade);
    dl->AddRectFilled(ImVec2(x0, p1.y - h), ImVec2(x1, p1.y), i == hovered ? hot : bar);
    if (!c.inner.empty() && c.inner[i] > 0) {
      // The part on the same scale as its bar, so that a log axis still shows its share.
      const float hi = h * static_cast<float>(double(c.inner[i]) / double(c.counts[i]));
      dl->AddRectFilled(ImVec2(x0, p1.y - hi), ImVec2(x1, p1.y), inner);
    }
  }
  dl->AddLine(ImVec2(p0.x, p1.y), ImVec2(p1.x, p1.y), axis);
  dl->AddLine(ImVec2(p0.x, p0.y), ImVec2(p0.x, p1.y), axis);
  const std::string top = countText(max);
  dl->AddText(ImVec2(p0.x - ImGui::CalcTextSize(top.c_str()).x - 4.0f, p0.y - 2.0f), faint,
              top.c_str());
  dl->AddText(ImVec2(p0.x - ImGui::CalcTextSize("0").x - 4.0f, p1.y - ImGui::GetTextLineHeight()),
              faint, "0");
  if (logScale) dl->AddText(ImVec2(origin.x, p0.y + 14.0f), faint, "log");
  dl->AddText(ImVec2(p0.x, p1.y + 1.0f), faint, c.firstLabel.c_str());
  const float lastWidth = ImGui::CalcTextSize(c.lastLabel.c_str()).x;
  dl->AddText(ImVec2(std::max(p1.x - lastWidth, p0.x + 40.0f), p1.y + 1.0f), faint,
              c.lastLabel.c_str());
  if (hovered >= 0) ImGui::SetTooltip("%s", c.describe(hovered).c_str());
}

void drawLevels(const sim::TreeStatistics& s, bool logScale) {
  ImGui::Text("Cells per level: %d levels, %s cells, %s leaves", s.levels,
              countText(s.cells).c_str(), countText(s.leaves).c_str());
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("each bar's lower part: the leaves of that level");
  BarChart c;
  c.id = "levels";
  c.counts.assign(s.cellsPerLevel.begin(), s.cellsPerLevel.begin() + s.levels);
  c.inner.assign(s.leavesPerLevel.begin(), s.leavesPerLevel.begin() + s.levels);
  c.firstLabel = "level 0";
  c.lastLabel = std::to_string(s.levels - 1);
  c.describe = [&s](int level) { return levelBarText(s, level); };
  drawBars(c, logScale);
}

void drawOccupancy(const sim::TreeStatistics& s, bool logScale) {
  ImGui::Text("Leaves by particles held: %.1f on average, N_leaf %d", s.meanOccupancy(),
              s.leafSize);
  // Bars 1..N_leaf (a leaf is never empty), and "more" when the deepest level has such leaves.
  const bool overfull = s.leavesByOccupancy[s.leafSize + 1] > 0;
  BarChart c;
  c.id = "occupancy";
  c.counts.assign(s.leavesByOccupancy.begin() + 1,
                  s.leavesByOccupancy.begin() + s.leafSize + (overfull ? 2 : 1));
  c.firstLabel = "1";
  c.lastLabel = overfull ? "more" : std::to_string(s.leafSize);
  c.describe = [&s](int bar) { return occupancyBarText(s, bar + 1); };
  drawBars(c, logScale);
}

void drawInteractions(const sim::TreeStatistics& s, bool logScale) {
  ImGui::Text("Interactions per particle: mean %.0f, %s to %s", s.meanInteractions(),
              countText(s.minInteractions).c_str(), countText(s.maxInteractions).c_str());
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "cells and leaf particles (itself included) each target took in the last force\n"
        "evaluation; %s targets, %s interactions in all",
        countText(s.targets).c_str(), countText(s.interactions).c_str());
  }
  // The bins from the fewest to the most, log2-spaced.
  int lo = sim::kInteractionBins, hi = 0;
  for (int b = 0; b < sim::kInteractionBins; ++b) {
    if (s.interactionsLog2[b] == 0) continue;
    lo = std::min(lo, b);
    hi = std::max(hi, b);
  }
  if (lo > hi) {
    ImGui::TextDisabled("no targets in the last evaluation");
    return;
  }
  BarChart c;
  c.id = "interactions";
  c.counts.assign(s.interactionsLog2.begin() + lo, s.interactionsLog2.begin() + hi + 1);
  c.firstLabel = "2^" + std::to_string(lo);
  c.lastLabel = "2^" + std::to_string(hi);
  c.describe = [&s, lo](int bar) { return interactionBarText(s, lo + bar); };
  drawBars(c, logScale);
}

}  // namespace

void drawTreeStatistics(const TreeStatsView& v, TreeStatsSettings& settings, std::size_t ranks) {
  ImGui::Separator();
  const sim::TreeStatistics& s = v.stats;
  if (!v.valid || s.cells == 0) {
    ImGui::TextDisabled("tree statistics: no tree yet");
    return;
  }
  ImGui::TextDisabled("statistics of t = %.4g%s", v.time,
                      ranks > 1 ? ", every rank's tree summed" : "");
  ImGui::SameLine();
  ImGui::Checkbox("log counts", &settings.logCounts);
  ImGui::PushID("tree statistics");
  drawLevels(s, settings.logCounts);
  drawOccupancy(s, settings.logCounts);
  drawInteractions(s, settings.logCounts);
  ImGui::PopID();
}

}  // namespace bhviz::app
