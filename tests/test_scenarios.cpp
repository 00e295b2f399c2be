// Scenario files (sim/ic/scenario_file.h): every shipped file loads and builds with its stated
// counts, the built-in names reproduce the original generators bit for bit, each class of bad
// file gets one message naming the file and the key (hostile ones too: FIFOs and devices, huge
// or deeply nested files, numbers beyond a double, values that cannot be built; on the command
// line exit status 2 and no hang), the models keep their promises (a cold collapse is cold, a
// minor merger has its mass ratio), the command line takes a file, and the scripted camera
// interpolates its keys.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "app/core/cli.h"
#include "process_support.h"
#include "render/camera_path.h"
#include "sim/direct_sum.h"
#include "sim/ic/initial_conditions.h"
#include "sim/ic/scenario_file.h"

namespace bhviz::sim {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

const fs::path kScenarioDir = BHVIZ_SCENARIO_DIR;

std::vector<fs::path> shippedFiles() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kScenarioDir)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool identical(const Particles& a, const Particles& b) {
  return a.size() == b.size() &&
         std::memcmp(a.posMass.data(), b.posMass.data(), a.size() * sizeof(Vec4)) == 0 &&
         std::memcmp(a.vel.data(), b.vel.data(), a.size() * sizeof(Vec4)) == 0 && a.tag == b.tag;
}

std::size_t countTag(const Particles& p, Component c, unsigned galaxy) {
  return static_cast<std::size_t>(std::count(p.tag.begin(), p.tag.end(), makeTag(c, galaxy)));
}

double galaxyMass(const Particles& p, unsigned galaxy) {
  double m = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (tagGalaxy(p.tag[i]) == galaxy) m += p.posMass[i].w;
  }
  return m;
}

// ---- Shipped files ---------------------------------------------------------------------------

TEST(ScenarioFiles, EveryShippedFileIsABuiltInAndBuildsWithItsCounts) {
  const std::vector<fs::path> files = shippedFiles();
  std::set<std::string> onDisk, builtIn;
  for (const ScenarioInfo& s : scenarios()) builtIn.insert(s.name);
  for (const fs::path& f : files) onDisk.insert(f.stem().string());
  EXPECT_EQ(onDisk, builtIn)
      << "assets/scenarios and the embedded list (sim/CMakeLists.txt) differ";
  for (const char* name : {"plummer", "cold-collapse", "hernquist", "milky-way", "major-merger",
                           "minor-merger", "mw-andromeda", "teaching", "nfw", "m31", "uniform"}) {
    EXPECT_EQ(onDisk.count(name), 1u) << name;
  }

  for (const fs::path& f : files) {
    SCOPED_TRACE(f.string());
    const ScenarioSpec spec = loadScenarioFile(f.string());
    EXPECT_FALSE(spec.description.empty());
    EXPECT_EQ(spec.name, f.string());
    const Particles p = buildScenario(spec, 0, spec.seed);
    ASSERT_EQ(p.size(), spec.particles());
    for (std::size_t g = 0; g < spec.galaxies.size(); ++g) {
      const GalaxySpec& gs = spec.galaxies[g];
      EXPECT_EQ(countTag(p, Component::Disk, g), gs.disk) << "galaxy " << g;
      EXPECT_EQ(countTag(p, Component::Bulge, g), gs.bulge) << "galaxy " << g;
      EXPECT_EQ(countTag(p, Component::Halo, g), gs.halo) << "galaxy " << g;
      const double mass = gs.params.diskMass + gs.params.bulgeMass + gs.params.haloMass;
      EXPECT_NEAR(galaxyMass(p, g), mass, 1e-4 * mass) << "galaxy " << g;
    }
    // The embedded copy is the same file.
    const ScenarioSpec& embedded = builtinScenario(f.stem().string());
    EXPECT_EQ(embedded.particles(), spec.particles());
    EXPECT_EQ(embedded.description, spec.description);
  }
}

TEST(ScenarioFiles, TeachingHasAFewThousandParticles) {
  const std::size_t n = builtinScenario("teaching").particles();
  EXPECT_GE(n, 1000u);
  EXPECT_LE(n, 10000u);
}

