#include "app/core/lesson.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "app/core/cli.h"
#include "sim/ic/scenario_file.h"

namespace bhviz::app {

namespace {

using json = nlohmann::json;

/// Reads one lesson with the path of the key at hand, for messages.
class Reader {
 public:
  explicit Reader(std::string source) : m_source(std::move(source)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    throw LessonError("lesson " + m_source + ": " + key + ": " + why);
  }

  std::string text(const json& j, const std::string& key, const std::string& path,
                   bool required) const {
    if (!j.contains(key)) {
      if (required) fail(path + key, "missing");
      return "";
    }
    if (!j[key].is_string() || j[key].get<std::string>().empty())
      fail(path + key, "must be a text");
    return j[key].get<std::string>();
  }

  double number(const json& v, const std::string& key, double lo, double hi) const {
    if (!v.is_number()) fail(key, "must be a number");
    const double x = v.get<double>();
    if (!(x >= lo && x <= hi)) {
      fail(key, "= " + v.dump() + " is out of range [" + trim(lo) + ", " + trim(hi) + "]");
    }
    return x;
  }

  int whole(const json& v, const std::string& key, int lo, int hi) const {
    const double x = number(v, key, lo, hi);
    if (x != std::floor(x)) fail(key, "must be a whole number");
    return static_cast<int>(x);
  }

  LessonStep step(const json& j, const std::string& path, bool first) const {
    if (!j.is_object()) fail(path, "must be an object");
    static const std::vector<std::string> known = {
        "title",  "text",   "question", "scenario", "n",   "seed",   "params",
        "camera", "colour", "overlay",  "panel",    "run", "measure"};
    for (const auto& [key, value] : j.items()) {
      if (std::find(known.begin(), known.end(), key) == known.end())
        fail(path + key, "unknown key");
    }
    LessonStep s;
    s.title = text(j, "title", path, true);
    s.text = text(j, "text", path, true);
    s.question = text(j, "question", path, false);
    if (j.contains("scenario")) {
      s.scenario = text(j, "scenario", path, true);
      try {
        sim::resolveScenario(*s.scenario);
      } catch (const std::exception& e) {
        fail(path + "scenario", e.what());
      }
    }
    if (j.contains("n")) s.n = static_cast<std::size_t>(whole(j["n"], path + "n", 1, 100'000'000));
    if (j.contains("seed"))
      s.seed = static_cast<std::uint64_t>(whole(j["seed"], path + "seed", 0, 1 << 30));
    if ((s.n || s.seed) && !s.scenario) fail(path + "n", "n and seed need a scenario");
    if (first && !s.scenario) fail(path + "scenario", "the first step must set the scenario");
    if (j.contains("params")) s.params = params(j["params"], path + "params.");
    if (j.contains("camera")) s.camera = camera(j["camera"], path + "camera.");
    if (j.contains("colour")) {
      const auto c = parseColorBy(text(j, "colour", path, true));
      if (!c) fail(path + "colour", "must be component, speed, bin or population");
      s.colour = *c;
    }
    if (j.contains("overlay")) {
      const auto o = parseOverlayKind(text(j, "overlay", path, true));
      if (!o || *o == OverlayKind::Domains) fail(path + "overlay", "must be tree, groups or none");
      s.overlay = *o;
    }
    if (j.contains("panel")) {
      s.panel = text(j, "panel", path, true);
      const auto& panels = lessonPanels();
      if (std::find(panels.begin(), panels.end(), s.panel) == panels.end()) {
        fail(path + "panel", "\"" + s.panel + "\" is not a panel of the window");
      }
    }
    if (j.contains("run")) s.run = number(j["run"], path + "run", 0.0, 1000.0);
    if (j.contains("measure")) s.measure = measure(j["measure"], path + "measure.");
    if (s.measure.kind != LessonMeasure::Kind::None && s.question.empty()) {
      fail(path + "question", "a step that measures asks a question");
    }
    return s;
  }

 private:
  static std::string trim(double x) {
    std::string s = std::to_string(x);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }

  LessonParams params(const json& j, const std::string& path) const {
    if (!j.is_object()) fail(path, "must be an object");
    LessonParams p;
    for (const auto& [key, v] : j.items()) {
      if (key == "mac") {
        const auto mac = v.is_string() ? sim::parseMacKind(v.get<std::string>()) : std::nullopt;
        if (!mac) fail(path + key, "must be bh, bonsai, multipole or acceleration");
        p.mac = *mac;
      } else if (key == "theta") {
        p.theta = static_cast<float>(number(v, path + key, 0.05, sim::kThetaMax));
      } else if (key == "n_group") {
        p.nGroup = whole(v, path + key, 1, sim::kMaxGroupSize);
      } else if (key == "n_leaf") {
        p.nLeaf = whole(v, path + key, 1, sim::kMaxLeafSize);
      } else if (key == "dt") {
        p.dtMax = static_cast<float>(number(v, path + key, 1e-6, 10.0));
      } else if (key == "eta") {
        p.eta = static_cast<float>(number(v, path + key, 1e-3, 10.0));
      } else if (key == "softening") {
        p.softening = static_cast<float>(number(v, path + key, 1e-6, 100.0));
      } else if (key == "block_steps") {
        if (!v.is_boolean()) fail(path + key, "must be true or false");
        p.blockSteps = v.get<bool>();
      } else {
        fail(path + key, "unknown key");
      }
    }
    return p;
  }

