#pragma once
// Private to render/: the floating-point scene buffer (RGBA16F), the bloom chain at a quarter
// of the resolution (bright-pass downsample, separable gaussian blur), and tone mapping into
// the target framebuffer.

#include "render/gl_util.h"
#include "render/renderer.h"

namespace bhviz::render {

class PostProcess {
 public:
  PostProcess();
  /// Binds the scene buffer (width × height, reallocated when the size changes) and clears it
  /// unless `clear` is false (a pass that writes every pixel follows).
  void beginScene(int width, int height, bool clear);
  /// The scene buffer (RGBA16F) of the last beginScene, for passes that write it as an image.
  GLuint sceneTexture() const { return m_scene.get(); }
  /// Bloom (when asked for) and tone mapping of the scene buffer into `target`.
  void finish(const ToneMapping& tone, const glm::vec3& background, const RenderTarget& target);

 private:
  void resize(int width, int height);
  void bloom(const ToneMapping& tone);
  void fullscreen(GLuint program, GLuint framebuffer, int width, int height);

  gl::Program m_extract;
  gl::Program m_blur;
  gl::Program m_tonemap;
  gl::VertexArray m_emptyVao;  // core profile: a draw needs a VAO even without attributes
  int m_width = 0;
  int m_height = 0;
  int m_bloomWidth = 0;
  int m_bloomHeight = 0;
  gl::Texture m_scene;
  gl::Framebuffer m_sceneFbo;
  gl::Texture m_bloom[2];
  gl::Framebuffer m_bloomFbo[2];
};

}  // namespace bhviz::render
