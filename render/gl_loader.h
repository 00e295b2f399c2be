#pragma once
// Loading the OpenGL entry points. The renderer needs a current OpenGL 4.5 core context; the
// caller creates it (EGL headless, GLFW windowed) and hands over its getProcAddress. This header
// includes no GL header, so app/ code never sees GLAD.

#include <stdexcept>
#include <string>

namespace bhviz::render {

/// Anything the GL refused: a missing version, a shader that does not compile, an incomplete
/// framebuffer. what() is one line.
struct GlError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using GlProc = void (*)();
using GetProcAddress = GlProc (*)(const char* name);

/// Loads every GL 4.5 core entry point through `getProc` for the current context. Throws
/// GlError when the context is older than 4.5 or not a core/compatible one.
void loadGl(GetProcAddress getProc);

/// "OpenGL 4.5 (Core Profile) Mesa 22.3.6, llvmpipe (LLVM 15.0.6, 256 bits)" for the current
/// context (after loadGl).
std::string glDescription();

}  // namespace bhviz::render
