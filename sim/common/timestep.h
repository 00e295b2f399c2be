#pragma once
// Block time steps on an integer clock. The finest tick is dtMax / 2^D (D = deepest bin); a
// particle in bin b steps every 2^(D−b) ticks and is active at ticks divisible by that period.

#include <cmath>
#include <cstdint>

#include "sim/common/hd.h"
#include "sim/common/vec.h"

namespace bhviz::sim {

BHVIZ_HD inline std::uint64_t binPeriod(int bin, int depth) {
  return std::uint64_t{1} << (depth - bin);
}

BHVIZ_HD inline bool isActive(int bin, std::uint64_t tick, int depth) {
  return (tick & (binPeriod(bin, depth) - 1)) == 0;
}

/// The shallowest bin whose step boundary falls on `tick`: a particle may move to any bin at
/// or below it (shorter steps always; longer ones only where the longer step starts).
BHVIZ_HD inline int shallowestAlignedBin(std::uint64_t tick, int depth) {
  for (int b = 0; b < depth; ++b) {
    if (isActive(b, tick, depth)) return b;
  }
  return depth;
}

/// The bin a particle wants: the shallowest b with dtMax/2^b ≤ η·sqrt(ε/|a|), within [0, depth].
BHVIZ_HD inline int wantedBin(float accMag, float eps, float eta, float dtMax, int depth) {
  if (!(accMag > 0.0f)) return 0;
  const float dt = eta * sqrtf(eps / accMag);
  int b = 0;
  float step = dtMax;
  while (step > dt && b < depth) {
    step *= 0.5f;
    ++b;
  }
  return b;
}

/// The new bin at one of the particle's step boundaries.
BHVIZ_HD inline int nextBin(int wanted, std::uint64_t tick, int depth) {
  const int aligned = shallowestAlignedBin(tick, depth);
  return wanted > aligned ? wanted : aligned;
}

BHVIZ_HD inline void kick(Vec4& vel, const Vec4& acc, float dt) {
  vel.x += acc.x * dt;
  vel.y += acc.y * dt;
  vel.z += acc.z * dt;
}

BHVIZ_HD inline void drift(Vec4& posMass, const Vec4& vel, float dt) {
  posMass.x += vel.x * dt;
  posMass.y += vel.y * dt;
  posMass.z += vel.z * dt;
}

}  // namespace bhviz::sim
