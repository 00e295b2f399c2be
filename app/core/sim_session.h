#pragma once
// One running simulation for every front end: built from a SceneSettings (a scenario or a
// snapshot, on the backend the choice picks for N, within the backend's limits), advanced by
// the window's per-frame budget or by whole dtMax intervals (headless runs, benchmarks), sampled
// for the Diagnostics panel. No GL and no UI here: the window, the headless run, the
// benchmarks and the tests drive it.

#include <chrono>
#include <memory>
#include <string>

#include "app/core/perf_history.h"
#include "app/core/settings.h"
#include "sim/diagnostics.h"
#include "sim/ic/scenario_file.h"
#include "sim/simulation.h"

namespace bhviz::app {

/// The first force evaluation of a new session was non-finite (a snapshot with absurd
/// positions, say): which particles, and what the session knew by then, for the stats.
struct StartAborted : sim::NonFiniteState {
  StartAborted(const sim::NonFiniteState& e, std::string backendName, std::size_t particles,
               double startTime)
      : sim::NonFiniteState(e), backend(std::move(backendName)), n(particles), time(startTime) {}
  std::string backend;  ///< the backend's name
  std::size_t n = 0;    ///< particles [1]
  double time = 0.0;    ///< the start time [time]
};

/// How often the window samples the diagnostics [s of wall time]: a pass over every particle
/// (a device reduction on CUDA, a host loop on the CPU), twice a second, or every 2 s at large N.
inline double diagnosticsInterval(std::size_t n) { return n > 200'000 ? 2.0 : 0.5; }

/// One line naming what went wrong and up to 10 of the particles it happened to.
std::string describe(const sim::NonFiniteState& e);

class SimSession {
 public:
  /// Makes the scenario (or reads scene.snapshotPath: its particles, N and time) and the
  /// simulation on the backend `scene.backend` picks for N. Throws BackendUnavailable,
  /// UsageError (parameters beyond the backend's limits), sim::io::SnapshotError,
  /// sim::InvalidParameter, StartAborted, std::bad_alloc.
  SimSession(const SceneSettings& scene, const sim::SimParams& params);

  /// Writes the state to `path` (format from the extension, written atomically), first
  /// finishing the current block step so that every velocity is at the saved time (and, with
  /// the potentials on demand, where the last step end computed none, walking it again for them
  /// (Simulation::computePotentialsNow), or running one more step where the backend cannot: the
  /// file carries them). Throws
  /// sim::io::SnapshotError (nothing else changes then), std::logic_error when halted, or
  /// sim::NonFiniteState (then the session is halted).
  void save(const std::string& path);

  /// Substeps until the budget's sim time (or substep count) is done or its wall time is
  /// spent, first ending a substep the last call left running; with setOverlap the last one is
  /// left running. Throws sim::NonFiniteState (the simulation is then unusable until rebuilt).
  struct Advance {
    int substeps = 0;
    sim::StepProfile profile;  ///< summed over the substeps
    double wallMs = 0.0;
  };
  Advance advance(const FrameBudget& budget);
  /// Exactly one substep (the `.` key).
  Advance step();

  /// Back to a state kept from this session (app/core/rewind.h), paused there; a halted
  /// session runs again from it. Parameters come back as they were kept.
  void restore(const sim::KeptState& state);

  // ---- Run state: the window's play and pause, and the halt after a non-finite state --------

  bool paused() const { return m_paused; }
  /// A halted session stays paused until it is rebuilt.
  void setPaused(bool paused) { m_paused = paused || m_halted; }
  bool halted() const { return m_halted; }
  /// One frame of the window: nothing while halted; while paused no step, but a state at a step
  /// end whose potentials went stale (on demand) is sampled once, its last evaluation walked
  /// again for them; one substep for a single step (which pauses); else the budget. A
  /// non-finite state halts and pauses the session, and `notice` names the particles; nothing
  /// throws.
  struct Frame {
    bool stepped = false;  ///< the simulation ran this frame (not paused, not halted)
    Advance advance;
    std::string notice;
  };
  Frame frame(const FrameBudget& budget, bool singleStep);
  /// Under mpirun: each rank's report after the last frame() that stepped (empty for one
  /// process).
  const std::vector<sim::RankReport>& ranks() const { return m_ranks; }
  /// One whole dtMax interval: afterwards every particle is synchronised (a headless step).
  Advance advanceInterval();
  /// A fresh force evaluation of every particle (synchronised states only: --dump-accel).
  void recomputeForces() {
    m_sim->endSubstep();
    m_sim->recomputeForces();
  }

  /// The window's frames: advance() leaves the frame's last substep running on the device
  /// (Simulation::beginSubstep), so that the window's CPU prepares the next frame meanwhile; the
  /// next call that needs it ends it (advance, settle, and every call below that reads or
  /// changes the state). Its measurements and its check come a frame late: a non-finite state
  /// halts the session there, and the next frame() says so. Off by default.
  void setOverlap(bool on) { m_overlap = on; }
  /// Ends a substep left running (Simulation::endSubstep) and takes a sample due at it; a
  /// non-finite state halts and pauses the session, its line kept for the next frame()'s
  /// notice. Returns whether the session runs on (not halted). Never throws NonFiniteState.
  /// Callers that read the state for more than a frame (a pick, the meter, a sweep, a lesson's
  /// measure) settle first, so that they never read an unchecked one.
  bool settle();
  /// The line of a halt found since the last frame() (or by settle()), once; empty if none. For
  /// a front end about to drop the session (a rebuild, the end of the run).
  std::string takeNotice();

  /// New live parameters, checked against sim's ranges and the backend's limits. Returns ""
  /// when they apply (from the next substep), else one line saying why not; the simulation
  /// then keeps its parameters. Never throws for a value a panel can set.
  std::string applyParams(const sim::SimParams& params);
  /// The ranges of the backend running now, for the panels' sliders.
  sim::BackendLimits limits() const { return m_sim->backend().traits().limits; }

  /// The potentials only where a sample, a save or a single step needs them
  /// (sim::Simulation::setPotentialOnDemand): the window's frames, whose diagnostics are sampled
  /// every few seconds. Off by default (headless runs report the energy at every step).
  void setPotentialOnDemand(bool onDemand) { m_sim->setPotentialOnDemand(onDemand); }

  /// Recomputes the diagnostics when `interval` seconds of wall time have passed since the
  /// last sample, or when forced. Samples go to the plot's history only where every particle's
  /// step has ended and the potentials are current: one due elsewhere (in the middle of a block
  /// step, or on demand where the last step computed none) asks for the potentials and is taken
  /// by the first substep that ends every step with them (a paused session samples in frame()).
  /// Returns whether it sampled now.
  /// Copies the particles to the host: not every frame at large N.
  bool sampleDiagnostics(double intervalSeconds, bool force = false);
  const sim::Diagnostics& diagnostics() const { return m_diagnostics; }
  double initialEnergy() const { return m_e0; }
  const Ring<DiagnosticsSample>& diagnosticsHistory() const { return m_history; }

  const sim::Simulation& simulation() const { return *m_sim; }
  /// The initial state on the host (framing, speed calibration).
  const sim::Particles& initial() const { return m_initial; }
  const SceneSettings& scene() const { return m_scene; }
  /// The scenario it was built from (its camera script, description).
  const sim::ScenarioSpec& spec() const { return m_spec; }
  /// Why the backend was chosen, when it was chosen for the user (else empty).
  const std::string& backendNote() const { return m_note; }
  /// What the snapshot reader accepted that a file may not mean (one line each, naming the
  /// file: ids renumbered, the unpadded Tipsy header); empty for a scenario.
  const std::vector<std::string>& notes() const { return m_notes; }

 private:
  SceneSettings m_scene;
  sim::ScenarioSpec m_spec;
  sim::Particles m_initial;
  std::unique_ptr<sim::Simulation> m_sim;
  bool m_paused = false;
  bool m_halted = false;
  bool m_overlap = false;
  std::string m_haltNotice;    // the halt's line, until a frame() reports it
  sim::StepProfile m_settled;  // substeps settle() ended, for the next advance()
  /// Halts and pauses after a non-finite state, keeping its line for frame().
  void halt(const sim::NonFiniteState& e);
  /// Ends a substep left running (Simulation::endSubstep: throws NonFiniteState), takes a sample
  /// due at it, and adds its profile to `profile`.
  void endRunningSubstep(sim::StepProfile& profile);
  std::string m_note;
  std::vector<std::string> m_notes;
  double m_targetTime = 0.0;  // SimTime budget: the time the frames have asked for so far
  sim::Diagnostics m_diagnostics;
  double m_e0 = 0.0;
  Ring<DiagnosticsSample> m_history{1000};
  std::vector<sim::RankReport> m_ranks;
  std::chrono::steady_clock::time_point m_lastSample{};
  bool m_sampleDue = false;  // a sample waits for a step end with the potentials
  void takeSample(std::chrono::steady_clock::time_point now);
  void takeDueSample();
  /// Paused at a step end with stale potentials: they are made now (no frame will step to them)
  /// and the state sampled, once.
  void samplePausedState();
  /// Every step has ended and the potentials are those of this time: a sample for the plot.
  bool current() const;
};

}  // namespace bhviz::app
