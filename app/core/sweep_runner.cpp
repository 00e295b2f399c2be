#include "app/core/sweep_runner.h"

#include <stdexcept>

#include "app/core/background_job.h"
#include "app/core/output.h"
#include "app/core/sweep.h"

namespace bhviz::app {

SweepRunner::~SweepRunner() { cancel(); }

void SweepRunner::cancel() {
  if (m_refJob.valid()) m_refJob.wait();
  if (m_pointJob.valid()) m_pointJob.wait();
  m_refJob = {};
  m_pointJob = {};
  m_running = false;
  m_scratch.reset();  // no job uses it now: give its (device) memory back
}

void SweepRunner::start(sim::Particles state, const sim::SimParams& base,
                        std::vector<sim::MacKind> macs, std::vector<float> thetas,
                        std::uint64_t seed, std::unique_ptr<sim::Backend> scratch,
                        sim::ReferenceSum sum, int threads, std::size_t sample) {
  if (macs.empty() || thetas.empty()) {
    throw std::invalid_argument("the sweep needs at least one MAC and one theta");
  }
  cancel();
  m_scratch = std::move(scratch);
  m_state = std::move(state);
  m_base = base;
  m_macs = std::move(macs);
  m_thetas = std::move(thetas);
  m_sum = std::move(sum);
  m_seed = seed;
  m_threads = threads;
  m_sample = sample;
  m_ref = {};
  m_points.clear();
  m_error.clear();
  m_running = true;
  // The state and settings live in this object until the jobs end (cancel waits for them).
  m_refJob = runInBackground(m_threads, [this] {
    m_state = sim::sortedById(m_state);  // as the headless sweep's freshly made scenario
    return sim::makeReference(m_state, m_base.softening, m_sample, m_seed, m_sum);
  });
}

void SweepRunner::launchNext() {
  const std::size_t k = m_points.size();
  if (k >= total()) {
    m_running = false;
    return;
  }
  const sim::MacKind mac = m_macs[k / m_thetas.size()];
  const float theta = m_thetas[k % m_thetas.size()];
  m_pointJob = runInBackground(m_threads, [this, mac, theta] {
    return sim::sweepPoint(*m_scratch, m_state, m_base, mac, theta, m_ref);
  });
}

bool SweepRunner::poll() {
  if (!m_running) return false;
  try {
    if (jobReady(m_refJob)) {
      m_ref = m_refJob.get();
      launchNext();
    } else if (jobReady(m_pointJob)) {
      m_points.push_back(m_pointJob.get());
      launchNext();
    }
  } catch (const std::exception& e) {
    m_error = e.what();
    cancel();
    return true;
  }
  if (!m_running) m_scratch.reset();  // finished: give the scratch backend's memory back
  return !m_running;
}

void SweepRunner::finish() {
  while (m_running) {
    if (m_refJob.valid()) m_refJob.wait();
    if (m_pointJob.valid()) m_pointJob.wait();
    poll();
  }
}

void SweepRunner::exportCsv(const std::string& path) const {
  if (m_points.empty()) throw std::runtime_error("no sweep points to export yet");
  if (path.empty()) throw std::runtime_error("the CSV path is empty");
  const std::vector<sim::SweepPoint> points = m_points;
  writeFileAtomically(path, [&](std::ostream& out) { writeSweepCsv(out, points); });
}

}  // namespace bhviz::app
