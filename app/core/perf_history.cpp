#include "app/core/perf_history.h"

namespace bhviz::app {

namespace {
double ema(double old, double value, double w) { return old + w * (value - old); }
}  // namespace

void PerfHistory::push(const FrameRecord& r) {
  m_frames.push(r);
  // The first frame seeds the average, so the numbers do not creep up from zero.
  const double w = m_started ? kSmoothing : 1.0;
  m_started = true;
  m_smoothed.frameMs = ema(m_smoothed.frameMs, r.frameMs, w);
  m_smoothed.writeMs = ema(m_smoothed.writeMs, r.writeMs, w);
  m_smoothed.renderMs = ema(m_smoothed.renderMs, r.renderMs, w);
  if (r.gpuRenderMs >= 0.0) {
    m_smoothed.gpuRenderMs = m_smoothed.gpuRenderMs < 0.0
                                 ? r.gpuRenderMs
                                 : ema(m_smoothed.gpuRenderMs, r.gpuRenderMs, kSmoothing);
  }
  // A paused frame has no step: the step averages keep the last measured values.
  if (r.substeps == 0) return;
  const double ws = m_stepStarted ? kSmoothing : 1.0;
  m_stepStarted = true;
  for (std::size_t s = 0; s < r.step.ms.size(); ++s) {
    m_smoothed.step.ms[s] = ema(m_smoothed.step.ms[s], r.step.ms[s], ws);
  }
  m_smoothed.simMs = ema(m_smoothed.simMs, r.simMs, ws);
  m_substeps = ema(m_substeps, r.substeps, ws);
  m_smoothed.substeps = static_cast<int>(m_substeps + 0.5);
  const sim::InteractionCounts& c = r.step.interactions;
  m_cell = ema(m_cell, static_cast<double>(c.cell), ws);
  m_particle = ema(m_particle, static_cast<double>(c.particle), ws);
  m_targets = ema(m_targets, static_cast<double>(c.targets), ws);
}

void PerfHistory::clear() { *this = PerfHistory{}; }

double PerfHistory::interactionsPerParticle() const {
  return m_targets > 0.0 ? (m_cell + m_particle) / m_targets : 0.0;
}

double PerfHistory::interactionsPerSecond() const {
  const double ms = m_smoothed.step.total();
  return ms > 0.0 ? (m_cell + m_particle) / (ms * 1e-3) : 0.0;
}

}  // namespace bhviz::app
