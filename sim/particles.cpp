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

Particles everyNthId(const Particles& p, std::uint32_t stride) {
  if (stride <= 1) return p;
  std::size_t kept = 0;
  for (std::uint32_t id : p.id) kept += id % stride == 0;
  Particles out;
  out.resize(kept);
  for (std::size_t i = 0, k = 0; i < p.size(); ++i) {
    if (p.id[i] % stride == 0) copyParticle(p, i, out, k++);
  }
  return out;
}

Particles sortedById(const Particles& p) {
  const std::size_t n = p.size();
  Particles out;
  out.resize(n);
  std::vector<bool> seen(n, false);
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t i = p.id[k];
    if (i >= n || seen[i]) {
      throw std::invalid_argument("sortedById: particle id " + std::to_string(i) +
                                  " is out of range or repeated (ids must be 0.." +
                                  std::to_string(n) + "-1)");
    }
    seen[i] = true;
    out.posMass[i] = p.posMass[k];
    out.vel[i] = p.vel[k];
    out.accPot[i] = p.accPot[k];
    out.id[i] = i;
    out.tag[i] = p.tag[k];
    out.bin[i] = p.bin[k];
  }
  return out;
}

}  // namespace bhviz::sim
