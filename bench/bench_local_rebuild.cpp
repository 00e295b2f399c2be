// An experiment for issue 14 (sim/cuda/NOTES.md, "Block steps on M31 2^23"): the cusp's deepest
// substeps walk a tree refitted one substep earlier and pay ~47 % more interactions a target than
// on a fresh tree, while a whole rebuild costs more than that. How much of it would a tree
// rebuilt only where the targets are win back?
//
// The state: a scenario (default M31) after one block step on the CPU backend. Then every
// particle drifts by the deepest bin's step, and the targets are that bin's particles. Four trees
// give them their forces, each walked by the targets' groups:
//   rebuilt  the whole tree made again from the drifted positions;
//   refit    the last tree's order and topology, moments of the drifted positions;
//   local    the smallest cell C of the last tree holding every target has its particles'
//            keys made again from the drifted positions (clamped into C's cube, so that they
//            stay in C's key range) and sorted within C's range (cpu::rekeyCells); C's subtree
//            is built again and spliced into the last tree (cpu::spliceSubtrees, the topology a
//            whole build of the keys gives); moments of the drifted positions;
//   local+k  the same for each cell k levels below C that holds targets, alone (a cover of the
//            targets by smaller cells: C is the root where a cusp straddles the frame's centre);
//   adaptive f  from C down, a cell holding targets is split into its children while its targets
//            are less than f of its particles: each cell where that stops, alone
//            (cpu::coverTargets).
// Printed for each: interactions per target, the walk's wall time (CPU, OpenMP) and the force
// error of the targets against direct summation (a sample).
//
//   bench_local_rebuild [N] [scenario] [eta]      default: 262144 m31 0.2
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/cpu/cpu_backend.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/direct_sum.h"
#include "sim/ic/scenario_file.h"
#include "sim/simulation.h"

using namespace bhviz::sim;

