#pragma once
// The window's main loop as a class: app/window/window_app.cpp has its start, rebuild and frame,
// app/window/window_tools.cpp the tools beside them (files and recording, the accuracy meter
// and sweep, the camera, lessons and the layout's coverage measure). Private to app/window/.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <ostream>

#include "app/core/accuracy_meter.h"
#include "app/core/backend_select.h"
#include "app/core/cli.h"
#include "app/core/perf_history.h"
#include "app/core/sim_session.h"
#include "app/core/sweep.h"
#include "app/core/sweep_runner.h"
#include "app/scene/frames.h"
#include "app/scene/gl_query.h"
#include "app/scene/particle_view.h"
#include "app/scene/scenario_camera.h"
#include "app/scene/scene_pipeline.h"
#include "app/scene/walk_view.h"
#include "app/window/app_state.h"
#include "app/window/builder.h"
#include "app/window/dock.h"
#include "app/window/input.h"
#include "app/window/layout_file.h"
#include "app/window/panels.h"
#include "app/window/recording.h"
#include "app/window/screenshot.h"
#include "app/window/window.h"
#include "render/renderer.h"

namespace bhviz::app::detail {

using Clock = std::chrono::steady_clock;

class WindowApp {
 public:
  WindowApp(const Options& options, std::ostream& out, std::ostream& err)
      : m_options(options),
        m_out(out),
        m_err(err),
        m_window(options.frames.width, options.frames.height, "bhviz"),
        m_scene(ViewSettings{}) {}

  int run();

 private:
  void start();
  void rebuild();
  /// The session of m_state's scene and parameters, its potentials on demand (the Diagnostics
  /// panel samples every few seconds; the other frames' steps need none).
  std::unique_ptr<SimSession> newSession() const;
  void frame(Clock::time_point frameStart);
  void applyRequests(const FrameRequests& r);
  void applyView();
  void advance(const FrameRequests& r, FrameRecord& record);
  void updateOverlay();
  void updateWalk(const FrameRequests& r);
  void inspectParticle(std::uint32_t id);
  void checkGl();
  void screenshot(const std::string& path);
  void applyFileRequests(const FrameRequests& r);
  void startRecording();
  void stopRecording();
  void recordFrame();
  void note(const std::string& line);
  /// Ends the substep the session left running (SimSession::settle) and notes a halt found
  /// there or since the last frame: before the session goes (a rebuild, the end of the run).
  void settleAndReport();
  void startCameraScript();
  UiInfo uiInfo() const;
  void updateAccuracy();
  void startSweep();
  void stopSweep();
  void exportSweep();
  void measureCoverage(const render::Image& scene, const render::RenderTarget& target);
  void updateCamera();
  void applyLessonRequests(FrameRequests& r);
  void applyCameraRequests(const FrameRequests& r, const render::Camera& before);

  Options m_options;
  std::ostream& m_out;
  std::ostream& m_err;
  Window m_window;                             // first: the GL context outlives everything below
  ScenePipeline m_scene;                       // needs the context
  std::unique_ptr<GlTimerRing> m_renderTimer;  // the scene's GPU time; null: no timer queries
  AppState m_state;
  std::unique_ptr<LayoutFile> m_layout;  // after m_state: it reads and writes it
  std::unique_ptr<SimSession> m_session;
  PerfHistory m_perf;
  std::string m_notice;
  bool m_rebuildPending = false;
  bool m_screenshotPending = false;
  bool m_quit = false;
  int m_glErrors = 0;
  std::size_t m_overlayBoxes = 0;
  std::string m_ffmpeg = findFfmpeg().value_or("");  // empty: no video recording
  WindowRecorder m_recorder;
  bool m_aimAfterRebuild = false;    // a loaded snapshot: frame its particles
  bool m_frameAfterRebuild = false;  // the merger builder's Run: frame the new scene
  WalkInspection m_walk;             // the picked particle's walk (Walk panel)
  AccuracyMeter m_meter;  // their jobs run on copies of the state, on scratch backends of their own
  SweepRunner m_sweep;
  TreeStatsFeed m_treeStats;  // the Tree panel's statistics, fetched while it is open
  bool m_pausedBeforeSweep = false;
  // The scenario's scripted camera: followed until the mouse moves the camera, again after R.
  render::CameraScript m_script;
  bool m_scripted = false;
  float m_framedDistance = 1.0f;  // the aimed camera's distance; the script's are relative to it
  AimSampler m_aim{kAimResampleSeconds};  // the Camera panel's follow and auto-frame
  CameraFollower m_follower{false};
  float m_frameSeconds = 0.0f;  // wall-clock since the last frame [s]
  LessonPlayer m_lessons;
  StateRing m_ring;  // rewind: the kept states of this simulation
  // BHVIZ_UI_COVERAGE=FILE: the last frame of a --quit-after run, panels and all, is written
  // to FILE and the share of the scene they leave unobstructed is printed (the layout test).
  std::string m_coveragePath;
  bool m_measureCoverage = false;
};

inline bool cameraMoved(const render::Camera& a, const render::Camera& b) {
  return a.yaw != b.yaw || a.pitch != b.pitch || a.distance != b.distance || a.target != b.target;
}

}  // namespace bhviz::app::detail
