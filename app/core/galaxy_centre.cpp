#include "app/core/galaxy_centre.h"

#include <algorithm>
#include <cmath>

namespace bhviz::app {

namespace {

constexpr double kShrink = 0.8;             // the sphere's radius, step after step
constexpr double kStartShare = 0.9;         // the first sphere holds this share of them
constexpr std::size_t kCoreParticles = 64;  // ... until this few (or 1 %) are left inside

double distance2(const sim::Particles& p, std::size_t i, const Point3& c) {
  const double dx = p.posMass[i].x - c[0], dy = p.posMass[i].y - c[1], dz = p.posMass[i].z - c[2];
  return dx * dx + dy * dy + dz * dz;
}

}  // namespace

std::optional<Point3> centreOfMass(const sim::Particles& p,
                                   const std::vector<std::size_t>& members) {
  Point3 sum{0.0, 0.0, 0.0};
  double mass = 0.0;
  for (std::size_t i : members) {
    const double m = p.posMass[i].w;
    sum[0] += m * p.posMass[i].x;
    sum[1] += m * p.posMass[i].y;
    sum[2] += m * p.posMass[i].z;
    mass += m;
  }
  if (!(mass > 0.0)) return std::nullopt;
  const Point3 c{sum[0] / mass, sum[1] / mass, sum[2] / mass};
  if (!std::isfinite(c[0]) || !std::isfinite(c[1]) || !std::isfinite(c[2])) return std::nullopt;
  return c;
}

std::optional<Point3> densestCentre(const sim::Particles& p,
                                    const std::vector<std::size_t>& members) {
  std::optional<Point3> centre = centreOfMass(p, members);
  if (!centre) return std::nullopt;
  // The first sphere leaves the farthest out: stray stars only slow the shrinking down.
  std::vector<double> d2;
  d2.reserve(members.size());
  for (std::size_t i : members) d2.push_back(distance2(p, i, *centre));
  const auto k = static_cast<std::ptrdiff_t>(kStartShare * double(d2.size() - 1));
  std::nth_element(d2.begin(), d2.begin() + k, d2.end());
  double radius2 = d2[static_cast<std::size_t>(k)];
  const std::size_t core = std::max(kCoreParticles, members.size() / 100);
  // Each sphere lies mostly inside the last one: only the last one's particles are looked at.
  std::vector<std::size_t> inside = members, next;
  while (inside.size() > core && radius2 > 0.0) {
    radius2 *= kShrink * kShrink;
    next.clear();
    for (std::size_t i : inside) {
      if (distance2(p, i, *centre) <= radius2) next.push_back(i);
    }
    if (next.size() < core) break;
    const std::optional<Point3> moved = centreOfMass(p, next);
    if (!moved) break;
    centre = moved;
    inside.swap(next);
  }
  return centre;
}

std::vector<std::size_t> starsOfGalaxy(const sim::Particles& p, unsigned galaxy,
                                       std::size_t stride) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < p.size(); i += std::max<std::size_t>(stride, 1)) {
    if (sim::tagGalaxy(p.tag[i]) != galaxy) continue;
    const sim::Component c = sim::tagComponent(p.tag[i]);
    if (c == sim::Component::Disk || c == sim::Component::Bulge || c == sim::Component::Sphere) {
      out.push_back(i);
    }
  }
  return out;
}

}  // namespace bhviz::app
