// The window's tools beside its main loop (window_app_impl.h): snapshot files and recording,
// the accuracy meter and the θ sweep, the camera's follow, bookmarks and script, lessons, and
// the layout test's coverage measure.
#include <algorithm>
#include <cstdio>

#include "app/window/window_app_impl.h"

namespace bhviz::app::detail {

// The Files panel. A failed load keeps the running simulation (rebuild() restores the scene); a
// failed save changes nothing (atomic writes).
void WindowApp::applyFileRequests(const FrameRequests& r) {
  if (r.loadSnapshot) {
    m_state.scene.snapshotPath = m_state.files.snapshotPath;
    m_rebuildPending = true;
    m_aimAfterRebuild = true;
  }
  if (r.saveSnapshot && m_session && !m_session->halted()) {
    try {
      m_session->save(m_state.files.snapshotPath);
      note("bhviz: saved " + m_state.files.snapshotPath +
           " at t = " + std::to_string(m_session->simulation().time()));
    } catch (const sim::NonFiniteState& e) {
      note("bhviz: paused: " + describe(e) + " (Reset to start again)");
    } catch (const std::exception& e) {
      note("bhviz: cannot save: " + oneLine(e.what()));
    }
  }
  if (r.toggleRecording) {
    if (m_recorder.active()) {
      stopRecording();
    } else {
      startRecording();
    }
  }
}

void WindowApp::startRecording() {
  const render::RenderTarget t = m_window.target();
  const FilesSettings& f = m_state.files;
  try {
    if (f.recordVideo) {
      m_recorder.startVideo(m_ffmpeg, f.videoPath, t.width, t.height, f.every);
    } else {
      m_recorder.startFrames(f.framesDir, t.width, t.height, f.every);
    }
    note("bhviz: recording " + std::to_string(t.width) + "x" + std::to_string(t.height) + " to " +
         m_recorder.target());
  } catch (const std::exception& e) {
    note("bhviz: cannot record: " + oneLine(e.what()));
  }
}

void WindowApp::stopRecording() {
  try {
    note(m_recorder.stop());
  } catch (const std::exception& e) {
    note("bhviz: recording failed: " + oneLine(e.what()));
  }
}

void WindowApp::recordFrame() {
  if (!m_recorder.active()) return;
  try {
    m_recorder.frame(m_scene.renderer(), m_scene.camera(), m_state.look);
  } catch (const std::exception& e) {
    note("bhviz: recording stopped: " + oneLine(e.what()));
  }
}

void WindowApp::screenshot(const std::string& path) {
  const render::RenderTarget t = m_window.target();
  try {
    saveScreenshot(m_scene.renderer(), m_scene.camera(), m_state.look, t.width, t.height, path);
    note("bhviz: screenshot " + path);
  } catch (const std::exception& e) {
    note("bhviz: screenshot failed: " + oneLine(e.what()));
  }
}

// The meter's and the sweep's finished jobs, and the meter's next measurement when it is due.
// Neither waits for its thread; the meter rests while a sweep runs (its timings stay clean).
void WindowApp::updateAccuracy() {
  if (m_sweep.poll()) {
    if (!m_sweep.error().empty()) {
      note("bhviz: the sweep failed: " + oneLine(m_sweep.error()));
    } else {
      note("bhviz: sweep done, " + std::to_string(m_sweep.done()) + " points");
    }
    if (m_session) m_session->setPaused(m_pausedBeforeSweep);
  }
  if (!m_session || m_session->halted() || m_sweep.running()) return;
  if (m_meter.update(m_session->simulation(), m_state.meter, m_state.scene.seed,
                     m_perf.smoothed().frameMs, [this] { return m_session->settle(); })) {
    m_scene.setErrors(m_meter.latest()->errorById);
  }
}

void WindowApp::startSweep() {
  if (!m_session || !m_session->settle()) return;
  std::vector<sim::MacKind> macs;
  for (std::size_t m = 0; m < m_state.sweep.macs.size(); ++m) {
    if (m_state.sweep.macs[m]) macs.push_back(sim::allMacs()[m]);
  }
  try {
    const std::vector<float> thetas =
        sim::sweepThetas(m_state.sweep.from, m_state.sweep.to, m_state.sweep.step);
    if (macs.empty()) throw std::invalid_argument("tick at least one MAC");
    const sim::Simulation& sim = m_session->simulation();
    std::unique_ptr<sim::Backend> scratch = sim.backend().makeScratch(sim.backend().size());
    const sim::ReferenceSum sum = scratch->referenceSum();
    const bool onDevice = sim.backend().traits().onDevice;
    if (!m_sweep.running()) m_pausedBeforeSweep = m_session->paused();
    // Paused while it runs, so the points' timings have the machine to themselves.
    // The headless sweep's reference, held to the meter's pair budget at large N (a 2,000
    // particle direct sum against 10⁶ on the CPU would keep Cancel waiting for seconds).
    const std::size_t sample =
        std::min(kSweepSample, planMeter(kSweepSample, sim.particles().size(), onDevice).sample);
    m_sweep.start(sim.particles(), sim.params(), macs, thetas, m_state.scene.seed,
                  std::move(scratch), sum, 0, sample);
    m_session->setPaused(true);
  } catch (const std::exception& e) {
    note("bhviz: cannot start the sweep: " + oneLine(e.what()));
  }
}

void WindowApp::stopSweep() {
  if (!m_sweep.running()) return;
  m_sweep.cancel();
  if (m_session) m_session->setPaused(m_pausedBeforeSweep);
}

void WindowApp::exportSweep() {
  try {
    m_sweep.exportCsv(m_state.sweep.csvPath);
    note("bhviz: sweep written to " + m_state.sweep.csvPath);
  } catch (const std::exception& e) {
    note("bhviz: cannot export the sweep: " + oneLine(e.what()));
  }
}

// The mouse frees a followed camera: a pan its target, a zoom its distance (auto-framing). B and
// 1-9 keep and recall views.
void WindowApp::applyCameraRequests(const FrameRequests& r, const render::Camera& before) {
  const render::Camera& now = m_scene.camera();
  if (cameraMoved(before, now)) m_follower.land();
  if (now.target != before.target && m_state.camera.target != CameraTarget::Free) {
    m_state.camera.target = CameraTarget::Free;
    note("bhviz: the camera is free again (Camera panel: follow)");
  }
  if (now.distance != before.distance && m_state.camera.autoFrame) {
    m_state.camera.autoFrame = false;
    note("bhviz: auto-frame is off while you zoom (Camera panel)");
  }
  if (r.addBookmark) {
    const std::string name = "view " + std::to_string(m_state.bookmarks.size() + 1);
    m_state.bookmarks.push_back(bookmarkOf(now, m_state.camera, name));
    note("bhviz: bookmarked " + name +
         (m_state.bookmarks.size() <= 9
              ? " (key " + std::to_string(m_state.bookmarks.size()) + " flies back)"
              : ""));
  }
  if (r.flyTo >= 0) {
    if (static_cast<std::size_t>(r.flyTo) < m_state.bookmarks.size()) {
      const CameraBookmark& b = m_state.bookmarks[static_cast<std::size_t>(r.flyTo)];
      m_follower.flyTo(b);
      m_state.camera = b.mode;
      m_scripted = false;
    } else {
      note("bhviz: no bookmark " + std::to_string(r.flyTo + 1) + " (B keeps the current view)");
    }
  }
}

// The Lessons menu and the Lesson panel: a step's scene, parameters and view go through the
// frame's requests like the panels' own edits.
void WindowApp::applyLessonRequests(FrameRequests& r) {
  if (r.startLesson >= 0 && static_cast<std::size_t>(r.startLesson) < lessons().size()) {
    m_lessons.start(lessons()[static_cast<std::size_t>(r.startLesson)], m_state, r);
    note("bhviz: lesson " + m_lessons.lesson()->name + ": " + m_lessons.lesson()->title);
  }
  if (r.lessonStep >= 0) m_lessons.enter(r.lessonStep, m_state, r);
  if (r.measureLesson && m_session && m_session->settle()) m_lessons.measure(*m_session);
  if (r.endLesson) m_lessons.end(m_state);
}

// The camera of this frame: a flight to a bookmark, else the followed point and auto-framed
// distance (app/scene/camera_follow.h), then the scenario's script (its distances relative to
// the framed one).
void WindowApp::updateCamera() {
  render::Camera& camera = m_scene.camera();
  camera.autoRotateSpeed = m_state.autoRotate;
  if (!m_session) return;
  const render::RenderTarget t = m_window.target();
  const float aspect = t.height > 0 ? float(t.width) / float(t.height) : 1.0f;
  if (!m_follower.fly(camera, m_frameSeconds) && m_state.camera.active()) {
    const CameraAim aim = m_aim.aim(m_session->simulation(), m_state.camera, m_state.view);
    m_follower.follow(camera, m_state.camera, aim, m_frameSeconds, aspect);
  }
  if (m_scripted) {
    const float framed = m_state.camera.autoFrame && m_follower.framedDistance() > 0.0f
                             ? m_follower.framedDistance()
                             : m_framedDistance;
    render::applyCameraPath(camera, m_script, static_cast<float>(m_session->simulation().time()),
                            framed);
  }
}

// The pixels the panels changed are the ones they cover (ImGui's windows are not transparent).
void WindowApp::measureCoverage(const render::Image& scene, const render::RenderTarget& target) {
  const render::Image withPanels = render::readTarget(target);
  std::size_t same = 0;
  const std::size_t pixels = withPanels.rgba.size() / 4;
  for (std::size_t i = 0; i < pixels && scene.rgba.size() == withPanels.rgba.size(); ++i) {
    same += std::equal(scene.rgba.begin() + 4 * i, scene.rgba.begin() + 4 * i + 3,
                       withPanels.rgba.begin() + 4 * i);
  }
  char line[128];
  std::snprintf(line, sizeof line, "bhviz: the panels leave %.1f %% of the scene unobstructed",
                pixels > 0 ? 100.0 * double(same) / double(pixels) : 0.0);
  note(line);
  try {
    writePngAtomically(m_coveragePath, withPanels);
  } catch (const std::exception& e) {
    note(std::string("bhviz: ") + oneLine(e.what()));
  }
}

}  // namespace bhviz::app::detail
