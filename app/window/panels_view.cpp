// Panels about what is drawn: Tree overlay, View (colours, look, camera), Help, the notice line,
// the menu bar, and drawUi that draws the menu bar and the panels (app/window/dock.h places them).
#include <imgui.h>

#include <algorithm>

#include "app/window/dock.h"
#include "app/window/input.h"
#include "app/window/panels.h"
#include "sim/common/keys.h"

namespace bhviz::app {

void drawMenuBar(AppState& s, FrameRequests& r, const UiInfo& info) {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("Panels")) {
    drawPanelsMenu(s);
    ImGui::EndMenu();
  }
  drawLessonsMenu(r);
  const bool paused = info.session != nullptr && info.session->paused();
  if (ImGui::MenuItem(paused ? "Play" : "Pause")) r.togglePause = true;
  if (ImGui::MenuItem("Screenshot")) r.screenshot = true;
  if (ImGui::MenuItem("Help")) s.panels.help = !s.panels.help;
  ImGui::EndMainMenuBar();
}

void drawTreePanel(AppState& s, const UiInfo& info) {
  if (info.session != nullptr) {
    const sim::TreeCensus t = info.session->simulation().backend().treeCensus();
    ImGui::Text("%zu cells, depth %d, %zu groups", t.cells, t.levels, t.groups);
  }
  ImGui::Checkbox("cells", &s.overlay.cells);
  ImGui::SameLine();
  ImGui::Checkbox("groups", &s.overlay.groups);
  if (!info.ranks.empty()) {
    ImGui::SameLine();
    ImGui::Checkbox("domains", &s.overlay.domains);
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("each rank's ORB domain, coloured by rank (cells and groups: rank 0's)");
    }
  }
  if (ImGui::DragIntRange2("levels", &s.overlay.minLevel, &s.overlay.maxLevel, 0.1f, 0,
                           sim::kMaxLevel)) {
    s.overlay.minLevel = std::clamp(s.overlay.minLevel, 0, sim::kMaxLevel);
    s.overlay.maxLevel = std::clamp(s.overlay.maxLevel, s.overlay.minLevel, sim::kMaxLevel);
  }
  ImGui::Text("%zu boxes drawn (made on the %s)", info.overlayBoxes, info.overlayPath);
  if (info.treeStats != nullptr) {
    drawTreeStatistics(*info.treeStats, s.treeStats, info.ranks.size());
  }
}

namespace {

// Dust and depth of field (--dust, --dof, --focus on the command line).
void drawDemoLook(render::RenderParams& look) {
  ImGui::Checkbox("dust", &look.extinction.enabled);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("Half the disk particles carry dust, which dims the stars behind it");
  }
  if (look.extinction.enabled) {
    ImGui::SameLine();
    ImGui::SliderFloat("opacity", &look.extinction.strength, 0.05f, 10.0f, "%.2f",
                       ImGuiSliderFlags_Logarithmic);
  }
  ImGui::Checkbox("depth of field", &look.depthOfField.enabled);
  if (look.depthOfField.enabled) {
    ImGui::SliderFloat("aperture", &look.depthOfField.aperture, 0.005f, 0.5f, "%.3f",
                       ImGuiSliderFlags_Logarithmic);
    ImGui::SliderFloat("focus", &look.depthOfField.focus, 0.5f, 2.0f, "%.2f x target");
  }
}

}  // namespace

