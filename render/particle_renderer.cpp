#include "render/particle_renderer.h"

#include <algorithm>
#include <array>
#include <glm/gtc/type_ptr.hpp>
#include <string>

namespace bhviz::render {

namespace {
constexpr GLuint kBinding = 0;
constexpr GLuint kPositionAttrib = 0;
constexpr GLuint kValueAttrib = 1;
constexpr GLuint kPaletteUnit = 0;
constexpr GLuint kVerticesSlot = 0;  // shader storage bindings of the splat
constexpr GLuint kLightSlot = 1;
constexpr GLuint kSceneImageUnit = 0;
constexpr GLuint kSplatGroupSize = 256;  // local_size_x of particles_splat.comp.glsl
constexpr GLuint kResolveTile = 16;      // local_size of particles_resolve.comp.glsl
constexpr GLuint kMaxGroups = 65535;     // the GL's guaranteed work-group count per dimension
// 2^16 units per unit of linear light: a sum saturates at 65536, about the RGBA16F scene
// buffer's own largest value, and the finest step (1.5e-5) is far below one display level.
constexpr float kFixedScale = 65536.0f;
// Depth of field: blurred sprites wider than kLevelDiameter cells go a level coarser, down to
// an eighth of the resolution, so a blurred star costs at most a few dozen atomics per channel.
constexpr int kLevels = 4;
constexpr float kLevelDiameter = 8.0f;

struct Level {
  GLint width, height;
  GLuint offset;  // first uint of the level's 3 planes
};

// The splat's levels for a width × height picture; the last entry's offset is the total.
std::array<Level, kLevels + 1> levelsOf(int width, int height) {
  std::array<Level, kLevels + 1> levels{};
  GLuint offset = 0;
  for (int k = 0; k <= kLevels; ++k) {
    const int cell = 1 << k;
    levels[static_cast<std::size_t>(k)] = {(width + cell - 1) / cell, (height + cell - 1) / cell,
                                           offset};
    offset += 3u * static_cast<GLuint>(levels[static_cast<std::size_t>(k)].width *
                                       levels[static_cast<std::size_t>(k)].height);
  }
  return levels;
}

void setLevelUniforms(GLuint p, const std::array<Level, kLevels + 1>& levels, int used) {
  glProgramUniform1i(p, glGetUniformLocation(p, "uLevels"), used);
  for (int k = 0; k < kLevels; ++k) {
    const Level& l = levels[static_cast<std::size_t>(k)];
    const std::string i = "[" + std::to_string(k) + "]";
    glProgramUniform2i(p, glGetUniformLocation(p, ("uLevelSize" + i).c_str()), l.width, l.height);
    glProgramUniform1ui(p, glGetUniformLocation(p, ("uLevelOffset" + i).c_str()), l.offset);
  }
}
}  // namespace

ParticleRenderer::ParticleRenderer()
    : m_program(gl::linkProgram("particles.vert.glsl", "particles.frag.glsl")),
      m_splatProgram(gl::linkCompute("particles_splat.comp.glsl")),
      m_resolveProgram(gl::linkCompute("particles_resolve.comp.glsl")),
      m_light(gl::createBuffer()),
      m_vao(gl::createVertexArray()),
      m_vertices(sizeof(ParticleVertex), "particle vertex"),
      m_palette(gl::createTexture(GL_TEXTURE_1D)) {
  const GLuint vao = m_vao.get();
  glVertexArrayVertexBuffer(vao, kBinding, m_vertices.name(), 0, sizeof(ParticleVertex));
  glEnableVertexArrayAttrib(vao, kPositionAttrib);
  glVertexArrayAttribFormat(vao, kPositionAttrib, 3, GL_FLOAT, GL_FALSE,
                            offsetof(ParticleVertex, x));
  glVertexArrayAttribBinding(vao, kPositionAttrib, kBinding);
  glEnableVertexArrayAttrib(vao, kValueAttrib);
  glVertexArrayAttribFormat(vao, kValueAttrib, 1, GL_FLOAT, GL_FALSE,
                            offsetof(ParticleVertex, value));
  glVertexArrayAttribBinding(vao, kValueAttrib, kBinding);

  GLint64 maxBlock = 0;
  glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &maxBlock);
  m_maxStorageBlock = maxBlock;
  GLfloat range[2] = {1.0f, 64.0f};
  glGetFloatv(GL_POINT_SIZE_RANGE, range);
  m_maxPointSize = range[1];
  setPalette(Palette::discrete({{1.0f, 1.0f, 1.0f}}));
  gl::check("ParticleRenderer");
}

