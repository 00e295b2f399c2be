// The merger builder: a ScenarioSpec written as a scenario file reads back to the same spec and
// particles (every built-in, and a spec with every key away from its default), is checked with
// the file loader's messages, and run from the saved file by the executable gives the particles
// the spec builds in-process, bit for bit; the disk's spin sense; the Kepler preview against the
// orbit's parameters and the built galaxies; the builder's counts, saving and Run.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "app/core/settings.h"
#include "app/window/builder.h"
#include "process_support.h"
#include "sim/ic/initial_conditions.h"
#include "sim/ic/merger_preview.h"
#include "sim/ic/scenario_file.h"
#include "sim/ic/scenario_writer.h"
#include "sim/io/snapshot.h"

namespace bhviz {
namespace {

namespace fs = std::filesystem;
using sim::GalaxySpec;
using sim::Particles;
using sim::PreviewPoint;
using sim::ScenarioSpec;

bool identical(const Particles& a, const Particles& b) {
  return a.size() == b.size() &&
         std::memcmp(a.posMass.data(), b.posMass.data(), a.size() * sizeof(sim::Vec4)) == 0 &&
         std::memcmp(a.vel.data(), b.vel.data(), a.size() * sizeof(sim::Vec4)) == 0 &&
         a.tag == b.tag;
}

/// A merger with every key away from its default: own secondary, no bulge, spins, nodes, a
/// camera script, a bound orbit.
ScenarioSpec unusualMerger() {
  ScenarioSpec s = sim::builtinScenario("mw-andromeda");
  s.description = "every key \"quoted\" and unusual";
  s.seed = 18446744073709551615ull;
  s.softening = 0.037f;
  s.dt = 0.0123f;
  GalaxySpec& a = s.galaxies[0];
  a.params.toomreRadius = 1.7;
  a.params.diskScaleHeight = 0.123456789;
  a.spin = -1;
  a.node = -47.25;
  GalaxySpec& b = s.galaxies[1];
  b.params.bulgeMass = 0.0;
  b.bulge = 0;
  b.params.bulgeScale = 0.33;  // kept though there is no bulge
  b.params.haloCutoff = 41.5;
  b.inclination = 170.0;
  b.spin = -1;
  s.orbit = {1.5, 0.45, 3.0};
  s.camera.autoRotate = -0.2;
  s.camera.keys = {{0.0, 10.0, 20.0, 0.5}, {3.5, -20.0, 45.0, 1.25}};
  return s;
}

void expectRoundTrip(const ScenarioSpec& spec, std::size_t n) {
  const std::string text = sim::scenarioJson(spec);
  const ScenarioSpec back = sim::parseScenario(text, "round trip");
  EXPECT_TRUE(sim::sameScenario(spec, back)) << text;
  EXPECT_EQ(sim::scenarioJson(back), text);
  EXPECT_TRUE(
      identical(sim::buildScenario(spec, n, spec.seed), sim::buildScenario(back, n, back.seed)))
      << spec.name;
}

TEST(ScenarioJson, EveryBuiltInRoundTrips) {
  ASSERT_GE(sim::embeddedScenarios().size(), 10u);
  for (const sim::EmbeddedScenario& e : sim::embeddedScenarios()) {
    SCOPED_TRACE(e.name);
    expectRoundTrip(sim::builtinScenario(e.name), 3000);
  }
}

TEST(ScenarioJson, EveryKeyRoundTrips) {
  const ScenarioSpec spec = unusualMerger();
  expectRoundTrip(spec, 0);
  // The minor merger's secondary is written as a mass ratio, and read back as one.
  const ScenarioSpec& minor = sim::builtinScenario("minor-merger");
  ASSERT_GT(minor.galaxies[1].massRatio, 0.0);
  EXPECT_NE(sim::scenarioJson(minor).find("\"mass_ratio\": 0.1"), std::string::npos);
  // A scaled secondary edited by hand is written in full: its edits are kept.
  ScenarioSpec edited = minor;
  edited.galaxies[1].params.toomreQ = 2.5;
  const ScenarioSpec back = sim::parseScenario(sim::scenarioJson(edited), "edited");
  EXPECT_EQ(back.galaxies[1].params.toomreQ, 2.5);
  EXPECT_EQ(back.galaxies[1].massRatio, 0.0);
  EXPECT_EQ(back.galaxies[1].disk, edited.galaxies[1].disk);
  // Spheres keep their model's own keys.
  ScenarioSpec cold = sim::builtinScenario("cold-collapse");
  cold.sphere.virialRatio = 0.3;
  expectRoundTrip(cold, 500);
  EXPECT_FALSE(sim::sameScenario(cold, sim::builtinScenario("cold-collapse")));
}

TEST(ScenarioJson, IsCheckedWithTheFileLoadersMessages) {
  ScenarioSpec spec = sim::builtinScenario("merger");
  EXPECT_NO_THROW(sim::validateScenario(spec, "builder"));
  spec.galaxies[0].params.toomreQ = 0.1;
  EXPECT_EQ(app::builderProblem(spec),
            "builder: galaxies[0].disk.toomre_q = 0.1 is out of range: must be in [0.5, 10]");
  spec = sim::builtinScenario("minor-merger");
  spec.orbit.separation = 100.0;  // beyond the apocentre 27 of e = 0.8, pericentre 3
  EXPECT_EQ(app::builderProblem(spec),
            "builder: orbit.separation = 100 is out of range: must be in [3, 27]");
  spec = sim::builtinScenario("merger");
  spec.galaxies[1] = spec.galaxies[0];
  spec.galaxies[1].bulge = 0;  // a bulge with mass needs particles
  EXPECT_NE(app::builderProblem(spec).find("galaxies[1].bulge.particles = 0 does not fit"),
            std::string::npos)
      << app::builderProblem(spec);
}

// ---- Spin sense -----------------------------------------------------------------------------

/// The disk particles' angular momentum about their centre of mass, per unit mass.
PreviewPoint diskSpin(const Particles& p, unsigned galaxy) {
  double m = 0, c[3] = {0, 0, 0}, v[3] = {0, 0, 0};
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (sim::tagComponent(p.tag[i]) != sim::Component::Disk || sim::tagGalaxy(p.tag[i]) != galaxy)
      continue;
    const double w = p.posMass[i].w;
    m += w;
    c[0] += w * p.posMass[i].x, c[1] += w * p.posMass[i].y, c[2] += w * p.posMass[i].z;
    v[0] += w * p.vel[i].x, v[1] += w * p.vel[i].y, v[2] += w * p.vel[i].z;
  }
  for (int k = 0; k < 3; ++k) c[k] /= m, v[k] /= m;
  PreviewPoint l;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (sim::tagComponent(p.tag[i]) != sim::Component::Disk || sim::tagGalaxy(p.tag[i]) != galaxy)
      continue;
    const double w = p.posMass[i].w / m;
    const double x = p.posMass[i].x - c[0], y = p.posMass[i].y - c[1], z = p.posMass[i].z - c[2];
    const double a = p.vel[i].x - v[0], b = p.vel[i].y - v[1], d = p.vel[i].z - v[2];
    l.x += w * (y * d - z * b);
    l.y += w * (z * a - x * d);
    l.z += w * (x * b - y * a);
  }
  return l;
}

