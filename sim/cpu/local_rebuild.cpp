// A tree rebuilt only around the targets (issue 14; docs/BENCHMARKS.md, "A tree rebuilt around
// the targets"): the cells that cover them have their particles keyed and sorted again, and
// their subtrees are built again and spliced into the last tree's level arrays. The CPU twin of
// the GPU's plan, checked against a whole buildTree (tests/test_local_rebuild.cpp).
#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "sim/cpu/cpu_stages.h"

namespace bhviz::sim::cpu {

std::vector<std::uint32_t> coverTargets(const Tree& t, const std::vector<std::uint8_t>& active,
                                        double share) {
  std::vector<std::uint32_t> cover;
  if (t.cellCount() == 0) return cover;
  const auto targetsIn = [&](std::uint32_t c) {
    std::size_t k = 0;
    for (std::uint32_t i = t.first[c]; i < t.first[c] + t.count[c]; ++i) k += active[i] != 0;
    return k;
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
    if (t.childCount[c] > 0 && double(k) < share * double(t.count[c])) {
      for (std::uint32_t j = t.childCount[c]; j-- > 0;) stack.push_back(t.child[c] + j);
    } else {
      cover.push_back(c);
    }
  }
  return cover;
}

void rekeyCells(const Tree& t, const std::vector<std::uint32_t>& cells, Curve curve, Particles& p,
                std::vector<std::uint64_t>& keys) {
  std::vector<std::uint32_t> order(p.size());
  std::iota(order.begin(), order.end(), 0u);
  for (const std::uint32_t c : cells) {
    const std::uint32_t first = t.first[c], count = t.count[c];
    if (count == 0) continue;
    // The cell's cube in quantised coordinates: its first key's point with the bits below its
    // level cleared (every key of the cell shares them).
    const int shift = kKeyBitsPerAxis - t.level[c];
    const std::uint32_t span = (1u << shift) - 1u;
    const KeyCoords q0 = decodeKey(curve, keys[first]);
    const KeyCoords lo{q0.x & ~span, q0.y & ~span, q0.z & ~span};
    std::vector<std::uint64_t> fresh(count);
    for (std::uint32_t i = 0; i < count; ++i) {
      KeyCoords q = quantize(xyz(p.posMass[first + i]), t.frame);
      q.x = std::clamp(q.x, lo.x, lo.x + span);
      q.y = std::clamp(q.y, lo.y, lo.y + span);
      q.z = std::clamp(q.z, lo.z, lo.z + span);
      fresh[i] = encodeKey(curve, q);
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

}  // namespace

Tree spliceSubtrees(const Tree& old, const std::vector<std::uint64_t>& keys,
                    const std::vector<std::uint32_t>& cells, int nLeaf) {
  // Each covered cell's subtree, built alone, and where its old descendants lie: per level L
  // below the cell, the run [begin, end) of old level L (one run: a cell's descendants are
  // contiguous in every level, the levels being in key order).
  struct Covered {
    std::uint32_t cell;
    int level;
    std::vector<SubtreeLevel> sub;
    std::vector<std::uint32_t> runBegin, runEnd;  // by level − this->level
  };
  const int oldLevels = old.depth();  // levels 0 .. oldLevels − 1
  const auto levelEnd = [&](int L) {
    return L + 1 < static_cast<int>(old.levelBegin.size()) ? old.levelBegin[L + 1]
                                                           : old.levelBegin.back();
  };
  std::vector<Covered> covered;
  for (const std::uint32_t c : cells) {
    if (c >= old.cellCount())
      throw std::out_of_range("spliceSubtrees: no cell " + std::to_string(c));
    Covered v{c,
              old.level[c],
              buildSubtree(keys, old.first[c], old.count[c], old.level[c], nLeaf),
              {c},
              {c + 1}};
    for (int L = v.level + 1;; ++L) {
      const std::uint32_t b = v.runBegin.back(), e = v.runEnd.back();
      // The old descendants one level down: the children of this run, or (none) the place
      // where they would be, before the children of the next cell of level L − 1 that has any.
      // Below the old tree's deepest level: an empty run of an empty level.
      std::uint32_t begin = L < oldLevels ? levelEnd(L) : 0, end = begin;
      bool found = false;
      for (std::uint32_t k = b; k < e; ++k) {
        if (old.childCount[k] == 0) continue;
        if (!found) begin = old.child[k];
        end = old.child[k] + old.childCount[k];
        found = true;
      }
      if (!found && L < oldLevels) {
        for (std::uint32_t k = e; k < levelEnd(L - 1); ++k) {
          if (old.childCount[k] > 0) {
            begin = end = old.child[k];
            break;
          }
        }
      }
      const bool deeper = L - v.level < static_cast<int>(v.sub.size());
      if (L >= oldLevels && !deeper) break;
      v.runBegin.push_back(begin);
      v.runEnd.push_back(end);
    }
    covered.push_back(std::move(v));
  }
  // In key order (the cells are disjoint): so are their runs in every level.
  std::sort(covered.begin(), covered.end(), [&](const Covered& a, const Covered& b) {
    return old.first[a.cell] < old.first[b.cell];
  });
  for (std::size_t v = 1; v < covered.size(); ++v) {
    const std::uint32_t a = covered[v - 1].cell, b = covered[v].cell;
    if (old.first[a] + old.count[a] > old.first[b]) {
      throw std::invalid_argument("spliceSubtrees: cells " + std::to_string(a) + " and " +
                                  std::to_string(b) + " overlap");
    }
  }

  Tree t;
  t.frame = old.frame;
  t.levelBegin = {0};
  // Per level: the old cells kept, with the covered subtrees' cells in place of their runs; the
  // new index of each kept old cell, and where each subtree's cells of that level begin.
  std::vector<std::uint32_t> newOfOld(old.cellCount(), 0);
  std::vector<std::vector<std::uint32_t>> subStart(covered.size());
  for (int L = 0;; ++L) {
    const std::uint32_t levelStart = static_cast<std::uint32_t>(t.first.size());
    std::uint32_t k = L < oldLevels ? old.levelBegin[L] : 0;
    const std::uint32_t kEnd = L < oldLevels ? levelEnd(L) : 0;
    const auto keep = [&](std::uint32_t upTo) {
      for (; k < upTo; ++k) {
        newOfOld[k] = static_cast<std::uint32_t>(t.first.size());
        t.first.push_back(old.first[k]);
        t.count.push_back(old.count[k]);
        t.child.push_back(old.child[k]);  // an old index, mapped below
        t.childCount.push_back(old.childCount[k]);
        t.level.push_back(static_cast<std::uint8_t>(L));
      }
    };
    for (std::size_t v = 0; v < covered.size(); ++v) {
      Covered& c = covered[v];
      const int d = L - c.level;
      if (d < 1 || d >= static_cast<int>(c.runBegin.size())) continue;
      keep(c.runBegin[d]);
      subStart[v].resize(d + 1, 0);
      subStart[v][d] = static_cast<std::uint32_t>(t.first.size());
      if (d < static_cast<int>(c.sub.size())) {
        const SubtreeLevel& s = c.sub[d];
        for (std::size_t i = 0; i < s.first.size(); ++i) {
          t.first.push_back(s.first[i]);
          t.count.push_back(s.count[i]);
          t.child.push_back(s.child[i]);  // subtree-relative, mapped below
          t.childCount.push_back(s.childCount[i]);
          t.level.push_back(static_cast<std::uint8_t>(L));
        }
      }
      k = std::max(k, c.runEnd[d]);
    }
    keep(kEnd);
    if (t.first.size() == levelStart) break;
    t.levelBegin.push_back(static_cast<std::uint32_t>(t.first.size()));
  }

  // Child links: kept old cells point to their old children's new places; a covered cell and
  // its subtree's cells to the subtree's next level.
  std::vector<std::int32_t> coveredAt(old.cellCount(), -1);
  for (std::size_t v = 0; v < covered.size(); ++v) coveredAt[covered[v].cell] = std::int32_t(v);
  std::vector<std::uint8_t> isSub(t.first.size(), 0);  // a subtree's cell below its covered cell
  for (std::size_t v = 0; v < covered.size(); ++v) {
    const Covered& c = covered[v];
    for (std::size_t d = 1; d < c.sub.size(); ++d) {
      for (std::size_t i = 0; i < c.sub[d].first.size(); ++i) {
        const std::uint32_t at = subStart[v][d] + static_cast<std::uint32_t>(i);
        isSub[at] = 1;
        if (t.childCount[at] > 0) t.child[at] = subStart[v][d + 1] + c.sub[d].child[i];
      }
    }
  }
  for (std::size_t n = 0; n < t.first.size(); ++n) {
    if (!isSub[n]) t.child[n] = 0;  // a kept old cell's: set below
  }
  for (std::uint32_t k = 0; k < old.cellCount(); ++k) {
    const std::uint32_t n = newOfOld[k];
    if (k != 0 && n == 0) continue;  // not kept (a covered cell's old descendant)
    const std::int32_t v = coveredAt[k];
    if (v >= 0) {
      const Covered& c = covered[std::size_t(v)];
      t.childCount[n] = c.sub[0].childCount[0];
      t.child[n] = t.childCount[n] > 0 ? subStart[std::size_t(v)][1] : 0;
    } else if (old.childCount[k] > 0) {
      t.child[n] = newOfOld[old.child[k]];
    }
  }
  const std::size_t n = t.first.size();
  t.comMass.resize(n);
  t.quad.resize(n);
  t.box.resize(n);
  t.bmax.resize(n);
  t.opening.resize(n);
  return t;
}

}  // namespace bhviz::sim::cpu
