// GPU benchmark of the whole step: scenario × N × θ × MAC → per-stage ms (median over substeps
// after warm-up; CUDA events), total, interactions per particle and per second, and the force
// error against exact direct summation (double, on the GPU) on a random sample: of the first
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
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

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
  double totalMs = 0.0;
  double interactionsPerParticle = 0.0;
  double expandedFraction = 0.0;  ///< of the cell interactions, those through the expansions
  double walkInteractionsPerSecond = 0.0;
  ForceError error;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

Row measure(const Config& c, const SimParams& base, int warmup, int steps, std::size_t sample) {
  SimParams p = base;
  p.theta = c.theta;
  p.mac = c.mac;
  p.macParam = c.macParam;
  p.expansionRatio = c.expansionRatio;
  p.expansionBudget = c.expansionBudget;
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
  for (int k = 0; k < steps; ++k) {
    sim.substep();
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
  r.interactionsPerParticle = median(perParticle);
  r.walkInteractionsPerSecond = median(rate);
  r.expandedFraction = median(expanded);
  return r;
}

template <typename T>
std::vector<T> parseList(const std::string& text, T (*convert)(const std::string&)) {
  std::vector<T> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');) out.push_back(convert(item));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bhviz GPU benchmark: the whole step per stage"};
  std::string scenarios = "plummer", ns = "1000000", thetas = "0.5", macs = "bonsai", params = "0",
              ratios = std::to_string(defaultSimParams().expansionRatio),
              budgets = std::to_string(defaultSimParams().expansionBudget), csvPath;
  int warmup = 3, steps = 20, nLeaf = 16, nGroup = 64;
  std::size_t sample = 4000;
  float softening = 0.05f;
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
  app.add_option("--warmup", warmup, "substeps before timing");
  app.add_option("--steps", steps, "timed substeps (median)");
  app.add_option("--sample", sample, "particles in the force-error sample");
  app.add_option("--n-leaf", nLeaf);
  app.add_option("--n-group", nGroup);
  app.add_option("--softening", softening);
  app.add_option("--csv", csvPath, "also write the rows as CSV");
  std::string rebuild = "every", p2p = "plain";
  app.add_option("--p2p", p2p, "the near field: plain (default) or mutual (each pair once)");
  app.add_option("--rebuild", rebuild,
                 "every (default: the timed walks are the measured one's), auto (refits and the "
                 "group tuner, as the app) or K");
  CLI11_PARSE(app, argc, argv);
  const std::optional<P2pMode> p2pMode = parseP2pMode(p2p);
  if (!p2pMode) {
    std::cerr << "bench_gpu: --p2p " << p2p << ": plain or mutual\n";
    return 2;
  }
  const std::optional<int> rebuildInterval = parseRebuildInterval(rebuild);
  if (!rebuildInterval) {
    std::cerr << "bench_gpu: --rebuild " << rebuild << ": auto, every or K\n";
    return 2;
  }

  try {
    std::cout << "device: " << cuda::deviceDescription()
              << "\nrebuild: " << rebuildIntervalName(*rebuildInterval)
              << (*rebuildInterval == 1 ? " (every timed walk uses the groups the error measured)"
                                        : " (refits and tuned groups: the error column is of a "
                                          "fresh tree at N_group)")
              << "\nnear field: " << p2p << "\n\n";
    SimParams base;
    base.p2p = *p2pMode;
    base.nLeaf = nLeaf;
    base.nGroup = nGroup;
    base.softening = softening;
    base.dtMax = 1.0f / 128.0f;  // shared steps
    base.rebuildInterval = *rebuildInterval;
    std::vector<Row> rows;
    std::cout
        << "| scenario | N | MAC | θ or Δ/α | ρ | K | bbox+keys+sort | tree+moments | groups | "
           "walk | "
           "predict+integrate | "
           "total ms | interactions/particle | expanded | walk interactions/s | error median | "
           "error p99 |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const std::string& sc :
         parseList<std::string>(scenarios, [](const std::string& s) { return s; }))
      for (std::size_t n : parseList<std::size_t>(
               ns, [](const std::string& s) { return std::size_t(std::stoull(s)); }))
        for (const std::string& m :
             parseList<std::string>(macs, [](const std::string& s) { return s; }))
          for (float th :
               parseList<float>(thetas, [](const std::string& s) { return std::stof(s); }))
            for (float mp :
                 parseList<float>(params, [](const std::string& s) { return std::stof(s); }))
              for (float rho :
                   parseList<float>(ratios, [](const std::string& s) { return std::stof(s); }))
                for (float k :
                     parseList<float>(budgets, [](const std::string& s) { return std::stof(s); })) {
                  const auto mac = parseMacKind(m);
                  if (!mac) throw std::invalid_argument("unknown MAC " + m);
                  const Row r = measure({sc, n, th, *mac, mp, rho, k}, base, warmup, steps, sample);
                  auto ms = [&](Stage s) { return r.stageMs[static_cast<int>(s)]; };
                  char line[512];
                  std::snprintf(line, sizeof line,
                                "| %s | %zu | %s | %.3g | %.3g | %.3g | %.3f | %.3f | %.3f | %.3f "
                                "| %.3f | %.3f | "
                                "%.0f | %.3f | %.3g | %.2e | %.2e |\n",
                                sc.c_str(), n, m.c_str(),
                                (*mac == MacKind::Multipole || *mac == MacKind::Acceleration)
                                    ? effectiveMacParam(SimParams{*mac, th, mp})
                                    : th,
                                rho, k, ms(Stage::BoundingBox) + ms(Stage::Keys) + ms(Stage::Sort),
                                ms(Stage::Tree) + ms(Stage::Moments), ms(Stage::Groups),
                                ms(Stage::Walk), ms(Stage::Predict) + ms(Stage::Integrate),
                                r.totalMs, r.interactionsPerParticle, r.expandedFraction,
                                r.walkInteractionsPerSecond, r.error.median, r.error.p99);
                  std::cout << line << std::flush;
                  rows.push_back(r);
                }
    if (!csvPath.empty()) {
      std::ofstream csv(csvPath);
      csv << "scenario,n,mac,theta,mac_param,expansion_ratio";
      for (auto name : kStageNames) csv << ',' << name << "_ms";
      csv << ",total_ms,interactions_per_particle,expanded_fraction,walk_interactions_per_s,"
             "error_median,error_p99,expansion_budget,p2p\n";
      for (const Row& r : rows) {
        csv << r.c.scenario << ',' << r.c.n << ',' << toString(r.c.mac) << ',' << r.c.theta << ','
            << r.c.macParam << ',' << r.c.expansionRatio;
        for (double v : r.stageMs) csv << ',' << v;
        csv << ',' << r.totalMs << ',' << r.interactionsPerParticle << ',' << r.expandedFraction
            << ',' << r.walkInteractionsPerSecond << ',' << r.error.median << ',' << r.error.p99
            << ',' << r.c.expansionBudget << ',' << p2p << '\n';
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_gpu: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
