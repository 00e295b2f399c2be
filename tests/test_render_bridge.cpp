// The renderer's math and the app's bridges, without GL: the orbit camera, palettes, the
// particle → vertex bridge, framing, overlay boxes from the tree, and the picture options of
// the command line.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <glm/geometric.hpp>
#include <sstream>

#include "app/core/cli.h"
#include "app/scene/overlay_view.h"
#include "app/scene/particle_view.h"
#include "app/scene/scene_pipeline.h"
#include "render/camera.h"
#include "render/palette.h"
#include "sim/cpu/cpu_backend.h"
#include "sim/ic/initial_conditions.h"

namespace {

using bhviz::app::ColorBy;
using bhviz::app::ParticleView;
using bhviz::app::ViewSettings;
using bhviz::render::Camera;
using bhviz::render::Palette;
using bhviz::sim::Component;

constexpr float kW = 800.0f, kH = 600.0f;

// ---- camera -------------------------------------------------------------------------------

TEST(Camera, EyeIsAtTheDistanceAndTheTargetProjectsToTheCentre) {
  Camera c;
  c.target = {1, 2, 3};
  c.distance = 7.0f;
  c.yaw = 0.4f;
  c.pitch = 0.3f;
  EXPECT_NEAR(glm::length(c.eye() - c.target), 7.0f, 1e-4f);
  const glm::vec3 p = c.project(c.target, kW, kH);
  EXPECT_NEAR(p.x, kW / 2, 1e-3f);
  EXPECT_NEAR(p.y, kH / 2, 1e-3f);
  EXPECT_NEAR(p.z, 7.0f, 1e-4f);
  // An orthonormal, right-handed frame; +z (the disk's normal) points up on screen.
  EXPECT_NEAR(glm::dot(c.forward(), c.right()), 0.0f, 1e-5f);
  EXPECT_NEAR(glm::dot(c.forward(), c.up()), 0.0f, 1e-5f);
  EXPECT_NEAR(glm::length(c.up()), 1.0f, 1e-5f);
  EXPECT_LT(c.project(c.target + glm::vec3(0, 0, 1), kW, kH).y, kH / 2);
  EXPECT_GT(c.project(c.target + c.right(), kW, kH).x, kW / 2);
}

TEST(Camera, OrbitTurnsAndClampsThePitch) {
  Camera c;
  c.orbit(100.0f, 0.0f, 0.01f);
  EXPECT_NEAR(c.yaw, -1.0f, 1e-5f);
  c.orbit(0.0f, 1e6f);
  EXPECT_FLOAT_EQ(c.pitch, Camera::kMaxPitch);
  c.orbit(0.0f, -1e6f);
  EXPECT_FLOAT_EQ(c.pitch, -Camera::kMaxPitch);
  EXPECT_TRUE(std::isfinite(c.view()[0][0]));
  // The yaw wraps into (-π, π].
  c.orbit(-1e5f, 0.0f, 0.01f);
  EXPECT_LE(std::abs(c.yaw), 3.1416f);
}

TEST(Camera, PanMovesTheSceneWithTheCursor) {
  Camera c;
  c.distance = 5.0f;
  const glm::vec3 point = c.target;
  c.pan(40.0f, -25.0f, kH);
  const glm::vec3 p = c.project(point, kW, kH);
  EXPECT_NEAR(p.x, kW / 2 + 40.0f, 0.05f);
  EXPECT_NEAR(p.y, kH / 2 - 25.0f, 0.05f);
}

TEST(Camera, ZoomIsClamped) {
  Camera c;
  c.distance = 10.0f;
  c.zoom(0.5f);
  EXPECT_FLOAT_EQ(c.distance, 5.0f);
  c.minDistance = 1.0f;
  c.zoom(1e-6f);
  EXPECT_FLOAT_EQ(c.distance, 1.0f);
  c.maxDistance = 100.0f;
  c.zoom(1e6f);
  EXPECT_FLOAT_EQ(c.distance, 100.0f);
}

TEST(Camera, AutoRotationAdvancesTheAzimuthAndWraps) {
  Camera c;
  c.autoRotateSpeed = 1.0f;
  const glm::vec3 before = c.eye();
  c.advance(0.5f);
  EXPECT_NEAR(c.autoRotateAngle, 0.5f, 1e-6f);
  EXPECT_NEAR(c.azimuth(), c.yaw + 0.5f, 1e-6f);
  EXPECT_NEAR(glm::length(c.eye() - c.target), glm::length(before - c.target), 1e-4f);
  EXPECT_GT(glm::length(c.eye() - before), 0.1f);
  c.advance(100.0f);
  EXPECT_GE(c.autoRotateAngle, 0.0f);
  EXPECT_LT(c.autoRotateAngle, 6.2832f);
}

TEST(Camera, FrameSphereFitsTheSphereInTheImage) {
  for (float aspect : {0.5f, 1.0f, 16.0f / 9.0f}) {
    Camera c;
    c.yaw = 0.7f;
    c.pitch = 0.4f;
    c.frameSphere({3, -1, 2}, 2.0f, aspect);
    const float h = 600.0f, w = h * aspect;
    for (const glm::vec3 dir : {c.right(), -c.right(), c.up(), -c.up()}) {
      const glm::vec3 p = c.project(glm::vec3(3, -1, 2) + 2.0f * dir, w, h);
      EXPECT_GE(p.x, -0.5f);
      EXPECT_LE(p.x, w + 0.5f);
      EXPECT_GE(p.y, -0.5f);
      EXPECT_LE(p.y, h + 0.5f);
    }
  }
}

// ---- palettes -----------------------------------------------------------------------------

TEST(Palette, ValuesSelectColoursAtTheEndsAndBetween) {
  const Palette d = Palette::discrete({{1, 0, 0}, {0, 1, 0}, {0, 0, 1}});
  EXPECT_FLOAT_EQ(d.valueOf(1), 0.5f);
  EXPECT_EQ(d.lookup(d.valueOf(2)), glm::vec3(0, 0, 1));
  EXPECT_EQ(d.lookup(0.3f), glm::vec3(0, 1, 0));  // nearest
  Palette s = d;
  s.smooth = true;
  EXPECT_NEAR(s.lookup(0.25f).r, 0.5f, 1e-6f);
  EXPECT_NEAR(s.lookup(0.25f).g, 0.5f, 1e-6f);
  EXPECT_EQ(s.lookup(-3.0f), glm::vec3(1, 0, 0));  // clamped
  EXPECT_EQ(Palette::fire(64).colours.size(), 64u);
  EXPECT_THROW(validate(Palette{}), std::invalid_argument);
}

// ---- the particle → vertex bridge ---------------------------------------------------------

TEST(ParticleView, ComponentsMapToPaletteIndicesAndDarkMatterIsHidden) {
  const auto p = bhviz::sim::makeMerger(4000, 2);
  ParticleView view{ViewSettings{}};
  std::vector<bhviz::render::ParticleVertex> v;
  view.fill(p, v);
  ASSERT_EQ(v.size(), p.size());
  const Palette palette = view.palette();
  ASSERT_EQ(palette.colours.size(), bhviz::app::kComponentColours);
  std::size_t hidden = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_EQ(v[i].x, p.posMass[i].x);
    EXPECT_EQ(v[i].z, p.posMass[i].z);
    const Component c = bhviz::sim::tagComponent(p.tag[i]);
    if (c == Component::Halo) {
      EXPECT_LT(v[i].value, 0.0f);
      ++hidden;
      continue;
    }
    const std::size_t index = static_cast<std::size_t>(c) + 4 * bhviz::sim::tagGalaxy(p.tag[i]);
    EXPECT_FLOAT_EQ(v[i].value, palette.valueOf(index));
  }
  EXPECT_GT(hidden, 0u);
  ViewSettings all;
  all.visible.fill(true);
  ParticleView withHalo(all);
  withHalo.fill(p, v);
  for (const auto& x : v) EXPECT_GE(x.value, 0.0f);
}

