#include "sim/cpu/walk_inspect.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace bhviz::sim::cpu {

WalkScene buildWalkScene(Particles state, const SimParams& params, bool oldAccValid) {
  WalkScene scene;
  scene.mac = macSetup(params, oldAccValid);
  scene.tree = buildSortedTree(state, params.curve, params.nLeaf, scene.mac);
  const std::vector<std::uint8_t> active(state.size(), 1);
  scene.groups = buildGroups(scene.tree, state.posMass, state.accPot, active, params.nGroup);
  scene.particles = std::move(state);
  scene.expansion = expansionRule(params, scene.mac, oldAccValid);
  return scene;
}

ExpansionCentre groupExpansion(const WalkScene& scene, std::size_t group) {
  return expansionCentre(scene.groups.box[group], scene.groups.count[group], scene.expansion,
                         scene.groups.accMin[group]);
}

std::int64_t indexOfId(const Particles& p, std::uint32_t id) {
  const auto it = std::find(p.id.begin(), p.id.end(), id);
  return it == p.id.end() ? -1 : static_cast<std::int64_t>(it - p.id.begin());
}

std::vector<WalkFront> traceWalk(const Tree& t, const Box& groupBox, float accMin,
                                 const MacSetup& mac) {
  std::vector<WalkFront> fronts;
  if (t.cellCount() == 0) return fronts;
  std::vector<std::uint32_t> next{0};
  while (!next.empty()) {
    WalkFront front;
    front.cells.swap(next);
    for (std::uint32_t c : front.cells) {
      const CellVerdict v = classifyCell(t, c, groupBox, accMin, mac);
      front.verdicts.push_back(v);
      if (v == CellVerdict::Opened) {
        for (std::uint32_t k = t.child[c]; k < t.child[c] + t.childCount[c]; ++k) next.push_back(k);
      }
    }
    fronts.push_back(std::move(front));
  }
  return fronts;
}

InteractionList listOfTrace(const std::vector<WalkFront>& fronts) {
  InteractionList list;
  for (const WalkFront& f : fronts) {
    for (std::size_t k = 0; k < f.cells.size(); ++k) {
      switch (f.verdicts[k]) {
        case CellVerdict::Accepted:
          list.cells.push_back(f.cells[k]);
          break;
        case CellVerdict::Leaf:
          list.leaves.push_back(f.cells[k]);
          break;
        case CellVerdict::Opened:
          list.opened.push_back(f.cells[k]);
          break;
      }
    }
  }
  return list;
}

const char* toString(CellVerdict v) {
  switch (v) {
    case CellVerdict::Accepted:
      return "accepted";
    case CellVerdict::Leaf:
      return "leaf (P2P)";
    case CellVerdict::Opened:
      return "opened";
  }
  return "?";
}

namespace {

std::string num(float v) {
  char s[32];
  std::snprintf(s, sizeof s, "%.3g", static_cast<double>(v));
  return s;
}

/// The MAC's comparison with its numbers; `open` (testCell's verdict) picks the relation, so the
/// text states what the walk decided even where rounding makes the printed numbers tie.
std::string macTerms(const Tree& t, std::uint32_t c, float d2, float accMin, const MacSetup& mac,
                     bool open) {
  const float d = std::sqrt(d2);
  const float rc = std::sqrt(t.opening[c]);  // the distance MACs' critical radius
  const char* dVsRc = open ? " < " : " >= ";
  switch (mac.code) {
    case MacCode::BarnesHut: {
      const float l = t.side(c);
      const std::string ratio = d > 0.0f ? num(l / d) : std::string("inf");
      return "l/d = " + ratio + (open ? " > " : " <= ") + "theta = " + num(mac.theta) +
             " (l = " + num(l) + " cell side, d = " + num(d) + ")";
    }
    case MacCode::Bonsai: {
      const float l = tightSide(t.box[c]);
      const float s = comOffset(t.box[c], xyz(t.comMass[c]));
      return "d = " + num(d) + dVsRc + "l/theta + s = " + num(rc) + " (l = " + num(l) +
             " longest side of the tight box, s = " + num(s) +
             " COM offset, theta = " + num(mac.theta) + ")";
    }
    case MacCode::Multipole: {
      const Quadrupole& q = t.quad[c];
      return "d = " + num(d) + dVsRc + "r_c = b/2 + sqrt(b^2/4 + sqrt(3 B2/Delta)) = " + num(rc) +
             " (b = " + num(t.bmax[c]) + ", B2 = " + num(q.xx + q.yy + q.zz) +
             ", Delta = " + num(mac.param) + ")";
    }
    case MacCode::Acceleration: {
      const float l = tightSide(t.box[c]);
      const float lhs = d2 * d2 * accMin;  // as mustOpen computes it
      return "|a|min d^4 = " + num(lhs) + dVsRc + "M l^2/alpha = " + num(t.opening[c]) +
             " (M = " + num(t.comMass[c].w) + ", l = " + num(l) + ", alpha = " + num(mac.param) +
             ", d = " + num(d) + ", |a|min = " + num(accMin) + ")";
    }
  }
  return {};
}

}  // namespace

