#pragma once
// The frame: particles as soft point sprites, added up in a floating-point (RGBA16F) buffer,
// an optional cheap bloom, tone mapping with exposure into the target, then the wireframe
// overlay (boxes, then lines) on top. Needs a current OpenGL 4.5 core context with
// render::loadGl done; destroy the renderer while that context is still current.

#include <array>
#include <cstddef>
#include <cstdint>
#include <glm/vec3.hpp>
#include <memory>
#include <vector>

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
  /// Dust (vertices of kDustValue + v, drawn with RenderParams::extinction): each adds optical
  /// depth in a soft sprite of this diameter, with this optical depth at an unclamped sprite's
  /// centre, into depth slices spanning ±dustDepth around the camera's target.
  float dustSize = 0.1f;     ///< dust sprite diameter [world length]
  float dustOpacity = 0.1f;  ///< optical depth at an unclamped dust sprite's centre [1]
  float dustDepth = 1.0f;    ///< the slices span target distance ± this [world length]
};

/// Dust that absorbs: the dust of the vertices that carry it is added up as optical depth τ in
/// depth slices (at a lower resolution: dust is smooth), summed front to back, and each star's
/// light is multiplied by exp(−τ) of the dust in front of it along its line of sight (τ at its
/// depth, interpolated between the slices' boundaries: dust in front dims it, dust behind does
/// not, dust of its own slice by the share in front).
struct Extinction {
  bool enabled = false;   ///< false: dust vertices are ordinary stars, no extra pass
  float strength = 1.0f;  ///< multiplies ParticleStyle::dustOpacity [1]
  int slices = 16;        ///< depth slices over ParticleStyle::dustDepth × 2, in [2, 64]
};

/// Depth of field for additive sprites: a star at distance d is spread over its circle of
/// confusion, c = aperture · |d − f| / d in pixels per unit depth × pixelsPerUnitAtUnitDepth (a
/// thin lens focused at f, of diameter aperture × f), added to its sprite in quadrature and
/// dimmed by the area ratio, so each star keeps its light. The compute splat adds sprites
/// wider than a few pixels into half- and quarter-resolution sums (the same light, fewer
/// atomics); the raster pass draws them at full size.
struct DepthOfField {
  bool enabled = false;
  float aperture = 0.05f;  ///< lens diameter / focus distance [1]
  float focus = 1.0f;      ///< focus distance / the camera's distance to its target [1]
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
  Extinction extinction;
  DepthOfField depthOfField;
  glm::vec3 background{0.0f};  ///< display colour behind the particles (0..1)
  bool overlay = true;         ///< draw the boxes and lines given to setBoxes and setLines
  bool profile = false;  ///< time the particle pass's steps (Renderer::lastProfile; benchmarks)
};

/// GPU time of each step of the particle pass in the last frame drawn with RenderParams::profile
/// (GL timestamps) [ms]; 0 for a step that did not run.
struct RenderProfile {
  double dustSplat = 0;      ///< dust added as optical depth into the depth slices
  double dustIntegrate = 0;  ///< the slices summed front to back into the 3D texture
  double sprites = 0;        ///< the sprites (compute splat or raster), extinction lookup included
  double resolve = 0;        ///< the splat's sums into the scene buffer, coarser levels included
};

/// Where a frame goes: a framebuffer (0 = the window's) and its size.
struct RenderTarget {
  std::uint32_t framebuffer = 0;
  int width = 0;
  int height = 0;
  /// The framebuffer's colour texture (RGBA8, width × height) when it has one, written by the
  /// tone mapping directly; 0 (the window's framebuffer): the tone mapping writes its own
  /// image, copied into the framebuffer.
  std::uint32_t colour = 0;
};

class Renderer {
 public:
  Renderer();  ///< compiles the shaders; throws GlError
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  /// Copies n vertices into the vertex buffer (growing it when needed) and draws n from now on.
  void setParticles(const ParticleVertex* vertices, std::size_t n);
  /// Makes the vertex buffer hold at least n vertices in storage of its own (for a bridge
  /// writing into it directly; imported memory is given up).
  void reserveParticles(std::size_t n);
  /// Draws the first n vertices of the buffer (n ≤ capacity), e.g. after a bridge wrote them.
  void setParticleCount(std::size_t n);
  std::size_t particleCount() const;
  VertexBufferInfo particleBuffer() const;
  /// Memory that another API allocated and exported (an opaque POSIX file descriptor, which the
  /// GL owns from the call on) as the vertex buffer's storage, room for `capacity` vertices: a
  /// bridge then writes the vertices with no map or unmap, and orders itself with the GL on the
  /// host: it waits for its writes before render(), and calls waitForParticleReads() before it
  /// writes again. Until setParticles or reserveParticles, which give the buffer storage of its
  /// own again. Throws GlError (the GL lacks GL_EXT_memory_object_fd, or refuses the memory).
  void importParticleMemory(int fd, std::size_t bytes, std::size_t capacity);
  /// Whether the vertex buffer's storage is imported (importParticleMemory, nothing since).
  bool particleMemoryImported() const;
  /// Waits until the GL has finished every render() that read imported vertex memory.
  void waitForParticleReads();

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
  /// Replaces the overlay's lines (none = no lines), drawn over the boxes.
  void setLines(const OverlayLine* lines, std::size_t n);
  std::size_t lineCount() const;

  /// Draws one frame into `target` (its whole area).
  void render(const Camera& camera, const RenderParams& params, const RenderTarget& target);
  /// The last frame's steps, if it was drawn with RenderParams::profile (waits for the GL).
  RenderProfile lastProfile() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

/// The UUIDs of the devices the current GL context runs on (GL_EXT_memory_object), to match
/// against another API's device before sharing memory with it; none without the extension.
std::vector<std::array<std::uint8_t, 16>> glDeviceUuids();

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

/// The pixels of `target` as drawn so far (for the window's framebuffer 0: its back buffer),
/// top row first; waits for the GL to finish. The window's coverage check reads the scene
/// before and after the panels are drawn over it.
Image readTarget(const RenderTarget& target);

}  // namespace bhviz::render
