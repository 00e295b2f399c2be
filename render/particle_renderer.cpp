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
constexpr GLuint kCoarseUnit = 2;        // texture units 2..4: the coarser levels in the resolve
                                         // (1 is the dust's optical depth)
constexpr GLuint kSplatGroupSize = 128;  // local_size_x of particles_splat.comp.glsl
constexpr GLuint kResolveTile = 16;      // local_size of particles_resolve.comp.glsl
// local_size of particles_resolve_sharp.comp.glsl: a warp reads 32 pixels of one row of each
// plane (16 x 16 tiles read two half rows: its resolve took 0.14 ms at 1920 x 1080 on the H200,
// rows of 64 take 0.10; docs/BENCHMARKS.md).
constexpr GLuint kSharpTileX = 64;
constexpr GLuint kSharpTileY = 4;
constexpr GLuint kMaxGroups = 65535;  // the GL's guaranteed work-group count per dimension
// The largest sprite either pass draws [pixels], whatever the driver allows (NVIDIA: 2047): the
// splat's running count of a chunk's pixels, 128 boxes of up to (2047 + 1)² pixels, stays below
// 2³².
constexpr float kLargestSpritePx = 2047.0f;
// 2^16 units per unit of linear light: a sum saturates at 65536, about the RGBA16F scene
// buffer's own largest value, and the finest step (1.5e-5) is far below one display level.
constexpr float kFixedScale = 65536.0f;
// Depth of field: sprites blurred by more than kLevelDiameter cells go a level coarser, down to
// an eighth of the resolution, so a blurred star covers at most about a dozen cells (4 rather
// than 8: depth of field cost 0.04 instead of 0.42 ms at 1 M on the H100, docs/BENCHMARKS.md).
constexpr int kLevels = 4;
constexpr float kLevelDiameter = 4.0f;

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
      m_coarseProgram(gl::linkCompute("particles_coarse.comp.glsl")),
      m_sharpResolveProgram(gl::linkCompute("particles_resolve_sharp.comp.glsl")),
      m_light(gl::createBuffer()),
      m_vao(gl::createVertexArray()),
      m_vertices(sizeof(ParticleVertex), "particle vertex"),
      m_palette(gl::createTexture(GL_TEXTURE_1D)) {
  const GLuint vao = m_vao.get();
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
  glCreateQueries(GL_TIMESTAMP, kMarks, m_queries.data());
  gl::check("ParticleRenderer");
}

ParticleRenderer::~ParticleRenderer() { glDeleteQueries(kMarks, m_queries.data()); }

void ParticleRenderer::mark(const RenderParams& params, Mark which) {
  if (which == kStart) m_marked.fill(false);
  if (!params.profile) return;
  glQueryCounter(m_queries[which], GL_TIMESTAMP);
  m_marked[which] = true;
}

RenderProfile ParticleRenderer::profile() const {
  std::array<double, kMarks> ms{};
  for (int k = 0; k < kMarks; ++k) {
    if (!m_marked[static_cast<std::size_t>(k)]) continue;
    GLuint64 ns = 0;
    glGetQueryObjectui64v(m_queries[static_cast<std::size_t>(k)], GL_QUERY_RESULT, &ns);
    ms[static_cast<std::size_t>(k)] = static_cast<double>(ns) * 1e-6;
  }
  // Each step from the last mark before it; a step not run has no mark and takes 0.
  auto step = [&](Mark m) {
    const auto i = static_cast<std::size_t>(m);
    if (!m_marked[i]) return 0.0;
    std::size_t before = i - 1;
    while (before > 0 && !m_marked[before]) --before;
    return m_marked[before] ? ms[i] - ms[before] : 0.0;
  };
  RenderProfile p;
  p.dustSplat = step(kDustSplat);
  p.dustIntegrate = step(kDustIntegrate);
  p.sprites = step(kSprites);
  p.resolve = step(kResolve);
  return p;
}