void drawViewPanel(AppState& s, FrameRequests& r, const UiInfo&) {
  // In ColorBy's order.
  const char* colours[] = {"component", "speed", "bin", "force error", "population"};
  int colour = static_cast<int>(s.view.colorBy);
  if (ImGui::Combo("colour by", &colour, colours, IM_ARRAYSIZE(colours))) {
    s.view.colorBy = static_cast<ColorBy>(colour);
    r.viewChanged = true;
  }
  if (s.view.colorBy == ColorBy::ForceError) {
    ImGui::TextDisabled("accuracy meter's sample: blue 1e-6 .. red 1e-1 (log), grey not measured");
  }
  const char* names[] = {"sphere", "disk", "bulge", "halo"};
  for (std::size_t c = 0; c < s.view.visible.size(); ++c) {
    if (c > 0) ImGui::SameLine();
    bool v = s.view.visible[c];
    if (ImGui::Checkbox(names[c], &v)) {
      s.view.visible[c] = v;
      r.viewChanged = true;
    }
  }
  render::RenderParams& look = s.look;
  ImGui::SliderFloat("exposure", &look.tone.exposure, 0.05f, 20.0f, "%.2f",
                     ImGuiSliderFlags_Logarithmic);
  ImGui::SliderFloat("bloom", &look.tone.bloomStrength, 0.0f, 2.0f, "%.2f");
  ImGui::SliderFloat("sprite size", &look.particles.spriteSize, 1e-4f, 1.0f, "%.4f",
                     ImGuiSliderFlags_Logarithmic);
  ImGui::SliderFloat("brightness", &look.particles.brightness, 1e-5f, 10.0f, "%.5f",
                     ImGuiSliderFlags_Logarithmic);
  int pass = look.spritePass == render::SpritePass::Compute ? 0 : 1;
  if (ImGui::Combo("sprites", &pass, "compute splat\0rasteriser\0")) {
    look.spritePass = pass == 0 ? render::SpritePass::Compute : render::SpritePass::Raster;
  }
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "The same picture either way. The compute splat is ~9x faster on an H200\n"
        "(little raster hardware); the rasteriser may win on a graphics GPU.");
  }
  drawDemoLook(look);
  ImGui::SliderFloat("auto-rotate", &s.autoRotate, -1.0f, 1.0f, "%.2f rad/s");
  if (ImGui::Button("Frame the scene")) r.reframe = true;
}

void drawHelpWindow(AppState& s, const UiInfo& info) {
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowPos(ImVec2(display.x * 0.5f, display.y * 0.5f), ImGuiCond_FirstUseEver,
                          ImVec2(0.5f, 0.5f));
  if (!ImGui::Begin("Help", &s.panels.help, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::End();
    return;
  }
  if (ImGui::BeginTable("controls", 2, ImGuiTableFlags_RowBg)) {
    for (const KeyHelp& k : controls()) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextUnformatted(k.keys.data(), k.keys.data() + k.keys.size());
      ImGui::TableSetColumnIndex(1);
      ImGui::TextUnformatted(k.action.data(), k.action.data() + k.action.size());
    }
    ImGui::EndTable();
  }
  ImGui::Separator();
  ImGui::TextDisabled("%s", info.glDescription.c_str());
  ImGui::TextDisabled("vertex buffer: %s", info.vertexPath.c_str());
  ImGui::End();
}

bool drawNotice(const UiInfo& info) {
  if (info.notice.empty()) return false;
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowPos(ImVec2(10.0f, display.y - 10.0f), ImGuiCond_Always, ImVec2(0.0f, 1.0f));
  ImGui::SetNextWindowSizeConstraints(ImVec2(200.0f, 0.0f), ImVec2(display.x - 20.0f, 200.0f));
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_AlwaysAutoResize |
                                 ImGuiWindowFlags_NoSavedSettings;
  bool dismissed = false;
  if (ImGui::Begin("##notice", nullptr, flags)) {
    ImGui::PushTextWrapPos(display.x - 120.0f);
    ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1.0f), "%s", info.notice.c_str());
    ImGui::PopTextWrapPos();
    ImGui::SameLine();
    dismissed = ImGui::SmallButton("dismiss");
  }
  ImGui::End();
  return dismissed;
}

bool drawUi(AppState& s, FrameRequests& r, const UiInfo& info) {
  if (s.uiVisible && s.layout.presentation) {
    drawHud(info);
  } else if (s.uiVisible) {
    drawMenuBar(s, r, info);
    drawPanels(s, r, info);
  }
  if (s.panels.help) drawHelpWindow(s, info);
  return drawNotice(info);
}

}  // namespace bhviz::app