TEST(ParticleView, SpeedAndBinAreScalarsInTheUnitInterval) {
  auto p = bhviz::sim::makePlummer(3000, 4);
  ViewSettings s;
  s.colorBy = ColorBy::Speed;
  ParticleView speed(s);
  speed.calibrate(p);
  EXPECT_GT(speed.speedScale(), 0.0f);
  std::size_t top = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const float v = speed.value(p, i);
    EXPECT_GE(v, 0.0f);
    EXPECT_LE(v, 1.0f);
    top += v == 1.0f;
  }
  EXPECT_NEAR(double(top) / p.size(), 0.01, 0.005);  // the 99th percentile is the top
  // Faster → larger value.
  p.vel[0] = {0.1f, 0, 0, 0};
  p.vel[1] = {0.3f, 0, 0, 0};
  EXPECT_LT(speed.value(p, 0), speed.value(p, 1));

  s.colorBy = ColorBy::Bin;
  s.maxBinDepth = 4;
  ParticleView bin(s);
  p.bin[0] = 0;
  p.bin[1] = 2;
  p.bin[2] = 4;
  EXPECT_FLOAT_EQ(bin.value(p, 0), 0.0f);
  EXPECT_FLOAT_EQ(bin.value(p, 1), 0.5f);
  EXPECT_FLOAT_EQ(bin.value(p, 2), 1.0f);
  EXPECT_EQ(bin.palette().colours.size(), 5u);
  EXPECT_FALSE(bin.palette().smooth);
}

