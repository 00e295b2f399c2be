#pragma once
// The CUDA backend's kicks and drift of a substep, with what they watch for the host so that it
// waits as little as it can: the flag of non-finite values they made, and the forecast of the
// next open kicks' deepest bin. cuda_backend.cu owns one and forgets what it watched wherever
// something else changes the particles.

#include <cstdint>
#include <vector>

#include "sim/backend.h"
#include "sim/cuda/cuda_stages.h"
#include "sim/cuda/device_buffer.h"
#include "sim/cuda/stage_events.cuh"

namespace bhviz::sim::cuda {

class SubstepKicks {
 public:
  /// The particles changed otherwise (upload, restore, an exchange): nothing watched or forecast.
  void forget() {
    m_watch = Watch::None;
    m_forecast.valid = m_kicks.valid = false;
  }
  /// A force evaluation begins. Forces other than a substep's, of the particles its close kicks
  /// will kick (between its drift and its close kicks), are not watched; forces of every particle
  /// change what the next open kicks read, so no forecast from before them holds.
  void forcesBegin(ForceTargets targets) {
    if (m_watch != Watch::Drifted || targets != ForceTargets::Active) m_watch = Watch::None;
    if (targets != ForceTargets::Active) m_forecast.valid = m_kicks.valid = false;
  }

  /// launchOpenKicks; returns the deepest bin afterwards: the close kicks' forecast where it
  /// holds (no wait), else read back (a block substep's one wait before its drift).
  int openKicks(DeviceParticles& p, const Clock& clock, const SimParams& params,
                StageEvents& events, Stream stream);
  /// launchDrift, watched for non-finite values.
  void drift(DeviceParticles& p, float dt, StageEvents& events, Stream stream);
  /// launchCloseKicks, watched, with the forecast of the next open kicks' deepest bin on its way
  /// to the host behind them (block steps).
  void closeKicks(DeviceParticles& p, const Clock& clock, StageEvents& events, Stream stream);
  /// Backend::nonFiniteIds: one flag to read after a whole watched substep, else a pass over
  /// every particle (findNonFinite).
  std::vector<std::uint32_t> nonFiniteIds(const DeviceParticles& p, std::size_t max, Stream stream);

 private:
  /// How far the kernels watched the state for non-finite values since the last check that
  /// found none (Checked): a substep's drift (Drifted: every position and velocity, so also the
  /// open kicks' velocities), then its close kicks (Complete: the forces of the active particles,
  /// the only ones given forces, and their velocities), each setting m_bad where they made one.
  /// Anything else that changes the particles (upload, restore, an exchange, forces outside a
  /// substep) leaves None: the next check passes over every particle. The pass took 0.09 ms of a
  /// block substep at 8 M particles (H200).
  enum class Watch { None, Checked, Drifted, Complete };
  /// The next open kicks' deepest bin, forecast by the close kicks (block steps): it removes the
  /// wait for it at the start of a substep. It holds for open kicks at the same tick modulo the
  /// clock's period (isActive and nextBin read no more of it), the same depth and dtMax, and the
  /// same ε and η, with nothing in between that changes the bins or the accelerations.
  struct ForecastKey {
    std::uint64_t phase = 0;
    int depth = 0;
    float dtMax = 0.0f, eps = 0.0f, eta = 0.0f;
    bool operator==(const ForecastKey& o) const {
      return phase == o.phase && depth == o.depth && dtMax == o.dtMax && eps == o.eps &&
             eta == o.eta;
    }
  };
  static ForecastKey keyOf(const Clock& clock, float eps, float eta);

  Watch m_watch = Watch::None;
  DeviceBuffer<std::uint32_t> m_bad;                              // 1 element
  DeviceBuffer<std::uint32_t> m_nonFiniteCounts, m_nonFiniteIds;  // findNonFinite's scratch
  DeviceBuffer<int> m_deepest;  // the open kicks' deepest bin, or the close kicks' forecast
  struct {
    bool valid = false;
    ForecastKey key;
  } m_forecast;
  struct {  // the last open kicks' ε and η, which the close kicks forecast with
    bool valid = false;
    float eps = 0.0f, eta = 0.0f;
  } m_kicks;
  PinnedBytes m_forecastHost;  // the forecast deepest bin, int
  PinnedBytes m_readBack;      // the deepest bin or m_bad, read back
};

}  // namespace bhviz::sim::cuda
