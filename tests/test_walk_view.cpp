// "See the walk" in the app (app/walk_view.h): picking against a hand-computed projection, the
// walk overlay's boxes against the inspection, --pick on the command line, and the headless
// picture with the three colours of the interaction list.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "app/core/cli.h"
#include "app/scene/walk_view.h"
#include "sim/ic/initial_conditions.h"
#include "test_render_support.h"
#include "walk_pixels.h"

using namespace bhviz;
using namespace bhviz::test;

namespace {

sim::Particles at(const std::vector<sim::Vec3>& xs, const std::vector<sim::Component>& comps) {
  sim::Particles p;
  p.resize(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    p.posMass[i] = {xs[i].x, xs[i].y, xs[i].z, 1.0f};
    p.id[i] = static_cast<std::uint32_t>(i);
    p.tag[i] = sim::makeTag(comps[i], 0);
  }
  return p;
}

std::size_t countColour(const std::vector<render::OverlayBox>& boxes, const glm::vec4& c) {
  std::size_t n = 0;
  for (const render::OverlayBox& b : boxes) n += b.colour == c;
  return n;
}

}  // namespace

// The eye at (10, 0, 0) looks at the origin with world z up and a 90° field of view, so in a
// 400 × 300 view a point (0, y, z) lands at pixel (200 + 15 y, 150 − 15 z) (aspect 4/3).
TEST(Pick, ReturnsTheVisibleParticleNearestTheCursorForAKnownCamera) {
  render::Camera camera;
  camera.target = glm::vec3(0.0f);
  camera.distance = 10.0f;
  camera.yaw = 0.0f;
  camera.pitch = 0.0f;
  camera.fovY = 1.5707964f;
  using C = sim::Component;
  const sim::Particles p =
      at({{0, 0, 0}, {0, 2, 0}, {0, 0, 2}, {0, -2, -2}, {0, 1, 1}, {20, 0.3f, 0.3f}},
         {C::Sphere, C::Disk, C::Bulge, C::Sphere, C::Halo, C::Sphere});
  const app::ViewSettings view;  // the halo (particle 4) is hidden
  auto pick = [&](float x, float y) {
    return app::pickParticle(p, view, camera, 400, 300, {x, y});
  };
  EXPECT_EQ(pick(201, 151), std::optional<std::size_t>(0));
  EXPECT_EQ(pick(229, 149), std::optional<std::size_t>(1));
  EXPECT_EQ(pick(198, 121), std::optional<std::size_t>(2));
  EXPECT_EQ(pick(172, 180), std::optional<std::size_t>(3));
  // On the hidden halo particle at (215, 135): the nearest visible one, (200, 120) or (200, 150)
  // at 21.2 px, or (230, 150) at 21.2 px — any of those, never the halo.
  const auto hidden = pick(215, 135);
  ASSERT_TRUE(hidden.has_value());
  EXPECT_NE(*hidden, 4u);
  // Far from everything: nothing.
  EXPECT_FALSE(pick(380, 20).has_value());
  // The particle behind the eye is never picked, wherever it would project.
  const glm::vec3 behind = camera.project({20.0f, 0.3f, 0.3f}, 400, 300);
  const auto b = pick(behind.x, behind.y);
  EXPECT_TRUE(!b.has_value() || *b != 5u);
  // Shown, the halo particle is picked.
  app::ViewSettings all;
  all.visible = {true, true, true, true};
  EXPECT_EQ(app::pickParticle(p, all, camera, 400, 300, {215, 135}), std::optional<std::size_t>(4));
}