TEST(ScenarioFiles, BuiltInsReproduceTheOriginalGenerators) {
  for (std::size_t n : {7u, 1001u}) {
    for (std::uint64_t seed : {1u, 9u}) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(seed));
      EXPECT_TRUE(identical(makeScenario("plummer", n, seed), makePlummer(n, seed)));
      EXPECT_TRUE(identical(makeScenario("hernquist", n, seed), makeHernquist(n, seed)));
      EXPECT_TRUE(identical(makeScenario("galaxy", n, seed), makeGalaxy(n, seed)));
      EXPECT_TRUE(identical(makeScenario("merger", n, seed), makeMerger(n, seed)));
    }
  }
}

TEST(ScenarioFiles, CountsScaleWithN) {
  // milky-way: 19200 / 3200 / 41600 → at 16000: 4800 / 800 / 10400.
  const Particles p = buildScenario(builtinScenario("milky-way"), 16000, 1);
  ASSERT_EQ(p.size(), 16000u);
  EXPECT_EQ(countTag(p, Component::Disk, 0), 4800u);
  EXPECT_EQ(countTag(p, Component::Bulge, 0), 800u);
  EXPECT_EQ(countTag(p, Component::Halo, 0), 10400u);
  // A merger keeps the file's split between the galaxies.
  const ScenarioSpec& minor = builtinScenario("minor-merger");
  const Particles m = buildScenario(minor, 4400, 1);
  ASSERT_EQ(m.size(), 4400u);
  std::size_t secondary = 0;
  for (std::uint8_t t : m.tag) secondary += tagGalaxy(t) == 1 ? 1 : 0;
  EXPECT_EQ(secondary, 400u);
}

// ---- Model properties -------------------------------------------------------------------------

TEST(ScenarioFiles, ColdCollapseIsCold) {
  const ScenarioSpec& spec = builtinScenario("cold-collapse");
  const Particles p = buildScenario(spec, 3000, spec.seed);
  double kinetic = 0.0, potential = 0.0;
  const std::vector<Accel4d> acc = directSumAll(p, 0.0);
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double m = p.posMass[i].w;
    const Vec4& v = p.vel[i];
    kinetic += 0.5 * m * (double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z);
    potential += 0.5 * m * acc[i][3];
  }
  EXPECT_LT(2.0 * kinetic / std::abs(potential), 0.05);
  // A uniform sphere: W = −3GM²/(5R), up to sampling noise and the discreteness of N points.
  const double w = -0.6 * spec.sphere.mass * spec.sphere.mass / spec.sphere.scale;
  EXPECT_NEAR(potential / w, 1.0, 0.05);

  // A warm sphere asked for gets its virial ratio.
  const Particles warm = makeColdCollapse(3000, 2, 1.0, 1.0, 0.5);
  double k2 = 0.0;
  for (std::size_t i = 0; i < warm.size(); ++i) {
    const Vec4& v = warm.vel[i];
    k2 += 0.5 * warm.posMass[i].w * (double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z);
  }
  EXPECT_NEAR(2.0 * k2 / 0.6, 0.5, 0.05);
}

TEST(ScenarioFiles, MinorMergerHasItsMassRatio) {
  const ScenarioSpec spec = loadScenarioFile((kScenarioDir / "minor-merger.json").string());
  // The file says galaxies[1] = {"mass_ratio": 0.1, ...}.
  const Particles p = buildScenario(spec, 0, spec.seed);
  EXPECT_NEAR(galaxyMass(p, 1) / galaxyMass(p, 0), 0.1, 1e-4);
  // Equal particle masses in both galaxies' disks (counts scaled with the mass).
  float disk0 = 0.0f, disk1 = 0.0f;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p.tag[i] == makeTag(Component::Disk, 0)) disk0 = p.posMass[i].w;
    if (p.tag[i] == makeTag(Component::Disk, 1)) disk1 = p.posMass[i].w;
  }
  EXPECT_NEAR(disk1 / disk0, 1.0, 1e-3);
}

