#pragma once
// Everything the window's user can change, in one place. The panels and the input edit an
// AppState and report what they changed in a FrameRequests; the main loop applies the requests
// (live parameters by value into the next step, structural ones by rebuilding the simulation at
// the top of the next frame). The simulation holds no pointer into this state.

#include <cstddef>
#include <cstdint>
#include <string>

#include "app/cli.h"
#include "app/particle_view.h"
#include "render/renderer.h"
#include "sim/params.h"

namespace bhviz::app {

/// What a simulation is built from: changing any of these rebuilds it.
struct SceneSettings {
  std::string scenario = "merger";              ///< a name from sim::scenarios(), or a scenario file's path
  std::size_t n = 20000;                        ///< particles [1]
  std::uint64_t seed = 1;                       ///< initial-condition seed
  BackendChoice backend = BackendChoice::Auto;  ///< cpu, cuda or auto
};

/// How far the simulation moves per displayed frame.
struct FrameBudget {
  enum class Mode { SimTime, Substeps };
  Mode mode = Mode::SimTime;
  float simTimePerFrame = 1.0f / 64.0f;  ///< [time]; SimTime mode
  int substepsPerFrame = 1;              ///< Substeps mode [1]
  float maxWallMs = 60.0f;  ///< stop substepping once a frame has spent this long on it [ms]
};

/// The tree overlay (the CPU backend's tree and groups).
struct OverlaySettings {
  bool cells = false;   ///< octree cells of levels [minLevel, maxLevel], coloured by level
  int minLevel = 2;
  int maxLevel = 6;
  bool groups = false;  ///< the walk groups of the last force evaluation
};

struct PanelsOpen {
  bool simulation = true;
  bool accuracy = true;
  bool timeSteps = false;
  bool performance = true;
  bool tree = false;
  bool diagnostics = false;
  bool view = false;
  bool help = false;
};

struct AppState {
  SceneSettings scene;        ///< of the running simulation; panels edit it and ask to rebuild
  sim::SimParams params;      ///< the physics; the live ones act at the next substep
  ViewSettings view;          ///< colouring and hidden components
  render::RenderParams look;  ///< sprites, exposure, bloom (sprites sized at each rebuild)
  float autoRotate = 0.0f;    ///< camera auto-rotation [rad/s]
  OverlaySettings overlay;
  FrameBudget budget;
  bool paused = false;
  bool uiVisible = true;      ///< H hides every panel
  PanelsOpen panels;
};

/// What one frame's input and panels asked for; applied by the main loop.
struct FrameRequests {
  bool rebuild = false;       ///< scenario, N, seed or backend changed, or Reset: at the next frame's top
  bool paramsChanged = false; ///< AppState::params edited (validated before it reaches the simulation)
  bool viewChanged = false;   ///< colouring or visibility changed: new palette, recalibrated speeds
  bool singleStep = false;    ///< one substep while paused
  bool reframe = false;       ///< aim the camera at the scene again
  bool screenshot = false;    ///< F12
  bool quit = false;          ///< Esc
};

/// The state a window starts from: the command line's scene, parameters and picture options.
/// `n` is the particle count already chosen for the backend.
AppState initialState(const Options& options, std::size_t n);

}  // namespace bhviz::app
