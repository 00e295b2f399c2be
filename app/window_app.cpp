#include "app/window_app.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <ostream>

#include "app/app_state.h"
#include "app/frames.h"
#include "app/headless.h"
#include "app/input.h"
#include "app/overlay_view.h"
#include "app/panels.h"
#include "app/particle_view.h"
#include "app/perf_history.h"
#include "app/scenario_camera.h"
#include "app/screenshot.h"
#include "app/sim_session.h"
#include "app/vertex_writer.h"
#include "app/window.h"
#include "render/renderer.h"

namespace bhviz::app {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// Diagnostics are a pass over every particle (a device reduction on CUDA, a host loop on the
/// CPU): twice a second, or every 2 s at large N.
double diagnosticsInterval(std::size_t n) { return n > 200'000 ? 2.0 : 0.5; }

bool envFlag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' && v[0] != '0';
}

class WindowApp {
 public:
  WindowApp(const Options& options, std::ostream& out, std::ostream& err)
      : m_options(options),
        m_out(out),
        m_err(err),
        m_window(options.frames.width, options.frames.height, "bhviz"),
        m_view(ViewSettings{}) {}

  int run();

 private:
  void start();
  void rebuild();
  void frame(Clock::time_point frameStart);
  void applyRequests(const FrameRequests& r);
  void applyView();
  void advance(const FrameRequests& r, FrameRecord& record);
  void updateOverlay();
  void checkGl();
  void screenshot(const std::string& path);
  void note(const std::string& line);
  void startCameraScript();
  UiInfo uiInfo() const;

