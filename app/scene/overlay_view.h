#pragma once
// The bridge from the tree export to the overlay renderer: octree cells of a level range and
// walk groups as wireframe boxes.

#include <array>
#include <glm/vec4.hpp>
#include <vector>

#include "render/vertex.h"
#include "sim/backend.h"

namespace bhviz::app {

/// Which boxes the tree overlay draws (the window's panel and --overlay choose).
struct OverlayRequest {
  bool cells = false;  ///< octree cells of levels [minLevel, maxLevel], coloured by level
  int minLevel = 2;
  int maxLevel = 6;
  bool groups = false;   ///< the walk groups of the last force evaluation
  bool domains = false;  ///< under mpirun: each rank's ORB domain, coloured by rank
  bool any() const { return cells || groups || domains; }
};

inline constexpr float kCellOpacity = 0.55f;
inline constexpr float kGroupOpacity = 0.5f;
inline constexpr float kGroupColour[3] = {0.3f, 1.0f, 0.6f};
inline constexpr float kDomainOpacity = 0.9f;

/// The levels [first, last] of [minLevel, maxLevel] that a tree of `depth` levels has
/// (empty when first > last): the range sim exports (sim/common/draw.h).
using LevelRange = sim::LevelSpan;
inline LevelRange overlayLevels(int minLevel, int maxLevel, int depth) {
  return sim::levelSpan(minLevel, maxLevel, depth);
}

/// The colour of each octree level of the overlay: a rainbow over the range (coarse = blue …
/// fine = red), with the cells' opacity; entries outside the range unused.
using LevelColours = std::array<glm::vec4, sim::kMaxLevel + 1>;
LevelColours levelColours(LevelRange range);

/// What `request` asks a backend to export of a tree of `treeLevels` levels, in the overlay's
/// colours (cells by level, groups in kGroupColour).
sim::BoxQuery boxQuery(const OverlayRequest& request, int treeLevels);

/// The renderer's box of an exported one: the same layout, so the device writes exported boxes
/// straight into the renderer's buffer (cuda_gl_bridge.h).
render::OverlayBox toOverlayBox(const sim::DrawBox& box);

/// An axis-aligned box (a group's, a cell's cube) in `colour`.
render::OverlayBox boxOf(const sim::Box& box, const glm::vec4& colour);

/// What `request` draws of the backend's last force evaluation, made on the host (through a
/// copy from the device where the backend keeps its tree there): cells, then groups.
std::vector<render::OverlayBox> overlayBoxes(const sim::Backend& backend,
                                             const OverlayRequest& request);

}  // namespace bhviz::app
