// The demo render (issue 16, item 7) through the headless path: population colours, dust that
// absorbs and depth of field, judged by statistics of the linear light recovered from the
// pixels (the tone mapping inverted), region by region. Like test_render: a missing EGL context
// fails, BHVIZ_NO_GL=1 skips.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/scene/frames.h"
#include "app/scene/gl_context.h"
#include "app/scene/particle_view.h"
#include "render/renderer.h"
#include "sim/ic/initial_conditions.h"
#include "test_render_support.h"

namespace {

using bhviz::app::ColorBy;
using bhviz::app::SceneRenderer;
using bhviz::app::ViewSettings;
using bhviz::render::Image;
using bhviz::render::ParticleVertex;
using namespace bhviz::test;

constexpr int kWidth = 320;
constexpr int kHeight = 240;

/// The linear light of a picture, per pixel and channel: the tone mapping (1 − exp(−e·c),
/// gamma) inverted, for a look with no bloom over a black background. A saturated channel
/// reads as the largest value 8 bits can tell apart.
struct LinearImage {
  int width = 0, height = 0;
  std::vector<glm::vec3> light;

  LinearImage(const Image& img, const bhviz::render::ToneMapping& tone)
      : width(img.width), height(img.height), light(std::size_t(img.width) * img.height) {
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        for (int k = 0; k < 3; ++k) {
          const double m = std::min(double(img.pixel(x, y)[k]), 254.5) / 255.0;
          light[std::size_t(y) * width + x][k] =
              float(-std::log(1.0 - std::pow(m, double(tone.gamma))) / tone.exposure);
        }
      }
    }
  }
  /// The light summed over the pixels where `inside(x, y)`.
  glm::dvec3 sum(const std::function<bool(int, int)>& inside) const {
    glm::dvec3 s(0.0);
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        if (inside(x, y)) s += glm::dvec3(light[std::size_t(y) * width + x]);
      }
    }
    return s;
  }
  glm::dvec3 total() const {
    return sum([](int, int) { return true; });
  }
  /// How concentrated the light is where `inside`: Σ l² / (Σ l)² over the pixels' luminance (1
  /// for one lit pixel, 1/n for light spread evenly over n): blur lowers it.
  double concentration(const std::function<bool(int, int)>& inside) const {
    double s = 0.0, s2 = 0.0;
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        if (!inside(x, y)) continue;
        const glm::vec3 c = light[std::size_t(y) * width + x];
        const double l = 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
        s += l;
        s2 += l * l;
      }
    }
    return s > 0.0 ? s2 / (s * s) : 0.0;
  }
};

double luminanceOf(const glm::dvec3& c) { return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b; }

class RenderLookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (glDisabled()) GTEST_SKIP() << "BHVIZ_NO_GL=1: render tests skipped on request";
    try {
      m_context = bhviz::app::HeadlessGlContext::create();
    } catch (const std::exception& e) {
      FAIL() << e.what()
             << " — install Mesa (libegl-mesa0, libgl1-mesa-dri), or set BHVIZ_NO_GL=1 to skip";
    }
  }
  void TearDown() override {
    m_scene.reset();
    m_context.reset();
  }

  /// A scene framed on `p`, seen from `pitch` above the disk plane, with a look whose light can
  /// be recovered from the pixels: no bloom, black background, exposure low enough not to burn
  /// out.
  /// (The scene made last, when `colour` is not given, e.g. for a view hiding components.)
  SceneRenderer& scene(const bhviz::sim::Particles& p, std::optional<ColorBy> colour, float pitch) {
    if (colour) {
      ViewSettings v;
      v.colorBy = *colour;
      m_scene = std::make_unique<SceneRenderer>(kWidth, kHeight, v);
    }
    m_scene->frame(p);
    m_scene->camera().pitch = pitch;
    bhviz::render::RenderParams& look = m_scene->params();
    look.tone.bloomStrength = 0.0f;
    look.tone.exposure = 0.25f;
    look.background = glm::vec3(0.0f);
    return *m_scene;
  }
  LinearImage linear(const Image& img) const { return LinearImage(img, m_scene->params().tone); }
  /// Pixels per unit of length at the camera's target.
  float pixelsPerUnit() const {
    const bhviz::render::Camera& c = m_scene->camera();
    return c.pixelsPerUnitAtUnitDepth(float(kHeight)) / c.distance;
  }

  std::unique_ptr<bhviz::app::HeadlessGlContext> m_context;
  std::unique_ptr<SceneRenderer> m_scene;
};

