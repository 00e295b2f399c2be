// CPU benchmark: one full substep (shared steps, tree rebuilt every step) on a Plummer sphere,
// per stage. Run: build/bench/bench_cpu [--benchmark_filter=...] [--benchmark_format=csv]
#include <benchmark/benchmark.h>
#include <omp.h>

#include <memory>

#include "sim/ic/initial_conditions.h"
#include "sim/simulation.h"

using namespace bhviz::sim;

namespace {

void fullStep(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  SimParams p;
  p.mac = MacKind::Bonsai;
  p.theta = static_cast<float>(state.range(1)) / 100.0f;
  p.softening = 0.05f;
  p.dtMax = 1.0f / 128.0f;
  Simulation sim(makeCpuBackend(), makePlummer(n, 1), p);
  sim.substep();  // warm-up: allocations, page faults
  StepProfile sum;
  std::int64_t steps = 0;
  for (auto _ : state) {
    sim.substep();
    const StepProfile& s = sim.lastProfile();
    for (std::size_t k = 0; k < sum.ms.size(); ++k) sum.ms[k] += s.ms[k];
    sum.interactions.cell += s.interactions.cell;
    sum.interactions.particle += s.interactions.particle;
    sum.interactions.targets += s.interactions.targets;
    ++steps;
  }
  for (int k = 0; k < static_cast<int>(Stage::Count); ++k) {
    state.counters[std::string(stageName(static_cast<Stage>(k))) + "_ms"] =
        sum.ms[k] / double(steps);
  }
  const double targets = double(sum.interactions.targets);
  state.counters["cell_per_particle"] = double(sum.interactions.cell) / targets;
  state.counters["p2p_per_particle"] = double(sum.interactions.particle) / targets;
  state.counters["interactions_per_s"] = benchmark::Counter(
      double(sum.interactions.cell + sum.interactions.particle), benchmark::Counter::kIsRate);
  state.counters["threads"] = omp_get_max_threads();
}

}  // namespace

BENCHMARK(fullStep)
    ->ArgNames({"n", "theta_x100"})
    ->Args({10000, 50})
    ->Args({100000, 50})
    ->Args({1000000, 50})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

BENCHMARK_MAIN();
