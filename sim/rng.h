#pragma once
// A small, fully specified random generator (xoshiro256** seeded through splitmix64), so that
// seeded initial conditions are identical for every compiler, standard library and thread
// count. Standard-library distributions are implementation-defined, so none are used; the
// floating-point transforms (log, cos, …) are as exact as the platform's libm.

#include <cmath>
#include <cstdint>

namespace bhviz::sim {

class Rng {
 public:
  /// Independent streams for the same seed: give each particle (or each task) its own stream.
  explicit Rng(std::uint64_t seed, std::uint64_t stream = 0) {
    std::uint64_t s = seed ^ (0x9e3779b97f4a7c15ull * (stream + 1));
    for (auto& w : m_state) w = splitmix(s);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(m_state[1] * 5, 7) * 9;
    const std::uint64_t t = m_state[1] << 17;
    m_state[2] ^= m_state[0];
    m_state[3] ^= m_state[1];
    m_state[1] ^= m_state[2];
    m_state[0] ^= m_state[3];
    m_state[2] ^= t;
    m_state[3] = rotl(m_state[3], 45);
    return result;
  }

  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Standard normal (Box–Muller; one value per call, for simplicity).
  double normal() {
    double u1 = uniform();
    while (u1 <= 0.0) u1 = uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  /// Uniform integer in [0, n).
  std::uint64_t below(std::uint64_t n) { return n ? next() % n : 0; }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix(std::uint64_t& s) {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t m_state[4];
};

}  // namespace bhviz::sim
