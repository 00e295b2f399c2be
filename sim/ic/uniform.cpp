// The uniform cube of Ryoanji's benchmark (github.com/exafmm/ryoanji, Keller et al. 2023): its
// generator, makeCubeBodies in ryoanji/test/nbody/dataset.hpp, draws every coordinate uniformly
// in [−3, 3) and every mass uniformly in [0, 1/N) (expected total ½), and leaves the bodies at
// rest, since its demo measures one force evaluation. Here the masses are scaled so that their
// total is exactly `mass`: the relative force error, what the comparison measures, does not
// depend on that scale.
//
// Two differences from Ryoanji, both without effect on a force benchmark at N ≫ 1: it pins
// body 0 to the corner (−3, −3, −3) and body N−1 to (3, 3, 3), so that its fixed tree box is
// spanned exactly, where bhviz bounds the particles it has (the extreme ones of N lie within
// ~6/N of the faces); and its masses may be 0, where ours are drawn from (0, 1).

#include <cmath>
#include <vector>

#include "sim/ic/ic_detail.h"
#include "sim/ic/initial_conditions.h"

namespace bhviz::sim {

Particles makeUniformCube(std::size_t n, std::uint64_t seed, double mass, double halfSide) {
  if (n == 0) throw InvalidParameter("makeUniformCube: n must be at least 1");
  detail::requirePositive(mass, "makeUniformCube: mass");
  detail::requirePositive(halfSide, "makeUniformCube: halfSide");
  Particles p;
  p.resize(n);
  std::vector<double> weight(n);
  const std::uint8_t tag = makeTag(Component::Sphere, 0);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    Rng rng(seed, detail::particleStream(0, i));
    // One draw per statement: the order of draws is then the same for every compiler.
    const double x = rng.uniform(-halfSide, halfSide);
    const double y = rng.uniform(-halfSide, halfSide);
    const double z = rng.uniform(-halfSide, halfSide);
    weight[i] = detail::openUniform(rng);
    detail::setParticle(p, i, {x, y, z}, {}, 0.0, tag);
  }
  // Serial, so that the total and hence every mass is the same for every thread count.
  double total = 0.0;
  for (const double w : weight) total += w;
  const double scale = mass / total;
  for (std::size_t i = 0; i < n; ++i) p.posMass[i].w = static_cast<float>(scale * weight[i]);
  // The centre of mass of N random masses lies ~2·halfSide/(3√N) from the cube's centre
  // (0.002 for Ryoanji's cube at 2^20): centring moves the cube off [−halfSide, halfSide]³ by
  // that much, which leaves it a cube of the same side.
  detail::recentre(p);
  detail::finalise(p);
  return p;
}

}  // namespace bhviz::sim
