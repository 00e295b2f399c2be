#pragma once
// The Dear ImGui panels, one function each. A panel edits the AppState and says what it changed
// in the FrameRequests; it reads the running simulation through UiInfo and changes nothing in
// it directly. Timings shown are the previous frames' (PerfHistory), never waited for.

#include <string>

#include "app/core/accuracy_meter.h"
#include "app/core/perf_history.h"
#include "app/core/sim_session.h"
#include "app/core/sweep_runner.h"
#include "app/scene/walk_view.h"
#include "app/window/app_state.h"

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
  /// Under mpirun: each rank's report after the last frame's steps (empty for one process).
  std::vector<sim::RankReport> ranks;
};

void drawMenuBar(AppState& s, FrameRequests& r, const UiInfo& info);
void drawSimulationPanel(AppState& s, FrameRequests& r, const UiInfo& info);
void drawAccuracyPanel(AppState& s, FrameRequests& r, const UiInfo& info);
void drawTimeStepsPanel(AppState& s, FrameRequests& r, const UiInfo& info);
void drawPerformancePanel(AppState& s, const UiInfo& info);
void drawTreePanel(AppState& s, const UiInfo& info);
void drawDiagnosticsPanel(AppState& s, const UiInfo& info);
void drawViewPanel(AppState& s, FrameRequests& r, const UiInfo& info);
void drawHelpWindow(AppState& s, const UiInfo& info);
void drawFilesPanel(AppState& s, FrameRequests& r, const UiInfo& info);
void drawWalkPanel(AppState& s, FrameRequests& r, const UiInfo& info);
/// Live error of the forces (median, p99, history) and the θ sweep with its plot and CSV export.
void drawAccuracyMeterPanel(AppState& s, FrameRequests& r, const UiInfo& info);
/// The notice line at the bottom; returns true when the user dismissed it.
bool drawNotice(const UiInfo& info);

/// A text field editing a path (up to 1023 characters); true when it changed.
bool pathField(const char* label, std::string& value);

/// Every open panel (nothing while the UI is hidden, but the notice).
/// Returns true when the notice was dismissed.
bool drawUi(AppState& s, FrameRequests& r, const UiInfo& info);

}  // namespace bhviz::app