namespace {

/// A state in key order with its sorted keys and the tree of them.
struct Sorted {
  Particles p;
  std::vector<std::uint64_t> keys;
  Tree tree;
};

Sorted sortAndBuild(Particles p, const SimParams& params) {
  Sorted s;
  s.tree = cpu::buildSortedTree(p, params.curve, params.nLeaf, macSetup(params, true), nullptr,
                                nullptr, nullptr, &s.keys);
  s.p = std::move(p);
  return s;
}

struct Result {
  double perTarget = 0.0, walkMs = 0.0;
  ErrorSummary error;
};

/// Moments of the current positions, the targets' groups, the walk (on a copy: the acceleration
/// MAC reads the state's accelerations); the targets are the particles with `targetById[id]`.
Result walkTargets(Sorted s, const std::vector<std::uint8_t>& targetById, const SimParams& p,
                   const std::vector<std::uint32_t>& sampleIds, double softening) {
  const MacSetup mac = macSetup(p, true);
  cpu::computeMoments(s.tree, s.p.posMass, mac);
  std::vector<std::uint8_t> active(s.p.size());
  for (std::size_t i = 0; i < s.p.size(); ++i) active[i] = targetById[s.p.id[i]];
  const Groups g = cpu::buildGroups(s.tree, s.p.posMass, s.p.accPot, active, p.nGroup);
  cpu::WalkSettings w{mac, p.quadrupole, p.softening};
  w.expansion = expansionRule(p, mac, true);
  const auto t0 = std::chrono::steady_clock::now();
  const InteractionCounts c = cpu::walkGroups(s.tree, g, s.p.posMass, active, w, s.p.accPot);
  Result r;
  r.walkMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.perTarget = double(c.cell + c.particle) / double(c.targets);
  std::vector<std::uint32_t> indexById(s.p.size());
  for (std::size_t i = 0; i < s.p.size(); ++i) indexById[s.p.id[i]] = std::uint32_t(i);
  std::vector<std::uint32_t> targets;
  for (std::uint32_t id : sampleIds) targets.push_back(indexById[id]);
  r.error = forceError(s.p, targets, directSum(s.p, targets, softening));
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 262144;
    const std::string scenario = argc > 2 ? argv[2] : "m31";
    const float eta = argc > 3 ? std::strtof(argv[3], nullptr) : 0.2f;
    const ScenarioSpec& spec = builtinScenario(scenario);
    SimParams p = defaultSimParams();
    p.softening = spec.softening;
    p.stepping = TimeStepping::Block;
    p.dtMax = 0.125f;
    p.maxBinDepth = 10;
    p.eta = eta;
    p.rebuildInterval = 1;
    Simulation sim(makeCpuBackend(), buildScenario(spec, n, spec.seed), p);
    sim.advance(1);
    const Particles state = sim.particles();
    int deepest = 0;
    for (std::uint8_t b : state.bin) deepest = std::max(deepest, int(b));
    const float dt = p.dtMax / float(1u << deepest);
    std::vector<std::uint8_t> targetById(state.size(), 0);
    std::vector<std::uint32_t> targetIds;
    for (std::size_t i = 0; i < state.size(); ++i) {
      if (state.bin[i] == deepest) targetById[state.id[i]] = 1, targetIds.push_back(state.id[i]);
    }
    std::vector<std::uint32_t> sampleIds;
    for (std::uint32_t k : sampleIndices(targetIds.size(), 2000, 7)) {
      sampleIds.push_back(targetIds[k]);
    }
    std::printf("%s N=%zu eta=%.2f: deepest bin %d (dt %.3g), %zu targets\n", scenario.c_str(), n,
                eta, deepest, dt, targetIds.size());

    // The last tree: of the state before the drift; then every particle drifts.
    const Sorted before = sortAndBuild(state, p);
    Particles drifted = before.p;
    cpu::drift(drifted, dt);

    Sorted rebuilt = sortAndBuild(drifted, p);
    const Sorted refit{drifted, before.keys, before.tree};
    std::vector<std::uint8_t> active(refit.p.size());
    for (std::size_t i = 0; i < refit.p.size(); ++i) active[i] = targetById[refit.p.id[i]];
    // A cover's particles keyed and sorted again, its subtrees spliced in (sim/cpu/local_rebuild).
    struct Cover {
      std::string name;
      Sorted s;
      std::size_t cells = 0, particles = 0;
    };
    const auto rebuiltAround = [&](std::string name, const std::vector<std::uint32_t>& cells) {
      Cover cover{std::move(name), refit, cells.size()};
      cpu::rekeyCells(refit.tree, cells, p.curve, cover.s.p, cover.s.keys);
      cover.s.tree = cpu::spliceSubtrees(refit.tree, cover.s.keys, cells, p.nLeaf);
      for (const std::uint32_t c : cells) cover.particles += refit.tree.count[c];
      return cover;
    };
    std::vector<Cover> covers;
    // local: the smallest cell holding every target (where the share rule at 0 stops).
    const std::vector<std::uint32_t> enclosing = cpu::coverTargets(refit.tree, active, 0.0);
    if (enclosing.empty()) throw std::runtime_error("no particle in the deepest bin");
    covers.push_back(rebuiltAround("local", enclosing));
    // local+k: the cells k levels below it that hold targets, each alone.
    const Tree& t = refit.tree;
    for (int k = 1; k <= 3 && enclosing.size() == 1; ++k) {
      const int level = int(t.level[enclosing[0]]) + k;
      if (level >= t.depth()) break;
      std::vector<std::uint32_t> cells;
      for (std::uint32_t cell = t.levelBegin[level]; cell < t.levelBegin[level + 1]; ++cell) {
        const auto b = active.begin() + t.first[cell];
        if (std::find(b, b + t.count[cell], std::uint8_t{1}) != b + t.count[cell]) {
          cells.push_back(cell);
        }
      }
      covers.push_back(rebuiltAround("local+" + std::to_string(k), cells));
    }
    // adaptive f: cpu::coverTargets's rule.
    for (const double f : {0.5, 0.25, 0.1}) {
      char name[32];
      std::snprintf(name, sizeof name, "adaptive %.2g", f);
      covers.push_back(rebuiltAround(name, cpu::coverTargets(t, active, f)));
    }
    std::printf("the smallest cell holding every target: level %d\n", int(t.level[enclosing[0]]));
    for (const Cover& cover : covers) {
      std::printf("%s: %zu cells, %zu particles (%.1f %% of N)\n", cover.name.c_str(), cover.cells,
                  cover.particles, 100.0 * double(cover.particles) / double(n));
    }

    std::printf("| tree | interactions / target | walk ms | error median | error p99 |\n");
    std::printf("|---|---:|---:|---:|---:|\n");
    std::vector<std::pair<std::string, const Sorted*>> trees = {{"rebuilt", &rebuilt},
                                                                {"refit", &refit}};
    for (const Cover& cover : covers) trees.emplace_back(cover.name, &cover.s);
    for (const auto& [name, s] : trees) {
      walkTargets(*s, targetById, p, sampleIds, p.softening);  // warm-up
      const Result r = walkTargets(*s, targetById, p, sampleIds, p.softening);
      std::printf("| %s | %.0f | %.1f | %.3g | %.3g |\n", name.c_str(), r.perTarget, r.walkMs,
                  r.error.median, r.error.p99);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_local_rebuild: %s\n", e.what());
    return 1;
  }
}
