#pragma once
// Where the panels are drawn (AppState::layout): as tabs of a dock pinned to the window's left or
// right edge, each dock as tall as its shown panel and collapsible to its title bar, or as
// windows of their own. A tab's right-click menu moves it; the Panels menu opens, closes and
// resets. Presentation mode draws none of it, only a small HUD.

#include "app/window/app_state.h"
#include "app/window/panels.h"

namespace bhviz::app {

/// A panel's title: its tab, its window and its name in the layout file.
const char* panelTitle(PanelId id);
/// The panel's open flag in `open`.
bool& panelOpen(PanelsOpen& open, PanelId id);
/// Opens the panel and shows it at the next frame: its tab selected and its dock expanded, or
/// its window brought to the front.
void revealPanel(AppState& s, PanelId id);
/// Every open panel in its dock or window.
void drawPanels(AppState& s, FrameRequests& r, const UiInfo& info);
/// The Panels menu's entries: one per panel, presentation mode, hide all, reset layout.
void drawPanelsMenu(AppState& s);
/// Presentation mode's HUD in the top-left corner: N, frames per second, simulation time.
void drawHud(const UiInfo& info);

}  // namespace bhviz::app
