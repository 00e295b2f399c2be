// The merger builder's preview (sim/ic/merger_preview.h): the conic and tilts of
// makeGalaxyPair, evaluated without building a particle.

#include "sim/ic/merger_preview.h"

#include <cmath>
#include <string>

#include "sim/ic/ic_detail.h"

namespace bhviz::sim {

namespace {

using detail::Vec3d;

PreviewPoint point(Vec3d v) { return {v.x, v.y, v.z}; }

double galaxyMass(const GalaxyParams& g) { return g.diskMass + g.bulgeMass + g.haloMass; }

/// The true anomaly the path ends at: back out to the starting separation, or a whole turn when
/// the start is at pericentre of a bound orbit, or half-way to the asymptote of an open one.
double endAnomaly(const OrbitParams& o, double start) {
  if (start < 0.0) return -start;
  if (o.eccentricity < 1.0) return 2.0 * detail::kPi;
  return 0.5 * std::acos(-1.0 / o.eccentricity);
}

DiskPreview diskPreview(const GalaxySpec& g, PreviewPoint centre, int ringPoints,
                        double ringScale) {
  const detail::Rotation r = detail::tiltRotation(g.inclination, g.node);
  DiskPreview d;
  d.centre = centre;
  d.axis = point(r.apply({0.0, 0.0, g.spin < 0 ? -1.0 : 1.0}));
  d.radius = ringScale * g.params.diskScaleLength;
  d.ring.reserve(static_cast<std::size_t>(ringPoints) + 1);
  for (int k = 0; k <= ringPoints; ++k) {
    const double phi = detail::kTwoPi * static_cast<double>(k % ringPoints) / ringPoints;
    const Vec3d v = r.apply({d.radius * std::cos(phi), d.radius * std::sin(phi), 0.0});
    d.ring.push_back({centre.x + v.x, centre.y + v.y, centre.z + v.z});
  }
  return d;
}

void requirePreviewable(const ScenarioSpec& spec, int pathPoints, int ringPoints) {
  if (spec.model != ScenarioModel::Merger || spec.galaxies.size() != 2) {
    throw InvalidParameter("a merger preview needs a merger scenario of 2 galaxies");
  }
  if (pathPoints < 2 || ringPoints < 3) {
    throw InvalidParameter("a merger preview needs at least 2 path and 3 ring points");
  }
  const OrbitParams& o = spec.orbit;
  if (!(o.pericentre > 0.0) || !std::isfinite(o.pericentre) || !(o.eccentricity >= 0.0) ||
      !std::isfinite(o.eccentricity) || !(o.separation >= o.pericentre) ||
      !std::isfinite(o.separation)) {
    throw InvalidParameter(
        "the merger's orbit has no preview: pericentre > 0, eccentricity >= 0 "
        "and separation >= pericentre are needed");
  }
  for (const GalaxySpec& g : spec.galaxies) {
    if (!(galaxyMass(g.params) > 0.0) || !std::isfinite(galaxyMass(g.params))) {
      throw InvalidParameter("a galaxy of the merger has no mass to preview");
    }
  }
}

}  // namespace

MergerPreview mergerPreview(const ScenarioSpec& spec, int pathPoints, int ringPoints,
                            double ringScale) {
  requirePreviewable(spec, pathPoints, ringPoints);
  const OrbitParams& o = spec.orbit;
  MergerPreview v;
  v.mass = {galaxyMass(spec.galaxies[0].params), galaxyMass(spec.galaxies[1].params)};
  const double total = v.mass[0] + v.mass[1];
  // makeGalaxyPair: the primary at −m2/M of the relative vector, the secondary at +m1/M.
  const double f[2] = {-v.mass[1] / total, v.mass[0] / total};

  const double start = detail::keplerStartAnomaly(o);
  const detail::RelativeOrbit rel = detail::keplerAt(total, o, start, o.separation);
  v.relativePosition = point(rel.pos);
  v.relativeVelocity = point(rel.vel);

  const double end = endAnomaly(o, start);
  for (int g = 0; g < 2; ++g) v.paths[g].reserve(static_cast<std::size_t>(pathPoints));
  for (int k = 0; k < pathPoints; ++k) {
    const double theta = start + (end - start) * k / (pathPoints - 1);
    // The first point is the start exactly (its radius the separation, as makeGalaxyPair has it).
    const double r = k == 0 ? o.separation : detail::keplerRadius(o, theta);
    const Vec3d x{r * std::cos(theta), r * std::sin(theta), 0.0};
    for (int g = 0; g < 2; ++g) v.paths[g].push_back(point(f[g] * x));
  }
  for (int g = 0; g < 2; ++g) {
    v.disks[g] = diskPreview(spec.galaxies[g], point(f[g] * rel.pos), ringPoints, ringScale);
  }
  return v;
}

}  // namespace bhviz::sim