double dot(PreviewPoint a, PreviewPoint b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
double norm(PreviewPoint a) { return std::sqrt(dot(a, a)); }

TEST(SpinSense, ACounterRotatingDiskTurnsTheOtherWay) {
  ScenarioSpec galaxy = sim::builtinScenario("galaxy");
  galaxy.galaxies[0].inclination = 30.0;
  const Particles pro = sim::buildScenario(galaxy, 4000, 3);
  galaxy.galaxies[0].spin = -1;
  const Particles retro = sim::buildScenario(galaxy, 4000, 3);
  const PreviewPoint lPro = diskSpin(pro, 0), lRetro = diskSpin(retro, 0);
  // The same disk (positions bit for bit), its angular momentum reversed.
  EXPECT_EQ(std::memcmp(pro.posMass.data(), retro.posMass.data(), pro.size() * sizeof(sim::Vec4)),
            0);
  EXPECT_GT(norm(lPro), 0.3);
  EXPECT_NEAR(dot(lPro, lRetro) / (norm(lPro) * norm(lRetro)), -1.0, 1e-3);
  EXPECT_NEAR(norm(lRetro) / norm(lPro), 1.0, 1e-3);
  // The tilted axis: Rx(30°) turns +z towards −y.
  EXPECT_NEAR(lPro.y / norm(lPro), -std::sin(std::acos(-1.0) / 6.0), 1e-2);

  // In a merger, per galaxy, from the file's key; the total momentum stays zero.
  ScenarioSpec merger =
      sim::parseScenario(sim::scenarioJson(sim::builtinScenario("merger")), "merger");
  merger.galaxies[1].spin = -1;
  const ScenarioSpec read = sim::parseScenario(sim::scenarioJson(merger), "spin");
  EXPECT_EQ(read.galaxies[1].spin, -1);
  const Particles base = sim::buildScenario(sim::builtinScenario("merger"), 4000, 1);
  const Particles flipped = sim::buildScenario(read, 4000, 1);
  EXPECT_NEAR(
      dot(diskSpin(base, 0), diskSpin(flipped, 0)) / dot(diskSpin(base, 0), diskSpin(base, 0)), 1.0,
      1e-6);
  EXPECT_LT(dot(diskSpin(base, 1), diskSpin(flipped, 1)), 0.0);
  double momentum[3] = {0, 0, 0};
  for (std::size_t i = 0; i < flipped.size(); ++i) {
    momentum[0] += double(flipped.posMass[i].w) * flipped.vel[i].x;
    momentum[1] += double(flipped.posMass[i].w) * flipped.vel[i].y;
    momentum[2] += double(flipped.posMass[i].w) * flipped.vel[i].z;
  }
  for (const double m : momentum) EXPECT_NEAR(m, 0.0, 1e-5);
}

TEST(SpinSense, OnlyPlusOrMinusOneIsAccepted) {
  const auto message = [](const std::string& spin) {
    std::string text = sim::scenarioJson(sim::builtinScenario("galaxy"));
    const std::size_t at = text.find("\"spin\": 1");
    text.replace(at, 9, "\"spin\": " + spin);
    try {
      sim::parseScenario(text, "bad.json");
    } catch (const sim::ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message("0"),
            "bad.json: galaxies[0].spin = 0 is out of range: must be 1 (counter-clockwise) or -1 "
            "(clockwise, a counter-rotating disk)");
  EXPECT_NE(message("2").find("galaxies[0].spin = 2 is out of range: must be in [-1, 1]"),
            std::string::npos);
  EXPECT_EQ(message("-1"), "");
}

// ---- The Kepler preview ---------------------------------------------------------------------

PreviewPoint minus(PreviewPoint a, PreviewPoint b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }

void expectKeplerOrbit(const sim::OrbitParams& orbit, double massRatio) {
  SCOPED_TRACE("e = " + std::to_string(orbit.eccentricity) +
               ", separation = " + std::to_string(orbit.separation));
  ScenarioSpec spec = sim::builtinScenario("merger");
  spec.orbit = orbit;
  app::setMassRatio(spec, massRatio);
  const sim::MergerPreview v = sim::mergerPreview(spec, 257);
  const double m0 = v.mass[0], m1 = v.mass[1], total = m0 + m1;
  EXPECT_NEAR(m1 / m0, massRatio, 1e-12);
  ASSERT_EQ(v.paths[0].size(), 257u);
  // Every point: the pair's centre of mass at the origin.
  double closest = 1e300;
  for (std::size_t k = 0; k < v.paths[0].size(); ++k) {
    const PreviewPoint a = v.paths[0][k], b = v.paths[1][k];
    EXPECT_NEAR(m0 * a.x + m1 * b.x, 0.0, 1e-9 * total * orbit.separation);
    EXPECT_NEAR(m0 * a.y + m1 * b.y, 0.0, 1e-9 * total * orbit.separation);
    closest = std::min(closest, norm(minus(b, a)));
  }
  // It passes through the starting separation and the pericentre (the middle point).
  EXPECT_NEAR(norm(minus(v.paths[1].front(), v.paths[0].front())), orbit.separation,
              1e-12 * orbit.separation);
  EXPECT_NEAR(norm(v.relativePosition), orbit.separation, 1e-12 * orbit.separation);
  EXPECT_NEAR(closest, orbit.pericentre, 1e-9 * orbit.pericentre);
  EXPECT_NEAR(norm(minus(v.paths[1][128], v.paths[0][128])), orbit.pericentre,
              1e-9 * orbit.pericentre);
  // The start's energy and eccentricity vector are the orbit's; the pair approaches.
  const PreviewPoint r = v.relativePosition, u = v.relativeVelocity;
  const double energy = 0.5 * dot(u, u) - total / norm(r);
  EXPECT_NEAR(energy, total * (orbit.eccentricity - 1.0) / (2.0 * orbit.pericentre),
              1e-9 * total / orbit.pericentre);
  const double k = dot(u, u) - total / norm(r), rv = dot(r, u);
  const PreviewPoint e = {(k * r.x - rv * u.x) / total, (k * r.y - rv * u.y) / total,
                          (k * r.z - rv * u.z) / total};
  EXPECT_NEAR(norm(e), orbit.eccentricity, 1e-9);
  const bool atApocentre = orbit.eccentricity < 1.0 &&
                           orbit.separation >= orbit.pericentre * (1.0 + orbit.eccentricity) /
                                                   (1.0 - orbit.eccentricity) * (1.0 - 1e-12);
  if (orbit.separation > orbit.pericentre && !atApocentre) {
    EXPECT_LT(rv, 0.0);
  }
}

TEST(KeplerPreview, PericentreSeparationEnergyAndEccentricityAreTheOrbits) {
  expectKeplerOrbit({2.0, 1.0, 20.0}, 1.0);  // the built-in: parabolic
  expectKeplerOrbit({3.0, 0.8, 15.0}, 0.1);  // the minor merger: bound
  expectKeplerOrbit({1.0, 1.8, 30.0}, 0.5);  // hyperbolic
  expectKeplerOrbit({4.0, 0.5, 12.0}, 0.3);  // bound, starting at its apocentre
  expectKeplerOrbit({5.0, 0.0, 5.0}, 1.0);   // a circle
}

TEST(KeplerPreview, MatchesTheBuiltGalaxiesAndTheirDisks) {
  ScenarioSpec spec = unusualMerger();
  spec.orbit = {2.5, 0.9, 25.0};
  const sim::MergerPreview v = sim::mergerPreview(spec);
  const Particles p = sim::buildScenario(spec, 0, spec.seed);
  PreviewPoint centre[2], vel[2];
  double mass[2] = {0, 0};
  for (std::size_t i = 0; i < p.size(); ++i) {
    const unsigned g = sim::tagGalaxy(p.tag[i]);
    const double w = p.posMass[i].w;
    mass[g] += w;
    centre[g].x += w * p.posMass[i].x, centre[g].y += w * p.posMass[i].y;
    centre[g].z += w * p.posMass[i].z;
    vel[g].x += w * p.vel[i].x, vel[g].y += w * p.vel[i].y, vel[g].z += w * p.vel[i].z;
  }
  for (int g = 0; g < 2; ++g) {
    EXPECT_NEAR(mass[g], v.mass[g], 1e-4 * v.mass[g]);
    const PreviewPoint c = {centre[g].x / mass[g], centre[g].y / mass[g], centre[g].z / mass[g]};
    EXPECT_LT(norm(minus(c, v.disks[g].centre)), 1e-4 * spec.orbit.separation) << "galaxy " << g;
    EXPECT_LT(norm(minus(c, v.paths[g].front())), 1e-4 * spec.orbit.separation);
    // The ring: in the disk's plane, of its radius, about its axis.
    const sim::DiskPreview& d = v.disks[g];
    EXPECT_NEAR(norm(d.axis), 1.0, 1e-12);
    EXPECT_DOUBLE_EQ(d.radius, 3.0 * spec.galaxies[g].params.diskScaleLength);
    for (const PreviewPoint& q : d.ring) {
      EXPECT_NEAR(norm(minus(q, d.centre)), d.radius, 1e-9 * d.radius);
      EXPECT_NEAR(dot(minus(q, d.centre), d.axis), 0.0, 1e-9 * d.radius);
    }
    // The axis is where the built disk's angular momentum points (spins included).
    const PreviewPoint l = diskSpin(p, static_cast<unsigned>(g));
    EXPECT_GT(dot(l, d.axis) / norm(l), 0.98) << "galaxy " << g;
  }
  const PreviewPoint relVel = {vel[1].x / mass[1] - vel[0].x / mass[0],
                               vel[1].y / mass[1] - vel[0].y / mass[0],
                               vel[1].z / mass[1] - vel[0].z / mass[0]};
  EXPECT_LT(norm(minus(relVel, v.relativeVelocity)), 1e-3 * norm(v.relativeVelocity));
  EXPECT_THROW(sim::mergerPreview(sim::builtinScenario("galaxy")), sim::InvalidParameter);
}

// ---- The builder ----------------------------------------------------------------------------

TEST(MergerBuilder, CountsFollowTheSharesAndTheMassRatio) {
  ScenarioSpec spec = app::builderStart(nullptr);
  EXPECT_TRUE(sim::sameScenario(spec, sim::builtinScenario("merger")));
  app::BuilderCounts c = app::builderCounts(spec);
  EXPECT_EQ(c.n, 20000u);
  app::setMassRatio(spec, 0.0);  // galaxy 1 its own model
  c.n = 12345;
  c.primaryShare = 0.75;
  c.disk = {0.4, 0.6};
  c.bulge = {0.1, 0.0};
  app::setBuilderCounts(spec, c);
  EXPECT_EQ(spec.particles(), 12345u);
  EXPECT_EQ(spec.galaxies[0].particles(), 9259u);  // round(0.75 n)
  EXPECT_EQ(spec.galaxies[0].disk, 3704u);         // round(0.4 × 9259)
  EXPECT_EQ(spec.galaxies[0].bulge, 926u);
  EXPECT_EQ(spec.galaxies[1].disk, 1852u);  // round(0.6 × 3086)
  EXPECT_EQ(spec.galaxies[1].bulge, 1u);    // it has mass: at least one
  EXPECT_EQ(app::builderProblem(spec), "");
  // A scaled copy follows galaxy 0: its masses by q, counts by q.
  app::setMassRatio(spec, 0.25);
  EXPECT_EQ(spec.galaxies[1].params.diskMass, 0.25 * spec.galaxies[0].params.diskMass);
  EXPECT_EQ(spec.galaxies[1].disk, 926u);  // round(0.25 × 3704)
  spec.galaxies[0].params.bulgeMass = 0.0;
  app::refreshCounts(spec);
  EXPECT_EQ(spec.galaxies[0].bulge, 0u);
  EXPECT_EQ(spec.galaxies[1].bulge, 0u);
  EXPECT_EQ(spec.galaxies[0].particles(), 9259u);  // its total kept
  EXPECT_EQ(app::builderProblem(spec), "");
  // A running merger is where it starts from; anything else gives the built-in.
  const ScenarioSpec& minor = sim::builtinScenario("minor-merger");
  EXPECT_TRUE(sim::sameScenario(app::builderStart(&minor), minor));
  EXPECT_TRUE(sim::sameScenario(app::builderStart(&sim::builtinScenario("plummer")),
                                sim::builtinScenario("merger")));
}

// The test: builder → saved file → `bhviz --headless --scenario FILE` gives the initial
// conditions of the spec built in-process.
TEST(MergerBuilder, SavedFileRunsToTheSameParticlesAsTheSpec) {
  test::TempDir dir;
  ScenarioSpec spec = app::builderStart(&sim::builtinScenario("mw-andromeda"));
  spec.galaxies[1].spin = -1;
  spec.galaxies[0].node = 33.0;
  spec.orbit = {3.0, 0.7, 12.0};
  app::BuilderCounts c = app::builderCounts(spec);
  c.n = 5000;
  app::setBuilderCounts(spec, c);
  const fs::path file = dir.path / "built.json";
  ASSERT_EQ(app::saveScenarioAs(file, spec, false), app::SaveOutcome::Saved);
  EXPECT_TRUE(sim::sameScenario(sim::loadScenarioFile(file.string()), spec));

  const fs::path saved = dir.path / "x.tipsy", mine = dir.path / "mine.tipsy";
  const test::Process p = test::runBhviz("--headless --quiet --backend cpu --scenario " +
                                         file.string() + " --steps 0 --save " + saved.string());
  ASSERT_EQ(p.status, 0) << p.out << p.err;
  // Both through the same Tipsy writer (its order: dark, then stars, each by id).
  sim::io::writeSnapshot(mine.string(), sim::buildScenario(spec, 0, spec.seed), 0.0);
  const Particles a = sim::io::readSnapshot(saved.string());
  const Particles b = sim::io::readSnapshot(mine.string());
  ASSERT_EQ(a.size(), 5000u);
  EXPECT_TRUE(identical(a, b));
}

TEST(MergerBuilder, SaveAsAsksBeforeReplacingAndRefusesBadSpecs) {
  test::TempDir dir;
  const fs::path file = dir.path / "mine.json";
  ScenarioSpec spec = app::builderStart(nullptr);
  ASSERT_EQ(app::saveScenarioAs(file, spec, false), app::SaveOutcome::Saved);
  const std::string first = test::readText(file);
  spec.orbit.pericentre = 4.0;
  EXPECT_EQ(app::saveScenarioAs(file, spec, false), app::SaveOutcome::Exists);
  EXPECT_EQ(test::readText(file), first);
  EXPECT_EQ(app::saveScenarioAs(file, spec, true), app::SaveOutcome::Saved);
  EXPECT_EQ(sim::loadScenarioFile(file.string()).orbit.pericentre, 4.0);
  EXPECT_FALSE(fs::exists(dir.path / "mine.json.tmp"));
  spec.orbit.eccentricity = 9.0;  // beyond [0, 5]: refused, nothing written
  EXPECT_THROW(app::saveScenarioAs(file, spec, true), sim::ScenarioError);
  EXPECT_EQ(sim::loadScenarioFile(file.string()).orbit.pericentre, 4.0);
  EXPECT_THROW(app::saveScenarioAs(dir.path, spec, true), std::runtime_error);
}

TEST(MergerBuilder, RunMakesTheSavedFileTheScene) {
  test::TempDir dir;
  setenv("XDG_DATA_HOME", dir.path.c_str(), 1);
  const fs::path path = app::builderRunPath();
  unsetenv("XDG_DATA_HOME");
  EXPECT_EQ(path, dir.path / "bhviz" / "builder.json");
  ScenarioSpec spec = app::builderStart(&sim::builtinScenario("minor-merger"));
  spec.seed = 42;
  app::writeScenarioFile(path, spec);  // makes the folder
  app::SceneSettings scene;
  scene.snapshotPath = "old.tipsy";
  sim::SimParams params;
  params.stepping = sim::TimeStepping::Block;
  app::applyBuilderRun(spec, path, scene, params);
  EXPECT_EQ(scene.scenario, path.string());
  EXPECT_TRUE(sim::isScenarioPath(scene.scenario));
  EXPECT_EQ(scene.n, spec.particles());
  EXPECT_EQ(scene.seed, 42u);
  EXPECT_TRUE(scene.snapshotPath.empty());
  EXPECT_EQ(params.softening, spec.softening);
  EXPECT_EQ(params.dtMax, spec.dt * 8.0f);
  EXPECT_TRUE(sim::sameScenario(sim::resolveScenario(scene.scenario), spec));
}

TEST(MergerBuilder, PreviewLinesOnlyWhileShown) {
  app::BuilderState b;
  EXPECT_TRUE(app::builderPreviewLines(b, true).empty());  // not set up yet
  b.spec = app::builderStart(nullptr);
  b.ready = true;
  const sim::MergerPreview v = sim::mergerPreview(b.spec);
  const std::vector<render::OverlayLine> lines = app::builderPreviewLines(b, true);
  std::size_t expected = 0;
  for (int g = 0; g < 2; ++g) expected += v.paths[g].size() - 1 + v.disks[g].ring.size() - 1 + 1;
  EXPECT_EQ(lines.size(), expected);
  EXPECT_FLOAT_EQ(lines.front().a.x, static_cast<float>(v.paths[0].front().x));
  EXPECT_TRUE(app::builderPreviewLines(b, false).empty());
  b.preview = false;
  EXPECT_TRUE(app::builderPreviewLines(b, true).empty());
  b.preview = true;
  b.spec.orbit.pericentre = -1.0;  // no orbit to preview
  EXPECT_TRUE(app::builderPreviewLines(b, true).empty());
}

}  // namespace
}  // namespace bhviz
