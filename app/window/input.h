#pragma once
// Mouse and keyboard → camera moves and frame requests. Reads ImGui's IO (filled by the ImGui
// GLFW backend), so the scene only gets what the panels do not want.
//
//   left drag: orbit    left click: pick a particle    right/middle drag: pan    wheel: zoom
//   Space: pause/play   .: one substep   R: reset   H: hide/show the UI
//   F12: screenshot     Esc: quit

#include <array>
#include <cstddef>
#include <deque>
#include <string_view>

#include "app/window/app_state.h"
#include "render/camera.h"

namespace bhviz::app {

struct KeyHelp {
  std::string_view keys;
  std::string_view action;
};
/// The controls, for the help window (the same list as the README's).
const std::array<KeyHelp, 14>& controls();

/// One key going down (or repeating while held), as GLFW reported it.
struct KeyPress {
  int key = 0;          ///< GLFW_KEY_*
  bool repeat = false;  ///< GLFW_REPEAT: the key is held
};

/// Key presses in the order they happened, filled by the window's key callback. ImGui 1.86
/// keeps only each key's state, sampled once a frame, so a tap shorter than a frame (a press
/// and its release between two frames) would be lost; here it stays until a frame takes it.
class KeyQueue {
 public:
  /// Holding keys while frames are slow must not grow the queue without end.
  static constexpr std::size_t kCapacity = 64;

  void push(KeyPress press) {
    if (m_presses.size() < kCapacity) m_presses.push_back(press);
  }
  bool empty() const { return m_presses.empty(); }
  const KeyPress& front() const { return m_presses.front(); }
  void pop() { m_presses.pop_front(); }
  void clear() { m_presses.clear(); }

 private:
  std::deque<KeyPress> m_presses;
};

/// Applies this frame's input to the camera, the state and the requests. Takes the queued key
/// presses, at most one of each key per frame (a second tap of F12 is the next frame's
/// screenshot); the rest stay queued for the next frame.
void handleInput(render::Camera& camera, AppState& state, FrameRequests& requests,
                 float viewportHeight, KeyQueue& keys);

}  // namespace bhviz::app
