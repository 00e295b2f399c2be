// Panels that edit the simulation: Simulation (scene, play, budget) and Time steps
// (the Accuracy panel: panels_accuracy.cpp).
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>

#include "app/window/panels.h"
#include "sim/ic/initial_conditions.h"

namespace bhviz::app {

namespace {

bool sceneControls(SceneSettings& scene, bool cudaBuilt) {
  bool changed = false;
  const auto& list = sim::scenarios();
  if (ImGui::BeginCombo("scenario", scene.scenario.c_str())) {
    for (const sim::ScenarioInfo& info : list) {
      if (ImGui::Selectable(info.name.c_str(), info.name == scene.scenario) &&
          info.name != scene.scenario) {
        scene.scenario = info.name;
        changed = true;
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", info.description.c_str());
    }
    ImGui::EndCombo();
  }
  // N and the seed act on Enter, not on every keystroke.
  std::uint64_t n = scene.n;
  const std::uint64_t step = 1000, stepFast = 100000;
  if (ImGui::InputScalar("N", ImGuiDataType_U64, &n, &step, &stepFast, "%llu",
                         ImGuiInputTextFlags_EnterReturnsTrue)) {
    n = std::clamp<std::uint64_t>(n, 1, kMaxParticles);
    if (n != scene.n) {
      scene.n = static_cast<std::size_t>(n);
      changed = true;
    }
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("particles; Enter rebuilds the scenario");
  std::uint64_t seed = scene.seed;
  if (ImGui::InputScalar("seed", ImGuiDataType_U64, &seed, nullptr, nullptr, "%llu",
                         ImGuiInputTextFlags_EnterReturnsTrue) &&
      seed != scene.seed) {
    scene.seed = seed;
    changed = true;
  }
  const char* backends[] = {"cpu", "cuda", "auto"};
  int backend = static_cast<int>(scene.backend);
  if (ImGui::Combo("backend", &backend, backends, IM_ARRAYSIZE(backends))) {
    scene.backend = static_cast<BackendChoice>(backend);
    changed = true;
  }
  if (!cudaBuilt && ImGui::IsItemHovered()) ImGui::SetTooltip("this build has no CUDA backend");
  return changed;
}

void budgetControls(FrameBudget& b, float dtMax) {
  int mode = static_cast<int>(b.mode);
  ImGui::TextUnformatted("per frame:");
  ImGui::SameLine();
  ImGui::RadioButton("sim time", &mode, 0);
  ImGui::SameLine();
  ImGui::RadioButton("substeps", &mode, 1);
  b.mode = static_cast<FrameBudget::Mode>(mode);
  if (b.mode == FrameBudget::Mode::SimTime) {
    ImGui::SliderFloat("time / frame", &b.simTimePerFrame, dtMax / 64.0f, dtMax * 16.0f, "%.5f",
                       ImGuiSliderFlags_Logarithmic);
    b.simTimePerFrame = std::max(b.simTimePerFrame, 1e-9f);
  } else {
    ImGui::SliderInt("substeps / frame", &b.substepsPerFrame, 1, 64);
  }
  ImGui::SliderFloat("wall limit", &b.maxWallMs, 5.0f, 1000.0f, "%.0f ms",
                     ImGuiSliderFlags_Logarithmic);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("a frame stops substepping after this long, so the window stays responsive");
  }
}

/// The kept states as a scrub bar: dragging it goes back to the one under the cursor (paused);
/// Play runs on from there, and the states after it go.
void rewindControls(const StateRing& ring, FrameRequests& r, const UiInfo& info) {
  if (ring.size() == 0) {
    ImGui::TextDisabled("rewind: nothing kept yet");
    return;
  }
  const double now = info.session != nullptr ? info.session->simulation().time() : 0.0;
  int shown = static_cast<int>(ring.size()) - 1;
  for (std::size_t k = 0; k < ring.size(); ++k) {
    if (ring.at(k).time() <= now + 1e-12) shown = static_cast<int>(k);
  }
  char label[64];
  std::snprintf(label, sizeof label, "t = %.3f", ring.at(static_cast<std::size_t>(shown)).time());
  if (ImGui::SliderInt("rewind", &shown, 0, static_cast<int>(ring.size()) - 1, label)) {
    r.rewindTo = shown;
  }
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "Go back to a kept state (paused there); Play runs on from it, and the\n"
        "states after it are dropped. The same backend replays the same bits.");
  }
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  ImGui::TextDisabled("%zu kept, every %.3g; %.2f/%.1f GiB, %s", ring.size(), ring.interval(),
                      double(ring.bytes()) / kGiB, double(ring.budget()) / kGiB,
                      ring.onDevice() == ring.size() ? "GPU"
                      : ring.onDevice() > 0          ? "GPU and host"
                                                     : "host");
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "states kept in GPU memory while the CUDA backend has room, else on the host");
  }
}

}  // namespace

void drawSimulationPanel(AppState& s, FrameRequests& r, const UiInfo& info) {
  if (info.session != nullptr) {
    const sim::Simulation& sim = info.session->simulation();
    ImGui::Text("%s backend, N = %zu", std::string(sim.backend().name()).c_str(),
                sim.backend().size());
    ImGui::Text("t = %.4f   %llu substeps%s", sim.time(),
                static_cast<unsigned long long>(sim.substeps()),
                info.session->paused() ? "   (paused)" : "");
  } else {
    ImGui::TextDisabled("no simulation (see the notice)");
  }
  if (sceneControls(s.scene, info.cudaBuilt)) {
    r.rebuild = true;
    // A scenario, N or seed picked here replaces a loaded snapshot (a backend change keeps it).
    if (info.session != nullptr &&
        (s.scene.scenario != info.session->scene().scenario ||
         s.scene.n != info.session->scene().n || s.scene.seed != info.session->scene().seed)) {
      s.scene.snapshotPath.clear();
    }
  }
  if (ImGui::Button("Reset (R)")) r.rebuild = true;
  ImGui::SameLine();
  const bool paused = info.session != nullptr && info.session->paused();
  if (ImGui::Button(paused ? "Play (Space)" : "Pause (Space)")) r.togglePause = true;
  ImGui::SameLine();
  if (ImGui::Button("Step (.)")) r.singleStep = true;
  if (info.ring != nullptr) rewindControls(*info.ring, r, info);
  ImGui::Separator();
  budgetControls(s.budget, s.params.dtMax);
}

