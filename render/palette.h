#pragma once
// A colour map: an ordered list of colours that a vertex's value in [0, 1] runs along. Smooth
// maps interpolate between neighbours (speed, time); discrete ones pick the nearest colour
// (categories: the caller puts category i at valueOf(i)). The caller chooses the colours; a few
// general-purpose maps are provided.

#include <cstddef>
#include <glm/vec3.hpp>
#include <string>
#include <vector>

namespace bhviz::render {

struct Palette {
  std::vector<glm::vec3> colours;  ///< linear RGB, at least one; colour i sits at valueOf(i)
  bool smooth = true;              ///< interpolate (true) or take the nearest colour (false)

  /// The vertex value that selects colour i exactly: i / (size − 1), 0 for a single colour.
  float valueOf(std::size_t i) const;
  /// The colour a value selects (the shader's lookup, on the CPU: for legends and tests).
  glm::vec3 lookup(float value) const;

  /// Dark red → orange → yellow → white (an "inferno"-like map for intensities and speeds).
  static Palette fire(std::size_t n = 256);
  /// Blue → cyan → green → yellow → red (a "turbo"-like map, for ranked categories).
  static Palette rainbow(std::size_t n = 256);
  /// Discrete map of the given colours (nearest lookup).
  static Palette discrete(std::vector<glm::vec3> colours);
  /// Blackbody colours (blackbodyColour) from kelvinLow to kelvinHigh, evenly in log T.
  static Palette blackbody(float kelvinLow, float kelvinHigh, std::size_t n = 256);
};

/// The colour of a blackbody at `kelvin` (clamped to [1000, 40000] K) as seen on a display with
/// a D65 white point: linear RGB with the largest channel 1 (Helland's fit to Charity's table of
/// CIE 1964 colours: 6500 K is white, cooler red, hotter blue).
glm::vec3 blackbodyColour(float kelvin);

/// Throws std::invalid_argument when the palette has no colour or a non-finite or negative one.
void validate(const Palette& p);

}  // namespace bhviz::render
