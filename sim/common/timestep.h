#pragma once
// Block time steps on an integer clock. The finest tick is dtMax / 2^D (D = deepest bin); a
// particle in bin b steps every 2^(D−b) ticks and is active at ticks divisible by that period.

#include <cmath>
#include <cstdint>
#include <cstring>

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

/// The drift's carried rounding. A position is summed in float32 from many increments, each
/// far smaller than itself: the sum rounds the same way drift after drift (the position stays in
/// one binade), up to half an ulp of bias each. A block run drifts every particle at every
/// substep: in a reference run of 1161 substeps halo particles at 100–250 kpc ended ~2.5e-3 kpc
/// off (the bound: 1161 half-ulps, ~9e-3 kpc at 200 kpc; docs/BENCHMARKS.md, "What sets the
/// floors"). So each drift carries what its sum lost to the
/// next (Kahan), per axis in 1/1024 of the position's ulp, in velocity's unused w: three 10-bit
/// two's-complement fields in the low 30 bits, the sign and the exponent's top bit zero, so the
/// float is finite (in [0, 2), never read as a number) and 0 means "nothing carried". The
/// quantisation leaves at most 1/2048 ulp a drift (the plain sum: 1/2). It travels wherever the
/// velocity does (the sort, the exchanges between ranks, kept states); where it is lost (a
/// snapshot's format without it) at most half an ulp is.
namespace drift_detail {

inline constexpr float kSteps = 1024.0f;  // the residual's resolution: 1/1024 ulp
inline constexpr int kBits = 10;
inline constexpr int kLimit = 511;  // |field| ≤ 511

BHVIZ_HD inline std::uint32_t bitsOf(float f) {
  std::uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

BHVIZ_HD inline float floatOf(std::uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/// The spacing of floats at x, 2^(E − 150) for the biased exponent E, from the bits (a power of
/// two: scaling by it is exact); below 2^−103, the smallest denormal.
BHVIZ_HD inline float ulpOf(float x) {
  const std::uint32_t e = (bitsOf(x) >> 23) & 0xFFu;
  return e > 23u ? floatOf((e - 23u) << 23) : floatOf(1u);
}

/// Field `axis` of the packed residuals, as a multiple of 1/1024 ulp.
BHVIZ_HD inline int field(std::uint32_t packed, int axis) {
  const std::uint32_t raw = (packed >> (axis * kBits)) & ((1u << kBits) - 1u);
  return raw >= (1u << (kBits - 1)) ? static_cast<int>(raw) - (1 << kBits) : static_cast<int>(raw);
}

/// x += v·dt with the carried residual `steps` (1/1024 ulps of x) taken in; returns the new one.
BHVIZ_HD inline int addCarried(float& x, float v, float dt, int steps) {
  const float carried = static_cast<float>(steps) / kSteps * ulpOf(x);  // exact: scaled by 2^k
  const float y = v * dt - carried;
  const float t = x + y;
  const float lost = (t - x) - y;  // what the sum dropped, negated
  x = t;
  const float r = rintf(lost / ulpOf(t) * kSteps);  // exact scalings, then to the nearest step
  return static_cast<int>(fminf(fmaxf(r, -float(kLimit)), float(kLimit)));
}

}  // namespace drift_detail

/// Moves the position by vel·dt, carrying the sums' rounding in vel.w from drift to drift.
BHVIZ_HD inline void drift(Vec4& posMass, Vec4& vel, float dt) {
  namespace d = drift_detail;
  const std::uint32_t packed = d::bitsOf(vel.w);
  const int cx = d::addCarried(posMass.x, vel.x, dt, d::field(packed, 0));
  const int cy = d::addCarried(posMass.y, vel.y, dt, d::field(packed, 1));
  const int cz = d::addCarried(posMass.z, vel.z, dt, d::field(packed, 2));
  const std::uint32_t mask = (1u << d::kBits) - 1u;
  vel.w = d::floatOf((static_cast<std::uint32_t>(cx) & mask) |
                     ((static_cast<std::uint32_t>(cy) & mask) << d::kBits) |
                     ((static_cast<std::uint32_t>(cz) & mask) << (2 * d::kBits)));
}

}  // namespace bhviz::sim
