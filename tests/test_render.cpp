// The renderer through the headless path (EGL: NVIDIA device or Mesa surfaceless): scenes
// rendered offscreen and judged by statistics of their pixels, the vertex buffer contract, and
// the bhviz executable's --frames/--screenshot. CI has Mesa, so a missing context FAILS here;
// BHVIZ_NO_GL=1 skips these tests on purpose (a machine with no EGL at all).

#include <EGL/egl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "app/core/accuracy_meter.h"
#include "app/scene/frames.h"
#include "app/scene/gl_context.h"
#include "app/scene/gl_query.h"
#include "app/scene/overlay_view.h"
#include "app/scene/particle_view.h"
#include "render/renderer.h"
#include "sim/cpu/cpu_backend.h"
#include "sim/ic/initial_conditions.h"
#include "test_render_support.h"

namespace {

using bhviz::app::ColorBy;
using bhviz::app::SceneRenderer;
using bhviz::app::ViewSettings;
using bhviz::render::Image;
using bhviz::sim::Component;
using namespace bhviz::test;

constexpr int kWidth = 320;
constexpr int kHeight = 240;

void printStats(const char* name, const ImageStats& s) {
  std::printf("[stats] %-22s lit %.3f  saturated %.4f  mean %.4f  brightest (%.0f, %.0f)\n", name,
              s.litFraction, s.saturatedFraction, s.meanLuminance, s.brightestX, s.brightestY);
}

class RenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (glDisabled()) GTEST_SKIP() << "BHVIZ_NO_GL=1: render tests skipped on request";
    try {
      m_context = bhviz::app::HeadlessGlContext::create();
    } catch (const std::exception& e) {
      FAIL() << e.what()
             << " — install Mesa (libegl-mesa0, libgl1-mesa-dri), or set BHVIZ_NO_GL=1 to skip";
    }
    std::printf("[gl] %s\n", m_context->description().c_str());
  }
  void TearDown() override {
    m_scene.reset();
    m_context.reset();
  }

  SceneRenderer& scene(const ViewSettings& view) {
    m_scene = std::make_unique<SceneRenderer>(kWidth, kHeight, view);
    return *m_scene;
  }

  // The image of `p` seen through a fresh scene framed on it.
  Image renderScene(const bhviz::sim::Particles& p, const ViewSettings& view) {
    SceneRenderer& s = scene(view);
    s.frame(p);
    return s.render(p);
  }

  // Sharp, not blank, not burnt out, brightest where the centre of mass projects.
  void expectWellFormed(const char* name, const Image& img) {
    const ImageStats s = imageStats(img);
    printStats(name, s);
    EXPECT_GT(s.litFraction, 0.05) << name << ": almost blank";
    EXPECT_LT(s.litFraction, 0.95) << name << ": lit everywhere";
    EXPECT_LT(s.saturatedFraction, 0.05) << name << ": burnt out";
    const glm::vec3 com = m_scene->camera().project(m_scene->framing().centre, kWidth, kHeight);
    std::printf("[stats] %-22s centre of mass projects to (%.0f, %.0f)\n", name, com.x, com.y);
    EXPECT_NEAR(com.x, kWidth / 2.0, 1.0);  // the camera is centred on it
    EXPECT_NEAR(com.y, kHeight / 2.0, 1.0);
    const double tolerance = 0.08 * std::hypot(double(kWidth), double(kHeight));
    EXPECT_LT(std::hypot(s.brightestX - com.x, s.brightestY - com.y), tolerance)
        << name << ": the brightest region is not at the centre of mass";
  }

  std::unique_ptr<bhviz::app::HeadlessGlContext> m_context;
  std::unique_ptr<SceneRenderer> m_scene;
};

ViewSettings view(ColorBy c = ColorBy::Component) {
  ViewSettings v;
  v.colorBy = c;
  return v;
}

/// A renderer, a square target and a camera framing the unit sphere: for sprites placed by hand.
struct SpriteStage {
  SpriteStage(int side, float spriteSize, float brightness) : target(side, side) {
    camera.frameSphere({0, 0, 0}, 1.0f, 1.0f);
    params.particles.spriteSize = spriteSize;
    params.particles.brightness = brightness;
  }
  Image draw(const bhviz::render::ParticleVertex* v, std::size_t n) {
    renderer.setParticles(v, n);
    renderer.render(camera, params, target.target());
    return target.read();
  }
  Image draw(const std::vector<bhviz::render::ParticleVertex>& v) {
    return draw(v.data(), v.size());
  }

