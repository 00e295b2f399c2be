#pragma once
// The bridge from the simulation to the renderer: sim::Particles → render::ParticleVertex, and
// the palette and framing that go with it. The only code that knows both what a particle is
// (component, galaxy, speed, time bin) and what the renderer draws.

#include <array>
#include <cstddef>
#include <glm/vec3.hpp>
#include <memory>
#include <string>
#include <vector>

#include "app/core/vertex_rule.h"
#include "app/core/view_options.h"
#include "render/palette.h"
#include "render/renderer.h"
#include "render/vertex.h"
#include "sim/particles.h"

namespace bhviz::app {

/// Colour by force error: relative errors from kErrorLow to kErrorHigh run on a log scale over the
/// palette values [kErrorFloor, 1]; values below kErrorFloor are the grey of unmeasured particles.
inline constexpr float kErrorLow = 1e-6f;
inline constexpr float kErrorHigh = 1e-1f;
inline constexpr float kErrorFloor = 0.1f;
/// The palette value of a relative force error; 0 (grey) for NaN, i.e. not measured.
float errorValue(float relativeError);

/// Population colours: a particle stands for a population of stars of many masses, whose light
/// per unit mass rises steeply as the population gets younger and hotter (its mass-to-light ratio
/// falls from ~4 for an old bulge to ~0.3 for a young disk population). The palette gives the
/// colour of temperature T the luminance (T / kReferenceKelvin)^kLightExponent: 20 000 K stars
/// shine 2.8 times as bright as 10 000 K ones, 4 000 K ones 0.25 times (about the brightness of
/// the component colours, on average over a disk).
inline constexpr float kReferenceKelvin = 10000.0f;
inline constexpr float kLightExponent = 1.5f;
float populationLight(float kelvin);

/// Palette index of a component tag: the component, plus 4 for the second galaxy of a merger.
inline constexpr std::size_t kComponentColours = 8;

class ParticleView {
 public:
  explicit ParticleView(const ViewSettings& settings);

  /// Fixes the speed scale from this state (the 99th percentile of the visible particles'
  /// speeds maps to the top of the palette), so colours mean the same in every frame.
  void calibrate(const sim::Particles& p);
  float speedScale() const { return m_speedScale; }
  /// The relative force error of each particle by id (NaN: not measured), for ColorBy::ForceError;
  /// null draws every particle grey.
  void setErrors(std::shared_ptr<const std::vector<float>> errorById) {
    m_errors = std::move(errorById);
  }
  /// Whether a share of the disk particles carries dust (kDustShare; their vertices are marked
  /// with kDustVertex): what the renderer's extinction absorbs with. Off by default.
  void setDust(bool on) { m_dust = on; }
  bool dust() const { return m_dust; }
  /// The errors last set (null: none), to tell when they change.
  const std::shared_ptr<const std::vector<float>>& errors() const { return m_errors; }
  /// errorValue of each particle's error, by id: what fill writes for a visible particle
  /// coloured by force error (ids beyond the vector get 0, the unmeasured grey, in both).
  std::vector<float> errorValuesById() const;

  /// One vertex per particle, in the particles' order; hidden components get a negative value.
  void fill(const sim::Particles& p, std::vector<render::ParticleVertex>& out) const;
  /// The per-particle rule (app/vertex_rule.h) with this view's settings and speed scale: what
  /// the CUDA–GL bridge's kernel applies on the device.
  VertexRule rule() const;
  /// The value of one particle (what fill writes).
  float value(const sim::Particles& p, std::size_t i) const;
  /// The palette the values index.
  render::Palette palette() const;
  const ViewSettings& settings() const { return m_settings; }

 private:
  float errorOf(std::uint32_t id) const;

  ViewSettings m_settings;
  float m_speedScale = 1.0f;
  bool m_dust = false;
  std::shared_ptr<const std::vector<float>> m_errors;
};

/// What the camera should frame: the visible particles' centre of mass and a radius holding
/// 95% of them (so a few escapers do not shrink the picture).
struct Framing {
  glm::vec3 centre{0.0f};
  float radius = 1.0f;
  std::size_t visible = 0;
};
Framing frameVisible(const sim::Particles& p, const ViewSettings& settings);

/// Sprite size and brightness for `visible` particles in a scene of `radius`: sprites shrink
/// as N grows (with the mean spacing) and dim so that the picture's overall brightness does
/// not depend on N; the dust's sprites likewise, thinned so that its optical depth does not
/// depend on N, in slices spanning the framed scene.
render::ParticleStyle particleStyleFor(std::size_t visible, float radius);

}  // namespace bhviz::app
