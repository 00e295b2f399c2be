#include "app/window/dock.h"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace bhviz::app {

namespace {

constexpr float kMinDockWidth = 200.0f;  // [pixels]
constexpr float kFloatingWidth = 330.0f;
constexpr float kLessonWidth = 540.0f;

using DrawPanel = void (*)(AppState&, FrameRequests&, const UiInfo&);

struct PanelEntry {
  PanelId id;
  const char* title;
  bool PanelsOpen::*open;
  DrawPanel draw;
};

const std::array<PanelEntry, kPanelCount>& panelTable() {
  static const std::array<PanelEntry, kPanelCount> table = {{
      {PanelId::Simulation, "Simulation", &PanelsOpen::simulation, drawSimulationPanel},
      {PanelId::Accuracy, "Accuracy", &PanelsOpen::accuracy, drawAccuracyPanel},
      {PanelId::TimeSteps, "Time steps", &PanelsOpen::timeSteps, drawTimeStepsPanel},
      {PanelId::View, "View", &PanelsOpen::view, drawViewPanel},
      {PanelId::Files, "Files", &PanelsOpen::files, drawFilesPanel},
      {PanelId::Camera, "Camera", &PanelsOpen::camera, drawCameraPanel},
      {PanelId::Performance, "Performance", &PanelsOpen::performance,
       [](AppState&, FrameRequests&, const UiInfo& info) { drawPerformancePanel(info); }},
      {PanelId::Meter, "Accuracy meter", &PanelsOpen::meter, drawAccuracyMeterPanel},
      {PanelId::Tree, "Tree", &PanelsOpen::tree,
       [](AppState& s, FrameRequests&, const UiInfo& info) { drawTreePanel(s, info); }},
      {PanelId::Diagnostics, "Diagnostics", &PanelsOpen::diagnostics,
       [](AppState&, FrameRequests&, const UiInfo& info) { drawDiagnosticsPanel(info); }},
      {PanelId::Walk, "Walk", &PanelsOpen::walk, drawWalkPanel},
      {PanelId::Lesson, "Lesson", &PanelsOpen::lesson, drawLessonPanel},
      {PanelId::Builder, "Merger builder", &PanelsOpen::builder, drawBuilderPanel},
  }};
  return table;
}

std::size_t indexOf(PanelId id) { return static_cast<std::size_t>(id); }

DockSide& sideOf(AppState& s, PanelId id) { return s.layout.side[indexOf(id)]; }

/// Right-click on a tab or in a floating panel: where the panel goes.
void placeMenu(AppState& s, PanelId id) {
  if (!ImGui::BeginPopupContextItem("place")) return;
  DockSide& side = sideOf(s, id);
  if (ImGui::MenuItem("Dock left", nullptr, side == DockSide::Left)) side = DockSide::Left;
  if (ImGui::MenuItem("Dock right", nullptr, side == DockSide::Right)) side = DockSide::Right;
  if (ImGui::MenuItem("Own window", nullptr, side == DockSide::Floating)) side = DockSide::Floating;
  ImGui::Separator();
  if (ImGui::MenuItem("Close")) panelOpen(s.panels, id) = false;
  ImGui::EndPopup();
}

/// A lesson's panel: its tab and title bar in the highlight colour. Returns the colours pushed.
int pushHighlight(const AppState& s, PanelId id) {
  if (s.layout.highlight != static_cast<int>(id)) return 0;
  const ImVec4 amber(0.85f, 0.5f, 0.1f, 1.0f), bright(1.0f, 0.62f, 0.2f, 1.0f);
  ImGui::PushStyleColor(ImGuiCol_Tab, amber);
  ImGui::PushStyleColor(ImGuiCol_TabActive, bright);
  ImGui::PushStyleColor(ImGuiCol_TabHovered, bright);
  ImGui::PushStyleColor(ImGuiCol_TitleBg, amber);
  ImGui::PushStyleColor(ImGuiCol_TitleBgActive, bright);
  return 5;
}

void drawDock(AppState& s, FrameRequests& r, const UiInfo& info, DockSide side, float top) {
  DockState& dock = side == DockSide::Left ? s.layout.left : s.layout.right;
  std::vector<const PanelEntry*> docked;
  std::string names;
  for (const PanelEntry& e : panelTable()) {
    if (!(s.panels.*e.open) || sideOf(s, e.id) != side) continue;
    docked.push_back(&e);
    names += (names.empty() ? "" : ", ") + std::string(e.title);
  }
  if (docked.empty()) return;
  const bool reveal = std::any_of(docked.begin(), docked.end(), [&](const PanelEntry* e) {
    return static_cast<int>(e->id) == s.layout.reveal;
  });
  if (reveal) {
    dock.collapsed = false;
    dock.selected = s.layout.reveal;
  }
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const float maxWidth = std::max(kMinDockWidth, 0.5f * display.x);
  dock.width = std::clamp(dock.width, kMinDockWidth, maxWidth);
  const float x = side == DockSide::Left ? 0.0f : display.x - dock.width;
  ImGui::SetNextWindowPos(ImVec2(x, top), ImGuiCond_Always);
  // Height 0: fitted to the shown panel every frame, up to the window's bottom (then it scrolls).
  ImGui::SetNextWindowSize(ImVec2(dock.width, 0.0f), ImGuiCond_Always);
  ImGui::SetNextWindowSizeConstraints(ImVec2(kMinDockWidth, 0.0f),
                                      ImVec2(maxWidth, std::max(display.y - top, 50.0f)));
  ImGui::SetNextWindowCollapsed(dock.collapsed, ImGuiCond_Always);
  const std::string title = names + (side == DockSide::Left ? "###left dock" : "###right dock");
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings;
  const bool expanded = ImGui::Begin(title.c_str(), nullptr, flags);
  dock.collapsed = ImGui::IsWindowCollapsed();
  if (expanded) {
    dock.width = ImGui::GetWindowWidth();
    if (ImGui::BeginTabBar("tabs", ImGuiTabBarFlags_FittingPolicyResizeDown)) {
      for (const PanelEntry* e : docked) {
        bool open = true;
        const bool select = reveal && static_cast<int>(e->id) == s.layout.reveal;
        ImGui::PushID(static_cast<int>(e->id));
        const int highlighted = pushHighlight(s, e->id);
        const bool shown =
            ImGui::BeginTabItem(e->title, &open, select ? ImGuiTabItemFlags_SetSelected : 0);
        ImGui::PopStyleColor(highlighted);
        placeMenu(s, e->id);
        if (shown) {
          dock.selected = static_cast<int>(e->id);
          e->draw(s, r, info);
          ImGui::EndTabItem();
        }
        ImGui::PopID();
        if (!open) s.panels.*e->open = false;
      }
      ImGui::EndTabBar();
    }
  }
  ImGui::End();
}

void drawFloating(AppState& s, FrameRequests& r, const UiInfo& info, const PanelEntry& e) {
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  // First placement only: the lesson at the bottom, in the middle (the docks stay visible
  // beside it); the others cascade.
  if (e.id == PanelId::Lesson) {
    ImGui::SetNextWindowPos(ImVec2(0.5f * display.x, display.y - 50.0f), ImGuiCond_FirstUseEver,
                            ImVec2(0.5f, 1.0f));
    ImGui::SetNextWindowSize(ImVec2(kLessonWidth, 0.0f), ImGuiCond_FirstUseEver);
  } else {
    const float cascade = 24.0f * static_cast<float>(indexOf(e.id));
    ImGui::SetNextWindowPos(ImVec2(0.3f * display.x + cascade, 0.1f * display.y + cascade),
                            ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowSize(ImVec2(kFloatingWidth, 0.0f), ImGuiCond_FirstUseEver);
  }
  if (static_cast<int>(e.id) == s.layout.reveal) ImGui::SetNextWindowFocus();
  bool open = true;
  const int highlighted = pushHighlight(s, e.id);
  const bool shown = ImGui::Begin(e.title, &open);
  ImGui::PopStyleColor(highlighted);
  if (shown) {
    ImGui::TextDisabled("right-click here to dock");
    placeMenu(s, e.id);
    e.draw(s, r, info);
  }
  ImGui::End();
  if (!open) s.panels.*e.open = false;
}

std::string withThousands(std::size_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

const char* panelTitle(PanelId id) { return panelTable()[indexOf(id)].title; }

bool& panelOpen(PanelsOpen& open, PanelId id) { return open.*panelTable()[indexOf(id)].open; }

void revealPanel(AppState& s, PanelId id) {
  panelOpen(s.panels, id) = true;
  s.layout.reveal = static_cast<int>(id);
}

void drawPanels(AppState& s, FrameRequests& r, const UiInfo& info) {
  const float top = ImGui::GetFrameHeight();  // below the menu bar
  drawDock(s, r, info, DockSide::Left, top);
  drawDock(s, r, info, DockSide::Right, top);
  for (const PanelEntry& e : panelTable()) {
    if (s.panels.*e.open && sideOf(s, e.id) == DockSide::Floating) drawFloating(s, r, info, e);
  }
  s.layout.reveal = -1;
}

void drawPanelsMenu(AppState& s) {
  for (const PanelEntry& e : panelTable()) {
    bool open = s.panels.*e.open;
    if (ImGui::MenuItem(e.title, nullptr, &open)) {
      if (open) {
        revealPanel(s, e.id);
      } else {
        s.panels.*e.open = false;
      }
    }
  }
  ImGui::Separator();
  ImGui::MenuItem("Presentation mode", "P", &s.layout.presentation);
  if (ImGui::MenuItem("Hide all", "H")) s.uiVisible = false;
  if (ImGui::MenuItem("Reset layout")) {
    s.layout = Layout{};
    s.panels = PanelsOpen{};
  }
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("the panels as on first start: docked at the edges, the right dock folded");
  }
}

void drawHud(const UiInfo& info) {
  ImGui::SetNextWindowPos(ImVec2(10.0f, 10.0f), ImGuiCond_Always);
  ImGui::SetNextWindowBgAlpha(0.35f);
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav;
  if (ImGui::Begin("##hud", nullptr, flags)) {
    if (info.session != nullptr) {
      const sim::Simulation& sim = info.session->simulation();
      ImGui::Text("N = %s   %.0f frames/s   t = %.3f", withThousands(sim.backend().size()).c_str(),
                  info.perf != nullptr ? info.perf->fps() : 0.0, sim.time());
    }
    ImGui::TextDisabled("P: panels");
  }
  ImGui::End();
}

}  // namespace bhviz::app
