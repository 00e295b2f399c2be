#include "sim/dist/orb.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace bhviz::sim::dist {

namespace {

float& component(Vec3& v, int axis) { return axis == 0 ? v.x : axis == 1 ? v.y : v.z; }
float component(const Vec3& v, int axis) { return axis == 0 ? v.x : axis == 1 ? v.y : v.z; }

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

/// One domain being split at this level, and its bisection.
struct Bisection {
  int name = 0;   ///< first rank
  int ranks = 0;  ///< ranks it holds
  int axis = 0;
  float lo = 0, hi = 0;    ///< the bisection's interval
  float lo0 = 0, hi0 = 0;  ///< the domain's extent on the axis
  std::uint64_t total = 0, target = 0, tolerance = 0;
  float best = 0;  ///< the cut nearest the target so far
  std::uint64_t bestError = UINT64_MAX;
  bool done = false;
};

/// Moves each cut to the coarsest grid plane (levels 1, 2, … of the frame's octree) that keeps
/// the weight below within the snap tolerance; a cut no plane serves stays where it was.
void snapToGrid(std::vector<Bisection>& level, int ranks, OrbParticles& particles,
                const SumOverRanks& sum, const OrbSettings& settings, int& iterations) {
  const KeyFrame& g = settings.grid;
  std::vector<bool> snapped(level.size(), false);
  std::vector<OrbCut> cuts;
  std::vector<std::uint64_t> below;
  for (int depth = 1; depth <= kKeyBitsPerAxis; ++depth) {
    const float h = g.side / static_cast<float>(1u << depth);
    cuts.assign(static_cast<std::size_t>(ranks), OrbCut{});
    bool any = false;
    std::vector<float> candidate(level.size(), 0.0f);
    for (std::size_t k = 0; k < level.size(); ++k) {
      const Bisection& b = level[k];
      if (snapped[k] || b.total == 0) continue;
      const float o = component(static_cast<const Vec3&>(g.origin), b.axis);
      const float c = o + std::round((b.best - o) / h) * h;
      if (!(c > b.lo0 && c < b.hi0)) continue;  // the plane must cut the domain
      candidate[k] = c;
      cuts[b.name] = {b.axis, c, b.name + b.ranks / 2};
      any = true;
    }
    if (!any) continue;
    below.assign(cuts.size(), 0);
    particles.weighBelow(cuts, below);
    sum(below);
    ++iterations;
    bool open = false;
    for (std::size_t k = 0; k < level.size(); ++k) {
      Bisection& b = level[k];
      if (snapped[k]) continue;
      if (cuts[b.name].axis < 0) {
        open = true;
        continue;
      }
      const auto limit =
          static_cast<std::uint64_t>(settings.snapTolerance * static_cast<double>(b.total));
      if (distance(below[b.name], b.target) <= std::max(limit, b.bestError)) {
        b.best = candidate[k];
        snapped[k] = true;
      } else {
        open = true;
      }
    }
    if (!open) break;
  }
}

}  // namespace

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
  span[0] = ranks;
  const auto K = static_cast<std::size_t>(ranks);
  std::vector<std::uint64_t> total(K, 0);
  {
    // Every domain's weight: the root's, as "below +inf".
    std::vector<OrbCut> all(K);
    all[0] = {0, INFINITY, 0};
    particles.weighBelow(all, total);
    sum(total);
  }
  while (true) {
    std::vector<Bisection> level;
    for (int d = 0; d < ranks; ++d) {
      if (span[d] < 2) continue;
      Bisection b;
      b.name = d;
      b.ranks = span[d];
      b.axis = longestAxis(r.domains[d]);
      b.lo = component(r.domains[d].lo, b.axis);
      b.hi = component(r.domains[d].hi, b.axis);
      b.lo0 = b.lo, b.hi0 = b.hi;
      b.total = total[d];
      b.target = lowShare(b.total, b.ranks / 2, b.ranks);
      b.tolerance = static_cast<std::uint64_t>(settings.tolerance * static_cast<double>(b.total));
      b.best = 0.5f * (b.lo + b.hi);
      level.push_back(b);
    }
    if (level.empty()) break;
    ++r.levels;
    std::vector<OrbCut> cuts(K);
    std::vector<std::uint64_t> below(K, 0);
    for (int it = 0; it < settings.maxIterations; ++it) {
      bool open = false;
      for (const Bisection& b : level) {
        if (b.done) continue;
        cuts[b.name] = {b.axis, 0.5f * (b.lo + b.hi), b.name + b.ranks / 2};
        open = true;
      }
      if (!open) break;
      std::fill(below.begin(), below.end(), 0);
      // Domains already cut are weighed too (axis kept), harmlessly: one reduction per level step.
      particles.weighBelow(cuts, below);
      sum(below);
      ++r.iterations;
      for (Bisection& b : level) {
        if (b.done) continue;
        const float cut = cuts[b.name].position;
        const std::uint64_t error = distance(below[b.name], b.target);
        if (error < b.bestError) b.bestError = error, b.best = cut;
        if (error <= b.tolerance) {
          b.done = true;
        } else if (below[b.name] < b.target) {
          b.lo = cut;
        } else {
          b.hi = cut;
        }
        // The interval has shrunk to neighbouring floats: no cut between them does better.
        if (!(0.5f * (b.lo + b.hi) > b.lo && 0.5f * (b.lo + b.hi) < b.hi)) b.done = true;
      }
    }
    if (settings.grid.side > 0.0f) snapToGrid(level, ranks, particles, sum, settings, r.iterations);
    // Apply the best cut of each domain, and weigh the halves with it.
    std::fill(cuts.begin(), cuts.end(), OrbCut{});
    for (const Bisection& b : level) cuts[b.name] = {b.axis, b.best, b.name + b.ranks / 2};
    std::fill(below.begin(), below.end(), 0);
    particles.weighBelow(cuts, below);
    sum(below);
    particles.split(cuts);
    for (const Bisection& b : level) {
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
  return r;
}

}  // namespace bhviz::sim::dist
