#include "sim/particles.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace bhviz::sim {

void Particles::resize(std::size_t n) {
  posMass.resize(n);
  vel.resize(n);
  accPot.resize(n);
  id.resize(n);
  tag.resize(n);
  bin.resize(n);
}

namespace {
bool finite(const Vec4& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z) && std::isfinite(v.w);
}
}  // namespace

void Particles::validate() const {
  const std::size_t n = size();
  if (vel.size() != n || accPot.size() != n || id.size() != n || tag.size() != n ||
      bin.size() != n) {
    throw std::invalid_argument("particle arrays have different lengths");
  }
  std::vector<bool> seen(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    if (!finite(posMass[i]) || !finite(vel[i])) {
      throw std::invalid_argument("particle " + std::to_string(id[i]) +
                                  " has a non-finite position, mass or velocity");
    }
    if (!(posMass[i].w > 0.0f)) {
      throw std::invalid_argument("particle " + std::to_string(id[i]) + " has mass <= 0");
    }
    if (id[i] >= n || seen[id[i]]) {
      throw std::invalid_argument("particle ids must be a permutation of 0..N-1 (bad id " +
                                  std::to_string(id[i]) + ")");
    }
    seen[id[i]] = true;
  }
}

}  // namespace bhviz::sim
