// One tree of a rank's own tree and an essential tree it imported (sim/let.h:
// mergeEssentialTree). Host code on host Trees.

#include <stdexcept>
#include <string>

#include "sim/cpu/cpu_stages.h"
#include "sim/let.h"

namespace bhviz::sim {

namespace {

/// A cell of one of the two trees.
struct Ref {
  bool let = false;
  std::uint32_t cell = 0;
};

/// A record of the merged tree's top: a cell made of a local and a LET cell of the same cube
/// (merged), or a copy of one cell of either tree, whose subtree stays where it is.
struct Top {
  bool merged = false;
  Ref a, b;  ///< merged: the local cell and the LET cell; else `a` alone
  std::uint32_t child = 0, childCount = 0;
};

/// The cube of the key frame that holds a cell: its level and integer coordinates there. The
/// centre of a cell's tight box lies in the cell's cube (quantising is monotone, and every point
/// of the box lies between two of the cell's particles along each axis).
struct Cube {
  int level = 0;
  std::uint32_t x = 0, y = 0, z = 0;
  bool operator==(const Cube& o) const {
    return level == o.level && x == o.x && y == o.y && z == o.z;
  }
};

Cube cubeOf(const Tree& t, std::uint32_t c, const KeyFrame& f) {
  if (t.level[c] > kKeyBitsPerAxis) {
    throw std::invalid_argument("mergeEssentialTree: a cell at level " +
                                std::to_string(t.level[c]) + ", deeper than the keys");
  }
  const Box& b = t.box[c];
  const KeyCoords q = quantize(0.5f * (b.lo + b.hi), f);
  const int shift = kKeyBitsPerAxis - t.level[c];
  return {t.level[c], q.x >> shift, q.y >> shift, q.z >> shift};
}

class Merger {
 public:
  Merger(const Tree& local, const Tree& let) : m_local(local), m_let(let) {}

  /// The top records, breadth-first from the merged root; each merged record's children are
  /// contiguous.
  std::vector<Top> top() {
    std::vector<Top> top{Top{true, Ref{false, 0}, Ref{true, 0}, 0, 0}};
    for (std::size_t k = 0; k < top.size(); ++k) {
      if (!top[k].merged) continue;
      const std::vector<Top> children = childrenOf(top[k].a.cell, top[k].b.cell);
      top[k].child = static_cast<std::uint32_t>(top.size());
      top[k].childCount = static_cast<std::uint32_t>(children.size());
      top.insert(top.end(), children.begin(), children.end());
    }
    return top;
  }

  const Tree& tree(const Ref& r) const { return r.let ? m_let : m_local; }

 private:
  /// The cells below a merged cell: while both are internal, their children, those of the same
  /// cube merged; where either stops (a leaf, or a LET multipole sent without children), the two
  /// cells themselves, each whole (a group that opens the merged cell may still accept either).
  std::vector<Top> childrenOf(std::uint32_t a, std::uint32_t b) const {
    std::vector<Top> out;
    const auto single = [](bool let, std::uint32_t c) { return Top{false, Ref{let, c}, {}, 0, 0}; };
    if (m_local.isLeaf(a) || m_let.isLeaf(b)) return {single(false, a), single(true, b)};
    const KeyFrame& f = m_local.frame;
    std::vector<bool> paired(m_let.childCount[b], false);
    for (std::uint32_t i = m_local.child[a]; i < m_local.child[a] + m_local.childCount[a]; ++i) {
      const Cube ci = cubeOf(m_local, i, f);
      Top t = single(false, i);
      for (std::uint32_t j = 0; j < m_let.childCount[b]; ++j) {
        const std::uint32_t k = m_let.child[b] + j;
        if (paired[j] || !(cubeOf(m_let, k, f) == ci)) continue;
        paired[j] = true;
        t = Top{true, Ref{false, i}, Ref{true, k}, 0, 0};
        break;
      }
      out.push_back(t);
    }
    for (std::uint32_t j = 0; j < m_let.childCount[b]; ++j) {
      if (!paired[j]) out.push_back(single(true, m_let.child[b] + j));
    }
    return out;
  }

