// The camera that follows the action (app/scene/camera_follow.h): what it aims at in a built
// merger, how it glides and frames, bookmarks' flights, the command line, and headless pictures
// that keep the followed galaxy in the middle.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <glm/geometric.hpp>

#include "app/core/camera_mode.h"
#include "app/core/view_options.h"
#include "app/scene/camera_follow.h"
#include "render/image.h"
#include "sim/ic/scenario_file.h"
#include "test_render_support.h"

namespace {

using namespace bhviz;
using app::CameraMode;
using app::CameraTarget;

sim::Particles merger(std::size_t n = 20000) {
  return sim::buildScenario(sim::builtinScenario("merger"), n, 7);
}

/// Mass-weighted centre of one galaxy's bulge: an independent estimate of its middle.
glm::vec3 bulgeCentre(const sim::Particles& p, unsigned galaxy) {
  glm::dvec3 sum(0.0);
  double mass = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (sim::tagGalaxy(p.tag[i]) != galaxy || sim::tagComponent(p.tag[i]) != sim::Component::Bulge)
      continue;
    sum += double(p.posMass[i].w) * glm::dvec3(p.posMass[i].x, p.posMass[i].y, p.posMass[i].z);
    mass += p.posMass[i].w;
  }
  return glm::vec3(sum / mass);
}

CameraMode galaxy(int g, bool autoFrame = false) {
  CameraMode m;
  m.target = CameraTarget::Galaxy;
  m.galaxy = g;
  m.autoFrame = autoFrame;
  return m;
}

TEST(CameraMode, ParsesWhatItNames) {
  EXPECT_EQ(app::parseCameraTarget("free")->target, CameraTarget::Free);
  EXPECT_EQ(app::parseCameraTarget("centre")->target, CameraTarget::Centre);
  EXPECT_EQ(app::parseCameraTarget("com")->target, CameraTarget::Centre);
  const auto g2 = app::parseCameraTarget("galaxy:2");
  ASSERT_TRUE(g2);
  EXPECT_EQ(g2->target, CameraTarget::Galaxy);
  EXPECT_EQ(g2->galaxy, 1);
  EXPECT_EQ(app::cameraTargetName(*g2), "galaxy:2");
  for (const char* bad : {"", "galaxy", "galaxy:", "galaxy:0", "galaxy:65", "galaxy:x", "Galaxy:1",
                          "galaxy:123", "middle"}) {
    EXPECT_FALSE(app::parseCameraTarget(bad)) << bad;
  }
}

TEST(CameraAim, GalaxyCentresFollowTheirGalaxyAndTheCentreIsTheCentreOfMass) {
  sim::Particles p = merger();
  const app::ViewSettings view;
  const glm::vec3 c0 = bulgeCentre(p, 0), c1 = bulgeCentre(p, 1);
  const float apart = glm::length(c1 - c0);
  ASSERT_GT(apart, 10.0f) << "the merger starts 20 apart";

  const app::CameraAim a0 = app::aimAt(p, galaxy(0), view);
  const app::CameraAim a1 = app::aimAt(p, galaxy(1), view);
  ASSERT_TRUE(a0.valid && a1.valid);
  EXPECT_LT(glm::length(a0.target - c0), 0.02f * apart);
  EXPECT_LT(glm::length(a1.target - c1), 0.02f * apart);

  // Galaxy 1 moved by D: its aim moves by D, galaxy 0's does not.
  const glm::vec3 d(3.0f, -2.0f, 1.5f);
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (sim::tagGalaxy(p.tag[i]) != 1) continue;
    p.posMass[i].x += d.x, p.posMass[i].y += d.y, p.posMass[i].z += d.z;
  }
  EXPECT_LT(glm::length(app::aimAt(p, galaxy(1), view).target - (a1.target + d)), 0.05f);
  EXPECT_LT(glm::length(app::aimAt(p, galaxy(0), view).target - a0.target), 1e-4f);

  // The centre of mass, dark matter included, whatever is drawn.
  CameraMode centre;
  centre.target = CameraTarget::Centre;
  glm::dvec3 sum(0.0);
  double mass = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    sum += double(p.posMass[i].w) * glm::dvec3(p.posMass[i].x, p.posMass[i].y, p.posMass[i].z);
    mass += p.posMass[i].w;
  }
  EXPECT_LT(glm::length(app::aimAt(p, centre, view).target - glm::vec3(sum / mass)), 1e-3f);

  // No such galaxy: nothing to aim at.
  EXPECT_FALSE(app::aimAt(p, galaxy(2), view).valid);
  // A sample (every 7th particle) aims nearly where all of them do.
  EXPECT_LT(glm::length(app::aimAt(p, galaxy(0), view, 7).target - a0.target), 0.02f * apart);
}

