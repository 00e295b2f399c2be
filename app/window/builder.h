#pragma once
// The merger builder (Panels → Merger builder): a sim::ScenarioSpec edited in the window,
// checked as a scenario file is checked (sim::validateScenario: the loader's own messages),
// previewed in the scene (the Kepler orbit and the disks, sim/ic/merger_preview.h), run and
// saved as a scenario file. Run writes the spec to a file in the user's data directory and
// makes it the window's scenario, so a run from the builder is exactly `--scenario FILE`.
// The panel is panels_builder.cpp; what it does is here, testable without a window.

#include <array>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "app/core/settings.h"
#include "render/vertex.h"
#include "sim/ic/merger_preview.h"
#include "sim/ic/scenario_file.h"

namespace bhviz::app {

/// The builder's part of AppState.
struct BuilderState {
  sim::ScenarioSpec spec;   ///< the merger being edited
  sim::ScenarioSpec start;  ///< what Reset goes back to
  bool ready = false;       ///< spec holds a merger (set when the panel is first drawn)
  bool preview = true;      ///< draw the orbit and the disks in the scene while the panel is open
  std::string savePath = "my-merger.json";  ///< Save as writes here
  bool confirmOverwrite = false;            ///< Save as found the file: ask before replacing it
  std::string status;                       ///< the last Run's or Save's line
};

/// What the builder starts from: `running` when it is a merger (the running scenario), else the
/// built-in "merger".
sim::ScenarioSpec builderStart(const sim::ScenarioSpec* running);

/// A merger's particle counts as the builder shows them: a total and shares.
struct BuilderCounts {
  std::size_t n = 0;                          ///< particles in all [1]
  double primaryShare = 0.5;                  ///< of n in galaxy 0 [1]
  std::array<double, 2> disk{0.5, 0.5};       ///< of each galaxy's particles in its disk [1]
  std::array<double, 2> bulge{0.125, 0.125};  ///< in its bulge; the halo has the rest [1]
};
BuilderCounts builderCounts(const sim::ScenarioSpec& spec);
/// Sets the counts of a merger from `c`: galaxy 0 gets round(n · primaryShare) and galaxy 1 the
/// rest, or, when galaxy 1 is galaxy 0 scaled by its mass ratio q, galaxy 0 round(n / (1 + q))
/// and galaxy 1 those scaled by q (the total then within a few of n). In each galaxy the disk
/// and bulge are rounded and the halo has the rest; a component with mass keeps at least one
/// particle, one without mass gets none.
void setBuilderCounts(sim::ScenarioSpec& spec, const BuilderCounts& c);

/// After a mass changed: each galaxy keeps its particle total and shares, but a component given
/// mass gets at least one particle and one without mass none (then galaxy 1 follows galaxy 0
/// again when it is its scaled copy).
void refreshCounts(sim::ScenarioSpec& spec);

/// q > 0: galaxy 1 becomes galaxy 0 scaled by q (sim::scaledGalaxySpec), keeping its
/// inclination, node and spin; call it again after galaxy 0 changes. q = 0: galaxy 1 keeps the
/// model it has as its own from now on.
void setMassRatio(sim::ScenarioSpec& spec, double q);

/// The galaxy's mass: disk + bulge + halo [mass].
double galaxyMass(const sim::GalaxySpec& g);

/// "" when `spec` is a scenario the file loader accepts, else the loader's one-line message
/// ("builder: orbit.separation = 1 is out of range: …").
std::string builderProblem(const sim::ScenarioSpec& spec);

/// The preview as the renderer's lines: each galaxy's path (galaxy 0 blue, galaxy 1 rose), its
/// disk's ring and axis (along the disk's angular momentum, a ring's radius long).
std::vector<render::OverlayLine> previewLines(const sim::MergerPreview& preview);
/// The lines the scene shows for the builder: its preview while `panelShown` and the toggle is
/// on, for a spec that has one; else none.
std::vector<render::OverlayLine> builderPreviewLines(const BuilderState& b, bool panelShown);

/// Where Run writes its scenario: $XDG_DATA_HOME/bhviz/builder.json, else
/// ~/.local/share/bhviz/builder.json, else builder.json in the temporary directory.
std::filesystem::path builderRunPath();

/// Writes the file of `spec` (sim::scenarioJson) to `path` atomically (PATH.tmp, then renamed),
/// creating its directory when needed. Throws sim::ScenarioError when the loader would refuse
/// the spec (nothing is written), std::runtime_error naming the file when writing fails.
void writeScenarioFile(const std::filesystem::path& path, const sim::ScenarioSpec& spec);

enum class SaveOutcome { Saved, Exists };
/// Save as: writeScenarioFile, but an existing file is replaced only when `overwrite` (else
/// nothing is written and Exists returned); a directory is refused (std::runtime_error).
SaveOutcome saveScenarioAs(const std::filesystem::path& path, const sim::ScenarioSpec& spec,
                           bool overwrite);

/// What Run changes in the window's scene: the scenario file at `path` (written from `spec`),
/// its particle count and seed, no snapshot; and, as the command line does for a scenario, its
/// suggested softening and step (× kBlockDtFactor with block steps).
void applyBuilderRun(const sim::ScenarioSpec& spec, const std::filesystem::path& path,
                     SceneSettings& scene, sim::SimParams& params);

}  // namespace bhviz::app
