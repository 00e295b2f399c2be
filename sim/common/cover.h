#pragma once
// A tree rebuilt around the targets (Backend::rebuildAroundTargets): the per-cell rules that the
// CPU's twins (sim/cpu/local_rebuild.cpp) and the device's kernels (sim/cuda/local_rebuild.cu)
// both apply, in one copy.

#include <cstdint>

#include "sim/common/hd.h"
#include "sim/common/keys.h"

namespace bhviz::sim {

/// Whether the cover goes on into a cell's children: it has some, and the `targets` among its
/// `count` particles are fewer than `share` of them.
BHVIZ_HD inline bool coverSplits(std::uint32_t targets, std::uint32_t count, unsigned childCount,
                                 double share) {
  return childCount > 0 && double(targets) < share * double(count);
}

/// One quantised coordinate moved into [lo, lo + span].
BHVIZ_HD inline std::uint32_t clampAxis(std::uint32_t v, std::uint32_t lo, std::uint32_t span) {
  return v < lo ? lo : v > lo + span ? lo + span : v;
}

/// `q` moved into the cube of the cell of level `level` that holds the point `inCell`, so that
/// its key has that cell's prefix: the cube is inCell with the bits below the level cleared.
BHVIZ_HD inline KeyCoords clampIntoCell(KeyCoords q, KeyCoords inCell, int level) {
  const std::uint32_t span = (1u << (kKeyBitsPerAxis - level)) - 1u;
  return {clampAxis(q.x, inCell.x & ~span, span), clampAxis(q.y, inCell.y & ~span, span),
          clampAxis(q.z, inCell.z & ~span, span)};
}

}  // namespace bhviz::sim
