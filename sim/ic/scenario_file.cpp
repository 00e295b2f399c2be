// Scenario files: JSON → ScenarioSpec (every key checked: known, of the right type, in range)
// → particles. The keys, units, defaults and ranges are documented in assets/scenarios/README.md;
// the ranges here are the source of truth and each message quotes them.

#include "sim/ic/scenario_file.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "sim/ic/ic_detail.h"
#include "sim/ic/scenario_json.h"

namespace bhviz::sim {

namespace {

using Json = nlohmann::json;

constexpr double kPlummerHenonScale = 3.0 * detail::kPi / 16.0;
constexpr double kMaxCount = 1e9;
// Physical bounds (README "Ranges"): with G = 1, R_d ≈ 3 kpc and M_d ≈ 5·10¹⁰ M☉, a mass of
// 1e-6 is a globular cluster and a length of 1e-3 is 3 pc; anything smaller is no galaxy, and
// far smaller values underflow single precision (masses, positions) or overflow velocities.
constexpr double kMinMass = 1e-6, kMaxMass = 1e6;
constexpr double kMinLength = 1e-3;
constexpr double kMinMassRatio = 1e-3;  // below, the secondary is a handful of test particles
constexpr double kMinStep = 1e-6;       // [time]; 1e6 steps per time unit
constexpr double kMinSoftening = 1e-6;  // [length]; smaller is 0 in effect (ε² underflows)

std::string format(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

/// A closed or open interval, printed as [lo, hi], (lo, hi] …; orZero admits 0 as well.
struct Range {
  double lo, hi;
  bool loOpen = false, hiOpen = false;
  bool orZero = false;
  bool contains(double v) const {
    return (orZero && v == 0.0) || ((loOpen ? v > lo : v >= lo) && (hiOpen ? v < hi : v <= hi));
  }
  std::string text() const {
    return std::string(loOpen ? "(" : "[") + format(lo) + ", " + format(hi) + (hiOpen ? ")" : "]") +
           (orZero ? " or 0" : "");
  }
};
Range closed(double lo, double hi) { return {lo, hi, false, false}; }
Range zeroOr(double lo, double hi) { return {lo, hi, false, false, true}; }

/// An integer ≥ 0 as JSON writes it: unsigned, or the signed -0.
std::optional<std::uint64_t> nonNegative(const Json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() == 0) return 0;
  return std::nullopt;
}

std::string typeName(const Json& j) {
  if (j.is_number_integer()) return "an integer";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_boolean()) return "a boolean";
  if (j.is_array()) return "an array";
  if (j.is_object()) return "an object";
  return "null";
}

/// Reads one JSON object: rejects keys outside `known` on construction, then each accessor
/// checks one key's type and range. Every message: "<source>: <path>: <what> (<allowed>)".
class Reader {
 public:
  Reader(const Json& j, std::string path, const std::string& source,
         std::initializer_list<const char*> known)
      : m_j(j), m_path(std::move(path)), m_source(source) {
    if (!j.is_object())
      fail(m_path.empty() ? "the file" : m_path, "must be a JSON object, not " + typeName(j));
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (std::find_if(known.begin(), known.end(), [&](const char* k) { return it.key() == k; }) !=
          known.end()) {
        continue;
      }
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      fail(keyPath(detail::printable(it.key(), true)),
           "is not a known key here (known: " + list + ")");
    }
  }