  bhviz::render::Renderer renderer;
  bhviz::render::OffscreenTarget target;
  bhviz::render::Camera camera;
  bhviz::render::RenderParams params;
};

TEST_F(RenderTest, PlummerSphereIsLitAndBrightestAtItsCentre) {
  const auto p = bhviz::sim::makePlummer(20000, 3);
  const Image img = renderScene(p, view());
  ASSERT_EQ(img.width, kWidth);
  ASSERT_EQ(img.height, kHeight);
  expectWellFormed("plummer", img);
}

TEST_F(RenderTest, GalaxyIsLitAndBrightestAtItsCentre) {
  const auto p = bhviz::sim::makeGalaxy(30000, 5);
  expectWellFormed("galaxy", renderScene(p, view()));
}

// The compute splat and the rasteriser draw the same sprites: the same picture up to rounding
// (fixed point against half-float blending) on a galaxy of many sprite sizes. Compared away
// from the picture's edges: a sprite whose centre is just outside is drawn in part by the splat
// (and by NVIDIA's rasteriser), dropped by Mesa's.
TEST_F(RenderTest, ComputeSplatDrawsWhatTheRasteriserDraws) {
  const auto p = bhviz::sim::makeGalaxy(30000, 5);
  SceneRenderer& s = scene(view());
  s.frame(p);
  s.camera().zoom(0.5f);  // near sprites of many pixels as well as the far minimum size
  s.params().spritePass = bhviz::render::SpritePass::Raster;
  const Image raster = s.render(p);
  s.params().spritePass = bhviz::render::SpritePass::Compute;
  const Image compute = s.render(p);
  ASSERT_EQ(raster.rgba.size(), compute.rgba.size());
  const int band = int(std::ceil(s.params().particles.maxSizePx / 2.0f));
  std::vector<int> diff;
  double sum = 0.0;
  for (int y = band; y < raster.height - band; ++y) {
    for (int x = band; x < raster.width - band; ++x) {
      for (int k = 0; k < 3; ++k) {
        diff.push_back(std::abs(int(raster.pixel(x, y)[k]) - int(compute.pixel(x, y)[k])));
        sum += diff.back();
      }
    }
  }
  ASSERT_FALSE(diff.empty()) << "the picture is smaller than two edge bands of " << band << " px";
  std::sort(diff.begin(), diff.end());
  const double mean = sum / double(diff.size());
  const int p999 = diff[diff.size() * 999 / 1000];
  std::printf(
      "[splat] |raster - compute| per channel, %d px from the edges: mean %.3f, 99.9th "
      "pct %d, max %d levels\n",
      band, mean, p999, diff.back());
  EXPECT_GT(imageStats(compute).litFraction, 0.05);
  EXPECT_LT(mean, 0.25);
  EXPECT_LE(p999, 3);
}

// Tone mapping writes an offscreen target's texture directly, and a framebuffer without one (the
// window's) through an image copied into it: the same picture both ways, bloom and all.
TEST_F(RenderTest, TargetWithoutItsTextureGetsTheSamePicture) {
  SpriteStage stage(96, 0.3f, 2.0f);
  const auto g = bhviz::sim::makePlummer(5000, 3);
  std::vector<bhviz::render::ParticleVertex> v;
  for (std::size_t i = 0; i < g.size(); ++i) {
    v.push_back({g.posMass[i].x, g.posMass[i].y, g.posMass[i].z, float(i % 5) / 4.0f});
  }
  stage.params.tone.bloomStrength = 0.5f;
  const Image direct = stage.draw(v);
  bhviz::render::RenderTarget copied = stage.target.target();
  ASSERT_NE(copied.colour, 0u);
  copied.colour = 0;
  stage.renderer.render(stage.camera, stage.params, copied);
  const Image viaCopy = stage.target.read();
  EXPECT_GT(imageStats(direct).litFraction, 0.01);
  EXPECT_EQ(viaCopy.rgba, direct.rgba);
}