TEST(ScenarioFiles, MilkyWayAndromedaIsUnequalAndInclined) {
  const ScenarioSpec& spec = builtinScenario("mw-andromeda");
  const Particles p = buildScenario(spec, 6000, spec.seed);
  const double ratio = galaxyMass(p, 0) / galaxyMass(p, 1);
  EXPECT_GE(ratio, 1.5);
  EXPECT_LE(ratio, 2.0);
  EXPECT_NE(spec.galaxies[0].inclination, 0.0);
  EXPECT_NE(spec.galaxies[1].inclination, 0.0);
}

// ---- Bad files: one message naming the file, the key and the allowed range ----------------------

/// Writes `text` to a file and returns loadScenarioFile's message (empty if it loaded).
std::string loadError(const TempDir& dir, const std::string& text) {
  const fs::path path = dir.path / "bad.json";
  std::ofstream(path) << text;
  try {
    loadScenarioFile(path.string());
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

/// A valid two-galaxy file with `galaxy1Disk` as the second galaxy's disk block.
std::string mergerWith(const std::string& galaxy1Disk) {
  return R"({"description": "x", "model": "merger",
    "galaxies": [{"disk": {"particles": 100}}, {"disk": )" +
         galaxy1Disk + R"(}], "orbit": {"pericentre": 2}})";
}

void expectMessage(const std::string& message, const std::vector<std::string>& parts) {
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  }
}

TEST(ScenarioErrors, EachClassNamesTheFileAndTheKey) {
  TempDir dir;
  const std::string file = (dir.path / "bad.json").string();
  ASSERT_EQ(loadError(dir, mergerWith(R"({"particles": 50, "toomre_q": 2})")), "");

  expectMessage(loadError(dir, mergerWith(R"({"particles": 50, "tomre_q": 2})")),
                {file + ": ", "galaxies[1].disk.tomre_q is not a known key",
                 "known: particles, mass, scale_length, scale_height, toomre_q, toomre_radius"});
  expectMessage(
      loadError(dir, mergerWith(R"({"particles": 50, "toomre_q": "high"})")),
      {file + ": ", "galaxies[1].disk.toomre_q must be a number in [0.5, 10], not a string"});
  expectMessage(
      loadError(dir, mergerWith(R"({"particles": 50, "toomre_q": 0.1})")),
      {file + ": ", "galaxies[1].disk.toomre_q = 0.1 is out of range: must be in [0.5, 10]"});
  expectMessage(
      loadError(dir, mergerWith(R"({"particles": 50.5})")),
      {file + ": ", "galaxies[1].disk.particles must be an integer in [1, 1e+09], not a number"});
  expectMessage(loadError(dir, "{\"description\": \"x\",\n \"model\": \"plummer\" \"sphere\": {}}"),
                {file + ": invalid JSON", "line 2"});
  expectMessage(loadError(dir, R"({"description": "x", "model": "galaxies"})"),
                {file + ": model = 'galaxies' is not known"});
  expectMessage(
      loadError(
          dir,
          R"({"description": "x", "model": "plummer", "sphere": {"particles": 10}, "orbit": {}})"),
      {file + ": orbit is not a known key here"});
  expectMessage(loadError(dir, R"({"description": "x", "model": "merger",
    "galaxies": [{"disk": {"particles": 100}}, {"mass_ratio": 0.5}],
    "orbit": {"pericentre": 2, "eccentricity": 0.5, "separation": 20}})"),
                {file + ": orbit.separation = 20 is out of range: must be in [2, 6]"});
  expectMessage(
      loadError(dir, R"({"description": "x", "model": "plummer", "sphere": {"particles": 10},
    "camera": {"orbit": [{"time": 5}, {"time": 2}]}})"),
      {file + ": camera.orbit[1].time = 2 is out of range: must be in (5, 1e+09]"});
  expectMessage(loadError(dir, R"({"description": "x", "model": "galaxy",
    "galaxies": [{"disk": {"particles": 100}, "halo": {"particles": 0, "mass": 3}}]})"),
                {file + ": galaxies[0].halo.particles = 0 does not fit mass = 3"});

  const std::string missing = (dir.path / "missing.json").string();
  try {
    loadScenarioFile(missing);
    ADD_FAILURE() << "a missing file loaded";
  } catch (const ScenarioError& e) {
    expectMessage(e.what(), {missing + ": cannot open the scenario file"});
  }
}

