#pragma once
// The two interactions of the tree code, written once for both backends. G = 1.
// Accelerations accumulate in a Vec4: x, y, z = acceleration, w = potential.

#include <cmath>

#include "sim/common/hd.h"
#include "sim/common/vec.h"

namespace bhviz::sim {

BHVIZ_HD inline float rsqrtHD(float x) {
#if defined(__CUDA_ARCH__)
  return rsqrtf(x);
#else
  return 1.0f / std::sqrt(x);
#endif
}

/// Second moments about the centre of mass: Q_ab = Σ m (x_a − c_a)(x_b − c_b) (not traceless).
struct Quadrupole {
  float xx = 0.0f, yy = 0.0f, zz = 0.0f, xy = 0.0f, xz = 0.0f, yz = 0.0f;
};

/// Particle–particle (P2P): source j (position, mass) on a target at xi, Plummer-softened.
/// A source at exactly the target's position contributes nothing, which removes the
/// self-interaction without a branch on indices.
BHVIZ_HD inline void p2p(Vec3 xi, Vec4 j, float eps2, Vec4& acc) {
  const float dx = j.x - xi.x, dy = j.y - xi.y, dz = j.z - xi.z;
  const float d2 = dx * dx + dy * dy + dz * dz;
  const float rinv = d2 > 0.0f ? rsqrtHD(d2 + eps2) : 0.0f;
  const float mrinv = j.w * rinv;
  const float mrinv3 = mrinv * rinv * rinv;
  acc.x += mrinv3 * dx;
  acc.y += mrinv3 * dy;
  acc.z += mrinv3 * dz;
  acc.w -= mrinv;
}

/// Cell–particle (M2P): monopole plus, when `quad`, the quadrupole of the cell's second
/// moments. With r = xi − com and softened distance R² = r² + ε²:
///   φ = −M/R − ½(3 rᵀQr/R⁵ − tr Q/R³)
///   a = −M r/R³ + 3 Q r/R⁵ − (15/2)(rᵀQr) r/R⁷ + (3/2) tr Q r/R⁵
BHVIZ_HD inline void m2p(Vec3 xi, Vec4 comMass, const Quadrupole& q, bool quad, float eps2,
                         Vec4& acc) {
  const float rx = xi.x - comMass.x, ry = xi.y - comMass.y, rz = xi.z - comMass.z;
  const float r2 = rx * rx + ry * ry + rz * rz + eps2;
  const float rinv = rsqrtHD(r2);
  const float rinv2 = rinv * rinv;
  const float mrinv = comMass.w * rinv;
  float ar = -mrinv * rinv2;  // coefficient of r in the acceleration
  float pot = -mrinv;
  if (quad) {
    const float qrx = q.xx * rx + q.xy * ry + q.xz * rz;
    const float qry = q.xy * rx + q.yy * ry + q.yz * rz;
    const float qrz = q.xz * rx + q.yz * ry + q.zz * rz;
    const float rqr = rx * qrx + ry * qry + rz * qrz;
    const float trq = q.xx + q.yy + q.zz;
    const float rinv3 = rinv * rinv2;
    const float rinv5 = rinv3 * rinv2;
    const float rinv7 = rinv5 * rinv2;
    ar += 1.5f * trq * rinv5 - 7.5f * rqr * rinv7;
    acc.x += 3.0f * rinv5 * qrx;
    acc.y += 3.0f * rinv5 * qry;
    acc.z += 3.0f * rinv5 * qrz;
    pot -= 1.5f * rqr * rinv5 - 0.5f * trq * rinv3;
  }
  acc.x += ar * rx;
  acc.y += ar * ry;
  acc.z += ar * rz;
  acc.w += pot;
}

}  // namespace bhviz::sim
