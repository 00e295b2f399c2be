#include <algorithm>
#include <cmath>

#include "sim/cpu/cpu_stages.h"

namespace bhviz::sim::cpu {

namespace {

// Sums in double: the CPU backend is the oracle the GPU's fp32 moments are compared with.
struct MomentSum {
  double m = 0.0, x = 0.0, y = 0.0, z = 0.0;
  double xx = 0.0, yy = 0.0, zz = 0.0, xy = 0.0, xz = 0.0, yz = 0.0;
};

void leafMoments(Tree& t, std::uint32_t c, const std::vector<Vec4>& posMass) {
  const std::uint32_t begin = t.first[c], end = begin + t.count[c];
  MomentSum s;
  Box box;
  for (std::uint32_t i = begin; i < end; ++i) {
    const Vec4 p = posMass[i];
    s.m += p.w;
    s.x += double(p.w) * p.x;
    s.y += double(p.w) * p.y;
    s.z += double(p.w) * p.z;
    grow(box, xyz(p));
  }
  const double cx = s.x / s.m, cy = s.y / s.m, cz = s.z / s.m;
  double b2max = 0.0;
  for (std::uint32_t i = begin; i < end; ++i) {
    const Vec4 p = posMass[i];
    const double dx = p.x - cx, dy = p.y - cy, dz = p.z - cz;
    s.xx += p.w * dx * dx;
    s.yy += p.w * dy * dy;
    s.zz += p.w * dz * dz;
    s.xy += p.w * dx * dy;
    s.xz += p.w * dx * dz;
    s.yz += p.w * dy * dz;
    b2max = std::max(b2max, dx * dx + dy * dy + dz * dz);
  }
  t.comMass[c] = {float(cx), float(cy), float(cz), float(s.m)};
  t.quad[c] = {float(s.xx), float(s.yy), float(s.zz), float(s.xy), float(s.xz), float(s.yz)};
  t.box[c] = box;
  t.bmax[c] = float(std::sqrt(b2max));
}

void internalMoments(Tree& t, std::uint32_t c) {
  CellMoments parts[8];
  const std::uint32_t k0 = t.child[c], n = t.childCount[c];
  for (std::uint32_t k = 0; k < n; ++k) {
    parts[k] = {t.comMass[k0 + k], t.quad[k0 + k], t.box[k0 + k], t.bmax[k0 + k]};
  }
  const CellMoments m = combineMoments(parts, n);
  t.comMass[c] = m.comMass;
  t.quad[c] = m.quad;
  t.box[c] = m.box;
  t.bmax[c] = m.bmax;
}

}  // namespace

// Parallel-axis theorem: each part's second moments moved from its COM to the whole's.
CellMoments combineMoments(const CellMoments* parts, std::size_t count) {
  MomentSum s;
  Box box;
  for (std::size_t k = 0; k < count; ++k) {
    const Vec4 cm = parts[k].comMass;
    s.m += cm.w;
    s.x += double(cm.w) * cm.x;
    s.y += double(cm.w) * cm.y;
    s.z += double(cm.w) * cm.z;
    grow(box, parts[k].box);
  }
  const double cx = s.x / s.m, cy = s.y / s.m, cz = s.z / s.m;
  const Vec3 com{float(cx), float(cy), float(cz)};
  float bmax = 0.0f;
  for (std::size_t k = 0; k < count; ++k) {
    const Vec4 cm = parts[k].comMass;
    const Quadrupole& q = parts[k].quad;
    const double dx = cm.x - cx, dy = cm.y - cy, dz = cm.z - cz;
    s.xx += q.xx + cm.w * dx * dx;
    s.yy += q.yy + cm.w * dy * dy;
    s.zz += q.zz + cm.w * dz * dz;
    s.xy += q.xy + cm.w * dx * dy;
    s.xz += q.xz + cm.w * dx * dz;
    s.yz += q.yz + cm.w * dy * dz;
    bmax = fmaxf(bmax, float(std::sqrt(dx * dx + dy * dy + dz * dz)) + parts[k].bmax);
  }
  CellMoments m;
  m.comMass = {com.x, com.y, com.z, float(s.m)};
  m.quad = {float(s.xx), float(s.yy), float(s.zz), float(s.xy), float(s.xz), float(s.yz)};
  m.box = box;
  // Two upper bounds on the farthest particle; the smaller is the better one.
  m.bmax = fminf(bmax, farthestCornerDistance(com, box));
  return m;
}

void computeMoments(Tree& t, const std::vector<Vec4>& posMass, const MacSetup& mac,
                    const OrbCutsView* domains) {
  const bool parts = domains != nullptr && mac.code == MacCode::Multipole;
  for (int level = t.depth() - 1; level >= 0; --level) {
    const std::int64_t begin = t.levelBegin[level], end = t.levelBegin[level + 1];
#pragma omp parallel for schedule(dynamic, 64)
    for (std::int64_t c = begin; c < end; ++c) {
      const auto cell = static_cast<std::uint32_t>(c);
      if (t.isLeaf(cell)) {
        leafMoments(t, cell, posMass);
      } else {
        internalMoments(t, cell);
      }
      const Quadrupole& q = t.quad[cell];
      const CellShape shape{t.comMass[cell].w,    t.side(cell), t.box[cell],
                            xyz(t.comMass[cell]), t.bmax[cell], q.xx + q.yy + q.zz};
      const int meeting =
          parts ? orbDomainsMeetingCell(*domains, t.frame, t.box[cell], t.level[cell]) : 1;
      t.opening[cell] =
          openingValue(mac.code, mac.theta, paramOfParts(mac.code, mac.param, 1, meeting), shape);
    }
  }
}

}  // namespace bhviz::sim::cpu