  const Tree& m_local;
  const Tree& m_let;
};

}  // namespace

MergedTree mergeEssentialTree(const Tree& local, const std::vector<Vec4>& posMass,
                              const LetTree& let, const MacSetup& mac, const OrbCutsView* domains,
                              const std::vector<std::uint32_t>& localParts) {
  if (!localParts.empty() && localParts.size() != local.cellCount()) {
    throw std::invalid_argument("mergeEssentialTree: one part count per local cell");
  }
  const auto localPartsOf = [&](std::uint32_t c) {
    return localParts.empty() ? 1u : localParts[c];
  };
  if (local.cellCount() == 0 && !let.empty()) {
    throw std::invalid_argument("mergeEssentialTree: no local tree");
  }
  MergedTree m;
  m.sources = posMass;
  if (let.empty()) {
    m.tree = local;
    m.parts.resize(local.cellCount());
    for (std::uint32_t c = 0; c < local.cellCount(); ++c) m.parts[c] = localPartsOf(c);
    return m;
  }
  if (local.level[0] != 0 || let.tree.level[0] != 0) {
    throw std::invalid_argument("mergeEssentialTree: both trees must start at the frame's root");
  }
  Merger merger(local, let.tree);
  const std::vector<Top> top = merger.top();
  // Layout: the top records (the root first), then every local cell, then every LET cell, the
  // LET's particles after the local ones. A copied top record links into the originals; the
  // originals the top replaced stay, unreached.
  const auto localAt = static_cast<std::uint32_t>(top.size());
  const auto letAt = static_cast<std::uint32_t>(top.size() + local.cellCount());
  const auto letFirst = static_cast<std::uint32_t>(posMass.size());
  Tree& out = m.tree;
  out.frame = local.frame;
  const auto appendCopy = [&](const Ref& r, std::uint32_t childCount) {
    const Tree& t = merger.tree(r);
    const std::uint32_t offset = r.let ? letAt : localAt;
    const std::uint32_t first = t.first[r.cell] + (r.let ? letFirst : 0u);
    cpu::appendCellRecord(
        out, t, r.cell,
        {first, t.count[r.cell], childCount > 0 ? t.child[r.cell] + offset : 0u, childCount});
    m.parts.push_back(r.let ? 1u : localPartsOf(r.cell));
  };
  for (const Top& t : top) {
    if (!t.merged) {
      appendCopy(t.a, merger.tree(t.a).childCount[t.a.cell]);
      continue;
    }
    const Tree& l = local;
    const Tree& e = let.tree;
    const cpu::CellMoments parts[2] = {
        {l.comMass[t.a.cell], l.quad[t.a.cell], l.box[t.a.cell], l.bmax[t.a.cell]},
        {e.comMass[t.b.cell], e.quad[t.b.cell], e.box[t.b.cell], e.bmax[t.b.cell]}};
    const cpu::CellMoments sum = cpu::combineMoments(parts, 2);
    cpu::appendCellRecord(out, l, t.a.cell,
                          {0, l.count[t.a.cell] + e.count[t.b.cell], t.child, t.childCount});
    const std::size_t k = out.cellCount() - 1;
    out.comMass[k] = sum.comMass;
    out.quad[k] = sum.quad;
    out.box[k] = sum.box;
    out.bmax[k] = sum.bmax;
    const Quadrupole& q = sum.quad;
    const CellShape shape{sum.comMass.w, out.side(static_cast<std::uint32_t>(k)),
                          sum.box,       xyz(sum.comMass),
                          sum.bmax,      q.xx + q.yy + q.zz};
    // The LET cell is its sender's part of the cube.
    const std::uint32_t held = localPartsOf(t.a.cell) + 1u;
    m.parts.push_back(held);
    const int meeting = domains != nullptr && mac.code == MacCode::Multipole
                            ? orbDomainsMeetingCell(*domains, out.frame, sum.box, out.level[k])
                            : 1;
    out.opening[k] =
        openingValue(mac.code, mac.theta,
                     paramOfParts(mac.code, mac.param, static_cast<int>(held), meeting), shape);
  }
  for (std::uint32_t c = 0; c < local.cellCount(); ++c) appendCopy({false, c}, local.childCount[c]);
  for (std::uint32_t c = 0; c < let.tree.cellCount(); ++c) {
    appendCopy({true, c}, let.tree.childCount[c]);
  }
  out.levelBegin = {0, static_cast<std::uint32_t>(out.cellCount())};
  m.sources.insert(m.sources.end(), let.posMass.begin(), let.posMass.end());
  return m;
}

}  // namespace bhviz::sim
