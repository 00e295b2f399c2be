#include "app/core/cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <utility>

#include "app/core/cli_args.h"
#include "app/core/cli_values.h"
#include "app/core/lesson.h"
#include "app/core/output.h"
#include "app/core/output_paths.h"
#include "app/core/sweep.h"
#include "sim/accuracy.h"
#include "sim/common/keys.h"
#include "sim/ic/initial_conditions.h"
#include "sim/ic/scenario_file.h"
#include "sim/io/snapshot.h"

#ifndef BHVIZ_VERSION
#define BHVIZ_VERSION "unknown"
#endif

namespace bhviz::app {

using cli::defineFrameOptions;
using cli::frameOptions;
using cli::RawArgs;
using cli::videoOption;

namespace {

BackendChoice toBackend(const std::string& text) {
  if (text == "cpu") return BackendChoice::Cpu;
  if (text == "cuda") return BackendChoice::Cuda;
  if (text == "auto") return BackendChoice::Auto;
  throw UsageError("--backend = " + quoted(text) + " is not known: must be cpu, cuda or auto");
}

// A built-in name, or a scenario file read and validated in full here (sim/ic/scenario_file.h).
sim::ScenarioSpec toScenario(const std::string& name) {
  if (sim::isScenarioPath(name)) {
    try {
      return sim::loadScenarioFile(name);
    } catch (const sim::ScenarioError& e) {
      throw UsageError("--scenario: " + oneLine(e.what()));
    }
  }
  std::string known;
  for (const sim::ScenarioInfo& s : sim::scenarios()) {
    if (s.name == name) return sim::builtinScenario(name);
    known += (known.empty() ? "" : ", ") + s.name;
  }
  throw UsageError("--scenario = " + quoted(name) + " is not known: must be one of " + known +
                   ", or a scenario file (a path containing '/' or ending in .json)");
}

// Snapshots in and out (sim/io/snapshot.h).
void defineSnapshotOptions(CLI::App& app, RawArgs& r) {
  app.add_option("--load", r.load,
                 "Start from a Tipsy or HDF5 snapshot (the format read from the file) instead of "
                 "--scenario; the run starts at the file's time (Tipsy header, HDF5 Header/Time)")
      ->type_name("FILE");
  app.add_option("--save", r.save, "After the last step, write a snapshot (.tipsy or .hdf5)")
      ->type_name("FILE");
  app.add_option("--save-every", r.saveEvery,
                 "A Tipsy snapshot of the initial state and then every K steps: "
                 "DIR/snapshot_000000.tipsy, ... numbered by step (DIR is created if missing)")
      ->type_name("K DIR")
      ->expected(2);
}

void defineOptions(CLI::App& app, RawArgs& r) {
  app.add_flag("--headless", r.headless,
               "Run without a window (no display needed); without it bhviz opens the window");
  app.add_option("--quit-after", r.quitAfter,
                 "End after K frames in the window, or after K steps headless, >= 1")
      ->type_name("K");
  app.add_option("--scenario", r.scenario,
                 "A built-in scenario (plummer, hernquist, galaxy, merger, cold-collapse, "
                 "milky-way, major-merger, minor-merger, mw-andromeda, teaching, nfw, m31, "
                 "uniform) or a scenario file (a path with '/' or ending in .json; "
                 "assets/scenarios/README.md) (default merger)")
      ->type_name("NAME|FILE");
  app.add_option("--n", r.n,
                 "Number of particles, in [1, 1000000000] (default: the scenario's, 20000 for "
                 "the first four); every component's count is scaled to it")
      ->type_name("N");
  app.add_option("--steps", r.steps,
                 "dtMax intervals to run, >= 0 (default 10); each ends with every particle "
                 "synchronised, also with block steps")
      ->type_name("K");
  app.add_option("--theta", r.theta, "Opening angle, in (0, 1.5] (default 0.5)")->type_name("T");
  app.add_option("--mac", r.mac,
                 "Acceptance criterion: bh, bonsai, multipole or acceleration "
                 "(default acceleration: its first evaluation is the bh test with --theta)")
      ->type_name("NAME");
  app.add_option("--mac-param", r.macParam,
                 "Delta_mul for multipole, alpha for acceleration; 0 = the MAC's default")
      ->type_name("X");
  app.add_option("--n-leaf", r.nLeaf, "Most particles in a leaf, in [1, 1024] (default 16)")
      ->type_name("L");
  app.add_option("--n-group", r.nGroup, "Most particles per walk group, in [1, 1024] (default 64)")
      ->type_name("G");
  app.add_option("--softening", r.softening, "Plummer softening, >= 0 (default: the scenario's)")
      ->type_name("E");
  app.add_option("--eta", r.eta, "Block-step accuracy, > 0 (default 0.2)")->type_name("H");
  auto* dt = app.add_option("--dt", r.dt,
                            "dtMax: the shared step, or the longest block step (default: the "
                            "scenario's dt; with --block-steps 8 times that)")
                 ->type_name("DT");
  app.add_option("--max-bin-depth", r.maxBinDepth,
                 "Deepest block bin: dt >= dtMax / 2^D, in [0, 20] (default 8)")
      ->type_name("D");
  app.add_option("--rebuild", r.rebuild,
                 "Tree rebuilds: auto (the interval tuned from the measured walk times), every "
                 "(each force evaluation), or every K-th evaluation; between rebuilds the tree "
                 "is refitted (default auto)")
      ->type_name("auto|every|K");
  auto* shared = app.add_option("--shared-dt", r.sharedDt, "Shared steps of DT for every particle")
                     ->type_name("DT");
  auto* block = app.add_flag("--block-steps", r.blockSteps,
                             "Power-of-two block steps per particle (dtMax from --dt)");
  shared->excludes(block);
  shared->excludes(dt);
  app.add_option("--quadrupole", r.quadrupole, "Quadrupole cell terms: on or off (default on)")
      ->type_name("on|off");
  app.add_option("--curve", r.curve, "Space-filling curve: hilbert or morton (default hilbert)")
      ->type_name("NAME");
  app.add_option("--p2p", r.p2p,
                 "Near field: plain (each target sums its leaves) or mutual (each near pair once, "
                 "Newton's third law; the same forces to fp32 rounding) (default plain)")
      ->type_name("plain|mutual");
  std::ostringstream expansionHelp;
  expansionHelp << "Far cells: those at least (group radius)/RHO from their group's centre are "
                   "expanded about it once per group instead of applied to each particle; in [0, "
                << sim::kExpansionRatioMax << "], 0 = none (default "
                << sim::defaultSimParams().expansionRatio << ")";
  app.add_option("--expansion-ratio", r.expansionRatio, expansionHelp.str())->type_name("RHO");
  std::ostringstream budgetHelp;
  budgetHelp << "Far cells by mass: also a nearer cell whose series' error bound is below K "
                "times the MAC's tolerance and the group's smallest |a_old| (light cells go "
                "nearer than heavy ones); in [0, "
             << sim::kExpansionBudgetMax
             << "], 0 = by distance alone; --expansion-ratio 0 turns both off (default "
             << sim::defaultSimParams().expansionBudget << ")";
  app.add_option("--expansion-budget", r.expansionBudget, budgetHelp.str())->type_name("K");
  app.add_option("--backend", r.backend, "cpu, cuda or auto (default auto)")->type_name("NAME");
  app.add_option("--seed", r.seed, "Initial-condition seed (default: the scenario's, 1)")
      ->type_name("S");
  app.add_option("--threads", r.threads, "OpenMP threads, in [1, 4096] (default: OpenMP's)")
      ->type_name("T");
  app.add_option("--rebalance", r.rebalance,
                 "Under mpirun: cut the domains again at a full step only when the measured work's "
                 "imbalance (max / mean over ranks), or its growth since the last cut, passes R "
                 "(in [1, 100], default 1.02) and the time that cost has paid for the last cut; 0: "
                 "at every full step. The start's cut by counts is "
                 "followed by cuts by the measured work at the first two full steps")
      ->type_name("R");
  app.add_option("--stats", r.stats, "Write run statistics as JSON")->type_name("FILE.json");
  app.add_option("--dump-accel", r.dumpAccel,
                 "After the run, recompute every force and write them as CSV, sorted by id")
      ->type_name("FILE.csv");
  app.add_flag("--quiet", r.quiet, "No progress lines");
  app.add_option("--sweep", r.sweep,
                 "Accuracy sweep instead of a run (with --headless and --out): error against "
                 "direct summation and cost per force evaluation over theta=FROM:TO:STEP, "
                 "mapped onto each MAC's own parameter; --mac NAME or all")
      ->type_name("theta=A:B:S");
  app.add_option("--out", r.out, "The --sweep CSV")->type_name("FILE.csv");
  app.add_option("--lesson", r.lesson,
                 "A guided lesson (bhviz --list-lessons): the window opens on it; headless, its "
                 "steps run, each printed with its question and measured answer, with a picture "
                 "per step in --frames DIR; --n sets every step's N")
      ->type_name("NAME");
  app.add_flag("--list-lessons", r.listLessons, "Print the lessons, one a line, and exit");
  defineFrameOptions(app, r);
  defineSnapshotOptions(app, r);
  app.set_version_flag("--version", BHVIZ_VERSION);
}

// sim::validate names parameters as the command line spells them ("theta = 2 is out of
// range…"); give them their dashes so the message names the option as typed.
std::string optionMessage(const CLI::App& app, const std::string& message) {
  const std::string word = message.substr(0, message.find(' '));
  if (app.get_option_no_throw("--" + word) != nullptr) return "--" + message;
  return message;
}

// The text typed for each parameter sim::validate names, by its name there.
std::map<std::string, std::string> typedValues(const CLI::App& app, const RawArgs& r) {
  std::map<std::string, std::string> typed;
  const std::pair<const char*, const std::string*> options[] = {
      {"theta", &r.theta},
      {"mac-param", &r.macParam},
      {"expansion-ratio", &r.expansionRatio},
      {"expansion-budget", &r.expansionBudget},
      {"softening", &r.softening},
      {"eta", &r.eta},
      {"dt", &r.dt}};
  for (const auto& [name, text] : options) {
    if (app.count(std::string("--") + name) > 0) typed[name] = *text;
  }
  return typed;
}

// sim::validate's "NAME = VALUE is out of range…" echoes the float it was given; a value typed
// as 1e-50 reached it as 0. Put back what the user typed, so the line names their value.
std::string echoTyped(const std::string& message, const std::map<std::string, std::string>& typed) {
  const std::size_t eq = message.find(" = ");
  const std::size_t rest = message.find(" is out of range");
  if (eq == std::string::npos || rest == std::string::npos || rest < eq) return message;
  const auto it = typed.find(message.substr(0, eq));
  if (it == typed.end()) return message;
  return message.substr(0, eq + 3) + it->second + message.substr(rest);
}

sim::SimParams physicsParams(const CLI::App& app, const RawArgs& r, const sim::ScenarioInfo& info) {
  sim::SimParams p = sim::defaultSimParams();
  auto given = [&](const char* name) { return app.count(name) > 0; };
  if (given("--mac") && r.mac != "all") {  // all: --sweep only (sweepOptions)
    const auto mac = sim::parseMacKind(r.mac);
    if (!mac) {
      throw UsageError("--mac = " + quoted(r.mac) +
                       " is not known: must be bh, bonsai, multipole or acceleration");
    }
    p.mac = *mac;
  }
  if (given("--curve")) {
    const auto curve = sim::parseCurve(r.curve);
    if (!curve) {
      throw UsageError("--curve = " + quoted(r.curve) + " is not known: must be hilbert or morton");
    }
    p.curve = *curve;
  }
  if (given("--p2p")) {
    const auto mode = sim::parseP2pMode(r.p2p);
    if (!mode) {
      throw UsageError("--p2p = " + quoted(r.p2p) + " is not known: must be plain or mutual");
    }
    p.p2p = *mode;
  }
  if (given("--quadrupole")) p.quadrupole = toOnOff("--quadrupole", r.quadrupole);
  if (given("--theta")) p.theta = toFloat("--theta", r.theta);
  if (given("--mac-param")) p.macParam = toFloat("--mac-param", r.macParam);
  if (given("--expansion-ratio")) {
    p.expansionRatio = toFloat("--expansion-ratio", r.expansionRatio);
  }
  if (given("--expansion-budget")) {
    p.expansionBudget = toFloat("--expansion-budget", r.expansionBudget);
  }
  // Integers are checked against sim's ranges here, so that a value beyond int's range is not
  // reported with int's range.
  if (given("--n-leaf")) {
    p.nLeaf = static_cast<int>(toInteger("--n-leaf", r.nLeaf, 1, sim::kMaxLeafSize));
  }
  if (given("--n-group")) {
    p.nGroup = static_cast<int>(toInteger("--n-group", r.nGroup, 1, sim::kMaxGroupSize));
  }
  if (given("--rebuild")) {
    const auto interval = sim::parseRebuildInterval(r.rebuild);
    if (!interval) {
      throw UsageError("--rebuild = " + quoted(r.rebuild) +
                       " is not known: must be auto, every or an interval in [1, " +
                       std::to_string(sim::kMaxRebuildInterval) + "]");
    }
    p.rebuildInterval = *interval;
  }
  if (given("--eta")) p.eta = toFloat("--eta", r.eta);
  if (given("--max-bin-depth")) {
    p.maxBinDepth =
        static_cast<int>(toInteger("--max-bin-depth", r.maxBinDepth, 0, sim::kMaxBinDepthLimit));
  }
  p.softening = given("--softening") ? toFloat("--softening", r.softening) : info.softening;

  if (given("--shared-dt")) {
    p.stepping = sim::TimeStepping::Shared;
    p.dtMax = toFloat("--shared-dt", r.sharedDt);
    if (!(p.dtMax > 0.0f) || !std::isfinite(p.dtMax)) {
      throw UsageError("--shared-dt = " + r.sharedDt + " is out of range: must be > 0 and finite");
    }
  } else if (r.blockSteps) {
    p.stepping = sim::TimeStepping::Block;
    p.dtMax = given("--dt") ? toFloat("--dt", r.dt) : info.dt * kBlockDtFactor;
  } else {
    p.dtMax = given("--dt") ? toFloat("--dt", r.dt) : info.dt;
  }

  try {
    sim::validate(p);
  } catch (const sim::InvalidParameter& e) {
    throw UsageError(optionMessage(app, echoTyped(e.what(), typedValues(app, r))));
  }
  return p;
}

// --sweep and --out: checked after the physics, so a bad --softening names itself first.
SweepOptions sweepOptions(const CLI::App& app, const RawArgs& r, const sim::SimParams& p,
                          OutputSet& outputs) {
  SweepOptions s;
  const bool sweep = app.count("--sweep") > 0;
  if (!sweep) {
    if (app.count("--mac") > 0 && r.mac == "all") throw UsageError("--mac all needs --sweep");
    if (app.count("--out") > 0) throw UsageError("--out needs --sweep");
    return s;
  }
  if (!r.headless) throw UsageError("--sweep needs --headless");
  for (const char* name : {"--theta", "--mac-param", "--steps", "--stats", "--dump-accel",
                           "--frames", "--screenshot", "--quit-after", "--video"}) {
    if (app.count(name) > 0) throw UsageError(std::string(name) + " does not apply to --sweep");
  }
  if (app.count("--out") == 0) throw UsageError("--sweep needs --out FILE.csv");
  s.wanted = true;
  s.thetas = parseSweepSpec(r.sweep);
  s.macs = app.count("--mac") > 0 && r.mac == "all" ? sim::allMacs() : std::vector{p.mac};
  requireWritable("--out", r.out);
  outputs.addFile("--out", r.out);
  s.outPath = r.out;
  return s;
}

// Checked up front: a missing or unreadable --load is a usage error (exit 2); a file that
// exists but is not a valid snapshot fails when it is read (exit 1).
void snapshotOptions(const CLI::App& app, const RawArgs& r, Options& o, OutputSet& outputs) {
  namespace fs = std::filesystem;
  auto given = [&](const char* name) { return app.count(name) > 0; };
  if (!o.headless) {
    // --load opens the window on the snapshot (app/window/app_state.cpp); saving is the Files
    // panel's.
    for (const char* name : {"--save", "--save-every"}) {
      if (given(name))
        throw UsageError(std::string(name) + " applies to headless runs only: add --headless");
    }
  }
  if (given("--load")) {
    for (const char* name : {"--scenario", "--n", "--seed"}) {
      if (given(name)) throw UsageError(std::string(name) + " cannot be combined with --load");
    }
    std::error_code ec;
    if (!fs::exists(r.load, ec)) throw UsageError("--load = " + quoted(r.load) + ": no such file");
    if (!fs::is_regular_file(r.load, ec)) {
      throw UsageError("--load = " + quoted(r.load) + " is not a regular file");
    }
    if (!std::ifstream(r.load, std::ios::binary)) {
      throw UsageError("--load = " + quoted(r.load) + ": cannot open for reading");
    }
    outputs.addInput("--load", r.load);
    o.loadPath = r.load;
  }
  if (given("--save")) {
    try {
      sim::io::formatFromExtension(r.save);
    } catch (const sim::io::SnapshotError& e) {
      throw UsageError(std::string("--save: ") + e.what());
    }
    requireWritable("--save", r.save);
    outputs.addFile("--save", r.save, OutputSet::MayReplaceInput::Yes);
    o.savePath = r.save;
  }
  if (given("--save-every")) {
    o.saveEvery = static_cast<int>(toInteger("--save-every", r.saveEvery.at(0), 1, 1'000'000'000));
    const std::string& dir = r.saveEvery.at(1);
    requireDirectoryUsable("--save-every", dir, "snapshot_000000.tipsy");
    outputs.addDirectory("--save-every", dir, "snapshot_");
    o.saveDir = dir;
  }
}

// --lesson: a known lesson, which sets its own scenes; a headless lesson draws into --frames
// only (a picture per step) and runs its own stretches of time.
void lessonOption(const CLI::App& app, const RawArgs& r, Options& o) {
  try {
    o.lesson = findLesson(r.lesson).name;
  } catch (const LessonError& e) {
    throw UsageError("--lesson: " + std::string(e.what()));
  }
  for (const char* name : {"--scenario", "--load", "--sweep", "--steps", "--save", "--save-every",
                           "--screenshot", "--video", "--dump-accel", "--stats", "--pick"}) {
    if (app.count(name) > 0) {
      throw UsageError(std::string(name) +
                       " does not go with --lesson (a lesson sets its own scenes)");
    }
  }
}

Options convert(const CLI::App& app, const RawArgs& r) {
  Options o;
  o.headless = r.headless;
  o.quiet = r.quiet;
  const sim::ScenarioSpec spec = toScenario(r.scenario);
  const sim::ScenarioInfo info{spec.name, spec.description, spec.softening, spec.dt};
  o.scenario = spec.name;
  o.camera = spec.camera;
  o.nGiven = app.count("--n") > 0;
  o.n = o.nGiven ? static_cast<std::size_t>(
                       toInteger("--n", r.n, 1, static_cast<long long>(kMaxParticles)))
                 : spec.particles();
  o.steps = static_cast<int>(toInteger("--steps", r.steps, 0, 1'000'000'000));
  o.seed = app.count("--seed") > 0 ? toUnsigned("--seed", r.seed) : spec.seed;
  o.backend = toBackend(r.backend);
  if (app.count("--threads") > 0) {
    o.threads = static_cast<int>(toInteger("--threads", r.threads, 1, 4096));
  }
  if (app.count("--rebalance") > 0) {
    o.rebalance = toFloat("--rebalance", r.rebalance);
    if (!(o.rebalance == 0.0 || (o.rebalance >= 1.0 && o.rebalance <= 100.0))) {
      throw UsageError("--rebalance = " + quoted(r.rebalance) +
                       " is out of range: must be 0 or in [1, 100]");
    }
  }
  if (app.count("--quit-after") > 0) {
    o.quitAfter = static_cast<int>(toInteger("--quit-after", r.quitAfter, 1, 1'000'000'000));
  }
  if (!o.headless) {
    // The window plays until it is closed; these shape a headless run only.
    for (const char* name : {"--steps", "--stats", "--dump-accel", "--quiet"}) {
      if (app.count(name) > 0) {
        throw UsageError(std::string(name) + " applies to headless runs only: add --headless");
      }
    }
  }
  o.params = physicsParams(app, r, info);
  o.frames = frameOptions(app, r);
  // A galaxy the scenario does not have (a snapshot's are not known before it is read).
  const std::size_t galaxies = std::max<std::size_t>(1, spec.galaxies.size());
  if (o.frames.camera.target == CameraTarget::Galaxy && app.count("--load") == 0 &&
      app.count("--lesson") == 0 && static_cast<std::size_t>(o.frames.camera.galaxy) >= galaxies) {
    throw UsageError("--camera = " + quoted(r.camera) + ": " + spec.name + " has " +
                     std::to_string(galaxies) + (galaxies == 1 ? " galaxy" : " galaxies"));
  }
  if (app.count("--lesson") > 0) lessonOption(app, r, o);
  // Paths last: they touch the file system, so only once everything else is known good; and
  // the directories only once the paths are good too.
  OutputSet outputs;
  o.sweep = sweepOptions(app, r, o.params, outputs);
  auto file = [&](const char* option, const std::string& path, std::string& into) {
    if (app.count(option) == 0) return;
    requireWritable(option, path);
    outputs.addFile(option, path);
    into = path;
  };
  file("--stats", r.stats, o.statsPath);
  file("--dump-accel", r.dumpAccel, o.dumpAccelPath);
  file("--screenshot", r.screenshot, o.frames.screenshotPath);
  if (app.count("--frames") > 0) {
    requireDirectoryUsable("--frames", r.frames, "frame_000000.png");
    outputs.addDirectory("--frames", r.frames, "frame_");
    o.frames.framesDir = r.frames;
  }
  if (app.count("--video") > 0) videoOption(r, o, outputs);
  snapshotOptions(app, r, o, outputs);
  if (app.count("--pick") > 0) {
    // N is known here when given (or headless, where the default is the run's N); the window
    // sizes N for the machine and a snapshot has its own: those are checked when known.
    const bool nKnown = o.loadPath.empty() && (o.nGiven || o.headless);
    const long long last = static_cast<long long>(nKnown ? o.n : kMaxParticles) - 1;
    o.frames.pickId = toInteger("--pick", r.pick, 0, last);
  }
  outputs.createDirectories();
  return o;
}

}  // namespace

std::string oneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::optional<Options> parseCommandLine(int argc, const char* const* argv, std::ostream& out) {
  CLI::App app{"bhviz: a Barnes-Hut galaxy simulator (G = 1).", "bhviz"};
  app.footer(
      "One step on the command line is one dtMax interval: with block steps it holds many "
      "substeps, and every run ends with all particles synchronised.\n"
      "Example: bhviz --headless --scenario plummer --n 20000 --steps 100 --stats run.json");
  RawArgs raw;
  defineOptions(app, raw);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return std::nullopt;
  } catch (const CLI::CallForVersion& e) {
    out << "bhviz " << e.what() << '\n';
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    // CLI11's own message names the option; the full help would bury it.
    throw UsageError(oneLine(e.what()) + " (see bhviz --help)");
  }
  if (raw.listLessons) {
    for (const Lesson& l : lessons()) out << l.name << "  " << l.title << ": " << l.summary << '\n';
    return std::nullopt;
  }
  return convert(app, raw);
}

std::optional<Options> parseCommandLine(const std::vector<std::string>& args, std::ostream& out) {
  std::vector<const char*> argv{"bhviz"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parseCommandLine(static_cast<int>(argv.size()), argv.data(), out);
}

}  // namespace bhviz::app
