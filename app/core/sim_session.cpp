#include "app/core/sim_session.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "app/core/backend_select.h"
#include "app/core/cli.h"
#include "sim/ic/initial_conditions.h"
#include "sim/io/snapshot.h"

namespace bhviz::app {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double magnitude(const std::array<double, 3>& v) {
  return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

/// Non-finite states name at most this many particles.
constexpr std::size_t kIdsNamed = 10;

}  // namespace

std::string describe(const sim::NonFiniteState& e) {
  // Built from the ids rather than what(), so the line has the same shape on every backend.
  if (e.ids.empty()) return oneLine(e.what());
  std::ostringstream s;
  s << "the state became non-finite (NaN or Inf) in particle id" << (e.ids.size() > 1 ? "s" : "");
  const std::size_t named = std::min(e.ids.size(), kIdsNamed);
  for (std::size_t i = 0; i < named; ++i) s << (i == 0 ? " " : ", ") << e.ids[i];
  if (e.ids.size() > named) s << " and " << e.ids.size() - named << " more";
  return s.str();
}

SimSession::SimSession(const SceneSettings& scene, const sim::SimParams& params) : m_scene(scene) {
  double startTime = 0.0;
  if (!scene.snapshotPath.empty()) {
    // Read before the backend is chosen: N is the file's.
    sim::io::Snapshot snapshot = sim::io::readSnapshotWithTime(scene.snapshotPath);
    m_initial = std::move(snapshot.particles);
    m_notes = std::move(snapshot.notes);
    startTime = snapshot.time;
    m_scene.n = m_initial.size();
  }
  BackendSelection selection =
      selectSimulationBackend(m_scene.backend, m_scene.n, m_scene.rebalance);
  requireWithinLimits(params, *selection.backend);
  m_note = selection.note;
  if (scene.snapshotPath.empty()) {
    m_spec = sim::resolveScenario(scene.scenario);  // a file is read again: R picks up edits
    m_initial = sim::buildScenario(m_spec, scene.n, scene.seed);
  }
  const std::string backendName(selection.backend->name());
  try {
    m_sim = std::make_unique<sim::Simulation>(std::move(selection.backend), m_initial, params,
                                              startTime);
  } catch (const sim::NonFiniteState& e) {
    throw StartAborted(e, backendName, m_scene.n, startTime);
  } catch (const sim::InvalidParameter& e) {
    // The parameters passed the command line's checks: what is left is the snapshot's (its
    // time too large for the steps to advance it), a file bhviz cannot run (exit status 1).
    if (scene.snapshotPath.empty()) throw;
    throw sim::io::SnapshotError(scene.snapshotPath + ": " + e.what());
  }
  m_targetTime = m_sim->time();
  sampleDiagnostics(0.0, true);
  m_e0 = m_diagnostics.total();
  m_history.clear();
  m_history.push({m_diagnostics.time, 0.0, magnitude(m_diagnostics.momentum)});
}

SimSession::Advance SimSession::advance(const FrameBudget& budget) {
  Advance a;
  const Clock::time_point t0 = Clock::now();
  // A substep left running by the last frame ends first (the tuners choose the next from it).
  a.profile = std::exchange(m_settled, {});  // substeps ended since the last advance (settle)
  const auto next = [&] {
    endRunningSubstep(a.profile);
    m_sim->beginSubstep();
    ++a.substeps;
    if (!m_overlap) endRunningSubstep(a.profile);
  };
  endRunningSubstep(a.profile);
  if (budget.mode == FrameBudget::Mode::SimTime) {
    m_targetTime += budget.simTimePerFrame;
    while (m_sim->time() < m_targetTime) {
      next();
      if (msSince(t0) > budget.maxWallMs) {
        m_targetTime = m_sim->time();  // slower than real time: owe nothing
        break;
      }
    }
  } else {
    for (int s = 0; s < budget.substepsPerFrame; ++s) {
      next();
      if (msSince(t0) > budget.maxWallMs) break;
    }
    m_targetTime = m_sim->time();
  }
  a.wallMs = msSince(t0);
  return a;
}

void SimSession::endRunningSubstep(sim::StepProfile& profile) {
  if (!m_sim->substepPending()) return;
  m_sim->endSubstep();
  takeDueSample();
  profile += m_sim->lastProfile();
}

bool SimSession::settle() {
  try {
    endRunningSubstep(m_settled);  // the next advance() or step() counts it
  } catch (const sim::NonFiniteState& e) {
    halt(e);
  }
  return !m_halted;
}

std::string SimSession::takeNotice() {
  std::string line = std::move(m_haltNotice);
  m_haltNotice.clear();
  return line;
}

void SimSession::halt(const sim::NonFiniteState& e) {
  m_halted = m_paused = true;
  m_haltNotice = "bhviz: paused: " + describe(e) + " (Reset to start again)";
}

void SimSession::save(const std::string& path) {
  sim::io::formatFromExtension(path);  // a bad name costs no substep
  settle();
  if (m_halted) throw std::logic_error("the state is not finite (Reset to start again)");
  try {
    if (!current()) m_sim->requestPotential();  // for the step end the file is written at
    while (!m_sim->synchronized()) m_sim->substep();
    // A step end that computed none: its walk again, or (where the backend cannot) one step more.
    if (!m_sim->computePotentialsNow()) m_sim->advance(1);
    takeDueSample();
  } catch (const sim::NonFiniteState&) {
    m_halted = m_paused = true;
    throw;
  }
  m_targetTime = std::max(m_targetTime, m_sim->time());
  sim::io::writeSnapshot(path, m_sim->particles(), m_sim->time());
}

SimSession::Advance SimSession::step() {
  Advance a;
  const Clock::time_point t0 = Clock::now();
  a.profile = std::exchange(m_settled, {});  // as advance()
  endRunningSubstep(a.profile);
  m_sim->substep();
  takeDueSample();
  a.substeps = 1;
  a.profile += m_sim->lastProfile();
  a.wallMs = msSince(t0);
  m_targetTime = m_sim->time();
  return a;
}

SimSession::Frame SimSession::frame(const FrameBudget& budget, bool singleStep) {
  Frame f;
  if (singleStep) m_paused = true;
  if (m_paused && !singleStep) settle();  // a substep the last frame left running
  if (!m_halted && m_paused && !singleStep) samplePausedState();
  if (!m_halted && (!m_paused || singleStep)) {
    if (singleStep) m_sim->requestPotential();  // the window samples after it
    try {
      f.advance = singleStep ? step() : advance(budget);
      f.stepped = true;
      m_ranks = m_sim->backend().rankReports();
    } catch (const sim::NonFiniteState& e) {
      halt(e);
    }
  }
  f.notice = takeNotice();  // this frame's halt, or one found since the last frame
  return f;
}

SimSession::Advance SimSession::advanceInterval() {
  sim::StepProfile running;
  endRunningSubstep(running);  // none in a headless session; one would end outside this interval
  Advance a;
  const Clock::time_point t0 = Clock::now();
  const std::uint64_t before = m_sim->substeps();
  const sim::StepProfile totalBefore = m_sim->totalProfile();
  m_sim->advance(1);
  a.substeps = static_cast<int>(m_sim->substeps() - before);
  a.profile = m_sim->totalProfile();
  a.profile -= totalBefore;
  a.wallMs = msSince(t0);
  m_targetTime = m_sim->time();
  return a;
}

bool SimSession::sampleDiagnostics(double intervalSeconds, bool force) {
  const Clock::time_point now = Clock::now();
  if (!force && std::chrono::duration<double>(now - m_lastSample).count() < intervalSeconds) {
    return false;
  }
  if (!settle()) return false;  // a sample of a checked state only
  // The potentials are current where every step ends (sim::evaluatesPotential) and, on demand,
  // only where asked for. A sample due elsewhere asks for them and waits for the next step end,
  // which the next frames' substeps reach (takeDueSample): cheaper than a second walk; a forced
  // one is taken now but kept off the plot (and taken again there). A paused session samples in
  // frame() (samplePausedState).
  if (!current()) {
    m_sim->requestPotential();
    m_sampleDue = true;
    if (!force) return false;
  }
  takeSample(now);
  return true;
}

void SimSession::takeSample(Clock::time_point now) {
  m_lastSample = now;
  m_sampleDue = !current();
  m_diagnostics = m_sim->diagnostics();
  if (m_e0 != 0.0 && current()) {
    m_history.push({m_diagnostics.time, (m_diagnostics.total() - m_e0) / std::abs(m_e0),
                    magnitude(m_diagnostics.momentum)});
  }
}

void SimSession::samplePausedState() {
  if (current() || !m_sim->synchronized()) return;
  if (m_sim->computePotentialsNow()) takeSample(Clock::now());
}

void SimSession::takeDueSample() {
  if (m_sampleDue && current()) takeSample(Clock::now());
}

bool SimSession::current() const { return m_sim->synchronized() && m_sim->potentialsCurrent(); }

std::string SimSession::applyParams(const sim::SimParams& params) {
  settle();  // the running substep's measurements belong to the parameters it ran under
  try {
    m_sim->setParams(params);  // validates against sim's ranges and the backend's
    return {};
  } catch (const sim::InvalidParameter& e) {
    std::string why = e.what();
    for (char& c : why) c = c == '\n' ? ' ' : c;
    return "bhviz: " + why + "; the simulation keeps its parameters";
  }
}

void SimSession::restore(const sim::KeptState& state) {
  settle();  // a substep still running ends; a non-finite one is what the restore leaves behind
  m_haltNotice.clear();
  m_sim->restore(state);
  m_halted = false;
  m_paused = true;
}

}  // namespace bhviz::app