// A sprite whose centre is just off the picture still lights the pixels its disc covers.
TEST_F(RenderTest, ComputeSplatDrawsSpritesReachingInFromOffThePicture) {
  SpriteStage stage(64, 0.6f, 2.0f);
  const bhviz::render::Camera& camera = stage.camera;
  // 3 pixels beyond the right edge, at the target's depth; the sprite is ~18 px across.
  const float pixelsPerUnit = camera.pixelsPerUnitAtUnitDepth(64.0f) / camera.distance;
  const glm::vec3 at = camera.target + camera.right() * ((32.0f + 3.0f) / pixelsPerUnit);
  ASSERT_GT(camera.project(at, 64, 64).x, 64.0f);
  const bhviz::render::ParticleVertex beyond{at.x, at.y, at.z, 0.5f};
  const Image img = stage.draw(&beyond, 1);
  EXPECT_GT(luminance(img.pixel(63, 32)), 0.08);  // the disc reaches in
  EXPECT_LT(luminance(img.pixel(0, 32)), 0.02);   // and is not wrapped round
}

// A large picture (4096 x 4096: 201 MB of fixed-point sums, past some GLs' largest storage
// block, where the renderer falls back to the raster pass) draws the same sprites in their
// colours whichever pass is asked for.
TEST_F(RenderTest, LargePictureDrawsTheSameWithEitherPass) {
  SpriteStage stage(4096, 0.05f, 2.0f);
  stage.params.particles.maxSizePx = 256.0f;
  stage.renderer.setPalette(
      bhviz::render::Palette::discrete({{1.0f, 0.2f, 0.1f}, {0.1f, 0.3f, 1.0f}}));
  const std::vector<bhviz::render::ParticleVertex> v = {{0.3f, 0.2f, 0.0f, 0.0f},
                                                        {-0.4f, -0.1f, 0.1f, 1.0f}};
  stage.params.spritePass = bhviz::render::SpritePass::Raster;
  const Image raster = stage.draw(v);
  stage.params.spritePass = bhviz::render::SpritePass::Compute;
  const Image compute = stage.draw(v);
  int worst = 0;
  for (std::size_t i = 0; i < raster.rgba.size(); ++i) {
    worst = std::max(worst, std::abs(int(raster.rgba[i]) - int(compute.rgba[i])));
  }
  const ImageStats s = imageStats(compute);
  EXPECT_GT(s.litFraction, 1e-4);
  EXPECT_GT(s.hue[0] + s.hue[11], 0.1);  // the red sprite
  EXPECT_GT(s.hue[7] + s.hue[8], 0.1);   // and the blue one, in their colours
  EXPECT_LE(worst, 3);
}

// Light far below one fixed-point unit per pixel is kept on average (stochastic rounding):
// 100 000 faint particles on one spot shine like one particle 100 000 times as bright.
TEST_F(RenderTest, ComputeSplatKeepsFaintLight) {
  constexpr int kFaint = 100000;
  const float bright = 1.0f;
  SpriteStage stage(64, 0.3f, bright / kFaint);  // 0.66 fixed-point units at the centre
  stage.params.spritePass = bhviz::render::SpritePass::Compute;
  const std::vector<bhviz::render::ParticleVertex> many(kFaint, {0, 0, 0, 0.5f});
  const Image faint = stage.draw(many);
  stage.params.particles.brightness = bright;
  const Image one = stage.draw(many.data(), 1);
  const ImageStats a = imageStats(faint), b = imageStats(one);
  std::printf("[splat] %d faint: mean luminance %.4f; one bright: %.4f\n", kFaint, a.meanLuminance,
              b.meanLuminance);
  EXPECT_GT(b.litFraction, 0.005);
  EXPECT_NEAR(a.meanLuminance, b.meanLuminance, 0.03 * b.meanLuminance);
}

TEST_F(RenderTest, PngRoundTripKeepsSizeAndPixels) {
  const auto p = bhviz::sim::makeGalaxy(10000, 5);
  const Image img = renderScene(p, view());
  TempDir dir;
  const auto path = dir.path / "galaxy.png";
  bhviz::render::writePng(path, img);
  const Image back = bhviz::render::readPng(path);
  EXPECT_EQ(back.width, kWidth);
  EXPECT_EQ(back.height, kHeight);
  EXPECT_EQ(back.rgba, img.rgba);
}