TEST(WalkOverlay, BoxesAreTheInspectionsCellsInTheirColours) {
  const sim::Particles state = sim::makePlummer(3000, 4);
  sim::SimParams params;
  app::WalkInspection walk;
  EXPECT_THROW(walk.inspect(state, params, 3000, 0.0), std::out_of_range);
  EXPECT_FALSE(walk.active());
  walk.inspect(state, params, 17, 0.0);
  ASSERT_TRUE(walk.active());
  EXPECT_NE(walk.summary().find("walk of particle 17"), std::string::npos);
  const auto& list = walk.list();
  ASSERT_FALSE(list.cells.empty());
  ASSERT_FALSE(list.leaves.empty());
  ASSERT_FALSE(list.opened.empty());

  app::WalkOverlay overlay;  // the whole list
  auto boxes = app::walkBoxes(walk, overlay);
  EXPECT_EQ(boxes.size(), list.cells.size() + list.leaves.size() + list.opened.size() + 1);
  // The accepted cells in green, those the walk expands about the group's centre in magenta.
  const std::size_t expanded = walk.walk().expandedCount();
  EXPECT_GT(expanded, 0u) << "the default rho expands some cells of this group";
  EXPECT_EQ(countColour(boxes, app::kExpandedColour), expanded);
  EXPECT_EQ(countColour(boxes, app::kAcceptedColour), list.cells.size() - expanded);
  EXPECT_NE(walk.summary().find(std::to_string(expanded) + " of them expanded"), std::string::npos)
      << walk.summary();
  EXPECT_EQ(countColour(boxes, app::kLeafColour), list.leaves.size());
  EXPECT_EQ(countColour(boxes, app::kOpenedColour), list.opened.size());
  EXPECT_EQ(countColour(boxes, app::kPickedGroupColour), 1u);

  overlay.highlight = list.cells.front();
  EXPECT_EQ(countColour(app::walkBoxes(walk, overlay), app::kHighlightColour), 2u);

  const sim::Tree& tree = walk.scene().tree;
  overlay = {};
  overlay.mode = app::WalkOverlay::Mode::Build;
  for (int level = 0; level < tree.depth(); ++level) {
    overlay.level = level;
    EXPECT_EQ(app::walkBoxes(walk, overlay).size(), tree.levelBegin[level + 1]) << level;
  }

  overlay.mode = app::WalkOverlay::Mode::Walk;
  std::size_t tested = 0;
  for (std::size_t k = 0; k < walk.fronts().size(); ++k) {
    overlay.step = static_cast<int>(k);
    boxes = app::walkBoxes(walk, overlay);
    tested += walk.fronts()[k].cells.size();
    EXPECT_EQ(boxes.size(), tested + 1) << "front " << k;
    // The current front at full strength, in its verdicts' colours.
    std::size_t bright = 0;
    for (const render::OverlayBox& b : boxes) {
      bright += b.colour == app::kAcceptedColour || b.colour == app::kExpandedColour ||
                b.colour == app::kLeafColour || b.colour == app::kOpenedColour;
    }
    EXPECT_EQ(bright, walk.fronts()[k].cells.size()) << "front " << k;
  }
  EXPECT_EQ(tested, list.cells.size() + list.leaves.size() + list.opened.size());
}

TEST(WalkCli, PickIsCheckedAndNeedsAPictureHeadless) {
  std::ostringstream out;
  const auto o = app::parseCommandLine(
      std::vector<std::string>{"--scenario", "plummer", "--n", "100", "--pick", "99"}, out);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->frames.pickId, 99);
  const std::vector<std::vector<std::string>> bad = {
      {"--n", "100", "--pick", "100"},
      {"--n", "100", "--pick", "-1"},
      {"--n", "100", "--pick", "x"},
      {"--headless", "--n", "100", "--pick", "3"},
  };
  const char* expected[] = {"--pick = 100 is out of range: must be in [0, 99]", "--pick = -1",
                            "--pick = 'x' is not an integer",
                            "--pick needs --frames DIR, --video FILE or --screenshot FILE"};
  for (std::size_t k = 0; k < bad.size(); ++k) {
    try {
      app::parseCommandLine(bad[k], out);
      ADD_FAILURE() << "no error for case " << k;
    } catch (const app::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(expected[k]), std::string::npos) << e.what();
    }
  }
}

// The docs' picture: the interaction list drawn headless has pixels of all three colours, which
// the same picture without --pick lacks.
TEST(WalkPicture, HeadlessPickDrawsTheThreeColours) {
  if (glDisabled()) GTEST_SKIP() << "BHVIZ_NO_GL=1";
  TempDir dir;
  const std::string common =
      "--headless --backend cpu --scenario plummer --n 3000 --steps 0 "
      "--quiet --size 320x240 --screenshot ";
  const fs::path walkPng = dir.path / "walk.png", plainPng = dir.path / "plain.png";
  const Process p = runBhviz(common + walkPng.string() + " --pick 17");
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.out.find("walk of particle 17"), std::string::npos) << p.out;
  ASSERT_EQ(runBhviz(common + plainPng.string()).status, 0);
  const WalkPixels walk = walkPixels(render::readPng(walkPng));
  const WalkPixels plain = walkPixels(render::readPng(plainPng));
  std::printf("[pixels] walk: %zu green, %zu orange, %zu blue; plain: %zu, %zu, %zu\n",
              walk.accepted, walk.leaf, walk.opened, plain.accepted, plain.leaf, plain.opened);
  EXPECT_GT(walk.accepted, 200u);
  EXPECT_GT(walk.leaf, 200u);
  EXPECT_GT(walk.opened, 50u);
  EXPECT_GT(walk.accepted, 10 * plain.accepted + 10);
  EXPECT_GT(walk.leaf, 10 * plain.leaf + 10);
  EXPECT_GT(walk.opened, 10 * plain.opened + 10);

  // A --pick the state does not have (N from a snapshot is known only when it is read).
  const Process bad =
      runBhviz("--headless --n 10 --steps 0 --screenshot " + walkPng.string() + " --pick 10");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--pick = 10 is out of range"), std::string::npos) << bad.err;
}
