#include "app/scene/gl_context.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "render/gl_loader.h"

namespace bhviz::app {

namespace {

enum class Platform { Auto, Device, Surfaceless };

Platform requestedPlatform() {
  const char* env = std::getenv("BHVIZ_EGL_PLATFORM");
  const std::string v = env ? env : "";
  if (v.empty() || v == "auto") return Platform::Auto;
  if (v == "device") return Platform::Device;
  if (v == "surfaceless") return Platform::Surfaceless;
  throw GlContextUnavailable("BHVIZ_EGL_PLATFORM = '" + v +
                             "' is not known: must be auto, device or surfaceless");
}

bool hasExtension(const char* list, const char* name) {
  if (list == nullptr) return false;
  const std::size_t n = std::strlen(name);
  for (const char* p = std::strstr(list, name); p != nullptr; p = std::strstr(p + n, name)) {
    const bool startOk = p == list || p[-1] == ' ';
    const bool endOk = p[n] == '\0' || p[n] == ' ';
    if (startOk && endOk) return true;
  }
  return false;
}

std::string eglErrorName(EGLint e) {
  switch (e) {
    case EGL_SUCCESS:
      return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED:
      return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS:
      return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC:
      return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE:
      return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONFIG:
      return "EGL_BAD_CONFIG";
    case EGL_BAD_CONTEXT:
      return "EGL_BAD_CONTEXT";
    case EGL_BAD_DISPLAY:
      return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH:
      return "EGL_BAD_MATCH";
    case EGL_BAD_PARAMETER:
      return "EGL_BAD_PARAMETER";
    case EGL_BAD_SURFACE:
      return "EGL_BAD_SURFACE";
    default: {
      std::ostringstream s;
      s << "EGL error 0x" << std::hex << e;
      return s.str();
    }
  }
}

/// A failed attempt: says which call failed and EGL's error.
struct Attempt : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string& what) {
  throw Attempt(what + " (" + eglErrorName(eglGetError()) + ")");
}

template <typename F>
F proc(const char* name) {
  return reinterpret_cast<F>(eglGetProcAddress(name));
}

/// The first EGL device that is an NVIDIA GPU (it exposes EGL_NV_device_cuda), else none.
EGLDeviceEXT findNvidiaDevice() {
  const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  if (!hasExtension(client, "EGL_EXT_device_enumeration") &&
      !hasExtension(client, "EGL_EXT_device_base")) {
    throw Attempt("EGL cannot enumerate devices (no EGL_EXT_device_enumeration)");
  }
  if (!hasExtension(client, "EGL_EXT_platform_device")) {
    throw Attempt("EGL has no device platform (no EGL_EXT_platform_device)");
  }
  auto queryDevices = proc<PFNEGLQUERYDEVICESEXTPROC>("eglQueryDevicesEXT");
  auto queryString = proc<PFNEGLQUERYDEVICESTRINGEXTPROC>("eglQueryDeviceStringEXT");
  if (!queryDevices || !queryString) throw Attempt("eglQueryDevicesEXT is missing");
  EGLint count = 0;
  if (!queryDevices(0, nullptr, &count)) fail("eglQueryDevicesEXT failed");
  std::vector<EGLDeviceEXT> devices(static_cast<std::size_t>(count));
  if (count > 0 && !queryDevices(count, devices.data(), &count)) fail("eglQueryDevicesEXT failed");
  for (EGLDeviceEXT d : devices) {
    if (hasExtension(queryString(d, EGL_EXTENSIONS), "EGL_NV_device_cuda")) return d;
  }
  throw Attempt("no NVIDIA EGL device among " + std::to_string(count) + " EGL device" +
                (count == 1 ? "" : "s"));
}

EGLDisplay platformDisplay(EGLenum platform, void* nativeDisplay) {
  auto getPlatformDisplay = proc<PFNEGLGETPLATFORMDISPLAYEXTPROC>("eglGetPlatformDisplayEXT");
  if (!getPlatformDisplay) throw Attempt("eglGetPlatformDisplayEXT is missing");
  EGLDisplay display = getPlatformDisplay(platform, nativeDisplay, nullptr);
  if (display == EGL_NO_DISPLAY) fail("eglGetPlatformDisplayEXT found no display");
  EGLint major = 0, minor = 0;
  if (!eglInitialize(display, &major, &minor)) fail("eglInitialize failed");
  return display;
}

struct Created {
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLContext context = EGL_NO_CONTEXT;
  EGLSurface surface = EGL_NO_SURFACE;
};

/// An OpenGL 4.5 core context on `display`, made current: surfaceless where the display
/// supports it, else with a 1×1 pbuffer.
Created makeCurrentContext(EGLDisplay display) {
  Created c;
  c.display = display;
  try {
    if (!eglBindAPI(EGL_OPENGL_API)) fail("eglBindAPI(EGL_OPENGL_API) failed");
    const EGLint configAttribs[] = {EGL_SURFACE_TYPE,
                                    EGL_PBUFFER_BIT,
                                    EGL_RENDERABLE_TYPE,
                                    EGL_OPENGL_BIT,
                                    EGL_RED_SIZE,
                                    8,
                                    EGL_GREEN_SIZE,
                                    8,
                                    EGL_BLUE_SIZE,
                                    8,
                                    EGL_NONE};
    EGLConfig config = nullptr;
    EGLint configs = 0;
    if (!eglChooseConfig(display, configAttribs, &config, 1, &configs) || configs == 0) {
      fail("no EGL config for desktop OpenGL");
    }
    const EGLint contextAttribs[] = {EGL_CONTEXT_MAJOR_VERSION,
                                     4,
                                     EGL_CONTEXT_MINOR_VERSION,
                                     5,
                                     EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                     EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                     EGL_NONE};
    c.context = eglCreateContext(display, config, EGL_NO_CONTEXT, contextAttribs);
    if (c.context == EGL_NO_CONTEXT) fail("eglCreateContext(OpenGL 4.5 core) failed");
    if (!hasExtension(eglQueryString(display, EGL_EXTENSIONS), "EGL_KHR_surfaceless_context")) {
      const EGLint pbufferAttribs[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
      c.surface = eglCreatePbufferSurface(display, config, pbufferAttribs);
      if (c.surface == EGL_NO_SURFACE) fail("eglCreatePbufferSurface(1x1) failed");
    }
    if (!eglMakeCurrent(display, c.surface, c.surface, c.context)) fail("eglMakeCurrent failed");
  } catch (...) {
    if (c.context != EGL_NO_CONTEXT) eglDestroyContext(display, c.context);
    if (c.surface != EGL_NO_SURFACE) eglDestroySurface(display, c.surface);
    eglTerminate(display);
    throw;
  }
  return c;
}

Created tryDevice() {
  EGLDeviceEXT device = findNvidiaDevice();
  return makeCurrentContext(platformDisplay(EGL_PLATFORM_DEVICE_EXT, device));
}

Created trySurfaceless() {
  if (!hasExtension(eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS),
                    "EGL_MESA_platform_surfaceless")) {
    throw Attempt("EGL has no EGL_MESA_platform_surfaceless (is Mesa's libegl-mesa0 installed?)");
  }
  return makeCurrentContext(platformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY));
}

}  // namespace

