#pragma once
// Private to render/: the particle pass. Owns the vertex buffer (ParticleVertex, 16 bytes) and
// the palette texture; draws additive gaussian point sprites into the bound framebuffer.

#include <cstddef>

#include "render/camera.h"
#include "render/gl_util.h"
#include "render/palette.h"
#include "render/renderer.h"
#include "render/vertex.h"

namespace bhviz::render {

class ParticleRenderer {
 public:
  ParticleRenderer();

  void reserve(std::size_t n);
  void upload(const ParticleVertex* vertices, std::size_t n);
  void setCount(std::size_t n);
  std::size_t count() const { return m_count; }
  VertexBufferInfo buffer() const;
  void setPalette(const Palette& palette);

  /// Additive sprites into the bound framebuffer, whose size is width × height.
  void draw(const Camera& camera, const ParticleStyle& style, int width, int height);

 private:
  gl::Program m_program;
  gl::VertexArray m_vao;
  gl::Buffer m_vbo;
  gl::Texture m_palette;
  std::size_t m_capacity = 0;
  std::size_t m_count = 0;
  std::uint64_t m_generation = 0;
  int m_paletteSize = 1;
  float m_maxPointSize = 64.0f;
};

}  // namespace bhviz::render
