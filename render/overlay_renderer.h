#pragma once
// Private to render/: instanced wireframe boxes (12 edges of a unit cube, one instance per
// OverlayBox) and lines (one instance per OverlayLine), alpha-blended over the tone-mapped image.

#include <cstddef>

#include "render/camera.h"
#include "render/gl_util.h"
#include "render/vertex.h"

namespace bhviz::render {

class OverlayRenderer {
 public:
  OverlayRenderer();
  void setBoxes(const OverlayBox* boxes, std::size_t n);
  void reserve(std::size_t n);  ///< room for n boxes (grows; a new generation when it does)
  void setCount(
      std::size_t n);  ///< draw the first n boxes (n ≤ capacity), e.g. a bridge wrote them
  VertexBufferInfo buffer() const;
  std::size_t count() const { return m_instances.count(); }
  void draw(const Camera& camera, int width, int height);

 private:
  gl::Program m_program;
  gl::VertexArray m_vao;
  gl::Buffer m_edges;
  gl::ElementBuffer m_instances;
};

/// Lines (one instance per OverlayLine: its two ends), drawn like the boxes: alpha-blended over
/// the tone-mapped image, without depth test.
class OverlayLineRenderer {
 public:
  OverlayLineRenderer();
  void setLines(const OverlayLine* lines, std::size_t n);
  std::size_t count() const { return m_instances.count(); }
  void draw(const Camera& camera, int width, int height);

 private:
  gl::Program m_program;
  gl::VertexArray m_vao;
  gl::Buffer m_ends;
  gl::ElementBuffer m_instances;
};

}  // namespace bhviz::render
