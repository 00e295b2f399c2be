#include "render/overlay_renderer.h"

#include <array>
#include <glm/gtc/type_ptr.hpp>

namespace bhviz::render {

namespace {

constexpr GLuint kEdgeBinding = 0;
constexpr GLuint kInstanceBinding = 1;
constexpr int kEdgeVertices = 24;  // 12 edges × 2 ends

// The 12 edges of the cube [-1, 1]³ as line-segment end points.
std::array<glm::vec3, kEdgeVertices> cubeEdges() {
  std::array<glm::vec3, kEdgeVertices> v{};
  int k = 0;
  for (int axis = 0; axis < 3; ++axis) {
    const int a = (axis + 1) % 3;
    const int b = (axis + 2) % 3;
    for (int corner = 0; corner < 4; ++corner) {
      glm::vec3 p(0.0f);
      p[a] = (corner & 1) ? 1.0f : -1.0f;
      p[b] = (corner & 2) ? 1.0f : -1.0f;
      p[axis] = -1.0f;
      v[k++] = p;
      p[axis] = 1.0f;
      v[k++] = p;
    }
  }
  return v;
}

void attribute(GLuint vao, GLuint index, GLint size, GLuint offset, GLuint binding) {
  glEnableVertexArrayAttrib(vao, index);
  glVertexArrayAttribFormat(vao, index, size, GL_FLOAT, GL_FALSE, offset);
  glVertexArrayAttribBinding(vao, index, binding);
}

/// `instances` instances of `vertices` line-list vertices each, alpha-blended over the target
/// with no depth test: the boxes' edges and the lines alike.
void drawInstancedLines(GLuint program, GLuint vao, int vertices, std::size_t instances,
                        const Camera& camera, int width, int height, const char* what) {
  if (instances == 0) return;
  const float aspect = static_cast<float>(width) / static_cast<float>(height);
  const glm::mat4 viewProj = camera.projection(aspect) * camera.view();
  glProgramUniformMatrix4fv(program, glGetUniformLocation(program, "uViewProj"), 1, GL_FALSE,
                            glm::value_ptr(viewProj));
  glUseProgram(program);
  glBindVertexArray(vao);
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
  glDisable(GL_DEPTH_TEST);
  glDrawArraysInstanced(GL_LINES, 0, vertices, static_cast<GLsizei>(instances));
  glDisable(GL_BLEND);
  glBindVertexArray(0);
  gl::check(what);
}

}  // namespace

OverlayRenderer::OverlayRenderer()
    : m_program(gl::linkProgram("overlay_boxes.vert.glsl", "overlay_boxes.frag.glsl")),
      m_vao(gl::createVertexArray()),
      m_edges(gl::createBuffer()),
      m_instances(sizeof(OverlayBox), "overlay box") {
  const auto edges = cubeEdges();
  glNamedBufferStorage(m_edges.get(), sizeof(edges), edges.data(), 0);
  const GLuint vao = m_vao.get();
  glVertexArrayVertexBuffer(vao, kEdgeBinding, m_edges.get(), 0, sizeof(glm::vec3));
  attribute(vao, 0, 3, 0, kEdgeBinding);
  glVertexArrayVertexBuffer(vao, kInstanceBinding, m_instances.name(), 0, sizeof(OverlayBox));
  glVertexArrayBindingDivisor(vao, kInstanceBinding, 1);
  attribute(vao, 1, 3, offsetof(OverlayBox, centre), kInstanceBinding);
  attribute(vao, 2, 3, offsetof(OverlayBox, halfSize), kInstanceBinding);
  attribute(vao, 3, 4, offsetof(OverlayBox, colour), kInstanceBinding);
  gl::check("OverlayRenderer");
}

void OverlayRenderer::reserve(std::size_t n) { m_instances.reserve(n); }
void OverlayRenderer::setBoxes(const OverlayBox* boxes, std::size_t n) {
  m_instances.upload(boxes, n);
}
void OverlayRenderer::setCount(std::size_t n) { m_instances.setCount(n); }
VertexBufferInfo OverlayRenderer::buffer() const { return m_instances.info(); }

void OverlayRenderer::draw(const Camera& camera, int width, int height) {
  drawInstancedLines(m_program.get(), m_vao.get(), kEdgeVertices, m_instances.count(), camera,
                     width, height, "drawing the overlay");
}

OverlayLineRenderer::OverlayLineRenderer()
    : m_program(gl::linkProgram("overlay_lines.vert.glsl", "overlay_boxes.frag.glsl")),
      m_vao(gl::createVertexArray()),
      m_ends(gl::createBuffer()),
      m_instances(sizeof(OverlayLine), "overlay line") {
  const std::array<float, 2> ends = {0.0f, 1.0f};
  glNamedBufferStorage(m_ends.get(), sizeof(ends), ends.data(), 0);
  const GLuint vao = m_vao.get();
  glVertexArrayVertexBuffer(vao, kEdgeBinding, m_ends.get(), 0, sizeof(float));
  attribute(vao, 0, 1, 0, kEdgeBinding);
  glVertexArrayVertexBuffer(vao, kInstanceBinding, m_instances.name(), 0, sizeof(OverlayLine));
  glVertexArrayBindingDivisor(vao, kInstanceBinding, 1);
  attribute(vao, 1, 3, offsetof(OverlayLine, a), kInstanceBinding);
  attribute(vao, 2, 3, offsetof(OverlayLine, b), kInstanceBinding);
  attribute(vao, 3, 4, offsetof(OverlayLine, colour), kInstanceBinding);
  gl::check("OverlayLineRenderer");
}

void OverlayLineRenderer::setLines(const OverlayLine* lines, std::size_t n) {
  m_instances.upload(lines, n);
}

void OverlayLineRenderer::draw(const Camera& camera, int width, int height) {
  drawInstancedLines(m_program.get(), m_vao.get(), 2, m_instances.count(), camera, width, height,
                     "drawing the overlay's lines");
}

}  // namespace bhviz::render