/// loadError of `text` with `value` where the text says @.
std::string loadErrorWith(const TempDir& dir, std::string text, const std::string& value) {
  return loadError(dir, text.replace(text.find('@'), 1, value));
}

const std::string kTopAt =
    R"({"description": "x", "model": "plummer", @, "sphere": {"particles": 9}})";
const std::string kPlummerAt =
    R"({"description": "x", "model": "plummer", "softening": 0, "sphere": {"particles": 200, @}})";
const std::string kGalaxyAt =
    R"({"description": "x", "model": "galaxy", "galaxies": [{"disk": {"particles": 100}, @}]})";
const std::string kDiskAt =
    R"({"description": "x", "model": "galaxy", "galaxies": [{"disk": {"particles": 100, @}}]})";
const std::string kMergerAt = R"({"description": "x", "model": "merger",
    "galaxies": [{"disk": {"particles": 100}}, {@}], "orbit": {"pericentre": 2}})";

TEST(ScenarioErrors, OversizedAndDeeplyNestedFilesAreRefusedBeforeParsing) {
  TempDir dir;
  const std::string file = (dir.path / "bad.json").string();
  // Up to 1 MiB is read: a valid file padded with spaces to exactly the limit loads.
  const std::string valid =
      R"({"description": "x", "model": "plummer", "sphere": {"particles": 9}})";
  ASSERT_EQ(loadError(dir, valid + std::string((1u << 20) - valid.size(), ' ')), "");
  expectMessage(loadError(dir, valid + std::string((1u << 20) + 1 - valid.size(), ' ')),
                {file + ": is larger than 1048576 bytes (1 MiB)"});
  expectMessage(loadError(dir, std::string(3u << 20, '[')), {file + ": is larger than 1048576"});
  // Nesting is refused where it passes 32 levels, whatever the brackets.
  expectMessage(loadError(dir, std::string(100000, '[')),
                {file + ": invalid JSON at line 1, column 33: nested deeper than 32 levels"});
  std::string objects;
  for (int i = 0; i < 40; ++i) objects += "{\"a\":\n";
  expectMessage(loadError(dir, objects), {file + ": invalid JSON at line 33, column 1: nested"});
  // Brackets inside strings are text.
  expectMessage(loadError(dir, R"({"description": ")" + std::string(100, '[') +
                                   R"(", "model": "plummer", "sphere": {"particles": 0}})"),
                {file + ": sphere.particles = 0 is out of range"});
}

TEST(ScenarioErrors, NumbersBeyondADoubleNameTheKeyAndTheRange) {
  TempDir dir;
  const std::string file = (dir.path / "bad.json").string();
  expectMessage(loadErrorWith(dir, kPlummerAt, R"("mass": 1e400)"),
                {file + ": sphere.mass is too large for a double: must be in [1e-06, 1e+06]"});
  expectMessage(loadErrorWith(dir, kPlummerAt, R"("scale_length": -1e400)"),
                {file + ": sphere.scale_length is too large for a double: must be in [0.001"});
  expectMessage(
      loadError(dir, mergerWith(R"({"particles": 50, "toomre_q": 123e999})")),
      {file + ": galaxies[1].disk.toomre_q is too large for a double: must be in [0.5, 10]"});
  expectMessage(
      loadError(dir, R"({"description": "x", "model": "plummer", "sphere": {"particles": 9},
    "camera": {"orbit": [{"time": 1}, {"time": 1E+400}]}})"),
      {file + ": camera.orbit[1].time is too large for a double: must be in (1, 1e+09]"});
  // An integer key, or a string one, says what it wanted.
  expectMessage(loadErrorWith(dir, kTopAt, R"("seed": 1)" + std::string(400, '0')),
                {file + ": seed must be an integer in [0, 1.84467e+19], not a number"});
  expectMessage(loadError(dir, R"({"description": -1e400, "model": "plummer"})"),
                {file + ": description must be a string, not a number"});
  // A malformed number around the overflow is a parse error with its place.
  expectMessage(loadErrorWith(dir, kPlummerAt, R"("mass": 1e400e1)"),
                {file + ": invalid JSON at line 1, column 95: a number is too large for a double"});
  for (const std::string& m : {loadErrorWith(dir, kPlummerAt, R"("mass": 1e400)"),
                               loadErrorWith(dir, kPlummerAt, R"("mass": 1e400e1)")}) {
    EXPECT_EQ(m.find("json.exception"), std::string::npos) << m;
  }
}

