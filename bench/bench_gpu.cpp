// GPU benchmark of the whole step: scenario × N × θ × MAC → per-stage ms (median over substeps
// after warm-up; CUDA events), their total, the step's host wall (the total and every gap between
// stages: launches, the level table's wait), interactions per particle and per second, and the
// force error against exact direct summation (double, on the GPU) on a random sample: of the first
// evaluation, or of the second where |a_old| matters (the acceleration MAC, the expansion's mass
// rule: --expansion-budget > 0). Prints a Markdown table; --csv also writes the rows as CSV.
//
// The tree is rebuilt at every evaluation by default (--rebuild every): then every timed
// substep walks the groups of N_group the error was measured with. Under --rebuild auto (the
// app's default) refits and the group tuner change the walk from substep to substep, and what
// is timed is no longer what the error column measured: with the acceleration MAC a smaller
// group is faster and less accurate (its smallest |a_old| is larger).
//
//   bench_gpu --n 1000000,4000000 --theta 0.4,0.5,0.75 --mac bonsai --scenario plummer
// (--p2p mutual: the near field pair by pair, every row of the run.)
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "bench/bench_cli.h"
#include "sim/cuda/cuda_backend.h"
#include "sim/ic/initial_conditions.h"
#include "sim/simulation.h"

using namespace bhviz::sim;

