#include "app/overlay_view.h"

#include <algorithm>

#include "render/palette.h"
#include "sim/common/keys.h"

namespace bhviz::app {

namespace {
constexpr float kCellOpacity = 0.55f;
constexpr float kGroupOpacity = 0.5f;
}  // namespace

render::OverlayBox cellCube(const sim::Tree& tree, const sim::Particles& keyOrder,
                            std::uint32_t cell, const glm::vec4& colour) {
  const sim::KeyFrame& frame = tree.frame;
  const int level = tree.level[cell];
  const float side = tree.side(cell);
  const int shift = sim::kKeyBitsPerAxis - level;
  // The cell's integer coordinates at its level: any of its particles' quantised position,
  // shifted down (the same quantisation that made the keys).
  const sim::Vec4& x = keyOrder.posMass[tree.first[cell]];
  const sim::KeyCoords q = sim::quantize({x.x, x.y, x.z}, frame);
  const glm::vec3 index(float(q.x >> shift), float(q.y >> shift), float(q.z >> shift));
  render::OverlayBox b;
  b.centre = glm::vec3(frame.origin.x, frame.origin.y, frame.origin.z) + (index + 0.5f) * side;
  b.halfSize = glm::vec3(0.5f * side);
  b.colour = colour;
  return b;
}

std::vector<render::OverlayBox> treeCellBoxes(const sim::Tree& tree, const sim::Particles& keyOrder,
                                              int minLevel, int maxLevel) {
  std::vector<render::OverlayBox> boxes;
  const int deepest = tree.depth() - 1;
  const int lo = std::max(minLevel, 0);
  const int hi = std::min(maxLevel, deepest);
  if (lo > hi) return boxes;
  const render::Palette colours = render::Palette::rainbow(static_cast<std::size_t>(hi - lo + 1));
  for (int level = lo; level <= hi; ++level) {
    const glm::vec3 colour = colours.colours[static_cast<std::size_t>(level - lo)];
    for (std::uint32_t c = tree.levelBegin[level]; c < tree.levelBegin[level + 1]; ++c) {
      boxes.push_back(cellCube(tree, keyOrder, c, glm::vec4(colour, kCellOpacity)));
    }
  }
  return boxes;
}

render::OverlayBox boxOf(const sim::Box& box, const glm::vec4& colour) {
  render::OverlayBox b;
  b.centre = 0.5f * glm::vec3(box.lo.x + box.hi.x, box.lo.y + box.hi.y, box.lo.z + box.hi.z);
  b.halfSize = 0.5f * glm::vec3(box.hi.x - box.lo.x, box.hi.y - box.lo.y, box.hi.z - box.lo.z);
  b.colour = colour;
  return b;
}

std::vector<render::OverlayBox> groupBoxes(const sim::Groups& groups) {
  std::vector<render::OverlayBox> boxes;
  boxes.reserve(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const sim::Box& box = groups.box[g];
    if (!(box.lo.x <= box.hi.x)) continue;  // no active particle
    boxes.push_back(boxOf(box, glm::vec4(0.3f, 1.0f, 0.6f, kGroupOpacity)));
  }
  return boxes;
}

}  // namespace bhviz::app