void ParticleRenderer::reserve(std::size_t n) { m_vertices.reserve(n); }
void ParticleRenderer::upload(const ParticleVertex* vertices, std::size_t n) {
  m_vertices.upload(vertices, n);
}
void ParticleRenderer::setCount(std::size_t n) { m_vertices.setCount(n); }
VertexBufferInfo ParticleRenderer::buffer() const { return m_vertices.info(); }

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

void ParticleRenderer::addDust(const Camera& camera, const RenderParams& params, int width,
                               int height) {
  if (!params.extinction.enabled) return;
  m_dust.run(camera, params.particles, params.extinction, m_vertices.name(), m_vertices.count(),
             width, height);
}

void ParticleRenderer::setSpriteUniforms(GLuint p, const Camera& camera, const RenderParams& params,
                                         int width, int height) const {
  const ParticleStyle& style = params.particles;
  const float aspect = static_cast<float>(width) / static_cast<float>(height);
  const glm::mat4 view = camera.view();
  const glm::mat4 proj = camera.projection(aspect);
  glProgramUniformMatrix4fv(p, glGetUniformLocation(p, "uView"), 1, GL_FALSE, glm::value_ptr(view));
  glProgramUniformMatrix4fv(p, glGetUniformLocation(p, "uProj"), 1, GL_FALSE, glm::value_ptr(proj));
  glProgramUniform1f(p, glGetUniformLocation(p, "uSpriteSize"), style.spriteSize);
  glProgramUniform1f(p, glGetUniformLocation(p, "uPixelsPerUnit"),
                     camera.pixelsPerUnitAtUnitDepth(static_cast<float>(height)));
  glProgramUniform1f(p, glGetUniformLocation(p, "uMinSizePx"), style.minSizePx);
  // The raster pass cannot draw points above the driver's limit; the splat keeps to it too,
  // so both draw the same picture.
  glProgramUniform1f(p, glGetUniformLocation(p, "uMaxSizePx"),
                     std::min(style.maxSizePx, m_maxPointSize));
  glProgramUniform1f(p, glGetUniformLocation(p, "uBrightness"), style.brightness);
  glProgramUniform1f(p, glGetUniformLocation(p, "uSharpness"), style.sharpness);
  glProgramUniform1f(p, glGetUniformLocation(p, "uPaletteSize"), static_cast<float>(m_paletteSize));
  glProgramUniform1i(p, glGetUniformLocation(p, "uPalette"), kPaletteUnit);
  glProgramUniform1f(p, glGetUniformLocation(p, "uDustValue"), kDustValue);
  const DepthOfField& dof = params.depthOfField;
  const bool blur = dof.enabled && dof.aperture > 0.0f && dof.focus > 0.0f;
  glProgramUniform1f(p, glGetUniformLocation(p, "uCocScale"),
                     blur ? dof.aperture * camera.pixelsPerUnitAtUnitDepth(float(height)) : 0.0f);
  glProgramUniform1f(p, glGetUniformLocation(p, "uFocus"), dof.focus * camera.distance);
  m_dust.use(p, params.extinction.enabled);
}

void ParticleRenderer::draw(const Camera& camera, const RenderParams& params, int width,
                            int height) {
  if (m_vertices.count() == 0) return;
  addDust(camera, params, width, height);
  const GLuint p = m_program.get();
  setSpriteUniforms(p, camera, params, width, height);
  glBindTextureUnit(kPaletteUnit, m_palette.get());
  glUseProgram(p);
  glBindVertexArray(m_vao.get());
  glEnable(GL_PROGRAM_POINT_SIZE);
  glEnable(GL_BLEND);
  glBlendFunc(GL_ONE, GL_ONE);
  glDisable(GL_DEPTH_TEST);
  glDrawArrays(GL_POINTS, 0, static_cast<GLsizei>(m_vertices.count()));
  glDisable(GL_BLEND);
  glBindVertexArray(0);
  gl::check("drawing the particles");
}

