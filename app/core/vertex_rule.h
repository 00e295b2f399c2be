#pragma once
// The colour value of one particle's vertex, written once: the CPU bridge (ParticleView) and the
// CUDA–GL bridge's kernel (cuda_gl_bridge.cu) both call vertexValue. Plain C++ that compiles
// under g++ and nvcc; no GL, no renderer header. Population colours and dust are chosen per
// particle from integer hashes of its id (exact on both, and the same in every frame).

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
  float dustShare = 0.0f;          ///< share of the visible disk particles that carry dust [0, 1]
};

/// Colours of the component palette: component + 4 × galaxy (sphere, disk, bulge, halo of the
/// first galaxy, then of the second).
inline constexpr int kComponentPaletteSize = 8;
/// The value of a hidden vertex (render::kHiddenValue).
inline constexpr float kHiddenVertex = -1.0f;
/// Added to the value of a star that carries dust (render::kDustValue).
inline constexpr float kDustVertex = 2.0f;
/// The disk's dust with --dust: this share of the disk particles (by id) carries it.
inline constexpr float kDustShare = 0.5f;

/// Population colours: a temperature palette of kPopulationPaletteSize colours, texel k < 255
/// the blackbody at kCoolestKelvin · 10^(k / kTemperatureTexels), up to 25 000 K; the last texel
/// the dim violet of dark matter (the halo, when shown).
inline constexpr int kPopulationPaletteSize = 256;
inline constexpr float kCoolestKelvin = 2500.0f;
inline constexpr int kTemperatureTexels = 254;  ///< a factor of 10 in temperature [texels]

/// A stellar population: a share of a component's particles whose temperatures spread evenly in
/// log T over texels [lowTexel, highTexel] (texel = 254 · log10(T / 2500 K)).
struct Population {
  float share;  ///< of the component's particles (the shares of a component add up to 1)
  int lowTexel, highTexel;
};
/// The disk: a young share of blue-white stars (B–A, 8 000–20 000 K) and old white-yellow ones
/// (G–F, 5 000–7 000 K); the bulge old and yellow-red (K, 3 200–4 800 K); a spherical system
/// (Plummer, Hernquist) old too (3 500–5 500 K).
inline constexpr Population kYoungDisk{0.3f, 128, 229};
inline constexpr Population kOldDisk{0.7f, 76, 114};
inline constexpr Population kBulgeStars{1.0f, 27, 72};
inline constexpr Population kSphereStars{1.0f, 37, 87};

/// A well-mixed 32-bit hash of a particle id (the murmur3 finaliser), one stream per salt.
BHVIZ_HD inline std::uint32_t idHash(std::uint32_t id, std::uint32_t salt) {
  std::uint32_t x = id * 0x9e3779b9u ^ salt;
  x ^= x >> 16;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  x *= 0xc2b2ae35u;
  x ^= x >> 16;
  return x;
}
/// The hash as a number in [0, 1): its top 24 bits, exact in single precision.
BHVIZ_HD inline float unitHash(std::uint32_t id, std::uint32_t salt) {
  return static_cast<float>(idHash(id, salt) >> 8) * (1.0f / 16777216.0f);
}
inline constexpr std::uint32_t kPopulationSalt = 0x51ed270bu;
inline constexpr std::uint32_t kTemperatureSalt = 0x2c1b3c6du;
inline constexpr std::uint32_t kDustSalt = 0x7a3f9e11u;

/// The temperature texel of a star of this component (sim::Component) and id.
BHVIZ_HD inline int populationTexel(unsigned component, std::uint32_t id) {
  Population p = kSphereStars;
  if (component == 1u) {
    p = unitHash(id, kPopulationSalt) < kYoungDisk.share ? kYoungDisk : kOldDisk;
  } else if (component == 2u) {
    p = kBulgeStars;
  }
  const auto span = static_cast<std::uint32_t>(p.highTexel - p.lowTexel + 1);
  return p.lowTexel + static_cast<int>(idHash(id, kTemperatureSalt) % span);
}

/// Whether a visible particle carries dust: a disk particle whose hash falls in the share.
BHVIZ_HD inline bool carriesDust(const VertexRule& r, unsigned component, std::uint32_t id) {
  return component == 1u && unitHash(id, kDustSalt) < r.dustShare;
}

/// The palette coordinate in [0, 1] of a particle with this tag (sim::makeTag: component in
/// bits 0-1, galaxy above), id, velocity and time bin; kHiddenVertex when its component is
/// hidden; kDustVertex + the coordinate when it carries dust.
BHVIZ_HD inline float vertexValue(const VertexRule& r, std::uint8_t tag, std::uint32_t id,
                                  const sim::Vec4& vel, std::uint8_t bin) {
  const unsigned component = tag & 3u;
  if (((r.visibleMask >> component) & 1u) == 0u) return kHiddenVertex;
  const float dust = carriesDust(r, component, id) ? kDustVertex : 0.0f;
  switch (r.colorBy) {
    case ColorBy::Component: {
      const unsigned index = component + ((tag >> 2) > 0u ? 4u : 0u);
      return dust + static_cast<float>(index) / static_cast<float>(kComponentPaletteSize - 1);
    }
    case ColorBy::Speed: {
      const float speed = sqrtf(vel.x * vel.x + vel.y * vel.y + vel.z * vel.z);
      const float v = speed / r.speedScale;
      return dust + (v < 1.0f ? v : 1.0f);
    }
    case ColorBy::Bin: {
      const float v = static_cast<float>(bin) / r.maxBinDepth;
      return dust + (v < 1.0f ? v : 1.0f);
    }
    case ColorBy::Population: {
      const int texel =
          component == 3u ? kPopulationPaletteSize - 1 : populationTexel(component, id);
      return dust + static_cast<float>(texel) / static_cast<float>(kPopulationPaletteSize - 1);
    }
    case ColorBy::ForceError:
      return dust;  // not measured (the grey); the measured ones come by id from ParticleView's
                    // errors (fill on the host, the bridge's kernel from their device copy)
  }
  return kHiddenVertex;
}

/// The value of a visible particle coloured `colour` (by force error), keeping its dust.
BHVIZ_HD inline float withColour(float value, float colour) {
  return value >= kDustVertex ? kDustVertex + colour : colour;
}

}  // namespace bhviz::app
