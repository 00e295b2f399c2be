#include "app/window/window_app.h"

#include <chrono>
#include <cstdlib>

#include "app/window/window_app_impl.h"

namespace bhviz::app {

namespace {

using detail::Clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

bool envFlag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' && v[0] != '0';
}

}  // namespace

namespace detail {

void WindowApp::note(const std::string& line) {
  m_out << line << '\n' << std::flush;
  m_notice = line;
}

void WindowApp::settleAndReport() {
  if (!m_session) return;
  m_session->settle();
  if (const std::string line = m_session->takeNotice(); !line.empty()) note(line);
}

// The first simulation: N from the backend when --n was not given. Errors here end the run.
std::unique_ptr<SimSession> WindowApp::newSession() const {
  auto session = std::make_unique<SimSession>(m_state.scene, m_state.params);
  session->setPotentialOnDemand(true);
  session->setOverlap(true);  // the CPU prepares the next frame while the device steps
  return session;
}

void WindowApp::start() {
  std::size_t n = m_options.n;
  {
    const BackendSelection probe =
        selectBackend(m_options.backend, m_options.nGiven ? n : kWindowParticlesProbe);
    requireWithinLimits(m_options.params, *probe.backend);  // exit 2 before the window works
    // A backend that steps a large N interactively says so; else the scenario's own count
    // (m_options.n; 20000 for the first four built-ins).
    const std::size_t interactive = probe.backend->traits().interactiveParticles;
    if (!m_options.nGiven) n = interactive > 0 ? interactive : m_options.n;
  }
  m_state = initialState(m_options, n);
  m_layout = std::make_unique<LayoutFile>(m_state, layoutFilePath());
  if (const std::string line = m_layout->load(); !line.empty()) note(line);
  try {
    m_renderTimer = std::make_unique<GlTimerRing>(Window::glProcAddress());
  } catch (const render::GlError& e) {
    m_out << "bhviz: no GPU render time in the Performance panel (" << e.what() << ")\n";
  }
  if (envFlag("BHVIZ_UI_ALL_PANELS")) {
    m_state.panels = PanelsOpen{true, true, true, true, true, true, true, true};
    m_state.panels.files = m_state.panels.camera = true;
    m_state.overlay.cells = m_state.overlay.groups = true;
    m_state.panels.walk = m_state.panels.builder = true;
    m_state.layout.side.fill(DockSide::Floating);  // each in a window of its own: all drawn
  }
  if (!m_options.lesson.empty()) {  // --lesson: its first step's scene and settings
    FrameRequests lesson;
    if (m_options.nGiven) m_lessons.overrideN(m_options.n);
    m_lessons.start(findLesson(m_options.lesson), m_state, lesson);
  }
  m_session = newSession();
  m_state.scene = m_session->scene();  // --load: the file's N
  m_ring.update(m_session->simulation());
  if (!m_session->backendNote().empty()) m_out << m_session->backendNote() << '\n';
  for (const std::string& line : m_session->notes()) note("bhviz: note: " + line);
  applyView();
  const render::RenderTarget t = m_window.target();
  const Framing framing = frameVisible(m_session->initial(), m_state.view);
  aimCamera(m_scene.camera(), framing, t.height > 0 ? float(t.width) / float(t.height) : 1.0f);
  startCameraScript();
  m_state.look.particles = particleStyleFor(framing.visible, framing.radius);
  if (envFlag("BHVIZ_UI_SWEEP")) startSweep();  // the window tests draw the sweep plot
  m_out << "bhviz: window " << t.width << "x" << t.height << ", "
        << (m_state.scene.snapshotPath.empty() ? m_state.scene.scenario
                                               : "file " + m_state.scene.snapshotPath)
        << ", N = " << m_state.scene.n << ", " << m_session->simulation().backend().name()
        << " backend; " << m_window.glDescription() << '\n'
        << std::flush;
  // --video: record from the first frame, or say why not (the window still opens).
  if (!m_options.frames.videoPath.empty()) {
    m_state.files.videoPath = m_options.frames.videoPath;
    m_state.files.every = m_options.frames.every;
    if (m_ffmpeg.empty()) {
      note("bhviz: " + ffmpegMissingMessage());
    } else {
      m_state.files.recordVideo = true;
      startRecording();
    }
  }
  if (m_options.frames.pickId >= 0) {
    const auto id = static_cast<std::uint32_t>(m_options.frames.pickId);
    if (id >= m_state.scene.n) {
      throw UsageError("--pick = " + std::to_string(id) + " is out of range: must be in [0, " +
                       std::to_string(m_state.scene.n - 1) +
                       "] (N = " + std::to_string(m_state.scene.n) + ")");
    }
    inspectParticle(id);
  }
}

// The pick's walk on a CPU tree of the current state; the simulation pauses so that the boxes
// stay on the particles (Play resumes, the panel's Refresh rebuilds from the state then).
void WindowApp::inspectParticle(std::uint32_t id) {
  if (!m_session || !m_session->settle()) return;
  const sim::Simulation& sim = m_session->simulation();
  try {
    m_walk.inspect(sim.particles(), sim.params(), id, sim.time());
  } catch (const std::out_of_range& e) {
    note(std::string("bhviz: pick: ") + e.what());
    return;
  }
  m_session->setPaused(true);
  revealPanel(m_state, PanelId::Walk);
  m_state.walk.selected = m_state.walk.hovered = m_state.walk.sceneHover = -1;
  m_state.walk.step = 0;
  m_out << "bhviz: " << m_walk.summary() << '\n' << std::flush;
}

void WindowApp::updateWalk(const FrameRequests& r) {
  const render::RenderTarget t = m_window.target();
  const float w = static_cast<float>(std::max(t.width, 1));
  const float h = static_cast<float>(std::max(t.height, 1));
  if (r.clearWalk) m_walk.clear();
  if (r.refreshWalk && m_walk.active()) inspectParticle(m_walk.particleId());
  if (r.pick && m_session && m_session->settle()) {
    const sim::Particles p = m_session->simulation().particles();
    const auto picked =
        pickParticle(p, m_state.view, m_scene.camera(), w, h, {r.pickAtX, r.pickAtY});
    if (picked) inspectParticle(p.id[*picked]);
  }
  m_state.walk.sceneHover =
      r.cursorInScene ? m_walk.cellNear(m_scene.camera(), w, h, {r.cursorX, r.cursorY}) : -1;
}

// A rebuild asked for by the UI: on failure the old simulation keeps running.
void WindowApp::rebuild() {
  m_rebuildPending = false;
  // The meter's and the sweep's scratch backends go first, so that the new simulation has
  // their (device) memory; the running one stays until the new one is built.
  stopSweep();
  m_meter.reset();
  settleAndReport();  // a halt found in the running substep is said before the session goes
  try {
    std::unique_ptr<SimSession> session = newSession();
    if (m_session) session->setPaused(m_session->paused() && !m_session->halted());
    m_session = std::move(session);
    m_state.scene = m_session->scene();  // a snapshot sets N
    m_perf.clear();
    applyView();
    const Framing framing = frameVisible(m_session->initial(), m_state.view);
    m_state.look.particles = particleStyleFor(framing.visible, framing.radius);
    m_notice = m_session->backendNote();
    // A loaded snapshot, or a scripted scenario starting on its path: aim at what is there.
    if (m_aimAfterRebuild || m_frameAfterRebuild || !m_session->spec().camera.keys.empty()) {
      const render::RenderTarget t = m_window.target();
      aimCamera(m_scene.camera(), framing, t.height > 0 ? float(t.width) / float(t.height) : 1.0f);
    }
    if (m_aimAfterRebuild) {
      note("bhviz: loaded " + m_state.scene.snapshotPath +
           ": N = " + std::to_string(m_state.scene.n) +
           ", t = " + std::to_string(m_session->simulation().time()));
      for (const std::string& line : m_session->notes()) note("bhviz: note: " + line);
    }
    m_walk.clear();  // of the old simulation
    m_follower.reset();
    m_ring.clear();
    m_ring.update(m_session->simulation());  // the start, to rewind to
    m_treeStats.reset();
    startCameraScript();
  } catch (const std::exception& e) {
    note(m_state.scene.snapshotPath.empty()
             ? "bhviz: cannot build " + m_state.scene.scenario +
                   " with N = " + std::to_string(m_state.scene.n) + ": " + oneLine(e.what())
             : "bhviz: cannot load: " + oneLine(e.what()));
    if (m_session) m_state.scene = m_session->scene();
  }
  m_aimAfterRebuild = m_frameAfterRebuild = false;
}

// After the camera was aimed at a new simulation: its scenario's script takes the camera.
void WindowApp::startCameraScript() {
  m_script = cameraScript(m_session->spec().camera);
  m_scripted = !m_script.keys.empty();
  m_framedDistance = m_scene.camera().distance;
  if (m_script.autoRotate != 0.0f) m_state.autoRotate = m_script.autoRotate;
}

void WindowApp::applyView() {
  m_scene.setView(m_state.view, m_session ? m_session->initial() : sim::Particles{});
  m_scene.setErrors(m_meter.latest() != nullptr ? m_meter.latest()->errorById : nullptr);
}

void WindowApp::applyRequests(const FrameRequests& r) {
  if (r.rebuild) m_rebuildPending = true;  // at the top of the next frame
  if (r.rebuild && r.frameAfterRebuild) m_frameAfterRebuild = true;
  if (r.paramsChanged && m_session) {
    const std::string refused = m_session->applyParams(m_state.params);
    if (!refused.empty()) {
      note(refused);
      m_state.params = m_session->simulation().params();
    }
  }
  if (r.viewChanged) applyView();
  if (r.reframe && m_session && m_session->settle()) {
    const render::RenderTarget t = m_window.target();
    aimCamera(m_scene.camera(), frameVisible(m_session->simulation().particles(), m_state.view),
              t.height > 0 ? float(t.width) / float(t.height) : 1.0f);
  }
  if (r.screenshot) m_screenshotPending = true;
  if (r.quit) m_quit = true;
  applyFileRequests(r);
  if (r.rewindTo >= 0 && m_session && static_cast<std::size_t>(r.rewindTo) < m_ring.size()) {
    try {
      m_session->restore(m_ring.at(static_cast<std::size_t>(r.rewindTo)));
      m_state.params = m_session->simulation().params();  // as they were then
      m_walk.clear();
    } catch (const std::exception& e) {
      note("bhviz: cannot go back: " + oneLine(e.what()));
    }
  }
  if (r.startSweep) startSweep();
  if (r.cancelSweep) stopSweep();
  if (r.exportSweep) exportSweep();
}

void WindowApp::advance(const FrameRequests& r, FrameRecord& record) {
  if (!m_session) return;
  if (r.togglePause) m_session->setPaused(!m_session->paused());
  const SimSession::Frame f = m_session->frame(m_state.budget, r.singleStep);
  if (!f.notice.empty()) note(f.notice);
  if (!f.stepped) return;
  record.step = f.advance.profile;
  record.substeps = f.advance.substeps;
  record.simMs = f.advance.wallMs;
  // A state now and then (after a step back: a new branch of the run).
  if (!m_session->halted()) {
    m_ring.update(m_session->simulation(), [this] { return m_session->settle(); });
  }
  m_session->sampleDiagnostics(diagnosticsInterval(m_state.scene.n), r.singleStep);
}

void WindowApp::updateOverlay() {
  if (!m_session) {
    m_scene.setBoxes({});
    m_overlayBoxes = 0;
    return;
  }
  OverlayRequest request;
  request.cells = m_state.overlay.cells;
  request.minLevel = m_state.overlay.minLevel;
  request.maxLevel = m_state.overlay.maxLevel;
  request.groups = m_state.overlay.groups;
  request.domains = m_state.overlay.domains;
  std::vector<render::OverlayBox> walk;
  if (m_walk.active()) {  // a pick: its walk drawn over the tree overlay
    const WalkPanelState& ws = m_state.walk;
    WalkOverlay overlay;
    overlay.mode = !ws.stepThrough ? WalkOverlay::Mode::List
                   : ws.buildStage ? WalkOverlay::Mode::Build
                                   : WalkOverlay::Mode::Walk;
    overlay.level = ws.level;
    overlay.step = ws.step;
    overlay.highlight = ws.hovered;
    walk = walkBoxes(m_walk, overlay);
  }
  const std::string line = m_scene.writeOverlay(m_session->simulation(), request, walk);
  if (!line.empty()) note(line);
  m_overlayBoxes = m_scene.boxCount();
}

void WindowApp::checkGl() {
  const std::uint32_t e = m_window.glError();
  if (e == 0) return;
  if (m_glErrors++ == 0) {
    char line[96];
    std::snprintf(line, sizeof line, "bhviz: GL error 0x%04x during a frame", e);
    m_err << line << '\n';
    m_notice = line;
  }
}

UiInfo WindowApp::uiInfo() const {
  UiInfo info;
  info.session = m_session.get();
  info.perf = &m_perf;
#if BHVIZ_HAVE_CUDA
  info.cudaBuilt = true;
#endif
  info.vertexPath = m_scene.vertexPath();
  if (m_session) info.ranks = m_session->ranks();
  info.overlayPath = m_scene.overlayPath();
  info.glDescription = m_window.glDescription();
  info.overlayBoxes = m_overlayBoxes;
  info.notice = m_notice;
  info.ffmpegFound = !m_ffmpeg.empty();
  info.recording = m_recorder.active();
  info.recordedFrames = m_recorder.framesWritten();
  info.recordTarget = m_recorder.target();
  info.walk = &m_walk;
  info.meter = &m_meter;
  info.sweep = &m_sweep;
  info.lesson = &m_lessons;
  info.ring = &m_ring;
  info.treeStats = &m_treeStats.view();
  return info;
}

void WindowApp::frame(Clock::time_point frameStart) {
  m_window.pollEvents();
  if (m_rebuildPending) rebuild();
  m_window.beginUi();
  FrameRequests requests;
  const render::RenderTarget target = m_window.target();
  const render::Camera before = m_scene.camera();
  handleInput(m_scene.camera(), m_state, requests, static_cast<float>(std::max(target.height, 1)),
              m_window.keys());
  m_state.walk.hovered =
      m_state.walk.sceneHover >= 0 ? m_state.walk.sceneHover : m_state.walk.selected;
  if (cameraMoved(before, m_scene.camera())) m_scripted = false;  // the mouse wins until R
  if (m_session) m_treeStats.update(m_session->simulation(), m_state.panels.tree, frameStart);
  if (drawUi(m_state, requests, uiInfo())) m_notice.clear();
  applyCameraRequests(requests, before);
  applyLessonRequests(requests);
  if (const std::string line = m_layout->save(false); !line.empty()) note(line);
  applyRequests(requests);
  updateWalk(requests);

  FrameRecord record;
  advance(requests, record);
  updateAccuracy();
  if (m_session && !m_rebuildPending) {  // a step's new scene first
    if (const std::string line = m_lessons.update(*m_session); !line.empty()) note(line);
  }
  updateCamera();
  updateOverlay();
  // The merger builder's preview, while its panel is shown.
  m_scene.setLines(builderPreviewLines(m_state.builder, m_state.panels.builder &&
                                                            m_state.uiVisible &&
                                                            !m_state.layout.presentation));
  m_scene.look() = m_state.look;  // the View panel edits the look (the vertices follow it too)
  Clock::time_point t0 = Clock::now();
  if (m_session) {
    const std::string line = m_scene.writeParticles(m_session->simulation());
    if (!line.empty()) note(line);
  }
  record.writeMs = msSince(t0);

  t0 = Clock::now();
  if (target.width > 0 && target.height > 0) {
    if (m_renderTimer) m_renderTimer->begin();
    m_scene.render(target);
    if (m_renderTimer) m_renderTimer->end();
  }
  render::Image sceneAlone;
  if (m_measureCoverage) sceneAlone = render::readTarget(target);
  m_window.endUi();
  if (m_measureCoverage) measureCoverage(sceneAlone, target);
  record.renderMs = msSince(t0);
  if (m_renderTimer) record.gpuRenderMs = m_renderTimer->poll();
  recordFrame();
  checkGl();
  if (m_screenshotPending) {
    m_screenshotPending = false;
    screenshot(timestampedScreenshotPath(".").string());
  }
  m_window.swapBuffers();
  record.frameMs = msSince(frameStart);
  m_perf.push(record);
}

int WindowApp::run() {
  start();
  if (const char* path = std::getenv("BHVIZ_UI_COVERAGE")) m_coveragePath = path;
  Clock::time_point last = Clock::now();
  for (int frames = 0; !m_quit && !m_window.shouldClose();) {
    const Clock::time_point now = Clock::now();
    m_scene.camera().advance(static_cast<float>(std::chrono::duration<double>(now - last).count()));
    m_frameSeconds = static_cast<float>(std::chrono::duration<double>(now - last).count());
    last = now;
    m_measureCoverage = !m_coveragePath.empty() && frames + 1 == m_options.quitAfter;
    frame(now);
    ++frames;
    if (m_options.quitAfter > 0 && frames >= m_options.quitAfter) break;
  }
  settleAndReport();  // the last frame's substep is checked too
  if (!m_options.frames.screenshotPath.empty()) screenshot(m_options.frames.screenshotPath);
  if (m_recorder.active()) stopRecording();
  if (const std::string line = m_layout->save(true); !line.empty()) note(line);
  checkGl();
  return m_glErrors > 0 ? 1 : 0;
}

}  // namespace detail

int runWindow(const Options& options, std::ostream& out, std::ostream& err) {
  detail::WindowApp app(options, out, err);
  return app.run();
}

}  // namespace bhviz::app