// Blackbody colours: white near 6500 K, red when cooler, blue when hotter; the map runs in log T.
TEST(Palette, BlackbodyRunsFromRedThroughWhiteToBlue) {
  const glm::vec3 cool = bhviz::render::blackbodyColour(3000.0f);
  const glm::vec3 sun = bhviz::render::blackbodyColour(6500.0f);
  const glm::vec3 hot = bhviz::render::blackbodyColour(15000.0f);
  EXPECT_FLOAT_EQ(std::max({cool.r, cool.g, cool.b}), 1.0f);
  EXPECT_GT(cool.r, 2.0f * cool.b);
  EXPECT_NEAR(sun.r, sun.b, 0.05f);
  EXPECT_GT(hot.b, 1.3f * hot.r);
  const Palette p = Palette::blackbody(2500.0f, 25000.0f, 255);
  ASSERT_EQ(p.colours.size(), 255u);
  // Colour k sits at 2500 K · 10^(k/254).
  const float kelvin = 2500.0f * std::pow(10.0f, 100.0f / 254.0f);
  EXPECT_NEAR(glm::distance(p.colours[100], bhviz::render::blackbodyColour(kelvin)), 0.0f, 1e-5f);
}

// Population colours: each component's stars within its population's temperatures, the disk's
// young share as asked, the same value for the same id (so stable over time, whatever the
// order), dust on about kDustShare of the disk and nowhere else.
TEST(ParticleView, PopulationsAndDustFollowTheComponentAndTheId) {
  const auto p = bhviz::sim::makeGalaxy(20000, 7);
  ViewSettings s;
  s.colorBy = ColorBy::Population;
  s.visible.fill(true);
  ParticleView view(s);
  view.setDust(true);
  const Palette palette = view.palette();
  ASSERT_EQ(palette.colours.size(), std::size_t(bhviz::app::kPopulationPaletteSize));
  std::vector<bhviz::render::ParticleVertex> v;
  view.fill(p, v);
  const float last = float(bhviz::app::kPopulationPaletteSize - 1);
  std::size_t disk = 0, young = 0, dusty = 0, dustyDisk = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const bool dust = v[i].value >= bhviz::render::kDustValue;
    const float value = dust ? v[i].value - bhviz::render::kDustValue : v[i].value;
    const int texel = int(std::lround(value * last));
    ASSERT_FLOAT_EQ(value * last, float(texel)) << "a value selects one temperature exactly";
    const Component c = bhviz::sim::tagComponent(p.tag[i]);
    dusty += dust;
    switch (c) {
      case Component::Disk: {
        ++disk;
        dustyDisk += dust;
        const bool isYoung = texel >= bhviz::app::kYoungDisk.lowTexel;
        young += isYoung;
        const auto& pop = isYoung ? bhviz::app::kYoungDisk : bhviz::app::kOldDisk;
        EXPECT_GE(texel, pop.lowTexel);
        EXPECT_LE(texel, pop.highTexel);
        break;
      }
      case Component::Bulge:
        EXPECT_GE(texel, bhviz::app::kBulgeStars.lowTexel);
        EXPECT_LE(texel, bhviz::app::kBulgeStars.highTexel);
        break;
      case Component::Halo:
        EXPECT_EQ(texel, bhviz::app::kPopulationPaletteSize - 1) << "dark matter's colour";
        break;
      case Component::Sphere:
        break;
    }
  }
  ASSERT_GT(disk, 1000u);
  EXPECT_NEAR(double(young) / disk, bhviz::app::kYoungDisk.share, 0.03);
  EXPECT_NEAR(double(dustyDisk) / disk, bhviz::app::kDustShare, 0.03);
  EXPECT_EQ(dusty, dustyDisk) << "only the disk carries dust";
  // The young disk's palette colours are bluer than the bulge's.
  const glm::vec3 y = palette.colours[std::size_t(bhviz::app::kYoungDisk.lowTexel)];
  const glm::vec3 b = palette.colours[std::size_t(bhviz::app::kBulgeStars.highTexel)];
  EXPECT_GT(y.b / y.r, 1.5f * b.b / b.r);
  // Stable: a particle's value follows its id, not its index.
  bhviz::sim::Particles shuffled = p;
  std::swap(shuffled.posMass[0], shuffled.posMass[1]);
  std::swap(shuffled.id[0], shuffled.id[1]);
  std::swap(shuffled.tag[0], shuffled.tag[1]);
  std::swap(shuffled.vel[0], shuffled.vel[1]);
  std::vector<bhviz::render::ParticleVertex> w;
  view.fill(shuffled, w);
  EXPECT_EQ(w[0].value, v[1].value);
  EXPECT_EQ(w[1].value, v[0].value);
  view.setDust(false);
  view.fill(p, w);
  for (const auto& x : w) EXPECT_LT(x.value, bhviz::render::kDustValue);
}