/// A renderer, a square target and a camera framing the unit sphere, for sprites placed by hand;
/// no bloom, black background.
struct SpriteStage {
  SpriteStage(int side, float spriteSize, float brightness) : side(side), target(side, side) {
    camera.frameSphere({0, 0, 0}, 1.0f, 1.0f);
    params.particles.spriteSize = spriteSize;
    params.particles.brightness = brightness;
  }
  LinearImage draw(const std::vector<ParticleVertex>& v) {
    renderer.setParticles(v.data(), v.size());
    renderer.render(camera, params, target.target());
    return LinearImage(target.read(), params.tone);
  }
  /// The world point drawn at pixel offset (dx, dy) from the centre, `ahead` beyond the target
  /// along the view.
  glm::vec3 at(float dx, float dy, float ahead) const {
    const float ppu = camera.pixelsPerUnitAtUnitDepth(float(side)) / camera.distance;
    return camera.target + camera.right() * (dx / ppu) - camera.up() * (dy / ppu) +
           camera.forward() * ahead;
  }

  int side;
  bhviz::render::Renderer renderer;
  bhviz::render::OffscreenTarget target;
  bhviz::render::Camera camera;
  bhviz::render::RenderParams params;
};

const char* passName(bhviz::render::SpritePass p) {
  return p == bhviz::render::SpritePass::Compute ? "compute" : "raster";
}

// ---- population colours -----------------------------------------------------------------

// Face on, the disk's light (young blue-white and old white-yellow stars) is bluer than the
// bulge's (old yellow-red) in the ratio of blue to red light, region by region; and each
// component drawn alone has its population's colour.
TEST_F(RenderLookTest, PopulationColoursMakeTheDiskBluerThanTheBulge) {
  const auto p = bhviz::sim::makeGalaxy(30000, 5);
  // The bulge (scale 0.2) dominates the inner 0.15 units of length; the disk (scale length 1)
  // beyond 1. Blue over red light in those rings, with `hidden` components hidden.
  auto blueOverRed = [&](int hidden, float from, float to) {
    ViewSettings v;
    v.colorBy = ColorBy::Population;
    if (hidden >= 0) v.visible[std::size_t(hidden)] = false;
    m_scene = std::make_unique<SceneRenderer>(kWidth, kHeight, v);
    SceneRenderer& s = scene(p, std::nullopt, 1.5f);
    // Exposure halved until no channel saturates, so that colours are measured, not white.
    auto saturated = [](const Image& img) {
      for (std::size_t i = 0; i < img.rgba.size(); ++i) {
        if (i % 4 != 3 && img.rgba[i] >= 254) return true;
      }
      return false;
    };
    Image shot = s.render(p);
    for (int k = 0; k < 10 && saturated(shot); ++k) {
      s.params().tone.exposure *= 0.5f;
      shot = s.render(p);
    }
    const LinearImage img = linear(shot);
    const glm::vec3 c = s.camera().project(s.framing().centre, kWidth, kHeight);
    const float u = pixelsPerUnit();
    const glm::dvec3 light = img.sum([&](int x, int y) {
      const float r = std::hypot(x - c.x, y - c.y) / u;
      return r >= from && r < to;
    });
    EXPECT_GT(luminanceOf(light), 0.0);
    return light.b / light.r;
  };
  const int disk = int(bhviz::sim::Component::Disk), bulge = int(bhviz::sim::Component::Bulge);
  const double centre = blueOverRed(-1, 0.0f, 0.15f), outside = blueOverRed(-1, 1.0f, 3.0f);
  const double bulgeAlone = blueOverRed(disk, 0.0f, 0.15f);
  const double diskAlone = blueOverRed(bulge, 1.0f, 3.0f);
  std::printf(
      "[look] population, face on: blue/red at the centre %.3f (the bulge alone %.3f), "
      "in the disk %.3f (the disk alone %.3f)\n",
      centre, bulgeAlone, outside, diskAlone);
  EXPECT_GT(outside, 1.3 * centre);
  EXPECT_GT(diskAlone, 0.8) << "the disk is blue-white";
  EXPECT_LT(bulgeAlone, 0.6) << "the bulge is yellow-red";
}

