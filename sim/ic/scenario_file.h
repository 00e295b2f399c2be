#pragma once
// Scenario files (assets/scenarios/*.json; keys in assets/scenarios/README.md): parsed, then
// validated in full, then built. Any mistake is one ScenarioError naming the file, the key as a
// JSON path (galaxies[1].disk.toomre_q) and the allowed range, thrown before anything is built.
// The built-in scenarios are these same files, embedded at build time, so a named scenario
// works from any directory.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/ic/initial_conditions.h"
#include "sim/params.h"
#include "sim/particles.h"

namespace bhviz::sim {

/// A scenario file that cannot be read, parsed or accepted. what() is one line.
struct ScenarioError : InvalidParameter {
  using InvalidParameter::InvalidParameter;
};

enum class ScenarioModel : std::uint8_t {
  Plummer,
  Hernquist,
  ColdCollapse,
  Galaxy,
  Merger,
  Nfw,
  Uniform,  ///< Ryoanji's benchmark cube (its `sphere` block: count, mass, half side)
};

/// One key of a scripted camera orbit; the view is interpolated linearly between keys.
struct CameraKey {
  double time = 0.0;        ///< simulation time [time]
  double azimuth = -34.4;   ///< of the eye about +z, from +x [degrees]
  double elevation = 31.5;  ///< of the eye above the x–y plane [degrees]
  double distance = 1.0;    ///< eye to target, relative to the framed view's distance [1]
};

/// The optional camera block: data only (the app turns it into a render::Camera).
struct ScenarioCamera {
  /// spin about +z [rad/s]: wall-clock in the window, 1/30 s per headless frame
  double autoRotate = 0.0;
  std::vector<CameraKey> keys;  ///< increasing times; empty = no scripted orbit
};

/// A one-component model: Plummer, Hernquist, NFW, the cold collapse's uniform sphere, or the
/// uniform cube (scale = its half side).
struct SphereSpec {
  std::size_t particles = 20000;  ///< [1]
  double mass = 1.0;              ///< [mass]
  /// Plummer a (Hénon: 3π/16), Hernquist a, NFW r_s, cold sphere radius, cube half side [length]
  double scale = 1.0;
  double cutoff = 100.0;     ///< Hernquist: particles inside cutoff·a; NFW: taper centre / r_s [1]
  double taper = 1.0;        ///< NFW: width of the erfc taper / r_s [1]
  double virialRatio = 0.0;  ///< cold collapse: 2K/|W| [1]
};

/// One galaxy of a scenario: its model, per-component counts and orientation.
struct GalaxySpec {
  GalaxyParams params;  ///< masses and lengths; the fractions follow from the counts
  std::size_t disk = 0, bulge = 0, halo = 0;  ///< particles per component [1]
  double inclination = 0.0;                   ///< disk tilt [degrees]
  double node = 0.0;                          ///< azimuth of the tilt axis [degrees]
  int spin = 1;  ///< the disk's sense of rotation about its axis: +1, or −1 (counter-rotating)
  double massRatio = 0.0;  ///< > 0: galaxies[1] given as galaxies[0] scaled by it [1]
  std::size_t particles() const { return disk + bulge + halo; }
};

/// galaxies[1] given as {"mass_ratio": q}: `primary` scaled in mass by q and in every length by
/// q^(1/3) (scaledGalaxy), its counts by q (a component with particles keeps at least one), its
/// massRatio q; the orientation (inclination, node, spin) is the primary's until the caller sets
/// it.
GalaxySpec scaledGalaxySpec(const GalaxySpec& primary, double massRatio);

struct ScenarioSpec {
  std::string name;         ///< the built-in name, or the file's path
  std::string description;  ///< one line
  ScenarioModel model = ScenarioModel::Plummer;
  std::uint64_t seed = 1;
  float softening = 0.05f;           ///< suggested ε [length]
  float dt = 1.0f / 128.0f;          ///< suggested shared step [time]
  SphereSpec sphere;                 ///< plummer, hernquist, nfw, cold-collapse, uniform
  std::vector<GalaxySpec> galaxies;  ///< galaxy: 1, merger: 2
  OrbitParams orbit;                 ///< merger
  ScenarioCamera camera;

  /// The particle count the file asks for (the sum over components) [1].
  std::size_t particles() const;
};

/// Reads, parses and validates a scenario file. Throws ScenarioError.
ScenarioSpec loadScenarioFile(const std::string& path);
/// The same from text; `source` names it in messages (a path, or "built-in 'name'").
ScenarioSpec parseScenario(std::string_view text, const std::string& source);

/// True when `arg` names a file rather than a built-in scenario: it contains '/' or ends in .json.
bool isScenarioPath(std::string_view arg);
/// A built-in name (sim::scenarios()) or a file path. Throws InvalidParameter / ScenarioError.
ScenarioSpec resolveScenario(std::string_view nameOrPath);
/// The spec of a built-in scenario by name. Throws InvalidParameter for an unknown name.
const ScenarioSpec& builtinScenario(std::string_view name);

/// Builds the particles. n = 0 keeps the file's counts; otherwise every component's count is
/// scaled by n / spec.particles() and rounded, the total being exactly n (the halo, or the
/// secondary galaxy, takes the rounding remainder; a component with mass keeps at least one).
/// A particle with a non-finite position or velocity, or a mass that rounds to 0, throws
/// ScenarioError naming spec.name and the keys most likely at fault.
Particles buildScenario(const ScenarioSpec& spec, std::size_t n, std::uint64_t seed);

/// The embedded asset files, in registry order: {name, JSON text} (generated at build time).
struct EmbeddedScenario {
  const char* name;
  const char* text;
};
const std::vector<EmbeddedScenario>& embeddedScenarios();

}  // namespace bhviz::sim
