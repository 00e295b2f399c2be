#include "render/renderer.h"

#include <algorithm>
#include <string>
#include <vector>

#include "render/gl_util.h"
#include "render/overlay_renderer.h"
#include "render/particle_renderer.h"
#include "render/post_process.h"

namespace bhviz::render {

struct Renderer::Impl {
  ParticleRenderer particles;
  OverlayRenderer overlay;
  OverlayLineRenderer lines;
  PostProcess post;
  GLsync particleReads = nullptr;  // after the last render() that read imported vertex memory

  void forgetReads() {
    if (particleReads != nullptr) glDeleteSync(particleReads);
    particleReads = nullptr;
  }
  ~Impl() { forgetReads(); }
};

Renderer::Renderer() : m_impl(std::make_unique<Impl>()) {}
Renderer::~Renderer() = default;

void Renderer::setParticles(const ParticleVertex* vertices, std::size_t n) {
  m_impl->particles.upload(vertices, n);
}
void Renderer::reserveParticles(std::size_t n) { m_impl->particles.reserve(n); }
void Renderer::importParticleMemory(int fd, std::size_t bytes, std::size_t capacity) {
  m_impl->particles.importStorage(fd, bytes, capacity);
}
bool Renderer::particleMemoryImported() const { return m_impl->particles.imported(); }
void Renderer::waitForParticleReads() {
  if (m_impl->particleReads == nullptr) return;
  constexpr GLuint64 kSecond = 1'000'000'000;
  GLenum state = GL_TIMEOUT_EXPIRED;
  while (state == GL_TIMEOUT_EXPIRED) {
    state = glClientWaitSync(m_impl->particleReads, GL_SYNC_FLUSH_COMMANDS_BIT, kSecond);
  }
  m_impl->forgetReads();
  if (state == GL_WAIT_FAILED) throw GlError("waiting for the GL's reads of the vertices failed");
}
void Renderer::setParticleCount(std::size_t n) { m_impl->particles.setCount(n); }
std::size_t Renderer::particleCount() const { return m_impl->particles.count(); }
VertexBufferInfo Renderer::particleBuffer() const { return m_impl->particles.buffer(); }
void Renderer::setPalette(const Palette& palette) { m_impl->particles.setPalette(palette); }
void Renderer::setBoxes(const OverlayBox* boxes, std::size_t n) {
  m_impl->overlay.setBoxes(boxes, n);
}
void Renderer::reserveBoxes(std::size_t n) { m_impl->overlay.reserve(n); }
VertexBufferInfo Renderer::boxBuffer() const { return m_impl->overlay.buffer(); }
void Renderer::setBoxCount(std::size_t n) { m_impl->overlay.setCount(n); }
std::size_t Renderer::boxCount() const { return m_impl->overlay.count(); }
void Renderer::setLines(const OverlayLine* lines, std::size_t n) {
  m_impl->lines.setLines(lines, n);
}
std::size_t Renderer::lineCount() const { return m_impl->lines.count(); }

void Renderer::render(const Camera& camera, const RenderParams& params,
                      const RenderTarget& target) {
  if (target.width <= 0 || target.height <= 0) {
    throw GlError("render target of " + std::to_string(target.width) + "x" +
                  std::to_string(target.height) + " pixels");
  }
  // The compute splat where its buffers fit the GL's storage blocks, else the raster pass.
  const bool compute = params.spritePass == SpritePass::Compute &&
                       m_impl->particles.splatFits(target.width, target.height);
  m_impl->post.beginScene(target.width, target.height, /*clear=*/!compute);  // splat: resolved
  if (compute) {
    m_impl->particles.splat(camera, params, target.width, target.height,
                            m_impl->post.sceneTexture());
  } else {
    m_impl->particles.draw(camera, params, target.width, target.height);
  }
  if (m_impl->particles.imported()) {  // the bridge waits for it before it writes them again
    m_impl->forgetReads();
    m_impl->particleReads = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
  }
  m_impl->post.finish(params.tone, params.background, target);
  if (params.overlay) {
    m_impl->overlay.draw(camera, target.width, target.height);
    m_impl->lines.draw(camera, target.width, target.height);
  }
}

std::vector<std::array<std::uint8_t, 16>> glDeviceUuids() { return gl::deviceUuids(); }

RenderProfile Renderer::lastProfile() const { return m_impl->particles.profile(); }

struct OffscreenTarget::Impl {
  int width = 0;
  int height = 0;
  gl::Texture colour;
  gl::Framebuffer fbo;
};

OffscreenTarget::OffscreenTarget(int width, int height) : m_impl(std::make_unique<Impl>()) {
  GLint maxSize = 0;
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &maxSize);
  if (width <= 0 || height <= 0 || width > maxSize || height > maxSize) {
    throw GlError("an offscreen image of " + std::to_string(width) + "x" + std::to_string(height) +
                  " pixels is not possible (at most " + std::to_string(maxSize) + " per side)");
  }
  m_impl->width = width;
  m_impl->height = height;
  m_impl->colour = gl::createTexture2D(GL_RGBA8, width, height);
  m_impl->fbo = gl::createFramebufferFor(m_impl->colour.get(), "offscreen (RGBA8)");
}

OffscreenTarget::~OffscreenTarget() = default;

RenderTarget OffscreenTarget::target() const {
  return {m_impl->fbo.get(), m_impl->width, m_impl->height, m_impl->colour.get()};
}

Image OffscreenTarget::read() const { return readTarget(target()); }

}  // namespace bhviz::render