  bool has(const char* key) const { return m_j.contains(key); }
  std::string keyPath(const std::string& key) const {
    return m_path.empty() ? key : m_path + "." + key;
  }
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw ScenarioError(m_source + ": " + where + " " + what);
  }

  double number(const char* key, double fallback, Range range) const {
    if (!has(key)) return fallback;
    const Json& v = m_j.at(key);
    if (!v.is_number())
      fail(keyPath(key), "must be a number in " + range.text() + ", not " + typeName(v));
    const double x = v.get<double>();
    // scenario_json.h parses a number beyond a double (1e400) as ±infinity.
    if (!std::isfinite(x))
      fail(keyPath(key), "is too large for a double: must be in " + range.text());
    if (!range.contains(x))
      fail(keyPath(key), "= " + format(x) + " is out of range: must be in " + range.text());
    return x == 0.0 ? 0.0 : x;  // -0 reads as 0: no "softening -0" downstream
  }

  std::uint64_t unsignedInteger(const char* key, std::uint64_t fallback, double hi) const {
    if (!has(key)) return fallback;
    const Json& v = m_j.at(key);
    const std::string range = "[0, " + format(hi) + "]";
    if (!v.is_number_integer()) {
      fail(keyPath(key), "must be an integer in " + range + ", not " + typeName(v));
    }
    const std::optional<std::uint64_t> x = nonNegative(v);
    if (x && static_cast<double>(*x) <= hi) return *x;
    fail(keyPath(key), "= " + v.dump() + " is out of range: must be in " + range);
  }

  std::size_t count(const char* key, std::size_t lo) const {
    const std::string range = "[" + std::to_string(lo) + ", 1e+09]";
    if (!has(key)) fail(keyPath(key), "is missing: a particle count in " + range + " is required");
    const Json& v = m_j.at(key);
    if (!v.is_number_integer())
      fail(keyPath(key), "must be an integer in " + range + ", not " + typeName(v));
    const std::optional<std::uint64_t> x = nonNegative(v);
    if (!x || *x < lo || static_cast<double>(*x) > kMaxCount) {
      fail(keyPath(key), "= " + v.dump() + " is out of range: must be in " + range);
    }
    return static_cast<std::size_t>(*x);
  }

  std::string string(const char* key) const {
    if (!has(key)) fail(keyPath(key), "is missing: a string is required");
    const Json& v = m_j.at(key);
    if (!v.is_string()) fail(keyPath(key), "must be a string, not " + typeName(v));
    return v.get<std::string>();
  }

  Reader object(const char* key, std::initializer_list<const char*> known) const {
    return Reader(m_j.at(key), keyPath(key), m_source, known);
  }
  const Json& raw(const char* key) const { return m_j.at(key); }
  const std::string& source() const { return m_source; }

 private:
  const Json& m_j;
  std::string m_path;
  const std::string& m_source;
};

struct ModelName {
  const char* name;
  ScenarioModel model;
};
constexpr ModelName kModels[] = {
    {"plummer", ScenarioModel::Plummer}, {"hernquist", ScenarioModel::Hernquist},
    {"nfw", ScenarioModel::Nfw},         {"cold-collapse", ScenarioModel::ColdCollapse},
    {"uniform", ScenarioModel::Uniform}, {"galaxy", ScenarioModel::Galaxy},
    {"merger", ScenarioModel::Merger}};

bool isSphere(ScenarioModel m) {
  return m == ScenarioModel::Plummer || m == ScenarioModel::Hernquist || m == ScenarioModel::Nfw ||
         m == ScenarioModel::ColdCollapse || m == ScenarioModel::Uniform;
}

ScenarioModel readModel(const Reader& r) {
  const std::string name = r.string("model");
  for (const ModelName& m : kModels) {
    if (name == m.name) return m.model;
  }
  r.fail("model",
         "= '" + detail::printable(name, true) +
             "' is not known: must be plummer, hernquist, nfw, cold-collapse, uniform, galaxy "
             "or merger");
}

SphereSpec readSphere(const Reader& top, ScenarioModel model) {
  SphereSpec s;
  if (!top.has("sphere")) top.fail("sphere", "is missing: the model's particles, mass and scale");
  std::initializer_list<const char*> keys = {"particles", "mass", "scale_length"};
  std::initializer_list<const char*> hernquistKeys = {"particles", "mass", "scale_length",
                                                      "cutoff"};
  std::initializer_list<const char*> coldKeys = {"particles", "mass", "scale_length",
                                                 "virial_ratio"};
  std::initializer_list<const char*> nfwKeys = {"particles", "mass", "scale_length", "cutoff",
                                                "taper"};
  const Reader r = top.object("sphere", model == ScenarioModel::Hernquist      ? hernquistKeys
                                        : model == ScenarioModel::ColdCollapse ? coldKeys
                                        : model == ScenarioModel::Nfw          ? nfwKeys
                                                                               : keys);
  s.particles = r.count("particles", 1);
  // The cube's defaults are Ryoanji's: total mass ½ (its expected total), half side 3.
  const bool cube = model == ScenarioModel::Uniform;
  s.mass = r.number("mass", cube ? 0.5 : 1.0, closed(kMinMass, kMaxMass));
  s.scale = r.number("scale_length",
                     model == ScenarioModel::Plummer ? kPlummerHenonScale
                     : cube                          ? 3.0
                                                     : 1.0,
                     closed(kMinLength, 1e4));
  s.cutoff = r.number("cutoff", model == ScenarioModel::Nfw ? 10.0 : 100.0, closed(2.0, 1e4));
  s.taper = r.number("taper", 0.1 * s.cutoff, closed(0.01, s.cutoff));
  s.virialRatio = r.number("virial_ratio", 0.0, closed(0.0, 1.0));
  return s;
}

