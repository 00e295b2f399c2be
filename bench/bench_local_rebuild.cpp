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
//            stay in C's key range), sorted within C's range; the topology is built again from
//            the keys (outside C the last tree's, so its cells are as they were); moments of the
//            drifted positions. A GPU port would build C's subtree alone and splice it in;
//   local+k  the same for each cell k levels below C that holds targets, alone (a cover of the
//            targets by smaller cells: C is the root where a cusp straddles the frame's centre);
//   adaptive f  from C down, a cell holding targets is split into its children while its targets
//            are less than f of its particles: each cell where that stops, alone.
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
#include <string>
#include <vector>

#include "sim/cpu/cpu_backend.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/direct_sum.h"
#include "sim/ic/scenario_file.h"
#include "sim/simulation.h"

using namespace bhviz::sim;

namespace {

/// A state in key order with its sorted keys and the tree of them (moments not filled).
struct Sorted {
  Particles p;
  std::vector<std::uint64_t> keys;
  Tree tree;
};

Sorted sortAndBuild(Particles p, Curve curve, int nLeaf, const KeyFrame* frame = nullptr) {
  Sorted s;
  const KeyFrame f = frame != nullptr ? *frame : keyFrameFor(cpu::boundingBox(p.posMass));
  const std::vector<std::uint64_t> keys = cpu::computeKeys(p.posMass, f, curve);
  const std::vector<std::uint32_t> order = cpu::sortOrder(keys);
  cpu::reorder(p, order);
  s.keys.resize(keys.size());
  for (std::size_t k = 0; k < order.size(); ++k) s.keys[k] = keys[order[k]];
  s.p = std::move(p);
  s.tree = cpu::buildTree(s.keys, f, nLeaf);
  return s;
}

/// The deepest cells of `t` each holding all of the index range [lo, hi]: the root's chain down.
std::uint32_t smallestCellHolding(const Tree& t, std::uint32_t lo, std::uint32_t hi) {
  std::uint32_t c = 0;
  for (;;) {
    bool down = false;
    for (std::uint32_t k = 0; k < t.childCount[c]; ++k) {
      const std::uint32_t ch = t.child[c] + k;
      if (t.first[ch] <= lo && hi < t.first[ch] + t.count[ch]) {
        c = ch;
        down = true;
        break;
      }
    }
    if (!down) return c;
  }
}

/// New keys for the particles of cell c (their current positions clamped into c's cube), sorted
/// within c's range; the particles follow.
void rekeyCell(Sorted& s, std::uint32_t c, Curve curve) {
  const Tree& t = s.tree;
  const int level = t.level[c];
  const std::uint32_t first = t.first[c], count = t.count[c];
  const int shift = kKeyBitsPerAxis - level;
  // The cube's integer coordinates: those of its first key's point, low bits cleared.
  const KeyCoords q0 = decodeKey(curve, s.keys[first]);
  const auto lowOf = [&](std::uint32_t v) { return shift >= 32 ? 0u : (v >> shift) << shift; };
  const std::uint32_t span = shift >= 32 ? 0xffffffffu : (1u << shift) - 1u;
  const KeyCoords lo{lowOf(q0.x), lowOf(q0.y), lowOf(q0.z)};
  std::vector<std::uint64_t> keys(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    KeyCoords q = quantize(xyz(s.p.posMass[first + i]), t.frame);
    q.x = std::clamp(q.x, lo.x, lo.x + span);
    q.y = std::clamp(q.y, lo.y, lo.y + span);
    q.z = std::clamp(q.z, lo.z, lo.z + span);
    keys[i] = encodeKey(curve, q);
  }
  const std::vector<std::uint32_t> local = cpu::sortOrder(keys);
  std::vector<std::uint32_t> order(s.p.size());
  std::iota(order.begin(), order.end(), 0u);
  for (std::uint32_t i = 0; i < count; ++i) {
    order[first + i] = first + local[i];
    s.keys[first + i] = keys[local[i]];
  }
  cpu::reorder(s.p, order);
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
  w.expansionRatio = p.expansionRatio;
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
    const Sorted before = sortAndBuild(state, p.curve, p.nLeaf);
    Particles drifted = before.p;
    cpu::drift(drifted, dt);

    Sorted rebuilt = sortAndBuild(drifted, p.curve, p.nLeaf);
    Sorted refit{drifted, before.keys, before.tree};
    Sorted local = refit;
    std::uint32_t lo = 0xffffffffu, hi = 0;
    for (std::uint32_t i = 0; i < local.p.size(); ++i) {
      if (targetById[local.p.id[i]]) lo = std::min(lo, i), hi = std::max(hi, i);
    }
    const std::uint32_t c = smallestCellHolding(local.tree, lo, hi);
    rekeyCell(local, c, p.curve);
    const std::uint32_t cellParticles = local.tree.count[c];
    local.tree = cpu::buildTree(local.keys, local.tree.frame, p.nLeaf);
    // local+k: the cells k levels below C that hold targets, each alone (a cover of the targets
    // by smaller cells: fewer particles sorted again, but none may cross into a sibling).
    struct Cover {
      std::string name;
      Sorted s;
      std::size_t cells = 0, particles = 0;
    };
    std::vector<Cover> covers;
    for (int k = 1; k <= 3; ++k) {
      Cover cover{"local+" + std::to_string(k), refit};
      const Tree& t = cover.s.tree;
      const int level = int(t.level[c]) + k;
      if (level >= t.depth()) break;
      for (std::uint32_t cell = t.levelBegin[level]; cell < t.levelBegin[level + 1]; ++cell) {
        bool holds = false;
        for (std::uint32_t i = t.first[cell]; i < t.first[cell] + t.count[cell] && !holds; ++i) {
          holds = targetById[cover.s.p.id[i]] != 0;
        }
        if (!holds) continue;
        rekeyCell(cover.s, cell, p.curve);
        ++cover.cells;
        cover.particles += t.count[cell];
      }
      cover.s.tree = cpu::buildTree(cover.s.keys, t.frame, p.nLeaf);
      covers.push_back(std::move(cover));
    }
    // adaptive f: from C down, a cell holding targets is split into its children while its
    // targets are less than f of its particles; the cells where that stops are the cover.
    for (const double f : {0.5, 0.25, 0.1}) {
      char name[32];
      std::snprintf(name, sizeof name, "adaptive %.2g", f);
      Cover cover{name, refit};
      const Tree& t = cover.s.tree;
      const auto targetsIn = [&](std::uint32_t cell) {
        std::size_t k = 0;
        for (std::uint32_t i = t.first[cell]; i < t.first[cell] + t.count[cell]; ++i) {
          k += targetById[cover.s.p.id[i]];
        }
        return k;
      };
      std::vector<std::uint32_t> stack = {c}, chosen;
      while (!stack.empty()) {
        const std::uint32_t cell = stack.back();
        stack.pop_back();
        const std::size_t k = targetsIn(cell);
        if (k == 0) continue;
        if (t.childCount[cell] > 0 && double(k) < f * double(t.count[cell])) {
          for (std::uint32_t j = 0; j < t.childCount[cell]; ++j) stack.push_back(t.child[cell] + j);
        } else {
          chosen.push_back(cell);
        }
      }
      for (const std::uint32_t cell : chosen) {
        rekeyCell(cover.s, cell, p.curve);
        ++cover.cells;
        cover.particles += t.count[cell];
      }
      cover.s.tree = cpu::buildTree(cover.s.keys, t.frame, p.nLeaf);
      covers.push_back(std::move(cover));
    }
    std::printf("local: C at level %d, %u particles (%.1f %% of N)\n", int(before.tree.level[c]),
                cellParticles, 100.0 * cellParticles / double(n));
    for (const Cover& cover : covers) {
      std::printf("%s: %zu cells, %zu particles (%.1f %% of N)\n", cover.name.c_str(), cover.cells,
                  cover.particles, 100.0 * double(cover.particles) / double(n));
    }

    std::printf("| tree | interactions / target | walk ms | error median | error p99 |\n");
    std::printf("|---|---:|---:|---:|---:|\n");
    std::vector<std::pair<std::string, const Sorted*>> trees = {
        {"rebuilt", &rebuilt}, {"refit", &refit}, {"local", &local}};
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
