// Hernquist (1990, ApJ 356, 359) sphere with isotropic velocities drawn from its exact
// distribution function. Internally dimensionless: G = M = a = 1, velocities in sqrt(GM/a).

#include <cmath>

#include "sim/ic/ic_detail.h"
#include "sim/ic/initial_conditions.h"

namespace bhviz::sim {

namespace {

/// The envelope table starts here [a]; the chance of drawing a smaller radius is ~1e-12, and
/// such a particle gets its own bound.
constexpr double kEnvelopeRMin = 1e-6;
constexpr int kEnvelopePerDecade = 64;

/// f(E) up to its constant factor, as a function of q² = εa/(GM) (ε = −E the binding energy)
/// and 1 − q², passed separately because it is the small difference near the centre.
/// Eq. (17) of Hernquist (1990): [3 asin q + q√(1−q²)(1−2q²)(8q⁴−8q²−3)] / (1−q²)^{5/2}.
double distributionFunction(double q2, double oneMinusQ2) {
  if (q2 <= 0.0) return 0.0;
  const double q = std::sqrt(q2);
  double bracket;
  if (q < 0.1) {
    // The closed form cancels down to O(q⁵) there; its series keeps full precision.
    const double q5 = q2 * q2 * q;
    bracket = q5 * (128.0 / 5.0 + q2 * (-192.0 / 7.0 + q2 * (16.0 / 3.0 + q2 * (8.0 / 11.0))));
  } else {
    bracket = 3.0 * std::asin(q) +
              q * std::sqrt(oneMinusQ2) * (1.0 - 2.0 * q2) * (8.0 * q2 * q2 - 8.0 * q2 - 3.0);
  }
  return bracket / std::pow(oneMinusQ2, 2.5);
}

/// The speed density v² f(Ψ(r) − v²/2) at radius r (dimensionless), up to a constant.
double speedDensity(double v, double r) {
  const double half = 0.5 * v * v;
  const double q2 = 1.0 / (1.0 + r) - half;
  const double oneMinusQ2 = r / (1.0 + r) + half;
  return v * v * distributionFunction(q2, oneMinusQ2);
}

double escapeSpeed(double r) { return std::sqrt(2.0 / (1.0 + r)); }

/// max over v of speedDensity(v, r): a coarse scan, then golden-section refinement of the
/// single peak (v² rises and f(Ψ − v²/2) falls monotonically, so the density is unimodal).
double maxSpeedDensity(double r) {
  const double vEsc = escapeSpeed(r);
  constexpr int kScan = 64;
  int best = 0;
  double bestValue = 0.0;
  for (int k = 1; k < kScan; ++k) {
    const double value = speedDensity(vEsc * k / kScan, r);
    if (value > bestValue) {
      bestValue = value;
      best = k;
    }
  }
  double lo = vEsc * (best - 1) / kScan, hi = vEsc * (best + 1) / kScan;
  const double golden = 0.5 * (std::sqrt(5.0) - 1.0);
  for (int it = 0; it < 40; ++it) {
    const double m1 = hi - golden * (hi - lo), m2 = lo + golden * (hi - lo);
    if (speedDensity(m1, r) > speedDensity(m2, r)) {
      hi = m2;
    } else {
      lo = m1;
    }
  }
  return std::fmax(bestValue, speedDensity(0.5 * (lo + hi), r));
}

/// Upper bounds of speedDensity(·, r) on a log grid. The density at fixed v only falls with r
/// (Ψ falls and f rises with binding energy), so its maximum does too: the value at the node
/// at or below r bounds every r up to the next node. 1% covers the peak search's tolerance.
detail::LogTable envelopeTable(double rMin, double rMax) {
  detail::LogTable table(rMin, rMax, kEnvelopePerDecade);
  for (std::size_t k = 0; k < table.size(); ++k) table[k] = 1.01 * maxSpeedDensity(table.radius(k));
  return table;
}

double sampleSpeed(Rng& rng, double r, const detail::LogTable& envelope) {
  const double bound =
      r < envelope.radius(0) ? 1.01 * maxSpeedDensity(r) : envelope[envelope.floorIndex(r)];
  const double vEsc = escapeSpeed(r);
  for (;;) {
    const double v = vEsc * rng.uniform();
    if (bound * rng.uniform() < speedDensity(v, r)) return v;
  }
}

}  // namespace

Particles makeHernquist(std::size_t n, std::uint64_t seed, double mass, double a, double rmax) {
  if (n == 0) throw InvalidParameter("makeHernquist: n must be at least 1");
  detail::requirePositive(mass, "makeHernquist: mass");
  detail::requirePositive(a, "makeHernquist: a");
  detail::requirePositive(rmax, "makeHernquist: rmax");

  // The particles carry `mass` in all; inside rmax they follow the Hernquist profile of the
  // larger untruncated mass mInf, whose distribution function sets the velocities. (Removing
  // the mass outside rmax only adds a constant to the potential inside.)
  const double massMax = detail::hernquistMassFraction(rmax, 1.0);
  const double mInf = mass / massMax;
  const double velocityUnit = std::sqrt(mInf / a);
  const detail::LogTable envelope = envelopeTable(std::fmin(kEnvelopeRMin, 0.5 * rmax), rmax);
  return detail::isotropicSphere(
      n, seed, mass,
      [&](Rng& rng) {
        return a * detail::hernquistRadius(massMax * detail::openUniform(rng), 1.0);
      },
      [&](Rng& rng, double r) { return velocityUnit * sampleSpeed(rng, r / a, envelope); });
}

}  // namespace bhviz::sim
