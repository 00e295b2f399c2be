#pragma once
// A backend holds the particles and runs the stages of a step on them. The order of the
// stages lives once, in Simulation; each backend (CPU reference, CUDA) implements them on
// its own data with the per-element math of sim/common.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "sim/clock.h"
#include "sim/diagnostics.h"
#include "sim/params.h"
#include "sim/particles.h"
#include "sim/profile.h"

namespace bhviz::sim {

/// Which particles get new forces.
enum class ForceTargets { Active, All };

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;

  /// Replaces the state (the particles may come in any order).
  virtual void upload(const Particles& p) = 0;
  /// A copy of the state, in the backend's current order (key order after a build).
  virtual void download(Particles& p) const = 0;
  virtual std::size_t size() const = 0;

  /// For each particle active at clock.tick: choose its new bin (common/timestep.h), then kick
  /// its velocity by a·dt/2 of that bin. Returns the deepest occupied bin afterwards.
  virtual int openKicks(const Clock& clock, const SimParams& p) = 0;
  /// Moves every particle by v·dt.
  virtual void drift(float dt) = 0;
  /// Rebuilds the tree and computes accelerations and potentials of the targets.
  /// `oldAccValid`: accPot holds accelerations from an earlier evaluation (acceleration MAC).
  virtual void computeForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                             bool oldAccValid) = 0;
  /// For each particle active at clock.tick: v += a·dt/2 of its bin.
  virtual void closeKicks(const Clock& clock) = 0;
  /// Ids of up to `max` particles with a non-finite position, velocity or acceleration.
  virtual std::vector<std::uint32_t> nonFiniteIds(std::size_t max) const = 0;

  /// Energies, momenta and the bin census of the current state (computeDiagnostics's rules).
  /// The default copies the state to the host; backends override it to sum where the data is.
  virtual Diagnostics diagnostics(const Clock& clock) const {
    Particles p;
    download(p);
    return computeDiagnostics(p, clock);
  }

  /// Timings and interaction counts since the last resetProfile().
  virtual const StepProfile& profile() const = 0;
  virtual void resetProfile() = 0;
};

std::unique_ptr<Backend> makeCpuBackend();

/// Peak host memory of a run on the CPU backend per particle (initial conditions, the
/// simulation's copies, keys, sort buffers and tree): 194 B measured at N = 10^6 (peak RSS of a
/// one-step Plummer run), rounded up.
inline constexpr double kCpuPeakBytesPerParticle = 256.0;

}  // namespace bhviz::sim
