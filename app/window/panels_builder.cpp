// The Merger builder panel: two galaxies and their orbit edited as a scenario, checked as a
// scenario file is, previewed in the scene, run, reset and saved (app/window/builder.h).
#include <imgui.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>

#include "app/core/cli.h"
#include "app/window/builder.h"
#include "app/window/panels.h"

namespace bhviz::app {

namespace {

const ImVec4 kProblemColour(1.0f, 0.45f, 0.35f, 1.0f);
const ImVec4 kGoodColour(0.5f, 0.85f, 0.5f, 1.0f);

bool number(const char* label, double& v, const char* tip) {
  const bool changed = ImGui::InputDouble(label, &v, 0.0, 0.0, "%.6g");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
  return changed;
}

bool percent(const char* label, double& share, double hi) {
  float p = static_cast<float>(100.0 * share);
  if (!ImGui::SliderFloat(label, &p, 0.0f, static_cast<float>(100.0 * hi), "%.1f %%")) {
    return false;
  }
  share = std::clamp(static_cast<double>(p) / 100.0, 0.0, hi);
  return true;
}

/// The disk, bulge and halo of one galaxy. Returns true when a mass changed (the counts follow).
bool galaxyModel(sim::GalaxySpec& g) {
  sim::GalaxyParams& p = g.params;
  bool massChanged = false;
  ImGui::TextUnformatted("disk");
  massChanged |= number("mass##disk", p.diskMass, "disk mass [mass]");
  number("scale length##disk", p.diskScaleLength, "R_d of the exponential disk [length]");
  number("scale height##disk", p.diskScaleHeight, "z0 of sech^2(z/z0) [length]");
  number("Toomre Q", p.toomreQ, "sets the disk's radial dispersion");
  number("Toomre radius", p.toomreRadius,
         "0: Q at every radius; > 0: Q there (in R_d), sigma_R^2 ~ surface density");
  ImGui::TextUnformatted("bulge (mass 0: none)");
  massChanged |= number("mass##bulge", p.bulgeMass, "Hernquist bulge mass [mass]");
  number("scale length##bulge", p.bulgeScale, "Hernquist a [length]");
  ImGui::TextUnformatted("halo (mass 0: none)");
  massChanged |= number("mass##halo", p.haloMass, "Hernquist dark halo mass [mass]");
  number("scale length##halo", p.haloScale, "Hernquist a [length]");
  number("cutoff", p.haloCutoff, "bulge and halo particles lie inside this radius [length]");
  return massChanged;
}

void orientation(sim::GalaxySpec& g) {
  const double incLo = -180.0, incHi = 180.0, nodeLo = -360.0, nodeHi = 360.0;
  ImGui::SliderScalar("inclination", ImGuiDataType_Double, &g.inclination, &incLo, &incHi,
                      "%.1f deg");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("disk tilt to the orbital (x-y) plane");
  ImGui::SliderScalar("node", ImGuiDataType_Double, &g.node, &nodeLo, &nodeHi, "%.1f deg");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("azimuth of the axis the disk is tilted about");
  bool counter = g.spin < 0;
  if (ImGui::Checkbox("counter-rotating", &counter)) g.spin = counter ? -1 : 1;
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "spin -1: the disk turns clockwise about its axis (the white line in the "
        "preview points along its angular momentum)");
  }
}