constexpr std::initializer_list<const char*> kHaloKeys = {"particles", "mass",    "scale_length",
                                                          "cutoff",    "profile", "taper"};

/// A spheroid block (bulge or halo): count and mass both zero, or both positive.
void readSpheroid(const Reader& g, const char* key, bool halo, std::size_t& count, double& mass,
                  double& scale, double* cutoff) {
  if (!g.has(key)) {
    count = 0;
    mass = 0.0;
    return;
  }
  const Reader r =
      halo ? g.object(key, kHaloKeys) : g.object(key, {"particles", "mass", "scale_length"});
  count = r.count("particles", 0);
  mass = r.number("mass", mass, zeroOr(kMinMass, kMaxMass));
  scale = r.number("scale_length", scale, closed(kMinLength, 1e4));
  if (cutoff) *cutoff = r.number("cutoff", *cutoff, closed(kMinLength, 1e5));
  if ((count == 0) != (mass == 0.0)) {
    r.fail(r.keyPath("particles"),
           "= " + std::to_string(count) + " does not fit mass = " + format(mass) +
               ": a component with mass needs particles, and one without mass none");
  }
}

/// The halo's profile (hernquist or nfw) and, for nfw, the taper's width.
void readHaloProfile(const Reader& g, GalaxyParams& p) {
  if (!g.has("halo")) return;
  const Reader h = g.object("halo", kHaloKeys);
  if (h.has("profile")) {
    const std::string name = h.string("profile");
    if (name != "hernquist" && name != "nfw") {
      h.fail(h.keyPath("profile"),
             "= '" + detail::printable(name, true) + "' is not known: must be hernquist or nfw");
    }
    p.haloProfile = name == "nfw" ? HaloProfile::Nfw : HaloProfile::Hernquist;
  }
  if (p.haloProfile == HaloProfile::Nfw) {
    p.haloTaper = h.number("taper", 0.1 * p.haloCutoff, closed(kMinLength, p.haloCutoff));
  } else if (h.has("taper")) {
    h.fail(h.keyPath("taper"),
           "is only known with \"profile\": \"nfw\" (a Hernquist halo is "
           "cut off sharply at halo.cutoff)");
  }
}

/// A galaxy's inclination, node and spin (defaults: untilted, counter-clockwise).
void readOrientation(const Reader& g, GalaxySpec& s) {
  s.inclination = g.number("inclination", 0.0, closed(-180.0, 180.0));
  s.node = g.number("node", 0.0, closed(-360.0, 360.0));
  const double spin = g.number("spin", 1.0, closed(-1.0, 1.0));
  if (spin != 1.0 && spin != -1.0) {
    g.fail(g.keyPath("spin"), "= " + format(spin) +
                                  " is out of range: must be 1 (counter-clockwise) or -1 "
                                  "(clockwise, a counter-rotating disk)");
  }
  s.spin = spin > 0.0 ? 1 : -1;
}

GalaxySpec readGalaxy(const Reader& g) {
  GalaxySpec s;
  GalaxyParams& p = s.params;
  if (!g.has("disk")) g.fail(g.keyPath("disk"), "is missing: every galaxy has a disk");
  const Reader d = g.object(
      "disk", {"particles", "mass", "scale_length", "scale_height", "toomre_q", "toomre_radius"});
  s.disk = d.count("particles", 1);
  p.diskMass = d.number("mass", p.diskMass, closed(kMinMass, kMaxMass));
  p.diskScaleLength = d.number("scale_length", p.diskScaleLength, closed(kMinLength, 1e3));
  p.diskScaleHeight = d.number("scale_height", 0.1 * p.diskScaleLength,
                               closed(kMinLength * p.diskScaleLength, p.diskScaleLength));
  p.toomreQ = d.number("toomre_q", p.toomreQ, closed(0.5, 10.0));
  p.toomreRadius = d.number("toomre_radius", p.toomreRadius, closed(0.0, 12.0));
  readSpheroid(g, "bulge", false, s.bulge, p.bulgeMass, p.bulgeScale, nullptr);
  readSpheroid(g, "halo", true, s.halo, p.haloMass, p.haloScale, &p.haloCutoff);
  readHaloProfile(g, p);
  readOrientation(g, s);
  return s;
}

