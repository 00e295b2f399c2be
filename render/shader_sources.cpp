#include "render/shader_sources.h"

#include <fstream>
#include <sstream>

#include "render/gl_loader.h"

namespace bhviz::render {

namespace {

/// The file's text as it was embedded, or as it is on disk (BHVIZ_SHADERS_FROM_DISK).
std::string rawSource(const std::string& name) {
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

constexpr int kMaxIncludeDepth = 4;

std::string expand(const std::string& name, int depth) {
  if (depth > kMaxIncludeDepth) {
    throw GlError("shader " + name + ": #include nested more than " +
                  std::to_string(kMaxIncludeDepth) + " deep");
  }
  std::istringstream in(rawSource(name));
  std::ostringstream out;
  const std::string directive = "#include \"";
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, directive.size(), directive) == 0) {
      const std::size_t end = line.find('"', directive.size());
      if (end == std::string::npos) throw GlError("shader " + name + ": malformed " + line);
      out << expand(line.substr(directive.size(), end - directive.size()), depth + 1);
    } else {
      out << line << '\n';
    }
  }
  return out.str();
}

}  // namespace

std::string shaderSource(const std::string& name) { return expand(name, 0); }

}  // namespace bhviz::render