  Options m_options;
  std::ostream& m_out;
  std::ostream& m_err;
  Window m_window;              // first: the GL context outlives everything below
  render::Renderer m_renderer;  // needs the context
  VertexWriter m_writer;
  AppState m_state;
  render::Camera m_camera;
  ParticleView m_view;
  std::unique_ptr<SimSession> m_session;
  PerfHistory m_perf;
  std::string m_notice;
  bool m_rebuildPending = false;
  bool m_halted = false;  // the state went non-finite: no stepping until a rebuild
  bool m_screenshotPending = false;
  bool m_quit = false;
  int m_glErrors = 0;
  std::size_t m_overlayBoxes = 0;
  // The scenario's scripted camera: followed until the mouse moves the camera, again after R.
  render::CameraScript m_script;
  bool m_scripted = false;
  float m_framedDistance = 1.0f;  // the aimed camera's distance; the script's are relative to it
};

bool cameraMoved(const render::Camera& a, const render::Camera& b) {
  return a.yaw != b.yaw || a.pitch != b.pitch || a.distance != b.distance || a.target != b.target;
}

void WindowApp::note(const std::string& line) {
  m_out << line << '\n' << std::flush;
  m_notice = line;
}

// The first simulation: N from the backend when --n was not given. Errors here end the run.
void WindowApp::start() {
  std::size_t n = m_options.n;
  if (!m_options.nGiven) {
    const BackendSelection probe = selectBackend(m_options.backend, kWindowParticlesCuda);
    // CPU: the scenario's own count (m_options.n; 20000 for the first four built-ins).
    n = probe.backend->name() == "cuda" ? kWindowParticlesCuda : m_options.n;
  }
  m_state = initialState(m_options, n);
  if (envFlag("BHVIZ_UI_ALL_PANELS")) {
    m_state.panels = PanelsOpen{true, true, true, true, true, true, true, true};
    m_state.overlay.cells = m_state.overlay.groups = true;
  }
  m_session = std::make_unique<SimSession>(m_state.scene, m_state.params);
  if (!m_session->backendNote().empty()) m_out << m_session->backendNote() << '\n';
  applyView();
  const render::RenderTarget t = m_window.target();
  const Framing framing = frameVisible(m_session->initial(), m_state.view);
  aimCamera(m_camera, framing, t.height > 0 ? float(t.width) / float(t.height) : 1.0f);
  startCameraScript();
  m_state.look.particles = particleStyleFor(framing.visible, framing.radius);
  m_out << "bhviz: window " << t.width << "x" << t.height << ", " << m_state.scene.scenario
        << ", N = " << m_state.scene.n << ", " << m_session->simulation().backend().name()
        << " backend; " << m_window.glDescription() << '\n'
        << std::flush;
}

// A rebuild asked for by the UI: on failure the old simulation keeps running.
void WindowApp::rebuild() {
  m_rebuildPending = false;
  try {
    auto session = std::make_unique<SimSession>(m_state.scene, m_state.params);
    m_session = std::move(session);
    m_halted = false;
    m_perf.clear();
    applyView();
    const Framing framing = frameVisible(m_session->initial(), m_state.view);
    m_state.look.particles = particleStyleFor(framing.visible, framing.radius);
    m_notice = m_session->backendNote();
    if (!m_session->spec().camera.keys.empty()) {  // a scripted scenario starts on its path
      const render::RenderTarget t = m_window.target();
      aimCamera(m_camera, framing, t.height > 0 ? float(t.width) / float(t.height) : 1.0f);
    }
    startCameraScript();
  } catch (const std::exception& e) {
    note("bhviz: cannot build " + m_state.scene.scenario + " with N = " +
         std::to_string(m_state.scene.n) + ": " + oneLine(e.what()));
    if (m_session) m_state.scene = m_session->scene();
  }
}

// After the camera was aimed at a new simulation: its scenario's script takes the camera.
void WindowApp::startCameraScript() {
  m_script = cameraScript(m_session->spec().camera);
  m_scripted = !m_script.keys.empty();
  m_framedDistance = m_camera.distance;
  if (m_script.autoRotate != 0.0f) m_state.autoRotate = m_script.autoRotate;
}

void WindowApp::applyView() {
  m_view = ParticleView(m_state.view);
  if (m_session) m_view.calibrate(m_session->initial());
  m_renderer.setPalette(m_view.palette());
}

void WindowApp::applyRequests(const FrameRequests& r) {
  if (r.rebuild) m_rebuildPending = true;  // at the top of the next frame
  if (r.paramsChanged && m_session) {
    try {
      sim::validate(m_state.params);
      m_session->setParams(m_state.params);
    } catch (const sim::InvalidParameter& e) {
      note(std::string("bhviz: ") + oneLine(e.what()));
      m_state.params = m_session->simulation().params();
    }
  }
  if (r.viewChanged) applyView();
  if (r.reframe && m_session) {
    const render::RenderTarget t = m_window.target();
    aimCamera(m_camera, frameVisible(m_session->simulation().particles(), m_state.view),
              t.height > 0 ? float(t.width) / float(t.height) : 1.0f);
  }
  if (r.screenshot) m_screenshotPending = true;
  if (r.quit) m_quit = true;
}

void WindowApp::advance(const FrameRequests& r, FrameRecord& record) {
  if (!m_session || m_halted || (m_state.paused && !r.singleStep)) return;
  try {
    const SimSession::Advance a =
        r.singleStep ? m_session->step() : m_session->advance(m_state.budget);
    record.step = a.profile;
    record.substeps = a.substeps;
    record.simMs = a.wallMs;
    m_session->sampleDiagnostics(diagnosticsInterval(m_state.scene.n), r.singleStep);
  } catch (const sim::NonFiniteState& e) {
    m_state.paused = true;
    m_halted = true;
    note("bhviz: paused: " + describe(e) + " (Reset to start again)");
  }
}

void WindowApp::updateOverlay() {
  const sim::CpuBackend* cpu = m_session ? m_session->cpuBackend() : nullptr;
  std::vector<render::OverlayBox> boxes;
  if (cpu != nullptr && m_state.overlay.cells) {
    boxes = treeCellBoxes(cpu->tree(), cpu->particles(), m_state.overlay.minLevel,
                          m_state.overlay.maxLevel);
  }
  if (cpu != nullptr && m_state.overlay.groups) {
    const std::vector<render::OverlayBox> groups = groupBoxes(cpu->groups());
    boxes.insert(boxes.end(), groups.begin(), groups.end());
  }
  m_overlayBoxes = boxes.size();
  m_renderer.setBoxes(boxes.data(), boxes.size());
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

void WindowApp::screenshot(const std::string& path) {
  const render::RenderTarget t = m_window.target();
  try {
    saveScreenshot(m_renderer, m_camera, m_state.look, t.width, t.height, path);
    note("bhviz: screenshot " + path);
  } catch (const std::exception& e) {
    note("bhviz: screenshot failed: " + oneLine(e.what()));
  }
}

UiInfo WindowApp::uiInfo() const {
  UiInfo info;
  info.session = m_session.get();
  info.perf = &m_perf;
#if BHVIZ_HAVE_CUDA
  info.cudaBuilt = true;
#endif
  info.vertexPath = m_writer.path();
  info.glDescription = m_window.glDescription();
  info.overlayBoxes = m_overlayBoxes;
  info.notice = m_notice;
  return info;
}

void WindowApp::frame(Clock::time_point frameStart) {
  m_window.pollEvents();
  if (m_rebuildPending) rebuild();
  m_window.beginUi();
  FrameRequests requests;
  const render::RenderTarget target = m_window.target();
  const render::Camera before = m_camera;
  handleInput(m_camera, m_state, requests, static_cast<float>(std::max(target.height, 1)));
  if (cameraMoved(before, m_camera)) m_scripted = false;  // the mouse wins until R
  if (drawUi(m_state, requests, uiInfo())) m_notice.clear();
  applyRequests(requests);

  FrameRecord record;
  advance(requests, record);
  m_camera.autoRotateSpeed = m_state.autoRotate;
  if (m_scripted && m_session) {
    render::applyCameraPath(m_camera, m_script, static_cast<float>(m_session->simulation().time()),
                            m_framedDistance);
  }
  updateOverlay();
  Clock::time_point t0 = Clock::now();
  if (m_session) {
    const std::string line = m_writer.write(m_session->simulation(), m_view, m_renderer);
    if (!line.empty()) note(line);
  }
  record.writeMs = msSince(t0);

  t0 = Clock::now();
  if (target.width > 0 && target.height > 0) m_renderer.render(m_camera, m_state.look, target);
  m_window.endUi();
  record.renderMs = msSince(t0);
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
  Clock::time_point last = Clock::now();
  for (int frames = 0; !m_quit && !m_window.shouldClose();) {
    const Clock::time_point now = Clock::now();
    m_camera.advance(static_cast<float>(std::chrono::duration<double>(now - last).count()));
    last = now;
    frame(now);
    ++frames;
    if (m_options.quitAfter > 0 && frames >= m_options.quitAfter) break;
  }
  if (!m_options.frames.screenshotPath.empty()) screenshot(m_options.frames.screenshotPath);
  checkGl();
  return m_glErrors > 0 ? 1 : 0;
}

}  // namespace

int runWindow(const Options& options, std::ostream& out, std::ostream& err) {
  WindowApp app(options, out, err);
  return app.run();
}

}  // namespace bhviz::app