/// Total N, the primary's share and each galaxy's component shares.
void countControls(sim::ScenarioSpec& spec) {
  BuilderCounts c = builderCounts(spec);
  bool changed = false;
  std::uint64_t n = c.n;
  const std::uint64_t step = 1000, stepFast = 10000;
  if (ImGui::InputScalar("N", ImGuiDataType_U64, &n, &step, &stepFast, "%llu",
                         ImGuiInputTextFlags_EnterReturnsTrue)) {
    c.n = static_cast<std::size_t>(std::clamp<std::uint64_t>(n, 6, kMaxParticles));
    changed = true;
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("particles in all (Enter)");
  const bool scaled = spec.galaxies[1].massRatio > 0.0;
  if (scaled) ImGui::BeginDisabled();
  changed |= percent("galaxy 0 share", c.primaryShare, 1.0);
  if (scaled) ImGui::EndDisabled();
  if (scaled && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
    ImGui::SetTooltip("follows the mass ratio: particle masses match");
  }
  for (std::size_t i = 0; i < 2; ++i) {
    if (i == 1 && scaled) break;  // galaxy 1's shares are galaxy 0's
    ImGui::PushID(static_cast<int>(i));
    ImGui::Text("galaxy %zu: %zu disk, %zu bulge, %zu halo", i, spec.galaxies[i].disk,
                spec.galaxies[i].bulge, spec.galaxies[i].halo);
    changed |= percent("disk share", c.disk[i], 1.0);
    changed |= percent("bulge share", c.bulge[i], 1.0 - c.disk[i]);
    ImGui::PopID();
  }
  if (scaled) {
    ImGui::Text("galaxy 1: %zu disk, %zu bulge, %zu halo", spec.galaxies[1].disk,
                spec.galaxies[1].bulge, spec.galaxies[1].halo);
  }
  if (changed) setBuilderCounts(spec, c);
}

/// The mass ratio and the Kepler orbit. Returns true when galaxy 1's model changed.
bool orbitControls(sim::ScenarioSpec& spec) {
  sim::GalaxySpec& secondary = spec.galaxies[1];
  const double m0 = galaxyMass(spec.galaxies[0]), m1 = galaxyMass(secondary);
  bool scaled = secondary.massRatio > 0.0;
  bool modelChanged = false;
  if (ImGui::Checkbox("galaxy 1 = galaxy 0 scaled", &scaled)) {
    setMassRatio(spec, scaled ? std::clamp(m0 > 0.0 ? m1 / m0 : 1.0, 1e-3, 1.0) : 0.0);
    modelChanged = true;
  }
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("mass by the ratio q, every length by q^(1/3), counts by q");
  }
  if (scaled) {
    const double lo = 1e-3, hi = 1.0;
    double q = secondary.massRatio;
    if (ImGui::SliderScalar("mass ratio", ImGuiDataType_Double, &q, &lo, &hi, "%.3f",
                            ImGuiSliderFlags_Logarithmic)) {
      setMassRatio(spec, std::clamp(q, lo, hi));
      modelChanged = true;
    }
  } else {
    ImGui::Text("mass ratio %.4g (galaxy 1 / galaxy 0)", m0 > 0.0 ? m1 / m0 : 0.0);
  }
  sim::OrbitParams& o = spec.orbit;
  number("pericentre", o.pericentre, "closest approach of the point-mass orbit [length]");
  number("eccentricity", o.eccentricity, "< 1 bound, 1 parabolic, > 1 hyperbolic");
  number("separation", o.separation, "starting distance; the galaxies approach [length]");
  if (o.eccentricity < 1.0 && o.eccentricity >= 0.0) {
    ImGui::TextDisabled("apocentre %.4g",
                        o.pericentre * (1.0 + o.eccentricity) / (1.0 - o.eccentricity));
  }
  return modelChanged;
}

void runControls(AppState& s, FrameRequests& r, const UiInfo& info, const std::string& problem) {
  BuilderState& b = s.builder;
  if (!problem.empty()) ImGui::BeginDisabled();
  if (ImGui::Button("Run")) {
    const std::filesystem::path path = builderRunPath();
    try {
      writeScenarioFile(path, b.spec);
      applyBuilderRun(b.spec, path, s.scene, s.params);
      r.rebuild = r.frameAfterRebuild = true;
      r.paramsChanged = true;
      b.status = "running " + path.string();
    } catch (const std::exception& e) {
      b.status = "cannot run: " + oneLine(e.what());
    }
  }
  if (!problem.empty()) ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
    ImGui::SetTooltip("the scene becomes this scenario (written to %s)",
                      builderRunPath().string().c_str());
  }
  ImGui::SameLine();
  if (ImGui::Button("Reset")) {
    b.spec = b.start;
    b.status.clear();
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("back to the scenario the builder started from");
  ImGui::SameLine();
  if (ImGui::Button("From the scene")) {
    b.spec = b.start = builderStart(info.session != nullptr ? &info.session->spec() : nullptr);
    b.status.clear();
  }
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("start again from the running merger (or the built-in merger)");
  }
}