namespace {

/// The tree's rebuild interval (tuned, every evaluation or fixed) and what the tuner chose.
bool rebuildControls(sim::SimParams& p, const UiInfo& info) {
  ImGui::Separator();
  bool changed = false;
  int mode = p.rebuildInterval == sim::kRebuildAuto ? 0 : p.rebuildInterval == 1 ? 1 : 2;
  ImGui::TextUnformatted("tree rebuild");
  ImGui::SameLine();
  changed |= ImGui::RadioButton("auto", &mode, 0);
  ImGui::SameLine();
  changed |= ImGui::RadioButton("every", &mode, 1);
  ImGui::SameLine();
  changed |= ImGui::RadioButton("fixed", &mode, 2);
  if (mode == 0) p.rebuildInterval = sim::kRebuildAuto;
  if (mode == 1) p.rebuildInterval = 1;
  if (mode == 2) {
    int k = std::max(p.rebuildInterval, 2);
    changed |= ImGui::SliderInt("interval", &k, 2, 64, "every %d evaluations");
    p.rebuildInterval = k;
  }
  if (info.session == nullptr) return changed;
  const sim::RebuildTunerState& t = info.session->simulation().rebuildState();
  const double evaluations = double(t.recorded());
  ImGui::Text("%llu rebuilds, %llu refits, %llu around the targets (one rebuild in %.1f)",
              static_cast<unsigned long long>(t.rebuilds),
              static_cast<unsigned long long>(t.refits),
              static_cast<unsigned long long>(t.aroundTargets),
              t.rebuilds > 0 ? evaluations / double(t.rebuilds) : 0.0);
  if (t.aroundTargets > 0) {
    ImGui::Text("the last rebuild around the targets cost %.3f ms more than a refit", t.aroundMs);
  }
  ImGui::Text("fit: %s; a rebuild costs %.3f ms more than a refit",
              std::string(sim::toString(t.fit.model)).c_str(), t.rebuildMs);
  if (t.probeAfter > 0) {
    // The aging is measured again (by a refit, or a sample of the groups on the refitted tree)
    // once this many rebuilds have passed since its newest sample; more where the last probe
    // cost more.
    ImGui::Text("aging probed again %d rebuilds after its last sample (%llu probes by sample)",
                t.probeAfter, static_cast<unsigned long long>(t.sampledProbes));
  }
  if (std::isfinite(t.bestInterval)) {
    // The tuner plans over the substeps ahead; GOTHIC's interval for the mean rate is a yardstick.
    ImGui::Text("mean-rate interval %.3g time units (tree age %.3g, %d evaluations)",
                t.bestInterval, t.age, t.evaluations);
  } else {
    ImGui::Text("no aging measured yet (%d evaluations since the rebuild)", t.evaluations);
  }
  ImGui::Text("walk: predicted %.3f ms, measured %.3f ms; groups of %d", t.predictedWalkMs,
              t.measuredWalkMs, info.session->simulation().lastGroupSize());
  return changed;
}

}  // namespace

void drawTimeStepsPanel(AppState& s, FrameRequests& r, const UiInfo& info) {
  sim::SimParams& p = s.params;
  bool changed = false;
  int mode = p.stepping == sim::TimeStepping::Shared ? 0 : 1;
  changed |= ImGui::RadioButton("shared", &mode, 0);
  ImGui::SameLine();
  changed |= ImGui::RadioButton("block", &mode, 1);
  p.stepping = mode == 0 ? sim::TimeStepping::Shared : sim::TimeStepping::Block;
  changed |=
      ImGui::SliderFloat("dt_max", &p.dtMax, 1e-5f, 1.0f, "%.5f", ImGuiSliderFlags_Logarithmic);
  if (p.stepping == sim::TimeStepping::Block) {
    changed |=
        ImGui::SliderFloat("eta", &p.eta, 0.005f, 2.0f, "%.3f", ImGuiSliderFlags_Logarithmic);
    if (ImGui::SliderInt("max bin depth", &p.maxBinDepth, 0, sim::kMaxBinDepthLimit)) {
      changed = true;
      s.view.maxBinDepth = std::max(p.maxBinDepth, 1);
      r.viewChanged = true;
    }
  }
  ImGui::TextDisabled("mode, dt_max and depth change where all particles are synchronised");
  if (info.session != nullptr) {
    const sim::Clock& clock = info.session->simulation().clock();
    ImGui::Text("clock: depth %d, finest step %.3g", clock.depth, clock.tickDt());
    const std::vector<std::uint64_t>& bins = info.session->diagnostics().binHistogram;
    if (!bins.empty()) {
      std::vector<float> counts(bins.begin(), bins.end());
      const float top = *std::max_element(counts.begin(), counts.end());
      ImGui::PlotHistogram("##bins", counts.data(), static_cast<int>(counts.size()), 0,
                           "particles per bin (0 = dt_max)", 0.0f, top * 1.1f,
                           ImVec2(ImGui::GetContentRegionAvail().x, 80.0f));
    }
  }
  changed |= rebuildControls(p, info);
  if (changed) r.paramsChanged = true;
}

}  // namespace bhviz::app
