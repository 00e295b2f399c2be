// The built-in scenarios, by name: one place that the app, the benchmark and the tests share.

#include <string>

#include "sim/ic/ic_detail.h"
#include "sim/ic/initial_conditions.h"

namespace bhviz::sim {

namespace {

// Softening and step per scenario. Spheres: ε = 0.05 is ~7% of the Plummer half-mass radius;
// the central orbital period (2.8 Plummer, ~1.4 in the softened Hernquist cusp) then spans
// 180 or more steps of dt = 1/128. Galaxies (R_d = 1, M_d = 1, v_c ≈ 0.8 and period ≈ 8 at
// R_d): at r ≈ ε the bulge and halo give a period of ~0.7 (longer once softened), ~45 steps of
// dt = 1/64, and ~130 steps at the bulge scale radius; a merger's centres get denser, which is
// what block time steps (dtMax = dt) are for.
//
// The registry is a function-local static, safe to use from other files' static initialisers.
const std::vector<ScenarioInfo>& registry() {
  static const std::vector<ScenarioInfo> kScenarios = {
      {"plummer", "Plummer sphere in Henon units (M = 1, E = -1/4, half-mass radius 0.77)", 0.05f,
       1.0f / 128.0f},
      {"hernquist", "Hernquist sphere, M = 1, a = 1, truncated at 100 a (half-mass radius 2.4)",
       0.05f, 1.0f / 128.0f},
      {"galaxy",
       "Disk galaxy: exponential disk (M = 1, R_d = 1, Q = 1.5), Hernquist bulge and dark halo",
       0.05f, 1.0f / 64.0f},
      {"merger",
       "Two equal disk galaxies on a parabolic orbit (pericentre 2, start 20 apart, tilts 0 and 60 "
       "deg)",
       0.05f, 1.0f / 64.0f},
  };
  return kScenarios;
}

[[noreturn]] void throwUnknown(std::string_view name) {
  std::string known;
  for (const ScenarioInfo& s : registry()) known += (known.empty() ? "" : ", ") + s.name;
  throw InvalidParameter("unknown scenario '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace

const std::vector<ScenarioInfo>& scenarios() { return registry(); }

const ScenarioInfo& scenarioInfo(std::string_view name) {
  for (const ScenarioInfo& s : registry()) {
    if (s.name == name) return s;
  }
  throwUnknown(name);
}

Particles makeScenario(std::string_view name, std::size_t n, std::uint64_t seed) {
  const ScenarioInfo& info = scenarioInfo(name);  // unknown names first: the clearer message
  if (n == 0) throw InvalidParameter("scenario '" + info.name + "' needs n >= 1 particles");
  Particles p;
  if (info.name == "plummer") {
    p = makePlummer(n, seed);
  } else if (info.name == "hernquist") {
    p = makeHernquist(n, seed);
  } else if (info.name == "galaxy") {
    p = makeGalaxy(n, seed);
  } else {
    p = makeMerger(n, seed);
  }
  detail::finalise(p);  // the generators already do this; the contract is kept here too
  return p;
}

}  // namespace bhviz::sim
