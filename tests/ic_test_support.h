#pragma once
// What the initial conditions' tests share (test_initial_conditions, test_uniform_cube): double
// vectors, the particles' positions and velocities as them, mass-weighted moments, and bitwise
// equality of two sets of particles.

#include <cmath>
#include <cstring>

#include "sim/particles.h"

namespace bhviz::sim::ictest {

struct Vec3d {
  double x = 0.0, y = 0.0, z = 0.0;
};

inline double norm(Vec3d v) { return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z); }
inline Vec3d position(const Particles& p, std::size_t i) {
  return {p.posMass[i].x, p.posMass[i].y, p.posMass[i].z};
}
inline Vec3d velocity(const Particles& p, std::size_t i) {
  return {p.vel[i].x, p.vel[i].y, p.vel[i].z};
}

/// Mass, mass-weighted mean position and velocity of the particles that `select` accepts.
struct Moments {
  double mass = 0.0;
  Vec3d pos, vel;
};
template <class Select>
Moments moments(const Particles& p, Select select) {
  Moments m;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (!select(i)) continue;
    const double w = p.posMass[i].w;
    m.mass += w;
    m.pos = {m.pos.x + w * p.posMass[i].x, m.pos.y + w * p.posMass[i].y,
             m.pos.z + w * p.posMass[i].z};
    m.vel = {m.vel.x + w * p.vel[i].x, m.vel.y + w * p.vel[i].y, m.vel.z + w * p.vel[i].z};
  }
  m.pos = {m.pos.x / m.mass, m.pos.y / m.mass, m.pos.z / m.mass};
  m.vel = {m.vel.x / m.mass, m.vel.y / m.mass, m.vel.z / m.mass};
  return m;
}
inline Moments moments(const Particles& p) {
  return moments(p, [](std::size_t) { return true; });
}

/// The same positions, velocities and tags, bit for bit.
inline bool identical(const Particles& a, const Particles& b) {
  return a.size() == b.size() &&
         std::memcmp(a.posMass.data(), b.posMass.data(), a.size() * sizeof(Vec4)) == 0 &&
         std::memcmp(a.vel.data(), b.vel.data(), a.size() * sizeof(Vec4)) == 0 && a.tag == b.tag;
}

}  // namespace bhviz::sim::ictest
