// Panels that show measurements: Performance (stage table and plots) and Diagnostics.
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/window/panels.h"

namespace bhviz::app {

namespace {

void plot(const char* label, const std::vector<float>& values, const char* overlay, float height) {
  if (values.empty()) return;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const float pad = 0.05f * (*hi - *lo) + 1e-12f;
  ImGui::PlotLines(label, values.data(), static_cast<int>(values.size()), 0, overlay, *lo - pad,
                   *hi + pad, ImVec2(ImGui::GetContentRegionAvail().x, height));
}

void stageTable(const PerfHistory& perf) {
  const sim::StepProfile& p = perf.smoothed().step;
  const double total = p.total();
  const ImGuiTableFlags flags =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("stages", 3, flags)) return;
  ImGui::TableSetupColumn("stage");
  ImGui::TableSetupColumn("ms / frame");
  ImGui::TableSetupColumn("share");
  ImGui::TableHeadersRow();
  for (int s = 0; s < static_cast<int>(sim::Stage::Count); ++s) {
    const auto stage = static_cast<sim::Stage>(s);
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::TextUnformatted(std::string(sim::stageName(stage)).c_str());
    ImGui::TableSetColumnIndex(1);
    ImGui::Text("%8.3f", p[stage]);
    ImGui::TableSetColumnIndex(2);
    const float share = total > 0.0 ? static_cast<float>(p[stage] / total) : 0.0f;
    ImGui::ProgressBar(share, ImVec2(-1.0f, 0.0f));
  }
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::TextUnformatted("step total");
  ImGui::TableSetColumnIndex(1);
  ImGui::Text("%8.3f", total);
  ImGui::EndTable();
}

// Under mpirun: each rank's last substep, and how evenly the work (interactions) was spread.
void rankTable(const std::vector<sim::RankReport>& ranks) {
  double maxWork = 0.0, sumWork = 0.0;
  for (const sim::RankReport& r : ranks) {
    const double w = double(r.last.interactions.cell + r.last.interactions.particle);
    maxWork = std::max(maxWork, w);
    sumWork += w;
  }
  const double imbalance = sumWork > 0.0 ? maxWork * double(ranks.size()) / sumWork : 1.0;
  ImGui::Text("%zu ranks; work imbalance (max / mean) %.3f", ranks.size(), imbalance);
  const ImGuiTableFlags flags =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("ranks", 6, flags)) return;
  for (const char* h : {"rank", "particles", "step ms", "walk", "let", "domains"}) {
    ImGui::TableSetupColumn(h);
  }
  ImGui::TableHeadersRow();
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    const sim::StepProfile& p = ranks[k].last;
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::Text("%zu", k);
    ImGui::TableSetColumnIndex(1);
    ImGui::Text("%llu", static_cast<unsigned long long>(ranks[k].particles));
    ImGui::TableSetColumnIndex(2);
    ImGui::Text("%.2f", p.total());
    ImGui::TableSetColumnIndex(3);
    ImGui::Text("%.2f", p[sim::Stage::Walk]);
    ImGui::TableSetColumnIndex(4);
    ImGui::Text("%.2f", p[sim::Stage::Let]);
    ImGui::TableSetColumnIndex(5);
    ImGui::Text("%.2f", p[sim::Stage::Domains]);
  }
  ImGui::EndTable();
  ImGui::TextDisabled("the last substep of each rank; stages above: the slowest rank's");
}

}  // namespace

void drawPerformancePanel(const UiInfo& info) {
  const PerfHistory& perf = *info.perf;
  const FrameRecord& m = perf.smoothed();
  ImGui::Text("%.1f FPS (%.2f ms/frame), %.1f substeps/frame", perf.fps(), m.frameMs,
              perf.smoothedSubsteps());
  ImGui::Text("simulation %.2f ms, vertex write %.2f ms (%s)", m.simMs, m.writeMs,
              info.vertexPath.c_str());
  if (m.gpuRenderMs >= 0.0) {
    ImGui::Text("render %.2f ms on the GPU (%.2f ms to submit it and the UI)", m.gpuRenderMs,
                m.renderMs);
  } else {
    ImGui::Text("render %.2f ms (CPU side of the GL submit; no GPU timer)", m.renderMs);
  }
  ImGui::Text("%.0f interactions/particle, %.3g interactions/s", perf.interactionsPerParticle(),
              perf.interactionsPerSecond());
  ImGui::TextDisabled("moving averages of the previous frames (EMA, weight %.2f)",
                      PerfHistory::kSmoothing);
  if (ImGui::CollapsingHeader("stages", ImGuiTreeNodeFlags_DefaultOpen)) stageTable(perf);
  if (!info.ranks.empty() && ImGui::CollapsingHeader("ranks", ImGuiTreeNodeFlags_DefaultOpen)) {
    rankTable(info.ranks);
  }
  if (ImGui::CollapsingHeader("history", ImGuiTreeNodeFlags_DefaultOpen)) {
    const auto& frames = perf.frames();
    plot("##step", frames.series([](const FrameRecord& r) { return float(r.step.total()); }),
         "step ms / frame", 60.0f);
    plot("##frame", frames.series([](const FrameRecord& r) { return float(r.frameMs); }),
         "frame ms", 60.0f);
  }
}

void drawDiagnosticsPanel(const UiInfo& info) {
  if (info.session == nullptr) {
    ImGui::TextDisabled("no simulation");
    return;
  }
  const sim::Diagnostics& d = info.session->diagnostics();
  const double e0 = info.session->initialEnergy();
  ImGui::Text("t = %.4f (sampled)", d.time);
  if (std::isfinite(d.potential)) {
    ImGui::Text("E = %.8g  (K %.6g, W %.6g)", d.total(), d.kinetic, d.potential);
    ImGui::Text("dE/|E0| = %+.3e", e0 != 0.0 ? (d.total() - e0) / std::abs(e0) : 0.0);
  } else {  // a single step into a block step: the potentials come with the step's end
    ImGui::Text("K %.6g, W at the step's end", d.kinetic);
  }
  const auto& P = d.momentum;
  const auto& L = d.angularMomentum;
  ImGui::Text("P = (%+.3e, %+.3e, %+.3e)", P[0], P[1], P[2]);
  ImGui::Text("L = (%+.4g, %+.4g, %+.4g)", L[0], L[1], L[2]);
  const auto& h = info.session->diagnosticsHistory();
  plot("##drift", h.series([](const DiagnosticsSample& x) { return float(x.energyDrift); }),
       "relative energy drift", 80.0f);
  plot("##momentum", h.series([](const DiagnosticsSample& x) { return float(x.momentum); }), "|P|",
       50.0f);
  ImGui::TextDisabled("sampled every %.1f s where every step ends, with the potentials",
                      diagnosticsInterval(info.session->scene().n));
}

}  // namespace bhviz::app