namespace {

struct Config {
  std::string scenario;
  std::size_t n;
  float theta;
  MacKind mac;
  float macParam;         ///< Δ_mul or α; 0 = the MAC's default
  float expansionRatio;   ///< SimParams::expansionRatio
  float expansionBudget;  ///< SimParams::expansionBudget
};

struct Row {
  Config c;
  std::array<double, static_cast<int>(Stage::Count)> stageMs{};
  double totalMs = 0.0;  ///< the stages' CUDA event spans, summed
  double wallMs = 0.0;   ///< host wall around Simulation::substep: the gaps between stages too
  double interactionsPerParticle = 0.0;
  double expandedFraction = 0.0;  ///< of the cell interactions, those through the expansions
  double walkInteractionsPerSecond = 0.0;
  ForceError error;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

/// A row's parameters: the run's shared ones with the row's own.
SimParams paramsOf(const Config& c, const SimParams& base) {
  SimParams p = base;
  p.theta = c.theta;
  p.mac = c.mac;
  p.macParam = c.macParam;
  p.expansionRatio = c.expansionRatio;
  p.expansionBudget = c.expansionBudget;
  return p;
}

Row measure(const Config& c, const SimParams& base, int warmup, int steps, std::size_t sample) {
  const SimParams p = paramsOf(c, base);
  const Particles ic = makeScenario(c.scenario, c.n, 1);
  Simulation sim(cuda::makeCudaBackend(ic.size()), ic, p);
  Row r;
  r.c = c;
  // The acceleration MAC and the expansion's mass rule need |a_old|: the first evaluation has
  // none (the θ fallback, the distance rule alone), so measure the second one, as every later
  // step sees it.
  if (readsOldAccelerations(p)) sim.recomputeForces();
  {
    const Particles first = sim.particles();
    const std::vector<std::uint32_t> targets = sampleIndices(first.size(), sample, 4000);
    r.error = forceError(first, targets, cuda::directSumDevice(first, targets, p.softening));
  }
  for (int k = 0; k < warmup; ++k) sim.substep();
  std::vector<std::vector<double>> stage(r.stageMs.size());
  std::vector<double> total, perParticle, rate, expanded;
  std::vector<double> wall;
  for (int k = 0; k < steps; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    sim.substep();  // returns settled: its profile read
    wall.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    const StepProfile& s = sim.lastProfile();
    for (std::size_t j = 0; j < stage.size(); ++j) stage[j].push_back(s.ms[j]);
    total.push_back(s.total());
    const double inter = double(s.interactions.cell + s.interactions.particle);
    perParticle.push_back(inter / double(s.interactions.targets));
    rate.push_back(inter / (s[Stage::Walk] * 1e-3));
    expanded.push_back(s.interactions.cell == 0
                           ? 0.0
                           : double(s.interactions.expanded) / double(s.interactions.cell));
  }
  for (std::size_t j = 0; j < stage.size(); ++j) r.stageMs[j] = median(stage[j]);
  r.totalMs = median(total);
  r.wallMs = median(wall);
  r.interactionsPerParticle = median(perParticle);
  r.walkInteractionsPerSecond = median(rate);
  r.expandedFraction = median(expanded);
  return r;
}

/// What the command line asks for: the lists of values each row combines, and the settings
/// shared by every row.
struct Options {
  std::vector<std::string> scenarios;
  std::vector<std::size_t> ns;
  std::vector<float> thetas;
  std::vector<MacKind> macs;
  std::vector<float> params, ratios, budgets;
  int warmup = 3, steps = 20;
  std::size_t sample = 4000;
  std::string csvPath, p2p;
  SimParams base;
};

/// A comma-separated list, each item trimmed of spaces and converted; throws
/// std::invalid_argument naming the option.
template <typename T, typename Convert>
std::vector<T> parseList(const std::string& option, const std::string& text, Convert convert) {
  std::vector<T> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');) {
    const std::size_t begin = item.find_first_not_of(' ');
    item = begin == std::string::npos ? ""
                                      : item.substr(begin, item.find_last_not_of(' ') + 1 - begin);
    try {
      out.push_back(convert(item));
    } catch (const std::exception& e) {
      throw std::invalid_argument(option + " '" + item + "': " + e.what());
    }
  }
  if (out.empty()) throw std::invalid_argument(option + ": no value");
  return out;
}

float toFloat(const std::string& s) {
  std::size_t used = 0;
  float v = 0.0f;
  try {
    v = std::stof(s, &used);
  } catch (const std::out_of_range&) {
    throw std::invalid_argument("out of a float's range");
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size()) throw std::invalid_argument("not a number");
  return v;
}

/// Every row of the run, in the order of the loops: scenario, N, MAC, θ, MAC parameter, ρ, K.
std::vector<Config> configs(const Options& o) {
  std::vector<Config> out;
  for (const std::string& sc : o.scenarios)
    for (std::size_t n : o.ns)
      for (MacKind mac : o.macs)
        for (float th : o.thetas)
          for (float mp : o.params)
            for (float rho : o.ratios)
              for (float k : o.budgets) out.push_back({sc, n, th, mac, mp, rho, k});
  return out;
}

void printHeader() {
  std::cout
      << "| scenario | N | MAC | θ or Δ/α | ρ | K | bbox+keys+sort | tree+moments | groups | "
         "walk | predict+integrate | total ms | wall ms | interactions/particle | expanded | walk "
         "interactions/s | error median | error p99 |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
}

void printRow(const Row& r) {
  const Config& c = r.c;
  auto ms = [&](Stage s) { return r.stageMs[static_cast<int>(s)]; };
  const bool byParam = c.mac == MacKind::Multipole || c.mac == MacKind::Acceleration;
  char line[512];
  std::snprintf(line, sizeof line,
                "| %s | %zu | %s | %.3g | %.3g | %.3g | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | "
                "%.3f | %.0f | %.3f | %.3g | %.2e | %.2e |\n",
                c.scenario.c_str(), c.n, std::string(toString(c.mac)).c_str(),
                byParam ? effectiveMacParam(SimParams{c.mac, c.theta, c.macParam}) : c.theta,
                c.expansionRatio, c.expansionBudget,
                ms(Stage::BoundingBox) + ms(Stage::Keys) + ms(Stage::Sort),
                ms(Stage::Tree) + ms(Stage::Moments), ms(Stage::Groups), ms(Stage::Walk),
                ms(Stage::Predict) + ms(Stage::Integrate), r.totalMs, r.wallMs,
                r.interactionsPerParticle, r.expandedFraction, r.walkInteractionsPerSecond,
                r.error.median, r.error.p99);
  std::cout << line << std::flush;
}

void writeCsv(const std::string& path, const std::vector<Row>& rows, const std::string& p2p) {
  std::ofstream csv(path);
  csv << "scenario,n,mac,theta,mac_param,expansion_ratio";
  for (auto name : kStageNames) csv << ',' << name << "_ms";
  csv << ",total_ms,interactions_per_particle,expanded_fraction,walk_interactions_per_s,"
         "error_median,error_p99,expansion_budget,p2p,wall_ms\n";
  for (const Row& r : rows) {
    csv << r.c.scenario << ',' << r.c.n << ',' << toString(r.c.mac) << ',' << r.c.theta << ','
        << r.c.macParam << ',' << r.c.expansionRatio;
    for (double v : r.stageMs) csv << ',' << v;
    csv << ',' << r.totalMs << ',' << r.interactionsPerParticle << ',' << r.expandedFraction << ','
        << r.walkInteractionsPerSecond << ',' << r.error.median << ',' << r.error.p99 << ','
        << r.c.expansionBudget << ',' << p2p << ',' << r.wallMs << '\n';
  }
}

/// Parses the command line; nullopt after CLI11 handled it (help, or an error it printed) with
/// the exit status in `exit`. Throws std::invalid_argument for a bad value of ours.
std::optional<Options> parseOptions(int argc, char** argv, int& exit) {
  CLI::App app{"bhviz GPU benchmark: the whole step per stage"};
  std::string scenarios = "plummer", ns = "1000000", thetas = "0.5", macs = "bonsai", params = "0",
              ratios = std::to_string(defaultSimParams().expansionRatio),
              budgets = std::to_string(defaultSimParams().expansionBudget);
  std::string rebuild = "every", p2p = "plain";
  int nLeaf = 16, nGroup = 64;
  float softening = 0.05f;
  Options o;
  app.add_option("--scenario", scenarios, "comma-separated scenario names");
  app.add_option("--n", ns, "comma-separated particle counts");
  app.add_option("--theta", thetas, "comma-separated opening angles");
  app.add_option("--mac", macs, "comma-separated MACs");
  app.add_option("--mac-param", params, "comma-separated MAC parameters (Δ_mul, α; 0 = default)");
  app.add_option("--expansion-ratio", ratios,
                 "comma-separated ratios ρ of the far cells' expansion (0: none; default the "
                 "app's)");
  app.add_option("--expansion-budget", budgets,
                 "comma-separated budgets K of the expansion's mass rule (0: by distance alone; "
                 "default the app's)");
  app.add_option("--warmup", o.warmup, "substeps before timing")->check(CLI::Range(0, 100000));
  app.add_option("--steps", o.steps, "timed substeps (median)")->check(CLI::Range(1, 100000));
  app.add_option("--sample", o.sample, "particles in the force-error sample")
      ->check(CLI::Range(1, 10000000));
  app.add_option("--n-leaf", nLeaf);
  app.add_option("--n-group", nGroup);
  app.add_option("--softening", softening);
  app.add_option("--csv", o.csvPath, "also write the rows as CSV");
  app.add_option("--p2p", p2p, "the near field: plain (default) or mutual (each pair once)");
  app.add_option("--rebuild", rebuild,
                 "every (default: the timed walks are the measured one's), auto (refits and the "
                 "group tuner, as the app) or K");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    exit = bhviz::bench::exitStatus(app, e);
    return std::nullopt;
  }
  const std::optional<P2pMode> p2pMode = parseP2pMode(p2p);
  if (!p2pMode) throw std::invalid_argument("--p2p " + p2p + ": plain or mutual");
  const std::optional<int> rebuildInterval = parseRebuildInterval(rebuild);
  if (!rebuildInterval) throw std::invalid_argument("--rebuild " + rebuild + ": auto, every or K");
  o.scenarios = parseList<std::string>("--scenario", scenarios, [](const std::string& s) {
    (void)scenarioInfo(s);  // throws, naming the known ones, for an unknown name
    return s;
  });
  o.ns = parseList<std::size_t>("--n", ns, [](const std::string& s) {
    const bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
    if (digits && s.size() > 12) throw std::invalid_argument("too many particles");
    const unsigned long long v = digits ? std::stoull(s) : 0;
    if (v == 0) throw std::invalid_argument("not a positive count");
    return std::size_t(v);
  });
  o.thetas = parseList<float>("--theta", thetas, toFloat);
  o.macs = parseList<MacKind>("--mac", macs, [](const std::string& s) {
    const std::optional<MacKind> mac = parseMacKind(s);
    if (!mac) throw std::invalid_argument("not a MAC (bh, bonsai, multipole, acceleration)");
    return *mac;
  });
  o.params = parseList<float>("--mac-param", params, toFloat);
  o.ratios = parseList<float>("--expansion-ratio", ratios, toFloat);
  o.budgets = parseList<float>("--expansion-budget", budgets, toFloat);
  o.p2p = p2p;
  o.base.p2p = *p2pMode;
  o.base.nLeaf = nLeaf;
  o.base.nGroup = nGroup;
  o.base.softening = softening;
  o.base.dtMax = 1.0f / 128.0f;  // shared steps
  o.base.rebuildInterval = *rebuildInterval;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Options> options;
  try {
    int exit = 0;
    options = parseOptions(argc, argv, exit);
    if (!options) return exit;
  } catch (const std::invalid_argument& e) {
    std::cerr << "bench_gpu: " << e.what() << '\n';
    return 2;  // before any work
  }
  const Options& o = *options;
  const std::vector<Config> rows = configs(o);
  for (const Config& c : rows) {  // every row's, before any runs
    if (const auto bad = bhviz::bench::invalidRun(paramsOf(c, o.base), c.scenario, c.n)) {
      std::cerr << "bench_gpu: " << *bad << '\n';
      return 2;
    }
  }
  try {
    const int interval = o.base.rebuildInterval;
    std::cout << "device: " << cuda::deviceDescription()
              << "\nrebuild: " << rebuildIntervalName(interval)
              << (interval == 1 ? " (every timed walk uses the groups the error measured)"
                                : " (refits and tuned groups: the error column is of a fresh "
                                  "tree at N_group)")
              << "\nnear field: " << o.p2p << "\n\n";
    printHeader();
    std::vector<Row> measured;
    for (const Config& c : rows) {
      measured.push_back(measure(c, o.base, o.warmup, o.steps, o.sample));
      printRow(measured.back());
    }
    if (!o.csvPath.empty()) writeCsv(o.csvPath, measured, o.p2p);
  } catch (const std::exception& e) {
    std::cerr << "bench_gpu: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
