#include "render/post_process.h"

#include <algorithm>

namespace bhviz::render {

namespace {
constexpr int kBloomDownscale = 4;
constexpr GLuint kSceneUnit = 0;
constexpr GLuint kBloomUnit = 1;
}  // namespace

PostProcess::PostProcess()
    : m_extract(gl::linkProgram("fullscreen.vert.glsl", "bloom_extract.frag.glsl")),
      m_blur(gl::linkProgram("fullscreen.vert.glsl", "blur.frag.glsl")),
      m_tonemap(gl::linkProgram("fullscreen.vert.glsl", "tonemap.frag.glsl")),
      m_emptyVao(gl::createVertexArray()) {}

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
    m_bloomFbo[i] = gl::createFramebufferFor(m_bloom[i].get(), "bloom (RGBA16F)");
  }
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

void PostProcess::fullscreen(GLuint program, GLuint framebuffer, int width, int height) {
  glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
  glViewport(0, 0, width, height);
  glUseProgram(program);
  glBindVertexArray(m_emptyVao.get());
  glDrawArrays(GL_TRIANGLES, 0, 3);
}

void PostProcess::bloom(const ToneMapping& tone) {
  const GLuint e = m_extract.get();
  glProgramUniform1i(e, glGetUniformLocation(e, "uScene"), kSceneUnit);
  glProgramUniform1f(e, glGetUniformLocation(e, "uThreshold"), tone.bloomThreshold);
  glProgramUniform2f(e, glGetUniformLocation(e, "uTexel"), 1.0f / static_cast<float>(m_width),
                     1.0f / static_cast<float>(m_height));
  glBindTextureUnit(kSceneUnit, m_scene.get());
  fullscreen(e, m_bloomFbo[0].get(), m_bloomWidth, m_bloomHeight);

  const GLuint b = m_blur.get();
  glProgramUniform1i(b, glGetUniformLocation(b, "uSource"), kSceneUnit);
  const GLint direction = glGetUniformLocation(b, "uStep");
  const float tx = 1.0f / static_cast<float>(m_bloomWidth);
  const float ty = 1.0f / static_cast<float>(m_bloomHeight);
  glProgramUniform2f(b, direction, tx, 0.0f);  // horizontal: 0 → 1
  glBindTextureUnit(kSceneUnit, m_bloom[0].get());
  fullscreen(b, m_bloomFbo[1].get(), m_bloomWidth, m_bloomHeight);
  glProgramUniform2f(b, direction, 0.0f, ty);  // vertical: 1 → 0
  glBindTextureUnit(kSceneUnit, m_bloom[1].get());
  fullscreen(b, m_bloomFbo[0].get(), m_bloomWidth, m_bloomHeight);
}

void PostProcess::finish(const ToneMapping& tone, const glm::vec3& background,
                         const RenderTarget& target) {
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
  fullscreen(t, target.framebuffer, target.width, target.height);
  glBindVertexArray(0);
  gl::check("post-processing");
}

}  // namespace bhviz::render