/// galaxies[1] as {mass_ratio, inclination, node, spin}: galaxies[0] scaled (makeMerger's
/// secondary), its counts scaled by the same ratio so that particle masses match.
GalaxySpec scaledCopy(const Reader& g, const GalaxySpec& primary) {
  GalaxySpec s = scaledGalaxySpec(primary, g.number("mass_ratio", 1.0, closed(kMinMassRatio, 1.0)));
  readOrientation(g, s);
  return s;
}

std::vector<GalaxySpec> readGalaxies(const Reader& top, ScenarioModel model) {
  const std::size_t wanted = model == ScenarioModel::Galaxy ? 1 : 2;
  const std::string shape = wanted == 1 ? "an array of 1 galaxy" : "an array of 2 galaxies";
  if (!top.has("galaxies")) top.fail("galaxies", "is missing: " + shape + " is required");
  const Json& list = top.raw("galaxies");
  if (!list.is_array() || list.size() != wanted) {
    top.fail("galaxies",
             "must be " + shape + " for model " + (wanted == 1 ? "galaxy" : "merger") + ", not " +
                 (list.is_array() ? "an array of " + std::to_string(list.size()) : typeName(list)));
  }
  std::vector<GalaxySpec> out;
  for (std::size_t i = 0; i < wanted; ++i) {
    const std::string path = "galaxies[" + std::to_string(i) + "]";
    const Json& j = list[i];
    if (i == 1 && j.is_object() && j.contains("mass_ratio")) {
      out.push_back(scaledCopy(
          Reader(j, path, top.source(), {"mass_ratio", "inclination", "node", "spin"}), out[0]));
    } else {
      out.push_back(readGalaxy(
          Reader(j, path, top.source(), {"disk", "bulge", "halo", "inclination", "node", "spin"})));
    }
  }
  return out;
}

OrbitParams readOrbit(const Reader& top) {
  OrbitParams o;
  if (!top.has("orbit")) return o;
  const Reader r = top.object("orbit", {"pericentre", "eccentricity", "separation"});
  o.pericentre = r.number("pericentre", o.pericentre, closed(kMinLength, 1e4));
  o.eccentricity = r.number("eccentricity", o.eccentricity, closed(0.0, 5.0));
  double hi = 1e5;
  if (o.eccentricity < 1.0)
    hi = std::min(hi, o.pericentre * (1.0 + o.eccentricity) / (1.0 - o.eccentricity));
  o.separation = r.number("separation", std::min(o.separation, hi), closed(o.pericentre, hi));
  return o;
}

ScenarioCamera readCamera(const Reader& top) {
  ScenarioCamera c;
  if (!top.has("camera")) return c;
  const Reader r = top.object("camera", {"auto_rotate", "orbit"});
  c.autoRotate = r.number("auto_rotate", 0.0, closed(-6.3, 6.3));
  if (!r.has("orbit")) return c;
  const Json& keys = r.raw("orbit");
  if (!keys.is_array() || keys.empty()) {
    r.fail(r.keyPath("orbit"), "must be a non-empty array of {time, azimuth, elevation, distance}");
  }
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const Reader k(keys[i], r.keyPath("orbit") + "[" + std::to_string(i) + "]", top.source(),
                   {"time", "azimuth", "elevation", "distance"});
    CameraKey key;
    const double earliest = c.keys.empty() ? 0.0 : c.keys.back().time;
    if (!k.has("time")) k.fail(k.keyPath("time"), "is missing: a simulation time is required");
    key.time = k.number("time", 0.0, {earliest, 1e9, !c.keys.empty(), false});
    key.azimuth = k.number("azimuth", key.azimuth, closed(-3600.0, 3600.0));
    key.elevation = k.number("elevation", key.elevation, closed(-89.5, 89.5));
    key.distance = k.number("distance", key.distance, closed(0.01, 100.0));
    c.keys.push_back(key);
  }
  return c;
}