TEST(ParticleView, FramingCentresOnTheVisibleMass) {
  const auto p = bhviz::sim::makeGalaxy(5000, 3);
  const auto f = bhviz::app::frameVisible(p, ViewSettings{});
  glm::dvec3 com(0.0);
  double mass = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (bhviz::sim::tagComponent(p.tag[i]) == Component::Halo) continue;
    com += double(p.posMass[i].w) * glm::dvec3(p.posMass[i].x, p.posMass[i].y, p.posMass[i].z);
    mass += p.posMass[i].w;
  }
  com /= mass;
  EXPECT_NEAR(f.centre.x, com.x, 1e-4);
  EXPECT_NEAR(f.centre.y, com.y, 1e-4);
  EXPECT_NEAR(f.centre.z, com.z, 1e-4);
  EXPECT_GT(f.radius, 1.0f);   // the disk's scale length is 1
  EXPECT_LT(f.radius, 15.0f);  // the halo (to 30) is hidden
  std::size_t stars = 0;
  for (auto t : p.tag) stars += bhviz::sim::tagComponent(t) != Component::Halo;
  EXPECT_EQ(f.visible, stars);
  // Sprites shrink and dim as N grows, keeping N · brightness · size² fixed.
  const auto a = bhviz::app::particleStyleFor(10000, 5.0f);
  const auto b = bhviz::app::particleStyleFor(80000, 5.0f);
  EXPECT_LT(b.spriteSize, a.spriteSize);
  EXPECT_NEAR(80000.0 * b.brightness * b.spriteSize * b.spriteSize,
              10000.0 * a.brightness * a.spriteSize * a.spriteSize, 1e-3);
}

