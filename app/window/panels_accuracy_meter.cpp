// The Accuracy meter panel: the live force error of the current state (median and 99th
// percentile against direct summation, and their history), and the θ sweep of the current
// state with its error-against-cost plot and CSV export. The measuring is app/accuracy_meter.h
// and app/sweep_runner.h; this file only shows it and edits the settings.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "app/window/panels.h"
#include "app/window/plot_view.h"

namespace bhviz::app {

namespace {

constexpr const char* kMacNames[] = {"bh", "bonsai", "multipole", "acceleration"};
const ImU32 kMacColours[] = {IM_COL32(90, 170, 255, 255), IM_COL32(255, 170, 60, 255),
                             IM_COL32(110, 220, 120, 255), IM_COL32(235, 90, 200, 255)};

void logPlot(const char* id, const std::vector<float>& values, const char* overlay) {
  if (values.empty()) return;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  ImGui::PlotLines(id, values.data(), static_cast<int>(values.size()), 0, overlay, *lo - 0.1f,
                   *hi + 0.1f, ImVec2(ImGui::GetContentRegionAvail().x, 60.0f));
}

float log10Of(double v) { return v > 0.0 ? static_cast<float>(std::log10(v)) : -16.0f; }

void meterSettings(MeterSettings& m) {
  ImGui::Checkbox("measure", &m.enabled);
  ImGui::SameLine();
  ImGui::Checkbox("auto interval", &m.autoInterval);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("measure less often when a measurement takes more than %.0f%% of the frames",
                      100.0 * kMeterShare);
  }
  ImGui::SliderInt("every K frames", &m.everyFrames, 1, 1000, "%d", ImGuiSliderFlags_Logarithmic);
  m.everyFrames = std::clamp(m.everyFrames, 1, kMeterMaxEveryFrames);
  int sample = m.sample;
  if (ImGui::InputInt("sample", &sample, 500, 5000, ImGuiInputTextFlags_EnterReturnsTrue)) {
    m.sample = std::clamp(sample, kMeterMinSample, kMeterMaxSample);
  }
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("particles compared with direct summation (%d..%d); Enter applies",
                      kMeterMinSample, kMeterMaxSample);
  }
}

void meterStatus(const AccuracyMeter& meter, const MeterSettings& m, std::size_t n) {
  const MeterPlan& plan = meter.plan();
  if (plan.everyParticle) {
    ImGui::TextDisabled("every particle is measured (N^2 <= %.0e pairs)", plan.pairBudget);
  } else if (plan.reduced) {
    ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1.0f),
                       "sample reduced to %zu: at N = %zu direct summation is held to %.0e pairs",
                       plan.sample, n, plan.pairBudget);
  }
  if (meter.interval() > m.everyFrames && meter.latest() != nullptr) {
    ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1.0f),
                       "every %d frames (raised from %d: a measurement takes %.0f ms)",
                       meter.interval(), m.everyFrames, meter.latest()->wallMs);
  }
  if (!meter.error().empty()) {
    ImGui::TextColored(ImVec4(1.0f, 0.4f, 0.3f, 1.0f), "%s", meter.error().c_str());
  }
}

void meterReadout(const AccuracyMeter& meter) {
  const MeterResult* r = meter.latest();
  if (r == nullptr) {
    ImGui::TextDisabled(meter.busy() ? "measuring..." : "no measurement yet");
    return;
  }
  ImGui::Text("median %.3e   p99 %.3e   max %.3e", r->s.error.median, r->s.error.p99,
              r->s.error.max);
  ImGui::TextDisabled("t = %.4f, %zu of %zu particles, evaluation %.2f ms, measured in %.0f ms%s",
                      r->time, r->sample, r->n, r->s.msPerForce, r->wallMs,
                      meter.busy() ? " (measuring)" : "");
  const auto& h = meter.history();
  logPlot("##median", h.series([](const MeterHistoryPoint& p) { return log10Of(p.median); }),
          "log10 median error");
  logPlot("##p99", h.series([](const MeterHistoryPoint& p) { return log10Of(p.p99); }),
          "log10 p99 error");
}

