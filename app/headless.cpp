#include "app/headless.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>
#include <utility>

#include "app/core/backend_select.h"
#include "app/core/output.h"
#include "app/core/sim_session.h"
#include "app/scene/frames.h"
#include "app/scene/scenario_camera.h"
#include "sim/ic/initial_conditions.h"
#include "sim/ic/scenario_file.h"
#include "sim/io/snapshot.h"

namespace bhviz::app {

namespace {

/// Long runs print about this many progress lines, not one per step.
constexpr int kProgressLines = 20;

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

sim::Diagnostics unknownDiagnostics() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  sim::Diagnostics d;
  d.time = d.mass = d.kinetic = d.potential = nan;
  d.momentum = d.angularMomentum = {nan, nan, nan};
  return d;
}

void printHeader(std::ostream& out, const Options& o, const sim::Simulation& sim) {
  const sim::SimParams& p = o.params;
  const int threads = omp_get_max_threads();
  out << "bhviz: " << o.scenario << ", N = " << o.n << ", seed " << o.seed << ", " << o.steps
      << " steps of dtMax = " << p.dtMax << " (" << sim::toString(p.stepping) << "), mac "
      << sim::toString(p.mac) << ", theta " << p.theta << ", softening " << p.softening << ", "
      << sim.backend().name() << " backend, " << threads
      << (threads == 1 ? " thread\n" : " threads\n");
}

void printProgress(std::ostream& out, int step, int steps, const sim::Simulation& sim, double e0,
                   double msPerStep) {
  const double e = sim.diagnostics().total();
  char line[200];
  std::snprintf(line, sizeof line,
                "step %*d/%d  t = %-10.6g E = %-14.8g dE/E = %-+10.3e %9.2f ms/step",
                static_cast<int>(std::to_string(steps).size()), step, steps, sim.time(), e,
                (e - e0) / std::abs(e0), msPerStep);
  out << line << '\n' << std::flush;
}

// --save-every: DIR/snapshot_SSSSSS.tipsy, numbered by step (0 = the initial state).
void saveNumbered(const Options& o, const sim::Simulation& sim, int step) {
  char name[40];
  std::snprintf(name, sizeof name, "snapshot_%06d.tipsy", step);
  sim::io::writeSnapshot(o.saveDir + "/" + name, sim.particles(), sim.time());
}

// Runs the steps; a non-finite state ends the run early and is recorded in the report.
// `frames` (may be null) renders after every completed step.
void stepAll(SimSession& session, const Options& o, RunReport& report, std::ostream& out,
             std::ostream& err, FrameRecorder* frames) {
  const sim::Simulation& sim = session.simulation();
  const int every = o.steps <= kProgressLines ? 1 : (o.steps + kProgressLines - 1) / kProgressLines;
  double msSincePrint = 0.0;
  int stepsSincePrint = 0;
  for (int step = 1; step <= o.steps; ++step) {
    const Clock::time_point t0 = Clock::now();
    try {
      session.advanceInterval();
    } catch (const sim::NonFiniteState& e) {
      report.wallMs += msSince(t0);
      report.aborted = true;
      report.abortReason = oneLine(e.what());
      report.nonFiniteIds = e.ids;
      err << "bhviz: error: step " << step << ", t = " << sim.time() << ": " << describe(e) << '\n';
      return;
    }
    const double ms = msSince(t0);
    report.wallMs += ms;
    report.steps = step;
    msSincePrint += ms;
    ++stepsSincePrint;
    if (!o.quiet && (step % every == 0 || step == o.steps)) {
      printProgress(out, step, o.steps, sim, report.start.total(), msSincePrint / stepsSincePrint);
      msSincePrint = 0.0;
      stepsSincePrint = 0;
    }
    // After the step's timing: pictures are not part of the simulation's cost.
    if (frames) frames->afterStep(sim, step);
    if (o.saveEvery > 0 && step % o.saveEvery == 0) saveNumbered(o, sim, step);
  }
}

// The session's first force evaluation was non-finite: --stats is still written, marked
// aborted, with what is known; then the error goes on to main's one line.
void writeAbortedAtStart(const Options& o, const StartAborted& e) {
  if (o.statsPath.empty()) return;
  RunReport report;
  report.scenario = o.scenario;
  report.n = e.n;
  report.seed = o.seed;
  report.backend = e.backend;
  report.threads = omp_get_max_threads();
  report.params = o.params;
  report.start = report.end = unknownDiagnostics();
  report.time = e.time;
  report.aborted = true;
  report.abortReason = "initial force evaluation: " + oneLine(e.what());
  report.nonFiniteIds = e.ids;
  writeStats(o.statsPath, report);
}

SceneSettings sceneOf(const Options& o) {
  SceneSettings scene;
  scene.scenario = o.scenario;
  scene.n = o.n;
  scene.seed = o.seed;
  scene.backend = o.backend;
  scene.rebalance = o.rebalance;
  scene.snapshotPath = o.loadPath;
  return scene;
}

}  // namespace