TEST(ScenarioErrors, ParseErrorsGiveTheLineAndColumnInPlainText) {
  TempDir dir;
  const std::string file = (dir.path / "bad.json").string();
  expectMessage(loadError(dir, "{\"description\": \"x\",\n  \"model\": tru}"),
                {file + ": invalid JSON at line 2, column 15: invalid literal; last read: '"});
  expectMessage(loadError(dir, ""), {file + ": invalid JSON at line 1, column 1: unexpected end"});
  // A byte that is not UTF-8 comes back escaped: the message stays printable.
  const std::string m = loadError(dir, "{\"description\": \"\xff\x1b[2J\"}");
  expectMessage(
      m, {file + ": invalid JSON at line 1, column 18: invalid string: ill-formed UTF-8", "\\xFF"});
  EXPECT_TRUE(std::all_of(m.begin(), m.end(), [](char c) { return c >= 0x20 && c < 0x7f; })) << m;
  // So does a control character a key spells with an escape.
  const std::string key = loadErrorWith(dir, kPlummerAt, R"("ma\u001bss": 1)");
  expectMessage(key, {file + ": sphere.ma\\x1Bss is not a known key"});
  EXPECT_EQ(key.find('\x1b'), std::string::npos) << key;
  // nlohmann keeps the last of two equal keys; a file that says two things is refused.
  expectMessage(loadErrorWith(dir, kPlummerAt, R"("mass": 1, "mass": 2)"),
                {file + ": the key 'mass' appears twice in one object"});
  // A byte-order mark is not an error.
  EXPECT_EQ(loadError(dir, "\xef\xbb\xbf" + std::string(R"({"description": "x",
    "model": "plummer", "sphere": {"particles": 9}})")),
            "");
}

TEST(ScenarioErrors, ValuesThatCannotBeBuiltAreOutOfRange) {
  TempDir dir;
  const std::string file = (dir.path / "bad.json").string();
  expectMessage(
      loadErrorWith(dir, kMergerAt, R"("mass_ratio": 1e-300)"),
      {file + ": galaxies[1].mass_ratio = 1e-300 is out of range: must be in [0.001, 1]"});
  expectMessage(
      loadErrorWith(dir, kGalaxyAt, R"("halo": {"particles": 9, "mass": 1, "cutoff": 1e-300})"),
      {file + ": galaxies[0].halo.cutoff = 1e-300 is out of range: must be in [0.001, 100000]"});
  expectMessage(
      loadErrorWith(dir, kDiskAt, R"("scale_length": 1e-300)"),
      {file +
       ": galaxies[0].disk.scale_length = 1e-300 is out of range: must be in [0.001, 1000]"});
  expectMessage(
      loadErrorWith(dir, kPlummerAt, R"("scale_length": 1e-300)"),
      {file + ": sphere.scale_length = 1e-300 is out of range: must be in [0.001, 10000]"});
  expectMessage(loadErrorWith(dir, kPlummerAt, R"("mass": 1e-300)"),
                {file + ": sphere.mass = 1e-300 is out of range: must be in [1e-06, 1e+06]"});
  expectMessage(
      loadErrorWith(dir, kGalaxyAt, R"("bulge": {"particles": 9, "mass": 1e-300})"),
      {file + ": galaxies[0].bulge.mass = 1e-300 is out of range: must be in [1e-06, 1e+06] or 0"});
  expectMessage(
      loadErrorWith(dir, kDiskAt, R"("scale_height": 1e-9)"),
      {file + ": galaxies[0].disk.scale_height = 1e-09 is out of range: must be in [0.001, 1]"});
  expectMessage(loadError(dir, R"({"description": "x", "model": "merger", "galaxies": [
    {"disk": {"particles": 100}}, {"mass_ratio": 0.5}], "orbit": {"pericentre": 1e-300}})"),
                {file + ": orbit.pericentre = 1e-300 is out of range: must be in [0.001, 10000]"});
  // dt and softening become floats: a value that rounds to 0 is refused, not passed on as 0.
  expectMessage(loadErrorWith(dir, kTopAt, R"("dt": 1e-300)"),
                {file + ": dt = 1e-300 is out of range: must be in [1e-06, 1]"});
  expectMessage(loadErrorWith(dir, kTopAt, R"("softening": 1e-40)"),
                {file + ": softening = 1e-40 is out of range: must be in [1e-06, 10] or 0"});
}

