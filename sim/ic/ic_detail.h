#pragma once
// Helpers shared by the initial-condition generators (private to sim/ic). Everything here is
// computed in double; only the final particle state is rounded to float.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/ic/initial_conditions.h"
#include "sim/params.h"
#include "sim/particles.h"
#include "sim/rng.h"

namespace bhviz::sim::detail {

inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kTwoPi = 2.0 * kPi;

struct Vec3d {
  double x = 0.0, y = 0.0, z = 0.0;
};

inline Vec3d operator+(Vec3d a, Vec3d b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline Vec3d operator*(double s, Vec3d a) { return {s * a.x, s * a.y, s * a.z}; }

/// Uniform in the open interval (0, 1): safe for log, atanh(2u − 1) or a negative power.
/// Zero is redrawn rather than nudged, since u + tiny could round up to 1.
inline double openUniform(Rng& rng) {
  double u = rng.uniform();
  while (u <= 0.0) u = rng.uniform();
  return u;
}

/// Isotropic unit vector (uniform cos θ and φ: Archimedes' hat-box theorem).
inline Vec3d randomUnitVector(Rng& rng) {
  const double cz = rng.uniform(-1.0, 1.0);
  const double phi = kTwoPi * rng.uniform();
  const double s = std::sqrt(std::fmax(0.0, 1.0 - cz * cz));
  return {s * std::cos(phi), s * std::sin(phi), cz};
}

/// Three independent standard normals (Rng::normal draws one value per call).
inline Vec3d gaussianVector(Rng& rng) {
  const double x = rng.normal();
  const double y = rng.normal();
  const double z = rng.normal();
  return {x, y, z};
}

/// Per-particle random streams: a generator writing particle i of galaxy g uses stream
/// (g << 48) + i, so the two galaxies of a merger never share a stream and the result does
/// not depend on how the loop is split between threads.
inline std::uint64_t particleStream(unsigned galaxy, std::size_t i) {
  return (static_cast<std::uint64_t>(galaxy) << 48) + static_cast<std::uint64_t>(i);
}

inline void setParticle(Particles& p, std::size_t i, Vec3d x, Vec3d v, double mass,
                        std::uint8_t tag) {
  p.posMass[i] = {static_cast<float>(x.x), static_cast<float>(x.y), static_cast<float>(x.z),
                  static_cast<float>(mass)};
  p.vel[i] = {static_cast<float>(v.x), static_cast<float>(v.y), static_cast<float>(v.z), 0.0f};
  p.tag[i] = tag;
}

struct CentreOfMass {
  double mass = 0.0;  ///< [mass]
  Vec3d pos;          ///< [length]
  Vec3d vel;          ///< [length/time]
};

/// Serial on purpose: a parallel reduction would make the last bits depend on the thread count.
inline CentreOfMass centreOfMass(const Particles& p, std::size_t begin, std::size_t end) {
  CentreOfMass c;
  for (std::size_t i = begin; i < end; ++i) {
    const double m = p.posMass[i].w;
    c.mass += m;
    c.pos = c.pos + m * Vec3d{p.posMass[i].x, p.posMass[i].y, p.posMass[i].z};
    c.vel = c.vel + m * Vec3d{p.vel[i].x, p.vel[i].y, p.vel[i].z};
  }
  if (c.mass > 0.0) {
    c.pos = (1.0 / c.mass) * c.pos;
    c.vel = (1.0 / c.mass) * c.vel;
  }
  return c;
}

/// Moves particles [begin, end) by (dx, dv), in double before rounding to float.
inline void shift(Particles& p, std::size_t begin, std::size_t end, Vec3d dx, Vec3d dv) {
  for (std::size_t i = begin; i < end; ++i) {
    Vec4& x = p.posMass[i];
    Vec4& v = p.vel[i];
    x.x = static_cast<float>(x.x + dx.x);
    x.y = static_cast<float>(x.y + dx.y);
    x.z = static_cast<float>(x.z + dx.z);
    v.x = static_cast<float>(v.x + dv.x);
    v.y = static_cast<float>(v.y + dv.y);
    v.z = static_cast<float>(v.z + dv.z);
  }
}

/// Puts the centre of mass of all particles at the origin, at rest.
inline void recentre(Particles& p) {
  const CentreOfMass c = centreOfMass(p, 0, p.size());
  shift(p, 0, p.size(), -1.0 * c.pos, -1.0 * c.vel);
}

/// The bookkeeping every generator ends with: ids in the final order, no force yet, bin 0.
inline void finalise(Particles& p) {
  for (std::size_t i = 0; i < p.size(); ++i) {
    p.id[i] = static_cast<std::uint32_t>(i);
    p.accPot[i] = Vec4{};
    p.bin[i] = 0;
  }
}

/// An isotropic spherical model of n equal masses: per particle (own random stream) a radius
/// from `radius(rng)`, a uniform direction, a speed from `speed(rng, r)`, a uniform direction;
/// then centred on the centre of mass at rest, ids and bins set.
template <typename Radius, typename Speed>
Particles isotropicSphere(std::size_t n, std::uint64_t seed, double totalMass, Radius&& radius,
                          Speed&& speed) {
  Particles p;
  p.resize(n);
  const double m = totalMass / static_cast<double>(n);
  const std::uint8_t tag = makeTag(Component::Sphere, 0);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    Rng rng(seed, particleStream(0, i));
    const double r = radius(rng);
    const Vec3d x = r * randomUnitVector(rng);
    // Two draws in one expression would be unsequenced (g++ and clang draw them in opposite
    // orders): the direction first, in a statement of its own, keeps every compiler's output.
    const Vec3d direction = randomUnitVector(rng);
    const Vec3d v = speed(rng, r) * direction;
    setParticle(p, i, x, v, m, tag);
  }
  recentre(p);
  finalise(p);
  return p;
}

inline void requirePositive(double value, const char* name) {
  if (!(value > 0.0) || !std::isfinite(value)) {
    throw InvalidParameter(std::string(name) + " must be positive and finite (got " +
                           std::to_string(value) + ")");
  }
}

// ---- Hernquist profile, M(<r) = M r²/(r + a)² ------------------------------------------

/// M(<r)/M of an untruncated Hernquist sphere.
inline double hernquistMassFraction(double r, double a) {
  const double s = r / (r + a);
  return s * s;
}

/// The radius enclosing mass fraction m of an untruncated Hernquist sphere (0 ≤ m < 1).
inline double hernquistRadius(double m, double a) {
  const double s = std::sqrt(m);
  return a * s / (1.0 - s);
}

/// Hernquist density of total (untruncated) mass mInf: M a / (2π r (r + a)³).
inline double hernquistDensity(double r, double mInf, double a) {
  const double ra = r + a;
  return mInf * a / (kTwoPi * r * ra * ra * ra);
}

// ---- Tables on a logarithmic radius grid --------------------------------------------------

/// Values of a smooth function of radius at log-spaced nodes r_k = r0·exp(k·h), read back by
/// linear interpolation in ln r: O(1) per lookup, which keeps the generators O(N).
class LogTable {
 public:
  LogTable() = default;
  /// `perDecade` nodes per factor of ten between rMin and rMax (both > 0, rMin < rMax).
  LogTable(double rMin, double rMax, int perDecade) {
    const double span = std::log(rMax / rMin);
    const int intervals =
        std::max(1, static_cast<int>(std::ceil(span / std::log(10.0) * perDecade)));
    m_lnR0 = std::log(rMin);
    m_h = span / intervals;
    m_values.assign(static_cast<std::size_t>(intervals) + 1, 0.0);
  }

