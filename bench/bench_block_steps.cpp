// Block against shared time steps at equal accuracy, on any scenario: for shared steps of
// several sizes and block steps of several η, each under several tree-rebuild policies, the wall
// time to reach a fixed simulation time, where it went (tree build, moments and groups, walk),
// and two error measures: the final relative energy error, and the position error against a
// reference run (block steps with a smaller η, a shorter longest step than any run and deeper bins,
// tree rebuilt at every force evaluation), matched by particle id, in units of the initial
// half-mass radius. The energy error is one number for the whole system, where errors of opposite
// sign cancel and a few badly integrated particles barely show; the position error is per particle,
// so its 99th percentile sees them. GOTHIC reports a 3–5× speed-up of block steps.
//
//   bench_block_steps --backend cuda --scenario m31 --n 1000000 --time 0.5 --rebuild auto every 4
//
// Prints a header (device, N, scenario, end time, the command line, the length scale) and a
// Markdown table, the reference's row first; --csv also writes the rows as CSV. Then, with
// --shells or --by-bin, where each run's errors sit; and each block run against the shared runs
// at its p99 (block_steps_ratio.h).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_cli.h"
#include "bench/block_steps_errors.h"
#include "bench/block_steps_ratio.h"
#include "sim/direct_sum.h"
#include "sim/ic/initial_conditions.h"
#include "sim/simulation.h"
#if BHVIZ_HAVE_CUDA
#include "sim/cuda/cuda_backend.h"
#endif

using namespace bhviz::sim;
using namespace bhviz::bench;

