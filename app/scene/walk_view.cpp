#include "app/scene/walk_view.h"

#include <algorithm>
#include <stdexcept>

#include "app/scene/overlay_view.h"

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

glm::vec4 cellColour(const sim::cpu::GroupWalk& walk, std::uint32_t cell, sim::cpu::CellVerdict v) {
  return v == sim::cpu::CellVerdict::Accepted && walk.expanded(cell) ? kExpandedColour
                                                                     : verdictColour(v);
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
  m_walk.emplace(state, params, id);
  m_time = time;
}

std::int64_t WalkInspection::cellNear(const render::Camera& camera, float width, float height,
                                      glm::vec2 cursor, float maxPixels) const {
  if (!active()) return -1;
  std::int64_t best = -1;
  float bestD2 = maxPixels * maxPixels;
  const sim::cpu::InteractionList& l = m_walk->list();
  for (const std::vector<std::uint32_t>* cells : {&l.cells, &l.leaves, &l.opened}) {
    for (std::uint32_t c : *cells) {
      const render::OverlayBox b = boxOf(m_walk->cell(c).cube, glm::vec4(1.0f));
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
  if (!active()) return "no particle picked";
  const sim::cpu::GroupWalk& w = *m_walk;
  return "walk of particle " + std::to_string(w.particleId()) + " (group " +
         std::to_string(w.group()) + " of " + std::to_string(w.groupCount()) + ", " +
         std::to_string(w.groupParticles()) +
         " targets): " + std::to_string(w.list().cells.size()) + " accepted (" +
         std::to_string(w.expandedCount()) + " of them expanded about the group's centre), " +
         std::to_string(w.list().leaves.size()) + " leaves (P2P), " +
         std::to_string(w.list().opened.size()) + " opened";
}

std::vector<render::OverlayBox> walkBoxes(const WalkInspection& walk, const WalkOverlay& overlay) {
  std::vector<render::OverlayBox> boxes;
  if (!walk.active()) return boxes;
  const sim::cpu::GroupWalk& w = walk.walk();
  auto add = [&](std::uint32_t c, glm::vec4 colour) {
    boxes.push_back(boxOf(w.cell(c).cube, colour));
    boxes.back().halfSize *= kCellShrink;
  };
  switch (overlay.mode) {
    case WalkOverlay::Mode::Build: {
      // The cells of levels 0 .. level, coloured by level as the tree overlay colours them.
      const LevelColours colours =
          levelColours(LevelRange{0, std::min(overlay.level, w.levels() - 1)});
      const std::uint32_t cells = w.build(overlay.level).cellsSoFar;
      for (std::uint32_t c = 0; c < cells; ++c) {
        const sim::cpu::CellFacts f = w.cell(c);
        boxes.push_back(boxOf(f.cube, colours[static_cast<std::size_t>(f.level)]));
      }
      break;
    }
    case WalkOverlay::Mode::List:
      // Opened cells first: they enclose the cells decided inside them.
      for (std::uint32_t c : walk.list().opened) add(c, kOpenedColour);
      for (std::uint32_t c : walk.list().cells) {
        add(c, cellColour(w, c, sim::cpu::CellVerdict::Accepted));
      }
      for (std::uint32_t c : walk.list().leaves) add(c, kLeafColour);
      break;
    case WalkOverlay::Mode::Walk: {
      const auto& fronts = walk.fronts();
      const int last = std::clamp(overlay.step, 0, static_cast<int>(fronts.size()) - 1);
      for (int k = 0; k <= last; ++k) {
        const sim::cpu::WalkFront& f = fronts[static_cast<std::size_t>(k)];
        for (std::size_t i = 0; i < f.cells.size(); ++i) {
          glm::vec4 colour = cellColour(w, f.cells[i], f.verdicts[i]);
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
    boxes.push_back(boxOf(w.groupBox(), kPickedGroupColour));
  }
  if (overlay.highlight >= 0 && static_cast<std::size_t>(overlay.highlight) < w.cellCount()) {
    const auto c = static_cast<std::uint32_t>(overlay.highlight);
    add(c, kHighlightColour);
    render::OverlayBox grown = boxes.back();
    grown.halfSize *= kHighlightGrow;
    boxes.push_back(grown);
  }
  return boxes;
}

}  // namespace bhviz::app