  std::size_t size() const { return m_values.size(); }
  /// Radius of node k [length]; the last node is exactly rMax up to rounding.
  double radius(std::size_t k) const { return std::exp(m_lnR0 + m_h * static_cast<double>(k)); }
  double lnStep() const { return m_h; }
  double& operator[](std::size_t k) { return m_values[k]; }
  double operator[](std::size_t k) const { return m_values[k]; }

  /// Linear in ln r; clamped to the end values outside the grid.
  double operator()(double r) const {
    const double t = (std::log(r) - m_lnR0) / m_h;
    if (!(t > 0.0)) return m_values.front();
    const double last = static_cast<double>(m_values.size() - 1);
    if (t >= last) return m_values.back();
    const std::size_t k = static_cast<std::size_t>(t);
    const double f = t - static_cast<double>(k);
    return (1.0 - f) * m_values[k] + f * m_values[k + 1];
  }

  /// Index of the node at or below r (0 below the grid), for piecewise-constant bounds.
  std::size_t floorIndex(double r) const {
    const double t = (std::log(r) - m_lnR0) / m_h;
    if (!(t > 0.0)) return 0;
    const std::size_t k = static_cast<std::size_t>(t);
    return std::min(k, m_values.size() - 1);
  }

 private:
  double m_lnR0 = 0.0;
  double m_h = 1.0;
  std::vector<double> m_values;
};

// ---- Rotations -----------------------------------------------------------------------------

struct Rotation {
  double m[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  Vec3d apply(Vec3d v) const {
    return {m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z,
            m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
            m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z};
  }
};

/// Right-handed rotation by `angle` radians about coordinate axis `axis` (0 x, 1 y, 2 z): the
/// next axis turns towards the one after it (about x, +y towards +z, so +z tilts towards −y).
inline Rotation rotationAbout(int axis, double angle) {
  const double c = std::cos(angle), s = std::sin(angle);
  const int a = (axis + 1) % 3, b = (axis + 2) % 3;
  Rotation r;
  r.m[a][a] = c;
  r.m[a][b] = -s;
  r.m[b][a] = s;
  r.m[b][b] = c;
  return r;
}

/// Rotates positions and velocities of particles [begin, end) about the origin.
inline void rotate(Particles& p, std::size_t begin, std::size_t end, const Rotation& r) {
  for (std::size_t i = begin; i < end; ++i) {
    const Vec3d x = r.apply({p.posMass[i].x, p.posMass[i].y, p.posMass[i].z});
    const Vec3d v = r.apply({p.vel[i].x, p.vel[i].y, p.vel[i].z});
    p.posMass[i].x = static_cast<float>(x.x);
    p.posMass[i].y = static_cast<float>(x.y);
    p.posMass[i].z = static_cast<float>(x.z);
    p.vel[i].x = static_cast<float>(v.x);
    p.vel[i].y = static_cast<float>(v.y);
    p.vel[i].z = static_cast<float>(v.z);
  }
}

/// The rotation that tilts a disk by `inclination` degrees about the axis at azimuth `node`
/// degrees in the x–y plane. node = 0 is a plain rotation about x (and is exactly that).
inline Rotation tiltRotation(double inclination, double node) {
  const Rotation aboutX = rotationAbout(0, inclination * kPi / 180.0);
  if (node == 0.0) return aboutX;
  // Rz(node) · Rx(inclination) · Rz(−node): the tilt axis turned to the node's azimuth.
  const Rotation toNode = rotationAbout(2, node * kPi / 180.0);
  const Rotation fromNode = rotationAbout(2, -node * kPi / 180.0);
  Rotation r;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      double sum = 0.0;
      for (int k = 0; k < 3; ++k) {
        for (int l = 0; l < 3; ++l) sum += toNode.m[i][k] * aboutX.m[k][l] * fromNode.m[l][j];
      }
      r.m[i][j] = sum;
    }
  }
  return r;
}

