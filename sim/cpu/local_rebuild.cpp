// A tree rebuilt only around the targets (issue 14; docs/BENCHMARKS.md, "A tree rebuilt around
// the targets"): the cells that cover them have their particles keyed and sorted again, and
// their subtrees are built again and spliced into the last tree's level arrays. The CPU twin of
// the GPU's plan, checked against a whole buildTree (tests/test_local_rebuild.cpp).
#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "sim/common/cover.h"
#include "sim/common/hilbert_table.h"
#include "sim/cpu/cpu_stages.h"

namespace bhviz::sim::cpu {

namespace {

/// Throws unless `cells` are cells of `t` whose particle ranges do not overlap; returns them in
/// key order.
std::vector<std::uint32_t> disjointInKeyOrder(const Tree& t, std::vector<std::uint32_t> cells,
                                              const char* who) {
  for (const std::uint32_t c : cells) {
    if (c >= t.cellCount()) {
      throw std::out_of_range(std::string(who) + ": no cell " + std::to_string(c));
    }
  }
  std::sort(cells.begin(), cells.end(),
            [&](std::uint32_t a, std::uint32_t b) { return t.first[a] < t.first[b]; });
  for (std::size_t v = 1; v < cells.size(); ++v) {
    const std::uint32_t a = cells[v - 1], b = cells[v];
    if (t.first[a] + t.count[a] > t.first[b]) {
      throw std::invalid_argument(std::string(who) + ": cells " + std::to_string(a) + " and " +
                                  std::to_string(b) + " overlap");
    }
  }
  return cells;
}

}  // namespace

std::vector<std::uint32_t> coverTargets(const Tree& t, const std::vector<std::uint8_t>& active,
                                        double share) {
  std::vector<std::uint32_t> cover;
  if (t.cellCount() == 0) return cover;
  // Active particles before each one: a cell's are the difference at its range's ends.
  std::vector<std::uint32_t> before(active.size() + 1, 0);
  for (std::size_t i = 0; i < active.size(); ++i) before[i + 1] = before[i] + (active[i] != 0);
  const auto targetsIn = [&](std::uint32_t c) {
    return std::size_t(before[t.first[c] + t.count[c]] - before[t.first[c]]);
  };
  // From the smallest cell holding every active particle (docs/BENCHMARKS.md's measured rule),
  // depth first in key order, so that the cover comes out in key order.
  std::uint32_t start = 0;
  for (bool down = true; down;) {
    down = false;
    std::uint32_t holding = 0, only = 0;
    for (std::uint32_t j = 0; j < t.childCount[start]; ++j) {
      if (targetsIn(t.child[start] + j) > 0) ++holding, only = t.child[start] + j;
    }
    if (holding == 1) start = only, down = true;
  }
  std::vector<std::uint32_t> stack = {start};
  while (!stack.empty()) {
    const std::uint32_t c = stack.back();
    stack.pop_back();
    const std::size_t k = targetsIn(c);
    if (k == 0) continue;
    if (coverSplits(static_cast<std::uint32_t>(k), t.count[c], t.childCount[c], share)) {
      for (std::uint32_t j = t.childCount[c]; j-- > 0;) stack.push_back(t.child[c] + j);
    } else {
      cover.push_back(c);
    }
  }
  return cover;
}

void rekeyCells(const Tree& t, const std::vector<std::uint32_t>& cells, Curve curve, Particles& p,
                std::vector<std::uint64_t>& keys) {
  if (keys.size() != p.size()) throw std::invalid_argument("rekeyCells: a key per particle");
  std::vector<std::uint32_t> order(p.size());
  std::iota(order.begin(), order.end(), 0u);
  for (const std::uint32_t c : disjointInKeyOrder(t, cells, "rekeyCells")) {
    const std::uint32_t first = t.first[c], count = t.count[c];
    if (count == 0) continue;
    // The cell's cube: that of its first key's point (every key of the cell shares its prefix).
    const KeyCoords inCell = decodeKey(curve, keys[first]);
    std::vector<std::uint64_t> fresh(count);
    for (std::uint32_t i = 0; i < count; ++i) {
      const KeyCoords q = quantize(xyz(p.posMass[first + i]), t.frame);
      fresh[i] = encodeKeyByTable(curve, clampIntoCell(q, inCell, t.level[c]), kHilbertTable);
    }
    const std::vector<std::uint32_t> local = sortOrder(fresh);
    for (std::uint32_t i = 0; i < count; ++i) {
      order[first + i] = first + local[i];
      keys[first + i] = fresh[local[i]];
    }
  }
  reorder(p, order);
}

namespace {

/// One level of a subtree built alone: its cells in key order, and for each the index of its
/// first child in the subtree's next level (0 for a leaf).
struct SubtreeLevel {
  std::vector<std::uint32_t> first, count, child;
  std::vector<std::uint8_t> childCount;
};

/// buildTree's split rule from cell (first, count) at `level` down; [0] holds the cell itself.
std::vector<SubtreeLevel> buildSubtree(const std::vector<std::uint64_t>& keys, std::uint32_t first,
                                       std::uint32_t count, int level, int nLeaf) {
  std::vector<SubtreeLevel> levels(1);
  levels[0].first = {first};
  levels[0].count = {count};
  levels[0].child = {0};
  levels[0].childCount = {0};
  for (int L = level; L < kMaxLevel; ++L) {
    SubtreeLevel& here = levels.back();
    SubtreeLevel next;
    for (std::size_t c = 0; c < here.first.size(); ++c) {
      if (here.count[c] <= static_cast<std::uint32_t>(nLeaf)) continue;
      here.child[c] = static_cast<std::uint32_t>(next.first.size());
      forEachChildRun(keys, here.first[c], here.count[c], L, [&](std::uint32_t f, std::uint32_t n) {
        next.first.push_back(f);
        next.count.push_back(n);
        next.child.push_back(0);
        next.childCount.push_back(0);
        ++here.childCount[c];
      });
    }
    if (next.first.empty()) break;
    levels.push_back(std::move(next));
  }
  return levels;
}

/// A covered cell: its subtree built alone, and its old descendants, one run [begin, end) of
/// old level `level + d` for d = 0, 1, ... (empty where it had none: there, the place in key
/// order where they would be), for as many levels as the old tree or the new subtree has.
struct Covered {
  std::uint32_t cell;
  int level;
  std::vector<SubtreeLevel> sub;
  std::vector<std::uint32_t> runBegin, runEnd;
};

Covered coveredCell(const Tree& old, const std::vector<std::uint64_t>& keys, std::uint32_t c,
                    int nLeaf) {
  Covered v{
      c, old.level[c], buildSubtree(keys, old.first[c], old.count[c], old.level[c], nLeaf), {}, {}};
  // A level's cells are disjoint runs of particles in key order: c's descendants there are the
  // cells whose first particle lies in c's range.
  const int levels = std::max(old.depth(), v.level + static_cast<int>(v.sub.size()));
  for (int L = v.level; L < levels; ++L) {
    std::uint32_t begin = 0, end = 0;
    if (L < old.depth()) {
      const auto b = old.first.begin() + old.levelBegin[L];
      const auto e = old.first.begin() + old.levelBegin[L + 1];
      begin = static_cast<std::uint32_t>(std::lower_bound(b, e, old.first[c]) - old.first.begin());
      end = static_cast<std::uint32_t>(std::lower_bound(b, e, old.first[c] + old.count[c]) -
                                       old.first.begin());
    }
    v.runBegin.push_back(begin);
    v.runEnd.push_back(end);
  }
  return v;
}

constexpr std::uint32_t kNotKept = 0xffffffffu;

}  // namespace

Tree spliceSubtrees(const Tree& old, const std::vector<std::uint64_t>& keys,
                    const std::vector<std::uint32_t>& cells, int nLeaf) {
  if (old.cellCount() > 0 && keys.size() != old.count[0]) {
    throw std::invalid_argument("spliceSubtrees: a key per particle of the tree");
  }
  std::vector<Covered> covered;
  for (const std::uint32_t c : disjointInKeyOrder(old, cells, "spliceSubtrees")) {
    covered.push_back(coveredCell(old, keys, c, nLeaf));
  }

  // Level by level: the old cells kept, each covered cell's new cells in place of its old
  // descendants' run (the runs come in the covered cells' key order in every level). A kept
  // cell keeps its old child link for now; a new cell its subtree-relative one.
  Tree t;
  t.frame = old.frame;
  t.levelBegin = {0};
  std::vector<std::uint32_t> newOfOld(old.cellCount(), kNotKept);
  std::vector<std::vector<std::uint32_t>> subStart(covered.size());  // [v][d]: first new cell
  const auto push = [&](std::uint32_t first, std::uint32_t count, std::uint32_t child,
                        std::uint8_t childCount, int level) {
    t.first.push_back(first);
    t.count.push_back(count);
    t.child.push_back(child);
    t.childCount.push_back(childCount);
    t.level.push_back(static_cast<std::uint8_t>(level));
  };
  for (int L = 0;; ++L) {
    const std::size_t levelStart = t.first.size();
    std::uint32_t k = L < old.depth() ? old.levelBegin[L] : 0;
    const std::uint32_t kEnd = L < old.depth() ? old.levelBegin[L + 1] : 0;
    const auto keepUpTo = [&](std::uint32_t upTo) {
      for (; k < upTo; ++k) {
        newOfOld[k] = static_cast<std::uint32_t>(t.first.size());
        push(old.first[k], old.count[k], old.child[k], old.childCount[k], L);
      }
    };
    for (std::size_t v = 0; v < covered.size(); ++v) {
      const Covered& c = covered[v];
      const int d = L - c.level;
      if (d < 1 || d >= static_cast<int>(c.runBegin.size())) continue;
      keepUpTo(c.runBegin[d]);
      subStart[v].resize(d + 1);
      subStart[v][d] = static_cast<std::uint32_t>(t.first.size());
      if (d < static_cast<int>(c.sub.size())) {
        const SubtreeLevel& s = c.sub[d];
        for (std::size_t i = 0; i < s.first.size(); ++i) {
          push(s.first[i], s.count[i], s.child[i], s.childCount[i], L);
        }
      }
      k = std::max(k, c.runEnd[d]);
    }
    keepUpTo(kEnd);
    if (t.first.size() == levelStart) break;
    t.levelBegin.push_back(static_cast<std::uint32_t>(t.first.size()));
  }

  // The links: a kept cell's to its old children's new places (never a covered run's: those
  // hold only covered cells' descendants); a covered cell's and its new cells' to the
  // subtree's next level.
  for (std::uint32_t k = 0; k < old.cellCount(); ++k) {
    const std::uint32_t n = newOfOld[k];
    if (n != kNotKept && t.childCount[n] > 0) t.child[n] = newOfOld[old.child[k]];
  }
  for (std::size_t v = 0; v < covered.size(); ++v) {
    const Covered& c = covered[v];
    const std::uint32_t n = newOfOld[c.cell];
    t.childCount[n] = c.sub[0].childCount[0];
    t.child[n] = t.childCount[n] > 0 ? subStart[v][1] : 0;
    for (std::size_t d = 1; d < c.sub.size(); ++d) {
      for (std::size_t i = 0; i < c.sub[d].first.size(); ++i) {
        const std::uint32_t at = subStart[v][d] + static_cast<std::uint32_t>(i);
        if (t.childCount[at] > 0) t.child[at] = subStart[v][d + 1] + c.sub[d].child[i];
      }
    }
  }
  t.sizeMoments();
  return t;
}

}  // namespace bhviz::sim::cpu