// ---- dust -------------------------------------------------------------------------------

// Edge on, the disk's dust darkens the mid-plane band (light from the far side passes through
// the whole disk) far more than it darkens the light off the plane or the disk seen face on.
// The dust carriers emit with or without extinction, so the comparison is absorption alone.
TEST_F(RenderLookTest, DustDarkensAnEdgeOnMidPlaneMuchMoreThanFaceOnOrOffPlane) {
  const auto p = bhviz::sim::makeGalaxy(60000, 5);
  auto ratio = [&](float pitch, const std::function<bool(float, float)>& region) {
    SceneRenderer& s = scene(p, ColorBy::Population, pitch);
    const glm::vec3 c = s.camera().project(s.framing().centre, kWidth, kHeight);
    const float u = pixelsPerUnit();
    auto inside = [&](int x, int y) { return region((x - c.x) / u, (c.y - y) / u); };
    const double clear = luminanceOf(linear(s.render(p)).sum(inside));
    s.params().extinction.enabled = true;
    const double dusty = luminanceOf(linear(s.render(p)).sum(inside));
    EXPECT_GT(clear, 0.0);
    return dusty / clear;
  };
  // Regions in units of length on the picture: h across the view, v up it.
  const double midPlane = ratio(0.0f, [](float h, float v) {
    return std::abs(v) < 0.1f && std::abs(h) > 0.3f && std::abs(h) < 2.5f;
  });
  const double offPlane = ratio(0.0f, [](float h, float v) {
    return std::abs(v) > 0.6f && std::abs(v) < 1.5f && std::abs(h) < 2.5f;
  });
  const double faceOn = ratio(1.5f, [](float h, float v) { return std::hypot(h, v) < 2.5f; });
  std::printf(
      "[look] dust keeps %.3f of the edge-on mid-plane's light, %.3f off the plane, %.3f "
      "face on\n",
      midPlane, offPlane, faceOn);
  EXPECT_LT(midPlane, 0.6);
  EXPECT_GT(1.0 - midPlane, 2.0 * (1.0 - faceOn));
  EXPECT_GT(1.0 - midPlane, 3.0 * (1.0 - offPlane));
  EXPECT_LT(faceOn, 0.97) << "face on, the disk's dust still dims it a little";
}

// A cloud of dark dust between a star and the eye dims it; the same cloud behind it does not;
// alike in both sprite passes.
TEST_F(RenderLookTest, DustInFrontDimsAStarAndDustBehindDoesNot) {
  for (auto pass : {bhviz::render::SpritePass::Compute, bhviz::render::SpritePass::Raster}) {
    SpriteStage stage(96, 0.2f, 1.0f);
    stage.params.spritePass = pass;
    // Colour 0 is black (the dust emits nothing), colour 1 white (the star).
    stage.renderer.setPalette(bhviz::render::Palette::discrete({{0, 0, 0}, {1, 1, 1}}));
    stage.params.particles.dustSize = 0.4f;
    stage.params.particles.dustOpacity = 0.05f;  // 60 clouds: τ ≈ 3 at the centre
    stage.params.particles.dustDepth = 1.0f;
    const glm::vec3 star = stage.at(0, 0, 0);
    auto with = [&](float ahead) {
      std::vector<ParticleVertex> v{{star.x, star.y, star.z, 1.0f}};
      for (int k = 0; k < 60; ++k) {
        const glm::vec3 d = stage.at(float(k % 3) - 1.0f, float(k / 3 % 3) - 1.0f, ahead);
        v.push_back({d.x, d.y, d.z, bhviz::render::kDustValue});
      }
      return v;
    };
    stage.params.extinction.enabled = false;
    const double clear = luminanceOf(stage.draw(with(-0.5f)).total());
    stage.params.extinction.enabled = true;
    const double front = luminanceOf(stage.draw(with(-0.5f)).total());
    const double behind = luminanceOf(stage.draw(with(0.5f)).total());
    std::printf("[look] %s: the star keeps %.3f of its light behind dust, %.3f in front of it\n",
                passName(pass), front / clear, behind / clear);
    EXPECT_GT(clear, 0.0);
    EXPECT_LT(front, 0.2 * clear) << passName(pass);
    EXPECT_GT(behind, 0.98 * clear) << passName(pass);
    EXPECT_LT(behind, 1.02 * clear) << passName(pass);
  }
}

