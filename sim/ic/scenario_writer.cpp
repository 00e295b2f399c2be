// ScenarioSpec → scenario file text (sim/ic/scenario_writer.h). The keys are the reader's
// (scenario_file.cpp); numbers are written so that they read back to the same bits.

#include "sim/ic/scenario_writer.h"

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace bhviz::sim {

namespace {

using Json = nlohmann::ordered_json;

/// The shortest decimal that the reader (a double, then cast to float) turns back into `f`, as a
/// double: nlohmann writes a double in its shortest round-trip form, so 0.05f is written "0.05"
/// rather than 0.05000000074505806.
double shortestFloat(float f) {
  char text[32];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, static_cast<double>(f));
    const double d = std::strtod(text, nullptr);
    if (static_cast<float>(d) == f) return d;
  }
  return static_cast<double>(f);  // 9 digits always round-trip; a NaN is written as null
}

Json sphereJson(const ScenarioSpec& spec) {
  const SphereSpec& s = spec.sphere;
  Json j;
  j["particles"] = s.particles;
  j["mass"] = s.mass;
  j["scale_length"] = s.scale;
  if (spec.model == ScenarioModel::Hernquist || spec.model == ScenarioModel::Nfw) {
    j["cutoff"] = s.cutoff;
  }
  if (spec.model == ScenarioModel::Nfw) j["taper"] = s.taper;
  if (spec.model == ScenarioModel::ColdCollapse) j["virial_ratio"] = s.virialRatio;
  return j;
}

void orientationJson(const GalaxySpec& g, Json& j) {
  j["inclination"] = g.inclination;
  j["node"] = g.node;
  j["spin"] = g.spin;
}

Json galaxyJson(const GalaxySpec& g) {
  const GalaxyParams& p = g.params;
  Json j;
  j["disk"] = {{"particles", g.disk},
               {"mass", p.diskMass},
               {"scale_length", p.diskScaleLength},
               {"scale_height", p.diskScaleHeight},
               {"toomre_q", p.toomreQ},
               {"toomre_radius", p.toomreRadius}};
  // Written even when empty (0 particles, mass 0), so that the lengths read back as they are.
  j["bulge"] = {{"particles", g.bulge}, {"mass", p.bulgeMass}, {"scale_length", p.bulgeScale}};
  j["halo"] = {{"particles", g.halo},
               {"mass", p.haloMass},
               {"scale_length", p.haloScale},
               {"cutoff", p.haloCutoff}};
  if (p.haloProfile == HaloProfile::Nfw) {
    j["halo"]["profile"] = "nfw";
    j["halo"]["taper"] = p.haloTaper;
  }
  orientationJson(g, j);
  return j;
}

bool sameParams(const GalaxyParams& a, const GalaxyParams& b) {
  return a.diskMass == b.diskMass && a.diskScaleLength == b.diskScaleLength &&
         a.diskScaleHeight == b.diskScaleHeight && a.toomreQ == b.toomreQ &&
         a.toomreRadius == b.toomreRadius && a.bulgeMass == b.bulgeMass &&
         a.bulgeScale == b.bulgeScale && a.haloMass == b.haloMass && a.haloScale == b.haloScale &&
         a.haloCutoff == b.haloCutoff && a.haloProfile == b.haloProfile &&
         (a.haloProfile != HaloProfile::Nfw || a.haloTaper == b.haloTaper) &&
         a.diskFraction == b.diskFraction && a.bulgeFraction == b.bulgeFraction;
}

bool sameGalaxy(const GalaxySpec& a, const GalaxySpec& b) {
  return sameParams(a.params, b.params) && a.disk == b.disk && a.bulge == b.bulge &&
         a.halo == b.halo && a.inclination == b.inclination && a.node == b.node &&
         a.spin == b.spin && a.massRatio == b.massRatio;
}

/// galaxies[1] as the reader's {"mass_ratio": q} when that is what it is.
bool isScaledCopy(const GalaxySpec& g, const GalaxySpec& primary) {
  if (!(g.massRatio > 0.0)) return false;
  GalaxySpec derived = scaledGalaxySpec(primary, g.massRatio);
  derived.inclination = g.inclination;
  derived.node = g.node;
  derived.spin = g.spin;
  return sameGalaxy(derived, g);
}

