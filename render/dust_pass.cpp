#include "render/dust_pass.h"

#include <algorithm>
#include <glm/gtc/type_ptr.hpp>

namespace bhviz::render {

namespace {
constexpr GLuint kVerticesSlot = 0;  // shader storage bindings (as the splat's)
constexpr GLuint kDustSlot = 2;
constexpr GLuint kDepthUnit = 1;    // the optical depth: texture unit and image unit
constexpr GLuint kGroupSize = 256;  // local_size_x of dust_splat.comp.glsl
constexpr GLuint kTile = 16;        // local_size of dust_integrate.comp.glsl
constexpr GLuint kMaxGroups = 65535;
constexpr float kFixedScale = 65536.0f;  // fixed-point units per unit of optical depth
constexpr int kCellPixels = 2;           // dust is smooth: a grid of 2×2-pixel cells
constexpr float kMinCells = 1.5f;        // dust sprites smaller than this are thinned instead
constexpr float kMaxCells = 64.0f;
constexpr int kMinSlices = 2;
constexpr int kMaxSlices = 64;

void uniform1f(GLuint p, const char* name, float v) {
  glProgramUniform1f(p, glGetUniformLocation(p, name), v);
}
}  // namespace

DustPass::DustPass()
    : m_splat(gl::linkCompute("dust_splat.comp.glsl")),
      m_integrate(gl::linkCompute("dust_integrate.comp.glsl")),
      m_sums(gl::createBuffer()) {
  GLint64 maxBlock = 0;
  glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &maxBlock);
  m_maxStorageBlock = maxBlock;
}

void DustPass::splat(const Camera& camera, const ParticleStyle& style, const Extinction& extinction,
                     GLuint vertices, std::size_t count, int width, int height) {
  const int slices = std::clamp(extinction.slices, kMinSlices, kMaxSlices);
  // The grid: 2×2-pixel cells, coarser where the sums would exceed the largest storage block.
  int cellPixels = kCellPixels;
  auto cellsOf = [](int pixels, int cell) { return (pixels + cell - 1) / cell; };
  while (static_cast<std::int64_t>(cellsOf(width, cellPixels)) * cellsOf(height, cellPixels) *
                 slices * static_cast<std::int64_t>(sizeof(GLuint)) >
             m_maxStorageBlock &&
         cellPixels < std::max(width, height)) {
    cellPixels *= 2;
  }
  const int cx = cellsOf(width, cellPixels), cy = cellsOf(height, cellPixels);
  const std::size_t sums = static_cast<std::size_t>(cx) * static_cast<std::size_t>(cy) *
                           static_cast<std::size_t>(slices);
  if (sums != m_sumCount) {
    // Zeroed once here; from then on the integration zeroes each sum it reads.
    glNamedBufferData(m_sums.get(), static_cast<GLsizeiptr>(sums * sizeof(GLuint)), nullptr,
                      GL_DYNAMIC_COPY);
    glClearNamedBufferData(m_sums.get(), GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT, nullptr);
    m_sumCount = sums;
  }
  if (cx != m_cellsX || cy != m_cellsY || slices + 1 != m_layers) {
    m_depth = gl::createTexture(GL_TEXTURE_3D);
    glTextureStorage3D(m_depth.get(), 1, GL_R32F, cx, cy, slices + 1);
    glTextureParameteri(m_depth.get(), GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTextureParameteri(m_depth.get(), GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    for (GLenum wrap : {GL_TEXTURE_WRAP_S, GL_TEXTURE_WRAP_T, GL_TEXTURE_WRAP_R}) {
      glTextureParameteri(m_depth.get(), wrap, GL_CLAMP_TO_EDGE);
    }
    m_cellsX = cx;
    m_cellsY = cy;
    m_layers = slices + 1;
  }
  gl::check("allocating the dust buffers");
  m_cellPixels = cellPixels;
  m_width = width;
  m_height = height;
  m_slices = slices;
  m_far = camera.distance + style.dustDepth;
  m_near = std::max(camera.distance - style.dustDepth, camera.nearPlane());
  if (!(m_far > m_near)) m_far = m_near * 2.0f;

  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);  // the last integration zeroed the sums
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kDustSlot, m_sums.get());
  if (count > 0) {
    const GLuint p = m_splat.get();
    const float aspect = static_cast<float>(width) / static_cast<float>(height);
    glProgramUniformMatrix4fv(p, glGetUniformLocation(p, "uView"), 1, GL_FALSE,
                              glm::value_ptr(camera.view()));
    glProgramUniformMatrix4fv(p, glGetUniformLocation(p, "uProj"), 1, GL_FALSE,
                              glm::value_ptr(camera.projection(aspect)));
    glProgramUniform1ui(p, glGetUniformLocation(p, "uCount"), static_cast<GLuint>(count));
    uniform1f(p, "uDustValue", kDustValue);
    glProgramUniform2i(p, glGetUniformLocation(p, "uCells"), cx, cy);
    glProgramUniform2f(p, glGetUniformLocation(p, "uViewport"), static_cast<float>(width),
                       static_cast<float>(height));
    uniform1f(p, "uCellPixels", static_cast<float>(cellPixels));
    uniform1f(p, "uDustSize", style.dustSize);
    uniform1f(p, "uCellsPerUnit",
              camera.pixelsPerUnitAtUnitDepth(static_cast<float>(height)) /
                  static_cast<float>(cellPixels));
    uniform1f(p, "uMinCells", kMinCells);
    uniform1f(p, "uMaxCells", kMaxCells);
    uniform1f(p, "uOpacity", std::max(style.dustOpacity * extinction.strength, 0.0f));
    uniform1f(p, "uSharpness", style.sharpness);
    uniform1f(p, "uSliceNear", m_near);
    uniform1f(p, "uSliceFar", m_far);
    glProgramUniform1i(p, glGetUniformLocation(p, "uSlices"), slices);
    uniform1f(p, "uFixedScale", kFixedScale);
    glBindBufferRange(GL_SHADER_STORAGE_BUFFER, kVerticesSlot, vertices, 0,
                      static_cast<GLsizeiptr>(count * sizeof(ParticleVertex)));
    glUseProgram(p);
    const std::size_t groups = (count + kGroupSize - 1) / kGroupSize;
    glDispatchCompute(static_cast<GLuint>(std::min<std::size_t>(groups, kMaxGroups)), 1, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    // Not kept bound: a vertex buffer replaced by an import would live on (and its memory).
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kVerticesSlot, 0);
  }
  gl::check("adding up the dust");
}

