#pragma once
// Small vector types shared by the host and the device. Vec4 has the size and alignment of
// CUDA's float4, so device code may load a Vec4 array as float4 in one 16-byte access.

#include <cmath>

#include "sim/common/hd.h"

namespace bhviz::sim {

struct Vec3 {
  float x = 0.0f, y = 0.0f, z = 0.0f;
};

struct alignas(16) Vec4 {
  float x = 0.0f, y = 0.0f, z = 0.0f, w = 0.0f;
};

BHVIZ_HD inline Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
BHVIZ_HD inline Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
BHVIZ_HD inline Vec3 operator*(float s, Vec3 a) { return {s * a.x, s * a.y, s * a.z}; }
BHVIZ_HD inline float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
BHVIZ_HD inline Vec3 xyz(Vec4 v) { return {v.x, v.y, v.z}; }
BHVIZ_HD inline Vec3 vmin(Vec3 a, Vec3 b) {
  return {fminf(a.x, b.x), fminf(a.y, b.y), fminf(a.z, b.z)};
}
BHVIZ_HD inline Vec3 vmax(Vec3 a, Vec3 b) {
  return {fmaxf(a.x, b.x), fmaxf(a.y, b.y), fmaxf(a.z, b.z)};
}

/// Axis-aligned box [lo, hi]. An empty box has lo > hi.
struct Box {
  Vec3 lo{INFINITY, INFINITY, INFINITY};
  Vec3 hi{-INFINITY, -INFINITY, -INFINITY};
};

BHVIZ_HD inline void grow(Box& b, Vec3 p) {
  b.lo = vmin(b.lo, p);
  b.hi = vmax(b.hi, p);
}

BHVIZ_HD inline void grow(Box& b, const Box& o) {
  b.lo = vmin(b.lo, o.lo);
  b.hi = vmax(b.hi, o.hi);
}

/// Squared distance from point p to box b (0 inside).
BHVIZ_HD inline float distSqPointBox(Vec3 p, const Box& b) {
  const float dx = fmaxf(fmaxf(b.lo.x - p.x, p.x - b.hi.x), 0.0f);
  const float dy = fmaxf(fmaxf(b.lo.y - p.y, p.y - b.hi.y), 0.0f);
  const float dz = fmaxf(fmaxf(b.lo.z - p.z, p.z - b.hi.z), 0.0f);
  return dx * dx + dy * dy + dz * dz;
}

/// Distance from p to the farthest corner of box b: an upper bound on |x − p| for x in b.
BHVIZ_HD inline float farthestCornerDistance(Vec3 p, const Box& b) {
  const float dx = fmaxf(fabsf(p.x - b.lo.x), fabsf(p.x - b.hi.x));
  const float dy = fmaxf(fabsf(p.y - b.lo.y), fabsf(p.y - b.hi.y));
  const float dz = fmaxf(fabsf(p.z - b.lo.z), fabsf(p.z - b.hi.z));
  return sqrtf(dx * dx + dy * dy + dz * dz);
}

BHVIZ_HD inline bool overlaps(const Box& a, const Box& b) {
  return a.lo.x <= b.hi.x && b.lo.x <= a.hi.x && a.lo.y <= b.hi.y && b.lo.y <= a.hi.y &&
         a.lo.z <= b.hi.z && b.lo.z <= a.hi.z;
}

/// |a| of an acceleration (xyz), exactly alike on both backends: no fused multiply-add, a
/// correctly rounded sqrt (the groups' |a_old| minima are compared bit for bit).
BHVIZ_HD inline float accMagnitude(Vec4 a) {
#if defined(__CUDA_ARCH__)
  return sqrtf(__fadd_rn(__fadd_rn(__fmul_rn(a.x, a.x), __fmul_rn(a.y, a.y)), __fmul_rn(a.z, a.z)));
#else
  return std::sqrt(a.x * a.x + a.y * a.y + a.z * a.z);
#endif
}

/// Whether no component is NaN or infinite (the non-finite checks of both backends).
BHVIZ_HD inline bool allFinite(const Vec4& v) {
#if defined(__CUDA_ARCH__)
  return isfinite(v.x) && isfinite(v.y) && isfinite(v.z) && isfinite(v.w);
#else
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z) && std::isfinite(v.w);
#endif
}

}  // namespace bhviz::sim
