#pragma once
// The colour value of one particle's vertex, written once: the CPU bridge (ParticleView) and the
// CUDA–GL bridge's kernel (cuda_gl_bridge.cu) both call vertexValue. Plain C++ that compiles
// under g++ and nvcc; no GL, no renderer header.

#include <cmath>
#include <cstdint>

#include "app/core/view_options.h"
#include "sim/common/hd.h"
#include "sim/common/vec.h"

namespace bhviz::app {

/// Everything the value of a vertex depends on besides the particle: a few scalars, passed by
/// value into the kernel.
struct VertexRule {
  ColorBy colorBy = ColorBy::Component;
  std::uint8_t visibleMask = 0x7;  ///< bit c set: component c (sim::Component) is drawn
  float speedScale = 1.0f;         ///< speed at the top of the palette [length/time]
  float maxBinDepth = 8.0f;        ///< colour by bin: bins 0..maxBinDepth span the palette [1]
};

/// Colours of the component palette: component + 4 × galaxy (sphere, disk, bulge, halo of the
/// first galaxy, then of the second).
inline constexpr int kComponentPaletteSize = 8;
/// The value of a hidden vertex (render::kHiddenValue).
inline constexpr float kHiddenVertex = -1.0f;

/// The palette coordinate in [0, 1] of a particle with this tag (sim::makeTag: component in
/// bits 0-1, galaxy above), velocity and time bin; kHiddenVertex when its component is hidden.
BHVIZ_HD inline float vertexValue(const VertexRule& r, std::uint8_t tag, const sim::Vec4& vel,
                                  std::uint8_t bin) {
  const unsigned component = tag & 3u;
  if (((r.visibleMask >> component) & 1u) == 0u) return kHiddenVertex;
  switch (r.colorBy) {
    case ColorBy::Component: {
      const unsigned index = component + ((tag >> 2) > 0u ? 4u : 0u);
      return static_cast<float>(index) / static_cast<float>(kComponentPaletteSize - 1);
    }
    case ColorBy::Speed: {
      const float speed = sqrtf(vel.x * vel.x + vel.y * vel.y + vel.z * vel.z);
      const float v = speed / r.speedScale;
      return v < 1.0f ? v : 1.0f;
    }
    case ColorBy::Bin: {
      const float v = static_cast<float>(bin) / r.maxBinDepth;
      return v < 1.0f ? v : 1.0f;
    }
    case ColorBy::ForceError:
      return 0.0f;  // not measured (the grey); the measured ones come by id from ParticleView's
                    // errors (fill on the host, the bridge's kernel from their device copy)
  }
  return kHiddenVertex;
}

}  // namespace bhviz::app