TEST(ScenarioErrors, NegativeZeroReadsAsZero) {
  TempDir dir;
  const fs::path path = dir.path / "zero.json";
  std::ofstream(path) << R"({"description": "x", "model": "galaxy", "seed": -0, "softening": -0.0,
    "galaxies": [{"disk": {"particles": 100}, "bulge": {"particles": -0, "mass": -0.0}}]})";
  const ScenarioSpec spec = loadScenarioFile(path.string());
  EXPECT_EQ(spec.seed, 0u);
  EXPECT_FALSE(std::signbit(spec.softening));
  EXPECT_EQ(spec.galaxies[0].bulge, 0u);
  EXPECT_FALSE(std::signbit(spec.galaxies[0].params.bulgeMass));
}

TEST(ScenarioFiles, BuildRefusesParticlesThatCannotBeSimulatedNamingTheKeys) {
  // The ranges keep each key sane; a spec made some other way (or a combination no range
  // foresaw) is caught after building, naming the file and the keys, not "particle 0".
  ScenarioSpec tiny = parseScenario(
      R"({"description": "x", "model": "plummer", "sphere": {"particles": 50}})", "net.json");
  tiny.sphere.mass = 1e-300;
  ScenarioSpec small = tiny;
  small.sphere.mass = 1.0;
  small.sphere.scale = 1e-300;
  ScenarioSpec merger = parseScenario(R"({"description": "x", "model": "merger",
    "galaxies": [{"disk": {"particles": 100}}, {"mass_ratio": 0.5}]})",
                                      "pair.json");
  merger.galaxies[1].params = scaledGalaxy(merger.galaxies[0].params, 1e-300);
  const std::vector<std::pair<ScenarioSpec, std::vector<std::string>>> cases = {
      {tiny,
       {"net.json: the model cannot be built: particle 0 gets mass 0",
        "check sphere.mass, sphere.scale_length"}},
      {small,
       {"net.json: the model cannot be built: particle 0 gets a non-finite position",
        "check sphere.mass, sphere.scale_length"}},
      {merger,
       {"pair.json: the model cannot be built: particle ",
        "check galaxies[1].mass_ratio, galaxies[0].disk.mass"}}};
  for (const auto& [spec, parts] : cases) {
    try {
      buildScenario(spec, 0, 1);
      ADD_FAILURE() << parts[0] << ": built";
    } catch (const ScenarioError& e) {
      expectMessage(e.what(), parts);
    }
  }
}

// ---- The command line ---------------------------------------------------------------------------

// A child that hangs is ended after 20 s; one that reads without end stops at 4 GB of address
// space (not under ASan or TSan, which reserve terabytes and could not start).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
const std::string kGuard = "timeout 20";
#else
const std::string kGuard = "ulimit -v 4000000; timeout 20";
#endif

/// A one-step headless run of `scenario`, guarded.
test::Process runScenario(const std::string& scenario) {
  return test::runBhviz("--headless --backend cpu --threads 1 --steps 1 --scenario " + scenario,
                        kGuard);
}

