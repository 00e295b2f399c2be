#pragma once
// The window's θ sweep: the headless sweep's points (sim::sweepPoint, mapped onto each MAC's
// parameter by sim::sweepParam, written by writeSweepCsv) on a copy of the current state, one
// point per job on a thread of its own (app/background_job.h), so the window stays responsive.
// The reference is the headless sweep's: kSweepSample particles of the state in id order chosen
// by the scene's seed, so a sweep of the initial state gives the headless sweep's errors.
// No GL and no UI here.

#include <array>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "app/core/settings.h"
#include "app/core/sweep.h"
#include "sim/accuracy.h"

namespace bhviz::app {

class SweepRunner {
 public:
  SweepRunner() = default;
  ~SweepRunner();  ///< waits for the job in flight
  SweepRunner(const SweepRunner&) = delete;
  SweepRunner& operator=(const SweepRunner&) = delete;

  /// Starts a sweep of `state` (any earlier one is cancelled): the reference first, then each
  /// MAC of `macs` (in that order) at each θ of `thetas`, on `scratch` with `sum` (see
  /// app/sweep.h referenceSumFor). `threads` > 0 sets the jobs' OpenMP team size; `sample` is
  /// the reference's size (the headless sweep's by default; the window holds it to a pair
  /// budget at large N, as the meter does). Throws std::invalid_argument when there is nothing
  /// to sweep.
  void start(sim::Particles state, const sim::SimParams& base, std::vector<sim::MacKind> macs,
             std::vector<float> thetas, std::uint64_t seed, std::unique_ptr<sim::Backend> scratch,
             sim::ReferenceSum sum, int threads = 0, std::size_t sample = kSweepSample);
  /// Once per frame: takes a finished job and starts the next. Returns true on the frame the
  /// sweep ends (finished, or failed: see error()).
  bool poll();
  /// Polls until the sweep ends (tests).
  void finish();
  /// Stops after the job in flight; the points so far stay.
  void cancel();

  bool running() const { return m_running; }
  std::size_t done() const { return m_points.size(); }
  std::size_t total() const { return m_macs.size() * m_thetas.size(); }
  const std::vector<sim::SweepPoint>& points() const { return m_points; }
  /// Particles in the reference sample (0 until it is summed).
  std::size_t referenceSize() const { return m_ref.ids.size(); }
  const std::string& error() const { return m_error; }

  /// writeSweepCsv of the points so far, atomically. Throws std::runtime_error naming the file
  /// (or saying there is nothing yet).
  void exportCsv(const std::string& path) const;

 private:
  void launchNext();

  std::unique_ptr<sim::Backend> m_scratch;  // before the jobs: they use it until they end
  sim::Particles m_state;
  sim::SimParams m_base;
  std::vector<sim::MacKind> m_macs;
  std::vector<float> m_thetas;
  sim::ReferenceSum m_sum;
  std::uint64_t m_seed = 0;
  int m_threads = 0;
  std::size_t m_sample = kSweepSample;
  sim::AccuracyReference m_ref;
  std::future<sim::AccuracyReference> m_refJob;
  std::future<sim::SweepPoint> m_pointJob;
  std::vector<sim::SweepPoint> m_points;
  bool m_running = false;
  std::string m_error;
};

}  // namespace bhviz::app
