#include "sim/dist/orb.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace bhviz::sim::dist {

namespace {

float& component(Vec3& v, int axis) { return axis == 0 ? v.x : axis == 1 ? v.y : v.z; }

int longestAxis(const Box& b) {
  const Vec3 e = b.hi - b.lo;
  if (e.x >= e.y && e.x >= e.z) return 0;
  return e.y >= e.z ? 1 : 2;
}

/// The weight the low half should get: ⌊total · low / ranks⌋, without overflow.
std::uint64_t lowShare(std::uint64_t total, int low, int ranks) {
  const auto k = static_cast<std::uint64_t>(ranks), l = static_cast<std::uint64_t>(low);
  return total / k * l + total % k * l / k;
}

std::uint64_t distance(std::uint64_t a, std::uint64_t b) { return a > b ? a - b : b - a; }

/// One domain being split at this level, and the search for its cut.
struct Search {
  int name = 0;   ///< first rank
  int ranks = 0;  ///< ranks it holds
  int axis = 0;
  float lo = 0, hi = 0;  ///< the domain's extent on the axis
  std::uint64_t total = 0, target = 0;
  std::uint64_t limit = 0;   ///< a cut this near the target is good
  float best = 0;            ///< the cut nearest the target so far
  long long bestPlane = -1;  ///< its index among the frame's level-21 planes (-1: none)
  std::uint64_t bestError = UINT64_MAX;
  bool done = false;
  OrbGrid grid;         ///< this round's candidates
  long long first = 0;  ///< global index of the grid's plane j = 0 (octree planes)
  int depth = 0;        ///< octree level of the grid's spacing (0: not octree planes)
};

/// Intervals of a round's grid, and the octree levels one round resolves: a histogram of
/// 2^kRoundBits intervals per domain and round.
constexpr int kRoundBits = 12;

/// Sets a round's grid over [a, a + m·h] of domain `s` (its candidates the planes inside the
/// domain).
void setGrid(Search& s, double a, double h, int m) {
  s.grid.axis = s.axis;
  s.grid.a = static_cast<float>(a);
  s.grid.h = static_cast<float>(h);
  s.grid.m = m;
}

/// Picks the cut of a round from its histogram: the coarsest octree level with a plane within
/// the limit (the plane nearest the target there), else the nearest plane overall; returns the
/// interval [j, j + 1) where the weight below crosses the target, for the next round.
int pick(Search& s, const std::uint64_t* hist) {
  const int m = s.grid.m;
  std::vector<std::uint64_t> below(static_cast<std::size_t>(m) + 1);
  std::uint64_t acc = hist[0];
  for (int j = 0; j <= m; ++j) {
    below[static_cast<std::size_t>(j)] = acc;  // below plane j
    if (j < m) acc += hist[j + 1];
  }
  int crossing = m - 1;
  for (int j = 1; j <= m; ++j) {
    if (below[static_cast<std::size_t>(j)] >= s.target) {
      crossing = j - 1;
      break;
    }
  }
  // Candidates by octree level, coarsest first (a plain grid is one level).
  const int levels = s.depth > 0 ? kRoundBits : 1;
  for (int step = levels - 1; step >= 0; --step) {
    const long long every = 1ll << step;  // planes of the level (depth − step)
    int chosen = -1;
    std::uint64_t chosenError = UINT64_MAX;
    for (int j = 0; j <= m; ++j) {
      if (s.depth > 0 && (s.first + j) % every != 0) continue;
      const float c = s.grid.a + static_cast<float>(j) * s.grid.h;
      if (!(c > s.lo && c < s.hi)) continue;  // the plane must cut the domain
      const std::uint64_t e = distance(below[static_cast<std::size_t>(j)], s.target);
      if (e < chosenError) chosen = j, chosenError = e;
    }
    if (chosen < 0) continue;
    const float c = s.grid.a + static_cast<float>(chosen) * s.grid.h;
    const long long plane = s.depth > 0 ? (s.first + chosen) << (kMaxLevel - s.depth) : -1;
    if (chosenError < s.bestError) s.bestError = chosenError, s.best = c, s.bestPlane = plane;
    if (chosenError <= s.limit) {
      s.best = c, s.bestError = chosenError, s.bestPlane = plane;
      s.done = true;
      break;
    }
  }
  return crossing;
}

}  // namespace