void saveControls(BuilderState& b, const std::string& problem) {
  if (pathField("file##builder", b.savePath)) b.confirmOverwrite = false;
  const auto save = [&](bool overwrite) {
    try {
      b.confirmOverwrite = saveScenarioAs(b.savePath, b.spec, overwrite) == SaveOutcome::Exists;
      b.status =
          b.confirmOverwrite ? "" : "saved " + b.savePath + " (--scenario " + b.savePath + ")";
    } catch (const std::exception& e) {
      b.confirmOverwrite = false;
      b.status = "cannot save: " + oneLine(e.what());
    }
  };
  if (!problem.empty()) ImGui::BeginDisabled();
  if (b.confirmOverwrite) {
    ImGui::TextColored(kProblemColour, "%s exists:", b.savePath.c_str());
    ImGui::SameLine();
    if (ImGui::Button("Overwrite")) save(true);
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) b.confirmOverwrite = false;
  } else if (ImGui::Button("Save as")) {
    save(false);
  }
  if (!problem.empty()) ImGui::EndDisabled();
}

}  // namespace

void drawBuilderPanel(AppState& s, FrameRequests& r, const UiInfo& info) {
  BuilderState& b = s.builder;
  if (!b.ready) {
    b.spec = b.start = builderStart(info.session != nullptr ? &info.session->spec() : nullptr);
    b.ready = true;
  }
  sim::ScenarioSpec& spec = b.spec;
  pathField("description", spec.description);
  ImGui::InputScalar("seed", ImGuiDataType_U64, &spec.seed);
  bool massChanged = false;
  for (std::size_t i = 0; i < 2; ++i) {
    sim::GalaxySpec& g = spec.galaxies[i];
    ImGui::PushID(static_cast<int>(i));
    const char* title = i == 0 ? "Galaxy 0 (primary)" : "Galaxy 1 (secondary)";
    if (ImGui::CollapsingHeader(title, i == 0 ? ImGuiTreeNodeFlags_DefaultOpen : 0)) {
      if (i == 1 && g.massRatio > 0.0) {
        ImGui::TextDisabled("galaxy 0 scaled by the mass ratio (Orbit)");
      } else {
        massChanged |= galaxyModel(g);
      }
      orientation(g);
    }
    ImGui::PopID();
  }
  if (ImGui::CollapsingHeader("Orbit", ImGuiTreeNodeFlags_DefaultOpen)) {
    massChanged |= orbitControls(spec);
  }
  if (massChanged) refreshCounts(spec);
  // Galaxy 0's edits reach its scaled copy.
  if (spec.galaxies[1].massRatio > 0.0) setMassRatio(spec, spec.galaxies[1].massRatio);
  if (ImGui::CollapsingHeader("Particles", ImGuiTreeNodeFlags_DefaultOpen)) countControls(spec);
  ImGui::Separator();
  const std::string problem = builderProblem(spec);
  if (problem.empty()) {
    ImGui::TextColored(kGoodColour, "a valid scenario of %zu particles", spec.particles());
  } else {
    ImGui::PushStyleColor(ImGuiCol_Text, kProblemColour);
    ImGui::TextWrapped("%s", problem.c_str());
    ImGui::PopStyleColor();
  }
  ImGui::Checkbox("preview in the scene", &b.preview);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "the Kepler orbit of the centres (blue: galaxy 0, rose: galaxy 1) and "
        "each disk's ring and axis at the start");
  }
  runControls(s, r, info, problem);
  saveControls(b, problem);
  if (!b.status.empty()) ImGui::TextWrapped("%s", b.status.c_str());
}

}  // namespace bhviz::app
