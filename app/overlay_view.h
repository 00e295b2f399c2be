#pragma once
// The bridge from the tree export to the overlay renderer: octree cells of a level range and
// walk groups as wireframe boxes.

#include <array>
#include <glm/vec4.hpp>
#include <vector>

#include "render/vertex.h"
#include "sim/particles.h"
#include "sim/cpu/cpu_backend.h"
#include "sim/tree.h"

namespace bhviz::app {

/// Which boxes the tree overlay draws (the window's panel and --overlay choose).
struct OverlayRequest {
  bool cells = false;  ///< octree cells of levels [minLevel, maxLevel], coloured by level
  int minLevel = 2;
  int maxLevel = 6;
  bool groups = false;  ///< the walk groups of the last force evaluation
  bool any() const { return cells || groups; }
};

inline constexpr float kCellOpacity = 0.55f;
inline constexpr float kGroupOpacity = 0.5f;
inline constexpr float kGroupColour[3] = {0.3f, 1.0f, 0.6f};

/// The levels [first, last] of [minLevel, maxLevel] that a tree of `depth` levels has
/// (empty when first > last).
struct LevelRange {
  int first = 0;
  int last = -1;
};
inline LevelRange overlayLevels(int minLevel, int maxLevel, int depth) {
  return {minLevel < 0 ? 0 : minLevel, maxLevel < depth - 1 ? maxLevel : depth - 1};
}

/// The colour of each octree level of the overlay: a rainbow over the range (coarse = blue …
/// fine = red), with the cells' opacity; entries outside the range unused.
using LevelColours = std::array<glm::vec4, sim::kMaxLevel + 1>;
LevelColours levelColours(LevelRange range);

/// The geometric cube of one cell (the octree's, not the tight box) in `colour`.
render::OverlayBox cellCube(const sim::Tree& tree, const sim::Particles& keyOrder,
                            std::uint32_t cell, const glm::vec4& colour);

/// The geometric cube of every cell with level in [minLevel, maxLevel], coloured by level
/// (coarse = blue … fine = red). `keyOrder` are the particles the tree was built on.
std::vector<render::OverlayBox> treeCellBoxes(const sim::Tree& tree, const sim::Particles& keyOrder,
                                              int minLevel, int maxLevel);

/// An axis-aligned box (a group's, a tight box) in `colour`.
render::OverlayBox boxOf(const sim::Box& box, const glm::vec4& colour);

/// The box of every walk group's active particles.
std::vector<render::OverlayBox> groupBoxes(const sim::Groups& groups);

/// What `request` draws of the CPU backend's tree and groups: cells, then groups.
std::vector<render::OverlayBox> overlayBoxes(const sim::CpuBackend& cpu,
                                             const OverlayRequest& request);

}  // namespace bhviz::app
