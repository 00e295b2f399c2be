#include "render/shader_sources.h"

#include <fstream>
#include <sstream>

#include "render/gl_loader.h"

namespace bhviz::render {

std::string shaderSource(const std::string& name) {
#ifdef BHVIZ_SHADER_DIR
  const std::string path = std::string(BHVIZ_SHADER_DIR) + "/" + name;
  std::ifstream file(path, std::ios::binary);
  if (!file) throw GlError("shader " + path + " cannot be read (BHVIZ_SHADERS_FROM_DISK)");
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
#else
  const char* text = embeddedShader(name.c_str());
  if (text == nullptr) throw GlError("shader " + name + " is not embedded in this build");
  return text;
#endif
}

}  // namespace bhviz::render
