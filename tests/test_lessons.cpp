// Guided lessons (app/core/lesson.h): the built-in ones parse, broken ones are refused naming the
// key, --list-lessons lists them, and every lesson runs headless at small N with a picture per
// step and answers that say what the physics says (a smaller theta: smaller error, more
// interactions; block steps save work; tidal tails pull disk stars out).
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "app/core/lesson.h"
#include "app/core/lesson_measure.h"
#include "app/window/app_state.h"
#include "app/window/dock.h"
#include "render/image.h"
#include "sim/ic/scenario_file.h"
#include "test_render_support.h"

namespace {

using namespace bhviz;
using app::Lesson;
using app::LessonError;

bool haveXvfb() { return std::system("command -v xvfb-run >/dev/null 2>&1") == 0; }

std::vector<double> numbersAfter(const std::string& text, const std::string& pattern) {
  std::vector<double> out;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    out.push_back(std::stod((*it)[1].str()));
  }
  return out;
}

TEST(Lessons, TheBuiltInOnesParseAndCoverTheFourTopics) {
  const std::vector<Lesson>& all = app::lessons();
  std::vector<std::string> names;
  for (const Lesson& l : all) {
    names.push_back(l.name);
    EXPECT_FALSE(l.title.empty());
    EXPECT_FALSE(l.steps.empty());
    EXPECT_TRUE(l.steps.front().scenario) << l.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"theta", "groups", "block-steps", "tidal-tails"}));
  EXPECT_EQ(&app::findLesson("groups"), &all[1]);
  try {
    app::findLesson("nope");
    FAIL() << "an unknown lesson was found";
  } catch (const LessonError& e) {
    EXPECT_NE(std::string(e.what()).find("tidal-tails"), std::string::npos) << e.what();
  }
}

// Every panel a lesson may point at is a panel of the window.
TEST(Lessons, TheirPanelsAreTheWindowsPanels) {
  for (const std::string& title : app::lessonPanels()) {
    bool found = false;
    for (std::size_t i = 0; i < app::kPanelCount; ++i) {
      found = found || title == app::panelTitle(static_cast<app::PanelId>(i));
    }
    EXPECT_TRUE(found) << title;
  }
}

