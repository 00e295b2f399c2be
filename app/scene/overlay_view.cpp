#include "app/scene/overlay_view.h"

#include <algorithm>
#include <cstddef>

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

sim::BoxQuery boxQuery(const OverlayRequest& request, int treeLevels) {
  sim::BoxQuery q;
  q.cells = request.cells;
  q.minLevel = request.minLevel;
  q.maxLevel = request.maxLevel;
  const LevelColours colours =
      levelColours(overlayLevels(request.minLevel, request.maxLevel, treeLevels));
  for (std::size_t l = 0; l < colours.size(); ++l) {
    const glm::vec4& c = colours[l];
    q.cellColour[l] = {c.r, c.g, c.b, c.a};
  }
  q.groups = request.groups;
  q.groupColour = {kGroupColour[0], kGroupColour[1], kGroupColour[2], kGroupOpacity};
  q.domains = request.domains;
  const render::Palette ranks = render::Palette::rainbow(q.domainColour.size());
  for (std::size_t r = 0; r < q.domainColour.size(); ++r) {
    const glm::vec3& c = ranks.colours[(r * 3) % q.domainColour.size()];  // neighbours apart
    q.domainColour[r] = {c.r, c.g, c.b, kDomainOpacity};
  }
  return q;
}

static_assert(sizeof(sim::DrawBox) == sizeof(render::OverlayBox) &&
                  offsetof(render::OverlayBox, halfSize) == offsetof(sim::DrawBox, halfSize) &&
                  offsetof(render::OverlayBox, colour) == offsetof(sim::DrawBox, colour),
              "an exported box is laid out as the renderer's");

render::OverlayBox toOverlayBox(const sim::DrawBox& b) {
  render::OverlayBox o;
  o.centre = glm::vec3(b.centre[0], b.centre[1], b.centre[2]);
  o.halfSize = glm::vec3(b.halfSize[0], b.halfSize[1], b.halfSize[2]);
  o.colour = glm::vec4(b.colour.r, b.colour.g, b.colour.b, b.colour.a);
  return o;
}

std::vector<render::OverlayBox> overlayBoxes(const sim::Backend& backend,
                                             const OverlayRequest& request) {
  std::vector<render::OverlayBox> boxes;
  if (!request.any()) return boxes;
  const std::vector<sim::DrawBox> exported =
      backend.boxes(boxQuery(request, backend.treeCensus().levels));
  boxes.reserve(exported.size());
  for (const sim::DrawBox& b : exported) boxes.push_back(toOverlayBox(b));
  return boxes;
}

}  // namespace bhviz::app
