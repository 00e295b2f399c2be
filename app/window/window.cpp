#include "app/window/window.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <cstdlib>

#include "render/gl_loader.h"

namespace bhviz::app {

namespace {

std::string glfwLastError() {
  const char* description = nullptr;
  const int code = glfwGetError(&description);
  if (code == GLFW_NO_ERROR) return "no reason given";
  return description != nullptr ? description : "GLFW error " + std::to_string(code);
}

bool hasDisplayVariable() {
  for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && v[0] != '\0') return true;
  }
  return false;
}

render::GlProc glfwProc(const char* name) { return glfwGetProcAddress(name); }

}  // namespace

std::string noDisplayMessage(const std::string& why) {
  return "bhviz: no display for the window (" + why +
         "): run without one with `bhviz --headless ...` (see bhviz --help), or in a virtual "
         "display: xvfb-run -a -s \"-screen 0 1280x720x24\" bhviz";
}

Window::Window(int width, int height, const std::string& title) {
  if (!hasDisplayVariable())
    throw NoDisplay(noDisplayMessage("DISPLAY and WAYLAND_DISPLAY are unset"));
  if (glfwInit() != GLFW_TRUE) throw NoDisplay(noDisplayMessage(glfwLastError()));
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 4);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 5);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  m_window = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr);
  if (m_window == nullptr) {
    const std::string why = glfwLastError();
    glfwTerminate();
    throw WindowUnavailable("cannot open an OpenGL 4.5 core window: " + why +
                            " (bhviz --headless renders without a window)");
  }
  glfwMakeContextCurrent(m_window);
  glfwSwapInterval(1);
  try {
    render::loadGl(&glfwProc);
  } catch (const render::GlError& e) {
    glfwDestroyWindow(m_window);
    glfwTerminate();
    throw WindowUnavailable(std::string("the window's OpenGL context: ") + e.what());
  }
  m_glDescription = render::glDescription();

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is the program's, not a file in the working directory
  ImGui::StyleColorsDark();
  ImGui::GetStyle().WindowRounding = 4.0f;
  ImGui::GetStyle().Colors[ImGuiCol_WindowBg].w = 0.85f;
  // Ours first: ImGui's backend keeps the callback it finds and calls it from its own.
  glfwSetWindowUserPointer(m_window, this);
  glfwSetKeyCallback(m_window, &Window::keyCallback);
  ImGui_ImplGlfw_InitForOpenGL(m_window, true);
  ImGui_ImplOpenGL3_Init("#version 450 core");
  m_imgui = true;
}

Window::~Window() {
  if (m_imgui) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
  }
  glfwDestroyWindow(m_window);
  glfwTerminate();
}

bool Window::shouldClose() const { return glfwWindowShouldClose(m_window) != 0; }
void Window::requestClose() { glfwSetWindowShouldClose(m_window, GLFW_TRUE); }
void Window::pollEvents() { glfwPollEvents(); }

void Window::keyCallback(GLFWwindow* window, int key, int /*scancode*/, int action, int /*mods*/) {
  auto* self = static_cast<Window*>(glfwGetWindowUserPointer(window));
  if (self == nullptr || (action != GLFW_PRESS && action != GLFW_REPEAT)) return;
  self->m_keys.push({key, action == GLFW_REPEAT});
}

void Window::beginUi() {
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
}

void Window::endUi() {
  ImGui::Render();
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void Window::swapBuffers() { glfwSwapBuffers(m_window); }

render::RenderTarget Window::target() const {
  render::RenderTarget t;
  glfwGetFramebufferSize(m_window, &t.width, &t.height);
  return t;
}

render::GetProcAddress Window::glProcAddress() { return &glfwProc; }

std::uint32_t Window::glError() const {
  // Through the context's loader: the app sees no GL header (render/ owns GLAD).
  using GetError = unsigned int (*)();
  const auto getError = reinterpret_cast<GetError>(glfwGetProcAddress("glGetError"));
  return getError != nullptr ? getError() : 0u;
}

}  // namespace bhviz::app
