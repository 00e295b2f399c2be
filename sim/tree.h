#pragma once
// The octree and the groups, as structures of arrays in breadth-first order: the cells of
// level L are [levelBegin[L], levelBegin[L+1]), in key order, and the children of a cell are
// contiguous. The CUDA backend holds the same arrays on the device.

#include <cstdint>
#include <vector>

#include "sim/common/gravity.h"
#include "sim/common/keys.h"
#include "sim/common/vec.h"

namespace bhviz::sim {

struct Tree {
  KeyFrame frame;  ///< the cube the keys quantise; root cell side = frame.side
  std::vector<std::uint32_t> levelBegin;  ///< first cell of each level; one extra entry at the end

  // topology
  std::vector<std::uint32_t> first;      ///< first particle (key order)
  std::vector<std::uint32_t> count;      ///< number of particles
  std::vector<std::uint32_t> child;      ///< first child cell; children are contiguous
  std::vector<std::uint8_t> childCount;  ///< 0 for a leaf
  std::vector<std::uint8_t> level;       ///< 0 for the root

  // moments (filled by the moments stage)
  std::vector<Vec4> comMass;     ///< centre of mass [length]; w = mass
  std::vector<Quadrupole> quad;  ///< second moments about the COM [mass·length²]
  std::vector<Box> box;          ///< tight box of the cell's particles
  std::vector<float> bmax;       ///< largest COM-to-particle distance (upper bound) [length]
  std::vector<float> opening;    ///< the MAC's opening value (mac.h: openingValue)

  std::size_t cellCount() const { return first.size(); }
  int depth() const { return static_cast<int>(levelBegin.size()) - 1; }
  float side(std::uint32_t cell) const {
    return frame.side / static_cast<float>(1u << level[cell]);
  }
  bool isLeaf(std::uint32_t cell) const { return childCount[cell] == 0; }
  /// Sizes the moment arrays for the cells of the topology (computeMoments fills them).
  void sizeMoments() {
    const std::size_t n = cellCount();
    comMass.resize(n);
    quad.resize(n);
    box.resize(n);
    bmax.resize(n);
    opening.resize(n);
  }
};

/// Runs of at most N_group consecutive particles (key order), each within one tree cell, that
/// share one tree walk. Only groups holding active particles are listed.
struct Groups {
  std::vector<std::uint32_t> first;  ///< first particle
  std::vector<std::uint32_t> count;  ///< particles in the run (active or not)
  std::vector<Box> box;              ///< box of the group's active particles
  std::vector<float> accMin;  ///< smallest |a_old| of its active particles (acceleration MAC)
  /// Per group, the targets whose number decides its far-cell expansion (expansionCentre): for
  /// a run of a group cut into runs (sim/common/group_runs.h), the whole group's; empty: every
  /// group's own active particles.
  std::vector<std::uint32_t> expandAs;

  std::size_t size() const { return first.size(); }
  /// Groups 0, k, 2k, … (a sample: Backend::probeRefit).
  Groups every(std::size_t k) const {
    Groups out;
    for (std::size_t g = 0; g < size(); g += k) {
      out.first.push_back(first[g]);
      out.count.push_back(count[g]);
      out.box.push_back(box[g]);
      out.accMin.push_back(accMin[g]);
      if (!expandAs.empty()) out.expandAs.push_back(expandAs[g]);
    }
    return out;
  }
  /// The number expansionCentre reads for group g of `own` active particles.
  unsigned expansionTargets(std::size_t g, unsigned own) const {
    return expandAs.empty() ? own : expandAs[g];
  }
};

}  // namespace bhviz::sim
