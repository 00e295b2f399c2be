// The window front end: the real GLFW window under a virtual display (xvfb-run, as in CI), the
// message without a display, the window's screenshot, and the window's pieces that need no GL
// (the per-particle vertex rule, the timing history, the command line).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "app/core/cli.h"
#include "app/core/perf_history.h"
#include "app/core/sim_session.h"
#include "app/core/vertex_rule.h"
#include "app/core/video.h"
#include "app/scene/frames.h"
#include "app/scene/gl_context.h"
#include "app/scene/particle_view.h"
#include "app/window/recording.h"
#include "session_support.h"
#include "sim/ic/initial_conditions.h"
#include "sim/io/snapshot.h"
#include "test_render_support.h"
#include "walk_pixels.h"

namespace {

using namespace bhviz::test;
using bhviz::app::ColorBy;

bool haveXvfb() { return std::system("command -v xvfb-run >/dev/null 2>&1") == 0; }

/// bhviz in a fresh virtual display of 1280x720 (xvfb-run -a picks a free display number).
Process runInWindow(const std::string& args, const std::string& env = "") {
  return runBhviz(args, env + (env.empty() ? "" : " ") + "xvfb-run -a -s '-screen 0 1280x720x24'");
}

std::size_t lineCount(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

TEST(WindowExe, WithoutDisplaySaysHowToRunHeadlessInOneLine) {
  const Process p = runBhviz("--backend cpu --n 100", "env -u DISPLAY -u WAYLAND_DISPLAY");
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
  const Process p = runInWindow(
      "--backend cpu --scenario galaxy --n 4000 --size 480x320 "
      "--quit-after 3 --screenshot " +
      shot.string());
  ASSERT_EQ(p.status, 0) << p.out << p.err;
  const bhviz::render::Image img = bhviz::render::readPng(shot);
  EXPECT_EQ(img.width, 480);
  EXPECT_EQ(img.height, 320);
  const ImageStats s = imageStats(img);
  EXPECT_GT(s.litFraction, 0.005) << "the galaxy should light part of the picture";
  EXPECT_LT(s.litFraction, 0.9);
}

bool haveXdotool() { return std::system("command -v xdotool >/dev/null 2>&1") == 0; }

// Key taps shorter than a frame, as xdotool types them (press and release back to back): eight
// F12 taps give eight screenshots, and a tapped Esc ends the window. The window is slow here
// (Mesa's software GL), so most taps fall between two frames; before the key queue
// (app/input.h) ImGui's once-a-frame key state lost them all.
TEST(WindowExe, KeyTapsShorterThanAFrameAreNotLost) {
  if (!haveXvfb()) GTEST_SKIP() << "xvfb-run is not installed (scripts/install-deps.sh)";
  if (!haveXdotool()) GTEST_SKIP() << "xdotool is not installed (scripts/install-deps.sh --tests)";
  TempDir dir;
  const fs::path script = dir.path / "taps.sh";
  {
    std::ofstream f(script);
    f << "cd '" << dir.path.string() << "' || exit 9\n"
      << "export " << freshConfig(dir) << "\n"
      << "'" << bhvizExecutable() << "' --backend cpu --scenario plummer --n 20000 "
      << "--size 640x360 >bhviz.out 2>&1 & pid=$!\n"
      << "w=$(timeout 60 xdotool search --sync --onlyvisible --name '^bhviz$' | head -1)\n"
      << "[ -n \"$w\" ] || { kill $pid; exit 8; }\n"
      << "xdotool windowfocus --sync \"$w\"; sleep 1\n"
      << "for i in 1 2 3 4 5 6 7 8; do xdotool key F12; sleep 0.4; done\n"
      << "sleep 1; xdotool key Escape\n"
      << "for i in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done\n"
      << "if kill -0 $pid 2>/dev/null; then kill $pid; wait $pid; exit 7; fi\n"
      << "wait $pid\n";
  }
  const std::string cmd = "xvfb-run -a -s '-screen 0 1280x720x24' sh '" + script.string() + "'";
  const int raw = std::system(cmd.c_str());
  const int status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  const std::string log = readText(dir.path / "bhviz.out");
  EXPECT_EQ(status, 0) << "7: Esc did not end the window; 8: no window appeared\n" << log;
  int shots = 0;
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    const std::string name = entry.path().filename().string();
    shots += name.rfind("bhviz-", 0) == 0 && entry.path().extension() == ".png";
  }
  EXPECT_EQ(shots, 8) << log;
}

// The Files panel's paths without clicking: --load opens the window on a snapshot (its N), and
// --video records the window's frames (every panel drawn, the Files panel among them).
TEST(WindowExe, LoadsASnapshotAndRecordsAVideo) {
  if (!haveXvfb()) GTEST_SKIP() << "xvfb-run is not installed (scripts/install-deps.sh)";
  TempDir dir;
  const fs::path snapshot = dir.path / "start.tipsy", video = dir.path / "window.mp4";
  bhviz::sim::io::writeSnapshot(snapshot.string(), bhviz::sim::makeScenario("plummer", 1500, 2),
                                2.0);
  const Process p = runInWindow("--backend cpu --size 320x240 --quit-after 4 --load " +
                                    snapshot.string() + " --video " + video.string(),
                                "BHVIZ_UI_ALL_PANELS=1");
  ASSERT_EQ(p.status, 0) << p.out << p.err;
  EXPECT_EQ(p.err.find("GL error"), std::string::npos) << p.err;
  EXPECT_NE(p.out.find("file " + snapshot.string() + ", N = 1500"), std::string::npos) << p.out;
  if (!bhviz::app::findFfmpeg()) {
    // The window still opens, and says why it records nothing.
    EXPECT_NE(p.out.find("--video needs ffmpeg on PATH"), std::string::npos) << p.out;
    EXPECT_FALSE(fs::exists(video));
    return;
  }
  EXPECT_NE(p.out.find("recorded 4 frames in " + video.string()), std::string::npos) << p.out;
  EXPECT_FALSE(fs::exists(video.string() + ".tmp"));
  const fs::path probe = dir.path / "probe.txt";
  ASSERT_EQ(std::system(("ffprobe -v error -count_frames -select_streams v:0 -show_entries "
                         "stream=nb_read_frames,width,height -of csv=p=0 '" +
                         video.string() + "' >'" + probe.string() + "'")
                            .c_str()),
            0);
  EXPECT_EQ(readText(probe), "320,240,4\n");
}

// The Record button's PNG path: every K-th offered frame written, numbered as --frames numbers
// them, at the size recording started with.
TEST(WindowRecorder, WritesEveryKthFrameAsPng) {
  const char* noGl = std::getenv("BHVIZ_NO_GL");
  if (noGl != nullptr && noGl[0] == '1') GTEST_SKIP() << "BHVIZ_NO_GL=1";
  std::unique_ptr<bhviz::app::HeadlessGlContext> context;
  try {
    context = bhviz::app::HeadlessGlContext::create();
  } catch (const bhviz::app::GlContextUnavailable& e) {
    FAIL() << e.what();
  }
  TempDir dir;
  {
    bhviz::render::Renderer renderer;
    const bhviz::render::ParticleVertex v{0.0f, 0.0f, 0.0f, 0.5f};
    renderer.setParticles(&v, 1);
    bhviz::render::Camera camera;
    bhviz::app::WindowRecorder rec;
    rec.startFrames((dir.path / "frames").string(), 64, 48, 2);
    for (int i = 0; i < 5; ++i) rec.frame(renderer, camera, bhviz::app::sceneRenderParams());
    EXPECT_EQ(rec.framesWritten(), 3);
    EXPECT_EQ(rec.stop(), "bhviz: recorded 3 frames in " + (dir.path / "frames").string());
    EXPECT_FALSE(rec.active());
  }
  const bhviz::render::Image img = bhviz::render::readPng(dir.path / "frames" / "frame_000002.png");
  EXPECT_EQ(img.width, 64);
  EXPECT_EQ(img.height, 48);
  EXPECT_FALSE(fs::exists(dir.path / "frames" / "frame_000003.png"));
  // A file where the directory should be: refused, nothing starts.
  std::ofstream(dir.path / "file") << "x";
  bhviz::app::WindowRecorder rec;
  EXPECT_THROW(rec.startFrames((dir.path / "file").string(), 64, 48, 1), std::runtime_error);
  EXPECT_FALSE(rec.active());
}

// The Walk panel open with a pick made from the command line (as a click would): it draws
// without GL errors, says what it picked, and the window's screenshot shows the interaction list
// in its three colours.
TEST(WindowExe, WalkPanelWithAPickShowsTheInteractionList) {
  if (!haveXvfb()) GTEST_SKIP() << "xvfb-run is not installed (scripts/install-deps.sh)";
  TempDir dir;
  const fs::path shot = dir.path / "walk.png";
  const Process p = runInWindow(
      "--backend cpu --scenario plummer --n 3000 --pick 17 --size 480x320 "
      "--quit-after 5 --screenshot " +
          shot.string(),
      "BHVIZ_UI_ALL_PANELS=1");
  ASSERT_EQ(p.status, 0) << p.out << p.err;
  EXPECT_EQ(p.err.find("GL error"), std::string::npos) << p.err;
  EXPECT_NE(p.out.find("bhviz: walk of particle 17"), std::string::npos) << p.out;
  const WalkPixels n = walkPixels(bhviz::render::readPng(shot));
  EXPECT_GT(n.accepted, 100u);
  EXPECT_GT(n.leaf, 100u);
  EXPECT_GT(n.opened, 20u);
  // A pick the window's particles do not have is one line, before anything runs: not even a
  // display is needed for it.
  const Process bad =
      runBhviz("--backend cpu --scenario plummer --n 3000 --pick 3000 --quit-after 1",
               "env -u DISPLAY -u WAYLAND_DISPLAY");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--pick = 3000 is out of range"), std::string::npos) << bad.err;
}

// ---- without GL -----------------------------------------------------------------------------

namespace session_test {

using bhviz::test::plummerScene;

bhviz::sim::SimParams blockParams() {
  bhviz::sim::SimParams p = bhviz::sim::defaultSimParams();
  p.stepping = bhviz::sim::TimeStepping::Block;
  p.dtMax = 0.125f;
  p.maxBinDepth = 4;
  return p;
}

}  // namespace session_test

// What the Files panel's Save and Load call: SimSession::save, then a session built from the
// file. Mid block step, save first finishes the step; the loaded session starts at the saved
// time with the saved particles (HDF5 keeps ids; Tipsy positions, velocities, masses).
TEST(SimSessionFiles, SaveThenLoadRoundTripsTheParticles) {
  using namespace session_test;
  namespace io = bhviz::sim::io;
  TempDir dir;
  bhviz::app::SimSession session(plummerScene(400), blockParams());
  for (int i = 0; i < 3; ++i) session.step();
  const std::string path = (dir.path / (io::haveHdf5() ? "s.hdf5" : "s.tipsy")).string();
  session.save(path);
  const bhviz::sim::Simulation& sim = session.simulation();
  ASSERT_TRUE(sim.synchronized());
  EXPECT_GT(sim.time(), 0.0);
  const bhviz::sim::Particles saved = sim.particles();

  bhviz::app::SceneSettings fromFile = plummerScene(7);  // N comes from the file
  fromFile.snapshotPath = path;
  bhviz::app::SimSession loaded(fromFile, blockParams());
  EXPECT_EQ(loaded.scene().n, 400u);
  EXPECT_DOUBLE_EQ(loaded.simulation().time(), sim.time());
  const bhviz::sim::Particles& back = loaded.initial();
  ASSERT_EQ(back.size(), saved.size());
  std::size_t matched = 0;
  for (std::size_t i = 0; i < saved.size(); ++i) {
    for (std::size_t j = 0; j < back.size(); ++j) {
      if (std::memcmp(&saved.posMass[i], &back.posMass[j], sizeof saved.posMass[i]) == 0 &&
          std::memcmp(&saved.vel[i], &back.vel[j], 3 * sizeof(float)) == 0) {
        if (io::haveHdf5()) {
          EXPECT_EQ(saved.id[i], back.id[j]);
        }
        ++matched;
        break;
      }
    }
  }
  EXPECT_EQ(matched, saved.size());
  // The loaded session steps on from there.
  loaded.step();
  EXPECT_GT(loaded.simulation().time(), sim.time());
}

// The energy plot's samples: taken where every particle's step ends, where the potentials are
// current (the backends compute them only there). A sample due in the middle of a block step is
// taken by the first substep that ends it, also after a single step has moved the frames off the
// steps' grid; a forced one (a single step) updates the panel but stays off the plot.
TEST(SimSessionDiagnostics, SamplesAreTakenWhereEveryStepEndsAndNeverStop) {
  using namespace session_test;
  bhviz::app::SimSession session(plummerScene(400), blockParams());
  const double dtMax = session.simulation().params().dtMax;
  bhviz::app::FrameBudget budget;
  budget.simTimePerFrame = 0.3f * float(dtMax);  // frames end mostly in the middle of a step
  // Never cut short by the wall clock (a loaded machine took 1 s for the test once, and a frame
  // past 60 ms owes the rest: fewer step ends, fewer samples than asserted).
  budget.maxWallMs = 1e9f;
  const auto onGrid = [&](double t) { return std::fabs(t / dtMax - std::round(t / dtMax)) < 1e-9; };
  const auto run = [&](int frames) {
    const std::size_t before = session.diagnosticsHistory().size();
    for (int i = 0; i < frames; ++i) {
      session.frame(budget, false);
      session.sampleDiagnostics(0.0);
    }
    return session.diagnosticsHistory().size() - before;
  };
  EXPECT_GE(run(20), 5u) << "samples while running";
  session.step();  // one substep: the frames' targets are off the grid from here
  ASSERT_FALSE(session.simulation().synchronized());
  const std::size_t plotted = session.diagnosticsHistory().size();
  EXPECT_TRUE(session.sampleDiagnostics(0.0, true)) << "forced, mid step";
  EXPECT_DOUBLE_EQ(session.diagnostics().time, session.simulation().time());
  EXPECT_EQ(session.diagnosticsHistory().size(), plotted) << "a mid-step sample on the plot";
  EXPECT_GE(run(20), 5u) << "samples after a single step";
  const auto& h = session.diagnosticsHistory();
  for (std::size_t i = 0; i < h.size(); ++i) {
    EXPECT_TRUE(onGrid(h[i].time)) << "sample " << i << " at t = " << h[i].time;
  }
}

// What the Accuracy panel's N_leaf and N_group reach: the running backend's limits are the
// sliders' ranges, and a value beyond them (typed, or kept from another backend) is refused
// with one line while the simulation runs on with its parameters: nothing throws out of a frame.
TEST(SimSessionLimits, AValueBeyondTheBackendsLimitIsRefusedAndTheRunGoesOn) {
  using namespace session_test;
  bhviz::app::SimSession session(plummerScene(300), blockParams());
  const bhviz::sim::BackendLimits limits = session.limits();
  EXPECT_EQ(limits.maxGroupSize, bhviz::sim::kMaxGroupSize);
  EXPECT_EQ(limits.maxLeafSize, bhviz::sim::kMaxLeafSize);
  bhviz::sim::SimParams p = session.simulation().params();
  p.nGroup = limits.maxGroupSize + 1;
  const std::string refused = session.applyParams(p);
  EXPECT_NE(refused.find("n-group"), std::string::npos) << refused;
  EXPECT_NE(refused.find("[1, " + std::to_string(limits.maxGroupSize) + "]"), std::string::npos)
      << refused;
  EXPECT_EQ(refused.find('\n'), std::string::npos);
  EXPECT_EQ(session.simulation().params().nGroup, blockParams().nGroup);
  const double t = session.simulation().time();
  EXPECT_NO_THROW(session.step());
  EXPECT_GT(session.simulation().time(), t);
  p.nGroup = limits.maxGroupSize;
  EXPECT_EQ(session.applyParams(p), "");
  EXPECT_EQ(session.simulation().params().nGroup, limits.maxGroupSize);
}

// The window's run state lives in the session: pause stops the frames' stepping, a single step
// runs one substep and pauses, and a state that turns non-finite halts the session (paused
// until rebuilt) with one line naming the particles, instead of throwing out of the frame.
TEST(SimSessionRunState, PauseSingleStepAndHaltAfterANonFiniteState) {
  using namespace session_test;
  bhviz::app::SimSession session(plummerScene(300), bhviz::sim::defaultSimParams());
  bhviz::app::FrameBudget budget;
  budget.mode = bhviz::app::FrameBudget::Mode::Substeps;
  EXPECT_TRUE(session.frame(budget, false).stepped);
  session.setPaused(true);
  const double t = session.simulation().time();
  EXPECT_FALSE(session.frame(budget, false).stepped);
  EXPECT_EQ(session.simulation().time(), t);
  const bhviz::app::SimSession::Frame one = session.frame(budget, true);
  EXPECT_TRUE(one.stepped);
  EXPECT_EQ(one.advance.substeps, 1);
  EXPECT_TRUE(session.paused());

  // Velocities near the float limit: the first drift overflows.
  TempDir dir;
  bhviz::sim::Particles p = bhviz::sim::makePlummer(100, 3);
  for (auto& v : p.vel) v = {3e38f, -3e38f, 3e38f, 0.0f};
  const std::string path = (dir.path / "fast.tipsy").string();
  bhviz::sim::io::writeSnapshot(path, p, 0.0);
  bhviz::app::SceneSettings fromFile = plummerScene(100);
  fromFile.snapshotPath = path;
  bhviz::sim::SimParams longSteps = bhviz::sim::defaultSimParams();
  longSteps.dtMax = 4.0f;  // v·dt beyond the largest float
  bhviz::app::SimSession fast(fromFile, longSteps);
  const bhviz::app::SimSession::Frame bad = fast.frame(budget, false);
  EXPECT_FALSE(bad.stepped);
  EXPECT_NE(bad.notice.find("non-finite"), std::string::npos) << bad.notice;
  EXPECT_TRUE(fast.halted());
  EXPECT_TRUE(fast.paused());
  fast.setPaused(false);
  EXPECT_TRUE(fast.paused()) << "a halted session stays paused until rebuilt";
  EXPECT_FALSE(fast.frame(budget, true).stepped);
}

// The window with a group size beyond the limit: refused on the command line before a window
// opens (exit 2, one line naming the option and the range).
TEST(WindowExe, GroupSizeBeyondTheBackendIsRefusedBeforeTheWindowOpens) {
  const Process p = runBhviz("--backend cpu --n 300 --n-group 1025 --quit-after 2",
                             "env -u DISPLAY -u WAYLAND_DISPLAY");
  EXPECT_EQ(p.status, 2) << p.err;
  EXPECT_EQ(lineCount(p.err), 1u) << p.err;
  EXPECT_NE(p.err.find("--n-group"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("[1, 1024]"), std::string::npos) << p.err;
}

TEST(SimSessionFiles, BadFilesChangeNothing) {
  using namespace session_test;
  namespace io = bhviz::sim::io;
  TempDir dir;
  bhviz::app::SimSession session(plummerScene(300), blockParams());
  session.step();
  const double t = session.simulation().time();
  // A name without a snapshot extension: refused before any substep.
  EXPECT_THROW(session.save((dir.path / "s.csv").string()), io::SnapshotError);
  EXPECT_EQ(session.simulation().time(), t);
  EXPECT_FALSE(fs::exists(dir.path / "s.csv"));
  // Not a snapshot: the session is not built (the window keeps the old one).
  const fs::path junk = dir.path / "junk.tipsy";
  std::ofstream(junk) << "not a snapshot at all, only some words in a file\n";
  bhviz::app::SceneSettings fromFile = plummerScene(300);
  fromFile.snapshotPath = junk.string();
  EXPECT_THROW(bhviz::app::SimSession(fromFile, blockParams()), io::SnapshotError);
}

TEST(VertexRule, IsWhatParticleViewWrites) {
  const bhviz::sim::Particles p = bhviz::sim::makeScenario("merger", 2000, 3);
  for (ColorBy colour : {ColorBy::Component, ColorBy::Speed, ColorBy::Bin, ColorBy::Population}) {
    for (bool dust : {false, true}) {
      bhviz::app::ViewSettings settings;
      settings.colorBy = colour;
      bhviz::app::ParticleView view(settings);
      view.calibrate(p);
      view.setDust(dust);
      const bhviz::app::VertexRule rule = view.rule();
      std::vector<bhviz::render::ParticleVertex> vertices;
      view.fill(p, vertices);
      int hidden = 0, dusty = 0;
      for (std::size_t i = 0; i < p.size(); ++i) {
        const float v = bhviz::app::vertexValue(rule, p.tag[i], p.id[i], p.vel[i], p.bin[i]);
        ASSERT_EQ(v, vertices[i].value) << "particle " << i;
        hidden += v < 0.0f;
        dusty += v >= bhviz::render::kDustValue;
      }
      EXPECT_GT(hidden, 0) << "the halo is hidden by default";
      EXPECT_EQ(dusty > 0, dust) << "a share of the disk carries dust when asked";
    }
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
  const auto o =
      bhviz::app::parseCommandLine(std::vector<std::string>{"--color", "speed", "--size", "640x480",
                                                            "--show-halo", "--quit-after", "7"},
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