/// Exit status 2, nothing on stdout, and one line on stderr holding every part.
void expectUsageError(const test::Process& p, const std::vector<std::string>& parts) {
  EXPECT_EQ(p.status, 2) << p.err;
  EXPECT_TRUE(p.out.empty()) << p.out;
  ASSERT_FALSE(p.err.empty());
  EXPECT_EQ(p.err.back(), '\n');
  expectMessage(p.err.substr(0, p.err.size() - 1), parts);
  EXPECT_EQ(p.err.find("json.exception"), std::string::npos) << p.err;
}

TEST(ScenarioCli, OnlyRegularFilesAreReadAndNoneHangs) {
  TempDir dir;
  const std::string fifo = (dir.path / "fifo.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expectUsageError(runScenario(fifo), {fifo + ": is not a regular file"});
  for (const char* device : {"/dev/zero", "/dev/null"}) {
    expectUsageError(runScenario(device), {std::string(device) + ": is not a regular file"});
  }
  const std::string folder = (dir.path / "folder.json").string();
  fs::create_directory(folder);
  expectUsageError(runScenario(folder), {folder + ": is a directory, not a scenario file"});
  expectUsageError(runScenario(folder + "/"), {folder + "/: is a directory"});
}

TEST(ScenarioCli, HostileFilesExitTwoInOneLineNamingTheFile) {
  TempDir dir;
  auto file = [&](const std::string& name, const std::string& text) {
    const fs::path path = dir.path / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  };
  const std::string big = file("big.json", std::string(8u << 20, '['));
  expectUsageError(runScenario(big), {big + ": is larger than 1048576 bytes"});
  const std::string deep = file("deep.json", std::string(1u << 20, '['));
  expectUsageError(runScenario(deep), {deep + ": invalid JSON at line 1, column 33: nested"});
  const std::string huge = file("huge.json", R"({"description":"t","model":"plummer",
    "sphere":{"particles":200,"mass":1e400}})");
  expectUsageError(runScenario(huge),
                   {huge + ": sphere.mass is too large for a double: must be in [1e-06, 1e+06]"});
  const std::string utf = file("utf.json", "{\"description\": \"\xff\"}");
  expectUsageError(runScenario(utf), {utf + ": invalid JSON at line 1, column 18", "\\xFF"});
}

TEST(ScenarioCli, ValuesThatCannotBeBuiltExitTwoNamingTheKey) {
  TempDir dir;
  auto with = [&](const std::string& name, std::string text, const std::string& value) {
    const fs::path path = dir.path / name;
    std::ofstream(path) << text.replace(text.find('@'), 1, value);
    return path.string();
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {with("ratio.json", kMergerAt, R"("mass_ratio": 1e-300)"), "galaxies[1].mass_ratio = 1e-300"},
      {with("cutoff.json", kGalaxyAt, R"("halo": {"particles": 9, "mass": 1, "cutoff": 1e-300})"),
       "galaxies[0].halo.cutoff = 1e-300"},
      {with("disk.json", kDiskAt, R"("scale_length": 1e-300)"),
       "galaxies[0].disk.scale_length = 1e-300"},
      {with("scale.json", kPlummerAt, R"("scale_length": 1e-300)"), "sphere.scale_length = 1e-300"},
      {with("mass.json", kPlummerAt, R"("mass": 1e-300)"), "sphere.mass = 1e-300"}};
  for (const auto& [path, key] : cases) {
    SCOPED_TRACE(path);
    expectUsageError(runScenario(path), {path + ": " + key + " is out of range: must be in"});
  }
}

TEST(ScenarioCli, FileOrNameSetsCountsSeedAndSteps) {
  std::ostringstream out;
  const auto o = app::parseCommandLine({"--headless", "--scenario", "teaching"}, out);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->n, builtinScenario("teaching").particles());
  EXPECT_FLOAT_EQ(o->params.softening, builtinScenario("teaching").softening);
  EXPECT_FALSE(o->camera.keys.empty());

  const std::string path = (kScenarioDir / "minor-merger.json").string();
  const auto f =
      app::parseCommandLine({"--headless", "--scenario", path, "--n", "1000", "--seed", "7"}, out);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->scenario, path);
  EXPECT_EQ(f->n, 1000u);
  EXPECT_EQ(f->seed, 7u);
}

