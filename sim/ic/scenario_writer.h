#pragma once
// A ScenarioSpec written as a scenario file (assets/scenarios/README.md): what the merger
// builder saves and runs. parseScenario reads the text back to an equal spec, so a spec is
// checked exactly as a file is (validateScenario), with the loader's one-line messages.

#include <string>

#include "sim/ic/scenario_file.h"

namespace bhviz::sim {

/// The scenario file of `spec`, every key written (defaults too) in the README's order, so that
/// parseScenario gives back a spec equal to it (sameScenario) and buildScenario the same
/// particles, bit for bit. galaxies[1] with massRatio > 0 that is exactly
/// scaledGalaxySpec(galaxies[0], massRatio) is written as {"mass_ratio", "inclination", "node",
/// "spin"}; otherwise in full (it then reads back with massRatio 0). The camera block is written
/// when the camera is not the default one. Values are written as they are, in range or not: the
/// reader is the one judge (validateScenario).
std::string scenarioJson(const ScenarioSpec& spec);

/// Checks `spec` as the file loader checks a file: throws ScenarioError with the loader's
/// message, `source` in place of the file's name ("builder: galaxies[1].disk.toomre_q = 0.1 is
/// out of range: must be in [0.5, 10]").
void validateScenario(const ScenarioSpec& spec, const std::string& source);

/// Every field of a and b equal but the name (the source a spec was read from).
bool sameScenario(const ScenarioSpec& a, const ScenarioSpec& b);

}  // namespace bhviz::sim