void DustPass::integrate() {
  const GLuint cx = static_cast<GLuint>(m_cellsX), cy = static_cast<GLuint>(m_cellsY);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kDustSlot, m_sums.get());
  const GLuint q = m_integrate.get();
  glProgramUniform2i(q, glGetUniformLocation(q, "uCells"), m_cellsX, m_cellsY);
  glProgramUniform1i(q, glGetUniformLocation(q, "uSlices"), m_slices);
  uniform1f(q, "uInvFixedScale", 1.0f / kFixedScale);
  glBindImageTexture(kDepthUnit, m_depth.get(), 0, GL_TRUE, 0, GL_WRITE_ONLY, GL_R32F);
  glUseProgram(q);
  glDispatchCompute((cx + kTile - 1) / kTile, (cy + kTile - 1) / kTile, 1);
  // Read next as a texture by the particle passes; the zeroed sums by the next splat.
  glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_STORAGE_BARRIER_BIT);
  gl::check("summing the dust's slices");
}

void DustPass::use(GLuint p, bool enabled) const {
  glProgramUniform1i(p, glGetUniformLocation(p, "uOpticalDepth"), static_cast<GLint>(kDepthUnit));
  glProgramUniform1i(p, glGetUniformLocation(p, "uExtinction"), enabled && m_depth.get() != 0);
  if (!enabled || m_depth.get() == 0) return;
  uniform1f(p, "uSliceNear", m_near);
  uniform1f(p, "uSliceFar", m_far);
  uniform1f(p, "uSlices", static_cast<float>(m_slices));
  // The grid covers whole cells, a little more than the picture where a side is not a multiple.
  glProgramUniform2f(p, glGetUniformLocation(p, "uDustUv"),
                     static_cast<float>(m_width) / static_cast<float>(m_cellsX * m_cellPixels),
                     static_cast<float>(m_height) / static_cast<float>(m_cellsY * m_cellPixels));
  glBindTextureUnit(kDepthUnit, m_depth.get());
}

}  // namespace bhviz::render