TEST(CameraAim, TheRadiusGrowsWithTheSpreadOfWhatIsDrawn) {
  sim::Particles p = merger();
  const app::ViewSettings view;
  const app::CameraAim before = app::aimAt(p, galaxy(0), view);
  for (std::size_t i = 0; i < p.size(); ++i) {  // twice as spread about the aim
    const glm::vec3 x = glm::vec3(p.posMass[i].x, p.posMass[i].y, p.posMass[i].z) - before.target;
    p.posMass[i].x = before.target.x + 2.0f * x.x;
    p.posMass[i].y = before.target.y + 2.0f * x.y;
    p.posMass[i].z = before.target.z + 2.0f * x.z;
  }
  const app::CameraAim after = app::aimAt(p, galaxy(0), view);
  EXPECT_NEAR(after.radius / before.radius, 2.0f, 0.02f);
}

// Following one galaxy frames the action: the other galaxy's stars are drawn, so the radius
// reaches them.
TEST(CameraAim, TheRadiusHoldsTheOtherGalaxy) {
  const sim::Particles p = merger();
  const float apart = glm::length(bulgeCentre(p, 1) - bulgeCentre(p, 0));
  EXPECT_GT(app::aimAt(p, galaxy(0), app::ViewSettings{}).radius, 0.8f * apart);
}

TEST(CameraFollower, JumpsOrGlidesAndAutoFramesTheRadius) {
  app::CameraAim aim;
  aim.valid = true;
  aim.target = {10.0f, 0.0f, 0.0f};
  aim.radius = 5.0f;
  render::Camera jumped;
  app::CameraFollower headless;  // jumps at first
  headless.follow(jumped, galaxy(0, true), aim, 1.0f / 30.0f, 16.0f / 9.0f);
  EXPECT_EQ(jumped.target, aim.target);
  render::Camera framed;
  framed.frameSphere(aim.target, 1.3f * aim.radius, 16.0f / 9.0f);
  EXPECT_NEAR(jumped.distance, framed.distance, 1e-3f * framed.distance);
  EXPECT_NEAR(headless.framedDistance(), framed.distance, 1e-3f * framed.distance);

  // The window glides: after one time constant, 1 - 1/e of the way.
  render::Camera glided;
  app::CameraFollower window(false);
  window.follow(glided, galaxy(0), aim, app::CameraFollower::kGlideSeconds, 1.0f);
  EXPECT_NEAR(glided.target.x, 10.0f * (1.0f - std::exp(-1.0f)), 1e-3f);
  const float distance = glided.distance;
  EXPECT_EQ(distance, render::Camera{}.distance) << "no auto-frame: the distance is the user's";
  for (int k = 0; k < 200; ++k) window.follow(glided, galaxy(0), aim, 0.05f, 1.0f);
  EXPECT_NEAR(glided.target.x, 10.0f, 1e-3f);

  // Nothing to follow: nothing moves.
  render::Camera still = glided;
  window.follow(still, galaxy(0), app::CameraAim{}, 1.0f, 1.0f);
  EXPECT_EQ(still.target, glided.target);
}

TEST(CameraFollower, FliesToABookmarkByTheShorterWayRound) {
  render::Camera camera;
  camera.yaw = 3.0f;  // a bookmark at -3.0 rad is 0.28 rad away the other way round
  const app::CameraBookmark b = [] {
    render::Camera there;
    there.target = {1.0f, 2.0f, 3.0f};
    there.distance = 40.0f;
    there.yaw = -3.0f;
    there.pitch = -0.3f;
    return app::bookmarkOf(there, CameraMode{}, "there");
  }();
  app::CameraFollower f(false);
  f.flyTo(b);
  ASSERT_TRUE(f.fly(camera, 0.05f));
  EXPECT_GT(camera.yaw, 3.0f) << "the short way: past +pi";
  for (int k = 0; k < 400 && f.fly(camera, 0.05f); ++k) {
  }
  EXPECT_FALSE(f.fly(camera, 0.05f)) << "landed";
  EXPECT_NEAR(std::remainder(camera.azimuth() - b.yaw, 6.2831853f), 0.0f, 2e-3f);
  EXPECT_NEAR(camera.pitch, b.pitch, 2e-3f);
  EXPECT_NEAR(camera.distance, b.distance, 0.1f);
  EXPECT_LT(glm::length(camera.target - b.target), 0.05f);
}