  CameraMode camera(const json& j, const std::string& path) const {
    if (!j.is_object()) fail(path, "must be an object");
    CameraMode m;
    for (const auto& [key, v] : j.items()) {
      if (key == "follow") {
        const auto t = v.is_string() ? parseCameraTarget(v.get<std::string>()) : std::nullopt;
        if (!t) fail(path + key, "must be free, centre or galaxy:K");
        m.target = t->target;
        m.galaxy = t->galaxy;
      } else if (key == "auto_frame") {
        if (!v.is_boolean()) fail(path + key, "must be true or false");
        m.autoFrame = v.get<bool>();
      } else {
        fail(path + key, "unknown key");
      }
    }
    return m;
  }

  LessonMeasure measure(const json& j, const std::string& path) const {
    if (!j.is_object()) fail(path, "must be an object");
    LessonMeasure m;
    const std::string kind = text(j, "kind", path, true);
    if (kind == "compare") {
      m.kind = LessonMeasure::Kind::Compare;
      m.param = text(j, "param", path, true);
      if (m.param != "theta" && m.param != "n_group" && m.param != "n_leaf") {
        fail(path + "param", "must be theta, n_group or n_leaf");
      }
      if (!j.contains("values") || !j["values"].is_array() || j["values"].empty() ||
          j["values"].size() > 8) {
        fail(path + "values", "must be a list of 1 to 8 numbers");
      }
      for (std::size_t k = 0; k < j["values"].size(); ++k) {
        const std::string key = path + "values[" + std::to_string(k) + "]";
        m.values.push_back(m.param == "theta" ? number(j["values"][k], key, 0.05, sim::kThetaMax)
                                              : whole(j["values"][k], key, 1,
                                                      m.param == "n_group" ? sim::kMaxGroupSize
                                                                           : sim::kMaxLeafSize));
      }
    } else if (kind == "bins") {
      m.kind = LessonMeasure::Kind::Bins;
    } else if (kind == "spread") {
      m.kind = LessonMeasure::Kind::Spread;
      if (!j.contains("radius")) fail(path + "radius", "missing");
      m.radius = number(j["radius"], path + "radius", 1e-6, 1e6);
    } else {
      fail(path + "kind", "must be compare, bins or spread");
    }
    for (const auto& [key, v] : j.items()) {
      static const std::vector<std::string> known = {"kind", "param", "values", "radius"};
      if (std::find(known.begin(), known.end(), key) == known.end())
        fail(path + key, "unknown key");
    }
    return m;
  }

  std::string m_source;
};

}  // namespace

sim::SimParams LessonParams::applied(sim::SimParams p) const {
  if (mac && *mac != p.mac) {
    p.mac = *mac;
    p.macParam = 0.0f;  // the new MAC's default
  }
  if (theta) p.theta = *theta;
  if (nGroup) p.nGroup = *nGroup;
  if (nLeaf) p.nLeaf = *nLeaf;
  if (blockSteps) p.stepping = *blockSteps ? sim::TimeStepping::Block : sim::TimeStepping::Shared;
  if (dtMax) p.dtMax = *dtMax;
  if (eta) p.eta = *eta;
  if (softening) p.softening = *softening;
  return p;
}

sim::SimParams stepParams(const sim::SimParams& current, const LessonStep& step) {
  sim::SimParams p = current;
  if (step.params.blockSteps) {
    p.stepping = *step.params.blockSteps ? sim::TimeStepping::Block : sim::TimeStepping::Shared;
  }
  if (step.scenario) {
    const sim::ScenarioSpec spec = sim::resolveScenario(*step.scenario);
    p.softening = spec.softening;
    p.dtMax = p.stepping == sim::TimeStepping::Block ? spec.dt * kBlockDtFactor : spec.dt;
  }
  return step.params.applied(p);
}

const std::vector<std::string>& lessonPanels() {
  static const std::vector<std::string> panels = {
      "Simulation",  "Accuracy",       "Time steps", "View",        "Files", "Camera",
      "Performance", "Accuracy meter", "Tree",       "Diagnostics", "Walk",  "Merger builder"};
  return panels;
}

Lesson parseLesson(std::string_view text, const std::string& name) {
  const Reader r(name);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw LessonError("lesson " + name + ": not JSON: " + e.what());
  }
  if (!j.is_object()) r.fail("(top)", "must be an object");
  for (const auto& [key, value] : j.items()) {
    if (key != "title" && key != "summary" && key != "steps") r.fail(key, "unknown key");
  }
  Lesson lesson;
  lesson.name = name;
  lesson.title = r.text(j, "title", "", true);
  lesson.summary = r.text(j, "summary", "", true);
  if (!j.contains("steps") || !j["steps"].is_array() || j["steps"].empty()) {
    r.fail("steps", "must be a list of at least one step");
  }
  for (std::size_t k = 0; k < j["steps"].size(); ++k) {
    lesson.steps.push_back(r.step(j["steps"][k], "steps[" + std::to_string(k) + "].", k == 0));
  }
  return lesson;
}

const std::vector<Lesson>& lessons() {
  static const std::vector<Lesson> all = [] {
    std::vector<Lesson> out;
    for (const EmbeddedLesson& e : embeddedLessons()) out.push_back(parseLesson(e.text, e.name));
    return out;
  }();
  return all;
}

const Lesson& findLesson(const std::string& name) {
  std::string names;
  for (const Lesson& l : lessons()) {
    if (l.name == name) return l;
    names += (names.empty() ? "" : ", ") + l.name;
  }
  throw LessonError("no lesson named \"" + name + "\": the lessons are " + names +
                    " (bhviz --list-lessons)");
}

}  // namespace bhviz::app
