// Block against shared time steps on the disk galaxy: wall time to reach a fixed simulation
// time and the final relative energy error, for shared steps of several sizes and block steps
// of several η, so the speed-up can be read at equal energy error (GOTHIC reports 3–5×).
//
//   bench_block_steps --backend cuda --n 1000000 --time 0.5
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "sim/ic/initial_conditions.h"
#include "sim/simulation.h"
#if BHVIZ_HAVE_CUDA
#include "sim/cuda/cuda_backend.h"
#endif

using namespace bhviz::sim;

namespace {

std::unique_ptr<Backend> makeBackend(const std::string& name, std::size_t n) {
#if BHVIZ_HAVE_CUDA
  if (name == "cuda") return cuda::makeCudaBackend(n);
#endif
  (void)n;
  if (name != "cpu") throw std::invalid_argument("backend " + name + " is not available");
  return makeCpuBackend();
}

struct Result {
  double wallSeconds = 0.0;
  double energyError = 0.0;
  std::uint64_t substeps = 0;
  std::uint64_t forces = 0;
};

Result run(const std::string& backend, const Particles& ic, const SimParams& p, double endTime) {
  Simulation sim(makeBackend(backend, ic.size()), ic, p);
  const double e0 = sim.diagnostics().total();
  const auto t0 = std::chrono::steady_clock::now();
  const int steps = static_cast<int>(std::lround(endTime / p.dtMax));
  sim.advance(steps);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {wall, std::fabs((sim.diagnostics().total() - e0) / e0), sim.substeps(),
          sim.totalProfile().interactions.targets};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bhviz: block against shared time steps on the disk galaxy"};
  std::string backend = "cpu", scenario = "galaxy";
  std::size_t n = 100000;
  double endTime = 0.5;
  std::vector<float> sharedDts{1.0f / 128, 1.0f / 256, 1.0f / 512};
  std::vector<float> etas{0.4f, 0.2f, 0.1f};
  float blockDtMax = 1.0f / 16;
  int depth = 8;
  app.add_option("--backend", backend, "cpu or cuda");
  app.add_option("--scenario", scenario);
  app.add_option("--n", n);
  app.add_option("--time", endTime, "simulation time to run");
  app.add_option("--shared-dt", sharedDts, "shared step sizes");
  app.add_option("--eta", etas, "block-step accuracy parameters");
  app.add_option("--block-dt-max", blockDtMax);
  app.add_option("--max-bin-depth", depth);
  CLI11_PARSE(app, argc, argv);
  try {
    const Particles ic = makeScenario(scenario, n, 1);
    SimParams base;
    base.softening = scenarioInfo(scenario).softening;
    std::cout << "| mode | dt or η | substeps | force evaluations / N | wall s | |ΔE/E| |\n"
                 "|---|---|---|---|---|---|\n";
    auto print = [&](const char* mode, double value, const Result& r) {
      std::printf("| %s | %.4g | %llu | %.1f | %.3f | %.2e |\n", mode, value,
                  static_cast<unsigned long long>(r.substeps), double(r.forces) / double(n),
                  r.wallSeconds, r.energyError);
      std::fflush(stdout);
    };
    for (float dt : sharedDts) {
      SimParams p = base;
      p.stepping = TimeStepping::Shared;
      p.dtMax = dt;
      print("shared", dt, run(backend, ic, p, endTime));
    }
    for (float eta : etas) {
      SimParams p = base;
      p.stepping = TimeStepping::Block;
      p.dtMax = blockDtMax;
      p.maxBinDepth = depth;
      p.eta = eta;
      print("block", eta, run(backend, ic, p, endTime));
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_block_steps: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
