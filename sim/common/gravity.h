#pragma once
// The two interactions of the tree code, written once for both backends. G = 1.
// Accelerations accumulate in a Vec4: x, y, z = acceleration, w = potential. With kPotential
// false the potential is neither computed nor added (w untouched): the GPU walk of a block
// substep that ends only some particles' steps saves its instructions, 3 of the ~38 an M2P takes
// in the walk's loop (walk.h, WalkSettings::potential); the accelerations are the same
// operations either way.

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
template <bool kPotential = true>
BHVIZ_HD inline void p2p(Vec3 xi, Vec4 j, float eps2, Vec4& acc) {
  const float dx = j.x - xi.x, dy = j.y - xi.y, dz = j.z - xi.z;
  const float d2 = dx * dx + (dy * dy + dz * dz);
  // A select, not a branch around the square root: on the GPU one instruction.
  const float r = rsqrtHD(d2 + eps2);
  const float rinv = d2 > 0.0f ? r : 0.0f;
  const float mrinv = j.w * rinv;
  const float mrinv3 = mrinv * (rinv * rinv);
  acc.x += mrinv3 * dx;
  acc.y += mrinv3 * dy;
  acc.z += mrinv3 * dz;
  if constexpr (kPotential) acc.w -= mrinv;
}

/// One near pair both ways (the mutual near field): target i gets exactly what p2p(xi, j) adds,
/// and j gets the counter-force and potential of i's mass, from the same reciprocal distance.
/// Coincident particles (the pair of a particle with itself) contribute nothing to either.
BHVIZ_HD inline void p2pPair(Vec4 i, Vec4 j, float eps2, Vec4& accI, Vec4& accJ) {
  const float dx = j.x - i.x, dy = j.y - i.y, dz = j.z - i.z;
  const float d2 = dx * dx + (dy * dy + dz * dz);
  const float r = rsqrtHD(d2 + eps2);
  const float rinv = d2 > 0.0f ? r : 0.0f;
  const float rinv2 = rinv * rinv;
  const float mjrinv = j.w * rinv, mirinv = i.w * rinv;
  const float mjrinv3 = mjrinv * rinv2, mirinv3 = mirinv * rinv2;
  accI.x += mjrinv3 * dx;
  accI.y += mjrinv3 * dy;
  accI.z += mjrinv3 * dz;
  accI.w -= mjrinv;
  accJ.x -= mirinv3 * dx;
  accJ.y -= mirinv3 * dy;
  accJ.z -= mirinv3 * dz;
  accJ.w -= mirinv;
}

/// A cell's quadrupole in the form the M2P evaluates, made once per cell (and ε) rather than
/// once per target: the traceless P = 3Q − tr(Q)·I, and softTrace = −tr(Q)·ε², the one trace
/// term that softening leaves.
struct QuadSource {
  float xx = 0.0f, yy = 0.0f, zz = 0.0f, xy = 0.0f, xz = 0.0f, yz = 0.0f;
  float softTrace = 0.0f;
};

BHVIZ_HD inline QuadSource quadSource(const Quadrupole& q, float eps2) {
  const float tr = q.xx + q.yy + q.zz;
  return {3.0f * q.xx - tr, 3.0f * q.yy - tr, 3.0f * q.zz - tr, 3.0f * q.xy,
          3.0f * q.xz,      3.0f * q.yz,      -tr * eps2};
}

/// Cell–particle (M2P), monopole only: the cell's mass at its centre of mass.
template <bool kPotential = true>
BHVIZ_HD inline void m2pMonopole(Vec3 xi, Vec4 comMass, float eps2, Vec4& acc) {
  const float rx = xi.x - comMass.x, ry = xi.y - comMass.y, rz = xi.z - comMass.z;
  const float rinv = rsqrtHD(rx * rx + (ry * ry + (rz * rz + eps2)));
  const float mrinv = comMass.w * rinv;
  const float ar = -mrinv * (rinv * rinv);  // coefficient of r in the acceleration
  acc.x += ar * rx;
  acc.y += ar * ry;
  acc.z += ar * rz;
  if constexpr (kPotential) acc.w -= mrinv;
}

/// What a quadrupole cell's action at x starts from, in M2P and in M2L alike: r = x − com,
/// 1/R with R² = r² + ε², P r and u = rᵀPr − tr(Q)·ε².
struct QuadGeometry {
  Vec3 r;
  float rinv;
  Vec3 pr;
  float u;
};

BHVIZ_HD inline QuadGeometry quadGeometry(Vec3 x, Vec4 comMass, const QuadSource& p, float eps2) {
  const float rx = x.x - comMass.x, ry = x.y - comMass.y, rz = x.z - comMass.z;
  const float rinv = rsqrtHD(rx * rx + (ry * ry + (rz * rz + eps2)));
  const float prx = p.xx * rx + (p.xy * ry + p.xz * rz);
  const float pry = p.xy * rx + (p.yy * ry + p.yz * rz);
  const float prz = p.xz * rx + (p.yz * ry + p.zz * rz);
  const float u = rx * prx + (ry * pry + (rz * prz + p.softTrace));
  return {{rx, ry, rz}, rinv, {prx, pry, prz}, u};
}

/// Cell–particle (M2P) with the quadrupole of the cell's second moments Q. With r = xi − com,
/// R² = r² + ε², P = 3Q − tr(Q)·I and u = rᵀPr − tr(Q)·ε² (p.softTrace holds the last term):
///   φ = −M/R − ½ u/R⁵
///   a = −M r/R³ + P r/R⁵ − (5/2) u r/R⁷
/// This is the softened expansion φ = −M/R − ½(3 rᵀQr/R⁵ − tr Q/R³) exactly (3 rᵀQr =
/// rᵀPr + tr Q·r², and r² − R² = −ε²), written so that a target costs 33 fp32 operations and
/// one reciprocal square root. The groupings below are the fused multiply–adds the GPU executes.
template <bool kPotential = true>
BHVIZ_HD inline void m2pQuadrupole(Vec3 xi, Vec4 comMass, const QuadSource& p, float eps2,
                                   Vec4& acc) {
  const QuadGeometry g = quadGeometry(xi, comMass, p, eps2);
  const float rinv2 = g.rinv * g.rinv;
  const float rinv5 = rinv2 * rinv2 * g.rinv;
  const float mrinv = comMass.w * g.rinv;
  const float q = g.u * rinv5;                   // u/R⁵
  const float ar = -(2.5f * q + mrinv) * rinv2;  // coefficient of r
  acc.x = ar * g.r.x + (rinv5 * g.pr.x + acc.x);
  acc.y = ar * g.r.y + (rinv5 * g.pr.y + acc.y);
  acc.z = ar * g.r.z + (rinv5 * g.pr.z + acc.z);
  if constexpr (kPotential) acc.w -= 0.5f * q + mrinv;
}

/// Cell–particle (M2P): monopole plus, when `quad`, the quadrupole (m2pQuadrupole). Walks that
/// apply one cell to many targets make the QuadSource once and call m2pQuadrupole.
BHVIZ_HD inline void m2p(Vec3 xi, Vec4 comMass, const Quadrupole& q, bool quad, float eps2,
                         Vec4& acc) {
  if (quad) {
    m2pQuadrupole(xi, comMass, quadSource(q, eps2), eps2, acc);
  } else {
    m2pMonopole(xi, comMass, eps2, acc);
  }
}

}  // namespace bhviz::sim