MacExplanation explainMac(const Tree& t, std::uint32_t c, const Box& groupBox, float accMin,
                          const MacSetup& mac, const ExpansionCentre* far) {
  const CellTest test = testCell(t, c, groupBox, accMin, mac);
  MacExplanation e;
  e.verdict = verdictOf(t, c, test);
  e.particles = t.count[c];
  e.mass = t.comMass[c].w;
  e.side = t.side(c);
  e.distance = std::sqrt(test.d2);
  if (test.overlap) {
    e.test =
        "the cell's box overlaps the group's box: always opened (a group never takes the "
        "multipole of a cell holding its own particles)";
  } else {
    e.test = macTerms(t, c, test.d2, accMin, mac, test.open);
  }
  switch (e.verdict) {
    case CellVerdict::Accepted: {
      const ExpansionBy by = far != nullptr ? expansionBy(*far, t.comMass[c]) : ExpansionBy::None;
      e.expanded = by != ExpansionBy::None;
      if (e.expanded) {
        const Vec4& com = t.comMass[c];
        const float d2 = expansionDistance2(*far, com);
        if (by == ExpansionBy::Distance) {
          e.test +=
              " -> accepted, and far: its COM is " + num(std::sqrt(d2)) +
              " from the group's centre >= (group radius)/rho = " + num(std::sqrt(far->farD2));
        } else {
          e.test +=
              " -> accepted, and light for its distance: its series' error bound M R^3/d^5 = " +
              num(expansionErrorBound(*far, com, d2)) + " (d = " + num(std::sqrt(d2)) +
              ") <= the group's budget " + num(far->budget);
        }
        e.test += ", so it is expanded about that centre once for the whole group";
      } else {
        e.test += " -> accepted (multipole)";
      }
      break;
    }
    case CellVerdict::Opened:
      e.test += " -> opened";
      break;
    case CellVerdict::Leaf:
      e.test += " -> opened, but it is a leaf: its " + std::to_string(e.particles) +
                (e.particles == 1 ? " particle interacts" : " particles interact") +
                " directly (P2P)";
      break;
  }
  return e;
}

GroupWalk::GroupWalk(Particles state, const SimParams& params, std::uint32_t id) {
  const std::size_t n = state.size();
  m_scene = buildWalkScene(std::move(state), params, true);
  const std::int64_t index = indexOfId(m_scene.particles, id);
  const std::int64_t group =
      index < 0 ? -1 : groupContaining(m_scene.groups, static_cast<std::uint32_t>(index));
  if (group < 0) {
    throw std::out_of_range("no particle with id " + std::to_string(id) + " (ids are 0.." +
                            std::to_string(n == 0 ? 0 : n - 1) + ")");
  }
  m_group = static_cast<std::size_t>(group);
  const Box& box = m_scene.groups.box[m_group];
  const float accMin = m_scene.groups.accMin[m_group];
  m_list = buildInteractionList(m_scene.tree, box, accMin, m_scene.mac);
  m_fronts = traceWalk(m_scene.tree, box, accMin, m_scene.mac);
  m_expansion = groupExpansion(m_scene, m_group);
  m_id = id;
}

MacExplanation GroupWalk::explain(std::uint32_t cell) const {
  return explainMac(m_scene.tree, cell, groupBox(), m_scene.groups.accMin[m_group], m_scene.mac,
                    &m_expansion);
}

std::size_t GroupWalk::expandedCount() const {
  return countExpanded(m_scene.tree, m_list.cells, m_expansion);
}

CellFacts GroupWalk::cell(std::uint32_t c) const {
  const Tree& t = m_scene.tree;
  CellFacts f;
  f.level = t.level[c];
  f.particles = t.count[c];
  f.leaf = t.isLeaf(c);
  const Vec4& x = m_scene.particles.posMass[t.first[c]];
  f.cube = cellCube(quantize({x.x, x.y, x.z}, t.frame), f.level, t.frame);
  return f;
}

BuildCensus GroupWalk::build(int level) const {
  const Tree& t = m_scene.tree;
  BuildCensus b;
  if (t.depth() <= 0) return b;
  level = std::clamp(level, 0, t.depth() - 1);
  b.cellsAtLevel = t.levelBegin[level + 1] - t.levelBegin[level];
  b.cellsSoFar = t.levelBegin[level + 1];
  for (std::uint32_t c = 0; c < b.cellsSoFar; ++c) b.leavesSoFar += t.isLeaf(c);
  return b;
}

}  // namespace bhviz::sim::cpu
