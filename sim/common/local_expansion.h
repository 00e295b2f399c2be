#pragma once
// The far cells of a group as one Taylor series about the group's centre (M2L and L2P), written
// once for both backends.
//
// The walk applies every accepted cell to every target of a group (M2P: 33 fp32 operations per
// target). A cell far from the group compared with the group's size gives nearly the same field
// at every target, so its potential can instead be expanded once about the group's centre c
// and the expansion evaluated at each target x = c + y:
//   φ(c + y) = φ + g·y + ½ yᵀH y + ⅙ T[y, y, y] + O(|y|⁴)
//   a(c + y) = −(g + H y + ½ T[y, y]) + O(|y|³)
// where g, H, T are the first three derivative tensors of the cell's softened multipole
// potential (gravity.h's m2pQuadrupole: φ = −M/R − ½ u/R⁵, R² = r² + ε², u = rᵀPr + softTrace,
// r = x − com, v = P r):
//   ∂ᵢφ   = A rᵢ − vᵢ/R⁵,                     A = M/R³ + 5/2 u/R⁷
//   ∂ᵢⱼφ  = A δᵢⱼ − B rᵢrⱼ − Pᵢⱼ/R⁵ + 5/R⁷ (vᵢrⱼ + vⱼrᵢ),   B = 3M/R⁵ + 35/2 u/R⁹
//   ∂ᵢⱼₖφ = D rᵢrⱼrₖ − B (δᵢⱼrₖ + δᵢₖrⱼ + δⱼₖrᵢ) + 5/R⁷ (Pᵢⱼrₖ + Pᵢₖrⱼ + Pⱼₖrᵢ)
//           + 5/R⁷ (vᵢδⱼₖ + vⱼδᵢₖ + vₖδᵢⱼ) − 35/R⁹ (vᵢrⱼrₖ + vⱼrᵢrₖ + vₖrᵢrⱼ),
//                                              D = 15M/R⁷ + 315/2 u/R¹¹
// (the monopole alone: P = 0, u = 0). The acceleration's remainder is of third order: relative
// to the cell's own field about (|y|/|r|)³ (tests/test_local_expansion.cpp measures the order).
// A cell costs ~200 operations once per group instead of 33 per target; the walk uses it only
// for cells far enough from the group (SimParams::expansionRatio).
#include <cmath>

#include "sim/common/gravity.h"
#include "sim/common/mac.h"
#include "sim/common/vec.h"

