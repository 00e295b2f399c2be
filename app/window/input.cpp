#include "app/window/input.h"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace bhviz::app {

namespace {
constexpr float kZoomPerNotch = 0.9f;  // one wheel notch forward: 10 % closer
constexpr float kClickSlop = 4.0f;     // a press that moves less than this is a click [pixels]

// A held key repeats only the single step; every other shortcut acts once per press.
void applyKey(const KeyPress& press, AppState& state, FrameRequests& requests) {
  if (press.key == GLFW_KEY_PERIOD) {
    requests.singleStep = true;
    return;
  }
  if (press.repeat) return;
  if (press.key >= GLFW_KEY_1 && press.key <= GLFW_KEY_9) {
    requests.flyTo = press.key - GLFW_KEY_1;
    return;
  }
  switch (press.key) {
    case GLFW_KEY_SPACE:
      requests.togglePause = true;
      break;
    case GLFW_KEY_R:
      requests.rebuild = true;
      break;
    case GLFW_KEY_H:
      state.uiVisible = !state.uiVisible;
      break;
    case GLFW_KEY_B:
      requests.addBookmark = true;
      break;
    case GLFW_KEY_P:
      state.layout.presentation = !state.layout.presentation;
      state.uiVisible = true;
      break;
    case GLFW_KEY_F1:
      state.panels.help = !state.panels.help;
      break;
    case GLFW_KEY_F12:
      requests.screenshot = true;
      break;
    case GLFW_KEY_ESCAPE:
      requests.quit = true;
      break;
    default:
      break;
  }
}
}  // namespace

const std::array<KeyHelp, 14>& controls() {
  static const std::array<KeyHelp, 14> list = {{
      {"left drag", "orbit the camera"},
      {"left click", "pick a particle: its group's tree walk (Walk panel)"},
      {"right or middle drag", "pan"},
      {"wheel", "zoom"},
      {"Space", "pause / play"},
      {".", "one substep (while paused)"},
      {"R", "reset the scenario"},
      {"H", "hide / show the panels"},
      {"P", "presentation mode: no panels, a small HUD"},
      {"B", "bookmark the view (Camera panel)"},
      {"1 .. 9", "fly to bookmark 1 .. 9"},
      {"F12", "screenshot (PNG in the working directory)"},
      {"F1", "this help"},
      {"Esc", "quit"},
  }};
  return list;
}

void handleInput(render::Camera& camera, AppState& state, FrameRequests& requests,
                 float viewportHeight, KeyQueue& keys) {
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
  // Shortcuts, unless a text field has the keyboard: then the keys were typed into it.
  if (io.WantCaptureKeyboard) {
    keys.clear();
    return;
  }
  std::vector<int> taken;  // keys acted on this frame
  while (!keys.empty()) {
    const KeyPress press = keys.front();
    if (std::find(taken.begin(), taken.end(), press.key) != taken.end()) break;
    keys.pop();
    taken.push_back(press.key);
    applyKey(press, state, requests);
  }
}

}  // namespace bhviz::app
