#pragma once
// A headless OpenGL 4.5 core context through EGL: no window, no display server, no GLFW.
// The platform is chosen at run time: EGL_PLATFORM_DEVICE_EXT on an NVIDIA GPU when
// eglQueryDevicesEXT finds one (the GPU servers), else Mesa's EGL_PLATFORM_SURFACELESS_MESA
// (llvmpipe on CPU machines and CI). The environment variable BHVIZ_EGL_PLATFORM = auto
// (default), device or surfaceless forces one of them.

#include <memory>
#include <stdexcept>
#include <string>

namespace bhviz::app {

/// No headless context could be made. what() is one line saying what was tried and why each
/// failed; exit status 1.
struct GlContextUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class HeadlessGlContext {
 public:
  /// Creates the context, makes it current on this thread and loads the GL entry points
  /// (render::loadGl). Throws GlContextUnavailable.
  static std::unique_ptr<HeadlessGlContext> create();
  ~HeadlessGlContext();
  HeadlessGlContext(const HeadlessGlContext&) = delete;
  HeadlessGlContext& operator=(const HeadlessGlContext&) = delete;

  /// "EGL device platform (NVIDIA), OpenGL 4.5.0 NVIDIA …, NVIDIA H100 …" or
  /// "Mesa surfaceless platform, OpenGL 4.5 (Core Profile) Mesa …, llvmpipe …".
  const std::string& description() const { return m_description; }

 private:
  HeadlessGlContext() = default;
  void* m_display = nullptr;  // EGLDisplay
  void* m_context = nullptr;  // EGLContext
  void* m_surface = nullptr;  // EGLSurface: a 1×1 pbuffer where surfaceless contexts are missing
  std::string m_description;
};

}  // namespace bhviz::app
