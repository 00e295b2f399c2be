#pragma once
// Seeded, reproducible initial conditions. G = 1. Every generator returns particles with ids
// 0..N-1, component tags, zero accelerations and bin 0, centred on the centre of mass at rest
// (the merger: each galaxy on its orbit, the pair's centre of mass at rest at the origin).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/particles.h"

namespace bhviz::sim {

/// Plummer sphere in standard N-body (Hénon) units: M = 1, E = −1/4, scale length a = 3π/16.
/// Sampled from its isotropic distribution function (Aarseth, Hénon & Wielen 1974).
Particles makePlummer(std::size_t n, std::uint64_t seed);

/// Uniform sphere of radius `radius` and mass `mass` ("cold collapse"): positions uniform in
/// the ball, isotropic Gaussian velocities with the virial ratio 2K/|W| = `virialRatio`
/// (W = −3GM²/(5R) of the smooth sphere); 0 gives particles at rest.
Particles makeColdCollapse(std::size_t n, std::uint64_t seed, double mass = 1.0,
                           double radius = 1.0, double virialRatio = 0.0);

/// Hernquist sphere, mass M and scale a; isotropic velocities from its exact distribution
/// function (Hernquist 1990), truncated at `rmax` scale lengths.
Particles makeHernquist(std::size_t n, std::uint64_t seed, double mass = 1.0, double a = 1.0,
                        double rmax = 100.0);

/// NFW sphere (Navarro, Frenk & White 1997), ρ ∝ 1/[(r/r_s)(1 + r/r_s)²] with its cusp, tapered
/// by ½ erfc((r − cutoff·r_s)/(taper·r_s)); the particles carry `mass`. Isotropic velocities from
/// its distribution function, computed by Eddington's formula (sim/ic/eddington.h).
Particles makeNfw(std::size_t n, std::uint64_t seed, double mass = 1.0, double scale = 1.0,
                  double cutoff = 10.0, double taper = 1.0);

/// Uniform cube of side 2·halfSide and total mass `mass`, at rest: Ryoanji's benchmark
/// distribution (exafmm/ryoanji, makeCubeBodies in ryoanji/test/nbody/dataset.hpp: the cube
/// [−3, 3]³ with masses uniform in [0, 1/N), total ≈ ½). Positions uniform in the cube; masses
/// uniform in (0, 1) scaled to the total `mass`. Centring on the centre of mass moves the cube by
/// ~2·halfSide/(3√N) (sim/ic/uniform.cpp).
Particles makeUniformCube(std::size_t n, std::uint64_t seed, double mass = 0.5,
                          double halfSide = 3.0);

/// The dark halo's density profile.
enum class HaloProfile : std::uint8_t {
  Hernquist,  ///< truncated at haloCutoff; Jeans velocities (the original model)
  Nfw,        ///< NFW tapered at haloCutoff over haloTaper; Eddington velocities
};

/// A disk galaxy in galaxy units (G = 1, disk scale length 1, disk mass 1).
struct GalaxyParams {
  double diskMass = 1.0;         ///< exponential disk mass [mass]
  double diskScaleLength = 1.0;  ///< R_d [length]
  double diskScaleHeight = 0.1;  ///< z_0 of the sech²(z/z_0) profile [length]
  double toomreQ = 1.5;          ///< Toomre Q of the disk (sets the radial dispersion) [1]
  /// Where Q = toomreQ [R_d]. 0: at every radius (σ_R ∝ Σ/κ; the original model). > 0: σ_R² ∝ Σ
  /// with Q = toomreQ at this radius, consistent with the asymmetric drift (galaxy.cpp).
  double toomreRadius = 0.0;
  double bulgeMass = 0.2;    ///< Hernquist bulge mass inside haloCutoff [mass]
  double bulgeScale = 0.2;   ///< bulge scale length [length]
  double haloMass = 8.0;     ///< dark halo mass inside haloCutoff (NFW: in all) [mass]
  double haloScale = 6.0;    ///< halo scale length: Hernquist a, NFW r_s [length]
  double haloCutoff = 30.0;  ///< particles inside it; NFW: the taper's centre [length]
  /// the dark halo's density profile
  HaloProfile haloProfile = HaloProfile::Hernquist;
  /// NFW: width w of the taper ½ erfc((r − haloCutoff)/w), which replaces the hard cutoff [length]
  double haloTaper = 3.0;
  double diskFraction = 0.5;     ///< share of the particles in the disk
  double bulgeFraction = 0.125;  ///< share of the particles in the bulge (the rest: halo)
};

/// Exponential disk + Hernquist bulge + Hernquist or NFW halo; velocities from the total
/// potential, the disk's radial dispersion from Toomre Q, the bulge's and a Hernquist halo's from
/// the Jeans equation, an NFW halo's from its Eddington distribution function.
/// `galaxy` is written into the component tags (0 or 1 in a merger).
Particles makeGalaxy(std::size_t n, std::uint64_t seed, const GalaxyParams& g = {},
                     unsigned galaxy = 0);

struct MergerParams {
  GalaxyParams galaxy;        ///< the primary; the secondary is scaled by massRatio
  double massRatio = 1.0;     ///< secondary mass / primary mass (≤ 1)
  double pericentre = 2.0;    ///< pericentre distance of the orbit [length]
  double separation = 20.0;   ///< initial separation [length]
  double inclination1 = 0.0;  ///< primary disk tilt to the orbital (x–y) plane, about x [degrees]
  double inclination2 = 60.0;  ///< secondary disk tilt, about x [degrees]
  double eccentricity = 1.0;  ///< of the relative orbit: < 1 bound, 1 parabolic, > 1 hyperbolic [1]
};

/// The secondary of makeMerger: `g` scaled in mass by q and in every length by q^{1/3} (same
/// mean density, hence the same dynamical times).
GalaxyParams scaledGalaxy(const GalaxyParams& g, double massRatio);

/// Two galaxies approaching on a Keplerian orbit of their total mass (parabolic by default).
Particles makeMerger(std::size_t n, std::uint64_t seed, const MergerParams& m = {});

/// The relative orbit of a galaxy pair (Keplerian, of the total mass, in the x–y plane).
struct OrbitParams {
  double pericentre = 2.0;    ///< [length]
  double eccentricity = 1.0;  ///< [0, ∞): < 1 bound (separation ≤ apocentre), 1 parabolic [1]
  double separation = 20.0;   ///< initial separation, ≥ pericentre; the pair approaches [length]
};

/// One galaxy of a pair: its model, its particle count and how its disk is tilted.
struct PairMember {
  std::size_t n = 0;  ///< particles [1], ≥ 3
  GalaxyParams params;
  double inclination = 0.0;  ///< disk tilt to the orbital plane [degrees]
  double node = 0.0;         ///< azimuth (from +x) of the axis the disk is tilted about [degrees]
  /// +1: the disk turns counter-clockwise about its axis (+z before the tilt); −1: clockwise,
  /// a counter-rotating disk (its velocities reversed before the tilt; bulge and halo as they are)
  int spin = 1;
};

/// The general pair that makeMerger is a case of: two galaxies with their own models and
/// counts, primary tagged galaxy 0, secondary galaxy 1.
Particles makeGalaxyPair(const PairMember& primary, const PairMember& secondary,
                         const OrbitParams& orbit, std::uint64_t seed);

/// A named built-in scenario: the files of assets/scenarios/, embedded at build time
/// ("plummer", "hernquist", "galaxy", "merger", then the others; sim/ic/scenario_file.h).
struct ScenarioInfo {
  std::string name;
  std::string description;
  float softening = 0.05f;  ///< a sensible ε for it [length]
  float dt = 1.0f / 64.0f;  ///< a sensible shared step [time]
};
const std::vector<ScenarioInfo>& scenarios();
/// Throws InvalidParameter (sim/params.h) for an unknown name or n = 0.
Particles makeScenario(std::string_view name, std::size_t n, std::uint64_t seed);
const ScenarioInfo& scenarioInfo(std::string_view name);

}  // namespace bhviz::sim