/// Tilts particles [begin, end) by tiltRotation(inclination, node).
inline void tilt(Particles& p, std::size_t begin, std::size_t end, double inclination,
                 double node) {
  rotate(p, begin, end, tiltRotation(inclination, node));
}

/// A counter-rotating disk: the velocities of the disk particles of the galaxy [begin, end)
/// reversed, so that the disk turns the other way about its axis (the same speeds and
/// dispersions; the rest of the velocity distribution is symmetric), then the galaxy's
/// centre-of-mass velocity removed again (the disk's momentum changed sign). Bulge and halo
/// keep their velocities but for that shift.
inline void reverseDisk(Particles& p, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) {
    if (tagComponent(p.tag[i]) != Component::Disk) continue;
    p.vel[i].x = -p.vel[i].x;
    p.vel[i].y = -p.vel[i].y;
    p.vel[i].z = -p.vel[i].z;
  }
  shift(p, begin, end, Vec3d{}, -1.0 * centreOfMass(p, begin, end).vel);
}

// ---- The Kepler orbit of a galaxy pair --------------------------------------------------------

struct RelativeOrbit {
  Vec3d pos;  ///< secondary − primary [length]
  Vec3d vel;  ///< [length/time]
};

/// The true anomaly where the pair starts: before pericentre (≤ 0), at o.separation, so that
/// the galaxies approach. A circle (e = 0) has no pericentre to approach: it starts at θ = 0.
inline double keplerStartAnomaly(const OrbitParams& o) {
  const double e = o.eccentricity;
  const double p = o.pericentre * (1.0 + e);
  const double cosTheta =
      e > 0.0 ? std::fmax(-1.0, std::fmin(1.0, (p / o.separation - 1.0) / e)) : 1.0;
  return -std::acos(cosTheta);
}

/// The conic r = p/(1 + e cos θ), p = r_peri(1 + e), of total mass `totalMass` in the x–y plane,
/// run counter-clockwise: its point at true anomaly θ, given the radius there (the caller's
/// o.separation at the start, exactly), and the velocity there (vis-viva).
inline RelativeOrbit keplerAt(double totalMass, const OrbitParams& o, double theta, double radius) {
  const double e = o.eccentricity;
  const double p = o.pericentre * (1.0 + e);
  const double c = std::cos(theta), s = std::sin(theta);
  const double vScale = std::sqrt(totalMass / p);
  const double vR = vScale * e * s, vTheta = vScale * (1.0 + e * c);
  RelativeOrbit orbit;
  orbit.pos = {radius * c, radius * s, 0.0};
  orbit.vel = {vR * c - vTheta * s, vR * s + vTheta * c, 0.0};
  return orbit;
}

/// The conic's radius at true anomaly θ [length].
inline double keplerRadius(const OrbitParams& o, double theta) {
  return o.pericentre * (1.0 + o.eccentricity) / (1.0 + o.eccentricity * std::cos(theta));
}

}  // namespace bhviz::sim::detail