TEST_F(RenderTest, TreeOverlayAddsLinePixels) {
  const auto p = bhviz::sim::makePlummer(20000, 3);
  bhviz::sim::CpuBackend backend;
  backend.upload(p);
  bhviz::sim::SimParams params = bhviz::sim::defaultSimParams();
  backend.computeForces(bhviz::sim::Clock{0.0, 0, 0, params.dtMax}, params,
                        bhviz::sim::ForceTargets::All, false);
  bhviz::app::OverlayRequest request;
  request.cells = true;
  request.minLevel = 1;
  request.maxLevel = 4;
  const auto boxes = bhviz::app::overlayBoxes(backend, request);
  ASSERT_GT(boxes.size(), 8u);

  SceneRenderer& s = scene(view());
  s.frame(p);
  const Image plain = s.render(p);
  s.setBoxes(boxes);
  const Image withBoxes = s.render(p);
  const double changed = changedFraction(plain, withBoxes);
  std::printf("[stats] tree overlay (%zu boxes): %.4f of the pixels changed\n", boxes.size(),
              changed);
  EXPECT_GT(changed, 0.02);
  EXPECT_LT(changed, 0.6);
  s.params().overlay = false;  // the switch turns it off again
  EXPECT_LT(changedFraction(plain, s.render(p)), 1e-4);
}

// The overlay's lines (the merger builder's preview): drawn where their points project, in
// their colour, alpha-blended over the tone-mapped image, and off with the overlay switch.
TEST_F(RenderTest, LinesAppearWhereTheyProject) {
  constexpr int kSide = 200;
  SpriteStage stage(kSide, 0.05f, 0.05f);
  stage.camera.pitch = 0.4f;  // a tilted view: the lines' projections are not axis-aligned
  stage.camera.yaw = 0.7f;
  using bhviz::render::OverlayLine;
  const std::vector<OverlayLine> lines = {
      {{-0.8f, -0.5f, 0.0f}, {0.7f, 0.6f, 0.2f}, {1.0f, 0.0f, 0.0f, 1.0f}},   // opaque red
      {{-0.6f, 0.7f, -0.3f}, {0.5f, -0.7f, 0.4f}, {0.0f, 1.0f, 0.0f, 0.5f}},  // half green
  };
  stage.renderer.setLines(lines.data(), lines.size());
  EXPECT_EQ(stage.renderer.lineCount(), 2u);
  const Image img = stage.draw(nullptr, 0);
  const float side = static_cast<float>(kSide);
  // The brightest value of `channel` within a pixel of where `world` projects.
  const auto nearby = [&](const Image& im, const glm::vec3& world, int channel) {
    const glm::vec3 at = stage.camera.project(world, side, side);
    int best = 0;
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        const int x = std::clamp(static_cast<int>(at.x) + dx, 0, kSide - 1);
        const int y = std::clamp(static_cast<int>(at.y) + dy, 0, kSide - 1);
        best = std::max(best, static_cast<int>(im.pixel(x, y)[channel]));
      }
    }
    return best;
  };
  for (const float t : {0.1f, 0.3f, 0.65f, 0.9f}) {  // away from where the two cross
    const glm::vec3 red = glm::mix(lines[0].a, lines[0].b, t);
    const glm::vec3 green = glm::mix(lines[1].a, lines[1].b, t);
    EXPECT_GT(nearby(img, red, 0), 200) << "red line at t = " << t;
    EXPECT_LT(nearby(img, red, 1), 60) << "red line at t = " << t;
    const int g = nearby(img, green, 1);  // half of 255 over black, as the display stores it
    EXPECT_GT(g, 90) << "green line at t = " << t;
    EXPECT_LT(g, 170) << "green line at t = " << t;
    EXPECT_LT(nearby(img, green, 0), 60) << "green line at t = " << t;
  }
  // Nothing else is drawn: a few lit pixels per line length, the rest the black background.
  std::size_t lit = 0;
  for (int y = 0; y < kSide; ++y) {
    for (int x = 0; x < kSide; ++x) lit += img.pixel(x, y)[0] > 30 || img.pixel(x, y)[1] > 30;
  }
  EXPECT_GT(lit, 100u);
  EXPECT_LT(lit, 4u * kSide);
  stage.params.overlay = false;
  const Image off = stage.draw(nullptr, 0);
  EXPECT_EQ(imageStats(off).litFraction, 0.0);
  stage.params.overlay = true;
  stage.renderer.setLines(nullptr, 0);
  EXPECT_EQ(imageStats(stage.draw(nullptr, 0)).litFraction, 0.0);
}

