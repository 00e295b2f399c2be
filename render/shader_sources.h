#pragma once
// The GLSL text of shaders/<name>: the copy embedded at configure time, or, when the build
// sets BHVIZ_SHADERS_FROM_DISK, the file as it is now on disk (edit, then rebuild the program).

#include <string>

namespace bhviz::render {

/// Lines `#include "other.glsl"` are replaced by that file's text (GLSL has no includes of its
/// own), so passes share code such as the sprite geometry. Throws GlError when there is no
/// such shader.
std::string shaderSource(const std::string& name);

/// Defined in the generated embedded_shaders.cpp; nullptr for an unknown name.
const char* embeddedShader(const char* name);

}  // namespace bhviz::render