std::unique_ptr<HeadlessGlContext> HeadlessGlContext::create() {
  const Platform wanted = requestedPlatform();
  std::string reasons;
  Created made;
  std::string platformName;
  if (wanted != Platform::Surfaceless) {
    try {
      made = tryDevice();
      platformName = "EGL device platform (NVIDIA)";
    } catch (const Attempt& e) {
      reasons = std::string("EGL device platform: ") + e.what();
    }
  }
  if (made.context == EGL_NO_CONTEXT && wanted != Platform::Device) {
    try {
      made = trySurfaceless();
      platformName = "Mesa surfaceless platform";
    } catch (const Attempt& e) {
      reasons +=
          std::string(reasons.empty() ? "" : "; ") + "Mesa surfaceless platform: " + e.what();
    }
  }
  if (made.context == EGL_NO_CONTEXT) {
    throw GlContextUnavailable("cannot create a headless OpenGL 4.5 context: " + reasons);
  }

  std::unique_ptr<HeadlessGlContext> ctx(new HeadlessGlContext);
  ctx->m_display = made.display;
  ctx->m_context = made.context;
  ctx->m_surface = made.surface;
  try {
    render::loadGl(&eglGetProcAddress);
  } catch (const render::GlError& e) {
    throw GlContextUnavailable(std::string("cannot use the headless OpenGL context (") +
                               platformName + "): " + e.what());
  }
  ctx->m_description = platformName + ", " + render::glDescription();
  return ctx;
}

HeadlessGlContext::~HeadlessGlContext() {
  eglMakeCurrent(m_display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  eglDestroyContext(m_display, m_context);
  if (m_surface != EGL_NO_SURFACE) eglDestroySurface(m_display, m_surface);
  eglTerminate(m_display);
  eglReleaseThread();
}

}  // namespace bhviz::app