int runHeadless(const Options& options, std::ostream& out, std::ostream& err) {
  Options o = options;
  if (o.quitAfter > 0) o.steps = std::min(o.steps, o.quitAfter);
  if (o.threads > 0) omp_set_num_threads(o.threads);
  // The GL context before any physics: without one, the run would be for nothing.
  std::unique_ptr<FrameRecorder> frames;
  if (o.frames.wanted()) {
    frames = std::make_unique<FrameRecorder>(o.frames, o.params.maxBinDepth);
    frames->setCameraScript(cameraScript(o.camera));
  }
  // --load: the particles come from a snapshot (a corrupt one throws SnapshotError: exit 1),
  // read before the backend is chosen so that N is known. The run starts at the file's time.
  std::unique_ptr<SimSession> session;
  try {
    session = std::make_unique<SimSession>(sceneOf(o), o.params);
  } catch (const StartAborted& e) {
    writeAbortedAtStart(o, e);
    throw;
  }
  if (!o.loadPath.empty()) {
    o.n = session->scene().n;
    o.scenario = "file " + o.loadPath;
    if (o.frames.pickId >= static_cast<std::int64_t>(o.n)) {
      throw UsageError("--pick = " + std::to_string(o.frames.pickId) + " is out of range: " +
                       o.loadPath + " holds " + std::to_string(o.n) + " particles");
    }
  }
  if (!o.quiet && !session->backendNote().empty()) out << session->backendNote() << '\n';
  for (const std::string& line : session->notes()) err << "bhviz: note: " << line << '\n';
  const sim::Simulation& sim = session->simulation();
  if (!o.quiet) printHeader(out, o, sim);
  if (frames) {
    if (!o.quiet) out << frames->description() << '\n';
    frames->start(sim);
  }
  if (o.saveEvery > 0) saveNumbered(o, sim, 0);

  RunReport report;
  report.scenario = o.scenario;
  report.n = o.n;
  report.seed = o.seed;
  report.backend = std::string(sim.backend().name());
  report.threads = omp_get_max_threads();
  report.params = sim.params();
  report.start = sim.diagnostics();
  stepAll(*session, o, report, out, err, frames.get());

  // Simulation's totals cover its substeps only, not the initial force evaluation.
  report.substeps = sim.substeps();
  report.time = sim.time();
  report.profile = sim.totalProfile();
  report.ranks = sim.backend().rankReports();
  report.tree = sim.backend().treeStatistics();
  report.rebuild = sim.rebuildState();
  try {
    report.end = sim.diagnostics();
  } catch (const std::exception&) {
    // After an abort the state may not support diagnostics; the stats say "unknown" (null).
    report.end = unknownDiagnostics();
  }
  if (!o.statsPath.empty()) writeStats(o.statsPath, report);
  if (report.aborted) return 1;
  if (!o.savePath.empty()) sim::io::writeSnapshot(o.savePath, sim.particles(), sim.time());

  if (!o.dumpAccelPath.empty()) {
    session->recomputeForces();
    writeAccelCsv(o.dumpAccelPath, sim.particles());
  }
  if (frames) frames->finish(sim);
  if (!o.quiet) {
    if (frames && frames->framesWritten() > 0) {
      std::string where = o.frames.framesDir;
      if (!o.frames.videoPath.empty()) where += (where.empty() ? "" : " and ") + o.frames.videoPath;
      out << "bhviz: " << frames->framesWritten() << " frames in " << where << '\n';
    }
    out << "bhviz: " << report.steps << " steps, " << report.substeps << " substeps in "
        << report.wallMs / 1000.0 << " s; energy drift "
        << (report.end.total() - report.start.total()) / std::abs(report.start.total()) << '\n';
  }
  return 0;
}

}  // namespace bhviz::app
