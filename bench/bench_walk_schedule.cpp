// A model of the CUDA walk's persistent grid (sim/cuda/walk.cu): how long the grid runs when its
// resident warps take the groups in a given order, each group busy for a time proportional to
// its interactions, against the bound of perfect balance (all work / warps). CPU only: the
// groups and their interaction lists are the CPU twins' (cpu::buildGroups,
// cpu::buildInteractionList), which the CUDA stages match.
//
// Why: on the H200 the acceleration MAC's walk ran 4.6e11 interactions/s at 2^20 on the uniform
// cube against 6.4e11 for the Bonsai test (docs/BENCHMARKS.md; measured under --rebuild auto,
// where the group tuner had given that MAC smaller groups: with the groups fixed it runs
// 5.8e11). A MAC whose lists grow where |a| is small gives a few groups many times the mean
// work; at 2^20 there are only ~6 groups per resident warp, so one long group started late
// holds the grid. The model says how much of the rate each order of the groups loses, and
// what halving the groups whose work passes a share of a warp's (--split) would win; and what
// the traversal does besides the interactions (warp steps, cells tested, box loads) per MAC.
//
//   bench_walk_schedule --scenario uniform --n 1048575 --mac acceleration --mac-param 4e-3
//       --softening 0.001 --warps 3696
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <queue>
#include <string>
#include <vector>

#include "bench/bench_cli.h"
#include "sim/backend.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/ic/initial_conditions.h"
#include "sim/simulation.h"

using namespace bhviz::sim;

namespace {

/// The time the grid of `warps` takes when each warp, once free, takes the next group of `order`.
double makespan(const std::vector<double>& work, const std::vector<std::uint32_t>& order,
                int warps) {
  std::priority_queue<double, std::vector<double>, std::greater<>> freeAt;
  for (int w = 0; w < warps; ++w) freeAt.push(0.0);
  double end = 0.0;
  for (std::uint32_t g : order) {
    const double start = freeAt.top();
    freeAt.pop();
    freeAt.push(start + work[g]);
    end = std::max(end, start + work[g]);
  }
  return end;
}

/// The group indices sorted by `key`, ascending; equal keys keep their index order (as the
/// device's stable radix sort does).
template <typename Key>
std::vector<std::uint32_t> orderBy(std::size_t n, Key key) {
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
  return order;
}

/// The walk schedule's class of a work w (walk_schedule.cu): 2k + b for 2^k ≤ w < 2^(k+1), b = 1
/// from 1.5·2^k on.
int halfOctave(double work) {
  const auto w = static_cast<std::uint64_t>(std::max(work, 1.0));
  int k = 0;
  while ((w >> (k + 1)) != 0) ++k;
  return 2 * k + (k > 0 ? int((w >> (k - 1)) & 1u) : 0);
}

/// A group keeps its warp for a time proportional to its interactions (cells and leaf
/// particles, times its targets): the lanes split the targets, and replicate a short group's
/// targets to split the sources instead (walk.cu).
std::vector<double> groupWork(const Tree& tree, const Groups& groups, const MacSetup& mac) {
  std::vector<double> work(groups.size());
#pragma omp parallel for schedule(dynamic, 64)
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const cpu::InteractionList list =
        cpu::buildInteractionList(tree, groups.box[k], groups.accMin[k], mac);
    std::uint64_t sources = list.cells.size();
    for (std::uint32_t leaf : list.leaves) sources += tree.count[leaf];
    work[k] = double(sources) * double(groups.count[k]);
  }
  return work;
}

/// What the GPU walk's traversal does for the groups, besides the interactions: it pops up to 32
/// cells a step (one per lane) and tests each; an accepted cell whose COM lies within its reach
/// of the group's box needs the exact box test, one more dependent load (walk.cu: needBox).
struct Traversal {
  double steps = 0, tested = 0, accepted = 0, withinReach = 0, overlapOpened = 0, leaves = 0;
  double cellInteractions = 0, particleInteractions = 0;  // per target, times the targets
  double targets = 0;
};

