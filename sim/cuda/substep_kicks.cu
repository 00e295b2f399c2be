// The kicks and drift of a substep on the CUDA backend, and their watches (substep_kicks.h).
#include <cstring>

#include "sim/common/timestep.h"
#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/substep_kicks.h"

namespace bhviz::sim::cuda {

SubstepKicks::ForecastKey SubstepKicks::keyOf(const Clock& clock, float eps, float eta) {
  return {clock.tick & (binPeriod(0, clock.depth) - 1), clock.depth,
          static_cast<float>(clock.dtMax), eps, eta};
}

int SubstepKicks::openKicks(DeviceParticles& p, const Clock& clock, const SimParams& params,
                            StageEvents& events, Stream stream) {
  // One bin (shared steps): the deepest is 0, and the substep goes on without a wait.
  const bool binned = clock.depth > 0;
  const bool forecast =
      binned && m_forecast.valid && m_forecast.key == keyOf(clock, params.softening, params.eta);
  m_forecast.valid = false;
  m_kicks = {true, params.softening, params.eta};
  if (forecast) {
    // The last close kicks forecast these open kicks' deepest bin, and the check after them
    // waited for it: the open kicks run while the host goes on.
    synchronize(stream);  // (passed already, where the Simulation's check waited)
    int deepest = 0;
    std::memcpy(&deepest, m_forecastHost.data(), sizeof(int));
    timed(events, Stage::Predict, stream,
          [&] { launchOpenKicks(p, clock, params, nullptr, stream); });
    return deepest;
  }
  if (binned) m_deepest.reserve(1);
  timed(events, Stage::Predict, stream,
        [&] { launchOpenKicks(p, clock, params, binned ? m_deepest.data() : nullptr, stream); });
  if (!binned) return 0;
  int deepest = 0;  // a block substep's first wait
  std::memcpy(&deepest, readBack(m_readBack, m_deepest.data(), sizeof deepest, stream),
              sizeof deepest);
  return deepest;
}

void SubstepKicks::drift(DeviceParticles& p, float dt, StageEvents& events, Stream stream) {
  m_bad.reserve(1);
  BHVIZ_CUDA_CHECK(cudaMemsetAsync(m_bad.data(), 0, sizeof(std::uint32_t), stream));
  timed(events, Stage::Predict, stream, [&] { launchDrift(p, dt, stream, m_bad.data()); });
  m_watch = m_watch == Watch::Checked ? Watch::Drifted : Watch::None;
}

void SubstepKicks::closeKicks(DeviceParticles& p, const Clock& clock, StageEvents& events,
                              Stream stream) {
  const bool watched = m_watch == Watch::Drifted;
  // With the open kicks' parameters of this substep, the forecast of the next one's deepest bin.
  NextOpenKicks next;
  const bool forecast = clock.depth > 0 && m_kicks.valid;
  if (forecast) {
    m_deepest.reserve(1);
    if (m_forecastHost.size() == 0) m_forecastHost.resize(sizeof(int));
    next = {m_kicks.eps, m_kicks.eta, static_cast<float>(clock.dtMax), m_deepest.data()};
  }
  timed(events, Stage::Integrate, stream,
        [&] { launchCloseKicks(p, clock, stream, watched ? m_bad.data() : nullptr, next); });
  if (forecast) {
    BHVIZ_CUDA_CHECK(cudaMemcpyAsync(m_forecastHost.data(), m_deepest.data(), sizeof(int),
                                     cudaMemcpyDeviceToHost, stream));
    m_forecast = {true, keyOf(clock, m_kicks.eps, m_kicks.eta)};
  }
  m_watch = watched ? Watch::Complete : Watch::None;
}

std::vector<std::uint32_t> SubstepKicks::nonFiniteIds(const DeviceParticles& p, std::size_t max,
                                                      Stream stream) {
  if (max == 0) return {};  // nothing to name: no check made
  if (m_watch == Watch::Complete) {
    // A whole substep watched since a check that found every particle finite: its drift saw
    // every position and velocity, its close kicks every force it made. One flag to read.
    std::uint32_t bad = 0;
    std::memcpy(&bad, readBack(m_readBack, m_bad.data(), sizeof bad, stream), sizeof bad);
    if (bad == 0) {
      m_watch = Watch::Checked;
      return {};
    }
  }
  std::vector<std::uint32_t> ids = findNonFinite(p, max, m_nonFiniteCounts, m_nonFiniteIds, stream);
  m_watch = ids.empty() ? Watch::Checked : Watch::None;
  return ids;
}

}  // namespace bhviz::sim::cuda