namespace bhviz::sim {

/// The terms of a LocalExpansion, in its array.
// clang-format off
enum LocalTerm : int {
  kPhi,                                                                  // φ
  kGx, kGy, kGz,                                                         // ∂φ
  kHxx, kHyy, kHzz, kHxy, kHxz, kHyz,                                    // ∂∂φ
  kTxxx, kTyyy, kTzzz, kTxxy, kTxxz, kTxyy, kTyyz, kTxzz, kTyzz, kTxyz,  // ∂∂∂φ
  kLocalTerms
};
// clang-format on

/// The potential of many cells and its first three derivatives at one centre (summed over the
/// cells). An array, so that the GPU can reduce it over a warp term by term.
struct LocalExpansion {
  float c[kLocalTerms] = {};
};

namespace detail {

/// ∂ᵢᵢᵢφ of the formula above.
BHVIZ_HD inline float thirdIII(float ri, float vi, float pii, float b, float d, float e5,
                               float e35) {
  return ri * (d * ri * ri - 3.0f * b + 3.0f * e5 * pii) + 3.0f * vi * (e5 - e35 * ri * ri);
}

/// ∂ᵢᵢⱼφ (i ≠ j) of the formula above.
BHVIZ_HD inline float thirdIIJ(float ri, float rj, float vi, float vj, float pii, float pij,
                               float b, float d, float e5, float e35) {
  return rj * (d * ri * ri - b + e5 * pii) + e5 * (2.0f * pij * ri + vj) -
         e35 * (2.0f * vi * ri * rj + vj * ri * ri);
}

}  // namespace detail

/// Groups of fewer targets expand nothing: on the GPU an M2P flush over 8 targets costs ~9 warp
/// instructions a cell (the targets replicated over the lanes) against the expansion's ~10, so
/// below about this many the series cannot pay (a cost model, walk_flush.cuh; not measured).
inline constexpr unsigned kMinExpansionTargets = 10;

/// Which accepted cells a group expands, by two rules (docs/ARCHITECTURE.md, "The far cells'
/// expansion about the group"):
///   - distance: every cell whose centre of mass lies at least R/ρ from the group's centre (R the
///     group box's half diagonal; ratio2 = ρ², 0: none);
///   - mass (gamma > 0): also a nearer cell, down to R/kExpansionRatioNear, whose series' error
///     bound M R³/d⁵ (the acceleration's remainder is of third order in R/d) is at most gamma
///     times the group's smallest |a_old|. Light cells go to the series nearer than heavy ones:
///     their error weighs little in the target's force. Without old accelerations (a run's first
///     evaluation: the backends then pass gamma 0) it takes nothing.
/// ρ = 0 expands nothing, by either rule.
struct ExpansionRule {
  /// ρ² (SimParams::expansionRatio squared) [1]
  float ratio2 = 0.0f;
  /// expansionGamma(mac, SimParams::expansionBudget), 0 without old accelerations [1]
  float gamma = 0.0f;
};

/// The rule of ratio ρ (ρ 0: nothing expanded) and the mass rule's γ (0: the distance rule alone).
BHVIZ_HD inline ExpansionRule expansionRuleOf(float ratio, float gamma = 0.0f) {
  return {ratio * ratio, gamma};
}

/// The nearest the mass rule expands a cell: R/d ≤ 0.3 (its error there is 0.3³ of the cell's
/// field at most, where the rule's bound lets it).
inline constexpr float kExpansionRatioNear = 0.3f;

/// The mass rule's gamma for a MAC, `budget` times a tolerance that follows the MAC's own
/// accuracy: 1e-4 θ⁵ for the geometric tests, 2e-3 α for the acceleration MAC, so that at budget
/// 1 the force error stays within ~1 % of the distance rule's alone on Plummer and the merger (a
/// CPU experiment, docs/BENCHMARKS.md "The far cells' expansion by their mass"; the default
/// budget, 2, is the fastest at equal error); 0 (the distance rule alone) for the multipole MAC,
/// whose Δ is absolute.
BHVIZ_HD inline float expansionGamma(const MacSetup& mac, float budget) {
  switch (mac.code) {
    case MacCode::BarnesHut:
    case MacCode::Bonsai: {
      const float t2 = mac.theta * mac.theta;
      return budget * 1e-4f * t2 * t2 * mac.theta;
    }
    case MacCode::Acceleration:
      return budget * 2e-3f * mac.param;
    case MacCode::Multipole:
      return 0.0f;
  }
  return 0.0f;
}

/// Where a group's expansion is centred (its box's centre), and what its rules need. farD2 = ∞
/// (nothing expanded) for ρ = 0 or a group of fewer than kMinExpansionTargets targets. Both walks
/// decide with these two functions.
struct ExpansionCentre {
  Vec3 centre;
  float farD2 = INFINITY;   ///< (R/ρ)²: the distance rule [length²]
  float nearD2 = INFINITY;  ///< (R/kExpansionRatioNear)²: the mass rule's nearest [length²]
  float r3 = 0.0f;          ///< R³ [length³]
  float budget = 0.0f;      ///< gamma × the group's smallest |a_old| [acceleration]
};

/// |a|² of a vector, each product and sum rounded on its own: the device would fuse them into
/// multiply–adds where the host (-ffp-contract=off) does not, and the two walks must decide
/// alike.
BHVIZ_HD inline float squaredNorm(Vec3 a) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(__fmul_rn(a.x, a.x), __fadd_rn(__fmul_rn(a.y, a.y), __fmul_rn(a.z, a.z)));
#else
  return a.x * a.x + (a.y * a.y + a.z * a.z);
#endif
}