Traversal traversal(const Tree& tree, const Groups& groups, const MacSetup& mac) {
  Traversal total;
#pragma omp parallel
  {
    Traversal t;
    std::vector<std::uint32_t> stack;
#pragma omp for schedule(dynamic, 64) nowait
    for (std::size_t k = 0; k < groups.size(); ++k) {
      const Box& gbox = groups.box[k];
      std::uint64_t cells = 0, particles = 0;
      stack.assign(1, 0u);
      while (!stack.empty()) {
        const std::size_t take = std::min<std::size_t>(stack.size(), 32);
        std::vector<std::uint32_t> popped(stack.end() - std::ptrdiff_t(take), stack.end());
        stack.resize(stack.size() - take);
        t.steps += 1;
        for (std::uint32_t c : popped) {
          t.tested += 1;
          const cpu::CellTest test = cpu::testCell(tree, c, gbox, groups.accMin[k], mac);
          const bool macOpens =
              mustOpen(mac.code, tree.opening[c], test.d2, groups.accMin[k], false);
          const Box& b = tree.box[c];
          const Vec3 com = xyz(tree.comMass[c]);
          const Vec3 far{std::max(com.x - b.lo.x, b.hi.x - com.x),
                         std::max(com.y - b.lo.y, b.hi.y - com.y),
                         std::max(com.z - b.lo.z, b.hi.z - com.z)};
          if (!macOpens && !(test.d2 > dot(far, far))) t.withinReach += 1;
          if (!macOpens && test.overlap) t.overlapOpened += 1;
          switch (cpu::verdictOf(tree, c, test)) {
            case cpu::CellVerdict::Accepted:
              t.accepted += 1;
              ++cells;
              break;
            case cpu::CellVerdict::Leaf:
              t.leaves += 1;
              particles += tree.count[c];
              break;
            case cpu::CellVerdict::Opened:
              for (std::uint32_t j = tree.child[c]; j < tree.child[c] + tree.childCount[c]; ++j) {
                stack.push_back(j);
              }
              break;
          }
        }
      }
      t.cellInteractions += double(cells) * groups.count[k];
      t.particleInteractions += double(particles) * groups.count[k];
      t.targets += groups.count[k];
    }
#pragma omp critical
    {
      total.steps += t.steps;
      total.tested += t.tested;
      total.accepted += t.accepted;
      total.withinReach += t.withinReach;
      total.overlapOpened += t.overlapOpened;
      total.leaves += t.leaves;
      total.cellInteractions += t.cellInteractions;
      total.particleInteractions += t.particleInteractions;
      total.targets += t.targets;
    }
  }
  return total;
}

/// Appends the run [first, first + count) as a group: its box and smallest |a_old|.
void addGroup(Groups& out, const Particles& s, std::uint32_t first, std::uint32_t count) {
  Box box;
  float accMin = INFINITY;
  for (std::uint32_t i = first; i < first + count; ++i) {
    const Vec4 x = s.posMass[i], a = s.accPot[i];
    grow(box, Vec3{x.x, x.y, x.z});
    accMin = std::min(accMin, accMagnitude(a));
  }
  out.first.push_back(first);
  out.count.push_back(count);
  out.box.push_back(box);
  out.accMin.push_back(accMin);
}

