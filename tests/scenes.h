#pragma once
// Random scenes shared by the tree and GPU tests (the physical scenes come from sim/ic).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <utility>

#include "sim/clock.h"
#include "sim/common/timestep.h"
#include "sim/ic/initial_conditions.h"
#include "sim/particles.h"
#include "sim/rng.h"

namespace bhviz::test {

/// The particles active at the clock's tick (bins deeper than its depth count as its deepest, as
/// the backends take them): the targets of the substep that evaluated at that tick.
inline std::uint64_t activeAt(const sim::Particles& p, const sim::Clock& c) {
  std::uint64_t active = 0;
  for (const std::uint8_t b : p.bin) {
    active += sim::isActive(b < c.depth ? b : c.depth, c.tick, c.depth) ? 1 : 0;
  }
  return active;
}

/// A dense clump (60 %), a wide flat background (37 %) and a pile of exact duplicates (3 %),
/// which force cells down to the deepest level. Every particle array is filled with random
/// values and the ids are shuffled, so gathers and reorders are checked on all of them.
inline sim::Particles clusteredParticles(std::size_t n, std::uint64_t seed) {
  sim::Rng rng(seed);
  sim::Particles p;
  p.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = rng.uniform();
    const float m = static_cast<float>(rng.uniform(0.5, 1.5) / double(n));
    if (u < 0.6) {
      p.posMass[i] = {float(0.05 * rng.normal()), float(0.05 * rng.normal() + 1.0),
                      float(0.05 * rng.normal()), m};
    } else if (u < 0.97) {
      p.posMass[i] = {float(rng.uniform(-4, 4)), float(rng.uniform(-4, 4)),
                      float(rng.uniform(-1, 1)), m};
    } else {
      p.posMass[i] = {0.25f, -0.5f, 0.125f, m};
    }
    p.vel[i] = {float(rng.normal()), float(rng.normal()), float(rng.normal()), 0.0f};
    p.accPot[i] = {float(rng.normal()), float(rng.normal()), float(rng.normal()),
                   float(-rng.uniform())};
    p.id[i] = static_cast<std::uint32_t>(i);
    p.tag[i] = static_cast<std::uint8_t>(rng.next() & 0xFF);
    p.bin[i] = static_cast<std::uint8_t>(rng.next() % 8);
  }
  for (std::size_t i = n; i > 1; --i) std::swap(p.id[i - 1], p.id[rng.next() % i]);
  return p;
}

/// A Plummer sphere with some particles doubled exactly (coincident pairs: no force either way,
/// the pair of a particle with itself in disguise).
inline sim::Particles plummerWithTwins(std::size_t n, std::uint64_t seed) {
  sim::Particles p = sim::makePlummer(n, seed);
  for (std::size_t i = 0; i + 1 < n; i += 97) p.posMass[i + 1] = p.posMass[i];
  return p;
}

/// The base seed of a test run: $BHVIZ_TEST_SEED, or a fresh random one; printed once, so a
/// failing run can be repeated.
inline std::uint64_t testSeed(const char* program) {
  static const std::uint64_t seed = [program] {
    const char* env = std::getenv("BHVIZ_TEST_SEED");
    const std::uint64_t s = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    std::printf("%s: BHVIZ_TEST_SEED=%llu\n", program, static_cast<unsigned long long>(s));
    return s;
  }();
  return seed;
}

}  // namespace bhviz::test
