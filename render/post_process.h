#pragma once
// Private to render/: the floating-point scene buffer (RGBA16F), the bloom chain at a quarter
// of the resolution (bright-pass downsample, separable gaussian blur), and tone mapping into
// the target. Every pass after the scene is a compute shader: on GPUs built for compute (H100,
// H200) only a few SMs run fragment shaders (docs/BENCHMARKS.md).

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
  /// Bloom (when asked for) and tone mapping of the scene buffer into `target` (the size of the
  /// last beginScene): into its colour texture where it has one, else into an image of ours
  /// copied into its framebuffer. Leaves `target`'s framebuffer bound.
  void finish(const ToneMapping& tone, const glm::vec3& background, const RenderTarget& target);

 private:
  void resize(int width, int height);
  void bloom(const ToneMapping& tone);
  /// One compute pass of `program` over width × height pixels, writing image `out`, then the
  /// barrier (glMemoryBarrier's bits) for the way the next pass reads it.
  void run(GLuint program, GLuint out, GLenum format, int width, int height, GLbitfield readNext);

  gl::Program m_extract;
  gl::Program m_blur;
  gl::Program m_tonemap;
  int m_width = 0;
  int m_height = 0;
  int m_bloomWidth = 0;
  int m_bloomHeight = 0;
  gl::Texture m_scene;
  gl::Framebuffer m_sceneFbo;
  gl::Texture m_bloom[2];
  gl::Texture m_display;  // the tone-mapped image, for a target without its own texture
  gl::Framebuffer m_displayFbo;
};

}  // namespace bhviz::render