// The window downloads a device backend's aim sample again only when it is old: after the
// interval of wall time, and at once for another simulation, another N or a rewound one.
TEST(SampleAge, ResamplesWhenOldOrWhenTheRunChanged) {
  using Clock = app::SampleAge::Clock;
  sim::SimParams p;
  p.mac = sim::MacKind::Bonsai;
  sim::Simulation a(sim::makeCpuBackend(), merger(2000), p);
  sim::Simulation b(sim::makeCpuBackend(), merger(3000), p);
  const Clock::time_point t0{};
  const auto at = [&](double s) {
    return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  app::SampleAge age(0.1);
  // What AimSampler does: a sample whenever one is due.
  const auto sample = [&](const sim::Simulation& s, double t) {
    const bool due = age.due(s, at(t));
    if (due) age.taken(s, at(t));
    return due;
  };
  EXPECT_TRUE(sample(a, 0.0)) << "the first sample";
  EXPECT_FALSE(sample(a, 0.05));
  EXPECT_TRUE(sample(a, 0.1)) << "old";
  EXPECT_FALSE(sample(a, 0.15));
  EXPECT_TRUE(sample(b, 0.16)) << "another simulation";
  EXPECT_FALSE(sample(b, 0.17));
  const std::unique_ptr<sim::KeptState> kept = b.keep();
  b.substep();
  EXPECT_FALSE(sample(b, 0.18)) << "a step on: the glide hides it";
  b.restore(*kept);
  EXPECT_TRUE(sample(b, 0.19)) << "went back";
  EXPECT_TRUE(age.due(b, at(0.30)));
  EXPECT_TRUE(age.due(b, at(0.31))) << "due until a sample is taken (a download that failed)";
  app::SampleAge every;
  every.taken(a, at(0.0));
  EXPECT_TRUE(every.due(a, at(0.0))) << "0 seconds: every call (headless frames)";
}

TEST(CameraCli, BadTargetsAreRefusedBeforeAnyWork) {
  test::Process p =
      test::runBhviz("--headless --backend cpu --n 500 --camera galaxy:0 --screenshot x.png");
  EXPECT_EQ(p.status, 2) << p.err;
  EXPECT_NE(p.err.find("--camera"), std::string::npos) << p.err;
  p = test::runBhviz(
      "--headless --backend cpu --scenario plummer --n 500 --camera galaxy:2 --screenshot x.png");
  EXPECT_EQ(p.status, 2) << p.err;
  EXPECT_NE(p.err.find("plummer has 1 galaxy"), std::string::npos) << p.err;
  p = test::runBhviz("--headless --backend cpu --n 500 --auto-frame");
  EXPECT_EQ(p.status, 2) << p.err;
  EXPECT_NE(p.err.find("--auto-frame needs"), std::string::npos) << p.err;
}

/// Mean luminance of the middle fifth of the picture.
double middleLight(const render::Image& img) {
  double sum = 0.0;
  int n = 0;
  for (int y = 2 * img.height / 5; y < 3 * img.height / 5; ++y) {
    for (int x = 2 * img.width / 5; x < 3 * img.width / 5; ++x, ++n) {
      sum += test::luminance(img.pixel(x, y));
    }
  }
  return sum / n;
}

// The merger starts with the galaxies 20 apart: a free camera looks at the empty middle, a
// followed one at its galaxy.
TEST(CameraHeadless, AFollowedGalaxyIsInTheMiddleOfThePicture) {
  if (test::glDisabled()) GTEST_SKIP() << "BHVIZ_NO_GL=1";
  test::TempDir dir;
  double light[3];
  const char* modes[] = {"free", "galaxy:1", "galaxy:2"};
  for (int k = 0; k < 3; ++k) {
    const std::filesystem::path shot =
        dir.path / (std::string("shot") + std::to_string(k) + ".png");
    const test::Process p = test::runBhviz(
        "--headless --backend cpu --scenario merger --n 6000 --steps 2 --size 320x180 --camera " +
        std::string(modes[k]) + " --screenshot " + shot.string());
    ASSERT_EQ(p.status, 0) << p.out << p.err;
    light[k] = middleLight(render::readPng(shot));
  }
  EXPECT_GT(light[1], 5.0 * light[0] + 0.01) << light[0] << " " << light[1];
  EXPECT_GT(light[2], 5.0 * light[0] + 0.01) << light[0] << " " << light[2];
}

}  // namespace
