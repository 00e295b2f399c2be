// Two disk galaxies on a parabolic (zero-energy) Keplerian orbit of their total masses.
//
// The secondary is the primary scaled in mass by q = massRatio and in every length by q^{1/3}:
// the same mean density, hence the same dynamical times, so one time step suits both, and
// velocities scale as q^{1/3}. Particles are split by mass share so that the particle masses
// of the two galaxies match.

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/ic/ic_detail.h"
#include "sim/ic/initial_conditions.h"

namespace bhviz::sim {

namespace {

using detail::Vec3d;

GalaxyParams scaledGalaxy(const GalaxyParams& g, double massRatio) {
  const double lengthScale = std::cbrt(massRatio);
  GalaxyParams s = g;
  s.diskMass *= massRatio;
  s.bulgeMass *= massRatio;
  s.haloMass *= massRatio;
  s.diskScaleLength *= lengthScale;
  s.diskScaleHeight *= lengthScale;
  s.bulgeScale *= lengthScale;
  s.haloScale *= lengthScale;
  s.haloCutoff *= lengthScale;
  return s;
}

void validateMerger(std::size_t n, const MergerParams& m) {
  if (!(m.massRatio > 0.0 && m.massRatio <= 1.0)) {
    throw InvalidParameter("merger massRatio must be in (0, 1] (got " +
                           std::to_string(m.massRatio) + ")");
  }
  detail::requirePositive(m.pericentre, "merger pericentre");
  if (!(m.separation >= m.pericentre) || !std::isfinite(m.separation)) {
    throw InvalidParameter("merger separation must be finite and >= the pericentre");
  }
  if (!std::isfinite(m.inclination1) || !std::isfinite(m.inclination2)) {
    throw InvalidParameter("merger inclinations must be finite");
  }
  if (n < 6) {
    throw InvalidParameter("a merger needs at least 6 particles (got " + std::to_string(n) + ")");
  }
}

struct RelativeOrbit {
  Vec3d pos;  ///< secondary − primary [length]
  Vec3d vel;  ///< [length/time]
};

/// A parabola r = p/(1 + cos θ), p = 2 r_peri, in the x–y plane, run counter-clockwise; the
/// start is at true anomaly θ < 0, i.e. before pericentre, so the galaxies approach.
RelativeOrbit parabolicOrbit(double totalMass, double pericentre, double separation) {
  const double p = 2.0 * pericentre;
  const double cosTheta = std::fmax(-1.0, std::fmin(1.0, p / separation - 1.0));
  const double theta = -std::acos(cosTheta);
  const double c = std::cos(theta), s = std::sin(theta);
  const double vScale = std::sqrt(totalMass / p);
  const double vR = vScale * s, vTheta = vScale * (1.0 + c);  // |v|² = 2GM/separation
  RelativeOrbit o;
  o.pos = {separation * c, separation * s, 0.0};
  o.vel = {vR * c - vTheta * s, vR * s + vTheta * c, 0.0};
  return o;
}

double degrees(double d) { return d * detail::kPi / 180.0; }

}  // namespace

Particles makeMerger(std::size_t n, std::uint64_t seed, const MergerParams& m) {
  validateMerger(n, m);
  const double q = m.massRatio;
  // Split by mass share; each galaxy needs 3 particles (validateMerger ensured n >= 6).
  const auto share = static_cast<std::size_t>(std::llround(static_cast<double>(n) / (1.0 + q)));
  const std::size_t n1 = std::min(std::max<std::size_t>(share, 3), n - 3);

  // The galaxy index picks disjoint random streams, so both may use the caller's seed.
  const Particles primary = makeGalaxy(n1, seed, m.galaxy, 0);
  const Particles secondary = makeGalaxy(n - n1, seed, scaledGalaxy(m.galaxy, q), 1);

  Particles p;
  p.resize(n);
  const std::size_t split = primary.size();
  std::copy(primary.posMass.begin(), primary.posMass.end(), p.posMass.begin());
  std::copy(primary.vel.begin(), primary.vel.end(), p.vel.begin());
  std::copy(primary.tag.begin(), primary.tag.end(), p.tag.begin());
  std::copy(secondary.posMass.begin(), secondary.posMass.end(), p.posMass.begin() + split);
  std::copy(secondary.vel.begin(), secondary.vel.end(), p.vel.begin() + split);
  std::copy(secondary.tag.begin(), secondary.tag.end(), p.tag.begin() + split);

  // Tilt each disk about the x axis, then put the pair on its orbit about their common centre.
  detail::rotate(p, 0, split, detail::rotationAboutX(degrees(m.inclination1)));
  detail::rotate(p, split, n, detail::rotationAboutX(degrees(m.inclination2)));
  const double m1 = detail::centreOfMass(p, 0, split).mass;
  const double m2 = detail::centreOfMass(p, split, n).mass;
  const RelativeOrbit orbit = parabolicOrbit(m1 + m2, m.pericentre, m.separation);
  const double f1 = -m2 / (m1 + m2), f2 = m1 / (m1 + m2);
  detail::shift(p, 0, split, f1 * orbit.pos, f1 * orbit.vel);
  detail::shift(p, split, n, f2 * orbit.pos, f2 * orbit.vel);

  detail::recentre(p);
  detail::finalise(p);
  return p;
}

}  // namespace bhviz::sim
