#include "render/palette.h"

#include <algorithm>
#include <cmath>
#include <glm/common.hpp>
#include <stdexcept>

namespace bhviz::render {

namespace {

// Samples a piecewise-linear map given by equally spaced stops at n points.
Palette sampled(const std::vector<glm::vec3>& stops, std::size_t n) {
  Palette p;
  n = std::max<std::size_t>(n, 2);
  p.colours.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float t =
        static_cast<float>(i) / static_cast<float>(n - 1) * static_cast<float>(stops.size() - 1);
    const std::size_t k = std::min(static_cast<std::size_t>(t), stops.size() - 2);
    p.colours[i] = glm::mix(stops[k], stops[k + 1], t - static_cast<float>(k));
  }
  p.smooth = true;
  return p;
}

}  // namespace

float Palette::valueOf(std::size_t i) const {
  if (colours.size() < 2) return 0.0f;
  return static_cast<float>(i) / static_cast<float>(colours.size() - 1);
}

glm::vec3 Palette::lookup(float value) const {
  if (colours.empty()) return glm::vec3(0.0f);
  const float t = std::clamp(value, 0.0f, 1.0f) * static_cast<float>(colours.size() - 1);
  if (!smooth) return colours[static_cast<std::size_t>(std::lround(t))];
  const std::size_t k = std::min(static_cast<std::size_t>(t), colours.size() - 1);
  if (k + 1 >= colours.size()) return colours.back();
  return glm::mix(colours[k], colours[k + 1], t - static_cast<float>(k));
}

Palette Palette::fire(std::size_t n) {
  return sampled({{0.10f, 0.02f, 0.10f},
                  {0.50f, 0.05f, 0.15f},
                  {0.90f, 0.30f, 0.05f},
                  {1.00f, 0.75f, 0.20f},
                  {1.00f, 1.00f, 0.85f}},
                 n);
}

Palette Palette::rainbow(std::size_t n) {
  return sampled({{0.19f, 0.07f, 0.23f},
                  {0.16f, 0.47f, 0.93f},
                  {0.10f, 0.85f, 0.70f},
                  {0.55f, 0.98f, 0.25f},
                  {0.98f, 0.73f, 0.22f},
                  {0.85f, 0.22f, 0.05f}},
                 n);
}

Palette Palette::discrete(std::vector<glm::vec3> colours) {
  Palette p;
  p.colours = std::move(colours);
  p.smooth = false;
  return p;
}

glm::vec3 blackbodyColour(float kelvin) {
  // Tanner Helland's fit, in display (gamma-encoded) units of 0..255, of Mitchell Charity's
  // blackbody table; then to linear light with the tone mapping's gamma of 2.2.
  const double t = std::clamp(static_cast<double>(kelvin), 1000.0, 40000.0) / 100.0;
  const double r = t <= 66.0 ? 255.0 : 329.698727446 * std::pow(t - 60.0, -0.1332047592);
  const double g = t <= 66.0 ? 99.4708025861 * std::log(t) - 161.1195681661
                             : 288.1221695283 * std::pow(t - 60.0, -0.0755148492);
  const double b =
      t >= 66.0 ? 255.0 : (t <= 19.0 ? 0.0 : 138.5177312231 * std::log(t - 10.0) - 305.0447927307);
  auto linear = [](double c) {
    return static_cast<float>(std::pow(std::clamp(c, 0.0, 255.0) / 255.0, 2.2));
  };
  const glm::vec3 c(linear(r), linear(g), linear(b));
  return c / std::max({c.r, c.g, c.b});
}

Palette Palette::blackbody(float kelvinLow, float kelvinHigh, std::size_t n) {
  Palette p;
  n = std::max<std::size_t>(n, 2);
  p.colours.resize(n);
  const float lo = std::log(kelvinLow), hi = std::log(kelvinHigh);
  for (std::size_t i = 0; i < n; ++i) {
    const float f = static_cast<float>(i) / static_cast<float>(n - 1);
    p.colours[i] = blackbodyColour(std::exp(lo + f * (hi - lo)));
  }
  p.smooth = true;
  return p;
}

void validate(const Palette& p) {
  if (p.colours.empty()) throw std::invalid_argument("palette: no colours");
  for (const glm::vec3& c : p.colours) {
    for (int k = 0; k < 3; ++k) {
      if (!std::isfinite(c[k]) || c[k] < 0.0f) {
        throw std::invalid_argument("palette: colours must be finite and non-negative");
      }
    }
  }
}

}  // namespace bhviz::render
