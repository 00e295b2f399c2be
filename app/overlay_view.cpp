#include "app/overlay_view.h"

#include <algorithm>

#include "render/palette.h"
#include "sim/common/keys.h"

namespace bhviz::app {

LevelColours levelColours(LevelRange range) {
  LevelColours out{};
  const int lo = std::clamp(range.first, 0, sim::kMaxLevel);
  const int hi = std::clamp(range.last, lo, sim::kMaxLevel);
  const render::Palette rainbow = render::Palette::rainbow(static_cast<std::size_t>(hi - lo + 1));
  for (int level = lo; level <= hi; ++level) {
    out[static_cast<std::size_t>(level)] =
        glm::vec4(rainbow.colours[static_cast<std::size_t>(level - lo)], kCellOpacity);
  }
  return out;
}

render::OverlayBox boxOf(const sim::Box& box, const glm::vec4& colour) {
  render::OverlayBox b;
  b.centre = 0.5f * glm::vec3(box.lo.x + box.hi.x, box.lo.y + box.hi.y, box.lo.z + box.hi.z);
  b.halfSize = 0.5f * glm::vec3(box.hi.x - box.lo.x, box.hi.y - box.lo.y, box.hi.z - box.lo.z);
  b.colour = colour;
  return b;
}

render::OverlayBox cellCube(const sim::Tree& tree, const sim::Particles& keyOrder,
                            std::uint32_t cell, const glm::vec4& colour) {
  // The cell's cube from any of its particles: the same quantisation that made the keys.
  const sim::Vec4& x = keyOrder.posMass[tree.first[cell]];
  return boxOf(sim::cellCube(sim::quantize({x.x, x.y, x.z}, tree.frame), tree.level[cell],
                             tree.frame),
               colour);
}

std::vector<render::OverlayBox> treeCellBoxes(const sim::Tree& tree, const sim::Particles& keyOrder,
                                              int minLevel, int maxLevel) {
  std::vector<render::OverlayBox> boxes;
  const LevelRange range = overlayLevels(minLevel, maxLevel, tree.depth());
  if (range.first > range.last) return boxes;
  const LevelColours colours = levelColours(range);
  for (std::uint32_t c = tree.levelBegin[range.first]; c < tree.levelBegin[range.last + 1]; ++c) {
    boxes.push_back(cellCube(tree, keyOrder, c, colours[tree.level[c]]));
  }
  return boxes;
}

std::vector<render::OverlayBox> groupBoxes(const sim::Groups& groups) {
  std::vector<render::OverlayBox> boxes;
  boxes.reserve(groups.size());
  const glm::vec4 colour(kGroupColour[0], kGroupColour[1], kGroupColour[2], kGroupOpacity);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const sim::Box& box = groups.box[g];
    if (!(box.lo.x <= box.hi.x)) continue;  // no active particle
    boxes.push_back(boxOf(box, colour));
  }
  return boxes;
}

std::vector<render::OverlayBox> overlayBoxes(const sim::CpuBackend& cpu,
                                             const OverlayRequest& request) {
  std::vector<render::OverlayBox> boxes;
  if (request.cells) {
    boxes = treeCellBoxes(cpu.tree(), cpu.particles(), request.minLevel, request.maxLevel);
  }
  if (request.groups) {
    const std::vector<render::OverlayBox> groups = groupBoxes(cpu.groups());
    boxes.insert(boxes.end(), groups.begin(), groups.end());
  }
  return boxes;
}

}  // namespace bhviz::app
