#pragma once
// Force accuracy and cost of one configuration, measured the same way everywhere: the app's
// live accuracy meter, the headless θ sweep and the tests. One fresh evaluation of every
// particle on a scratch backend, timed by the backend's own StepProfile, then the relative
// acceleration error of a fixed random sample against exact direct summation.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sim/backend.h"
#include "sim/direct_sum.h"
#include "sim/params.h"
#include "sim/particles.h"

namespace bhviz::sim {

struct AccuracySample {
  ForceError error;         ///< relative acceleration error of the sample [1]
  double msPerForce = 0.0;  ///< one evaluation of every particle: StepProfile total [ms]
  double interactionsPerParticle = 0.0;  ///< (M2P + P2P) / targets of that evaluation [1]
};

/// The exact accelerations of a random sample, by particle id: computed once per state and
/// softening, reused for every point of a sweep (the backends reorder particles; ids do not
/// change).
struct AccuracyReference {
  std::vector<std::uint32_t> ids;  ///< particle ids of the sample
  std::vector<Accel4d> acc;        ///< their exact accelerations and potentials (same order)
  float softening = 0.0f;          ///< the ε it was computed with [length]
};

/// `count` particles of `state` chosen by sampleIndices(state.size(), count, seed), summed
/// exactly by `sum` (directSum when empty) with softening ε.
AccuracyReference makeReference(const Particles& state, float softening, std::size_t count,
                                std::uint64_t seed, const ReferenceSum& sum = {});

/// Uploads `state` to `scratch` (its previous state is replaced), evaluates every force once
/// with `p` and measures it against `ref` (which must come from the same state and ε; throws
/// std::invalid_argument otherwise). Where |a_old| matters (the acceleration MAC, the far cells'
/// expansion by mass: SimParams::expansionBudget > 0) and `oldAccValid` is false (the state's
/// accPot holds no forces yet, or forces of other parameters), one untimed evaluation first
/// provides it, so the result does not depend on what accPot held.
/// `relative`, when given, receives each sampled particle's relative error (ref.ids order).
AccuracySample measureAccuracy(Backend& scratch, const Particles& state, const SimParams& p,
                               const AccuracyReference& ref, bool oldAccValid,
                               std::vector<double>* relative = nullptr);

/// A sweep position θ mapped onto each MAC's own parameter. bh, bonsai: θ itself. multipole and
/// acceleration: log-linear through the MAC's default at θ = 0.5, one decade per 0.2 of θ,
/// so a smaller θ always means a tighter tolerance:
///   Δ_mul = 1e-4 · 10^(5(θ − 0.5))   (θ = 0.9 → 1e-2, 0.5 → 1e-4, 0.3 → 1e-5)
///   α     = 2e-3 · 10^(5(θ − 0.5))   (θ = 0.9 → 0.2,  0.5 → 2e-3, 0.3 → 2e-4)
float sweepParam(MacKind mac, float theta);

/// θ = from, from + step, … up to `to` (included when the range is a whole number of steps,
/// to within 1e-6 of a step). Throws std::invalid_argument unless 0 < from ≤ to ≤ kThetaMax,
/// step > 0 and the range holds at most kMaxSweepPoints values.
std::vector<float> sweepThetas(float from, float to, float step);
inline constexpr std::size_t kMaxSweepPoints = 1000;

struct SweepPoint {
  MacKind mac;
  float param;  ///< the MAC's own parameter: θ (bh, bonsai), Δ_mul (multipole), α (acceleration)
  AccuracySample s;
};

using BackendFactory = std::function<std::unique_ptr<Backend>()>;

/// One point of a sweep: measureAccuracy with mac, θ and sweepParam(mac, θ) on top of `base`
/// (`state` needs no forces: the acceleration MAC gets its first evaluation). sweep() runs these
/// in a loop; the window runs them one at a time.
SweepPoint sweepPoint(Backend& scratch, const Particles& state, const SimParams& base, MacKind mac,
                      float theta, const AccuracyReference& ref);

/// For each MAC in `macs` (in that order) and each θ of `thetas`: sweepPoint on one scratch
/// backend from `makeBackend`.
std::vector<SweepPoint> sweep(const Particles& state, const SimParams& base,
                              const BackendFactory& makeBackend, const std::vector<MacKind>& macs,
                              const std::vector<float>& thetas, const AccuracyReference& ref);

/// Every MAC, in enum order: what `--mac all` sweeps.
std::vector<MacKind> allMacs();

}  // namespace bhviz::sim
