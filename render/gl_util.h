#pragma once
// Private to render/: GLAD, owned GL objects, shader programs. Every object is deleted by its
// owner's destructor, so the context must still be current when the renderer is destroyed.

#include <glad/gl.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "render/gl_loader.h"
#include "render/vertex.h"

namespace bhviz::render::gl {

/// An owned GL object name; `Delete` frees one name.
template <void (*Delete)(GLuint)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(GLuint name) : m_name(name) {}
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : m_name(std::exchange(o.m_name, 0)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      m_name = std::exchange(o.m_name, 0);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  GLuint get() const { return m_name; }
  void reset() {
    if (m_name != 0) Delete(m_name);
    m_name = 0;
  }

 private:
  GLuint m_name = 0;
};

void deleteBuffer(GLuint name);
void deleteVertexArray(GLuint name);
void deleteTexture(GLuint name);
void deleteFramebuffer(GLuint name);
void deleteProgram(GLuint name);
void deleteMemoryObject(GLuint name);

using Buffer = Handle<deleteBuffer>;
using VertexArray = Handle<deleteVertexArray>;
using Texture = Handle<deleteTexture>;
using Framebuffer = Handle<deleteFramebuffer>;
using Program = Handle<deleteProgram>;
using MemoryObject = Handle<deleteMemoryObject>;  // GL_EXT_memory_object

Buffer createBuffer();
VertexArray createVertexArray();
Texture createTexture(GLenum target);
Framebuffer createFramebuffer();

/// Compiles and links shaders/<vertex> and shaders/<fragment> (render/shader_sources.h).
/// Throws GlError with the file name and the driver's first log line.
Program linkProgram(const char* vertex, const char* fragment);
/// Compiles and links the compute shader shaders/<compute>; throws GlError like linkProgram.
Program linkCompute(const char* compute);

/// A 2D texture of `format` (e.g. GL_RGBA16F), linear filtering, clamped to the edge.
Texture createTexture2D(GLenum format, int width, int height);
/// A framebuffer drawing into `colour`; throws GlError when incomplete.
Framebuffer createFramebufferFor(GLuint colour, const char* what);

/// A GL buffer of same-sized elements (particle vertices, overlay boxes) of which the first
/// count() are drawn. It grows, never shrinks; each growth is a new generation, so that a CUDA–GL
/// bridge that registered it registers it again. Filled by upload(), or by a bridge writing into it
/// directly (info()) and then setCount(). Its storage may also be memory another API allocated and
/// exported (importStorage): then name() changes, so a user that may see an import binds name()
/// when it draws (the particles'; the overlay's buffers are never imported).
class ElementBuffer {
 public:
  /// `what` names the buffer in errors ("particle vertex", "overlay box").
  ElementBuffer(std::size_t elementBytes, const char* what);

  /// Storage of its own for at least n elements: grows it when needed, and gives up imported
  /// storage (which the GL cannot write) for a buffer of its own of the same capacity or more;
  /// either is a new generation.
  void reserve(std::size_t n);
  /// Copies n elements in (after reserve(n)).
  void upload(const void* elements, std::size_t n);
  /// Makes `bytes` of memory that another API exported as an opaque POSIX file descriptor
  /// (GL_EXT_memory_object_fd; CUDA's cuMemExportToShareableHandle) the storage of a new buffer
  /// of `capacity` elements (capacity × element size ≤ bytes), count 0, a new generation. The GL
  /// owns `fd` from the call on (it is closed when the import fails). Throws GlError when the GL
  /// lacks the extension or refuses the memory; the buffer is then as it was.
  void importStorage(int fd, std::size_t bytes, std::size_t capacity);
  /// Whether the storage is imported (importStorage, and no reserve or upload since).
  bool imported() const { return m_memory.get() != 0; }
  /// Throws GlError when n exceeds the capacity.
  void setCount(std::size_t n);
  std::size_t count() const { return m_count; }
  GLuint name() const { return m_buffer.get(); }
  VertexBufferInfo info() const;

 private:
  MemoryObject m_memory;  // the imported storage (before m_buffer: outlives the buffer on it)
  Buffer m_buffer;
  std::size_t m_elementBytes;
  const char* m_what;
  std::size_t m_capacity = 0;
  std::size_t m_count = 0;
  std::uint64_t m_generation = 0;
};

/// The UUIDs of the devices the GL runs on (GL_EXT_memory_object: GL_DEVICE_UUID_EXT), to match
/// against another API's before sharing memory with it; none without the extension.
std::vector<std::array<std::uint8_t, 16>> deviceUuids();

/// Throws GlError naming `where` when the GL has recorded an error.
void check(const char* where);

}  // namespace bhviz::render::gl