TEST_F(RenderTest, ComponentAndSpeedColoursDifferInHue) {
  const auto p = bhviz::sim::makeGalaxy(30000, 5);
  const ImageStats byComponent = imageStats(renderScene(p, view(ColorBy::Component)));
  const ImageStats bySpeed = imageStats(renderScene(p, view(ColorBy::Speed)));
  const double d = hueDistance(byComponent, bySpeed);
  std::printf("[stats] hue distance component vs speed: %.3f\n", d);
  printStats("galaxy by component", byComponent);
  printStats("galaxy by speed", bySpeed);
  EXPECT_GT(d, 0.3);
}

TEST_F(RenderTest, HidingAComponentChangesTheImage) {
  const auto p = bhviz::sim::makeGalaxy(30000, 5);
  SceneRenderer withDisk(kWidth, kHeight, view());
  withDisk.frame(p);
  const Image shown = withDisk.render(p);
  ViewSettings noDisk = view();
  noDisk.visible[static_cast<std::size_t>(Component::Disk)] = false;
  SceneRenderer without(kWidth, kHeight, noDisk);
  without.frame(p);
  without.camera() = withDisk.camera();  // the same camera and look, only the disk hidden
  without.params() = withDisk.params();
  const Image hidden = without.render(p);
  const ImageStats a = imageStats(shown), b = imageStats(hidden);
  printStats("disk shown", a);
  printStats("disk hidden", b);
  const double changed = changedFraction(shown, hidden);
  std::printf("[stats] disk hidden: %.3f of the pixels changed\n", changed);
  EXPECT_LT(b.litFraction, 0.6 * a.litFraction);
  EXPECT_GT(changed, 0.1);
}

TEST_F(RenderTest, NegativeValueHidesAVertex) {
  SpriteStage stage(64, 0.3f, 2.0f);
  const bhviz::render::ParticleVertex shown{0, 0, 0, 0.5f};
  const ImageStats lit = imageStats(stage.draw(&shown, 1));
  const bhviz::render::ParticleVertex hidden{0, 0, 0, bhviz::render::kHiddenValue};
  const ImageStats dark = imageStats(stage.draw(&hidden, 1));
  EXPECT_GT(lit.litFraction, 0.005);
  EXPECT_NEAR(lit.brightestX, 32.0, 4.0);
  EXPECT_NEAR(lit.brightestY, 32.0, 4.0);
  EXPECT_EQ(dark.litFraction, 0.0);
}

TEST_F(RenderTest, VertexBufferIsExposedForInterop) {
  bhviz::render::Renderer r;
  r.reserveParticles(1000);
  const auto a = r.particleBuffer();
  EXPECT_NE(a.name, 0u);
  EXPECT_EQ(a.capacity, 1000u);
  EXPECT_EQ(a.bytes, 16000u);
  r.reserveParticles(500);  // fits: same storage
  EXPECT_EQ(r.particleBuffer().generation, a.generation);
  r.reserveParticles(2000);  // grows: a bridge must register it again
  const auto b = r.particleBuffer();
  EXPECT_EQ(b.name, a.name);
  EXPECT_EQ(b.bytes, 32000u);
  EXPECT_GT(b.generation, a.generation);
  r.setParticleCount(2000);
  EXPECT_EQ(r.particleCount(), 2000u);
  EXPECT_THROW(r.setParticleCount(2001), bhviz::render::GlError);
}