bool ParticleRenderer::splatFits(int width, int height) const {
  const auto light = static_cast<std::int64_t>(levelsOf(width, height)[kLevels].offset) *
                     static_cast<std::int64_t>(sizeof(GLuint));
  const auto vertices = static_cast<std::int64_t>(m_vertices.count() * sizeof(ParticleVertex));
  return light <= m_maxStorageBlock && vertices <= m_maxStorageBlock;
}

void ParticleRenderer::splat(const Camera& camera, const RenderParams& params, int width,
                             int height, GLuint scene) {
  const std::array<Level, kLevels + 1> levels = levelsOf(width, height);
  const GLsizeiptr lightBytes = static_cast<GLsizeiptr>(levels[kLevels].offset * sizeof(GLuint));
  // The coarser levels only with depth of field: without, every sprite is drawn at full size.
  const int used = params.depthOfField.enabled ? kLevels : 1;
  if (levels[kLevels].offset != m_lightSums) {
    // Zeroed once here; from then on the resolve zeroes each sum it reads.
    glNamedBufferData(m_light.get(), lightBytes, nullptr, GL_DYNAMIC_COPY);
    glClearNamedBufferData(m_light.get(), GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT, nullptr);
    gl::check("allocating the splat's light buffer");
    m_lightSums = levels[kLevels].offset;
  }
  // The previous frame's resolve has zeroed the sums.
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kLightSlot, m_light.get());

  if (m_vertices.count() > 0) {
    addDust(camera, params, width, height);
    const GLuint p = m_splatProgram.get();
    setSpriteUniforms(p, camera, params, width, height);
    setLevelUniforms(p, levels, used);
    glProgramUniform1f(p, glGetUniformLocation(p, "uLevelDiameter"), kLevelDiameter);
    glProgramUniform1ui(p, glGetUniformLocation(p, "uCount"),
                        static_cast<GLuint>(m_vertices.count()));
    glProgramUniform2i(p, glGetUniformLocation(p, "uViewport"), width, height);
    glProgramUniform1f(p, glGetUniformLocation(p, "uFixedScale"), kFixedScale);
    glBindTextureUnit(kPaletteUnit, m_palette.get());
    glBindBufferRange(GL_SHADER_STORAGE_BUFFER, kVerticesSlot, m_vertices.name(), 0,
                      static_cast<GLsizeiptr>(m_vertices.count() * sizeof(ParticleVertex)));
    glUseProgram(p);
    const std::size_t groups = (m_vertices.count() + kSplatGroupSize - 1) / kSplatGroupSize;
    glDispatchCompute(static_cast<GLuint>(std::min<std::size_t>(groups, kMaxGroups)), 1, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
  }

  const GLuint r = m_resolveProgram.get();
  glProgramUniform2i(r, glGetUniformLocation(r, "uViewport"), width, height);
  glProgramUniform1f(r, glGetUniformLocation(r, "uInvFixedScale"), 1.0f / kFixedScale);
  setLevelUniforms(r, levels, used);
  glBindImageTexture(kSceneImageUnit, scene, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA16F);
  glUseProgram(r);
  glDispatchCompute((static_cast<GLuint>(width) + kResolveTile - 1) / kResolveTile,
                    (static_cast<GLuint>(height) + kResolveTile - 1) / kResolveTile, 1);
  if (used > 1) {
    // The resolve reads each coarse cell for several pixels, so it cannot zero them itself.
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    glClearNamedBufferSubData(
        m_light.get(), GL_R32UI, static_cast<GLintptr>(levels[1].offset * sizeof(GLuint)),
        static_cast<GLsizeiptr>((levels[kLevels].offset - levels[1].offset) * sizeof(GLuint)),
        GL_RED_INTEGER, GL_UNSIGNED_INT, nullptr);
  }
  // The scene is read next as a texture (bloom, tone mapping); the zeroed sums by the next splat.
  glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT |
                  GL_SHADER_STORAGE_BARRIER_BIT);
  gl::check("splatting the particles");
}

}  // namespace bhviz::render
