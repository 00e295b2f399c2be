// CPU benchmarks: one full substep (shared steps, tree rebuilt every step) on a Plummer sphere,
// per stage; the walk alone with the plain and the mutual near field (--p2p).
// Run: build/bench/bench_cpu [--benchmark_filter=...] [--benchmark_format=csv]
#include <benchmark/benchmark.h>
#include <omp.h>

#include <memory>

#include "sim/cpu/cpu_stages.h"
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
    sum.interactions += s.interactions;
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

/// The walk alone (every particle active, Bonsai MAC θ 0.5, quadrupole, ε 0.05, N_group 64) with
/// plain or mutual P2P: args n, N_leaf, mutual (0/1), scenario (0 Plummer, 1 merger). Counters:
/// P2P evaluations per particle (plain: every pair from both sides) and, for mutual, the share
/// of plain's pair work done by pairs evaluated once.
void walkNearField(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const int nLeaf = static_cast<int>(state.range(1));
  const bool mutual = state.range(2) != 0;
  Particles p = state.range(3) == 0 ? makePlummer(n, 1) : makeMerger(n, 1);
  const MacSetup mac{MacCode::Bonsai, 0.5f, 0.0f};
  const Tree tree = cpu::buildSortedTree(p, Curve::Hilbert, nLeaf, mac);
  const std::vector<std::uint8_t> active(n, 1);
  const Groups groups = cpu::buildGroups(tree, p.posMass, p.accPot, active, 64);
  const cpu::WalkSettings s{mac, true, 0.05f, mutual ? P2pMode::Mutual : P2pMode::Plain};
  std::vector<Vec4> acc(n);
  cpu::MutualCounts pairs;
  InteractionCounts counts;
  for (auto _ : state) {
    counts = mutual
                 ? cpu::walkGroupsMutual(tree, groups, p.posMass, active, s, acc, nullptr, &pairs)
                 : cpu::walkGroups(tree, groups, p.posMass, active, s, acc);
  }
  const double evaluations = mutual ? double(pairs.pairs) : double(counts.particle);
  state.counters["p2p_evaluations_per_particle"] = evaluations / double(n);
  state.counters["p2p_plain_per_particle"] = double(counts.particle) / double(n);
  state.counters["mutual_share"] =
      mutual ? 2.0 * double(pairs.onceBoth) / double(counts.particle) : 0.0;
  state.counters["threads"] = omp_get_max_threads();
}

}  // namespace

BENCHMARK(walkNearField)
    ->ArgNames({"n", "n_leaf", "mutual", "merger"})
    ->ArgsProduct({{200000, 1000000}, {16, 32, 64}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

BENCHMARK(fullStep)
    ->ArgNames({"n", "theta_x100"})
    ->Args({10000, 50})
    ->Args({100000, 50})
    ->Args({1000000, 50})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

BENCHMARK_MAIN();
