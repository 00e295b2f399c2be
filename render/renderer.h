#pragma once
// The frame: particles as soft point sprites, added up in a floating-point (RGBA16F) buffer,
// an optional cheap bloom, tone mapping with exposure into the target, then the wireframe
// overlay on top. Needs a current OpenGL 4.5 core context with render::loadGl done; destroy
// the renderer while that context is still current.

#include <cstddef>
#include <cstdint>
#include <glm/vec3.hpp>
#include <memory>

#include "render/camera.h"
#include "render/gl_loader.h"
#include "render/image.h"
#include "render/palette.h"
#include "render/vertex.h"

namespace bhviz::render {

/// How a particle looks. A sprite's diameter in pixels follows its distance; sprites smaller
/// than minSizePx are drawn at that size and dimmed by the area ratio, so a particle's total
/// light does not depend on the resolution or the zoom.
struct ParticleStyle {
  float spriteSize = 0.05f;  ///< sprite diameter [world length]
  float brightness = 0.05f;  ///< linear intensity at an unclamped sprite's centre [1]
  float minSizePx = 1.5f;    ///< smallest sprite drawn [pixels]
  float maxSizePx = 64.0f;   ///< largest sprite drawn [pixels] (the driver's limit also applies)
  float sharpness = 4.0f;    ///< the profile is exp(−sharpness · r²), r = 1 at the sprite's rim
};

/// From the linear sum to display colours: 1 − exp(−exposure · c) per channel, then gamma.
struct ToneMapping {
  float exposure = 1.0f;        ///< [1]; higher = brighter
  float gamma = 2.2f;           ///< display gamma
  float bloomStrength = 0.0f;   ///< how much blurred light is added (0 = no bloom passes)
  float bloomThreshold = 0.5f;  ///< light above this (before exposure) blooms
};

/// How the sprites are added up. Both draw the same picture (up to fixed-point rounding); the
/// compute splat is much faster on GPUs with little raster hardware (H100, H200: see
/// docs/BENCHMARKS.md), the rasteriser may be on others.
enum class SpritePass {
  Compute,  ///< a compute shader adds each sprite's pixels with atomics (the default; the raster
            ///< pass instead where its buffers would exceed the GL's storage block size)
  Raster,   ///< point sprites through the rasteriser, blended additively
};

struct RenderParams {
  ParticleStyle particles;
  SpritePass spritePass = SpritePass::Compute;
  ToneMapping tone;
  glm::vec3 background{0.0f};  ///< display colour behind the particles (0..1)
  bool overlay = true;         ///< draw the boxes given to setBoxes
};

/// Where a frame goes: a framebuffer (0 = the window's) and its size.
struct RenderTarget {
  std::uint32_t framebuffer = 0;
  int width = 0;
  int height = 0;
};

class Renderer {
 public:
  Renderer();  ///< compiles the shaders; throws GlError
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  /// Copies n vertices into the vertex buffer (growing it when needed) and draws n from now on.
  void setParticles(const ParticleVertex* vertices, std::size_t n);
  /// Makes the vertex buffer hold at least n vertices (for a bridge writing into it directly).
  void reserveParticles(std::size_t n);
  /// Draws the first n vertices of the buffer (n ≤ capacity), e.g. after a bridge wrote them.
  void setParticleCount(std::size_t n);
  std::size_t particleCount() const;
  VertexBufferInfo particleBuffer() const;

  /// The colour map that vertex values run along.
  void setPalette(const Palette& palette);
  /// Replaces the overlay's boxes (none = no overlay).
  void setBoxes(const OverlayBox* boxes, std::size_t n);
  /// The overlay's box buffer for a bridge writing into it directly: reserve room, let the
  /// bridge write, then say how many to draw (as for the particles).
  void reserveBoxes(std::size_t n);
  VertexBufferInfo boxBuffer() const;
  void setBoxCount(std::size_t n);
  std::size_t boxCount() const;

  /// Draws one frame into `target` (its whole area).
  void render(const Camera& camera, const RenderParams& params, const RenderTarget& target);

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

/// An offscreen RGBA8 framebuffer to render into and read back (screenshots, frames, tests).
class OffscreenTarget {
 public:
  OffscreenTarget(int width, int height);  ///< throws GlError
  ~OffscreenTarget();
  OffscreenTarget(const OffscreenTarget&) = delete;
  OffscreenTarget& operator=(const OffscreenTarget&) = delete;

  RenderTarget target() const;
  /// The pixels, top row first (waits for the GL to finish the frame).
  Image read() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace bhviz::render
