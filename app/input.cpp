#include "app/input.h"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <cmath>

namespace bhviz::app {

namespace {
constexpr float kZoomPerNotch = 0.9f;  // one wheel notch forward: 10 % closer
constexpr float kClickSlop = 4.0f;     // a press that moves less than this is a click [pixels]
}  // namespace

const std::array<KeyHelp, 11>& controls() {
  static const std::array<KeyHelp, 11> list = {{
      {"left drag", "orbit the camera"},
      {"left click", "pick a particle: its group's tree walk (Walk panel)"},
      {"right or middle drag", "pan"},
      {"wheel", "zoom"},
      {"Space", "pause / play"},
      {".", "one substep (while paused)"},
      {"R", "reset the scenario"},
      {"H", "hide / show the panels"},
      {"F12", "screenshot (PNG in the working directory)"},
      {"F1", "this help"},
      {"Esc", "quit"},
  }};
  return list;
}

void handleInput(render::Camera& camera, AppState& state, FrameRequests& requests,
                 float viewportHeight) {
  const ImGuiIO& io = ImGui::GetIO();
  if (!io.WantCaptureMouse) {
    const float dx = io.MouseDelta.x, dy = io.MouseDelta.y;
    const bool moved = std::isfinite(dx) && std::isfinite(dy) && (dx != 0.0f || dy != 0.0f);
    if (moved && io.MouseDown[ImGuiMouseButton_Left]) camera.orbit(dx, dy);
    if (moved && (io.MouseDown[ImGuiMouseButton_Right] || io.MouseDown[ImGuiMouseButton_Middle])) {
      camera.pan(dx, dy, viewportHeight);
    }
    if (io.MouseWheel != 0.0f) camera.zoom(std::pow(kZoomPerNotch, io.MouseWheel));
    // A click is a release with the button never dragged further than a few pixels: a drag
    // orbits, a click picks.
    if (ImGui::IsMouseReleased(ImGuiMouseButton_Left) &&
        io.MouseDragMaxDistanceSqr[ImGuiMouseButton_Left] < kClickSlop * kClickSlop) {
      requests.pick = true;
      requests.pickAtX = io.MousePos.x * io.DisplayFramebufferScale.x;  // framebuffer pixels
      requests.pickAtY = io.MousePos.y * io.DisplayFramebufferScale.y;
    }
    if (ImGui::IsMousePosValid()) {
      requests.cursorInScene = true;
      requests.cursorX = io.MousePos.x * io.DisplayFramebufferScale.x;
      requests.cursorY = io.MousePos.y * io.DisplayFramebufferScale.y;
    }
  }
  // Shortcuts, unless a text field has the keyboard. ImGui 1.86 indexes keys by GLFW codes.
  if (io.WantCaptureKeyboard) return;
  if (ImGui::IsKeyPressed(GLFW_KEY_SPACE, false)) state.paused = !state.paused;
  if (ImGui::IsKeyPressed(GLFW_KEY_PERIOD, true)) {
    state.paused = true;
    requests.singleStep = true;
  }
  if (ImGui::IsKeyPressed(GLFW_KEY_R, false)) requests.rebuild = true;
  if (ImGui::IsKeyPressed(GLFW_KEY_H, false)) state.uiVisible = !state.uiVisible;
  if (ImGui::IsKeyPressed(GLFW_KEY_F1, false)) state.panels.help = !state.panels.help;
  if (ImGui::IsKeyPressed(GLFW_KEY_F12, false)) requests.screenshot = true;
  if (ImGui::IsKeyPressed(GLFW_KEY_ESCAPE, false)) requests.quit = true;
}

}  // namespace bhviz::app
