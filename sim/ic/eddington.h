#pragma once
// Cuspy spherical components in equilibrium (private to sim/ic): the NFW profile with a smooth
// outer taper, its enclosed-mass table, and the isotropic distribution function f(E) of such a
// component in any spherical potential by Eddington's formula (Binney & Tremaine 2008, eq. 4.46),
// computed numerically. Used by the NFW sphere (nfw.cpp, its own potential) and by the NFW halo
// of a galaxy (galaxy.cpp, the potential of disk + bulge + halo).

#include <cstddef>
#include <functional>
#include <vector>

#include "sim/ic/ic_detail.h"
#include "sim/rng.h"

namespace bhviz::sim::detail {

/// NFW (Navarro, Frenk & White 1997) shape ρ/ρ_s = 1/[x(1 + x)²], x = r/r_s, times the taper
/// ½ erfc((r − r_c)/w) that MAGI uses (Miki & Umemura 2018): the cusp is untouched (at r_c = 10
/// r_s, w = r_c/10 the taper differs from 1 by 1e-23 inside r_s) and the mass is finite.
struct NfwShape {
  double scale = 1.0;    ///< r_s [length]
  double cutoff = 10.0;  ///< r_c, where the taper halves the density [length]
  double taper = 1.0;    ///< w, the taper's width [length], > 0

  double density(double r) const;  ///< ρ/ρ_s [1]
  double slope(double r) const;    ///< d(ρ/ρ_s)/dr [1/length]
  /// Beyond this the density is taken as 0 (erfc(6) ≈ 2e-17) [length].
  double outerRadius() const { return cutoff + 6.0 * taper; }
};

/// An NFW component of total mass `mass`: its density and M(<r), tabulated on a log grid from
/// rMin to the outer radius (M ∝ r², the cusp's law, below rMin), and radii drawn from M(<r).
class NfwTable {
 public:
  NfwTable(const NfwShape& shape, double mass, double rMin);

  double density(double r) const;       ///< ρ [mass/length³]
  double densitySlope(double r) const;  ///< dρ/dr [mass/length⁴]
  double enclosed(double r) const;      ///< M(<r) [mass]
  /// The radius enclosing mass fraction u ∈ (0, 1) [length].
  double radius(double u) const;
  double mass() const { return m_mass; }
  double innerRadius() const { return m_enclosed.radius(0); }
  double outerRadius() const { return m_shape.outerRadius(); }

 private:
  NfwShape m_shape;
  double m_mass = 0.0;
  double m_rhoS = 0.0;  ///< ρ_s [mass/length³]
  LogTable m_enclosed;  ///< M(<r) at the nodes [mass]
};

/// The isotropic f(E) of a component of density ρ(r) in the spherical potential of the total
/// enclosed mass M(<r) (the component's own, or with others'), on the nodes r_k of a log grid:
/// f(ε) = [∫₀^ε (d²ρ/dΨ²) dΨ/√(ε − Ψ) + (dρ/dΨ)₀/√ε] / (√8 π²), ε and Ψ the binding energy
/// and potential relative to the outer edge, where ρ = 0. dρ/dΨ is linear in Ψ between nodes,
/// so each interval's integral is exact. A negative f (a taper too sharp for an isotropic model)
/// is set to 0.
class EddingtonDf {
 public:
  /// The component's dρ/dr and the total M(<r) as functions of r (f needs only dρ/dΨ); all the
  /// component's mass lies inside rMax.
  EddingtonDf(const std::function<double(double)>& densitySlope,
              const std::function<double(double)>& totalEnclosed, double rMin, double rMax);

  /// Ψ(r) − Ψ(rMax) ≥ 0 [energy/mass]
  double relativePotential(double r) const { return m_psi(r); }
  /// f at relative binding energy ε [mass/(length·velocity)³]; 0 for ε ≤ 0.
  double distribution(double eps) const;
  /// A speed from v² f(Ψ(r) − v²/2) on [0, √(2Ψ(r))] (rejection under a tabulated bound).
  double speed(Rng& rng, double r) const;

 private:
  double speedDensity(double v, double psi) const {
    return v * v * distribution(psi - 0.5 * v * v);
  }
  double peakSpeedDensity(double psi) const;

  LogTable m_psi;              ///< relative potential at the nodes [energy/mass]
  std::vector<double> m_eps;   ///< ascending relative binding energies (the nodes' Ψ)
  std::vector<double> m_f;     ///< f at m_eps
  std::vector<double> m_peak;  ///< max over v of v² f(Ψ(r_k) − v²/2), node order
};

}  // namespace bhviz::sim::detail