// Neither sprite pass, nor the dust pass before it, leaves the vertex buffer bound (to the
// splat's and the dust's storage slot, or through the bound vertex array): a buffer an import
// replaces would otherwise live on, and with it the memory it imported, until the next frame.
TEST_F(RenderTest, PassesLetGoOfTheVertexBuffer) {
  constexpr unsigned kShaderStorageBinding = 0x90D3;  // GL_SHADER_STORAGE_BUFFER_BINDING
  constexpr unsigned kVertexArrayBinding = 0x85B5;    // GL_VERTEX_ARRAY_BINDING
  const auto getIntegeri =
      reinterpret_cast<void (*)(unsigned, unsigned, int*)>(eglGetProcAddress("glGetIntegeri_v"));
  const auto getInteger =
      reinterpret_cast<void (*)(unsigned, int*)>(eglGetProcAddress("glGetIntegerv"));
  ASSERT_NE(getIntegeri, nullptr);
  ASSERT_NE(getInteger, nullptr);
  const auto p = bhviz::sim::makeGalaxy(5000, 7);
  SceneRenderer& s = scene(view());
  s.frame(p);
  s.params().extinction.enabled = true;
  for (const auto pass : {bhviz::render::SpritePass::Raster, bhviz::render::SpritePass::Compute}) {
    s.params().spritePass = pass;
    const Image img = s.render(p);
    EXPECT_GT(imageStats(img).litFraction, 0.05);
    int storage = -1, vertexArray = -1;
    getIntegeri(kShaderStorageBinding, 0, &storage);
    getInteger(kVertexArrayBinding, &vertexArray);
    const char* name = pass == bhviz::render::SpritePass::Raster ? "raster" : "compute";
    EXPECT_EQ(storage, 0) << name << ": a buffer left on storage slot 0";
    EXPECT_EQ(vertexArray, 0) << name << ": a vertex array left bound";
  }
}

// The window's GPU render time: a ring of timer queries read frames later. After some frames
// it reports a positive device time close to what a waiting query measures for the same draw.
TEST_F(RenderTest, TimerRingReportsTheRenderTimeWithoutWaiting) {
  const auto p = bhviz::sim::makeGalaxy(30000, 5);
  SceneRenderer& s = scene(view());
  s.frame(p);
  bhviz::app::GlTimerRing ring(&eglGetProcAddress);
  bhviz::app::GlQuery waiting(&eglGetProcAddress);
  EXPECT_LT(ring.poll(), 0.0);  // nothing measured yet
  std::vector<double> waited;
  double latest = -1.0;
  for (int frame = 0; frame < 12; ++frame) {
    ring.begin();
    s.render(p);  // reads the image back: the GL finishes each frame
    ring.end();
    latest = ring.poll();
    waiting.begin();
    s.render(p);
    waiting.end();
    waited.push_back(waiting.elapsedMs());
  }
  std::sort(waited.begin(), waited.end());
  const double median = waited[waited.size() / 2];
  std::printf("[timer] ring %.3f ms, waiting query median %.3f ms\n", latest, median);
  ASSERT_GT(latest, 0.0);
  EXPECT_LT(latest, 5.0 * median + 1.0);
  EXPECT_GT(latest, 0.2 * median);
}

// ---- the executable ---------------------------------------------------------------------

TEST_F(RenderTest, FramesEveryKStepsAndAScreenshot) {
  TempDir dir;
  const auto frames = dir.path / "frames";
  const auto shot = dir.path / "last.png";
  const Process p = runBhviz(
      "--headless --scenario plummer --n 2000 --steps 4 --frame-every 2 "
      "--size 160x120 --color speed --backend cpu --quiet --frames " +
      frames.string() + " --screenshot " + shot.string());
  ASSERT_EQ(p.status, 0) << p.err;
  for (int i = 0; i < 3; ++i) {  // steps 0, 2, 4
    const auto f = frames / bhviz::app::FrameRecorder::frameName(i);
    ASSERT_TRUE(fs::exists(f)) << f;
    const Image img = bhviz::render::readPng(f);
    EXPECT_EQ(img.width, 160);
    EXPECT_EQ(img.height, 120);
    EXPECT_GT(imageStats(img).litFraction, 0.02);
  }
  EXPECT_FALSE(fs::exists(frames / bhviz::app::FrameRecorder::frameName(3)));
  const Image last = bhviz::render::readPng(shot);
  EXPECT_EQ(last.width, 160);
  EXPECT_EQ(last.height, 120);
  // The final frame and the screenshot show the same state.
  EXPECT_LT(changedFraction(last, bhviz::render::readPng(frames / "frame_000002.png")), 1e-3);
}

