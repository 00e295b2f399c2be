// The Camera panel: what the camera follows (free, the centre of mass, a galaxy), auto-framing
// as the tails grow, and bookmarks of views to fly back to.
#include <imgui.h>

#include <string>

#include "app/window/panels.h"

namespace bhviz::app {

namespace {

/// Galaxies of the running scenario (1 for a sphere or a single galaxy).
int galaxiesOf(const UiInfo& info) {
  if (info.session == nullptr) return 1;
  const std::size_t g = info.session->spec().galaxies.size();
  return g > 0 ? static_cast<int>(g) : 1;
}

}  // namespace

void drawCameraPanel(AppState& s, FrameRequests& r, const UiInfo& info) {
  CameraMode& mode = s.camera;
  const int galaxies = galaxiesOf(info);
  const std::string current = mode.target == CameraTarget::Free     ? "free"
                              : mode.target == CameraTarget::Centre ? "centre of mass"
                                                                    : cameraTargetName(mode);
  if (ImGui::BeginCombo("follow", current.c_str())) {
    if (ImGui::Selectable("free", mode.target == CameraTarget::Free)) {
      mode.target = CameraTarget::Free;
    }
    if (ImGui::Selectable("centre of mass", mode.target == CameraTarget::Centre)) {
      mode.target = CameraTarget::Centre;
    }
    for (int g = 0; g < galaxies; ++g) {
      const std::string name = "galaxy " + std::to_string(g + 1);
      if (ImGui::Selectable(name.c_str(),
                            mode.target == CameraTarget::Galaxy && mode.galaxy == g)) {
        mode.target = CameraTarget::Galaxy;
        mode.galaxy = g;
      }
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "The point the camera orbits, each frame: a galaxy's densest part (its stars), or the\n"
        "centre of mass of everything. Panning frees the camera again.");
  }
  ImGui::Checkbox("auto-frame", &mode.autoFrame);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("the distance follows the spread of what is drawn; zooming turns it off");
  }
  ImGui::Separator();
  ImGui::TextUnformatted("bookmarks");
  if (ImGui::Button("Add (B)")) r.addBookmark = true;
  int remove = -1;
  for (std::size_t k = 0; k < s.bookmarks.size(); ++k) {
    ImGui::PushID(static_cast<int>(k));
    if (ImGui::SmallButton("go")) r.flyTo = static_cast<int>(k);
    ImGui::SameLine();
    if (ImGui::SmallButton("x")) remove = static_cast<int>(k);
    ImGui::SameLine();
    const CameraBookmark& b = s.bookmarks[k];
    ImGui::Text("%s%s  %s", k < 9 ? (std::to_string(k + 1) + ": ").c_str() : "", b.name.c_str(),
                b.mode.active() ? cameraTargetName(b.mode).c_str() : "");
    ImGui::PopID();
  }
  if (remove >= 0) s.bookmarks.erase(s.bookmarks.begin() + remove);
  if (s.bookmarks.empty()) ImGui::TextDisabled("none yet: B keeps the current view, 1-9 fly back");
}

}  // namespace bhviz::app