KeyFrame frameAroundCut(const Box& bounds, const OrbCut& cut, float margin) {
  // The bounds made symmetric about the cut along its axis, their cube grown by the margin,
  // and its origin along the axis set so that the middle plane is the cut itself.
  Box b = bounds;
  if (cut.axis >= 0) {
    const float c = cut.position;
    const float half = std::max(c - component(b.lo, cut.axis), component(b.hi, cut.axis) - c);
    component(b.lo, cut.axis) = c - half;
    component(b.hi, cut.axis) = c + half;
  }
  KeyFrame f = keyFrameFor(b);
  f.origin = f.origin - (0.5f * margin * f.side) * Vec3{1, 1, 1};
  f.side *= 1.0f + margin;
  if (cut.axis >= 0) component(f.origin, cut.axis) = cut.position - 0.5f * f.side;
  return f;
}

OrbCuts cutsInFrame(const OrbCuts& cuts, const KeyFrame& f, bool firstCutOnMiddlePlane) {
  OrbCuts out = cuts;
  for (OrbCut& c : out.cut) c.keyScale = 0.0f;
  if (firstCutOnMiddlePlane && out.levels() > 0 && out.cut[0].axis >= 0) {
    sideByKeys(out.cut[0], f, 1u << (kKeyBitsPerAxis - 1));
  }
  return out;
}

double OrbResult::imbalance() const {
  if (weight.empty()) return 1.0;
  double sum = 0.0, max = 0.0;
  for (std::uint64_t w : weight) {
    sum += static_cast<double>(w);
    max = std::max(max, static_cast<double>(w));
  }
  return sum > 0.0 ? max * static_cast<double>(weight.size()) / sum : 1.0;
}

