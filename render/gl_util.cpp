#include "render/gl_util.h"

#include <unistd.h>

#include <algorithm>
#include <initializer_list>
#include <sstream>

#include "render/shader_sources.h"

namespace bhviz::render {

void loadGl(GetProcAddress getProc) {
  const int version = gladLoadGL(reinterpret_cast<GLADloadfunc>(getProc));
  if (version == 0) throw GlError("cannot load the OpenGL entry points (no current context?)");
  const int major = GLAD_VERSION_MAJOR(version);
  const int minor = GLAD_VERSION_MINOR(version);
  if (major < 4 || (major == 4 && minor < 5)) {
    throw GlError("OpenGL 4.5 is required but the context offers " + std::to_string(major) + "." +
                  std::to_string(minor));
  }
}

std::string glDescription() {
  auto text = [](GLenum e) {
    const GLubyte* s = glGetString(e);
    return s ? std::string(reinterpret_cast<const char*>(s)) : std::string("?");
  };
  return "OpenGL " + text(GL_VERSION) + ", " + text(GL_RENDERER);
}

namespace gl {

void deleteBuffer(GLuint name) { glDeleteBuffers(1, &name); }
void deleteVertexArray(GLuint name) { glDeleteVertexArrays(1, &name); }
void deleteTexture(GLuint name) { glDeleteTextures(1, &name); }
void deleteFramebuffer(GLuint name) { glDeleteFramebuffers(1, &name); }
void deleteProgram(GLuint name) { glDeleteProgram(name); }
void deleteMemoryObject(GLuint name) { glDeleteMemoryObjectsEXT(1, &name); }

Buffer createBuffer() {
  GLuint name = 0;
  glCreateBuffers(1, &name);
  return Buffer(name);
}

VertexArray createVertexArray() {
  GLuint name = 0;
  glCreateVertexArrays(1, &name);
  return VertexArray(name);
}

Texture createTexture(GLenum target) {
  GLuint name = 0;
  glCreateTextures(target, 1, &name);
  return Texture(name);
}

Framebuffer createFramebuffer() {
  GLuint name = 0;
  glCreateFramebuffers(1, &name);
  return Framebuffer(name);
}

namespace {

std::string firstLine(const std::string& log) {
  std::istringstream s(log);
  std::string line;
  while (std::getline(s, line)) {
    if (!line.empty()) return line;
  }
  return "(no log)";
}

GLuint compile(GLenum stage, const std::string& name) {
  const std::string source = shaderSource(name);
  const GLuint shader = glCreateShader(stage);
  const char* text = source.c_str();
  glShaderSource(shader, 1, &text, nullptr);
  glCompileShader(shader);
  GLint ok = GL_FALSE;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (ok != GL_TRUE) {
    GLint length = 0;
    glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &length);
    std::string log(static_cast<std::size_t>(length > 0 ? length : 1), '\0');
    glGetShaderInfoLog(shader, length, nullptr, log.data());
    glDeleteShader(shader);
    throw GlError("shader " + name + " does not compile: " + firstLine(log));
  }
  return shader;
}

/// Links compiled shaders into a program and deletes them; `what` names them in the error.
Program link(std::initializer_list<GLuint> shaders, const std::string& what) {
  Program program(glCreateProgram());
  for (GLuint s : shaders) glAttachShader(program.get(), s);
  glLinkProgram(program.get());
  for (GLuint s : shaders) {
    glDetachShader(program.get(), s);
    glDeleteShader(s);
  }
  GLint ok = GL_FALSE;
  glGetProgramiv(program.get(), GL_LINK_STATUS, &ok);
  if (ok != GL_TRUE) {
    GLint length = 0;
    glGetProgramiv(program.get(), GL_INFO_LOG_LENGTH, &length);
    std::string log(static_cast<std::size_t>(length > 0 ? length : 1), '\0');
    glGetProgramInfoLog(program.get(), length, nullptr, log.data());
    throw GlError("shaders " + what + " do not link: " + firstLine(log));
  }
  return program;
}

}  // namespace

Program linkProgram(const char* vertex, const char* fragment) {
  const GLuint vs = compile(GL_VERTEX_SHADER, vertex);
  GLuint fs = 0;
  try {
    fs = compile(GL_FRAGMENT_SHADER, fragment);
  } catch (...) {
    glDeleteShader(vs);
    throw;
  }
  return link({vs, fs}, std::string(vertex) + " + " + fragment);
}

Program linkCompute(const char* compute) {
  return link({compile(GL_COMPUTE_SHADER, compute)}, compute);
}

Texture createTexture2D(GLenum format, int width, int height) {
  Texture t = createTexture(GL_TEXTURE_2D);
  glTextureStorage2D(t.get(), 1, format, width, height);
  glTextureParameteri(t.get(), GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTextureParameteri(t.get(), GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTextureParameteri(t.get(), GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTextureParameteri(t.get(), GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  return t;
}

Framebuffer createFramebufferFor(GLuint colour, const char* what) {
  Framebuffer f = createFramebuffer();
  glNamedFramebufferTexture(f.get(), GL_COLOR_ATTACHMENT0, colour, 0);
  const GLenum status = glCheckNamedFramebufferStatus(f.get(), GL_FRAMEBUFFER);
  if (status != GL_FRAMEBUFFER_COMPLETE) {
    std::ostringstream s;
    s << "the " << what << " framebuffer is incomplete (status 0x" << std::hex << status << ")";
    throw GlError(s.str());
  }
  return f;
}

ElementBuffer::ElementBuffer(std::size_t elementBytes, const char* what)
    : m_buffer(createBuffer()), m_elementBytes(elementBytes), m_what(what) {}

void ElementBuffer::reserve(std::size_t n) {
  if (!imported() && n <= m_capacity && m_capacity > 0) return;
  const std::size_t capacity = std::max({n, m_capacity, std::size_t{1}});
  if (imported()) {  // storage of its own again: a new buffer (the imported one is immutable)
    m_buffer = createBuffer();
    m_memory.reset();
    m_capacity = 0;
    m_count = 0;
  }
  glNamedBufferData(m_buffer.get(), static_cast<GLsizeiptr>(capacity * m_elementBytes), nullptr,
                    GL_DYNAMIC_DRAW);
  check(("allocating the " + std::string(m_what) + " buffer").c_str());
  m_capacity = capacity;
  if (m_count > m_capacity) m_count = m_capacity;
  ++m_generation;
}

void ElementBuffer::upload(const void* elements, std::size_t n) {
  reserve(n);
  if (n > 0) {
    glNamedBufferSubData(m_buffer.get(), 0, static_cast<GLsizeiptr>(n * m_elementBytes), elements);
  }
  m_count = n;
  check(("uploading the " + std::string(m_what) + " buffer").c_str());
}

void ElementBuffer::setCount(std::size_t n) {
  if (n > m_capacity) {
    throw GlError("drawing " + std::to_string(n) + " elements of the " + m_what +
                  " buffer exceeds its capacity " + std::to_string(m_capacity));
  }
  m_count = n;
}

void ElementBuffer::importStorage(int fd, std::size_t bytes, std::size_t capacity) {
  if (!GLAD_GL_EXT_memory_object || !GLAD_GL_EXT_memory_object_fd) {
    close(fd);
    throw GlError("the GL has no GL_EXT_memory_object_fd");
  }
  if (capacity == 0 || capacity * m_elementBytes > bytes) {
    close(fd);
    throw GlError("importing " + std::to_string(bytes) + " bytes as " + std::to_string(capacity) +
                  " elements of the " + m_what + " buffer");
  }
  try {
    check("a call before importing memory");  // so that an error after the import is its own
  } catch (...) {
    close(fd);
    throw;
  }
  GLuint name = 0;
  glCreateMemoryObjectsEXT(1, &name);
  MemoryObject memory(name);
  glImportMemoryFdEXT(name, static_cast<GLuint64>(bytes), GL_HANDLE_TYPE_OPAQUE_FD_EXT, fd);
  if (glGetError() != GL_NO_ERROR) {
    close(fd);  // a failed import leaves the descriptor with us
    throw GlError("the GL refused the memory for the " + std::string(m_what) + " buffer");
  }
  Buffer buffer = createBuffer();
  glNamedBufferStorageMemEXT(buffer.get(), static_cast<GLsizeiptr>(capacity * m_elementBytes), name,
                             0);
  check(("importing the " + std::string(m_what) + " buffer's storage").c_str());
  m_buffer = std::move(buffer);  // the old buffer goes first, then its memory object
  m_memory = std::move(memory);
  m_capacity = capacity;
  m_count = 0;
  ++m_generation;
}

VertexBufferInfo ElementBuffer::info() const {
  return {m_buffer.get(), m_capacity * m_elementBytes, m_capacity, m_generation};
}

std::vector<std::array<std::uint8_t, 16>> deviceUuids() {
  std::vector<std::array<std::uint8_t, 16>> uuids;
  if (!GLAD_GL_EXT_memory_object) return uuids;
  GLint devices = 0;
  glGetIntegerv(GL_NUM_DEVICE_UUIDS_EXT, &devices);
  for (GLint i = 0; i < devices; ++i) {
    std::array<std::uint8_t, 16> uuid{};
    glGetUnsignedBytei_vEXT(GL_DEVICE_UUID_EXT, static_cast<GLuint>(i), uuid.data());
    uuids.push_back(uuid);
  }
  check("reading the GL's device UUIDs");
  return uuids;
}

void check(const char* where) {
  const GLenum e = glGetError();
  if (e != GL_NO_ERROR) {
    std::ostringstream s;
    s << "OpenGL error 0x" << std::hex << e << " in " << where;
    throw GlError(s.str());
  }
}

}  // namespace gl
}  // namespace bhviz::render
