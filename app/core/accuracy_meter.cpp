#include "app/core/accuracy_meter.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "app/core/background_job.h"
#include "app/core/sweep.h"

namespace bhviz::app {

MeterPlan planMeter(std::size_t requested, std::size_t n, bool cuda) {
  MeterPlan plan;
  plan.pairBudget = cuda ? kGpuPairBudget : kCpuPairBudget;
  const double dn = static_cast<double>(n);
  if (dn * dn <= plan.pairBudget) {
    plan.sample = n;
    plan.everyParticle = true;
    return plan;
  }
  const auto affordable =
      std::max<std::size_t>(static_cast<std::size_t>(plan.pairBudget / dn), kMeterMinSample);
  plan.sample = std::min({requested, n, affordable});
  plan.reduced = plan.sample < std::min(requested, n);
  return plan;
}

int meterInterval(const MeterSettings& s, double measureMs, double frameMs) {
  const int every = std::clamp(s.everyFrames, 1, kMeterMaxEveryFrames);
  if (!s.autoInterval || !(measureMs > 0.0) || !(frameMs > 0.0)) return every;
  const double needed = std::ceil(measureMs / (kMeterShare * frameMs));
  return std::max(every, static_cast<int>(std::min(needed, double(kMeterMaxEveryFrames))));
}

MeterResult measureState(sim::Backend& scratch, const sim::Particles& state, double time,
                         const sim::SimParams& p, std::size_t sample, std::uint64_t seed,
                         const sim::ReferenceSum& sum) {
  const auto t0 = std::chrono::steady_clock::now();
  const sim::Particles inIdOrder = sim::sortedById(state);
  const sim::AccuracyReference ref = sim::makeReference(inIdOrder, p.softening, sample, seed, sum);
  std::vector<double> relative;
  MeterResult r;
  r.s = sim::measureAccuracy(scratch, inIdOrder, p, ref, true, &relative);
  r.time = time;
  r.n = state.size();
  r.sample = ref.ids.size();
  auto byId =
      std::make_shared<std::vector<float>>(state.size(), std::numeric_limits<float>::quiet_NaN());
  for (std::size_t k = 0; k < ref.ids.size(); ++k) {
    if (ref.ids[k] < byId->size()) (*byId)[ref.ids[k]] = static_cast<float>(relative[k]);
  }
  r.errorById = std::move(byId);
  r.wallMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

AccuracyMeter::~AccuracyMeter() {
  if (m_job.valid()) m_job.wait();
}

void AccuracyMeter::reset() {
  if (m_job.valid()) m_job.wait();
  m_job = {};
  m_scratch.reset();
  m_scratchN = 0;
  m_latest.reset();
  m_history.clear();
  m_error.clear();
  m_framesSince = 1 << 30;
}

bool AccuracyMeter::update(const sim::Simulation& sim, const MeterSettings& s, std::uint64_t seed,
                           double frameMs, const std::function<bool()>& settle) {
  bool arrived = false;
  if (jobReady(m_job)) {
    try {
      auto result = std::make_unique<MeterResult>(m_job.get());
      m_history.push({result->time, result->s.error.median, result->s.error.p99});
      m_latest = std::move(result);
      m_error.clear();
      arrived = true;
    } catch (const std::exception& e) {
      m_error = e.what();
    }
  }
  m_plan =
      planMeter(static_cast<std::size_t>(std::clamp(s.sample, kMeterMinSample, kMeterMaxSample)),
                sim.backend().size(), sim.backend().traits().onDevice);
  m_interval = meterInterval(s, m_latest ? m_latest->wallMs : 0.0, frameMs);
  ++m_framesSince;
  if (s.enabled && !m_job.valid() && m_framesSince >= m_interval && (!settle || settle())) {
    start(sim, s, seed);
  }
  return arrived;
}

void AccuracyMeter::start(const sim::Simulation& sim, const MeterSettings&, std::uint64_t seed) {
  const std::size_t n = sim.backend().size();
  try {
    // A new simulation (another backend, perhaps) comes with reset(), which drops the scratch.
    if (!m_scratch || n > m_scratchN) {
      m_scratch.reset();  // free the old one's memory first
      m_scratch = sim.backend().makeScratch(n);
      m_scratchN = n;
    }
  } catch (const std::exception& e) {
    m_error = std::string("no scratch backend for the meter: ") + e.what();
    m_framesSince = 0;
    return;
  }
  m_framesSince = 0;
  const sim::ReferenceSum sum = m_scratch->referenceSum();
  sim::Particles state = sim.particles();  // the one cost paid by the frame loop
  const double time = sim.time();
  const sim::SimParams p = sim.params();
  const std::size_t sample = m_plan.sample;
  sim::Backend* scratch = m_scratch.get();
  // Beside a running CPU simulation the meter takes half the cores.
  const int threads = sim.backend().traits().onDevice ? 0 : halfTheCores();
  m_job = runInBackground(threads, [scratch, state = std::move(state), time, p, sample, seed, sum] {
    return measureState(*scratch, state, time, p, sample, seed, sum);
  });
}

}  // namespace bhviz::app
