#pragma once
// One particle's values, checked by a reader as it fills them in. Particles::validate checks the
// same, but only after the ids are renumbered 0..N-1, so its message names an id the file does
// not have (HDF5 ParticleID 1017 would be "particle 17"); a reader's message names the particle
// as the file does.

#include <cmath>

#include "sim/common/vec.h"

namespace bhviz::sim::io {

/// What is wrong with a particle's values, in the words of Particles::validate; nullptr when
/// nothing is.
inline const char* valueProblem(const Vec4& posMass, const Vec4& vel) {
  const bool finite = std::isfinite(posMass.x) && std::isfinite(posMass.y) &&
                      std::isfinite(posMass.z) && std::isfinite(posMass.w) &&
                      std::isfinite(vel.x) && std::isfinite(vel.y) && std::isfinite(vel.z);
  if (!finite) return "has a non-finite position, mass or velocity";
  if (!(posMass.w > 0.0f)) return "has mass <= 0";
  return nullptr;
}

}  // namespace bhviz::sim::io