TEST(Lessons, MistakesAreOneLineNamingTheKey) {
  const std::string step = R"({"title": "t", "text": "x", "scenario": "plummer", "question": "q",)"
                           R"( "measure": {"kind": "bins"}})";
  const auto expectError = [](const std::string& text, const std::string& key) {
    try {
      app::parseLesson(text, "bad");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const LessonError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(key), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  };
  const Lesson ok =
      app::parseLesson(R"({"title": "T", "summary": "S", "steps": [)" + step + "]}", "ok");
  EXPECT_EQ(ok.steps.size(), 1u);
  expectError(R"({"title": "T", "summary": "S", "steps": []})", "steps");
  expectError(R"({"title": "T", "summary": "S", "colour": 1, "steps": [)" + step + "]}", "colour");
  expectError(R"({"title": "T", "summary": "S", "steps": [{"title": "t", "text": "x"}]})",
              "steps[0].scenario");
  expectError(R"({"title": "T", "summary": "S", "steps": [{"title": "t", "text": "x",)"
              R"( "scenario": "no-such-scenario"}]})",
              "steps[0].scenario");
  expectError(R"({"title": "T", "summary": "S", "steps": [{"title": "t", "text": "x",)"
              R"( "scenario": "plummer", "panel": "Cockpit"}]})",
              "steps[0].panel");
  expectError(R"({"title": "T", "summary": "S", "steps": [{"title": "t", "text": "x",)"
              R"( "scenario": "plummer", "measure": {"kind": "bins"}}]})",
              "steps[0].question");
  expectError(R"({"title": "T", "summary": "S", "steps": [{"title": "t", "text": "x",)"
              R"( "scenario": "plummer", "params": {"theta": 7}}]})",
              "steps[0].params.theta");
  expectError(R"({"title": "T", "summary": "S", "steps": [{"title": "t", "text": "x",)"
              R"( "scenario": "plummer", "question": "q", "measure": {"kind": "compare",)"
              R"( "param": "theta", "values": []}}]})",
              "steps[0].measure.values");
  expectError("{not json", "not JSON");
}

TEST(Lessons, StepParamsTakeTheScenariosSuggestionsThenTheStepsOwn) {
  const Lesson& blocks = app::findLesson("block-steps");
  const sim::SimParams p = app::stepParams(sim::SimParams{}, blocks.steps[0]);
  EXPECT_EQ(p.stepping, sim::TimeStepping::Block);
  EXPECT_EQ(p.dtMax, 0.125f) << "the step's own dt wins over the scenario's";
  EXPECT_EQ(p.softening, 0.01f);
  const Lesson& theta = app::findLesson("theta");
  const sim::SimParams q = app::stepParams(sim::SimParams{}, theta.steps[0]);
  EXPECT_EQ(q.softening, sim::resolveScenario("plummer").softening);
  EXPECT_EQ(q.mac, sim::MacKind::BarnesHut);
}

TEST(LessonCli, ListsOneLessonALineNameFirst) {
  const test::Process p = test::runBhviz("--list-lessons");
  ASSERT_EQ(p.status, 0) << p.err;
  std::istringstream lines(p.out);
  std::size_t k = 0;
  for (std::string line; std::getline(lines, line); ++k) {
    ASSERT_LT(k, app::lessons().size()) << p.out;
    EXPECT_EQ(line.rfind(app::lessons()[k].name + "  ", 0), 0u) << line;
  }
  EXPECT_EQ(k, app::lessons().size());
}

TEST(LessonCli, UnknownLessonsAndClashingOptionsExitTwoBeforeAnyWork) {
  test::Process p = test::runBhviz("--headless --lesson nope");
  EXPECT_EQ(p.status, 2);
  EXPECT_NE(p.err.find("--lesson"), std::string::npos) << p.err;
  p = test::runBhviz("--headless --lesson theta --scenario merger");
  EXPECT_EQ(p.status, 2);
  EXPECT_NE(p.err.find("--scenario does not go with --lesson"), std::string::npos) << p.err;
}

/// A lesson headless at N = `n`, pictures in a fresh directory; its output, and the pictures.
struct LessonRun {
  test::Process p;
  std::vector<render::Image> pictures;
};

LessonRun runLesson(const std::string& name, std::size_t n) {
  test::TempDir dir;
  LessonRun run;
  run.p = test::runBhviz("--headless --backend cpu --threads 2 --lesson " + name + " --n " +
                         std::to_string(n) + " --size 320x180 --frames " + dir.path.string());
  for (std::size_t k = 0; k < app::findLesson(name).steps.size(); ++k) {
    const std::filesystem::path file = dir.path / ("frame_00000" + std::to_string(k) + ".png");
    if (std::filesystem::exists(file)) run.pictures.push_back(render::readPng(file));
  }
  return run;
}

void expectEveryStepShown(const LessonRun& run, const std::string& name) {
  ASSERT_EQ(run.p.status, 0) << run.p.out << run.p.err;
  const Lesson& lesson = app::findLesson(name);
  EXPECT_EQ(run.pictures.size(), lesson.steps.size()) << run.p.out;
  for (const render::Image& img : run.pictures) {
    EXPECT_EQ(img.width, 320);
    EXPECT_GT(test::imageStats(img).litFraction, 0.001) << "a picture of the scene";
  }
  std::size_t measured = 0;
  for (const app::LessonStep& s : lesson.steps) {
    EXPECT_NE(run.p.out.find(s.title), std::string::npos) << s.title;
    measured += s.measure.kind != app::LessonMeasure::Kind::None;
  }
  std::size_t said = 0;
  for (std::size_t at = 0; (at = run.p.out.find("\nmeasured:\n", at)) != std::string::npos; ++at) {
    ++said;
  }
  EXPECT_EQ(said, measured) << run.p.out;
}

TEST(LessonHeadless, ThetaTradesErrorForInteractions) {
  const LessonRun run = runLesson("theta", 3000);
  expectEveryStepShown(run, "theta");
  // The last step measures theta 0.8, 0.5, 0.3 in that order.
  const std::vector<double> median = numbersAfter(run.p.out, R"(median\s+error\s+([0-9.e+-]+))");
  const std::vector<double> inter =
      numbersAfter(run.p.out, R"(([0-9]+)\s+interactions\s+a\s+star)");
  ASSERT_EQ(median.size(), 4u) << run.p.out;
  ASSERT_EQ(inter.size(), 4u);
  EXPECT_GT(median[1], median[2]);
  EXPECT_GT(median[2], median[3]);
  EXPECT_LT(inter[1], inter[2]);
  EXPECT_LT(inter[2], inter[3]);
  EXPECT_LT(inter[3], 2999.0) << "fewer than direct summation";
}

TEST(LessonHeadless, GroupsShareWalksAndBlockStepsSaveWork) {
  const LessonRun groups = runLesson("groups", 3000);
  expectEveryStepShown(groups, "groups");
  const LessonRun blocks = runLesson("block-steps", 3000);
  expectEveryStepShown(blocks, "block-steps");
  const std::vector<double> shares =
      numbersAfter(blocks.p.out, R"(:\s+([0-9.]+)\s+%\s+of\s+the\s+stars)");
  ASSERT_GE(shares.size(), 2u) << "more than one bin: " << blocks.p.out;
  double sum = 0.0;
  for (double s : shares) sum += s;
  EXPECT_NEAR(sum, 100.0, 0.5);
  const std::vector<double> saved = numbersAfter(blocks.p.out, R"(([0-9.]+)x\s+less\s+work)");
  ASSERT_EQ(saved.size(), 1u) << blocks.p.out;
  EXPECT_GT(saved[0], 1.2);
}

TEST(LessonHeadless, TidalTailsPullDiskStarsOut) {
  const LessonRun run = runLesson("tidal-tails", 2000);
  expectEveryStepShown(run, "tidal-tails");
  const std::vector<double> spread =
      numbersAfter(run.p.out, R"(:\s+([0-9.]+)\s+%\s+of\s+the\s+disk\s+stars\s+are\s+farther)");
  ASSERT_EQ(spread.size(), 3u) << run.p.out;
  EXPECT_GT(spread[2], 2.0 * spread[0] + 1.0) << run.p.out;
}

// The window opens on a lesson (--lesson), its step's panel shown: the first step of
// block-steps runs its stretch of time and is measured within a few frames.
TEST(LessonWindow, RunsAStepAndMeasuresIt) {
  if (!haveXvfb()) GTEST_SKIP() << "xvfb-run is not installed (scripts/install-deps.sh)";
  const test::Process p =
      test::runBhviz("--backend cpu --lesson block-steps --n 3000 --quit-after 40",
                     "xvfb-run -a -s '-screen 0 1280x720x24'");
  ASSERT_EQ(p.status, 0) << p.out << p.err;
  EXPECT_EQ(p.err.find("GL error"), std::string::npos) << p.err;
  EXPECT_NE(p.out.find("lesson: step 1 ran to t = "), std::string::npos) << p.out;
}

}  // namespace
