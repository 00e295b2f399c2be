#include "app/scene/particle_view.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bhviz::app {

static_assert(kHiddenVertex == render::kHiddenValue, "one hidden value");
static_assert(kDustVertex == render::kDustValue, "one dust marker");
static_assert(kPopulationPaletteSize == kTemperatureTexels + 2,
              "the population palette: the temperatures, then dark matter");
static_assert(kComponentPaletteSize == static_cast<int>(kComponentColours),
              "one component palette");

namespace {

constexpr float kVisibleFraction = 0.95f;   // Framing::radius holds this share of the particles
constexpr float kSpeedQuantile = 0.99f;     // calibrate: this speed quantile → palette top
constexpr float kSurfaceBrightness = 6.0f;  // particleStyleFor: N · brightness · (size/radius)²
// particleStyleFor's dust: sprites this much wider than the stars' (dust is smooth), holding
// N · opacity · (dust size/radius)² constant, which puts a face-on optical depth of about 1 at
// the centre of the galaxy scenario's disk (tests/test_render_look.cpp measures the dimming).
constexpr float kDustSizeFactor = 2.5f;
constexpr float kDustColumn = 4.0f;
constexpr float kDustDepthFactor = 1.5f;  // the dust slices span ±this × Framing::radius

float speedOf(const sim::Particles& p, std::size_t i) {
  const sim::Vec4& v = p.vel[i];
  return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
}

// The q-quantile of values (reordered in place); 0 for none.
float quantile(std::vector<float>& values, float q) {
  if (values.empty()) return 0.0f;
  const auto k = static_cast<std::size_t>(q * static_cast<float>(values.size() - 1));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return values[k];
}

}  // namespace

float populationLight(float kelvin) { return std::pow(kelvin / kReferenceKelvin, kLightExponent); }

float errorValue(float relativeError) {
  if (!(relativeError >= 0.0f)) return 0.0f;  // NaN: not measured
  const float lo = std::log10(kErrorLow), hi = std::log10(kErrorHigh);
  const float t =
      std::clamp((std::log10(std::max(relativeError, 1e-30f)) - lo) / (hi - lo), 0.0f, 1.0f);
  return kErrorFloor + (1.0f - kErrorFloor) * t;
}

ParticleView::ParticleView(const ViewSettings& settings) : m_settings(settings) {
  m_settings.maxBinDepth = std::max(m_settings.maxBinDepth, 1);
}

void ParticleView::calibrate(const sim::Particles& p) {
  std::vector<float> speeds;
  speeds.reserve(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (m_settings.visible[static_cast<std::size_t>(sim::tagComponent(p.tag[i]))]) {
      speeds.push_back(speedOf(p, i));
    }
  }
  const float s = quantile(speeds, kSpeedQuantile);
  m_speedScale = s > 0.0f && std::isfinite(s) ? s : 1.0f;
}

VertexRule ParticleView::rule() const {
  VertexRule r;
  r.colorBy = m_settings.colorBy;
  r.visibleMask = 0;
  for (std::size_t c = 0; c < m_settings.visible.size(); ++c) {
    if (m_settings.visible[c]) r.visibleMask = static_cast<std::uint8_t>(r.visibleMask | (1u << c));
  }
  r.speedScale = m_speedScale;
  r.maxBinDepth = static_cast<float>(m_settings.maxBinDepth);
  r.dustShare = m_dust ? kDustShare : 0.0f;
  return r;
}

float ParticleView::errorOf(std::uint32_t id) const {
  if (!m_errors || id >= m_errors->size()) return std::numeric_limits<float>::quiet_NaN();
  return (*m_errors)[id];
}

std::vector<float> ParticleView::errorValuesById() const {
  std::vector<float> values;
  if (!m_errors) return values;
  values.resize(m_errors->size());
  for (std::size_t k = 0; k < values.size(); ++k) values[k] = errorValue((*m_errors)[k]);
  return values;
}

float ParticleView::value(const sim::Particles& p, std::size_t i) const {
  const float v = vertexValue(rule(), p.tag[i], p.id[i], p.vel[i], p.bin[i]);
  if (m_settings.colorBy != ColorBy::ForceError || v == kHiddenVertex) return v;
  return withColour(v, errorValue(errorOf(p.id[i])));
}

void ParticleView::fill(const sim::Particles& p, std::vector<render::ParticleVertex>& out) const {
  const VertexRule r = rule();
  out.resize(p.size());
  const bool byError = m_settings.colorBy == ColorBy::ForceError;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const sim::Vec4& x = p.posMass[i];
    float v = vertexValue(r, p.tag[i], p.id[i], p.vel[i], p.bin[i]);
    if (byError && v != kHiddenVertex) v = withColour(v, errorValue(errorOf(p.id[i])));
    out[i] = {x.x, x.y, x.z, v};
  }
}