OrbResult decompose(int ranks, const Box& root, OrbParticles& particles, const SumOverRanks& sum,
                    const OrbSettings& settings) {
  if (ranks < 1) throw std::invalid_argument("ORB: at least one rank");
  OrbResult r;
  r.domains.assign(static_cast<std::size_t>(ranks), Box{});
  std::vector<int> span(static_cast<std::size_t>(ranks), 0);  // ranks held by domain r (0: none)
  r.domains[0] = root;
  r.cuts.ranks = ranks;
  span[0] = ranks;
  const auto K = static_cast<std::size_t>(ranks);
  // The planes the cuts snap to (side 0: none); with gridOnFirstCut, none until the first cut.
  KeyFrame grid = settings.gridOnFirstCut ? KeyFrame{{0, 0, 0}, 0.0f} : settings.grid;
  std::vector<std::uint64_t> total(K, 0);
  {
    // Every domain's weight: the root's, as "below +inf".
    std::vector<OrbCut> all(K);
    all[0] = {0, INFINITY, 0};
    particles.weighBelow(all, total);
    sum(total);
  }
  while (true) {
    std::vector<Search> level;
    for (int d = 0; d < ranks; ++d) {
      if (span[d] < 2) continue;
      Search s;
      s.name = d;
      s.ranks = span[d];
      s.axis = longestAxis(r.domains[d]);
      s.lo = component(r.domains[d].lo, s.axis);
      s.hi = component(r.domains[d].hi, s.axis);
      s.total = total[d];
      s.target = lowShare(s.total, s.ranks / 2, s.ranks);
      const bool snap = grid.side > 0.0f;
      const double fraction = snap ? settings.snapTolerance : settings.tolerance;
      s.limit = static_cast<std::uint64_t>(fraction * static_cast<double>(s.total));
      s.best = s.lo;  // a domain with no extent: everything goes high
      s.done = !(s.hi > s.lo);
      if (snap) {
        // Round 1: the octree planes of levels 1..12 of the frame over the domain.
        const double o = component(grid.origin, s.axis);
        const double h = grid.side / double(1 << kRoundBits);
        s.depth = kRoundBits;
        s.first = static_cast<long long>(std::floor((s.lo - o) / h));
        const int m = static_cast<int>(std::ceil((s.hi - o) / h)) - static_cast<int>(s.first);
        setGrid(s, o + double(s.first) * h, h, std::max(m, 1));
      } else {
        setGrid(s, s.lo, (double(s.hi) - s.lo) / double(1 << kRoundBits), 1 << kRoundBits);
      }
      level.push_back(s);
    }
    if (level.empty()) break;
    ++r.levels;
    // Rounds: one pass and one reduction each; the second refines the first's crossing
    // interval (octree levels 13..21, or 2^-24 of the extent without a frame).
    for (int round = 0; round < 2; ++round) {
      std::vector<OrbGrid> grids(K);
      int entries = 0;
      for (Search& s : level) {
        if (s.done || !(s.grid.h > 0.0f)) continue;
        s.grid.offset = entries;
        grids[static_cast<std::size_t>(s.name)] = s.grid;
        entries += s.grid.m + 2;
      }
      if (entries == 0) break;
      std::vector<std::uint64_t> hist(static_cast<std::size_t>(entries), 0);
      particles.histogram(grids, hist);
      sum(hist);
      ++r.iterations;
      for (Search& s : level) {
        if (s.done || grids[static_cast<std::size_t>(s.name)].axis < 0) continue;
        const int j = pick(s, hist.data() + s.grid.offset);
        if (s.done || round == 1) continue;
        const double a = double(s.grid.a) + double(j) * s.grid.h;
        const int sub = s.depth > 0 ? 1 << (kMaxLevel - kRoundBits) : 1 << kRoundBits;
        if (s.depth > 0) {
          s.first = (s.first + j) * sub;
          s.depth = kMaxLevel;
        }
        setGrid(s, a, double(s.grid.h) / sub, sub);
      }
    }
    // Apply the best cut of each domain, and weigh the halves with it.
    std::vector<OrbCut> cuts(K);
    std::vector<std::uint64_t> below(K, 0);
    for (Search& b : level) {
      OrbCut& c = cuts[b.name];
      if (b.bestPlane >= 0 && b.bestPlane <= (1ll << kMaxLevel)) {
        // On a plane of the frame: at the plane (the candidates' float sums lie a few ulps off
        // it), and sided as the keys side it (OrbCut::keyScale).
        const double unit = grid.side / double(1 << kMaxLevel);
        b.best = static_cast<float>(component(grid.origin, b.axis) + double(b.bestPlane) * unit);
        c = {b.axis, b.best, b.name + b.ranks / 2};
        sideByKeys(c, grid, static_cast<std::uint32_t>(b.bestPlane));
      } else {
        c = {b.axis, b.best, b.name + b.ranks / 2};
      }
    }
    if (settings.gridOnFirstCut && r.levels == 1 && cuts[0].axis >= 0) {
      // The frame around the first cut, whose middle plane it is; the later levels snap to it.
      grid = frameAroundCut(root, cuts[0], settings.gridMargin);
      sideByKeys(cuts[0], grid, 1u << (kKeyBitsPerAxis - 1));
    }
    particles.weighBelow(cuts, below);
    sum(below);
    particles.split(cuts);
    r.cuts.cut.insert(r.cuts.cut.end(), cuts.begin(), cuts.end());
    for (const Search& b : level) {
      const int high = b.name + b.ranks / 2;
      Box& low = r.domains[b.name];
      Box up = low;
      component(low.hi, b.axis) = b.best;
      component(up.lo, b.axis) = b.best;
      r.domains[high] = up;
      span[high] = b.ranks - b.ranks / 2;
      span[b.name] = b.ranks / 2;
      total[high] = b.total - below[b.name];
      total[b.name] = below[b.name];
    }
  }
  r.weight = total;
  r.frame = grid;
  return r;
}

bool RebalanceLedger::due(double elapsedMs, double imbalance, double growth, double threshold,
                          double cutMs) {
  const double factor = std::max(imbalance, 1.0) * std::max(growth, 1.0);
  lostMs += std::max(elapsedMs, 0.0) * (1.0 - 1.0 / factor);
  const bool passed = imbalance > threshold || growth > threshold;
  return passed && lostMs >= cutMs;
}

}  // namespace bhviz::sim::dist