// ---- depth of field ---------------------------------------------------------------------

// Stars in the focal plane stay sharp; the same stars behind it spread their light over their
// circles of confusion, keeping it (within a few %), in either sprite pass.
TEST_F(RenderLookTest, DepthOfFieldKeepsTheLightAndBlursOnlyAwayFromTheFocus) {
  for (auto pass : {bhviz::render::SpritePass::Compute, bhviz::render::SpritePass::Raster}) {
    SpriteStage stage(160, 0.05f, 0.5f);
    stage.params.spritePass = pass;
    auto grid = [&](float ahead) {
      std::vector<ParticleVertex> v;
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) {
          const glm::vec3 x = stage.at(-54.0f + 36.0f * float(i), -54.0f + 36.0f * float(j), ahead);
          v.push_back({x.x, x.y, x.z, 0.5f});
        }
      }
      return v;
    };
    const auto all = [](int, int) { return true; };
    for (float ahead : {0.0f, 0.8f}) {
      stage.params.depthOfField.enabled = false;
      const LinearImage sharp = stage.draw(grid(ahead));
      stage.params.depthOfField.enabled = true;
      stage.params.depthOfField.aperture = 0.25f;  // circles of confusion of ~13 px at 0.8
      const LinearImage blurred = stage.draw(grid(ahead));
      const double light = luminanceOf(blurred.total()) / luminanceOf(sharp.total());
      const double sharpness = blurred.concentration(all) / sharp.concentration(all);
      std::printf(
          "[look] %s, %.1f beyond the focus: light kept %.3f, concentration %.3f of the "
          "sharp picture's\n",
          passName(pass), ahead, light, sharpness);
      EXPECT_NEAR(light, 1.0, 0.04) << passName(pass) << ", " << ahead << " beyond the focus";
      if (ahead == 0.0f) {
        EXPECT_GT(sharpness, 0.95) << passName(pass) << ": in focus, as sharp as without";
      } else {
        EXPECT_LT(sharpness, 0.3) << passName(pass) << ": out of focus, blurred";
      }
    }
  }
}

// ---- the executable ---------------------------------------------------------------------

// --color population, --dust and --dof reach the headless pictures: each changes the image.
TEST_F(RenderLookTest, DemoOptionsOnTheCommandLineChangeThePicture) {
  TempDir dir;
  const std::string common =
      "--headless --scenario galaxy --n 8000 --steps 0 --size 200x150 --backend cpu --quiet ";
  const char* variants[][2] = {{"plain", ""},
                               {"population", "--color population"},
                               {"dust", "--color population --dust 2"},
                               {"dof", "--color population --dof 0.1"}};
  std::vector<Image> images;
  for (const auto& v : variants) {
    const auto path = dir.path / (std::string(v[0]) + ".png");
    const Process run = runBhviz(common + v[1] + " --screenshot " + path.string());
    ASSERT_EQ(run.status, 0) << v[0] << ": " << run.err;
    images.push_back(bhviz::render::readPng(path));
    EXPECT_GT(imageStats(images.back()).litFraction, 0.02) << v[0];
  }
  for (std::size_t k = 1; k < images.size(); ++k) {
    const double changed = changedFraction(images[k - 1], images[k], 8);
    std::printf("[look] %s vs %s: %.3f of the pixels changed\n", variants[k][0], variants[k - 1][0],
                changed);
    EXPECT_GT(changed, 0.01) << variants[k][0];
  }
}

}  // namespace
