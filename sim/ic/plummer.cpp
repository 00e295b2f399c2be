// Plummer sphere in Hénon units, sampled from its isotropic distribution function following
// Aarseth, Hénon & Wielen (1974, A&A 37, 183).

#include <cmath>

#include "sim/ic/ic_detail.h"
#include "sim/ic/initial_conditions.h"

namespace bhviz::sim {

namespace {

/// Scale length for M = G = 1 and E = −3πGM²/(64a) = −1/4 [length].
constexpr double kPlummerScale = 3.0 * detail::kPi / 16.0;

/// Radii are drawn inside this many scale lengths. The mass outside, 1 − M(<r)/M ≈ 1.5 (a/r)²
/// = 1.5e-4, is negligible for the energy, but the few far-flung particles it would add would
/// stretch the tree's bounding box for nothing. Drawing the mass fraction from [0, M(<rcut))
/// is the same as redrawing radii beyond rcut, with a fixed number of random numbers.
constexpr double kPlummerCutoff = 100.0;

double plummerMassFraction(double x) {  // x = r/a
  return x * x * x / std::pow(1.0 + x * x, 1.5);
}

/// q = v/v_esc from g(q) = q²(1 − q²)^{7/2} by rejection under the constant 0.1 (max g ≈ 0.092).
double sampleSpeedRatio(Rng& rng) {
  for (;;) {
    const double q = rng.uniform();
    const double g = q * q * std::pow(1.0 - q * q, 3.5);
    if (0.1 * rng.uniform() < g) return q;
  }
}

}  // namespace

Particles makePlummer(std::size_t n, std::uint64_t seed) {
  if (n == 0) throw InvalidParameter("makePlummer: n must be at least 1");
  const double a = kPlummerScale;
  const double massMax = plummerMassFraction(kPlummerCutoff);
  return detail::isotropicSphere(
      n, seed, 1.0,
      [&](Rng& rng) {
        // Invert M(<r)/M = x³/(1 + x²)^{3/2} for the mass fraction u.
        const double u = massMax * detail::openUniform(rng);
        return a / std::sqrt(std::pow(u, -2.0 / 3.0) - 1.0);
      },
      [&](Rng& rng, double r) {
        return sampleSpeedRatio(rng) * std::sqrt(2.0 / std::sqrt(r * r + a * a));  // × v_escape
      });
}

}  // namespace bhviz::sim
