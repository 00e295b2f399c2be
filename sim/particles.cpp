#include "sim/particles.h"

#include <algorithm>
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

std::vector<PackedParticle> packAll(const Particles& p) {
  std::vector<PackedParticle> packed(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) packed[i] = pack(p, i);
  return packed;
}

Particles unpackAll(const std::vector<PackedParticle>& packed) {
  Particles p;
  p.resize(packed.size());
  for (std::size_t i = 0; i < packed.size(); ++i) unpack(packed[i], p, i);
  return p;
}

ExchangePlan planExchange(std::size_t n, const std::vector<std::uint32_t>& leaving,
                          std::size_t arriving) {
  for (std::size_t k = 0; k < leaving.size(); ++k) {
    if (leaving[k] >= n) {
      throw std::out_of_range("particle index " + std::to_string(leaving[k]) + " of " +
                              std::to_string(n));
    }
    if (k > 0 && leaving[k] <= leaving[k - 1]) {
      throw std::invalid_argument("exchange: the leaving indices are not ascending and distinct");
    }
  }
  ExchangePlan plan;
  plan.size = n - leaving.size() + arriving;
  const std::size_t size = plan.size;
  // The free slots below the new end, ascending: the holes there, then (growing) the new end.
  const auto below = static_cast<std::size_t>(
      std::lower_bound(leaving.begin(), leaving.end(), size) - leaving.begin());
  std::vector<std::uint32_t> free(leaving.begin(),
                                  leaving.begin() + static_cast<std::ptrdiff_t>(below));
  for (std::size_t i = n; i < size; ++i) free.push_back(static_cast<std::uint32_t>(i));
  // The staying particles at or beyond the new end move down into the first free slots.
  std::size_t slot = 0, hole = below;
  for (std::size_t i = size; i < n; ++i) {
    if (hole < leaving.size() && leaving[hole] == i) {
      ++hole;
      continue;
    }
    plan.from.push_back(static_cast<std::uint32_t>(i));
    plan.to.push_back(free[slot++]);
  }
  plan.arrivalAt.assign(free.begin() + static_cast<std::ptrdiff_t>(slot), free.end());
  return plan;
}

void Particles::validate() const {
  const std::size_t n = size();
  if (vel.size() != n || accPot.size() != n || id.size() != n || tag.size() != n ||
      bin.size() != n) {
    throw std::invalid_argument("particle arrays have different lengths");
  }
  std::vector<bool> seen(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    if (!allFinite(posMass[i]) || !allFinite(vel[i])) {
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
