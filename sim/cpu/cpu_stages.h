#pragma once
// The stages of the CPU reference backend as free functions, so tests can check each one on
// its own and the CUDA backend's twins can be compared with them stage by stage. Each stage is
// defined in the file of its name (sim/profile.h's names), as its twin in sim/cuda/ is.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/clock.h"
#include "sim/common/keys.h"
#include "sim/common/local_expansion.h"
#include "sim/common/mac.h"
#include "sim/orb.h"
#include "sim/params.h"
#include "sim/particles.h"
#include "sim/profile.h"
#include "sim/tree.h"

namespace bhviz::sim::cpu {

// ---- predict and integrate (integrate.cpp) ------------------------------------------------------

/// The particles at a step boundary (bins deeper than the clock's are clamped to it) choose
/// their new bin and get their opening half-kick; returns the deepest bin of any particle.
int openKicks(Particles& s, const Clock& clock, const SimParams& p);

/// Every particle drifts by dt [time].
void drift(Particles& s, float dt);

/// The closing half-kicks of the particles whose step ends at the clock's tick.
void closeKicks(Particles& s, const Clock& clock);

// ---- bbox (bbox.cpp), keys (keys.cpp), sort (sort.cpp) ------------------------------------------

Box boundingBox(const std::vector<Vec4>& posMass);

std::vector<std::uint64_t> computeKeys(const std::vector<Vec4>& posMass, const KeyFrame& frame,
                                       Curve curve);

/// The permutation that sorts the keys; equal keys keep their input order (as a stable radix
/// sort does), so the order is unique.
std::vector<std::uint32_t> sortOrder(const std::vector<std::uint64_t>& keys);

/// Applies `order` (new position k takes old element order[k]) to every particle array.
void reorder(Particles& p, const std::vector<std::uint32_t>& order);

// ---- tree (tree_build.cpp), moments (moments.cpp) -----------------------------------------------

/// The children of the cell at `level` holding sorted keys [first, first + count): f(first,
/// count) for each run of keys sharing their digit at level + 1, in key order.
template <typename F>
void forEachChildRun(const std::vector<std::uint64_t>& keys, std::uint32_t first,
                     std::uint32_t count, int level, F&& f) {
  const auto begin = keys.begin() + first, end = begin + count;
  for (auto lo = begin; lo != end;) {
    const unsigned digit = keyDigit(*lo, level + 1);
    const auto hi = std::partition_point(
        lo, end, [&](std::uint64_t k) { return keyDigit(k, level + 1) == digit; });
    f(static_cast<std::uint32_t>(lo - keys.begin()), static_cast<std::uint32_t>(hi - lo));
    lo = hi;
  }
}

/// Octree topology from sorted keys: a cell is split while it holds more than nLeaf particles
/// (and is above the deepest level). Fills frame, levelBegin, first, count, child, childCount,
/// level; the moment arrays are sized but not filled.
Tree buildTree(const std::vector<std::uint64_t>& sortedKeys, const KeyFrame& frame, int nLeaf);

// ---- local rebuilds (local_rebuild.cpp) -----------------------------------------------------

/// The cells that cover the active particles (key order, disjoint): from the smallest cell
/// holding every one of them down, a cell holding active particles is split into its children
/// while they are fewer than `share` of its particles (docs/BENCHMARKS.md, "A tree rebuilt
/// around the targets": 0.25).
std::vector<std::uint32_t> coverTargets(const Tree& t, const std::vector<std::uint8_t>& active,
                                        double share);

/// New keys for the particles of each of `cells` (disjoint cells of `t`, whose keys `keys` holds
/// in key order) from their current positions, clamped into the cell's cube so that they stay
/// in its key range; each range sorted again (stably), the particles following their keys.
void rekeyCells(const Tree& t, const std::vector<std::uint32_t>& cells, Curve curve, Particles& p,
                std::vector<std::uint64_t>& keys);

/// `old` with the subtrees of `cells` (disjoint cells of it) built again from `keys`, which
/// equal the keys `old` was built from outside those cells' ranges (rekeyCells): the topology
/// buildTree(keys, old.frame, nLeaf) gives, made from the covered subtrees alone and the kept
/// cells (a cell's descendants are one run of each level: each run is replaced by the new
/// subtree's cells of that level; the cells after it shift, and so do the links to them).
Tree spliceSubtrees(const Tree& old, const std::vector<std::uint64_t>& keys,
                    const std::vector<std::uint32_t>& cells, int nLeaf);

/// Masses, centres of mass, second moments, tight boxes, bmax and opening values, bottom-up.
/// With `domains` (a distributed run's cuts, in the tree's frame), a cell whose cube several
/// domains meet is one part of it: its opening value takes its share (paramOfParts).
void computeMoments(Tree& tree, const std::vector<Vec4>& posMass, const MacSetup& mac,
                    const OrbCutsView* domains = nullptr);

/// Where a tree record points: its particles and its children.
struct CellLinks {
  std::uint32_t first = 0, count = 0, child = 0, childCount = 0;
};
/// Appends cell `c` of `from` to `out`, its level and moments, linked by `links` (a LET's cut,
/// a merged tree's copies: let.cpp, let_merge.cpp).
void appendCellRecord(Tree& out, const Tree& from, std::uint32_t c, const CellLinks& links);

/// What a cell's opening value is made from, besides its side: its moments.
struct CellMoments {
  Vec4 comMass;     ///< centre of mass; w = mass
  Quadrupole quad;  ///< second moments about the centre of mass
  Box box;          ///< tight box
  float bmax;       ///< largest distance from the centre of mass to a particle (a bound)
};
/// The moments of a cell made of `count` parts of known moments (an internal cell's children,
/// or a rank's cell and the LET cell of the same cube): the parallel-axis sums, in double.
CellMoments combineMoments(const CellMoments* parts, std::size_t count);

/// The build stages of a force evaluation: bbox → keys → sort (reorders p) → tree → moments.
/// With a profile, each stage's wall time is added to it (tree_build.cpp). With a frame (which
/// must hold every particle), the keys quantise it instead of the particles' own bounding cube;
/// with `domains` too, the moments take the cubes' parts into account (computeMoments). With
/// `sortedKeys`, the keys in their sorted order (what rekeyCells and spliceSubtrees start from).
Tree buildSortedTree(Particles& p, Curve curve, int nLeaf, const MacSetup& mac,
                     StepProfile* profile = nullptr, const KeyFrame* frame = nullptr,
                     const OrbCutsView* domains = nullptr,
                     std::vector<std::uint64_t>* sortedKeys = nullptr);

// ---- groups (groups.cpp) ------------------------------------------------------------------------

/// Groups of ≤ nGroup consecutive particles that hold an active particle, in key order; boxes
/// and |a_old| minima over the active particles only. Below each cell holding more than nGroup,
/// its children holding ≤ nGroup merge greedily in key order while the run stays ≤ nGroup and
/// the union of their tight boxes overlaps no sibling holding more than nGroup (such a group
/// would open that sibling down to its leaves); a larger leaf is cut into runs of nGroup. So
/// each group lies inside one cell. Needs the tight boxes (computeMoments).
Groups buildGroups(const Tree& tree, const std::vector<Vec4>& posMass,
                   const std::vector<Vec4>& accPot, const std::vector<std::uint8_t>& active,
                   int nGroup);

/// Where fewer than kRunsBelow groups were made (sim/common/group_runs.h), cuts each group's active
/// particles into runs of consecutive ones (runsPerGroup, runsOf, runBegin), each a group with
/// the box of its own active particles and the whole group's accMin and expansion targets
/// (Groups::expandAs); the inactive particles between two runs go with the earlier one. Else leaves
/// `groups` as they are. The backends cut where cutsGroupsIntoRuns says (a block substep under the
/// acceleration MAC), the CUDA groups stage alike.
void cutIntoRuns(Groups& groups, const std::vector<Vec4>& posMass,
                 const std::vector<std::uint8_t>& active);

/// The index into `groups` of the group holding particle `index` (key order), or -1.
std::int64_t groupContaining(const Groups& groups, std::uint32_t index);

// ---- walk (walk.cpp) ----------------------------------------------------------------------------

struct WalkSettings {
  MacSetup mac;
  bool quadrupole = true;
  float softening = 0.05f;
  P2pMode p2p = P2pMode::Plain;  ///< walkGroups' near field (walkSources' is always plain)
  /// false: each target keeps its potential (accPot.w), as on the GPU (cuda/walk.h).
  bool potential = true;
  /// Which accepted cells go into the group's expansion (sim/common/local_expansion.h; the
  /// backend's from expansionRule(SimParams, …) in sim/params.h); {}: none.
  ExpansionRule expansion{};
};

/// The interaction list of one group, as the walk builds it.
struct InteractionList {
  std::vector<std::uint32_t> cells;   ///< cells accepted as multipoles
  std::vector<std::uint32_t> leaves;  ///< leaves whose particles interact directly
  std::vector<std::uint32_t> opened;  ///< cells the MAC opened
};

/// How many of a group's accepted cells the walk expands about the group's centre `e` instead of
/// applying them to each target (expands(), the walk's own rule).
std::size_t countExpanded(const Tree& t, const std::vector<std::uint32_t>& cells,
                          const ExpansionCentre& e);

/// One cell tested for one group: the numbers the MAC looks at and its decision. The walk, its
/// recorded trace and the MAC explanation (walk_inspect.h) all decide through this function.
struct CellTest {
  float d2 = 0.0f;       ///< squared distance from the group's box to the cell's COM [length²]
  bool overlap = false;  ///< the cell's tight box overlaps the group's box
  bool open = false;     ///< mustOpen's verdict
};
CellTest testCell(const Tree& tree, std::uint32_t cell, const Box& groupBox, float accMin,
                  const MacSetup& mac);

/// What the walk does with a tested cell.
enum class CellVerdict : std::uint8_t {
  Accepted,  ///< taken as a multipole (M2P)
  Leaf,      ///< a leaf the MAC would open: its particles interact directly (P2P)
  Opened,    ///< its children are tested next
};
/// The verdict of a tested cell: accepted unless the test opens it, then a leaf or opened.
inline CellVerdict verdictOf(const Tree& tree, std::uint32_t cell, const CellTest& test) {
  if (!test.open) return CellVerdict::Accepted;
  return tree.isLeaf(cell) ? CellVerdict::Leaf : CellVerdict::Opened;
}
inline CellVerdict classifyCell(const Tree& tree, std::uint32_t cell, const Box& groupBox,
                                float accMin, const MacSetup& mac) {
  return verdictOf(tree, cell, testCell(tree, cell, groupBox, accMin, mac));
}

InteractionList buildInteractionList(const Tree& tree, const Box& groupBox, float accMin,
                                     const MacSetup& mac);

/// Walks every group and writes accPot of its active particles.
InteractionCounts walkGroups(const Tree& tree, const Groups& groups,
                             const std::vector<Vec4>& posMass,
                             const std::vector<std::uint8_t>& active, const WalkSettings& s,
                             std::vector<Vec4>& accPot);

/// The near pairs of a mutual walk (walk_mutual.cpp).
struct MutualCounts {
  std::uint64_t pairs = 0;      ///< P2P evaluations made
  std::uint64_t onceBoth = 0;   ///< of which each gave both particles their share
  std::uint64_t plainWork = 0;  ///< P2P evaluations the plain walk makes for the same forces
};

/// walkGroups with the near field evaluated pair by pair (P2pMode::Mutual, seed 004): the same
/// cells and leaves per group, the same pairs of particles, the same forces to fp32 rounding
/// (the order of the sums differs, and the counter-forces arrive in any thread order). A piece
/// (one group's particles in one leaf) takes a piece of another group one way, as plain P2P,
/// unless each piece's leaf is on the other group's list: then their pairs are evaluated once
/// and both get their share (walk_mutual.cpp). Counts, `work` and the written particles as
/// walkSources(..., WalkMode::Write, ...).
InteractionCounts walkGroupsMutual(const Tree& tree, const Groups& groups,
                                   const std::vector<Vec4>& posMass,
                                   const std::vector<std::uint8_t>& active, const WalkSettings& s,
                                   std::vector<Vec4>& accPot, std::vector<std::uint32_t>* work,
                                   MutualCounts* pairs = nullptr);

/// Whether a walk replaces the targets' accPot or adds to it (a second tree's share), or writes
/// the potential alone (WalkSettings::potential on; the accelerations stay as they are).
enum class WalkMode : std::uint8_t { Write, Add, Potential };

/// walkGroups with the sources in a tree of their own: `t`'s first/count index `sources`, the
/// groups index `posMass` (another rank's essential tree walked by the local groups; the local
/// tree when both are the same). With `work`, adds each group's interactions per target (cells
/// plus leaf particles) to its targets' entries (the cost the domain decomposition balances).
InteractionCounts walkSources(const Tree& t, const std::vector<Vec4>& sources, const Groups& groups,
                              const std::vector<Vec4>& posMass,
                              const std::vector<std::uint8_t>& active, const WalkSettings& s,
                              WalkMode mode, std::vector<Vec4>& accPot,
                              std::vector<std::uint32_t>* work);

}  // namespace bhviz::sim::cpu
