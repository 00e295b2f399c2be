#pragma once
// Private to render/: the particle pass. Owns the vertex buffer (ParticleVertex, 16 bytes) and
// the palette texture; adds gaussian sprites into the scene buffer, either as point sprites
// through the rasteriser (draw) or with a compute shader (splat): the same sprites, the same
// picture up to fixed-point rounding (tests/test_render.cpp compares them). With extinction, the
// dust pass runs first and each star is dimmed by the dust in front of it (dust_pass.h).

#include <array>
#include <cstddef>
#include <cstdint>

#include "render/camera.h"
#include "render/dust_pass.h"
#include "render/gl_util.h"
#include "render/palette.h"
#include "render/renderer.h"
#include "render/vertex.h"

namespace bhviz::render {

class ParticleRenderer {
 public:
  ParticleRenderer();
  ~ParticleRenderer();
  ParticleRenderer(const ParticleRenderer&) = delete;
  ParticleRenderer& operator=(const ParticleRenderer&) = delete;

  void reserve(std::size_t n);
  void upload(const ParticleVertex* vertices, std::size_t n);
  /// The vertex buffer's storage from another API (gl::ElementBuffer::importStorage).
  void importStorage(int fd, std::size_t bytes, std::size_t capacity);
  bool imported() const { return m_vertices.imported(); }
  void setCount(std::size_t n);
  std::size_t count() const { return m_vertices.count(); }
  VertexBufferInfo buffer() const;
  void setPalette(const Palette& palette);

  /// Additive point sprites into the bound framebuffer, whose size is width × height.
  void draw(const Camera& camera, const RenderParams& params, int width, int height);
  /// Whether the compute splat can draw the current particles into width × height: its buffers
  /// (the sums at full, half, quarter and eighth resolution) must fit the GL's largest shader
  /// storage block (Mesa's is often 128 MiB, about 8 M pixels); the raster pass has no such
  /// limit.
  bool splatFits(int width, int height) const;
  /// The same sprites added up by the compute splat, written over every pixel of `scene`
  /// (an RGBA16F texture of width × height).
  void splat(const Camera& camera, const RenderParams& params, int width, int height, GLuint scene);
  /// The steps' GPU times of the last draw or splat with RenderParams::profile on (waits for
  /// the GL to finish them); zeros when it was off.
  RenderProfile profile() const;

 private:
  /// The steps timed with RenderParams::profile: a GL timestamp after each.
  enum Mark { kStart, kDustSplat, kDustIntegrate, kSprites, kResolve, kMarks };

  /// The dust pass when extinction is on (before either particle pass).
  void addDust(const Camera& camera, const RenderParams& params, int width, int height);
  /// The coarser levels' sums into their textures (depth of field), zeroing the sums.
  void resolveCoarse(int width, int height, int used);
  /// A timestamp for `mark` when profiling; the first mark of a frame forgets the last frame's.
  void mark(const RenderParams& params, Mark mark);
  /// The sprite geometry's uniforms (shaders/sprite_geometry.glsl, sprite_profile.glsl).
  void setSpriteUniforms(GLuint program, const Camera& camera, const RenderParams& params,
                         int width, int height) const;

  gl::Program m_program;
  gl::Program m_splatProgram;
  gl::Program m_resolveProgram;
  gl::Program m_coarseProgram;
  gl::Program m_sharpResolveProgram;  // the resolve without depth of field (no coarser level)
  gl::Buffer m_light;           // the splat's fixed-point sums: per level, 3 planes of its cells
  std::size_t m_lightSums = 0;  // its size [uint]
  std::array<gl::Texture, 3> m_coarse;  // levels 1..3 resolved (RGBA16F), with depth of field
  int m_coarseWidth = 0, m_coarseHeight = 0;
  std::array<GLuint, kMarks> m_queries{};  // GL_TIMESTAMP queries
  std::array<bool, kMarks> m_marked{};
  DustPass m_dust;
  std::int64_t m_maxStorageBlock = 0;  // GL_MAX_SHADER_STORAGE_BLOCK_SIZE [bytes]
  gl::VertexArray m_vao;
  gl::ElementBuffer m_vertices;
  gl::Texture m_palette;
  int m_paletteSize = 1;
  float m_maxPointSize = 64.0f;
};

}  // namespace bhviz::render
