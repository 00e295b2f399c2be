#pragma once
// Where a galaxy is: the centre of its densest part, found by a shrinking sphere (Power et al.
// 2003: the centre of mass of the particles within a sphere, the sphere shrunk step by step
// around it; ours starts at the sphere holding 90 % and shrinks by 20 % a step). Robust against
// tails and the other galaxy's stars, which pull a plain centre of mass off. The camera follows it
// (app/scene/camera_follow.h); the tidal-tails lesson measures distances from it
// (app/core/lesson_measure.h).

#include <array>
#include <cstddef>
#include <optional>
#include <vector>

#include "sim/particles.h"

namespace bhviz::app {

using Point3 = std::array<double, 3>;

/// The mass-weighted centre of p's particles at `members` (indices); none when they have no mass.
std::optional<Point3> centreOfMass(const sim::Particles& p,
                                   const std::vector<std::size_t>& members);

/// The shrinking-sphere centre of the particles at `members`; none when they have no mass.
std::optional<Point3> densestCentre(const sim::Particles& p,
                                    const std::vector<std::size_t>& members);

/// Indices of galaxy `galaxy`'s stars (disk, bulge; a sphere's particles count as stars), every
/// `stride`-th particle looked at.
std::vector<std::size_t> starsOfGalaxy(const sim::Particles& p, unsigned galaxy,
                                       std::size_t stride = 1);

}  // namespace bhviz::app
