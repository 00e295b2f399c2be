#include "app/window/lesson_player.h"

#include <algorithm>

#include "app/window/dock.h"
#include "sim/ic/scenario_file.h"

namespace bhviz::app {

namespace {

std::optional<PanelId> panelNamed(const std::string& title) {
  for (std::size_t i = 0; i < kPanelCount; ++i) {
    if (title == panelTitle(static_cast<PanelId>(i))) return static_cast<PanelId>(i);
  }
  return std::nullopt;
}

}  // namespace

void LessonPlayer::start(const Lesson& lesson, AppState& s, FrameRequests& r) {
  if (m_lesson == nullptr) m_startParams = s.params;
  m_lesson = &lesson;
  revealPanel(s, PanelId::Lesson);
  enter(0, s, r);
}

void LessonPlayer::enter(int k, AppState& s, FrameRequests& r) {
  if (m_lesson == nullptr) return;
  k = std::clamp(k, 0, static_cast<int>(m_lesson->steps.size()) - 1);
  m_step = k;
  m_answer = {};
  m_measured = false;
  m_runUntil = -1.0;
  // Everything of steps 0..k, the later over the earlier; the scene of the last step that set one.
  sim::SimParams params = m_startParams;
  const LessonStep* scene = nullptr;
  for (int j = 0; j <= k; ++j) {
    const LessonStep& step = m_lesson->steps[static_cast<std::size_t>(j)];
    params = stepParams(params, step);
    if (step.scenario) scene = &step;
    if (step.camera) s.camera = *step.camera;
    if (step.colour && *step.colour != s.view.colorBy) {
      s.view.colorBy = *step.colour;
      r.viewChanged = true;
    }
    if (step.overlay) {
      s.overlay.cells = *step.overlay == OverlayKind::Tree;
      s.overlay.groups = *step.overlay == OverlayKind::Groups;
    }
  }
  s.params = params;
  r.paramsChanged = true;
  const LessonStep& step = current();
  // A step with a scene starts it afresh; one without keeps the run, if it is its lesson's.
  if (scene != nullptr) {
    SceneSettings wanted = s.scene;
    wanted.scenario = *scene->scenario;
    wanted.seed = scene->seed.value_or(1);
    wanted.n = m_n ? *m_n : scene->n.value_or(sim::resolveScenario(wanted.scenario).particles());
    wanted.snapshotPath.clear();
    if (step.scenario || wanted.scenario != s.scene.scenario || wanted.n != s.scene.n ||
        wanted.seed != s.scene.seed || !s.scene.snapshotPath.empty()) {
      s.scene = wanted;
      r.rebuild = true;
    }
  }
  s.layout.highlight = -1;
  if (const auto id = panelNamed(step.panel)) {
    revealPanel(s, *id);
    s.layout.highlight = static_cast<int>(*id);
  }
  m_pendingStart = true;
}

std::string LessonPlayer::update(SimSession& session) {
  if (m_lesson == nullptr) return "";
  const LessonStep& step = current();
  const sim::Simulation& sim = session.simulation();
  if (m_pendingStart) {
    m_pendingStart = false;
    if (!session.settle()) return "";
    m_runFrom = sim.time();
    if (step.measure.kind == LessonMeasure::Kind::Spread) {
      m_spreadBefore = diskSpread(sim.particles(), step.measure.radius);
    }
    if (step.run > 0.0) {
      m_runUntil = m_runFrom + step.run;
      session.setPaused(false);
    }
    return "";
  }
  if (m_runUntil >= 0.0 && sim.time() >= m_runUntil - 1e-9) {
    m_runUntil = -1.0;
    session.setPaused(true);
    if (!session.settle()) return "";  // halted: the frame's notice says why
    measure(session);
    return "bhviz: lesson: step " + std::to_string(m_step + 1) +
           " ran to t = " + std::to_string(sim.time()) + " and was measured (Lesson panel)";
  }
  return "";
}

void LessonPlayer::measure(const SimSession& session) {
  if (m_lesson == nullptr) return;
  try {
    m_answer = measureLesson(session.simulation(), current().measure, m_spreadBefore);
  } catch (const std::exception& e) {
    m_answer = {};
    m_answer.lines.push_back(std::string("cannot measure: ") + e.what());
  }
  m_measured = true;
}

void LessonPlayer::end(AppState& s) {
  m_lesson = nullptr;
  m_runUntil = -1.0;
  m_pendingStart = false;
  s.layout.highlight = -1;
}

}  // namespace bhviz::app
