#include "app/window/builder.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "app/core/cli.h"
#include "app/core/output.h"
#include "sim/ic/scenario_writer.h"

namespace bhviz::app {

namespace {

namespace fs = std::filesystem;

std::size_t rounded(double x) { return x <= 0.0 ? 0 : static_cast<std::size_t>(std::llround(x)); }

/// n particles of `g` split by shares: disk and bulge rounded, the halo the rest.
void splitGalaxy(sim::GalaxySpec& g, std::size_t n, double diskShare, double bulgeShare) {
  const sim::GalaxyParams& p = g.params;
  const double dn = static_cast<double>(n);
  g.bulge = p.bulgeMass > 0.0 ? std::max<std::size_t>(1, rounded(dn * bulgeShare)) : 0;
  g.disk = std::max<std::size_t>(1, rounded(dn * diskShare));
  if (p.haloMass > 0.0) {
    g.halo = n > g.disk + g.bulge ? n - g.disk - g.bulge : 1;
  } else {
    g.halo = 0;
    g.disk = n > g.bulge + 1 ? n - g.bulge : 1;
  }
}

double share(std::size_t part, std::size_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// The disks' colours when colouring by component (app/scene/particle_view.cpp): blue, then rose.
const glm::vec4 kGalaxyColour[2] = {{0.45f, 0.7f, 1.0f, 0.9f}, {1.0f, 0.55f, 0.8f, 0.9f}};

glm::vec3 vec(const sim::PreviewPoint& p) {
  return {static_cast<float>(p.x), static_cast<float>(p.y), static_cast<float>(p.z)};
}

void addPolyline(std::vector<render::OverlayLine>& out, const std::vector<sim::PreviewPoint>& p,
                 glm::vec4 colour) {
  for (std::size_t i = 1; i < p.size(); ++i) out.push_back({vec(p[i - 1]), vec(p[i]), colour});
}

}  // namespace

sim::ScenarioSpec builderStart(const sim::ScenarioSpec* running) {
  if (running != nullptr && running->model == sim::ScenarioModel::Merger &&
      running->galaxies.size() == 2) {
    return *running;
  }
  return sim::builtinScenario("merger");
}

BuilderCounts builderCounts(const sim::ScenarioSpec& spec) {
  BuilderCounts c;
  c.n = spec.particles();
  if (spec.galaxies.size() != 2) return c;
  c.primaryShare = share(spec.galaxies[0].particles(), c.n);
  for (std::size_t i = 0; i < 2; ++i) {
    const sim::GalaxySpec& g = spec.galaxies[i];
    c.disk[i] = share(g.disk, g.particles());
    c.bulge[i] = share(g.bulge, g.particles());
  }
  return c;
}

void setBuilderCounts(sim::ScenarioSpec& spec, const BuilderCounts& c) {
  if (spec.galaxies.size() != 2) return;
  sim::GalaxySpec& primary = spec.galaxies[0];
  const double q = spec.galaxies[1].massRatio;
  const double n = static_cast<double>(c.n);
  const double bulge0 = std::min(c.bulge[0], 1.0 - c.disk[0]);
  if (q > 0.0) {
    splitGalaxy(primary, std::max<std::size_t>(3, rounded(n / (1.0 + q))), c.disk[0], bulge0);
    setMassRatio(spec, q);
    return;
  }
  const std::size_t n0 =
      std::clamp<std::size_t>(rounded(n * c.primaryShare), 3, c.n > 6 ? c.n - 3 : std::size_t{3});
  splitGalaxy(primary, n0, c.disk[0], bulge0);
  const std::size_t n1 = c.n > n0 ? std::max<std::size_t>(3, c.n - n0) : 3;
  splitGalaxy(spec.galaxies[1], n1, c.disk[1], std::min(c.bulge[1], 1.0 - c.disk[1]));
}

void refreshCounts(sim::ScenarioSpec& spec) {
  for (sim::GalaxySpec& g : spec.galaxies) {
    const std::size_t n = std::max<std::size_t>(g.particles(), 3);
    splitGalaxy(g, n, share(g.disk, n), share(g.bulge, n));
  }
  if (spec.galaxies.size() == 2 && spec.galaxies[1].massRatio > 0.0) {
    setMassRatio(spec, spec.galaxies[1].massRatio);
  }
}

void setMassRatio(sim::ScenarioSpec& spec, double q) {
  if (spec.galaxies.size() != 2) return;
  sim::GalaxySpec& secondary = spec.galaxies[1];
  if (!(q > 0.0)) {
    secondary.massRatio = 0.0;
    return;
  }
  sim::GalaxySpec scaled = sim::scaledGalaxySpec(spec.galaxies[0], q);
  scaled.inclination = secondary.inclination;
  scaled.node = secondary.node;
  scaled.spin = secondary.spin;
  secondary = scaled;
}

double galaxyMass(const sim::GalaxySpec& g) {
  return g.params.diskMass + g.params.bulgeMass + g.params.haloMass;
}

std::string builderProblem(const sim::ScenarioSpec& spec) {
  try {
    sim::validateScenario(spec, "builder");
  } catch (const sim::ScenarioError& e) {
    return e.what();
  }
  return "";
}

std::vector<render::OverlayLine> previewLines(const sim::MergerPreview& preview) {
  std::vector<render::OverlayLine> lines;
  for (std::size_t g = 0; g < 2; ++g) {
    const glm::vec4 colour = kGalaxyColour[g];
    addPolyline(lines, preview.paths[g], colour);
    const sim::DiskPreview& d = preview.disks[g];
    addPolyline(lines, d.ring, glm::vec4(glm::vec3(colour), 0.75f));
    const glm::vec3 centre = vec(d.centre);
    const glm::vec3 tip = centre + static_cast<float>(d.radius) * vec(d.axis);
    lines.push_back({centre, tip, glm::vec4(1.0f, 1.0f, 1.0f, 0.9f)});
  }
  return lines;
}

std::vector<render::OverlayLine> builderPreviewLines(const BuilderState& b, bool panelShown) {
  if (!panelShown || !b.preview || !b.ready) return {};
  try {
    return previewLines(sim::mergerPreview(b.spec));
  } catch (const sim::InvalidParameter&) {
    return {};  // the panel says what is wrong
  }
}

fs::path builderRunPath() {
  const char* data = std::getenv("XDG_DATA_HOME");
  if (data != nullptr && fs::path(data).is_absolute())
    return fs::path(data) / "bhviz" / "builder.json";
  const char* home = std::getenv("HOME");
  if (home != nullptr && fs::path(home).is_absolute()) {
    return fs::path(home) / ".local" / "share" / "bhviz" / "builder.json";
  }
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  return (ec ? fs::path("/tmp") : tmp) / "bhviz-builder.json";
}

void writeScenarioFile(const fs::path& path, const sim::ScenarioSpec& spec) {
  sim::validateScenario(spec, "builder");
  const std::string text = sim::scenarioJson(spec);
  if (path.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) {
      throw std::runtime_error("cannot make the folder '" + path.parent_path().string() +
                               "': " + ec.message());
    }
  }
  writeFileAtomically(path, [&](std::ostream& out) { out << text; });
}

SaveOutcome saveScenarioAs(const fs::path& path, const sim::ScenarioSpec& spec, bool overwrite) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) throw std::runtime_error("'" + path.string() + "' is a folder");
  if (fs::exists(st) && !overwrite) return SaveOutcome::Exists;
  writeScenarioFile(path, spec);
  return SaveOutcome::Saved;
}

void applyBuilderRun(const sim::ScenarioSpec& spec, const fs::path& path, SceneSettings& scene,
                     sim::SimParams& params) {
  scene.scenario = path.string();
  scene.n = spec.particles();
  scene.seed = spec.seed;
  scene.snapshotPath.clear();
  params.softening = spec.softening;
  params.dtMax = params.stepping == sim::TimeStepping::Block ? spec.dt * kBlockDtFactor : spec.dt;
}

}  // namespace bhviz::app