/// The groups with every one whose work passes `limit` halved (in key order), again and again.
Groups splitLong(const Tree& tree, const Particles& s, const Groups& groups,
                 std::vector<double> work, const MacSetup& mac, double limit) {
  Groups current = groups;
  for (;;) {
    Groups next;
    bool split = false;
    for (std::size_t k = 0; k < current.size(); ++k) {
      const std::uint32_t first = current.first[k], count = current.count[k];
      if (count > 1 && work[k] > limit) {
        addGroup(next, s, first, count / 2);
        addGroup(next, s, first + count / 2, count - count / 2);
        split = true;
      } else {
        addGroup(next, s, first, count);
      }
    }
    if (!split) return next;
    current = std::move(next);
    work = groupWork(tree, current, mac);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"the CUDA walk's persistent grid, modelled on the CPU's groups and lists"};
  std::string scenario = "uniform", macName = "acceleration";
  std::size_t n = 1048575;
  SimParams p;
  int warps = 132 * 7 * 4;  // H200: 132 SMs, 7 resident blocks of 4 warps (sim/cuda/NOTES.md)
  double split = 0.5;
  app.add_option("--scenario", scenario, "initial conditions");
  app.add_option("--n", n, "particles");
  app.add_option("--mac", macName, "MAC (bh, bonsai, multipole, acceleration)");
  app.add_option("--theta", p.theta, "θ of the θ-based MACs");
  app.add_option("--mac-param", p.macParam, "Δ_mul or α (0: the MAC's default)");
  app.add_option("--softening", p.softening, "Plummer softening ε");
  app.add_option("--leaf", p.nLeaf, "N_leaf");
  app.add_option("--group", p.nGroup, "N_group");
  app.add_option("--split", split, "halve groups above this share of a warp's fair work");
  app.add_option("--warps", warps, "resident warps of the walk's grid")->check(CLI::PositiveNumber);
  if (const auto status = bhviz::bench::parseOrExit(app, argc, argv)) return *status;
  const auto mac = parseMacKind(macName);
  if (!mac) {
    std::fprintf(stderr, "bench_walk_schedule: unknown MAC %s\n", macName.c_str());
    return 2;
  }
  p.mac = *mac;
  if (const auto bad = bhviz::bench::invalidRun(p, scenario, n)) {  // before any work
    std::fprintf(stderr, "bench_walk_schedule: %s\n", bad->c_str());
    return 2;
  }

  // The state a timed walk sees: with the acceleration MAC, |a_old| of an evaluation with it.
  Simulation sim(makeCpuBackend(), makeScenario(scenario, n, 1), p);
  if (p.mac == MacKind::Acceleration) sim.recomputeForces();
  Particles s = sim.particles();
  const MacSetup setup = macSetup(p, true);
  const Tree tree = cpu::buildSortedTree(s, p.curve, p.nLeaf, setup);
  const std::vector<std::uint8_t> active(s.size(), 1);
  const Groups groups = cpu::buildGroups(tree, s.posMass, s.accPot, active, p.nGroup);

  const std::size_t g = groups.size();
  const std::vector<double> work = groupWork(tree, groups, setup);
  const double total = std::accumulate(work.begin(), work.end(), 0.0);
  const double longest = *std::max_element(work.begin(), work.end());
  const double bound = std::max(total / warps, longest);

  std::printf("%s, N %zu, %s %g, N_leaf %d, N_group %d: %zu groups over %d warps (%.1f each)\n",
              scenario.c_str(), n, macName.c_str(),
              (p.mac == MacKind::Multipole || p.mac == MacKind::Acceleration) ? effectiveMacParam(p)
                                                                              : p.theta,
              p.nLeaf, p.nGroup, g, warps, double(g) / warps);
  const std::size_t top = std::size_t(std::max_element(work.begin(), work.end()) - work.begin());
  std::printf(
      "group work / mean: max %.1f; perfect balance %.3g, longest group %.3g of it (%u "
      "targets, |a_old| %.3g)\n",
      longest / (total / g), total / warps, longest / (total / warps), groups.count[top],
      groups.accMin[top]);
  {
    const Traversal t = traversal(tree, groups, setup);
    const double inter = t.cellInteractions + t.particleInteractions;
    std::printf(
        "traversal (%zu groups walked, %.1f targets each): per group %.1f warp steps, %.0f cells "
        "tested, %.0f accepted (%.2f %% within reach: box loads; %.2f %% opened by overlap), %.0f "
        "leaves; interactions per target %.0f (%.1f %% P2P); interactions per warp step %.0f, "
        "per tested cell %.1f\n",
        groups.size(), t.targets / double(groups.size()), t.steps / double(groups.size()),
        t.tested / double(groups.size()), t.accepted / double(groups.size()),
        100.0 * t.withinReach / t.accepted, 100.0 * t.overlapOpened / t.tested,
        t.leaves / double(groups.size()), inter / t.targets, 100.0 * t.particleInteractions / inter,
        inter / t.steps, inter / t.tested);
  }
  const auto row = [&](const char* name, const std::vector<std::uint32_t>& order) {
    const double t = makespan(work, order, warps);
    std::printf("  %-40s grid time / perfect %.3f  (efficiency %.3f)\n", name, t / (total / warps),
                bound / t);
  };
  row("index order", orderBy(g, [](std::uint32_t k) { return k; }));
  row("fullest first (today's WalkSchedule)",
      orderBy(g, [&](std::uint32_t k) { return -double(groups.count[k]); }));
  row("smallest |a_old| first", orderBy(g, [&](std::uint32_t k) { return groups.accMin[k]; }));
  row("most work first (an oracle)", orderBy(g, [&](std::uint32_t k) { return -work[k]; }));

  // Groups halved by a rule, then taken fullest first and (an oracle) most work first.
  const auto splitRows = [&](const char* rule, const Groups& split) {
    const std::vector<double> w = groupWork(tree, split, setup);
    const double t = std::accumulate(w.begin(), w.end(), 0.0);
    std::printf("%s: %zu groups, work %.3f of before\n", rule, split.size(), t / total);
    const auto rowOf = [&](const char* name, const std::vector<std::uint32_t>& order) {
      std::printf("  %-40s grid time / perfect before %.3f\n", name,
                  makespan(w, order, warps) / (total / warps));
    };
    rowOf("fullest first",
          orderBy(split.size(), [&](std::uint32_t k) { return -double(split.count[k]); }));
    rowOf("smallest |a_old| first",
          orderBy(split.size(), [&](std::uint32_t k) { return split.accMin[k]; }));
    rowOf("count x |a_old|^-3/4 first", orderBy(split.size(), [&](std::uint32_t k) {
            return -double(split.count[k]) * std::pow(double(split.accMin[k]), -0.75);
          }));
    rowOf("most work first, half octaves (oracle)",
          orderBy(split.size(), [&](std::uint32_t k) { return -double(halfOctave(w[k])); }));
    rowOf("most work first (an oracle)",
          orderBy(split.size(), [&](std::uint32_t k) { return -w[k]; }));
  };
  const double limit = split * total / warps;
  char rule[160];
  std::snprintf(rule, sizeof rule, "long groups halved (work > %.2f of a warp's share)", split);
  splitRows(rule, splitLong(tree, s, groups, work, setup, limit));
  return 0;
}
