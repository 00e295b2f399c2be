#pragma once
// A log-log line plot drawn with ImGui's draw list (Dear ImGui 1.86 has no plotting beyond
// PlotLines): a frame, decade ticks and grid on both axes, labelled axes, curves with markers,
// and a legend. Used by the Accuracy meter panel for error against cost.

#include <imgui.h>

#include <string>
#include <vector>

namespace bhviz::app {

struct PlotCurve {
  std::string label;  ///< in the legend; empty: not listed
  ImU32 colour = 0;
  bool dashed = false;
  std::vector<double> x;  ///< points with a non-positive or non-finite coordinate are skipped
  std::vector<double> y;
};

/// The decades (integer powers of ten) from floor(log10 lo) to ceil(log10 hi), as exponents, with
/// lo and hi widened to the nearest decades: at least one decade is spanned.
struct LogRange {
  double lo = 0.0;  ///< log10 of the lower end
  double hi = 1.0;  ///< log10 of the upper end
};
LogRange logRangeOf(const std::vector<PlotCurve>& curves, bool xAxis);

/// Draws the plot into a child region of `size` (x ≤ 0: the available width).
void drawLogLogPlot(const char* id, const std::vector<PlotCurve>& curves, const char* xLabel,
                    const char* yLabel, ImVec2 size);

}  // namespace bhviz::app
