#pragma once
// The walk of one group made visible, for teaching: a tree built on the CPU from a copy of any
// backend's state, the walk of one group recorded front by front, and the MAC's decision on one
// cell explained with its numbers. Every decision goes through cpu::testCell, the function the
// walk itself calls, so what is shown cannot drift from what is computed.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/common/local_expansion.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/params.h"

namespace bhviz::sim::cpu {

/// A tree with its groups, built by the CPU stages from a copy of a state, every particle a
/// target (so each particle's group is listed, whatever its time bin).
struct WalkScene {
  Particles particles;  ///< key order (the tree's)
  Tree tree;
  Groups groups;            ///< every particle active
  MacSetup mac;             ///< the MAC the walk applies (macSetup, with the acceleration fallback)
  ExpansionRule expansion;  ///< the far cells' expansion (expansionRule of the parameters)
};

/// The centre a group's far cells are expanded about and what decides which are (expansionCentre,
/// with every particle of the group a target, as in the scene's walk).
ExpansionCentre groupExpansion(const WalkScene& scene, std::size_t group);

/// bbox → keys → sort → tree → moments → groups on `state`, as CpuBackend::computeForces with
/// ForceTargets::All does. `oldAccValid`: state.accPot holds accelerations (true for any state a
/// Simulation has evaluated); without it the acceleration MAC falls back to Barnes–Hut.
WalkScene buildWalkScene(Particles state, const SimParams& params, bool oldAccValid);

/// The index of the particle with this id in p, or -1.
std::int64_t indexOfId(const Particles& p, std::uint32_t id);

/// One step of the walk: the cells tested together and what became of each.
struct WalkFront {
  std::vector<std::uint32_t> cells;
  std::vector<CellVerdict> verdicts;  ///< one per cell
};

/// The walk of one group recorded breadth first: front 0 is the root, front k+1 the children of
/// the cells opened in front k (in order). Each cell is tested once, as in buildInteractionList
/// (a cell is tested exactly when every ancestor was opened), so the fronts hold the same
/// accepted, leaf and opened cells; only the order differs.
std::vector<WalkFront> traceWalk(const Tree& tree, const Box& groupBox, float accMin,
                                 const MacSetup& mac);

/// The interaction list the trace ends with, in breadth-first order.
InteractionList listOfTrace(const std::vector<WalkFront>& fronts);

/// The MAC's decision on one cell for one group, with its numbers.
struct MacExplanation {
  CellVerdict verdict = CellVerdict::Opened;
  std::uint32_t particles = 0;  ///< particles in the cell
  float mass = 0.0f;            ///< [mass]
  float side = 0.0f;            ///< geometric cell side [length]
  float distance = 0.0f;        ///< from the group's box to the cell's COM [length]
  bool expanded = false;        ///< accepted and far: expanded about the group's centre
  std::string test;  ///< the test with its numbers, e.g. "l/d = 0.31 < theta = 0.5 -> accepted"
};

/// Explains cell `cell` of `tree` for the group (box, smallest |a_old|) under `mac`: the verdict
/// is testCell's, the text names the chosen MAC's terms and their values (3 significant digits).
/// With `far` (the group's expansion), an accepted cell the walk expands about the group's
/// centre says so, with its distance from it against (group radius)/rho. ASCII only (the UI's
/// font has no Greek letters).
MacExplanation explainMac(const Tree& tree, std::uint32_t cell, const Box& groupBox, float accMin,
                          const MacSetup& mac, const ExpansionCentre* far = nullptr);

/// "accepted", "leaf (P2P)" or "opened".
const char* toString(CellVerdict v);

/// One cell of a scene as a viewer shows it.
struct CellFacts {
  int level = 0;  ///< 0 = the root
  std::uint32_t particles = 0;
  bool leaf = false;
  Box cube;  ///< the cell's geometric cube (the octree's, not the tight box)
};

/// The tree build up to one level, as the step-through tells it.
struct BuildCensus {
  std::uint32_t cellsAtLevel = 0;  ///< cells of this level
  std::size_t leavesSoFar = 0;     ///< leaves among the cells of this level and above
  std::uint32_t cellsSoFar = 0;    ///< cells of this level and above: cells 0 .. cellsSoFar - 1
};

/// One picked particle's walk, ready to be shown: its scene, its group, the interaction list,
/// the trace, and answers about cells, so that a viewer needs no knowledge of the tree's layout.
class GroupWalk {
 public:
  /// Builds the scene from `state` (any order) and finds the group of the particle with this
  /// id. Throws std::out_of_range naming the id when the state has no such particle.
  GroupWalk(Particles state, const SimParams& params, std::uint32_t id);

  std::uint32_t particleId() const { return m_id; }
  std::size_t group() const { return m_group; }
  std::size_t groupCount() const { return m_scene.groups.size(); }
  std::uint32_t groupParticles() const { return m_scene.groups.count[m_group]; }
  /// The box of the group's particles.
  const Box& groupBox() const { return m_scene.groups.box[m_group]; }
  const MacSetup& mac() const { return m_scene.mac; }

  /// The group's interaction list as the walk builds it (buildInteractionList).
  const InteractionList& list() const { return m_list; }
  /// The same walk recorded front by front (traceWalk).
  const std::vector<WalkFront>& fronts() const { return m_fronts; }
  /// The MAC's decision on `cell` for this group, with its numbers (and, for an accepted cell the
  /// walk expands, the rule's: its distance from the group's centre against (radius)/ρ, or its
  /// series' error bound against the group's budget).
  MacExplanation explain(std::uint32_t cell) const;
  /// Whether the walk expands accepted cell `cell` about the group's centre instead of applying
  /// it to each particle (--expansion-ratio, --expansion-budget; expands() of
  /// sim/common/local_expansion.h, the walk's own rules).
  bool expanded(std::uint32_t cell) const {
    return expands(m_expansion, m_scene.tree.comMass[cell]);
  }
  /// How many of the accepted cells (list().cells) are expanded.
  std::size_t expandedCount() const;

  std::size_t particleCount() const { return m_scene.particles.size(); }
  std::size_t cellCount() const { return m_scene.tree.cellCount(); }
  int levels() const { return m_scene.tree.depth(); }
  CellFacts cell(std::uint32_t cell) const;
  /// Levels 0 .. level (clamped to the tree's).
  BuildCensus build(int level) const;
  /// The scene itself, for tests.
  const WalkScene& scene() const { return m_scene; }

 private:
  WalkScene m_scene;
  InteractionList m_list;
  std::vector<WalkFront> m_fronts;
  std::uint32_t m_id = 0;
  std::size_t m_group = 0;
  ExpansionCentre m_expansion;
};

}  // namespace bhviz::sim::cpu
