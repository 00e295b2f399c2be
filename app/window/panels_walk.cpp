// The Walk panel: the picked particle's group, its interaction list in three colours with
// counts, the MAC's decision on the hovered or selected cell with its numbers, and the
// step-through of the tree build and of the walk (app/walk_view.h).
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "app/window/panels.h"

namespace bhviz::app {

namespace {

ImVec4 imColour(const glm::vec4& c) { return ImVec4(c.r, c.g, c.b, 1.0f); }

void countLine(const glm::vec4& colour, const char* what, std::size_t n) {
  ImGui::TextColored(imColour(colour), "#");
  ImGui::SameLine();
  ImGui::Text("%-22s %zu", what, n);
}

/// A scrolling list of cells, each selectable; hovering one makes it the explained cell.
void cellList(const char* id, const WalkInspection& walk, const std::vector<std::uint32_t>& cells,
              const std::vector<sim::cpu::CellVerdict>& verdicts, WalkPanelState& ws,
              std::int64_t& listHover) {
  const float height =
      std::min(180.0f, ImGui::GetTextLineHeightWithSpacing() * float(cells.size() + 1));
  ImGui::BeginChild(id, ImVec2(360.0f, height), true);
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(cells.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const std::uint32_t c = cells[static_cast<std::size_t>(i)];
      const sim::cpu::CellVerdict v = verdicts[static_cast<std::size_t>(i)];
      const sim::cpu::CellFacts f = walk.walk().cell(c);
      char label[96];
      std::snprintf(label, sizeof label, "cell %u  level %d  %u particle%s  %s##%d", c, f.level,
                    f.particles, f.particles == 1 ? "" : "s", sim::cpu::toString(v), i);
      ImGui::PushStyleColor(ImGuiCol_Text, imColour(cellColour(walk.walk(), c, v)));
      if (ImGui::Selectable(label, ws.selected == c)) ws.selected = ws.selected == c ? -1 : c;
      ImGui::PopStyleColor();
      if (ImGui::IsItemHovered()) listHover = c;
    }
  }
  ImGui::EndChild();
}

void explanation(const WalkInspection& walk, std::int64_t cell) {
  ImGui::Separator();
  if (cell < 0) {
    ImGui::TextDisabled("hover a cell (in the scene or a list) or select one: the MAC's test");
    return;
  }
  const sim::cpu::MacExplanation e = walk.explain(static_cast<std::uint32_t>(cell));
  ImGui::TextColored(imColour(e.expanded ? kExpandedColour : verdictColour(e.verdict)),
                     "cell %lld, level %d: %s%s", (long long)cell,
                     walk.walk().cell(static_cast<std::uint32_t>(cell)).level,
                     sim::cpu::toString(e.verdict), e.expanded ? ", expanded" : "");
  ImGui::Text("%u particles, mass %.4g, side %.3g, distance to the group %.3g", e.particles,
              double(e.mass), double(e.side), double(e.distance));
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + 420.0f);
  ImGui::TextUnformatted(e.test.c_str());
  ImGui::PopTextWrapPos();
}

void stepBuild(const WalkInspection& walk, WalkPanelState& ws) {
  const int deepest = walk.walk().levels() - 1;
  ws.level = std::clamp(ws.level, 0, deepest);
  const sim::cpu::BuildCensus b = walk.walk().build(ws.level);
  ImGui::Text("Tree build: level %d of %d", ws.level, deepest);
  ImGui::Text("%u cells at this level; %zu leaves so far (a cell splits while it holds > N_leaf)",
              b.cellsAtLevel, b.leavesSoFar);
  if (ImGui::Button("Back") && ws.level > 0) --ws.level;
  ImGui::SameLine();
  if (ImGui::Button("Next")) {
    if (ws.level < deepest) {
      ++ws.level;
    } else {
      ws.buildStage = false;  // the tree is built: walk it
      ws.step = 0;
    }
  }
}