/// Which rule expands a cell (expands(); the walk inspection says which).
enum class ExpansionBy { None, Distance, Mass };

BHVIZ_HD inline ExpansionCentre expansionCentre(const Box& groupBox, unsigned targets,
                                                const ExpansionRule& rule, float accMin) {
  const Vec3 centre = 0.5f * (groupBox.lo + groupBox.hi);
  const float radius2 = squaredNorm(0.5f * (groupBox.hi - groupBox.lo));
  if (!(rule.ratio2 > 0.0f) || targets < kMinExpansionTargets) return {centre};
  ExpansionCentre e{centre, radius2 / rule.ratio2};
  const float budget = rule.gamma * accMin;
  if (budget > 0.0f && budget < INFINITY) {  // no |a_old| (0, or poisoned): the distance rule
    e.nearD2 = radius2 / (kExpansionRatioNear * kExpansionRatioNear);
    e.r3 = radius2 * sqrtf(radius2);
    e.budget = budget;
  }
  return e;
}

/// The squared distance from the expansion's centre to a cell's centre of mass.
BHVIZ_HD inline float expansionDistance2(const ExpansionCentre& e, Vec4 comMass) {
  return squaredNorm(e.centre - xyz(comMass));
}

/// The mass rule's error bound M R³/d⁵ of a cell at squared distance d2 (expansionDistance2).
BHVIZ_HD inline float expansionErrorBound(const ExpansionCentre& e, Vec4 comMass, float d2) {
  return comMass.w * e.r3 / ((d2 * d2) * sqrtf(d2));
}

BHVIZ_HD inline ExpansionBy expansionBy(const ExpansionCentre& e, Vec4 comMass) {
  const float d2 = expansionDistance2(e, comMass);
  if (d2 >= e.farD2) return ExpansionBy::Distance;
  const bool light = d2 >= e.nearD2 && comMass.w * e.r3 <= e.budget * (d2 * d2) * sqrtf(d2);
  return light ? ExpansionBy::Mass : ExpansionBy::None;
}

BHVIZ_HD inline bool expands(const ExpansionCentre& e, Vec4 comMass) {
  return expansionBy(e, comMass) != ExpansionBy::None;
}

