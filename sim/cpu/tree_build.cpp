#include <algorithm>

#include "sim/cpu/cpu_stages.h"
#include "sim/stage_timer.h"

namespace bhviz::sim::cpu {

Tree buildTree(const std::vector<std::uint64_t>& keys, const KeyFrame& frame, int nLeaf) {
  Tree t;
  t.frame = frame;
  auto addCell = [&](std::uint32_t first, std::uint32_t count, int level) {
    t.first.push_back(first);
    t.count.push_back(count);
    t.child.push_back(0);
    t.childCount.push_back(0);
    t.level.push_back(static_cast<std::uint8_t>(level));
  };
  addCell(0, static_cast<std::uint32_t>(keys.size()), 0);
  t.levelBegin = {0, 1};
  // Breadth first: the children of level L's cells, in order, make level L+1, so each cell's
  // children are contiguous and every level is in key order.
  for (int level = 0; level < kMaxLevel; ++level) {
    const std::uint32_t begin = t.levelBegin[level], end = t.levelBegin[level + 1];
    for (std::uint32_t c = begin; c < end; ++c) {
      if (t.count[c] <= static_cast<std::uint32_t>(nLeaf)) continue;
      t.child[c] = static_cast<std::uint32_t>(t.first.size());
      // The keys of one child share their digit at level+1; the run ends where it changes.
      forEachChildRun(keys, t.first[c], t.count[c], level, [&](std::uint32_t f, std::uint32_t n) {
        addCell(f, n, level + 1);
        ++t.childCount[c];
      });
    }
    if (t.first.size() == end) break;  // no cell of this level was split
    t.levelBegin.push_back(static_cast<std::uint32_t>(t.first.size()));
  }
  t.sizeMoments();
  return t;
}

Tree buildSortedTree(Particles& s, Curve curve, int nLeaf, const MacSetup& mac,
                     StepProfile* profile, const KeyFrame* given, const OrbCutsView* domains,
                     std::vector<std::uint64_t>* sortedKeys) {
  StepProfile unused;
  StepProfile& prof = profile != nullptr ? *profile : unused;
  KeyFrame frame;
  if (given != nullptr) {
    frame = *given;
  } else {
    StageTimer timer(prof, Stage::BoundingBox);
    frame = keyFrameFor(boundingBox(s.posMass));
  }
  std::vector<std::uint64_t> keys;
  {
    StageTimer timer(prof, Stage::Keys);
    keys = computeKeys(s.posMass, frame, curve);
  }
  {
    StageTimer timer(prof, Stage::Sort);
    const std::vector<std::uint32_t> order = sortOrder(keys);
    reorder(s, order);
    std::vector<std::uint64_t> sorted(keys.size());
    for (std::size_t k = 0; k < order.size(); ++k) sorted[k] = keys[order[k]];
    keys.swap(sorted);
  }
  Tree tree;
  {
    StageTimer timer(prof, Stage::Tree);
    tree = buildTree(keys, frame, nLeaf);
  }
  {
    StageTimer timer(prof, Stage::Moments);
    computeMoments(tree, s.posMass, mac, domains);
  }
  if (sortedKeys != nullptr) *sortedKeys = std::move(keys);
  return tree;
}

}  // namespace bhviz::sim::cpu