ScenarioSpec readSpec(const Json& j, const std::string& source) {
  // The model first: it decides which keys are known.
  const Reader probe(
      j, "", source,
      {"description", "model", "seed", "softening", "dt", "sphere", "galaxies", "orbit", "camera"});
  ScenarioSpec s;
  s.model = readModel(probe);
  const bool sphere = isSphere(s.model);
  const Reader top =
      sphere ? Reader(j, "", source,
                      {"description", "model", "seed", "softening", "dt", "sphere", "camera"})
      : s.model == ScenarioModel::Galaxy
          ? Reader(j, "", source,
                   {"description", "model", "seed", "softening", "dt", "galaxies", "camera"})
          : Reader(
                j, "", source,
                {"description", "model", "seed", "softening", "dt", "galaxies", "orbit", "camera"});
  s.description = top.string("description");
  s.seed = top.unsignedInteger("seed", 1, 18446744073709551615.0);
  s.softening = static_cast<float>(top.number("softening", 0.05, zeroOr(kMinSoftening, 10.0)));
  s.dt = static_cast<float>(
      top.number("dt", sphere ? 1.0 / 128.0 : 1.0 / 64.0, closed(kMinStep, 1.0)));
  if (sphere) {
    s.sphere = readSphere(top, s.model);
  } else {
    s.galaxies = readGalaxies(top, s.model);
    if (s.model == ScenarioModel::Merger) s.orbit = readOrbit(top);
  }
  s.camera = readCamera(top);
  if (static_cast<double>(s.particles()) > kMaxCount) {
    top.fail("the file",
             "asks for " + std::to_string(s.particles()) + " particles in all: at most 1e+09");
  }
  return s;
}

// ---- Building --------------------------------------------------------------------------------

/// The galaxy's model with the particle shares of its counts.
GalaxyParams withShares(const GalaxySpec& g) {
  GalaxyParams p = g.params;
  const double total = static_cast<double>(g.particles());
  p.diskFraction = static_cast<double>(g.disk) / total;
  p.bulgeFraction = static_cast<double>(g.bulge) / total;
  return p;
}

/// A Plummer sphere in Hénon units rescaled to mass M and scale a (G = 1: v ∝ sqrt(M/a)).
void rescale(Particles& p, double mass, double scale) {
  if (mass == 1.0 && scale == kPlummerHenonScale) return;
  const double x = scale / kPlummerHenonScale;
  const double v = std::sqrt(mass / x);
  for (std::size_t i = 0; i < p.size(); ++i) {
    Vec4& q = p.posMass[i];
    q = {static_cast<float>(q.x * x), static_cast<float>(q.y * x), static_cast<float>(q.z * x),
         static_cast<float>(q.w * mass)};
    Vec4& w = p.vel[i];
    w = {static_cast<float>(w.x * v), static_cast<float>(w.y * v), static_cast<float>(w.z * v),
         0.0f};
  }
}

/// The particles of `spec`, n of them (n ≥ 1).
Particles buildParticles(const ScenarioSpec& spec, std::size_t n, std::uint64_t seed) {
  const std::size_t total = spec.particles();
  Particles p;
  switch (spec.model) {
    case ScenarioModel::Plummer:
      p = makePlummer(n, seed);
      rescale(p, spec.sphere.mass, spec.sphere.scale);
      break;
    case ScenarioModel::Hernquist:
      p = makeHernquist(n, seed, spec.sphere.mass, spec.sphere.scale, spec.sphere.cutoff);
      break;
    case ScenarioModel::Nfw:
      p = makeNfw(n, seed, spec.sphere.mass, spec.sphere.scale, spec.sphere.cutoff,
                  spec.sphere.taper);
      break;
    case ScenarioModel::ColdCollapse:
      p = makeColdCollapse(n, seed, spec.sphere.mass, spec.sphere.scale, spec.sphere.virialRatio);
      break;
    case ScenarioModel::Uniform:
      p = makeUniformCube(n, seed, spec.sphere.mass, spec.sphere.scale);
      break;
    case ScenarioModel::Galaxy: {
      const GalaxySpec& g = spec.galaxies.at(0);
      p = makeGalaxy(n, seed, withShares(g), 0);
      if (g.spin < 0) detail::reverseDisk(p, 0, p.size());
      if (g.inclination != 0.0) {
        detail::tilt(p, 0, p.size(), g.inclination, g.node);
        detail::recentre(p);
      }
      break;
    }
    case ScenarioModel::Merger: {
      const GalaxySpec& a = spec.galaxies.at(0);
      const GalaxySpec& b = spec.galaxies.at(1);
      if (n < 6) {
        throw InvalidParameter("a merger needs at least 6 particles (got " + std::to_string(n) +
                               ")");
      }
      // The primary's share of n, as in the file; each galaxy keeps at least 3.
      const double share = static_cast<double>(a.particles()) / static_cast<double>(total);
      const auto n1 = std::min<std::size_t>(
          std::max<std::size_t>(
              static_cast<std::size_t>(std::llround(static_cast<double>(n) * share)), 3),
          n - 3);
      p = makeGalaxyPair({n1, withShares(a), a.inclination, a.node, a.spin},
                         {n - n1, withShares(b), b.inclination, b.node, b.spin}, spec.orbit, seed);
      break;
    }
  }
  detail::finalise(p);
  return p;
}

