#include "app/core/galaxy_centre.h"

#include <algorithm>
#include <cmath>

namespace bhviz::app {

namespace {

constexpr double kShrink = 0.85;            // the sphere's radius, step after step
constexpr std::size_t kCoreParticles = 64;  // ... until this few (or 1 %) are left inside

double distance2(const sim::Particles& p, std::size_t i, const Point3& c) {
  const double dx = p.posMass[i].x - c[0], dy = p.posMass[i].y - c[1], dz = p.posMass[i].z - c[2];
  return dx * dx + dy * dy + dz * dz;
}

/// The centre of mass of `members` within `radius` of `c`, and how many are inside.
std::optional<Point3> centreWithin(const sim::Particles& p, const std::vector<std::size_t>& members,
                                   const Point3& c, double radius, std::size_t& inside) {
  Point3 sum{0.0, 0.0, 0.0};
  double mass = 0.0;
  inside = 0;
  for (std::size_t i : members) {
    if (distance2(p, i, c) > radius * radius) continue;
    const double m = p.posMass[i].w;
    sum[0] += m * p.posMass[i].x;
    sum[1] += m * p.posMass[i].y;
    sum[2] += m * p.posMass[i].z;
    mass += m;
    ++inside;
  }
  if (!(mass > 0.0)) return std::nullopt;
  const Point3 out{sum[0] / mass, sum[1] / mass, sum[2] / mass};
  if (!std::isfinite(out[0]) || !std::isfinite(out[1]) || !std::isfinite(out[2]))
    return std::nullopt;
  return out;
}

}  // namespace

std::optional<Point3> centreOfMass(const sim::Particles& p,
                                   const std::vector<std::size_t>& members) {
  std::size_t inside = 0;
  return centreWithin(p, members, {0.0, 0.0, 0.0}, HUGE_VAL, inside);
}

std::optional<Point3> densestCentre(const sim::Particles& p,
                                    const std::vector<std::size_t>& members) {
  std::optional<Point3> centre = centreOfMass(p, members);
  if (!centre) return std::nullopt;
  double radius = 0.0;
  for (std::size_t i : members) radius = std::max(radius, distance2(p, i, *centre));
  radius = std::sqrt(radius);
  std::size_t inside = members.size();
  const std::size_t core = std::max(kCoreParticles, members.size() / 100);
  while (inside > core && radius > 0.0) {
    radius *= kShrink;
    std::size_t n = 0;
    const std::optional<Point3> next = centreWithin(p, members, *centre, radius, n);
    if (!next || n < core) break;
    centre = next;
    inside = n;
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
