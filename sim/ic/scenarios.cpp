// The built-in scenarios, by name: the files of assets/scenarios/, embedded at build time
// (sim/cmake/EmbedScenarios.cmake), so that the app, the benchmarks and the tests share one
// definition of each and a named scenario works from any directory.

#include <string>

#include "sim/ic/ic_detail.h"
#include "sim/ic/initial_conditions.h"
#include "sim/ic/scenario_file.h"

namespace bhviz::sim {

namespace {

struct Registry {
  std::vector<ScenarioSpec> specs;
  std::vector<ScenarioInfo> infos;
};

// Parsed once, on first use: a function-local static, safe from other files' static
// initialisers. A broken embedded file throws here (and fails every test that names one).
const Registry& registry() {
  static const Registry kRegistry = [] {
    Registry r;
    for (const EmbeddedScenario& e : embeddedScenarios()) {
      ScenarioSpec spec = parseScenario(e.text, "built-in '" + std::string(e.name) + "'");
      spec.name = e.name;
      r.infos.push_back({spec.name, spec.description, spec.softening, spec.dt});
      r.specs.push_back(std::move(spec));
    }
    return r;
  }();
  return kRegistry;
}

[[noreturn]] void throwUnknown(std::string_view name) {
  std::string known;
  for (const ScenarioInfo& s : registry().infos) known += (known.empty() ? "" : ", ") + s.name;
  throw InvalidParameter("unknown scenario '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace

const std::vector<ScenarioInfo>& scenarios() { return registry().infos; }

const ScenarioSpec& builtinScenario(std::string_view name) {
  for (const ScenarioSpec& s : registry().specs) {
    if (s.name == name) return s;
  }
  throwUnknown(name);
}

const ScenarioInfo& scenarioInfo(std::string_view name) {
  for (const ScenarioInfo& s : registry().infos) {
    if (s.name == name) return s;
  }
  throwUnknown(name);
}

Particles makeScenario(std::string_view name, std::size_t n, std::uint64_t seed) {
  const ScenarioSpec& spec = builtinScenario(name);  // unknown names first: the clearer message
  if (n == 0) throw InvalidParameter("scenario '" + spec.name + "' needs n >= 1 particles");
  return buildScenario(spec, n, seed);
}

}  // namespace bhviz::sim
