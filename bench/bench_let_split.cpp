// Where K trees cost more interactions than one (CPU, one process). A scenario's particles are
// cut by the ORB into K domains as a distributed run cuts them (work-weighted, cuts snapped to
// the run's key frame's octree planes), optionally drift on for a while with the domains kept
// (a run decomposes again only when its work's balance or growth says so), and each particle's
// interactions are compared, by id, across
//   one      one tree of every particle in the run's frame, its own groups;
//   one|r    the same tree, its groups restricted to each rank's particles (what the groups'
//            shapes change alone);
//   split|g  each rank's own tree and the others' LETs (cut for those groups' region), walked
//            by the groups of one|r (what the sources' split changes alone);
//   split    each rank's own tree and LETs, its own groups (a distributed run's walk);
//   merged   each rank's tree with the LETs merged in (mergeEssentialTree), its own groups;
// and "one, tight": one process's tree, in the particles' own cube. Each particle is binned by
// its distance to the nearest other domain, so the table says whether an excess sits at the
// cut or everywhere; --explain lists, level by level, what the particle with the largest excess
// takes from each tree.
//
// What it found (docs/ARCHITECTURE.md, "What the split into trees costs"): after one step of a
// 1 M merger with the strays kept, +2.3 % everywhere, from the strays' sparse cells as wide as
// the domain face that every group opens (a level-1 leaf of 5 strays, a few hundred units wide);
// with the strays sent on (DistSettings::migrate) none.
//
//   bench_let_split --scenario merger --n 1000000 --ranks 2 --drift 0.015625 --strays kept
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_cli.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/dist/orb.h"
#include "sim/ic/initial_conditions.h"
#include "sim/let.h"
#include "sim/params.h"

using namespace bhviz::sim;

