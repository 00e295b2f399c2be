#include "app/walk_view.h"

#include <algorithm>
#include <stdexcept>

#include "app/overlay_view.h"

namespace bhviz::app {

namespace {
constexpr float kDimOpacity = 0.3f;      // Walk mode: the decisions of earlier fronts
constexpr float kOpenedDim = 0.15f;      // ... and the cells they opened
constexpr float kHighlightGrow = 1.02f;  // a second, slightly larger box makes the line thicker
// Walk cells are drawn a little smaller than their cubes: an opened cell and its children share
// faces, and full-size boxes would draw their edges on top of each other.
constexpr float kCellShrink = 0.95f;

}  // namespace

glm::vec4 verdictColour(sim::cpu::CellVerdict v) {
  switch (v) {
    case sim::cpu::CellVerdict::Accepted:
      return kAcceptedColour;
    case sim::cpu::CellVerdict::Leaf:
      return kLeafColour;
    case sim::cpu::CellVerdict::Opened:
      return kOpenedColour;
  }
  return kOpenedColour;
}

std::optional<std::size_t> pickParticle(const sim::Particles& p, const ViewSettings& view,
                                        const render::Camera& camera, float width, float height,
                                        glm::vec2 cursor, float maxPixels) {
  const std::size_t stride =
      std::max<std::size_t>(1, (p.size() + kPickFullLimit - 1) / kPickFullLimit);
  std::optional<std::size_t> best;
  float bestD2 = maxPixels * maxPixels;
  for (std::size_t i = 0; i < p.size(); i += stride) {
    if (!view.visible[static_cast<std::size_t>(sim::tagComponent(p.tag[i]))]) continue;
    const sim::Vec4& x = p.posMass[i];
    const glm::vec3 s = camera.project({x.x, x.y, x.z}, width, height);
    if (!(s.z > camera.nearPlane())) continue;  // behind the eye (or NaN)
    const float dx = s.x - cursor.x, dy = s.y - cursor.y;
    const float d2 = dx * dx + dy * dy;
    if (d2 <= bestD2) {
      bestD2 = d2;
      best = i;
    }
  }
  return best;
}

void WalkInspection::inspect(const sim::Particles& state, const sim::SimParams& params,
                             std::uint32_t id, double time) {
  sim::cpu::WalkScene scene = sim::cpu::buildWalkScene(state, params, true);
  const std::int64_t index = sim::cpu::indexOfId(scene.particles, id);
  const std::int64_t group =
      index < 0 ? -1 : sim::cpu::groupContaining(scene.groups, static_cast<std::uint32_t>(index));
  if (group < 0) {
    throw std::out_of_range("no particle with id " + std::to_string(id) + " (ids are 0.." +
                            std::to_string(state.size() - 1) + ")");
  }
  m_scene = std::move(scene);
  m_group = static_cast<std::size_t>(group);
  const sim::Box& box = m_scene.groups.box[m_group];
  const float accMin = m_scene.groups.accMin[m_group];
  m_list = sim::cpu::buildInteractionList(m_scene.tree, box, accMin, m_scene.mac);
  m_fronts = sim::cpu::traceWalk(m_scene.tree, box, accMin, m_scene.mac);
  m_id = id;
  m_time = time;
  m_active = true;
}

sim::cpu::MacExplanation WalkInspection::explain(std::uint32_t cell) const {
  return sim::cpu::explainMac(m_scene.tree, cell, m_scene.groups.box[m_group],
                              m_scene.groups.accMin[m_group], m_scene.mac);
}

std::int64_t WalkInspection::cellNear(const render::Camera& camera, float width, float height,
                                      glm::vec2 cursor, float maxPixels) const {
  if (!m_active) return -1;
  std::int64_t best = -1;
  float bestD2 = maxPixels * maxPixels;
  for (const std::vector<std::uint32_t>* cells : {&m_list.cells, &m_list.leaves, &m_list.opened}) {
    for (std::uint32_t c : *cells) {
      const render::OverlayBox b = cellCube(m_scene.tree, m_scene.particles, c, glm::vec4(1.0f));
      const glm::vec3 s = camera.project(b.centre, width, height);
      if (!(s.z > camera.nearPlane())) continue;
      const float d2 = (s.x - cursor.x) * (s.x - cursor.x) + (s.y - cursor.y) * (s.y - cursor.y);
      if (d2 < bestD2) {
        bestD2 = d2;
        best = c;
      }
    }
  }
  return best;
}

std::string WalkInspection::summary() const {
  if (!m_active) return "no particle picked";
  return "walk of particle " + std::to_string(m_id) + " (group " + std::to_string(m_group) +
         " of " + std::to_string(m_scene.groups.size()) + ", " +
         std::to_string(m_scene.groups.count[m_group]) +
         " targets): " + std::to_string(m_list.cells.size()) + " accepted, " +
         std::to_string(m_list.leaves.size()) + " leaves (P2P), " +
         std::to_string(m_list.opened.size()) + " opened";
}

std::vector<render::OverlayBox> walkBoxes(const WalkInspection& walk, const WalkOverlay& overlay) {
  std::vector<render::OverlayBox> boxes;
  if (!walk.active()) return boxes;
  const sim::Tree& tree = walk.scene().tree;
  const sim::Particles& particles = walk.scene().particles;
  auto add = [&](std::uint32_t c, glm::vec4 colour) {
    boxes.push_back(cellCube(tree, particles, c, colour));
    boxes.back().halfSize *= kCellShrink;
  };
  switch (overlay.mode) {
    case WalkOverlay::Mode::Build:
      boxes = treeCellBoxes(tree, particles, 0, overlay.level);
      break;
    case WalkOverlay::Mode::List:
      // Opened cells first: they enclose the cells decided inside them.
      for (std::uint32_t c : walk.list().opened) add(c, kOpenedColour);
      for (std::uint32_t c : walk.list().cells) add(c, kAcceptedColour);
      for (std::uint32_t c : walk.list().leaves) add(c, kLeafColour);
      break;
    case WalkOverlay::Mode::Walk: {
      const auto& fronts = walk.fronts();
      const int last = std::clamp(overlay.step, 0, static_cast<int>(fronts.size()) - 1);
      for (int k = 0; k <= last; ++k) {
        const sim::cpu::WalkFront& f = fronts[static_cast<std::size_t>(k)];
        for (std::size_t i = 0; i < f.cells.size(); ++i) {
          glm::vec4 colour = verdictColour(f.verdicts[i]);
          if (k < last) {
            colour.a = f.verdicts[i] == sim::cpu::CellVerdict::Opened ? kOpenedDim : kDimOpacity;
          }
          add(f.cells[i], colour);
        }
      }
      break;
    }
  }
  if (overlay.mode != WalkOverlay::Mode::Build) {
    boxes.push_back(boxOf(walk.scene().groups.box[walk.group()], kPickedGroupColour));
  }
  if (overlay.highlight >= 0 && static_cast<std::size_t>(overlay.highlight) < tree.cellCount()) {
    const auto c = static_cast<std::uint32_t>(overlay.highlight);
    add(c, kHighlightColour);
    render::OverlayBox grown = boxes.back();
    grown.halfSize *= kHighlightGrow;
    boxes.push_back(grown);
  }
  return boxes;
}

}  // namespace bhviz::app