TEST(ScenarioCli, RunsAFileHeadlessAndRejectsABadOneWithExitTwo) {
  const std::string path = (kScenarioDir / "teaching.json").string();
  const test::Process ok =
      test::runBhviz("--headless --backend cpu --scenario " + path + " --n 600 --steps 2");
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(ok.out.find("N = 600"), std::string::npos) << ok.out;

  TempDir dir;
  const fs::path bad = dir.path / "bad.json";
  std::ofstream(bad) << R"({"description": "x", "model": "plummer", "sphere": {"particles": 0}})";
  const test::Process p = test::runBhviz("--headless --scenario " + bad.string() + " --steps 1");
  EXPECT_EQ(p.status, 2);
  EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << p.err;
  EXPECT_NE(p.err.find(bad.string() + ": sphere.particles = 0 is out of range"), std::string::npos)
      << p.err;
  EXPECT_TRUE(p.out.empty()) << p.out;

  const test::Process missing = test::runBhviz("--headless --scenario nowhere/x.json");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("nowhere/x.json: cannot open"), std::string::npos) << missing.err;
}

// ---- The scripted camera ------------------------------------------------------------------------

TEST(CameraPath, InterpolatesBetweenKeysAndHoldsTheEnds) {
  const std::vector<render::CameraKey> keys = {{0.0f, 0.0f, 0.2f, 1.0f}, {10.0f, 1.0f, 0.6f, 0.5f}};
  const render::CameraKey mid = render::sampleCameraPath(keys, 2.5f);
  EXPECT_FLOAT_EQ(mid.azimuth, 0.25f);
  EXPECT_FLOAT_EQ(mid.elevation, 0.3f);
  EXPECT_FLOAT_EQ(mid.distance, 0.875f);
  EXPECT_FLOAT_EQ(render::sampleCameraPath(keys, -1.0f).azimuth, 0.0f);
  EXPECT_FLOAT_EQ(render::sampleCameraPath(keys, 99.0f).distance, 0.5f);

  render::Camera camera;
  camera.target = {1.0f, 2.0f, 3.0f};
  render::applyCameraPath(camera, {0.0f, keys}, 10.0f, 40.0f);
  EXPECT_FLOAT_EQ(camera.yaw, 1.0f);
  EXPECT_FLOAT_EQ(camera.pitch, 0.6f);
  EXPECT_FLOAT_EQ(camera.distance, 20.0f);
  EXPECT_EQ(camera.target, glm::vec3(1.0f, 2.0f, 3.0f));
}

TEST(CameraPath, ScriptedScenarioFramesFollowTheScript) {
  const char* noGl = std::getenv("BHVIZ_NO_GL");
  if (noGl != nullptr && noGl[0] == '1') GTEST_SKIP() << "BHVIZ_NO_GL=1: pictures skipped";
  // teaching.json looks down at 70°; the same file without its camera block uses the default
  // view (31.5°). The pictures must differ, and the scripted one must be reproducible.
  TempDir dir;
  const std::string text = test::readText(kScenarioDir / "teaching.json");
  const std::size_t camera = text.find(",\n  \"camera\"");
  ASSERT_NE(camera, std::string::npos);
  std::ofstream(dir.path / "plain.json") << text.substr(0, camera) << "\n}\n";
  auto picture = [&](const fs::path& scenario, const std::string& name) {
    const fs::path png = dir.path / name;
    const test::Process p =
        test::runBhviz("--headless --quiet --backend cpu --steps 0 --size 96x64 --scenario " +
                       scenario.string() + " --screenshot " + png.string());
    EXPECT_EQ(p.status, 0) << p.err;
    return test::readText(png);
  };
  const std::string scripted = picture(kScenarioDir / "teaching.json", "a.png");
  const std::string again = picture(kScenarioDir / "teaching.json", "b.png");
  const std::string plain = picture(dir.path / "plain.json", "c.png");
  ASSERT_FALSE(scripted.empty());
  EXPECT_EQ(scripted, again);
  EXPECT_NE(scripted, plain);
}

}  // namespace
}  // namespace bhviz::sim