// ---- overlay boxes ------------------------------------------------------------------------

// The overlay's boxes as the backend exports them: cells of levels [lo, hi], or the groups.
std::vector<bhviz::render::OverlayBox> exportedBoxes(const bhviz::sim::Backend& backend, int lo,
                                                     int hi, bool groups = false) {
  bhviz::app::OverlayRequest request;
  request.cells = !groups;
  request.groups = groups;
  request.minLevel = lo;
  request.maxLevel = hi;
  return bhviz::app::overlayBoxes(backend, request);
}

TEST(OverlayView, TreeCellBoxesHoldTheirParticles) {
  const auto in = bhviz::sim::makePlummer(5000, 8);
  bhviz::sim::CpuBackend backend;
  backend.upload(in);
  const auto params = bhviz::sim::defaultSimParams();
  backend.computeForces(bhviz::sim::Clock{0.0, 0, 0, params.dtMax}, params,
                        bhviz::sim::ForceTargets::All, false);
  const auto& tree = backend.tree();
  const auto& p = backend.particles();
  const auto boxes = exportedBoxes(backend, 2, 4);
  ASSERT_EQ(boxes.size(), std::size_t(tree.levelBegin[5] - tree.levelBegin[2]));
  std::size_t k = 0;
  for (std::uint32_t c = tree.levelBegin[2]; c < tree.levelBegin[5]; ++c, ++k) {
    const float half = 0.5f * tree.side(c);
    EXPECT_FLOAT_EQ(boxes[k].halfSize.x, half);
    const float slack = 1e-4f * tree.frame.side;
    for (std::uint32_t i = tree.first[c]; i < tree.first[c] + tree.count[c]; ++i) {
      const glm::vec3 x(p.posMass[i].x, p.posMass[i].y, p.posMass[i].z);
      const glm::vec3 d = glm::abs(x - boxes[k].centre);
      ASSERT_LE(std::max({d.x, d.y, d.z}), half + slack) << "cell " << c << " particle " << i;
    }
  }
  EXPECT_TRUE(exportedBoxes(backend, 30, 40).empty());
  const auto groups = exportedBoxes(backend, 0, 0, true);
  EXPECT_EQ(groups.size(), backend.groups().size());
}

// ---- the command line's picture options ---------------------------------------------------

bhviz::app::Options parse(const std::vector<std::string>& args) {
  std::ostringstream out;
  return *bhviz::app::parseCommandLine(args, out);
}

