#pragma once
// The Dear ImGui panels, one function each, drawing the panel's contents into the current window
// (app/window/dock.h puts it in a dock's tab or a window of its own). A panel edits the AppState
// and says what it changed in the FrameRequests; it reads the running simulation through UiInfo
// and changes nothing in it directly. Timings shown are the previous frames' (PerfHistory), never
// waited for.

#include <string>

#include "app/core/accuracy_meter.h"
#include "app/core/perf_history.h"
#include "app/core/rewind.h"
#include "app/core/sim_session.h"
#include "app/core/sweep_runner.h"
#include "app/scene/walk_view.h"
#include "app/window/app_state.h"
#include "app/window/lesson_player.h"
#include "app/window/tree_stats_view.h"

namespace bhviz::app {

/// Facts the panels show; `session` is null while no simulation runs (a failed rebuild).
struct UiInfo {
  const SimSession* session = nullptr;
  const PerfHistory* perf = nullptr;
  bool cudaBuilt = false;  ///< the CUDA backend is in this build
  std::string vertexPath;  ///< how the vertex buffer is written
  std::string glDescription;
  std::size_t overlayBoxes = 0;          ///< boxes drawn by the tree overlay
  const char* overlayPath = "";          ///< how they were made (OverlayWriter::path)
  std::string notice;                    ///< the latest error or note, shown until dismissed
  bool ffmpegFound = false;              ///< video recording is possible
  bool recording = false;                ///< the Record button is on
  int recordedFrames = 0;                ///< frames written by the current (or last) recording
  std::string recordTarget;              ///< its directory or video file
  const WalkInspection* walk = nullptr;  ///< the picked particle's walk (Walk panel)
  const AccuracyMeter* meter = nullptr;  ///< the live accuracy meter
  const SweepRunner* sweep = nullptr;    ///< the window's θ sweep
  const LessonPlayer* lesson = nullptr;  ///< the running lesson, if any
  const StateRing* ring = nullptr;       ///< the kept states (rewind)
  /// The Tree panel's statistics, fetched while it is open.
  const TreeStatsView* treeStats = nullptr;
  /// Under mpirun: each rank's report after the last frame's steps (empty for one process).
  std::vector<sim::RankReport> ranks;
};

void drawMenuBar(AppState& s, FrameRequests& r, const UiInfo& info);
void drawSimulationPanel(AppState& s, FrameRequests& r, const UiInfo& info);
void drawAccuracyPanel(AppState& s, FrameRequests& r, const UiInfo& info);
void drawTimeStepsPanel(AppState& s, FrameRequests& r, const UiInfo& info);
void drawPerformancePanel(const UiInfo& info);
void drawTreePanel(AppState& s, const UiInfo& info);
/// The Tree panel's histograms (panels_tree_stats.cpp), contents only; `ranks`: of a
/// distributed run (0 or 1: one process).
void drawTreeStatistics(const TreeStatsView& v, TreeStatsSettings& settings, std::size_t ranks);
void drawDiagnosticsPanel(const UiInfo& info);
void drawViewPanel(AppState& s, FrameRequests& r, const UiInfo& info);
void drawHelpWindow(AppState& s, const UiInfo& info);
void drawFilesPanel(AppState& s, FrameRequests& r, const UiInfo& info);
/// What the camera follows, auto-framing, bookmarks (panels_camera.cpp).
void drawCameraPanel(AppState& s, FrameRequests& r, const UiInfo& info);
/// The running lesson's step, its question and measured answer (panels_lesson.cpp).
void drawLessonPanel(AppState& s, FrameRequests& r, const UiInfo& info);
/// The menu bar's Lessons menu.
void drawLessonsMenu(FrameRequests& r);
void drawWalkPanel(AppState& s, FrameRequests& r, const UiInfo& info);
/// Live error of the forces (median, p99, history) and the θ sweep with its plot and CSV export.
void drawAccuracyMeterPanel(AppState& s, FrameRequests& r, const UiInfo& info);
/// Two galaxies and their orbit as a scenario: preview, Run, Reset, Save as
/// (panels_builder.cpp, app/window/builder.h).
void drawBuilderPanel(AppState& s, FrameRequests& r, const UiInfo& info);
/// The notice line at the bottom; returns true when the user dismissed it.
bool drawNotice(const UiInfo& info);

/// A text field editing a path (up to 1023 characters); true when it changed.
bool pathField(const char* label, std::string& value);

/// Every open panel (nothing while the UI is hidden, but the notice).
/// Returns true when the notice was dismissed.
bool drawUi(AppState& s, FrameRequests& r, const UiInfo& info);

}  // namespace bhviz::app
