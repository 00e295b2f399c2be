#pragma once
// Everything the window's user can change, in one place. The panels and the input edit an
// AppState and report what they changed in a FrameRequests; the main loop applies the requests
// (live parameters by value into the next step, structural ones by rebuilding the simulation at
// the top of the next frame). The simulation holds no pointer into this state.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "app/core/options.h"
#include "app/core/settings.h"
#include "app/core/view_options.h"
#include "app/scene/camera_follow.h"
#include "app/window/builder.h"
#include "render/renderer.h"
#include "sim/params.h"

namespace bhviz::app {

/// The tree overlay: the octree and groups of the last force evaluation (either backend).
struct OverlaySettings {
  bool cells = false;  ///< octree cells of levels [minLevel, maxLevel], coloured by level
  int minLevel = 2;
  int maxLevel = 6;
  bool groups = false;   ///< the walk groups of the last force evaluation
  bool domains = false;  ///< under mpirun: each rank's ORB domain
};

/// The Tree panel's statistics (app/window/panels_tree_stats.cpp).
struct TreeStatsSettings {
  bool logCounts = false;  ///< bar heights on a log scale of the counts
};

/// The Walk panel (app/walk_view.h): which view of the picked particle's walk is shown.
struct WalkPanelState {
  bool stepThrough = false;      ///< step through the build, then the walk (N ≤ kStepThroughMaxN)
  bool buildStage = true;        ///< stepping the tree build (else the walk)
  int level = 0;                 ///< build: cells of levels 0..level shown
  int step = 0;                  ///< walk: fronts 0..step shown
  std::int64_t selected = -1;    ///< a cell chosen in the panel's list; -1 = none
  std::int64_t hovered = -1;     ///< the cell under the cursor (list or scene) this frame
  std::int64_t sceneHover = -1;  ///< the listed cell nearest the cursor in the scene
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
  bool files = false;    ///< snapshots and recording (panels_files.cpp)
  bool camera = false;   ///< what the camera follows, bookmarks (panels_camera.cpp)
  bool lesson = false;   ///< the running lesson (panels_lesson.cpp)
  bool walk = false;     ///< the picked particle's walk (panels_walk.cpp)
  bool meter = true;     ///< Accuracy meter (live error, θ sweep)
  bool builder = false;  ///< the merger builder (panels_builder.cpp)
};

/// The panels, in the Panels menu's order (app/window/dock.cpp holds their titles and homes).
enum class PanelId : std::uint8_t {
  Simulation,
  Accuracy,
  TimeSteps,
  View,
  Files,
  Camera,
  Performance,
  Meter,
  Tree,
  Diagnostics,
  Walk,
  Lesson,
  Builder,
};
inline constexpr std::size_t kPanelCount = 13;

/// Where a panel is drawn: a tab of the dock at the window's left or right edge, or a window of
/// its own that the user places.
enum class DockSide : std::uint8_t { Left, Right, Floating };

/// One edge's dock: a window the height of its content, pinned to the edge, holding the panels
/// docked there as tabs.
struct DockState {
  float width = 330.0f;    ///< [pixels]; the user drags the inner edge
  bool collapsed = false;  ///< only its title bar (the tabs' names) is shown
  int selected = -1;       ///< the PanelId whose tab is shown; -1 = the first open one
};

/// How the panels are laid out; remembered between runs (app/window/layout_file.h). The
/// default leaves ≥ 70 % of a 1280×720 scene unobstructed (tests/test_window.cpp measures it).
struct Layout {
  std::array<DockSide, kPanelCount> side{
      DockSide::Left,  DockSide::Left,     DockSide::Left,  DockSide::Left,  DockSide::Left,
      DockSide::Left,  DockSide::Right,    DockSide::Right, DockSide::Right, DockSide::Right,
      DockSide::Right, DockSide::Floating, DockSide::Left};
  DockState left;
  DockState right{330.0f, true, -1};
  /// Presentation: no menu bar and no panels, a small HUD (N, frames/s, t); P toggles it.
  bool presentation = false;
  /// A panel to show at the next frame (its tab selected, its dock expanded); -1 = none.
  int reveal = -1;
  /// A panel a lesson points at: its tab drawn in the highlight colour; -1 = none.
  int highlight = -1;
};

/// The Files panel: snapshot load/save and recording of frames or a video.
struct FilesSettings {
  /// Load reads it (format from the content), Save writes it (format
  std::string snapshotPath = "bhviz-snapshot.tipsy";
  ///< from the extension)
  bool recordVideo = false;                ///< record a video (needs ffmpeg) instead of PNG frames
  std::string framesDir = "bhviz-frames";  ///< PNG frames: DIR/frame_000000.png, …
  std::string videoPath = "bhviz.mp4";     ///< the video (.mp4, .mkv or .mov)
  int every = 1;                           ///< record every K-th displayed frame [frames]
};

struct AppState {
  SceneSettings scene;        ///< of the running simulation; panels edit it and ask to rebuild
  sim::SimParams params;      ///< the physics; the live ones act at the next substep
  ViewSettings view;          ///< colouring and hidden components
  render::RenderParams look;  ///< sprites, exposure, bloom (sprites sized at each rebuild)
  float autoRotate = 0.0f;    ///< camera auto-rotation [rad/s]
  CameraMode camera;          ///< what the camera follows (--camera, --auto-frame)
  std::vector<CameraBookmark> bookmarks;  ///< saved views: B adds one, 1-9 fly to one
  OverlaySettings overlay;
  TreeStatsSettings treeStats;
  WalkPanelState walk;
  FrameBudget budget;
  bool uiVisible = true;  ///< H hides every panel
  PanelsOpen panels;
  Layout layout;
  FilesSettings files;
  MeterSettings meter;   ///< the live accuracy meter
  SweepSettings sweep;   ///< the window's θ sweep
  BuilderState builder;  ///< the merger builder's scenario, preview and save path
};

/// What one frame's input and panels asked for; applied by the main loop.
struct FrameRequests {
  /// scenario, N, seed or backend changed, or Reset: at the next frame's top
  bool rebuild = false;
  /// AppState::params edited (validated before it reaches the simulation)
  bool paramsChanged = false;
  bool viewChanged = false;  ///< colouring or visibility changed: new palette, recalibrated speeds
  bool togglePause = false;  ///< Space, the Play/Pause buttons
  bool singleStep = false;   ///< one substep (and pause)
  bool reframe = false;      ///< aim the camera at the scene again
  bool frameAfterRebuild = false;  ///< with rebuild: aim the camera at the new scene
  bool screenshot = false;         ///< F12
  bool quit = false;               ///< Esc
  bool loadSnapshot = false;     ///< Files: replace the simulation by AppState::files.snapshotPath
  bool saveSnapshot = false;     ///< Files: write the current state to AppState::files.snapshotPath
  bool toggleRecording = false;  ///< Files: start recording (as AppState::files says) or stop
  bool pick = false;             ///< a left click without a drag in the scene: pick at pickAt
  float pickAtX = 0.0f, pickAtY = 0.0f;  ///< [framebuffer pixels from the top-left]
  bool cursorInScene = false;            ///< the cursor is over the scene, at cursorX, cursorY
  float cursorX = 0.0f, cursorY = 0.0f;  ///< [framebuffer pixels from the top-left]
  bool refreshWalk = false;  ///< the Walk panel's Refresh: the same particle, current state
  bool clearWalk = false;    ///< the Walk panel's Clear
  bool startSweep = false;   ///< run AppState::sweep on the current state (pauses the simulation)
  bool cancelSweep = false;
  bool exportSweep = false;    ///< write the sweep's points to AppState::sweep.csvPath
  bool addBookmark = false;    ///< B, the Camera panel: keep the current view
  int flyTo = -1;              ///< 1-9, the Camera panel: fly to this bookmark (an index)
  int startLesson = -1;        ///< the Lessons menu: start lessons()[k]
  int lessonStep = -1;         ///< the Lesson panel's Back and Next: enter this step
  bool measureLesson = false;  ///< the Lesson panel: measure the step's question now
  bool endLesson = false;      ///< the Lesson panel: leave the lesson
  int rewindTo = -1;           ///< the Simulation panel's rewind bar: go back to kept state k
};

/// The state a window starts from: the command line's scene, parameters and picture options.
/// `n` is the particle count already chosen for the backend.
AppState initialState(const Options& options, std::size_t n);

}  // namespace bhviz::app
