#pragma once
// Private to render/: extinction by dust (RenderParams::extinction). The dust of the vertices
// that carry it (value ≥ kDustValue) is added up as optical depth in depth slices around the
// camera's target, on a grid coarser than the picture (shaders/dust_splat.comp.glsl), then summed
// front to back into a 3D texture of the slices' boundaries (dust_integrate.comp.glsl) that both
// particle passes sample once per star, at its centre and depth (sprite_geometry.glsl).

#include <cstddef>
#include <cstdint>

#include "render/camera.h"
#include "render/gl_util.h"
#include "render/renderer.h"

namespace bhviz::render {

class DustPass {
 public:
  DustPass();

  /// Adds the dust among the first `count` vertices of `vertices` (a buffer of ParticleVertex)
  /// as optical depth into the slices, for a width × height picture seen by `camera`.
  void splat(const Camera& camera, const ParticleStyle& style, const Extinction& extinction,
             GLuint vertices, std::size_t count, int width, int height);
  /// Sums the last splat's slices front to back into the texture that use() binds.
  void integrate();
  /// Sets a particle pass's extinction uniforms (sprite_geometry.glsl): the last run's texture,
  /// bound to its unit, when `enabled`, else extinction off.
  void use(GLuint program, bool enabled) const;

 private:
  gl::Program m_splat;
  gl::Program m_integrate;
  gl::Buffer m_sums;  // fixed-point optical depth: slices planes of cells
  std::size_t m_sumCount = 0;
  gl::Texture m_depth;  // R32F, cells × (slices + 1) boundaries
  int m_cellsX = 0, m_cellsY = 0, m_layers = 0;
  int m_cellPixels = 2;
  int m_width = 0, m_height = 0;
  float m_near = 0.0f, m_far = 1.0f;
  int m_slices = 1;
  std::int64_t m_maxStorageBlock = 0;
};

}  // namespace bhviz::render
