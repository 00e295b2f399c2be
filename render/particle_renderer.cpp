#include "render/particle_renderer.h"

#include <algorithm>
#include <glm/gtc/type_ptr.hpp>
#include <string>

namespace bhviz::render {

namespace {
constexpr GLuint kBinding = 0;
constexpr GLuint kPositionAttrib = 0;
constexpr GLuint kValueAttrib = 1;
constexpr GLuint kPaletteUnit = 0;
}  // namespace

ParticleRenderer::ParticleRenderer()
    : m_program(gl::linkProgram("particles.vert.glsl", "particles.frag.glsl")),
      m_vao(gl::createVertexArray()),
      m_vbo(gl::createBuffer()),
      m_palette(gl::createTexture(GL_TEXTURE_1D)) {
  const GLuint vao = m_vao.get();
  glVertexArrayVertexBuffer(vao, kBinding, m_vbo.get(), 0, sizeof(ParticleVertex));
  glEnableVertexArrayAttrib(vao, kPositionAttrib);
  glVertexArrayAttribFormat(vao, kPositionAttrib, 3, GL_FLOAT, GL_FALSE,
                            offsetof(ParticleVertex, x));
  glVertexArrayAttribBinding(vao, kPositionAttrib, kBinding);
  glEnableVertexArrayAttrib(vao, kValueAttrib);
  glVertexArrayAttribFormat(vao, kValueAttrib, 1, GL_FLOAT, GL_FALSE,
                            offsetof(ParticleVertex, value));
  glVertexArrayAttribBinding(vao, kValueAttrib, kBinding);

  GLfloat range[2] = {1.0f, 64.0f};
  glGetFloatv(GL_POINT_SIZE_RANGE, range);
  m_maxPointSize = range[1];
  setPalette(Palette::discrete({{1.0f, 1.0f, 1.0f}}));
  gl::check("ParticleRenderer");
}

void ParticleRenderer::reserve(std::size_t n) {
  if (n <= m_capacity && m_capacity > 0) return;
  const std::size_t capacity = std::max<std::size_t>(n, 1);
  glNamedBufferData(m_vbo.get(), static_cast<GLsizeiptr>(capacity * sizeof(ParticleVertex)),
                    nullptr, GL_DYNAMIC_DRAW);
  gl::check("allocating the particle vertex buffer");
  m_capacity = capacity;
  m_count = std::min(m_count, m_capacity);
  ++m_generation;
}

void ParticleRenderer::upload(const ParticleVertex* vertices, std::size_t n) {
  reserve(n);
  if (n > 0) {
    glNamedBufferSubData(m_vbo.get(), 0, static_cast<GLsizeiptr>(n * sizeof(ParticleVertex)),
                         vertices);
  }
  m_count = n;
}

void ParticleRenderer::setCount(std::size_t n) {
  if (n > m_capacity) {
    throw GlError("setParticleCount(" + std::to_string(n) + ") exceeds the buffer's capacity " +
                  std::to_string(m_capacity));
  }
  m_count = n;
}

VertexBufferInfo ParticleRenderer::buffer() const {
  return {m_vbo.get(), m_capacity * sizeof(ParticleVertex), m_capacity, m_generation};
}

void ParticleRenderer::setPalette(const Palette& palette) {
  validate(palette);
  // Texture storage is immutable: a new palette gets a new texture.
  m_palette = gl::createTexture(GL_TEXTURE_1D);
  const GLuint t = m_palette.get();
  m_paletteSize = static_cast<int>(palette.colours.size());
  glTextureStorage1D(t, 1, GL_RGB32F, m_paletteSize);
  glTextureSubImage1D(t, 0, 0, m_paletteSize, GL_RGB, GL_FLOAT, palette.colours.data());
  const GLint filter = palette.smooth ? GL_LINEAR : GL_NEAREST;
  glTextureParameteri(t, GL_TEXTURE_MIN_FILTER, filter);
  glTextureParameteri(t, GL_TEXTURE_MAG_FILTER, filter);
  glTextureParameteri(t, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  gl::check("uploading the palette");
}

void ParticleRenderer::draw(const Camera& camera, const ParticleStyle& style, int width,
                            int height) {
  if (m_count == 0) return;
  const GLuint p = m_program.get();
  const float aspect = static_cast<float>(width) / static_cast<float>(height);
  const glm::mat4 view = camera.view();
  const glm::mat4 proj = camera.projection(aspect);
  glProgramUniformMatrix4fv(p, glGetUniformLocation(p, "uView"), 1, GL_FALSE,
                            glm::value_ptr(view));
  glProgramUniformMatrix4fv(p, glGetUniformLocation(p, "uProj"), 1, GL_FALSE,
                            glm::value_ptr(proj));
  glProgramUniform1f(p, glGetUniformLocation(p, "uSpriteSize"), style.spriteSize);
  glProgramUniform1f(p, glGetUniformLocation(p, "uPixelsPerUnit"),
                     camera.pixelsPerUnitAtUnitDepth(static_cast<float>(height)));
  glProgramUniform1f(p, glGetUniformLocation(p, "uMinSizePx"), style.minSizePx);
  glProgramUniform1f(p, glGetUniformLocation(p, "uMaxSizePx"),
                     std::min(style.maxSizePx, m_maxPointSize));
  glProgramUniform1f(p, glGetUniformLocation(p, "uBrightness"), style.brightness);
  glProgramUniform1f(p, glGetUniformLocation(p, "uSharpness"), style.sharpness);
  glProgramUniform1f(p, glGetUniformLocation(p, "uPaletteSize"),
                     static_cast<float>(m_paletteSize));
  glProgramUniform1i(p, glGetUniformLocation(p, "uPalette"), kPaletteUnit);

  glBindTextureUnit(kPaletteUnit, m_palette.get());
  glUseProgram(p);
  glBindVertexArray(m_vao.get());
  glEnable(GL_PROGRAM_POINT_SIZE);
  glEnable(GL_BLEND);
  glBlendFunc(GL_ONE, GL_ONE);
  glDisable(GL_DEPTH_TEST);
  glDrawArrays(GL_POINTS, 0, static_cast<GLsizei>(m_count));
  glDisable(GL_BLEND);
  glBindVertexArray(0);
  gl::check("drawing the particles");
}

}  // namespace bhviz::render