std::vector<PlotCurve> sweepCurves(const std::vector<sim::SweepPoint>& points) {
  std::vector<PlotCurve> curves;
  for (std::size_t m = 0; m < IM_ARRAYSIZE(kMacNames); ++m) {
    PlotCurve median{kMacNames[m], kMacColours[m], false, {}, {}};
    PlotCurve p99{"", kMacColours[m], true, {}, {}};
    for (const sim::SweepPoint& pt : points) {
      if (static_cast<std::size_t>(pt.mac) != m) continue;
      median.x.push_back(pt.s.msPerForce);
      median.y.push_back(pt.s.error.median);
      p99.x.push_back(pt.s.msPerForce);
      p99.y.push_back(pt.s.error.p99);
    }
    if (median.x.empty()) continue;
    curves.push_back(std::move(median));
    curves.push_back(std::move(p99));
  }
  const ImU32 grey = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  curves.push_back({"median", grey, false, {}, {}});
  curves.push_back({"p99", grey, true, {}, {}});
  return curves;
}

void sweepSection(AppState& s, FrameRequests& r, const SweepRunner& sweep) {
  SweepSettings& w = s.sweep;
  ImGui::TextUnformatted("theta");
  ImGui::PushItemWidth(60.0f);
  for (auto [label, value] : {std::pair{"from", &w.from}, {"to", &w.to}, {"step", &w.step}}) {
    ImGui::SameLine();
    ImGui::InputFloat(label, value, 0.0f, 0.0f, "%.3f");
  }
  ImGui::PopItemWidth();
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "multipole and acceleration map theta onto their own parameter, as the "
        "headless --sweep does; checked when the sweep starts");
  }
  for (std::size_t m = 0; m < w.macs.size(); ++m) {
    if (m > 0) ImGui::SameLine();
    bool on = w.macs[m];
    if (ImGui::Checkbox(kMacNames[m], &on)) w.macs[m] = on;
  }
  if (sweep.running()) {
    if (ImGui::Button("Cancel sweep")) r.cancelSweep = true;
    ImGui::SameLine();
    char label[64];
    std::snprintf(label, sizeof label, "%zu / %zu points%s", sweep.done(), sweep.total(),
                  sweep.referenceSize() == 0 ? " (reference)" : "");
    const float share = sweep.total() > 0 ? float(sweep.done()) / float(sweep.total()) : 0.0f;
    ImGui::ProgressBar(share, ImVec2(-1.0f, 0.0f), label);
  } else if (ImGui::Button("Run sweep on this state")) {
    r.startSweep = true;
  }
  if (!sweep.error().empty()) {
    ImGui::TextColored(ImVec4(1.0f, 0.4f, 0.3f, 1.0f), "%s", sweep.error().c_str());
  }
  drawLogLogPlot("##sweep", sweepCurves(sweep.points()), "ms per force evaluation",
                 "relative error", ImVec2(0.0f, 240.0f));
  ImGui::PushItemWidth(-110.0f);
  pathField("##csv", w.csvPath);
  ImGui::PopItemWidth();
  ImGui::SameLine();
  if (ImGui::Button("Export CSV")) r.exportSweep = true;
}

}  // namespace

void drawAccuracyMeterPanel(AppState& s, FrameRequests& r, const UiInfo& info) {
  if (info.meter == nullptr || info.sweep == nullptr || info.session == nullptr) {
    ImGui::TextDisabled("no simulation");
    return;
  }
  meterSettings(s.meter);
  meterStatus(*info.meter, s.meter, info.session->simulation().backend().size());
  meterReadout(*info.meter);
  ImGui::TextDisabled("a fresh evaluation of the current state against direct summation");
  if (ImGui::CollapsingHeader("theta sweep", ImGuiTreeNodeFlags_DefaultOpen)) {
    sweepSection(s, r, *info.sweep);
  }
}

}  // namespace bhviz::app
