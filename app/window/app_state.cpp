#include "app/window/app_state.h"

#include "app/scene/frames.h"

namespace bhviz::app {

AppState initialState(const Options& o, std::size_t n) {
  AppState s;
  s.scene.scenario = o.scenario;
  s.scene.n = n;
  s.scene.seed = o.seed;
  s.scene.backend = o.backend;
  s.scene.rebalance = o.rebalance;
  s.scene.snapshotPath = o.loadPath;
  if (!o.loadPath.empty()) s.files.snapshotPath = o.loadPath;
  s.params = o.params;
  s.view.colorBy = o.frames.colorBy;
  s.view.visible[static_cast<std::size_t>(sim::Component::Halo)] = o.frames.showHalo;
  s.view.maxBinDepth = o.params.maxBinDepth;
  s.look = sceneRenderParams();
  applyLookOptions(s.look, o.frames);
  s.overlay.cells = o.frames.overlay == OverlayKind::Tree;
  s.overlay.groups = o.frames.overlay == OverlayKind::Groups;
  s.overlay.domains = o.frames.overlay == OverlayKind::Domains;
  s.overlay.minLevel = o.frames.overlayMinLevel;
  s.overlay.maxLevel = o.frames.overlayMaxLevel;
  s.camera = o.frames.camera;
  // One dtMax interval per frame: a merger's shared step of 1/64 plays at a calm pace.
  s.budget.simTimePerFrame = o.params.dtMax;
  return s;
}

}  // namespace bhviz::app
