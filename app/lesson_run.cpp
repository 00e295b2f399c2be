#include "app/lesson_run.h"

#include <cmath>
#include <filesystem>
#include <memory>
#include <ostream>
#include <sstream>

#include "app/core/cli.h"
#include "app/core/lesson.h"
#include "app/core/lesson_measure.h"
#include "app/core/sim_session.h"
#include "app/scene/frames.h"
#include "sim/ic/scenario_file.h"

namespace bhviz::app {

namespace {

constexpr std::size_t kColumns = 96;

/// `text` in lines of at most kColumns, each starting with `indent`.
std::string wrapped(const std::string& text, const std::string& indent = "  ") {
  std::istringstream words(text);
  std::string out, line, word;
  while (words >> word) {
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > kColumns) {
      out += indent + line + '\n';
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += indent + line + '\n';
  return out;
}

}  // namespace

int runLesson(const Options& o, std::ostream& out, std::ostream& err) {
  const Lesson& lesson = findLesson(o.lesson);
  out << "bhviz: lesson " << lesson.name << ": " << lesson.title << " (" << lesson.steps.size()
      << (lesson.steps.size() == 1 ? " step)\n" : " steps)\n") << wrapped(lesson.summary);
  SceneSettings scene;
  scene.backend = o.backend;
  sim::SimParams params = o.params;
  std::unique_ptr<SimSession> session;
  FrameOptions look = o.frames;  // the size and render options of the command line
  look.framesDir.clear();
  look.videoPath.clear();
  look.overlay = OverlayKind::None;
  for (std::size_t k = 0; k < lesson.steps.size(); ++k) {
    const LessonStep& step = lesson.steps[k];
    out << "\n== step " << k + 1 << "/" << lesson.steps.size() << ": " << step.title << " ==\n"
        << wrapped(step.text);
    params = stepParams(params, step);
    sim::validate(params);
    if (step.scenario) {
      scene.scenario = *step.scenario;
      scene.seed = step.seed.value_or(1);
      scene.n = o.nGiven ? o.n : step.n.value_or(sim::resolveScenario(scene.scenario).particles());
      session = std::make_unique<SimSession>(scene, params);
    } else if (const std::string refused = session->applyParams(params); !refused.empty()) {
      err << "bhviz: error: lesson " << lesson.name << ", step " << k + 1 << ": " << refused
          << '\n';
      return 1;
    }
    if (step.camera) look.camera = *step.camera;
    if (step.colour) look.colorBy = *step.colour;
    if (step.overlay) look.overlay = *step.overlay;
    const sim::Simulation& sim = session->simulation();
    const double spreadBefore = step.measure.kind == LessonMeasure::Kind::Spread
                                    ? diskSpread(sim.particles(), step.measure.radius)
                                    : -1.0;
    if (step.run > 0.0) {
      const int intervals = static_cast<int>(std::ceil(step.run / params.dtMax - 1e-9));
      out << "  (running " << intervals << " steps to t = " << sim.time() + intervals * params.dtMax
          << ")\n"
          << std::flush;
      for (int i = 0; i < intervals; ++i) {
        try {
          session->advanceInterval();
        } catch (const sim::NonFiniteState& e) {
          err << "bhviz: error: lesson " << lesson.name << ", step " << k + 1 << ": " << describe(e)
              << '\n';
          return 1;
        }
      }
    }
    if (!o.frames.framesDir.empty()) {
      FrameOptions f = look;
      f.screenshotPath = (std::filesystem::path(o.frames.framesDir) /
                          FrameRecorder::frameName(static_cast<int>(k)))
                             .string();
      FrameRecorder pictures(f, params.maxBinDepth);
      pictures.start(sim);
      pictures.finish(sim);
      out << "  picture: " << f.screenshotPath << '\n';
    }
    if (!step.panel.empty()) out << "  (in the window: the " << step.panel << " panel)\n";
    if (!step.question.empty()) out << "question:\n" << wrapped(step.question);
    if (step.measure.kind != LessonMeasure::Kind::None) {
      const LessonAnswer answer = measureLesson(sim, step.measure, spreadBefore);
      out << "measured:\n";
      for (const std::string& line : answer.lines) out << wrapped(line);
    }
    out << std::flush;
  }
  return 0;
}

}  // namespace bhviz::app
