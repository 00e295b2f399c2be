#pragma once
// The walk of one group made visible, for teaching: a tree built on the CPU from a copy of any
// backend's state, the walk of one group recorded front by front, and the MAC's decision on one
// cell explained with its numbers. Every decision goes through cpu::testCell, the function the
// walk itself calls, so what is shown cannot drift from what is computed.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cpu/cpu_stages.h"
#include "sim/params.h"

namespace bhviz::sim::cpu {

/// A tree with its groups, built by the CPU stages from a copy of a state, every particle a
/// target (so each particle's group is listed, whatever its time bin).
struct WalkScene {
  Particles particles;  ///< key order (the tree's)
  Tree tree;
  Groups groups;  ///< every particle active
  MacSetup mac;   ///< the MAC the walk applies (macSetup, with the acceleration fallback)
};

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
  std::string test;  ///< the test with its numbers, e.g. "l/d = 0.31 < theta = 0.5 -> accepted"
};

/// Explains cell `cell` of `tree` for the group (box, smallest |a_old|) under `mac`: the verdict
/// is testCell's, the text names the chosen MAC's terms and their values (3 significant digits).
/// ASCII only (the UI's font has no Greek letters).
MacExplanation explainMac(const Tree& tree, std::uint32_t cell, const Box& groupBox, float accMin,
                          const MacSetup& mac);

/// "accepted", "leaf (P2P)" or "opened".
const char* toString(CellVerdict v);

}  // namespace bhviz::sim::cpu