void ParticleRenderer::reserve(std::size_t n) { m_vertices.reserve(n); }
void ParticleRenderer::upload(const ParticleVertex* vertices, std::size_t n) {
  m_vertices.upload(vertices, n);
}
void ParticleRenderer::importStorage(int fd, std::size_t bytes, std::size_t capacity) {
  m_vertices.importStorage(fd, bytes, capacity);
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
  m_dust.splat(camera, params.particles, params.extinction, m_vertices.name(), m_vertices.count(),
               width, height);
  mark(params, kDustSplat);
  m_dust.integrate();
  mark(params, kDustIntegrate);
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
                     std::min({style.maxSizePx, m_maxPointSize, kLargestSpritePx}));
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
  mark(params, kStart);
  if (m_vertices.count() == 0) return;
  addDust(camera, params, width, height);
  const GLuint p = m_program.get();
  setSpriteUniforms(p, camera, params, width, height);
  glBindTextureUnit(kPaletteUnit, m_palette.get());
  glUseProgram(p);
  // The buffer's current storage: an import replaces the buffer.
  glVertexArrayVertexBuffer(m_vao.get(), kBinding, m_vertices.name(), 0, sizeof(ParticleVertex));
  glBindVertexArray(m_vao.get());
  glEnable(GL_PROGRAM_POINT_SIZE);
  glEnable(GL_BLEND);
  glBlendFunc(GL_ONE, GL_ONE);
  glDisable(GL_DEPTH_TEST);
  glDrawArrays(GL_POINTS, 0, static_cast<GLsizei>(m_vertices.count()));
  glDisable(GL_BLEND);
  glBindVertexArray(0);
  // Not kept bound: a buffer replaced by an import would live on (and its memory) through it.
  glVertexArrayVertexBuffer(m_vao.get(), kBinding, 0, 0, sizeof(ParticleVertex));
  mark(params, kSprites);
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
  mark(params, kStart);
  const std::array<Level, kLevels + 1> levels = levelsOf(width, height);
  // The coarser levels only with depth of field: without, every sprite is drawn at full size
  // and the sums hold the full-resolution level alone.
  const int used = params.depthOfField.enabled ? kLevels : 1;
  // Every level's sums, with depth of field or without: measured on the H100, a buffer of the
  // full-resolution sums alone made the sharp splat 8 % slower (docs/BENCHMARKS.md).
  const std::size_t sums = levels[kLevels].offset;
  if (sums != m_lightSums) {
    // Zeroed once here; from then on the passes that read the sums zero them.
    glNamedBufferData(m_light.get(), static_cast<GLsizeiptr>(sums * sizeof(GLuint)), nullptr,
                      GL_DYNAMIC_COPY);
    glClearNamedBufferData(m_light.get(), GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT, nullptr);
    gl::check("allocating the splat's light buffer");
    m_lightSums = sums;
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
    // Not kept bound, as in draw() and the dust pass.
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kVerticesSlot, 0);
    mark(params, kSprites);
  }

  if (used > 1) resolveCoarse(width, height, used);
  // Without depth of field, a resolve with no coarser level to sample (faster by 0.03 ms).
  const GLuint r = used > 1 ? m_resolveProgram.get() : m_sharpResolveProgram.get();
  glProgramUniform2i(r, glGetUniformLocation(r, "uViewport"), width, height);
  glProgramUniform1f(r, glGetUniformLocation(r, "uInvFixedScale"), 1.0f / kFixedScale);
  glProgramUniform1i(r, glGetUniformLocation(r, "uLevels"), used);
  for (int k = 1; k < kLevels; ++k) {
    const Level& l = levels[static_cast<std::size_t>(k)];
    const std::string i = "[" + std::to_string(k - 1) + "]";
    glProgramUniform1i(r, glGetUniformLocation(r, ("uCoarse" + i).c_str()),
                       static_cast<GLint>(kCoarseUnit) + k - 1);
    const float cell = static_cast<float>(1 << k);
    glProgramUniform2f(r, glGetUniformLocation(r, ("uCoarseScale" + i).c_str()),
                       1.0f / (static_cast<float>(l.width) * cell),
                       1.0f / (static_cast<float>(l.height) * cell));
  }
  glBindImageTexture(kSceneImageUnit, scene, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA16F);
  glUseProgram(r);
  const GLuint tileX = used > 1 ? kResolveTile : kSharpTileX;
  const GLuint tileY = used > 1 ? kResolveTile : kSharpTileY;
  glDispatchCompute((static_cast<GLuint>(width) + tileX - 1) / tileX,
                    (static_cast<GLuint>(height) + tileY - 1) / tileY, 1);
  // The scene is read next as a texture (bloom, tone mapping); the zeroed sums by the next splat.
  glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT |
                  GL_SHADER_STORAGE_BARRIER_BIT);
  mark(params, kResolve);
  gl::check("splatting the particles");
}

void ParticleRenderer::resolveCoarse(int width, int height, int used) {
  const std::array<Level, kLevels + 1> levels = levelsOf(width, height);
  if (width != m_coarseWidth || height != m_coarseHeight) {
    for (int k = 1; k < kLevels; ++k) {
      const Level& l = levels[static_cast<std::size_t>(k)];
      m_coarse[static_cast<std::size_t>(k - 1)] =
          gl::createTexture2D(GL_RGBA16F, l.width, l.height);
    }
    m_coarseWidth = width;
    m_coarseHeight = height;
  }
  const GLuint c = m_coarseProgram.get();
  glProgramUniform1f(c, glGetUniformLocation(c, "uInvFixedScale"), 1.0f / kFixedScale);
  const GLint size = glGetUniformLocation(c, "uSize");
  const GLint base = glGetUniformLocation(c, "uBase");
  glUseProgram(c);
  for (int k = 1; k < used; ++k) {
    const Level& l = levels[static_cast<std::size_t>(k)];
    const GLuint texture = m_coarse[static_cast<std::size_t>(k - 1)].get();
    glProgramUniform2i(c, size, l.width, l.height);
    glProgramUniform1ui(c, base, l.offset);
    glBindImageTexture(kSceneImageUnit, texture, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA16F);
    glDispatchCompute((static_cast<GLuint>(l.width) + kResolveTile - 1) / kResolveTile,
                      (static_cast<GLuint>(l.height) + kResolveTile - 1) / kResolveTile, 1);
    glBindTextureUnit(kCoarseUnit + static_cast<GLuint>(k - 1), texture);
  }
  // Sampled next by the resolve; the zeroed sums are written by the next splat.
  glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_STORAGE_BARRIER_BIT);
}

}  // namespace bhviz::render