TEST_F(RenderTest, OverlayOnTheCommandLineDrawsBoxes) {
  TempDir dir;
  const std::string common =
      "--headless --scenario galaxy --n 3000 --steps 0 --size 200x150 "
      "--backend cpu --quiet --screenshot ";
  ASSERT_EQ(runBhviz(common + (dir.path / "plain.png").string()).status, 0);
  const Process tree =
      runBhviz(common + (dir.path / "tree.png").string() + " --overlay tree --overlay-levels 1:4");
  ASSERT_EQ(tree.status, 0) << tree.err;
  const Process groups =
      runBhviz(common + (dir.path / "groups.png").string() + " --overlay groups");
  ASSERT_EQ(groups.status, 0) << groups.err;
  const Image plain = bhviz::render::readPng(dir.path / "plain.png");
  EXPECT_GT(changedFraction(plain, bhviz::render::readPng(dir.path / "tree.png")), 0.02);
  EXPECT_GT(changedFraction(plain, bhviz::render::readPng(dir.path / "groups.png")), 0.01);
}

// No EGL vendor at all (glvnd told to load none): one line and exit status 1, before any step.
TEST_F(RenderTest, MissingGlContextIsOneLineAndExitStatus1) {
  TempDir dir;
  const Process p =
      runBhviz("--headless --scenario plummer --n 1000 --steps 1 --quiet --screenshot " +
                   (dir.path / "x.png").string(),
               "__EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent/bhviz_no_vendor.json");
  EXPECT_EQ(p.status, 1);
  EXPECT_NE(p.err.find("cannot create a headless OpenGL 4.5 context"), std::string::npos) << p.err;
  EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << p.err;
  EXPECT_FALSE(fs::exists(dir.path / "x.png"));

  const Process bad =
      runBhviz("--headless --n 100 --steps 0 --quiet --screenshot " + (dir.path / "y.png").string(),
               "BHVIZ_EGL_PLATFORM=bogus");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("BHVIZ_EGL_PLATFORM"), std::string::npos) << bad.err;
}

}  // namespace

TEST_F(RenderTest, ForceErrorColoursDifferFromComponentColours) {
  const auto p = bhviz::sim::makePlummer(8000, 3);
  bhviz::sim::SimParams params = bhviz::sim::defaultSimParams();
  params.mac = bhviz::sim::MacKind::Bonsai;  // a θ test: the state here has no accelerations yet
  params.theta = 0.9f;                       // errors across the palette
  bhviz::sim::CpuBackend scratch;
  const bhviz::app::MeterPlan plan = bhviz::app::planMeter(2000, p.size(), false);
  ASSERT_TRUE(plan.everyParticle) << "N² fits the CPU pair budget: every particle measured";
  const bhviz::app::MeterResult r =
      bhviz::app::measureState(scratch, p, 0.0, params, plan.sample, 1);
  ASSERT_EQ(r.sample, p.size());
  ASSERT_GT(r.s.error.p99, 3.0 * r.s.error.median) << "a spread of colours";

  const Image byComponent = renderScene(p, view(ColorBy::Component));
  SceneRenderer& s = scene(view(ColorBy::ForceError));
  s.frame(p);
  const Image unmeasured = s.render(p);  // no errors yet: all grey
  s.setErrors(r.errorById);
  const Image byError = s.render(p);
  const ImageStats a = imageStats(byComponent), b = imageStats(byError), g = imageStats(unmeasured);
  printStats("plummer by component", a);
  printStats("plummer by force error", b);
  printStats("plummer unmeasured", g);
  const double vsComponent = changedFraction(byComponent, byError);
  const double vsGrey = changedFraction(unmeasured, byError);
  std::printf("[stats] force error vs component: %.3f changed, hue distance %.3f; vs grey %.3f\n",
              vsComponent, hueDistance(a, b), vsGrey);
  EXPECT_GT(vsComponent, 0.05);
  EXPECT_GT(hueDistance(a, b), 0.1);
  EXPECT_GT(vsGrey, 0.05);
  EXPECT_GT(b.meanLuminance, g.meanLuminance) << "measured particles are brighter than the grey";
}