void stepWalk(const WalkInspection& walk, WalkPanelState& ws, std::int64_t& listHover) {
  const auto& fronts = walk.fronts();
  const int last = static_cast<int>(fronts.size()) - 1;
  ws.step = std::clamp(ws.step, 0, last);
  const sim::cpu::WalkFront& f = fronts[static_cast<std::size_t>(ws.step)];
  std::size_t n[3] = {0, 0, 0};
  for (sim::cpu::CellVerdict v : f.verdicts) ++n[static_cast<int>(v)];
  ImGui::Text("Walk: front %d of %d, %zu cells tested", ws.step, last, f.cells.size());
  ImGui::Text("%zu accepted, %zu leaves, %zu opened (their children form the next front)", n[0],
              n[1], n[2]);
  if (ImGui::Button("Back")) {
    if (ws.step > 0) {
      --ws.step;
    } else {
      ws.buildStage = true;
    }
  }
  ImGui::SameLine();
  if (ImGui::Button("Next") && ws.step < last) ++ws.step;
  cellList("##front", walk, f.cells, f.verdicts, ws, listHover);
}

}  // namespace

void drawWalkPanel(AppState& s, FrameRequests& r, const UiInfo& info) {
  const bool onDevice =
      info.session != nullptr && info.session->simulation().backend().traits().onDevice;
  const WalkInspection* walk = info.walk;
  if (walk == nullptr || !walk->active()) {
    ImGui::TextUnformatted("Click a particle (left click, no drag) to see its group's tree walk.");
    if (onDevice)
      ImGui::TextDisabled("GPU backend: the walk is computed on a CPU tree of a download.");
    return;
  }
  WalkPanelState& ws = s.walk;
  const sim::cpu::GroupWalk& w = walk->walk();
  ImGui::Text("particle %u: group %zu of %zu (%u particles), state at t = %.4g", w.particleId(),
              w.group(), w.groupCount(), w.groupParticles(), walk->time());
  ImGui::Text("MAC %s, theta %.3g",
              std::string(sim::toString(static_cast<sim::MacKind>(w.mac().code))).c_str(),
              double(w.mac().theta));
  ImGui::TextDisabled(onDevice ? "GPU backend: computed on a CPU tree rebuilt from a download of "
                                 "the positions at the pick (a teaching tool)"
                               : "computed on a CPU tree of the state at the pick");
  if (ImGui::Button("Refresh (current state)")) r.refreshWalk = true;
  ImGui::SameLine();
  if (ImGui::Button("Clear")) r.clearWalk = true;
  ImGui::Separator();
  const sim::cpu::InteractionList& list = walk->list();
  ImGui::TextColored(imColour(kPickedGroupColour), "#");
  ImGui::SameLine();
  ImGui::TextUnformatted("the group (white box)");
  const std::size_t expanded = w.expandedCount();
  countLine(kAcceptedColour, "accepted (multipole)", list.cells.size() - expanded);
  countLine(kExpandedColour, "accepted, far: expanded", expanded);
  countLine(kLeafColour, "leaves (P2P)", list.leaves.size());
  countLine(kOpenedColour, "opened by the MAC", list.opened.size());

  const bool small = w.particleCount() <= kStepThroughMaxN;
  if (!small) ws.stepThrough = false;
  ImGui::BeginDisabled(!small);
  ImGui::Checkbox("step through", &ws.stepThrough);
  ImGui::EndDisabled();
  if (!small) {
    ImGui::SameLine();
    ImGui::TextDisabled("(N <= %zu)", kStepThroughMaxN);
  }
  std::int64_t listHover = -1;
  if (ws.stepThrough) {
    if (ws.buildStage) {
      stepBuild(*walk, ws);
    } else {
      stepWalk(*walk, ws, listHover);
    }
  } else if (ImGui::TreeNode("cells of the list")) {
    std::vector<std::uint32_t> cells;
    std::vector<sim::cpu::CellVerdict> verdicts;
    auto append = [&](const std::vector<std::uint32_t>& from, sim::cpu::CellVerdict v) {
      cells.insert(cells.end(), from.begin(), from.end());
      verdicts.insert(verdicts.end(), from.size(), v);
    };
    append(list.cells, sim::cpu::CellVerdict::Accepted);
    append(list.leaves, sim::cpu::CellVerdict::Leaf);
    append(list.opened, sim::cpu::CellVerdict::Opened);
    cellList("##list", *walk, cells, verdicts, ws, listHover);
    ImGui::TreePop();
  }
  if (listHover >= 0) ws.hovered = listHover;
  explanation(*walk, ws.hovered);
}

}  // namespace bhviz::app