/// Adds the cell (centre of mass and mass, quadrupole source p; all zero for a monopole) to the
/// expansion about `centre` (M2L). kPotential: also φ at the centre (the L2P's potential).
template <bool kPotential = true>
BHVIZ_HD inline void m2l(Vec3 centre, Vec4 comMass, const QuadSource& p, float eps2,
                         LocalExpansion& l) {
  const QuadGeometry g = quadGeometry(centre, comMass, p, eps2);
  const float rx = g.r.x, ry = g.r.y, rz = g.r.z, rinv = g.rinv, u = g.u;
  const float vx = g.pr.x, vy = g.pr.y, vz = g.pr.z;
  const float i2 = rinv * rinv;
  const float i5 = i2 * i2 * rinv;
  const float m3 = comMass.w * rinv * i2;  // M/R³
  const float u7 = u * i5 * i2;            // u/R⁷
  const float a = m3 + 2.5f * u7;
  const float b = (3.0f * m3 + 17.5f * u7) * i2;
  const float d = (15.0f * m3 + 157.5f * u7) * (i2 * i2);
  const float e5 = 5.0f * i5 * i2;   // 5/R⁷
  const float e35 = 7.0f * e5 * i2;  // 35/R⁹
  float* c = l.c;
  if constexpr (kPotential) c[kPhi] -= comMass.w * rinv + 0.5f * u * i5;
  c[kGx] += a * rx - i5 * vx;
  c[kGy] += a * ry - i5 * vy;
  c[kGz] += a * rz - i5 * vz;
  const float wx = e5 * vx, wy = e5 * vy, wz = e5 * vz;
  c[kHxx] += a - b * rx * rx - i5 * p.xx + 2.0f * wx * rx;
  c[kHyy] += a - b * ry * ry - i5 * p.yy + 2.0f * wy * ry;
  c[kHzz] += a - b * rz * rz - i5 * p.zz + 2.0f * wz * rz;
  c[kHxy] += -b * rx * ry - i5 * p.xy + (wx * ry + wy * rx);
  c[kHxz] += -b * rx * rz - i5 * p.xz + (wx * rz + wz * rx);
  c[kHyz] += -b * ry * rz - i5 * p.yz + (wy * rz + wz * ry);
  using detail::thirdIII;
  using detail::thirdIIJ;
  c[kTxxx] += thirdIII(rx, vx, p.xx, b, d, e5, e35);
  c[kTyyy] += thirdIII(ry, vy, p.yy, b, d, e5, e35);
  c[kTzzz] += thirdIII(rz, vz, p.zz, b, d, e5, e35);
  c[kTxxy] += thirdIIJ(rx, ry, vx, vy, p.xx, p.xy, b, d, e5, e35);
  c[kTxxz] += thirdIIJ(rx, rz, vx, vz, p.xx, p.xz, b, d, e5, e35);
  c[kTxyy] += thirdIIJ(ry, rx, vy, vx, p.yy, p.xy, b, d, e5, e35);
  c[kTyyz] += thirdIIJ(ry, rz, vy, vz, p.yy, p.yz, b, d, e5, e35);
  c[kTxzz] += thirdIIJ(rz, rx, vz, vx, p.zz, p.xz, b, d, e5, e35);
  c[kTyzz] += thirdIIJ(rz, ry, vz, vy, p.zz, p.yz, b, d, e5, e35);
  c[kTxyz] += d * rx * ry * rz + e5 * (p.xy * rz + p.xz * ry + p.yz * rx) -
              e35 * (vx * ry * rz + vy * rx * rz + vz * rx * ry);
}

/// Adds the expansion's field at offset y from its centre (L2P): acceleration to second order
/// in y, potential to third.
template <bool kPotential = true>
BHVIZ_HD inline void l2p(const LocalExpansion& l, Vec3 y, Vec4& acc) {
  const float* c = l.c;
  const float xx = y.x * y.x, yy = y.y * y.y, zz = y.z * y.z;
  const float xy = 2.0f * y.x * y.y, xz = 2.0f * y.x * y.z, yz = 2.0f * y.y * y.z;
  // H y and T[y, y]
  const float hx = c[kHxx] * y.x + (c[kHxy] * y.y + c[kHxz] * y.z);
  const float hy = c[kHxy] * y.x + (c[kHyy] * y.y + c[kHyz] * y.z);
  const float hz = c[kHxz] * y.x + (c[kHyz] * y.y + c[kHzz] * y.z);
  const float tx =
      c[kTxxx] * xx + c[kTxyy] * yy + c[kTxzz] * zz + c[kTxxy] * xy + c[kTxxz] * xz + c[kTxyz] * yz;
  const float ty =
      c[kTxxy] * xx + c[kTyyy] * yy + c[kTyzz] * zz + c[kTxyy] * xy + c[kTxyz] * xz + c[kTyyz] * yz;
  const float tz =
      c[kTxxz] * xx + c[kTyyz] * yy + c[kTzzz] * zz + c[kTxyz] * xy + c[kTxzz] * xz + c[kTyzz] * yz;
  acc.x -= c[kGx] + hx + 0.5f * tx;
  acc.y -= c[kGy] + hy + 0.5f * ty;
  acc.z -= c[kGz] + hz + 0.5f * tz;
  if constexpr (kPotential) {
    const float third = 1.0f / 6.0f;
    acc.w += c[kPhi] +
             (y.x * (c[kGx] + 0.5f * hx + third * tx) + y.y * (c[kGy] + 0.5f * hy + third * ty) +
              y.z * (c[kGz] + 0.5f * hz + third * tz));
  }
}

}  // namespace bhviz::sim