/// The keys that shape the particles of `tag`: where one that cannot be simulated most likely
/// comes from.
std::string suspectKeys(const ScenarioSpec& spec, std::uint8_t tag) {
  const std::string sphere = "sphere.mass, sphere.scale_length";
  if (spec.model == ScenarioModel::Plummer || spec.model == ScenarioModel::Uniform) return sphere;
  if (spec.model == ScenarioModel::Hernquist) return sphere + ", sphere.cutoff";
  if (spec.model == ScenarioModel::Nfw) return sphere + ", sphere.cutoff, sphere.taper";
  if (spec.model == ScenarioModel::ColdCollapse) return sphere + ", sphere.virial_ratio";
  const unsigned g = tagGalaxy(tag);
  const bool scaled = g < spec.galaxies.size() && spec.galaxies[g].massRatio > 0.0;
  const std::string at = scaled ? "galaxies[0]." : "galaxies[" + std::to_string(g) + "].";
  const Component c = tagComponent(tag);
  const std::string block = c == Component::Bulge  ? "bulge"
                            : c == Component::Halo ? "halo"
                                                   : "disk";
  std::string keys = at + block + ".mass, " + at + block + ".scale_length, " + at +
                     (c == Component::Disk ? "disk.scale_height" : "halo.cutoff");
  if (scaled) keys = "galaxies[" + std::to_string(g) + "].mass_ratio, " + keys;
  return spec.model == ScenarioModel::Merger ? keys + ", orbit" : keys;
}

/// Finite positions and velocities, masses > 0: what Simulation accepts. Each key's range is
/// sane on its own; this names the keys when a combination of them is not, rather than leaving
/// Simulation to report "particle 0 has a non-finite position" with no file or key.
void requireSimulable(const Particles& p, const ScenarioSpec& spec) {
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Vec4& x = p.posMass[i];
    const Vec4& v = p.vel[i];
    const bool finite = std::isfinite(x.x) && std::isfinite(x.y) && std::isfinite(x.z) &&
                        std::isfinite(x.w) && std::isfinite(v.x) && std::isfinite(v.y) &&
                        std::isfinite(v.z);
    if (finite && x.w > 0.0f) continue;
    throw ScenarioError(spec.name + ": the model cannot be built: particle " + std::to_string(i) +
                        (finite ? " gets mass 0 (below single precision)"
                                : " gets a non-finite position or velocity") +
                        "; check " + suspectKeys(spec, p.tag[i]));
  }
}

}  // namespace

GalaxySpec scaledGalaxySpec(const GalaxySpec& primary, double massRatio) {
  const double q = massRatio;
  GalaxySpec s = primary;
  s.params = scaledGalaxy(primary.params, q);
  s.massRatio = q;
  auto scaled = [&](std::size_t c) {
    return c == 0 ? 0
                  : std::max<std::size_t>(
                        1, static_cast<std::size_t>(std::llround(q * static_cast<double>(c))));
  };
  s.disk = scaled(primary.disk);
  s.bulge = scaled(primary.bulge);
  s.halo = scaled(primary.halo);
  return s;
}

std::size_t ScenarioSpec::particles() const {
  if (isSphere(model)) return sphere.particles;
  std::size_t n = 0;
  for (const GalaxySpec& g : galaxies) n += g.particles();
  return n;
}

ScenarioSpec parseScenario(std::string_view text, const std::string& source) {
  ScenarioSpec s = readSpec(detail::parseScenarioJson(text, source), source);
  s.name = source;
  return s;
}

ScenarioSpec loadScenarioFile(const std::string& path) {
  return parseScenario(detail::readScenarioText(path), path);
}

bool isScenarioPath(std::string_view arg) {
  const std::string_view ext = ".json";
  return arg.find('/') != std::string_view::npos ||
         (arg.size() >= ext.size() && arg.substr(arg.size() - ext.size()) == ext);
}

ScenarioSpec resolveScenario(std::string_view nameOrPath) {
  if (isScenarioPath(nameOrPath)) return loadScenarioFile(std::string(nameOrPath));
  return builtinScenario(nameOrPath);
}

Particles buildScenario(const ScenarioSpec& spec, std::size_t n, std::uint64_t seed) {
  Particles p = buildParticles(spec, n == 0 ? spec.particles() : n, seed);
  requireSimulable(p, spec);
  return p;
}

}  // namespace bhviz::sim
