#pragma once
// Guided lessons (assets/lessons/*.json, embedded at build time): each a scripted sequence of
// steps, a step being a scenario and parameters to set, a camera, a colouring and overlay, a
// panel to look at, a stretch of simulated time to run, a question, and the measurement that
// answers it (app/core/lesson_measure.h). The window plays them from its Lessons menu; the
// headless run (`--lesson NAME`) prints them and draws a picture per step. Parsed and
// validated in full before anything runs; a mistake is one LessonError naming the file and key.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "app/core/camera_mode.h"
#include "app/core/view_options.h"
#include "sim/params.h"

namespace bhviz::app {

struct LessonError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What answers a step's question.
struct LessonMeasure {
  enum class Kind {
    None,
    Compare,  ///< the force error and cost at each of `values` of `param`
    Bins,     ///< the stars per time bin, and the work block steps save
    Spread,   ///< the share of disk stars farther than `radius` from their galaxy's centre
  };
  Kind kind = Kind::None;
  std::string param;           ///< Compare: theta, n_group or n_leaf
  std::vector<double> values;  ///< Compare: at least one
  double radius = 0.0;         ///< Spread [length]
};

/// The parameters a step sets; unset ones keep their value.
struct LessonParams {
  std::optional<sim::MacKind> mac;
  std::optional<float> theta;
  std::optional<int> nGroup, nLeaf;
  std::optional<bool> blockSteps;
  std::optional<float> dtMax, eta, softening;

  /// `p` with these set (not validated).
  sim::SimParams applied(sim::SimParams p) const;
};

struct LessonStep {
  std::string title, text, question;
  /// A new scene: set together, or none of them (the running one goes on).
  std::optional<std::string> scenario;
  std::optional<std::size_t> n;
  std::optional<std::uint64_t> seed;
  LessonParams params;
  std::optional<CameraMode> camera;
  std::optional<ColorBy> colour;
  std::optional<OverlayKind> overlay;
  std::string panel;  ///< a panel's title (kLessonPanels) to show; empty = none
  double run = 0.0;   ///< simulated time to advance before measuring [time]
  LessonMeasure measure;
};

/// The parameters of `step` on top of `current`: on a new scene first the scenario's suggested
/// softening and dtMax (× kBlockDtFactor with block steps, as the command line does), then the
/// step's own. Not validated.
sim::SimParams stepParams(const sim::SimParams& current, const LessonStep& step);

struct Lesson {
  std::string name;  ///< the file's name without .json
  std::string title, summary;
  std::vector<LessonStep> steps;
};

/// The window's panels a step may name.
const std::vector<std::string>& lessonPanels();

/// Parses and validates a lesson; `name` names it in messages and becomes Lesson::name.
Lesson parseLesson(std::string_view text, const std::string& name);
/// The built-in lessons, in menu order (parsed once; a broken asset fails the build's tests).
const std::vector<Lesson>& lessons();
/// The lesson named `name`. Throws LessonError listing the names.
const Lesson& findLesson(const std::string& name);

/// The embedded asset files: {name, JSON text} (generated at build time).
struct EmbeddedLesson {
  const char* name;
  const char* text;
};
const std::vector<EmbeddedLesson>& embeddedLessons();

}  // namespace bhviz::app
