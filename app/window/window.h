#pragma once
// The GLFW window with an OpenGL 4.5 core context and Dear ImGui on it. The only file that
// creates GLFW objects. Input reaches the app through ImGui's IO (the ImGui GLFW backend owns
// the callbacks), except key presses: bhviz's key callback, which ImGui's calls first, queues
// them (app/input.h), so that a tap between two frames is not lost.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "app/window/input.h"
#include "render/renderer.h"

struct GLFWwindow;

namespace bhviz::app {

/// There is no display to open a window on. what() is the one line to print; exit status 2.
struct NoDisplay : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A display exists but no OpenGL 4.5 core window could be made on it; exit status 1.
struct WindowUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The line printed when there is no display: how to run without one.
std::string noDisplayMessage(const std::string& why);

class Window {
 public:
  /// Opens the window, makes its context current, loads GL (render::loadGl) and starts ImGui.
  /// Throws NoDisplay or WindowUnavailable.
  Window(int width, int height, const std::string& title);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  bool shouldClose() const;
  void requestClose();
  void pollEvents();
  /// The key presses since the frames took them last (filled by pollEvents).
  KeyQueue& keys() { return m_keys; }
  /// ImGui's frame: beginUi before the panels, endUi after the scene is drawn (draws the UI).
  void beginUi();
  void endUi();
  void swapBuffers();

  /// The default framebuffer at its current size in pixels.
  render::RenderTarget target() const;
  /// "OpenGL 4.5 (Core Profile) Mesa …, llvmpipe …".
  const std::string& glDescription() const { return m_glDescription; }
  /// glGetError: 0 when no GL call has failed since the last check.
  std::uint32_t glError() const;
  /// The context's GL loader (glfwGetProcAddress), for code that loads GL entry points itself.
  static render::GetProcAddress glProcAddress();

 private:
  static void keyCallback(GLFWwindow* window, int key, int scancode, int action, int mods);

  GLFWwindow* m_window = nullptr;
  KeyQueue m_keys;
  std::string m_glDescription;
  bool m_imgui = false;
};

}  // namespace bhviz::app
