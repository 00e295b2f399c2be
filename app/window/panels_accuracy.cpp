// The Accuracy panel: the MAC and θ, its parameter, N_leaf and N_group within the running
// backend's limits, softening, quadrupole and the key curve; live from the next substep.
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
  const char* curves[] = {"morton", "hilbert"};
  int curve = p.curve == sim::Curve::Morton ? 0 : 1;
  if (ImGui::Combo("key curve", &curve, curves, IM_ARRAYSIZE(curves))) {
    p.curve = curve == 0 ? sim::Curve::Morton : sim::Curve::Hilbert;
    changed = true;
  }
  ImGui::TextDisabled("takes effect at the next substep");
  if (changed) r.paramsChanged = true;
}

}  // namespace bhviz::app
