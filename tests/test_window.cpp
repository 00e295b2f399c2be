// The window front end: the real GLFW window under a virtual display (xvfb-run, as in CI), the
// message without a display, the window's screenshot, and the window's pieces that need no GL
// (the per-particle vertex rule, the timing history, the command line).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "app/cli.h"
#include "app/particle_view.h"
#include "app/perf_history.h"
#include "app/vertex_rule.h"
#include "sim/ic/initial_conditions.h"
#include "test_render_support.h"

namespace {

using namespace bhviz::test;
using bhviz::app::ColorBy;

bool haveXvfb() { return std::system("command -v xvfb-run >/dev/null 2>&1") == 0; }

/// bhviz in a fresh virtual display of 1280x720 (xvfb-run -a picks a free display number).
Process runInWindow(const std::string& args, const std::string& env = "") {
  return runBhviz(args, env + (env.empty() ? "" : " ") +
                            "xvfb-run -a -s '-screen 0 1280x720x24'");
}

std::size_t lineCount(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

TEST(WindowExe, WithoutDisplaySaysHowToRunHeadlessInOneLine) {
  const Process p =
      runBhviz("--backend cpu --n 100", "env -u DISPLAY -u WAYLAND_DISPLAY");
  EXPECT_EQ(p.status, 2) << p.err;
  EXPECT_EQ(lineCount(p.err), 1u) << p.err;
  EXPECT_NE(p.err.find("--headless"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("xvfb-run"), std::string::npos) << p.err;
  EXPECT_TRUE(p.out.empty()) << p.out;
}

TEST(WindowExe, EveryPanelDrawsWithoutGlErrors) {
  if (!haveXvfb()) GTEST_SKIP() << "xvfb-run is not installed (scripts/install-deps.sh)";
  // All panels open, both overlays on, a few frames of a small merger on the CPU backend.
  const Process p = runInWindow("--backend cpu --n 3000 --quit-after 5 --color speed --show-halo",
                                "BHVIZ_UI_ALL_PANELS=1");
  EXPECT_EQ(p.status, 0) << p.out << p.err;
  EXPECT_EQ(p.err.find("GL error"), std::string::npos) << p.err;
  EXPECT_NE(p.out.find("bhviz: window 1280x720, merger, N = 3000, cpu backend"), std::string::npos)
      << p.out;
}

TEST(WindowExe, AccuracyMeterAndSweepPlotDrawWithoutGlErrors) {
  if (!haveXvfb()) GTEST_SKIP() << "xvfb-run is not installed (scripts/install-deps.sh)";
  // The meter panel is open by default; BHVIZ_UI_SWEEP starts the panel's sweep (28 points,
  // one per job) at the first frame, so its plot draws with points.
  const Process p = runInWindow("--backend cpu --scenario plummer --n 1500 --quit-after 250",
                                "BHVIZ_UI_SWEEP=1 BHVIZ_UI_ALL_PANELS=1");
  EXPECT_EQ(p.status, 0) << p.out << p.err;
  EXPECT_EQ(p.err.find("GL error"), std::string::npos) << p.err;
  EXPECT_NE(p.out.find("bhviz: sweep done, 28 points"), std::string::npos) << p.out << p.err;
}

TEST(WindowExe, ScreenshotOfTheWindowIsAPicture) {
  if (!haveXvfb()) GTEST_SKIP() << "xvfb-run is not installed (scripts/install-deps.sh)";
  TempDir dir;
  const fs::path shot = dir.path / "window.png";
  const Process p = runInWindow("--backend cpu --scenario galaxy --n 4000 --size 480x320 "
                                "--quit-after 3 --screenshot " + shot.string());
  ASSERT_EQ(p.status, 0) << p.out << p.err;
  const bhviz::render::Image img = bhviz::render::readPng(shot);
  EXPECT_EQ(img.width, 480);
  EXPECT_EQ(img.height, 320);
  const ImageStats s = imageStats(img);
  EXPECT_GT(s.litFraction, 0.005) << "the galaxy should light part of the picture";
  EXPECT_LT(s.litFraction, 0.9);
}

// ---- without GL -----------------------------------------------------------------------------

TEST(VertexRule, IsWhatParticleViewWrites) {
  const bhviz::sim::Particles p = bhviz::sim::makeScenario("merger", 2000, 3);
  for (ColorBy colour : {ColorBy::Component, ColorBy::Speed, ColorBy::Bin}) {
    bhviz::app::ViewSettings settings;
    settings.colorBy = colour;
    bhviz::app::ParticleView view(settings);
    view.calibrate(p);
    const bhviz::app::VertexRule rule = view.rule();
    std::vector<bhviz::render::ParticleVertex> vertices;
    view.fill(p, vertices);
    int hidden = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      const float v = bhviz::app::vertexValue(rule, p.tag[i], p.vel[i], p.bin[i]);
      ASSERT_EQ(v, vertices[i].value) << "particle " << i;
      hidden += v < 0.0f;
    }
    EXPECT_GT(hidden, 0) << "the halo is hidden by default";
  }
}

TEST(PerfHistory, RingKeepsTheNewestAndAverageSmooths) {
  bhviz::app::Ring<int> ring(3);
  for (int i = 1; i <= 5; ++i) ring.push(i);
  ASSERT_EQ(ring.size(), 3u);
  EXPECT_EQ(ring[0], 3);
  EXPECT_EQ(ring.back(), 5);

  bhviz::app::PerfHistory h;
  bhviz::app::FrameRecord r;
  r.frameMs = 10.0;
  r.substeps = 2;
  r.step[bhviz::sim::Stage::Walk] = 4.0;
  r.step.interactions = {300, 100, 10};
  h.push(r);  // the first frame seeds the average
  EXPECT_DOUBLE_EQ(h.fps(), 100.0);
  EXPECT_DOUBLE_EQ(h.interactionsPerParticle(), 40.0);
  EXPECT_DOUBLE_EQ(h.interactionsPerSecond(), 400.0 / 4e-3);
  r.frameMs = 20.0;
  r.substeps = 0;  // paused: the step averages keep their values
  r.step = {};
  h.push(r);
  EXPECT_NEAR(h.smoothed().frameMs, 11.0, 1e-12);
  EXPECT_DOUBLE_EQ(h.smoothed().step[bhviz::sim::Stage::Walk], 4.0);
  EXPECT_EQ(h.frames().size(), 2u);
}

TEST(WindowCli, PictureOptionsApplyToTheWindowAndHeadlessOnlyOptionsSaySo) {
  std::ostringstream out;
  const auto o = bhviz::app::parseCommandLine(
      std::vector<std::string>{"--color", "speed", "--size", "640x480", "--show-halo",
                               "--quit-after", "7"},
      out);
  ASSERT_TRUE(o.has_value());
  EXPECT_FALSE(o->headless);
  EXPECT_EQ(o->frames.colorBy, ColorBy::Speed);
  EXPECT_EQ(o->frames.width, 640);
  EXPECT_EQ(o->quitAfter, 7);
  EXPECT_FALSE(o->nGiven);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--steps", "3"}, {"--quit-after", "0"}, {"--frames", "/tmp"}}) {
    try {
      bhviz::app::parseCommandLine(args, out);
      ADD_FAILURE() << args[0] << ": no error";
    } catch (const bhviz::app::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(args[0]), std::string::npos) << e.what();
    }
  }
}

TEST(WindowCli, QuitAfterCapsAHeadlessRun) {
  const Process p = runBhviz("--headless --scenario plummer --n 300 --steps 10 --quit-after 2");
  EXPECT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.out.find("2 steps"), std::string::npos) << p.out;
}

}  // namespace