std::string usageError(const std::vector<std::string>& args) {
  try {
    parse(args);
  } catch (const bhviz::app::UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(CliPictures, DefaultsAndValues) {
  const auto none = parse({"--headless"});
  EXPECT_FALSE(none.frames.wanted());
  const auto shot = parse({"--headless", "--screenshot", "/tmp/bhviz_cli_pictures.png"});
  EXPECT_TRUE(shot.frames.wanted());
  EXPECT_EQ(shot.frames.width, 1280);
  EXPECT_EQ(shot.frames.height, 720);
  EXPECT_EQ(shot.frames.colorBy, ColorBy::Component);
  EXPECT_FALSE(shot.frames.showHalo);
  EXPECT_EQ(shot.frames.overlay, bhviz::app::OverlayKind::None);
  const auto o =
      parse({"--headless", "--screenshot", "/tmp/bhviz_cli_pictures.png", "--size", "640x360",
             "--color", "bin", "--show-halo", "--overlay", "tree", "--overlay-levels", "3:5"});
  EXPECT_EQ(o.frames.width, 640);
  EXPECT_EQ(o.frames.height, 360);
  EXPECT_EQ(o.frames.colorBy, ColorBy::Bin);
  EXPECT_TRUE(o.frames.showHalo);
  EXPECT_EQ(o.frames.overlay, bhviz::app::OverlayKind::Tree);
  EXPECT_EQ(o.frames.overlayMinLevel, 3);
  EXPECT_EQ(o.frames.overlayMaxLevel, 5);
  EXPECT_EQ(shot.frames.dust, 0.0f);
  EXPECT_EQ(shot.frames.dofAperture, 0.0f);
  const auto demo = parse({"--headless", "--screenshot", "/tmp/bhviz_cli_pictures.png", "--color",
                           "population", "--dust", "1.5", "--dof", "0.05", "--focus", "0.8"});
  EXPECT_EQ(demo.frames.colorBy, ColorBy::Population);
  EXPECT_FLOAT_EQ(demo.frames.dust, 1.5f);
  EXPECT_FLOAT_EQ(demo.frames.dofAperture, 0.05f);
  EXPECT_FLOAT_EQ(demo.frames.dofFocus, 0.8f);
  bhviz::render::RenderParams look;
  bhviz::app::applyLookOptions(look, demo.frames);
  EXPECT_TRUE(look.extinction.enabled);
  EXPECT_FLOAT_EQ(look.extinction.strength, 1.5f);
  EXPECT_TRUE(look.depthOfField.enabled);
  EXPECT_FLOAT_EQ(look.depthOfField.aperture, 0.05f);
  EXPECT_FLOAT_EQ(look.depthOfField.focus, 0.8f);
  bhviz::app::applyLookOptions(look, shot.frames);
  EXPECT_FALSE(look.extinction.enabled);
  EXPECT_FALSE(look.depthOfField.enabled);
}

TEST(CliPictures, InvalidValuesAreOneLineNamingTheOption) {
  const std::string shot = "/tmp/bhviz_cli_pictures.png";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--screenshot", shot, "--size", "10x10"}, "--size"},
      {{"--screenshot", shot, "--size", "1280"}, "--size"},
      {{"--screenshot", shot, "--size", "axb"}, "--size"},
      {{"--screenshot", shot, "--color", "mass"}, "--color"},
      {{"--screenshot", shot, "--overlay", "walls"}, "--overlay"},
      {{"--screenshot", shot, "--overlay", "tree", "--overlay-levels", "5:2"}, "--overlay-levels"},
      {{"--screenshot", shot, "--overlay", "tree", "--overlay-levels", "0:99"}, "--overlay-levels"},
      {{"--screenshot", shot, "--overlay-levels", "1:3"}, "--overlay-levels"},
      {{"--frames", "/tmp", "--frame-every", "0"}, "--frame-every"},
      {{"--screenshot", shot, "--frame-every", "2"}, "--frame-every"},
      {{"--color", "speed"}, "--color"},
      {{"--screenshot", shot, "--dust", "-1"}, "--dust"},
      {{"--screenshot", shot, "--dust", "11"}, "--dust"},
      {{"--screenshot", shot, "--dust", "lots"}, "--dust"},
      {{"--screenshot", shot, "--dof", "0.9"}, "--dof"},
      {{"--screenshot", shot, "--dof", "nan"}, "--dof"},
      {{"--screenshot", shot, "--focus", "2"}, "--focus"},  // without --dof
      {{"--screenshot", shot, "--dof", "0.1", "--focus", "0"}, "--focus"},
      {{"--dust", "1"}, "--dust"},  // headless without a picture
      // Under a file: no directory can be made there, not even by root.
      {{"--frames", "/dev/null/frames"}, "--frames"},
      {{"--screenshot", "/dev/null/x.png"}, "--screenshot"},
  };
  for (const auto& [args, option] : cases) {
    std::vector<std::string> full{"--headless"};
    full.insert(full.end(), args.begin(), args.end());
    const std::string e = usageError(full);
    EXPECT_NE(e.find(option), std::string::npos) << "args ending " << args.back() << ": " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

}  // namespace