Json cameraJson(const ScenarioCamera& c) {
  Json j;
  j["auto_rotate"] = c.autoRotate;
  if (c.keys.empty()) return j;
  Json keys = Json::array();
  for (const CameraKey& k : c.keys) {
    keys.push_back({{"time", k.time},
                    {"azimuth", k.azimuth},
                    {"elevation", k.elevation},
                    {"distance", k.distance}});
  }
  j["orbit"] = std::move(keys);
  return j;
}

const char* modelName(ScenarioModel m) {
  switch (m) {
    case ScenarioModel::Plummer:
      return "plummer";
    case ScenarioModel::Hernquist:
      return "hernquist";
    case ScenarioModel::Nfw:
      return "nfw";
    case ScenarioModel::ColdCollapse:
      return "cold-collapse";
    case ScenarioModel::Uniform:
      return "uniform";
    case ScenarioModel::Galaxy:
      return "galaxy";
    case ScenarioModel::Merger:
      return "merger";
  }
  return "?";
}

}  // namespace

std::string scenarioJson(const ScenarioSpec& spec) {
  Json j;
  j["description"] = spec.description;
  j["model"] = modelName(spec.model);
  j["seed"] = spec.seed;
  j["softening"] = shortestFloat(spec.softening);
  j["dt"] = shortestFloat(spec.dt);
  if (spec.model == ScenarioModel::Galaxy || spec.model == ScenarioModel::Merger) {
    Json galaxies = Json::array();
    for (std::size_t i = 0; i < spec.galaxies.size(); ++i) {
      const GalaxySpec& g = spec.galaxies[i];
      if (i == 1 && isScaledCopy(g, spec.galaxies[0])) {
        Json scaled;
        scaled["mass_ratio"] = g.massRatio;
        orientationJson(g, scaled);
        galaxies.push_back(std::move(scaled));
      } else {
        galaxies.push_back(galaxyJson(g));
      }
    }
    j["galaxies"] = std::move(galaxies);
    if (spec.model == ScenarioModel::Merger) {
      j["orbit"] = {{"pericentre", spec.orbit.pericentre},
                    {"eccentricity", spec.orbit.eccentricity},
                    {"separation", spec.orbit.separation}};
    }
  } else {
    j["sphere"] = sphereJson(spec);
  }
  if (spec.camera.autoRotate != 0.0 || !spec.camera.keys.empty()) {
    j["camera"] = cameraJson(spec.camera);
  }
  return j.dump(2) + "\n";
}

void validateScenario(const ScenarioSpec& spec, const std::string& source) {
  (void)parseScenario(scenarioJson(spec), source);
}

bool sameScenario(const ScenarioSpec& a, const ScenarioSpec& b) {
  if (a.description != b.description || a.model != b.model || a.seed != b.seed ||
      a.softening != b.softening || a.dt != b.dt) {
    return false;
  }
  const SphereSpec &s = a.sphere, &t = b.sphere;
  if (s.particles != t.particles || s.mass != t.mass || s.scale != t.scale ||
      s.cutoff != t.cutoff || s.virialRatio != t.virialRatio ||
      (a.model == ScenarioModel::Nfw && s.taper != t.taper)) {
    return false;
  }
  if (a.galaxies.size() != b.galaxies.size()) return false;
  for (std::size_t i = 0; i < a.galaxies.size(); ++i) {
    if (!sameGalaxy(a.galaxies[i], b.galaxies[i])) return false;
  }
  if (a.orbit.pericentre != b.orbit.pericentre || a.orbit.eccentricity != b.orbit.eccentricity ||
      a.orbit.separation != b.orbit.separation) {
    return false;
  }
  if (a.camera.autoRotate != b.camera.autoRotate || a.camera.keys.size() != b.camera.keys.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.camera.keys.size(); ++i) {
    const CameraKey &k = a.camera.keys[i], &l = b.camera.keys[i];
    if (k.time != l.time || k.azimuth != l.azimuth || k.elevation != l.elevation ||
        k.distance != l.distance) {
      return false;
    }
  }
  return true;
}

}  // namespace bhviz::sim
