#pragma once
// Mouse and keyboard → camera moves and frame requests. Reads ImGui's IO (filled by the ImGui
// GLFW backend), so the scene only gets what the panels do not want.
//
//   left drag: orbit    left click: pick a particle    right/middle drag: pan    wheel: zoom
//   Space: pause/play   .: one substep   R: reset   H: hide/show the UI
//   F12: screenshot     Esc: quit

#include <array>
#include <string_view>

#include "app/app_state.h"
#include "render/camera.h"

namespace bhviz::app {

struct KeyHelp {
  std::string_view keys;
  std::string_view action;
};
/// The controls, for the help window (the same list as the README's).
const std::array<KeyHelp, 11>& controls();

/// Applies this frame's input to the camera, the state and the requests.
void handleInput(render::Camera& camera, AppState& state, FrameRequests& requests,
                 float viewportHeight);

}  // namespace bhviz::app