render::Palette ParticleView::palette() const {
  switch (m_settings.colorBy) {
    case ColorBy::Component:
      // Indexed by component + 4 × galaxy: sphere, disk, bulge, halo of galaxy 0, then 1.
      return render::Palette::discrete({
          {1.00f, 0.85f, 0.65f},  // sphere: warm white
          {0.45f, 0.65f, 1.00f},  // disk: young blue-white stars
          {1.00f, 0.65f, 0.30f},  // bulge: old golden stars
          {0.35f, 0.20f, 0.55f},  // halo: dim violet (dark matter, when shown)
          {1.00f, 0.85f, 0.65f},  // second galaxy: sphere
          {0.95f, 0.55f, 0.80f},  //   disk: rose, to follow the two disks through a merger
          {1.00f, 0.80f, 0.40f},  //   bulge
          {0.20f, 0.30f, 0.55f},  //   halo
      });
    case ColorBy::Speed:
      return render::Palette::fire();
    case ColorBy::Bin: {
      render::Palette p =
          render::Palette::rainbow(static_cast<std::size_t>(m_settings.maxBinDepth) + 1);
      p.smooth = false;
      return p;
    }
    case ColorBy::Population: {
      // Blackbody colours of kTemperatureTexels + 1 temperatures evenly in log T from
      // kCoolestKelvin up a factor of 10, each of luminance populationLight(T); then the halo's
      // dim violet (dark matter, when shown).
      render::Palette p = render::Palette::blackbody(kCoolestKelvin, 10.0f * kCoolestKelvin,
                                                     kTemperatureTexels + 1);
      for (std::size_t k = 0; k < p.colours.size(); ++k) {
        const float kelvin =
            kCoolestKelvin * std::pow(10.0f, static_cast<float>(k) / float(kTemperatureTexels));
        const glm::vec3 c = p.colours[k];
        p.colours[k] =
            c * (populationLight(kelvin) / (0.2126f * c.r + 0.7152f * c.g + 0.0722f * c.b));
      }
      p.colours.push_back({0.35f, 0.20f, 0.55f});
      return p;
    }
    case ColorBy::ForceError: {
      // Dim grey below kErrorFloor (not measured), then blue (small error) to red (large).
      const render::Palette ramp = render::Palette::rainbow();
      render::Palette p;
      p.colours.resize(256);
      for (std::size_t k = 0; k < p.colours.size(); ++k) {
        const float v = p.valueOf(k);
        p.colours[k] = v < 0.9f * kErrorFloor
                           ? glm::vec3(0.12f, 0.12f, 0.13f)
                           : ramp.lookup((v - kErrorFloor) / (1.0f - kErrorFloor));
      }
      return p;
    }
  }
  return render::Palette::fire();
}

Framing frameVisible(const sim::Particles& p, const ViewSettings& settings) {
  Framing f;
  double mass = 0.0;
  double c[3] = {0.0, 0.0, 0.0};
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (!settings.visible[static_cast<std::size_t>(sim::tagComponent(p.tag[i]))]) continue;
    const sim::Vec4& x = p.posMass[i];
    c[0] += double(x.w) * x.x;
    c[1] += double(x.w) * x.y;
    c[2] += double(x.w) * x.z;
    mass += x.w;
    ++f.visible;
  }
  if (f.visible == 0 || !(mass > 0.0)) return f;
  f.centre = glm::vec3(float(c[0] / mass), float(c[1] / mass), float(c[2] / mass));
  std::vector<float> distances;
  distances.reserve(f.visible);
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (!settings.visible[static_cast<std::size_t>(sim::tagComponent(p.tag[i]))]) continue;
    const sim::Vec4& x = p.posMass[i];
    const glm::vec3 d = glm::vec3(x.x, x.y, x.z) - f.centre;
    distances.push_back(std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z));
  }
  const float r = quantile(distances, kVisibleFraction);
  f.radius = r > 0.0f && std::isfinite(r) ? r : 1.0f;
  return f;
}

render::ParticleStyle particleStyleFor(std::size_t visible, float radius) {
  const float n = static_cast<float>(std::max<std::size_t>(visible, 1));
  // Diameter ~ the mean spacing of 10^5 particles, shrinking as N^(-1/3), within limits.
  const float relative = std::clamp(0.03f * std::cbrt(1e5f / n), 0.008f, 0.08f);
  render::ParticleStyle s;
  s.spriteSize = relative * radius;
  // Surface brightness ∝ N · brightness · relative²: held constant.
  s.brightness = kSurfaceBrightness / (n * relative * relative);
  const float dust = std::min(kDustSizeFactor * relative, 0.2f);
  s.dustSize = dust * radius;
  s.dustOpacity = kDustColumn / (n * dust * dust);
  s.dustDepth = kDustDepthFactor * radius;
  return s;
}

}  // namespace bhviz::app
