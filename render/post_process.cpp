#include "render/post_process.h"

#include <algorithm>

namespace bhviz::render {

namespace {
constexpr int kBloomDownscale = 4;
constexpr GLuint kSceneUnit = 0;
constexpr GLuint kBloomUnit = 1;
constexpr GLuint kOutImageUnit = 0;
constexpr GLuint kTile = 16;  // local_size of the post-processing compute shaders

GLuint tilesFor(int pixels) { return (static_cast<GLuint>(pixels) + kTile - 1) / kTile; }
}  // namespace

PostProcess::PostProcess()
    : m_extract(gl::linkCompute("bloom_extract.comp.glsl")),
      m_blur(gl::linkCompute("blur.comp.glsl")),
      m_tonemap(gl::linkCompute("tonemap.comp.glsl")) {}

void PostProcess::resize(int width, int height) {
  if (width == m_width && height == m_height) return;
  m_width = width;
  m_height = height;
  m_scene = gl::createTexture2D(GL_RGBA16F, width, height);
  m_sceneFbo = gl::createFramebufferFor(m_scene.get(), "scene (RGBA16F)");
  m_bloomWidth = std::max(1, width / kBloomDownscale);
  m_bloomHeight = std::max(1, height / kBloomDownscale);
  const float zero[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int i = 0; i < 2; ++i) {
    m_bloom[i] = gl::createTexture2D(GL_RGBA16F, m_bloomWidth, m_bloomHeight);
    glClearTexImage(m_bloom[i].get(), 0, GL_RGBA, GL_FLOAT, zero);
  }
  m_display.reset();  // made when a target without its own texture asks for it
  m_displayFbo.reset();
  gl::check("allocating the scene buffers");
}

void PostProcess::beginScene(int width, int height, bool clear) {
  resize(width, height);
  glBindFramebuffer(GL_FRAMEBUFFER, m_sceneFbo.get());
  glViewport(0, 0, width, height);
  if (!clear) return;
  const float zero[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  glClearNamedFramebufferfv(m_sceneFbo.get(), GL_COLOR, 0, zero);
}

void PostProcess::run(GLuint program, GLuint out, GLenum format, int width, int height,
                      GLbitfield readNext) {
  glProgramUniform2i(program, glGetUniformLocation(program, "uSize"), width, height);
  glBindImageTexture(kOutImageUnit, out, 0, GL_FALSE, 0, GL_WRITE_ONLY, format);
  glUseProgram(program);
  glDispatchCompute(tilesFor(width), tilesFor(height), 1);
  glMemoryBarrier(readNext);
}

void PostProcess::bloom(const ToneMapping& tone) {
  const GLuint e = m_extract.get();
  glProgramUniform1i(e, glGetUniformLocation(e, "uScene"), kSceneUnit);
  glProgramUniform1f(e, glGetUniformLocation(e, "uThreshold"), tone.bloomThreshold);
  glProgramUniform2f(e, glGetUniformLocation(e, "uTexel"), 1.0f / static_cast<float>(m_width),
                     1.0f / static_cast<float>(m_height));
  glBindTextureUnit(kSceneUnit, m_scene.get());
  run(e, m_bloom[0].get(), GL_RGBA16F, m_bloomWidth, m_bloomHeight, GL_TEXTURE_FETCH_BARRIER_BIT);

  const GLuint b = m_blur.get();
  glProgramUniform1i(b, glGetUniformLocation(b, "uSource"), kSceneUnit);
  const GLint direction = glGetUniformLocation(b, "uStep");
  const float tx = 1.0f / static_cast<float>(m_bloomWidth);
  const float ty = 1.0f / static_cast<float>(m_bloomHeight);
  glProgramUniform2f(b, direction, tx, 0.0f);  // horizontal: 0 → 1
  glBindTextureUnit(kSceneUnit, m_bloom[0].get());
  run(b, m_bloom[1].get(), GL_RGBA16F, m_bloomWidth, m_bloomHeight, GL_TEXTURE_FETCH_BARRIER_BIT);
  glProgramUniform2f(b, direction, 0.0f, ty);  // vertical: 1 → 0
  glBindTextureUnit(kSceneUnit, m_bloom[1].get());
  run(b, m_bloom[0].get(), GL_RGBA16F, m_bloomWidth, m_bloomHeight, GL_TEXTURE_FETCH_BARRIER_BIT);
}

void PostProcess::finish(const ToneMapping& tone, const glm::vec3& background,
                         const RenderTarget& target) {
  // The scene is sampled next: the splat's resolve left the barrier for it, and what the raster
  // pass drew into it is ordered before by the GL itself.
  const bool bloomOn = tone.bloomStrength > 0.0f;
  if (bloomOn) bloom(tone);
  const GLuint t = m_tonemap.get();
  glProgramUniform1i(t, glGetUniformLocation(t, "uScene"), kSceneUnit);
  glProgramUniform1i(t, glGetUniformLocation(t, "uBloom"), kBloomUnit);
  glProgramUniform1f(t, glGetUniformLocation(t, "uExposure"), tone.exposure);
  glProgramUniform1f(t, glGetUniformLocation(t, "uInvGamma"), 1.0f / std::max(tone.gamma, 0.1f));
  glProgramUniform1f(t, glGetUniformLocation(t, "uBloomStrength"),
                     bloomOn ? tone.bloomStrength : 0.0f);
  glProgramUniform3f(t, glGetUniformLocation(t, "uBackground"), background.x, background.y,
                     background.z);
  glBindTextureUnit(kSceneUnit, m_scene.get());
  glBindTextureUnit(kBloomUnit, m_bloom[0].get());
  // The scene and the target are the same size (beginScene was given the target's).
  const bool direct = target.colour != 0;
  if (!direct && m_display.get() == 0) {
    m_display = gl::createTexture2D(GL_RGBA8, m_width, m_height);
    m_displayFbo = gl::createFramebufferFor(m_display.get(), "display (RGBA8)");
  }
  // Read next as the target's attachment: drawn over (overlay, panels), copied, read back.
  run(t, direct ? target.colour : m_display.get(), GL_RGBA8, m_width, m_height,
      GL_FRAMEBUFFER_BARRIER_BIT | GL_TEXTURE_UPDATE_BARRIER_BIT | GL_PIXEL_BUFFER_BARRIER_BIT);
  if (!direct) {
    glBlitNamedFramebuffer(m_displayFbo.get(), target.framebuffer, 0, 0, m_width, m_height, 0, 0,
                           m_width, m_height, GL_COLOR_BUFFER_BIT, GL_NEAREST);
  }
  glBindFramebuffer(GL_FRAMEBUFFER, target.framebuffer);
  glViewport(0, 0, target.width, target.height);
  gl::check("post-processing");
}

}  // namespace bhviz::render
