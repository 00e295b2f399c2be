#pragma once
// The window's live accuracy meter. Every few frames it copies the current state, and on a
// thread of its own (app/background_job.h) evaluates every force of that state afresh with the
// current parameters on a scratch backend of the simulation's kind, and compares a random sample
// against exact direct summation (the GPU's on the CUDA backend): sim::makeReference and
// sim::measureAccuracy, the same functions as the headless sweep and the tests. The frame loop
// pays only for the copy of the state; the result shows up a few frames later.
//
// A fresh evaluation rather than the simulation's own accelerations: with block time steps the
// inactive particles' forces are from earlier positions, so only a fresh one is "the tree's
// force on this state". No GL and no UI here.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "app/core/perf_history.h"
#include "app/core/settings.h"
#include "sim/accuracy.h"
#include "sim/simulation.h"

namespace bhviz::app {

inline constexpr int kMeterMinSample = 16;
inline constexpr int kMeterMaxSample = 100000;
inline constexpr int kMeterMaxEveryFrames = 10000;
/// The share of the frame time a measurement may take when MeterSettings::autoInterval [1].
inline constexpr double kMeterShare = 0.1;
/// Direct-sum pairs (sample · N) one measurement may cost: ~0.1 s on a few CPU cores; a few
/// milliseconds on a GPU in double precision.
inline constexpr double kCpuPairBudget = 1e8;
inline constexpr double kGpuPairBudget = 4e9;

/// How many particles a measurement compares, for N particles on the CPU or the GPU.
struct MeterPlan {
  std::size_t sample = 0;      ///< particles measured [1]
  bool everyParticle = false;  ///< N² fits the pair budget: every particle is measured
  bool reduced = false;        ///< fewer than asked for: sample · N is held to the pair budget
  double pairBudget = 0.0;     ///< the budget that applied [pairs]
};
/// `requested` clamped to N; every particle when N² ≤ the budget (N ≤ 10⁴ on the CPU, ≤ 6·10⁴
/// on the GPU); otherwise at most budget / N (at least kMeterMinSample).
MeterPlan planMeter(std::size_t requested, std::size_t n, bool cuda);

/// Frames between two measurement starts: s.everyFrames, raised when s.autoInterval so that a
/// measurement lasting `measureMs` takes at most kMeterShare of the frames' `frameMs` each.
int meterInterval(const MeterSettings& s, double measureMs, double frameMs);

/// One measurement.
struct MeterResult {
  double time = 0.0;       ///< simulation time of the measured state [time]
  std::size_t n = 0;       ///< particles in it [1]
  sim::AccuracySample s;   ///< errors of the sample, cost of the fresh evaluation
  std::size_t sample = 0;  ///< particles measured [1]
  /// Relative error of each particle by id; NaN where the particle was not in the sample.
  std::shared_ptr<const std::vector<float>> errorById;
  double wallMs = 0.0;  ///< the whole measurement: reference sum and evaluation [ms]
};

/// What the meter runs on its thread, and what the tests call: `state` in id order
/// (sim::sortedById, so a seed picks the same particles whatever order the backend keeps them
/// in), `sample` of them chosen by `seed` and summed exactly (sim::makeReference with `sum`),
/// then sim::measureAccuracy of a fresh evaluation with `p` on `scratch`. `state.accPot` holds
/// the simulation's forces (the acceleration MAC's |a_old|).
MeterResult measureState(sim::Backend& scratch, const sim::Particles& state, double time,
                         const sim::SimParams& p, std::size_t sample, std::uint64_t seed,
                         const sim::ReferenceSum& sum = {});

struct MeterHistoryPoint {
  double time = 0.0;    ///< [time]
  double median = 0.0;  ///< [1]
  double p99 = 0.0;     ///< [1]
};

class AccuracyMeter {
 public:
  AccuracyMeter() = default;
  ~AccuracyMeter();  ///< waits for the measurement in flight
  AccuracyMeter(const AccuracyMeter&) = delete;
  AccuracyMeter& operator=(const AccuracyMeter&) = delete;

  /// Once per frame: takes a finished measurement (returns true then) and starts the next one
  /// when it is due. `seed` picks the sample (the same particles every time, so the history
  /// follows them); `frameMs` is the smoothed frame time. `settle`, if given, is called before a
  /// measurement starts (a substep still running ends: SimSession::settle); false: none starts.
  bool update(const sim::Simulation& sim, const MeterSettings& s, std::uint64_t seed,
              double frameMs, const std::function<bool()>& settle = {});
  /// A new simulation: forget the history and the scratch backend (after the job in flight).
  void reset();

  const MeterResult* latest() const { return m_latest ? m_latest.get() : nullptr; }
  const Ring<MeterHistoryPoint>& history() const { return m_history; }
  bool busy() const { return m_job.valid(); }
  /// Frames between measurements now (after the automatic stretch).
  int interval() const { return m_interval; }
  const MeterPlan& plan() const { return m_plan; }
  /// The last failure (e.g. no device memory for the scratch backend), empty when none.
  const std::string& error() const { return m_error; }

 private:
  void start(const sim::Simulation& sim, const MeterSettings& s, std::uint64_t seed);

  std::unique_ptr<sim::Backend> m_scratch;  // before m_job: the job uses it until it ends
  std::size_t m_scratchN = 0;
  std::future<MeterResult> m_job;
  std::unique_ptr<MeterResult> m_latest;
  Ring<MeterHistoryPoint> m_history{300};
  MeterPlan m_plan;
  int m_interval = 1;
  int m_framesSince = 1 << 30;  // the first update measures
  std::string m_error;
};

}  // namespace bhviz::app