namespace {

/// Each particle's interactions (cells + leaf particles, by id) in one way of walking.
struct Variant {
  const char* name;
  std::vector<double> work;
  InteractionCounts counts;
};

void addCounts(InteractionCounts& to, const InteractionCounts& c) {
  to.cell += c.cell;
  to.particle += c.particle;
}

/// Adds `work` (in the order of `p`) to `byId`.
void addById(const Particles& p, const std::vector<std::uint32_t>& work,
             std::vector<double>& byId) {
  for (std::size_t i = 0; i < p.size(); ++i) byId[p.id[i]] += work[i];
}

/// One tree of `p` (sorted in place) in `frame`, walked by its own groups.
Variant walkOneTree(const char* name, Particles& p, const KeyFrame& frame, const SimParams& sp,
                    const cpu::WalkSettings& s, Tree& tree) {
  const std::size_t n = p.size();
  tree = cpu::buildSortedTree(p, sp.curve, sp.nLeaf, s.mac, nullptr, &frame);
  const std::vector<std::uint8_t> active(n, 1);
  const Groups g = cpu::buildGroups(tree, p.posMass, p.accPot, active, sp.nGroup);
  std::vector<Vec4> acc(n);
  std::vector<std::uint32_t> w(n, 0);
  Variant v{name, std::vector<double>(n, 0.0), {}};
  v.counts =
      cpu::walkSources(tree, p.posMass, g, p.posMass, active, s, cpu::WalkMode::Write, acc, &w);
  addById(p, w, v.work);
  return v;
}

void printBox(const char* what, int r, const Box& b) {
  std::printf("  %s %d: [%.4g %.4g] x [%.4g %.4g] x [%.4g %.4g]\n", what, r, b.lo.x, b.hi.x, b.lo.y,
              b.hi.y, b.lo.z, b.hi.z);
}

/// A group's interaction list in `t`, by level: cells accepted / leaves opened (their particles).
void printList(const char* name, const Tree& t, const cpu::InteractionList& list) {
  std::vector<int> cells(32, 0), leaves(32, 0), particles(32, 0);
  for (std::uint32_t c : list.cells) ++cells[t.level[c]];
  for (std::uint32_t c : list.leaves) ++leaves[t.level[c]], particles[t.level[c]] += t.count[c];
  std::printf("  %-6s %zu cells, %zu leaves; by level, cells/leaves(particles):", name,
              list.cells.size(), list.leaves.size());
  for (int l = 0; l < 32; ++l) {
    if (cells[l] || leaves[l]) std::printf(" L%d %d/%d(%d)", l, cells[l], leaves[l], particles[l]);
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Where K trees cost more interactions than one (CPU)"};
  std::string scenario = "merger", macName = "bonsai", strays = "sent";
  std::size_t n = 1'000'000;
  int ranks = 2;
  std::uint64_t seed = 1;
  float theta = 0.5f, margin = 0.05f, driftTime = 0.0f;
  double snap = 0.01;
  bool unitWeights = false, explain = false, centerFrame = false;
  app.add_option("--scenario", scenario);
  app.add_option("--n", n);
  app.add_option("--ranks", ranks)->check(CLI::Range(2, 16));
  app.add_option("--seed", seed);
  app.add_option("--mac", macName, "bonsai (default), bh or multipole");
  app.add_option("--theta", theta);
  app.add_option("--snap", snap, "the ORB's snap tolerance (0: cuts not on octree planes)");
  app.add_option("--margin", margin, "the run's frame: the particles' cube grown by this [1]");
  app.add_flag("--unit-weights", unitWeights, "the ORB balances counts (a run's first cut)");
  app.add_option("--drift", driftTime, "time the particles drift after the cut, domains kept");
  app.add_option("--strays", strays,
                 "after the drift, particles out of their domain: sent (to the domain they are "
                 "in now, default) or kept (on their rank)")
      ->check(CLI::IsMember({"sent", "kept"}));
  app.add_flag("--center-frame", centerFrame,
               "the frame centred on the first cut (OrbSettings::gridOnFirstCut)");
  app.add_flag("--explain", explain, "the largest excess's interaction lists, level by level");
  if (const auto status = bhviz::bench::parseOrExit(app, argc, argv)) return *status;

  SimParams p;
  p.theta = theta;
  const std::optional<MacKind> kind = parseMacKind(macName);
  if (!kind || *kind == MacKind::Acceleration) {
    std::fprintf(stderr, "--mac %s: bonsai, bh or multipole (the acceleration MAC needs |a_old|)\n",
                 macName.c_str());
    return 2;
  }
  p.mac = *kind;
  if (const auto bad = bhviz::bench::invalidRun(p, scenario, n)) {  // before any work
    std::fprintf(stderr, "bench_let_split: %s\n", bad->c_str());
    return 2;
  }
  const MacSetup mac = macSetup(p, false);
  cpu::WalkSettings s;
  s.mac = mac;
  s.quadrupole = p.quadrupole;
  s.softening = p.softening;

  Particles one = makeScenario(scenario, n, seed);
  n = one.size();
  Box bounds;
  for (const Vec4& q : one.posMass) grow(bounds, xyz(q));
  // A distributed run's frame: the particles' cube grown by the margin (sim/dist/rank.cpp),
  // kept between decompositions, or with --center-frame the one the decomposition makes around
  // its first cut; one process builds in the particles' own cube.
  const KeyFrame tight = keyFrameFor(bounds);
  KeyFrame frame = dist::frameAroundCut(bounds, OrbCut{}, margin);

  // The cut, as a run makes it: weights the work of one tree in the plain frame.
  Tree tOne;
  Variant vOne = walkOneTree("one", one, frame, p, s, tOne);
  std::vector<std::uint64_t> weight(n);
  for (std::size_t i = 0; i < n; ++i) {
    weight[i] = unitWeights ? 1 : orbWeight(static_cast<std::uint32_t>(vOne.work[one.id[i]]), 0);
  }
  HostOrbParticles orb(one.posMass, weight);
  dist::OrbSettings settings;
  if (snap > 0.0) {
    settings.grid = frame;
    settings.gridOnFirstCut = centerFrame;
    settings.gridMargin = margin;
    settings.snapTolerance = snap;
  }
  const dist::OrbResult cut = dist::decompose(
      ranks, bounds, orb, [](std::vector<std::uint64_t>&) {}, settings);
  std::printf("%s, N = %zu, K = %d, MAC %s, theta %.2f: ORB imbalance %.4f\n", scenario.c_str(), n,
              ranks, macName.c_str(), theta, cut.imbalance());
  for (int r = 0; r < ranks; ++r) printBox("domain", r, cut.domains[r]);
  std::vector<int> domainOf(n);
  for (std::size_t i = 0; i < n; ++i) domainOf[one.id[i]] = orb.domain()[i];
  if (settings.gridOnFirstCut) {
    frame = cut.frame;
    std::printf("  the frame around the first cut: side %.4g\n", frame.side);
    vOne = walkOneTree("one", one, frame, p, s, tOne);
  }

  // The particles drift on, the domains and the frame kept; the strays sent on or not.
  if (driftTime > 0.0f) {
    std::size_t moved = 0;
    for (std::size_t i = 0; i < n; ++i) {
      Vec4& x = one.posMass[i];
      const Vec4& v = one.vel[i];
      x.x += v.x * driftTime, x.y += v.y * driftTime, x.z += v.z * driftTime;
      const int now = orbDomainOf(cut.cuts.cut.data(), cut.cuts.levels(), ranks, xyz(x));
      if (now == domainOf[one.id[i]]) continue;
      ++moved;
      if (strays == "sent") domainOf[one.id[i]] = now;
    }
    std::printf("  after a drift of %g: %zu particles out of their domain, %s\n", driftTime, moved,
                strays.c_str());
    vOne = walkOneTree("one", one, frame, p, s, tOne);
  }
  Variant vTight{"one,tight", {}, {}};
  {
    Particles q = one;
    Tree t;
    vTight = walkOneTree("one,tight", q, tight, p, s, t);
  }
  auto rankOf = [&](std::size_t i) { return domainOf[one.id[i]]; };

  // Each rank's particles, tree and groups, in the run's frame.
  std::vector<Particles> part(ranks);
  for (std::size_t i = 0; i < n; ++i) {
    Particles& out = part[rankOf(i)];
    out.resize(out.size() + 1);
    copyParticle(one, i, out, out.size() - 1);
  }
  std::vector<Tree> trees(ranks);
  std::vector<Groups> groups(ranks);
  for (int r = 0; r < ranks; ++r) {
    trees[r] = cpu::buildSortedTree(part[r], p.curve, p.nLeaf, mac, nullptr, &frame);
    const std::vector<std::uint8_t> active(part[r].size(), 1);
    groups[r] = cpu::buildGroups(trees[r], part[r].posMass, part[r].accPot, active, p.nGroup);
  }
  /// The one tree's groups of rank r's particles, their region, and the others' LETs for it.
  struct OneTreeGroups {
    std::vector<std::uint8_t> mine;
    Groups groups;
    TargetRegion region;
    std::vector<LetTree> lets;
  };
  auto oneTreeGroups = [&](int r) {
    OneTreeGroups o;
    o.mine.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) o.mine[i] = rankOf(i) == r;
    o.groups = cpu::buildGroups(tOne, one.posMass, one.accPot, o.mine, p.nGroup);
    for (const Box& b : o.groups.box) grow(o.region.box, b);
    for (int q = 0; q < ranks; ++q) {
      if (q != r) o.lets.push_back(essentialTree(trees[q], part[q].posMass, mac, o.region));
    }
    return o;
  };

  Variant vOneR{"one|r", std::vector<double>(n, 0.0), {}};
  Variant vSplitG{"split|g", std::vector<double>(n, 0.0), {}};
  Variant vSplit{"split", std::vector<double>(n, 0.0), {}};
  Variant vMerged{"merged", std::vector<double>(n, 0.0), {}};
  std::vector<Vec4> acc(n);
  std::vector<std::uint32_t> w(n);
  for (int r = 0; r < ranks; ++r) {
    const OneTreeGroups o = oneTreeGroups(r);
    printBox("region of rank", r, o.region.box);
    std::fill(w.begin(), w.end(), 0u);
    addCounts(vOneR.counts, cpu::walkSources(tOne, one.posMass, o.groups, one.posMass, o.mine, s,
                                             cpu::WalkMode::Write, acc, &w));
    addById(one, w, vOneR.work);

    std::fill(w.begin(), w.end(), 0u);
    addCounts(vSplitG.counts, cpu::walkSources(trees[r], part[r].posMass, o.groups, one.posMass,
                                               o.mine, s, cpu::WalkMode::Write, acc, &w));
    for (const LetTree& let : o.lets) {
      addCounts(vSplitG.counts, cpu::walkSources(let.tree, let.posMass, o.groups, one.posMass,
                                                 o.mine, s, cpu::WalkMode::Add, acc, &w));
    }
    addById(one, w, vSplitG.work);

    // A distributed run's walk: the rank's own groups over its tree and the LETs, apart and
    // merged.
    const Particles& pr = part[r];
    const std::vector<std::uint8_t> active(pr.size(), 1);
    TargetRegion region;
    for (const Box& b : groups[r].box) grow(region.box, b);
    std::vector<Vec4> accR(pr.size());
    std::vector<std::uint32_t> wr(pr.size(), 0);
    addCounts(vSplit.counts, cpu::walkSources(trees[r], pr.posMass, groups[r], pr.posMass, active,
                                              s, cpu::WalkMode::Write, accR, &wr));
    MergedTree merged{trees[r], pr.posMass, {}};
    for (int q = 0; q < ranks; ++q) {
      if (q == r) continue;
      const LetTree let = essentialTree(trees[q], part[q].posMass, mac, region);
      addCounts(vSplit.counts, cpu::walkSources(let.tree, let.posMass, groups[r], pr.posMass,
                                                active, s, cpu::WalkMode::Add, accR, &wr));
      merged = mergeEssentialTree(merged.tree, merged.sources, let, mac);
    }
    addById(pr, wr, vSplit.work);
    std::fill(wr.begin(), wr.end(), 0u);
    addCounts(vMerged.counts, cpu::walkSources(merged.tree, merged.sources, groups[r], pr.posMass,
                                               active, s, cpu::WalkMode::Write, accR, &wr));
    addById(pr, wr, vMerged.work);
  }

  double totalOne = 0.0;
  for (double x : vOne.work) totalOne += x;
  std::printf("\ninteractions per particle, and the walks' cells and particles:\n");
  for (const Variant* v : {&vTight, &vOne, &vOneR, &vSplitG, &vSplit, &vMerged}) {
    double t = 0.0;
    for (double x : v->work) t += x;
    std::printf("  %-10s %8.1f  %+6.2f %%   (cells %.4g, particles %.4g)\n", v->name, t / double(n),
                100.0 * (t - totalOne) / totalOne, double(v->counts.cell),
                double(v->counts.particle));
  }

  // Bins of distance to the nearest other domain / frame side: [0, 2^-14), then octaves.
  std::vector<float> distance(n, INFINITY);
  for (std::size_t i = 0; i < n; ++i) {
    for (int q = 0; q < ranks; ++q) {
      if (q == rankOf(i)) continue;
      distance[one.id[i]] = std::min(
          distance[one.id[i]], std::sqrt(distSqPointBox(xyz(one.posMass[i]), cut.domains[q])));
    }
  }
  constexpr int kBins = 16;
  auto binOf = [&](float d) {
    const double u = d / frame.side;
    if (u < std::ldexp(1.0, -14)) return 0;
    return std::clamp(15 + static_cast<int>(std::floor(std::log2(u))), 1, kBins - 1);
  };
  const Variant* variants[] = {&vOneR, &vSplitG, &vSplit, &vMerged};
  std::vector<std::size_t> count(kBins, 0);
  std::vector<double> sumOne(kBins, 0.0);
  std::vector<std::vector<double>> excess(4, std::vector<double>(kBins, 0.0));
  for (std::size_t id = 0; id < n; ++id) {
    const int b = binOf(distance[id]);
    ++count[b];
    sumOne[b] += vOne.work[id];
    for (int k = 0; k < 4; ++k) excess[k][b] += variants[k]->work[id] - vOne.work[id];
  }
  std::printf(
      "\nby distance to the nearest other domain (/ frame side): the bin's mean in 'one', and "
      "each way's excess over 'one' as %% of all of 'one''s interactions:\n");
  std::printf("  %-18s %9s %9s", "distance", "particles", "one/p");
  for (const Variant* v : variants) std::printf(" %9s", v->name);
  std::printf("\n");
  for (int b = 0; b < kBins; ++b) {
    if (count[b] == 0) continue;
    std::printf("  [%6.1e, %6.1e) %9zu %9.1f", b == 0 ? 0.0 : std::ldexp(1.0, b - 15),
                std::ldexp(1.0, b - 14), count[b], sumOne[b] / double(count[b]));
    for (int k = 0; k < 4; ++k) std::printf(" %+8.2f%%", 100.0 * excess[k][b] / totalOne);
    std::printf("\n");
  }

  if (explain) {
    std::uint32_t worst = 0;
    for (std::uint32_t id = 1; id < n; ++id) {
      if (vSplitG.work[id] - vOneR.work[id] > vSplitG.work[worst] - vOneR.work[worst]) worst = id;
    }
    std::size_t at = 0;
    while (one.id[at] != worst) ++at;
    const int r = domainOf[worst];
    const OneTreeGroups o = oneTreeGroups(r);
    const std::int64_t g = cpu::groupContaining(o.groups, static_cast<std::uint32_t>(at));
    const Box& box = o.groups.box[static_cast<std::size_t>(g)];
    const Vec3 x = xyz(one.posMass[at]);
    std::printf(
        "\nthe largest excess: particle %u of rank %d at (%.4g, %.4g, %.4g), %.0f "
        "interactions in one|r, %.0f in split|g; its group:\n",
        worst, r, x.x, x.y, x.z, vOneR.work[worst], vSplitG.work[worst]);
    printBox("group", static_cast<int>(g), box);
    const float accMin = o.groups.accMin[static_cast<std::size_t>(g)];
    printList("one", tOne, cpu::buildInteractionList(tOne, box, accMin, mac));
    printList("own", trees[r], cpu::buildInteractionList(trees[r], box, accMin, mac));
    for (const LetTree& let : o.lets) {
      printList("LET", let.tree, cpu::buildInteractionList(let.tree, box, accMin, mac));
    }
  }
  return 0;
}