namespace {

std::unique_ptr<Backend> makeBackend(const std::string& name, std::size_t n) {
#if BHVIZ_HAVE_CUDA
  if (name == "cuda") return cuda::makeCudaBackend(n);
#endif
  (void)n;
  if (name != "cpu") throw InvalidParameter("backend " + name + " is not available");
  return makeCpuBackend();
}

/// The header's device; throws as makeBackend does, before anything runs.
std::string deviceDescription(const std::string& backend) {
#if BHVIZ_HAVE_CUDA
  if (backend == "cuda") return cuda::deviceDescription();
#endif
  if (backend != "cpu") throw InvalidParameter("backend " + backend + " is not available");
  return backend;
}

/// "auto", "every" or K ≥ 1 → SimParams::rebuildInterval.
int parseRebuild(const std::string& text) {
  const std::optional<int> k = parseRebuildInterval(text);
  if (!k) throw InvalidParameter("--rebuild " + text + ": expected auto, every or an interval");
  return *k;
}

/// Steps of `dt` to reach `endTime`; every run must end at the same time for the position
/// comparison to mean anything, so a remainder is an error rather than a rounding.
int wholeSteps(double endTime, double dt) {
  const double steps = endTime / dt;
  if (std::lround(steps) < 1 || std::fabs(steps - std::round(steps)) > 1e-6 * steps) {
    std::ostringstream s;
    s << "--time " << endTime << " is not a whole number of steps of " << dt;
    throw InvalidParameter(s.str());
  }
  return static_cast<int>(std::lround(steps));
}

struct Result {
  double wallSeconds = 0.0;  ///< sim.advance() only
  double energyError = 0.0;  ///< |ΔE/E| at the end [1]
  std::uint64_t substeps = 0;
  std::uint64_t targets = 0;     ///< force evaluations of single particles
  std::uint64_t rebuilds = 0;    ///< tree rebuilds in advance(); the other evaluations refit
  std::uint64_t around = 0;      ///< or rebuild around their targets
  double buildMs = 0.0;          ///< bbox + keys + sort + tree, summed over substeps
  double momentsGroupsMs = 0.0;  ///< summed over substeps
  double walkMs = 0.0;           ///< summed over substeps
  /// The wall time outside every timed stage [ms]: the device idle while the host waits for it
  /// and launches the next stage, and the untimed work (the non-finite check, the host's own).
  double untimedMs = 0.0;
  /// Of untimedMs, the time the device had nothing queued (the wall time outside the device's
  /// spans from each substep's first stage to its last: the host between two substeps, its
  /// launches, its wait); the rest is the device's between stages. Negative: not measured (the
  /// CPU backend times its stages on the host).
  double idleMs = -1.0;
  Particles finalById;  ///< the state at endTime, index = id
};

/// One substep as the --trace file shows it: its targets, interactions and walk time, whether it
/// rebuilt, the rebuild tuner's fit and choice after it, and its other stages' times. Taken during
/// the run, written after.
struct TraceLine {
  std::uint64_t substep = 0;
  double time = 0.0;
  StepProfile profile;
  TreeChoice tree = TreeChoice::Rebuild;
  RebuildTunerState tuner;
  int groupSize = 0;
  double wallMs = 0.0;  ///< the host's time for the substep, sim.substep() (its wait included)
};

TraceLine traceOf(const Simulation& sim) {
  return {sim.substeps(),       sim.time(),         sim.lastProfile(),
          sim.lastTreeChoice(), sim.rebuildState(), sim.lastGroupSize()};
}

void writeTrace(std::ostream& out, const std::string& label, const TraceLine& l) {
  const InteractionCounts& c = l.profile.interactions;
  const double targets = double(c.targets);
  const RebuildTunerState& t = l.tuner;
  out << label << ',' << l.substep << ',' << l.time << ',' << targets << ','
      << double(c.cell + c.particle) / std::max(targets, 1.0) << ',' << l.profile[Stage::Walk]
      << ',' << (l.tree == TreeChoice::Rebuild ? 1 : 0) << ',' << t.age << ',' << t.evaluations
      << ',' << toString(t.fit.model) << ',' << t.samples << ',' << t.fit.b << ',' << t.fit.c << ','
      << t.rebuildMs << ',' << t.targetsPerTime << ',' << t.bestInterval << ',' << t.predictedWalkMs
      << ',' << l.groupSize << ',' << c.groups << ',' << l.profile[Stage::Predict] << ','
      << l.profile.rebuildMs() << ',' << l.profile[Stage::Moments] << ','
      << l.profile[Stage::Groups] << ',' << l.profile[Stage::Integrate] << ','
      << (l.tree == TreeChoice::AroundTargets ? 1 : 0) << ',' << l.profile[Stage::Sort] << ','
      << l.profile[Stage::Tree] << ',' << l.profile.spanMs << ',' << l.wallMs << ','
      << t.sampledProbes << '\n';
}

const char* const kTraceHeader =
    "run,substep,time,targets,interactions_per_target,walk_ms,rebuilt,age,evaluations,model,"
    "samples,b,c,rebuild_ms,targets_per_time,best_interval,predicted_walk_ms,group_size,groups,"
    "predict_ms,build_ms,moments_ms,groups_ms,integrate_ms,around_targets,sort_ms,tree_ms,span_ms,"
    "wall_ms,sampled_probes\n";

/// `trace`: where each substep's line goes (writeTrace), or null.
Result run(const std::string& backend, const Particles& ic, const SimParams& p, double endTime,
           std::ostream* trace = nullptr, const std::string& label = {}) {
  const int steps = wholeSteps(endTime, p.dtMax);
  Simulation sim(makeBackend(backend, ic.size()), ic, p);
  const double e0 = sim.diagnostics().total();
  // Counted like the substeps and the profile: the constructor's build is not the run's.
  const std::uint64_t rebuilds0 = sim.rebuilds();
  const std::uint64_t around0 = sim.rebuildState().aroundTargets;
  std::vector<TraceLine> lines;  // written after the clock stops
  const auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {  // Simulation::advance(steps), substep by substep
    do {
      const auto begun = std::chrono::steady_clock::now();
      sim.substep();
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begun)
              .count();
      if (trace != nullptr) {
        lines.push_back(traceOf(sim));
        lines.back().wallMs = ms;
      }
    } while (!sim.synchronized());
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (trace != nullptr) {
    for (const TraceLine& l : lines) writeTrace(*trace, label, l);
    *trace << std::flush;
  }
  const StepProfile& s = sim.totalProfile();
  Result r;
  r.wallSeconds = wall;
  r.energyError = std::fabs((sim.diagnostics().total() - e0) / e0);
  r.substeps = sim.substeps();
  r.targets = s.interactions.targets;
  r.rebuilds = sim.rebuilds() - rebuilds0;
  r.around = sim.rebuildState().aroundTargets - around0;
  r.buildMs = s.rebuildMs();
  r.momentsGroupsMs = s[Stage::Moments] + s[Stage::Groups];
  r.walkMs = s[Stage::Walk];
  r.untimedMs = 1e3 * wall - s.total();
  if (s.spanMs > 0.0) r.idleMs = 1e3 * wall - s.spanMs;
  r.finalById = sortedById(sim.particles());
  return r;
}

/// One run as the table shows it.
struct Row {
  std::string mode;  ///< reference, shared or block
  double dtOrEta = 0.0;
  std::string rebuild;
  Result result;
  ErrorSummary error;
};

const char* const kTableHeader =
    "| mode | dt or η | rebuild | substeps | force evaluations / N | rebuilds (+ around targets) | "
    "wall s | build ms | moments+groups ms | walk ms | untimed ms (device idle) | |ΔE/E| | "
    "Δx median / r_h | Δx p99 / r_h |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
// New columns go last, so that the CSVs of earlier runs still read alike.
const char* const kCsvHeader =
    "scenario,n,mode,dt_or_eta,rebuild,substeps,force_evaluations_per_n,rebuilds,wall_s,build_ms,"
    "moments_groups_ms,walk_ms,energy_error,dx_median,dx_p99,untimed_ms,around_targets,idle_ms\n";

void printRow(const Row& row, std::size_t n) {
  const Result& r = row.result;
  char untimed[64];
  if (r.idleMs >= 0.0) {
    std::snprintf(untimed, sizeof untimed, "%.1f (%.1f)", r.untimedMs, r.idleMs);
  } else {
    std::snprintf(untimed, sizeof untimed, "%.1f", r.untimedMs);
  }
  std::printf(
      "| %s | %.4g | %s | %llu | %.1f | %llu (+ %llu) | %.3f | %.1f | %.1f | %.1f | %s | %.2e | "
      "%.2e | %.2e |\n",
      row.mode.c_str(), row.dtOrEta, row.rebuild.c_str(),
      static_cast<unsigned long long>(r.substeps), double(r.targets) / double(n),
      static_cast<unsigned long long>(r.rebuilds), static_cast<unsigned long long>(r.around),
      r.wallSeconds, r.buildMs, r.momentsGroupsMs, r.walkMs, untimed, r.energyError,
      row.error.median, row.error.p99);
  std::fflush(stdout);
}

void writeCsvRow(std::ostream& csv, const Row& row, const std::string& scenario, std::size_t n) {
  const Result& r = row.result;
  csv << scenario << ',' << n << ',' << row.mode << ',' << row.dtOrEta << ',' << row.rebuild << ','
      << r.substeps << ',' << double(r.targets) / double(n) << ',' << r.rebuilds << ','
      << r.wallSeconds << ',' << r.buildMs << ',' << r.momentsGroupsMs << ',' << r.walkMs << ','
      << r.energyError << ',' << row.error.median << ',' << row.error.p99 << ',' << r.untimedMs
      << ',' << r.around << ',';
  if (r.idleMs >= 0.0) csv << r.idleMs;
  csv << '\n' << std::flush;  // a long sweep that dies still leaves its finished rows
}

struct Options {
  std::string backend = "cpu", scenario = "galaxy", csvPath, tracePath;
  std::size_t n = 100000;
  double endTime = 0.5;                                              ///< [time]
  std::vector<float> sharedDts{1.0f / 128, 1.0f / 256, 1.0f / 512};  ///< [time]
  std::vector<float> etas{0.4f, 0.2f, 0.1f};                         ///< [1]
  std::vector<std::string> rebuilds{"auto", "every"};
  float blockDtMax = 1.0f / 16;         ///< [time]
  int depth = 8;                        ///< the block runs' deepest bin [1]
  std::optional<float> referenceEta;    ///< [1]; default: the smallest η / 4
  std::optional<int> referenceDepth;    ///< [1]; default: its shortest step the block runs' / 4
  std::optional<float> referenceDtMax;  ///< [time]; default: half the runs' shortest longest step
  std::optional<float> softening;       ///< [length]; default: the scenario's
  /// The force's accuracy, the same in every run and the reference (default: SimParams'). With
  /// tighter forces the position error's floor (force errors, amplified by the orbits) drops
  /// below the time steps' errors.
  std::string mac;
  std::optional<float> macParam, theta, expansionRatio, expansionBudget;
  std::optional<int> nGroup;  ///< N_group in every run (default: SimParams')
  int shells = 0;      ///< also the median Δx in this many shells of initial radius (0: none)
  bool byBin = false;  ///< also each run's position errors by the particles' final time bin
};

/// A configuration to run. Its SimParams and its step against the end time are checked before
/// anything runs, so that a bad value in the sweep fails at once, not after the reference run.
struct Config {
  std::string mode;
  double dtOrEta;
  SimParams params;
};

std::vector<Config> sweep(const Options& o, const SimParams& base) {
  std::vector<Config> out;
  auto add = [&](const char* mode, double value, SimParams p) {
    for (const std::string& text : o.rebuilds) {
      p.rebuildInterval = parseRebuild(text);
      validate(p);
      wholeSteps(o.endTime, p.dtMax);
      out.push_back({mode, value, p});
    }
  };
  for (float dt : o.sharedDts) {
    SimParams p = base;
    p.stepping = TimeStepping::Shared;
    p.dtMax = dt;
    add("shared", dt, p);
  }
  for (float eta : o.etas) {
    SimParams p = base;
    p.stepping = TimeStepping::Block;
    p.dtMax = o.blockDtMax;
    p.maxBinDepth = o.depth;
    p.eta = eta;
    add("block", eta, p);
  }
  return out;
}

SimParams referenceParams(const Options& o, const SimParams& base) {
  SimParams p = base;
  p.stepping = TimeStepping::Block;
  // Every particle's step in the reference must be shorter than in any run it judges: where the
  // reference gave the halo the block runs' dtMax (as it did until 2026-11-27), a shared run of
  // smaller steps was measured against the reference's own error there (its median Δx floored).
  float longest = o.blockDtMax;
  for (float dt : o.sharedDts) longest = std::min(longest, dt);
  p.dtMax = o.referenceDtMax.value_or(longest / 2.0f);
  // Its shortest step a quarter of the block runs' shortest (bins from its own dtMax).
  const double finest = double(o.blockDtMax) / std::ldexp(1.0, o.depth + 2);
  p.maxBinDepth = o.referenceDepth.value_or(
      std::max(0, static_cast<int>(std::ceil(std::log2(double(p.dtMax) / finest) - 1e-9))));
  if (o.referenceEta) {
    p.eta = *o.referenceEta;
  } else if (!o.etas.empty()) {
    p.eta = *std::min_element(o.etas.begin(), o.etas.end()) / 4.0f;
  } else {
    throw InvalidParameter("give --eta or --reference-eta");
  }
  p.rebuildInterval = 1;
  validate(p);
  wholeSteps(o.endTime, p.dtMax);
  return p;
}

std::string joined(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

void printHeader(const Options& o, const SimParams& ref, double scale,
                 const std::string& commandLine) {
  std::printf("device: %s | N = %zu | scenario %s | end time %g | %s\n",
              deviceDescription(o.backend).c_str(), o.n, o.scenario.c_str(), o.endTime,
              commandLine.c_str());
  std::printf(
      "softening %g | mac %s, parameter %g (0: its default), theta %g, expansion ratio %g, "
      "budget %g | "
      "block: dtMax %g, depth %d | reference: block, η %g, dtMax %g, depth %d, rebuild every | "
      "length scale r_h = %.4g (initial half-mass radius)\n\n",
      ref.softening, std::string(toString(ref.mac)).c_str(), ref.macParam, ref.theta,
      ref.expansionRatio, ref.expansionBudget, o.blockDtMax, o.depth, ref.eta, ref.dtMax,
      ref.maxBinDepth, scale);
  std::cout << kTableHeader;
}

void runAll(const Options& o, const std::string& commandLine) {
  const Particles ic = makeScenario(o.scenario, o.n, 1);
  SimParams base;
  base.softening = o.softening.value_or(scenarioInfo(o.scenario).softening);
  if (!o.mac.empty()) {
    const std::optional<MacKind> mac = parseMacKind(o.mac);
    if (!mac)
      throw InvalidParameter("--mac " + o.mac + ": expected bh, bonsai, multipole or acceleration");
    base.mac = *mac;
  }
  if (o.macParam) base.macParam = *o.macParam;
  if (o.theta) base.theta = *o.theta;
  if (o.expansionRatio) base.expansionRatio = *o.expansionRatio;
  if (o.expansionBudget) base.expansionBudget = *o.expansionBudget;
  if (o.nGroup) base.nGroup = *o.nGroup;
  const SimParams refParams = referenceParams(o, base);
  const std::vector<Config> configs = sweep(o, base);
  const double scale = halfMassRadius(ic);
  printHeader(o, refParams, scale, commandLine);
  std::ofstream csv;
  if (!o.csvPath.empty()) {
    csv.open(o.csvPath);
    if (!csv) throw InvalidParameter("cannot write " + o.csvPath);
    csv << kCsvHeader;
  }
  std::ofstream trace;
  if (!o.tracePath.empty()) {
    trace.open(o.tracePath);
    if (!trace) throw InvalidParameter("cannot write " + o.tracePath);
    trace << kTraceHeader;
  }
  std::ostream* traceOut = trace.is_open() ? &trace : nullptr;
  auto report = [&](const Row& row) {
    printRow(row, o.n);
    if (csv.is_open()) writeCsvRow(csv, row, o.scenario, o.n);
  };

  Row ref{"reference", refParams.eta, "every", run(o.backend, ic, refParams, o.endTime), {}};
  report(ref);
  std::uint64_t finest = 0;  // the most force evaluations of any run
  // --by-bin alone still splits the worst 1 % by radius, in eight shells.
  const Shells shells = shellsByRadius(ic, o.shells > 0 ? o.shells : (o.byBin ? 8 : 0));
  std::vector<std::pair<std::string, std::vector<double>>> byShell;  // --shells: run, medians
  std::string byBin;        // --by-bin: every run's tables, printed after the main one
  EqualP99ByMode equalP99;  // each block run against the shared runs of its rebuild mode
  for (const Config& c : configs) {
    const std::string rebuild = rebuildIntervalName(c.params.rebuildInterval);
    std::ostringstream label;
    label << c.mode << ' ' << c.dtOrEta << ' ' << rebuild;
    Row row{c.mode,
            c.dtOrEta,
            rebuild,
            run(o.backend, ic, c.params, o.endTime, traceOut, label.str()),
            {}};
    // Each particle's error once, for the summary, the shells and the bins.
    const std::vector<double> dx =
        positionErrors(row.result.finalById, ref.result.finalById, scale);
    row.error = summarizeErrors(dx);
    if (o.shells > 0) {
      byShell.emplace_back(label.str(), shellMedians(row.result.finalById, dx, shells));
    }
    if (o.byBin) {
      byBin += errorsByBin(label.str(), row.result.finalById, dx, shells, scale, c.params.dtMax);
    }
    row.result.finalById = Particles{};  // N particles per row add up over a long sweep
    report(row);
    equalP99.add(rebuild, c.mode == "shared",
                 {label.str(), double(row.result.targets) / double(o.n), row.result.wallSeconds,
                  row.error.p99});
    finest = std::max(finest, row.result.targets);
  }
  // Where the median's error comes from: each shell of equal count by initial radius.
  if (!byShell.empty()) std::fputs(shellMediansTable(shells, scale, byShell).c_str(), stdout);
  std::fputs(byBin.c_str(), stdout);
  std::fputs(equalP99Table(equalP99.rows()).c_str(), stdout);
  // A reference no finer than a run it judges measures its own error as much as the run's.
  if (finest > ref.result.targets) {
    std::printf(
        "\nnote: the reference made %.1f force evaluations per particle, a run %.1f: "
        "lower --reference-eta (or --block-dt-max) for a finer reference\n",
        double(ref.result.targets) / double(o.n), double(finest) / double(o.n));
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bhviz: block against shared time steps at equal energy and position error"};
  Options o;
  app.add_option("--backend", o.backend, "cpu or cuda");
  app.add_option("--scenario", o.scenario);
  app.add_option("--n", o.n);
  app.add_option("--time", o.endTime, "simulation time to run (a whole number of every step)");
  app.add_option("--shared-dt", o.sharedDts, "shared step sizes");
  app.add_option("--eta", o.etas, "block-step accuracy parameters");
  app.add_option("--rebuild", o.rebuilds,
                 "tree-rebuild policies, each run for every configuration: auto, every or K");
  app.add_option("--block-dt-max", o.blockDtMax);
  app.add_option("--max-bin-depth", o.depth);
  // CLI11 2.1 has no std::optional options: these set theirs only when given.
  app.add_option_function<float>(
      "--reference-eta", [&](const float& v) { o.referenceEta = v; },
      "η of the reference run (default: the smallest --eta / 4)");
  app.add_option_function<int>(
      "--reference-depth", [&](const int& v) { o.referenceDepth = v; },
      "deepest bin of the reference run (default: its shortest step a quarter of the block "
      "runs')");
  app.add_option_function<float>(
      "--reference-dt-max", [&](const float& v) { o.referenceDtMax = v; },
      "the reference's longest step (default: half the shortest --shared-dt or --block-dt-max)");
  app.add_option_function<float>(
      "--softening", [&](const float& v) { o.softening = v; },
      "Plummer softening (default: the scenario's)");
  app.add_option("--mac", o.mac,
                 "the force's MAC in every run: bh, bonsai, multipole or acceleration");
  app.add_option_function<float>(
      "--mac-param", [&](const float& v) { o.macParam = v; },
      "Δ_mul for multipole, α for acceleration (default: the MAC's)");
  app.add_option_function<float>(
      "--theta", [&](const float& v) { o.theta = v; }, "opening angle for bh and bonsai");
  app.add_option_function<float>(
      "--expansion-ratio", [&](const float& v) { o.expansionRatio = v; },
      "the far cells' expansion in every run and the reference (default: SimParams')");
  app.add_option_function<float>(
      "--expansion-budget", [&](const float& v) { o.expansionBudget = v; },
      "the far cells' expansion by mass in every run and the reference (default: SimParams')");
  app.add_option_function<int>(
      "--n-group", [&](const int& v) { o.nGroup = v; },
      "N_group in every run (default: SimParams')");
  app.add_option("--shells", o.shells,
                 "also print each run's median position error in this many shells of equal count "
                 "by initial radius");
  app.add_flag("--by-bin", o.byBin,
               "also print each run's position errors by final time bin, and where its worst 1 % "
               "are");
  app.add_option("--csv", o.csvPath, "also write the rows as CSV");
  app.add_option(
      "--trace", o.tracePath,
      "write every substep of every run (targets, walk, rebuild, the tuner's fit) as CSV");
  if (const auto status = bhviz::bench::parseOrExit(app, argc, argv)) return *status;
  try {
    runAll(o, joined(argc, argv));
  } catch (const InvalidParameter& e) {
    std::cerr << "bench_block_steps: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "bench_block_steps: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
