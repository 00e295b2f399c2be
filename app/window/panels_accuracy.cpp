// The Accuracy panel: the MAC and θ, its parameter, N_leaf and N_group within the running
// backend's limits, softening, quadrupole, the key curve and the near field; live from the next
// substep.
#include <imgui.h>

#include "app/window/panels.h"

namespace bhviz::app {

void drawAccuracyPanel(AppState& s, FrameRequests& r, const UiInfo& info) {
  sim::SimParams& p = s.params;
  bool changed = false;
  const char* macs[] = {"bh", "bonsai", "multipole", "acceleration"};
  int mac = static_cast<int>(p.mac);
  if (ImGui::Combo("MAC", &mac, macs, IM_ARRAYSIZE(macs))) {
    p.mac = static_cast<sim::MacKind>(mac);
    p.macParam = 0.0f;  // the new MAC's default
    changed = true;
  }
  changed |= ImGui::SliderFloat("theta", &p.theta, 0.05f, sim::kThetaMax, "%.3f");
  if (p.mac == sim::MacKind::Acceleration && ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "the acceleration MAC uses theta only on a first evaluation,\n"
        "before old accelerations exist (the bh test); then alpha");
  }
  if (p.mac == sim::MacKind::Multipole || p.mac == sim::MacKind::Acceleration) {
    float param = sim::effectiveMacParam(p);
    const char* label = p.mac == sim::MacKind::Multipole ? "delta_mul" : "alpha";
    if (ImGui::SliderFloat(label, &param, 1e-7f, 1e-1f, "%.2e", ImGuiSliderFlags_Logarithmic)) {
      p.macParam = param;
      changed = true;
    }
  }
  // The running backend's ranges (N_group <= 128 on CUDA); a typed value is clamped to them.
  const sim::BackendLimits limits =
      info.session != nullptr ? info.session->limits() : sim::BackendLimits{};
  const ImGuiSliderFlags sizes = ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp;
  changed |= ImGui::SliderInt("N_leaf", &p.nLeaf, 1, limits.maxLeafSize, "%d", sizes);
  changed |= ImGui::SliderInt("N_group", &p.nGroup, 1, limits.maxGroupSize, "%d", sizes);
  changed |= ImGui::SliderFloat("softening", &p.softening, 0.0f, 1.0f, "%.4f",
                                ImGuiSliderFlags_Logarithmic);
  changed |= ImGui::Checkbox("quadrupole", &p.quadrupole);
  changed |= ImGui::SliderFloat("expansion ratio", &p.expansionRatio, 0.0f, sim::kExpansionRatioMax,
                                "%.3f", ImGuiSliderFlags_AlwaysClamp);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "cells at least (group radius)/rho from a group's centre are expanded\n"
        "about it once per group (M2L, L2P) instead of applied to each particle;\n"
        "0 = none; the default 0.08 keeps the error (BENCHMARKS.md)");
  }
  changed |=
      ImGui::SliderFloat("expansion budget", &p.expansionBudget, 0.0f, sim::kExpansionBudgetMax,
                         "%.2f", ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "also expands nearer cells (down to 1/0.3 of the group radius) whose\n"
        "series error bound M R^3/d^5 is below this budget times the MAC's\n"
        "tolerance and the group's smallest |a_old|: light cells nearer than heavy\n"
        "ones; 0 = by distance alone; 1 keeps the error within ~1 %%, the default 2\n"
        "is the fastest at equal error (BENCHMARKS.md)");
  }
  const char* curves[] = {"morton", "hilbert"};
  int curve = p.curve == sim::Curve::Morton ? 0 : 1;
  if (ImGui::Combo("key curve", &curve, curves, IM_ARRAYSIZE(curves))) {
    p.curve = curve == 0 ? sim::Curve::Morton : sim::Curve::Hilbert;
    changed = true;
  }
  const char* nearFields[] = {"plain", "mutual"};
  int nearField = p.p2p == sim::P2pMode::Plain ? 0 : 1;
  ImGui::BeginDisabled(!limits.mutualP2p && p.p2p == sim::P2pMode::Plain);
  if (ImGui::Combo("near field", &nearField, nearFields, IM_ARRAYSIZE(nearFields))) {
    p.p2p = nearField == 0 ? sim::P2pMode::Plain : sim::P2pMode::Mutual;
    changed = true;
  }
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
    ImGui::SetTooltip(
        "P2P of the opened leaves: plain (each target sums them) or mutual (each\n"
        "near pair once, Newton's third law); the same forces to fp32 rounding.\n"
        "Mutual is slower on both backends (BENCHMARKS.md): a lesson, not a speed-up");
  }
  ImGui::TextDisabled("takes effect at the next substep");
  if (changed) r.paramsChanged = true;
}

}  // namespace bhviz::app
