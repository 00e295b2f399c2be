// Disk galaxy: exponential disk + Hernquist bulge + Hernquist halo, in near-equilibrium in
// their joint potential (in the spirit of Hernquist 1993, ApJS 86, 389). G = 1.
//
// Model choices:
// - Disk: Σ(R) ∝ exp(−R/R_d) truncated at kDiskCutoff·R_d, ρ ∝ Σ(R) sech²(z/z_0). Its midplane
//   circular speed is the exact razor-thin one (Freeman 1970), v² = 4πGΣ₀R_d y²[I₀K₀ − I₁K₁](y),
//   y = R/(2R_d); thickness (z_0 = 0.1 R_d) lowers the true midplane force by a few per cent.
// - Bulge and halo: Hernquist profiles truncated at haloCutoff, each renormalised so that its
//   particles carry exactly bulgeMass and haloMass. Or an NFW halo with its cusp, tapered by
//   ½ erfc((r − haloCutoff)/haloTaper), its velocities drawn from its isotropic distribution
//   function in the total (spherical) potential by Eddington's formula (eddington.h): in a cusp
//   the Jeans-plus-Gaussian approximation of the Hernquist halo is poorest.
// - Where a spherical mass profile is needed (the spheroids' Jeans equation and the escape
//   speed), the disk counts by its cylindrical enclosed mass M_d[1 − (1 + r/R_d)e^{−r/R_d}], the
//   usual approximation for a thin disk.
// - All profile functions are tabulated once on a log radius grid, so sampling is O(N).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>

#include "sim/ic/eddington.h"
#include "sim/ic/ic_detail.h"
#include "sim/ic/initial_conditions.h"

namespace bhviz::sim {

namespace {

using detail::LogTable;
using detail::Vec3d;

/// The disk is drawn inside this many scale lengths (mass outside: 13 e^{−12} ≈ 8e-5).
constexpr double kDiskCutoff = 12.0;
/// Q = σ_R κ / (3.36 G Σ) for a stellar disk (Toomre 1964).
constexpr double kToomreConstant = 3.36;
constexpr int kTablePerDecade = 128;
/// The tables start this far inside each component's scale length.
constexpr double kTableInner = 1e-4;
/// A spheroid velocity at or above the local escape speed is redrawn this many times at most.
constexpr int kMaxRedraws = 64;

// ---- Modified Bessel functions (Abramowitz & Stegun 9.8.1–9.8.8, |rel. error| < 2e-7) ----
// Our own polynomials rather than std::cyl_bessel_*, which not every standard library ships;
// scaled by e^{∓y} so that the products I·K never overflow.

/// c[0] + c[1] t + c[2] t² + …
template <std::size_t N>
double polynomial(const double (&c)[N], double t) {
  double sum = 0.0;
  for (std::size_t k = N; k-- > 0;) sum = sum * t + c[k];
  return sum;
}

constexpr double kI0Small[] = {1.0,       3.5156229, 3.0899424, 1.2067492,
                               0.2659732, 0.0360768, 0.0045813};
constexpr double kI0Large[] = {0.39894228,  0.01328592, 0.00225319,  -0.00157565, 0.00916281,
                               -0.02057706, 0.02635537, -0.01647633, 0.00392377};
constexpr double kI1Small[] = {0.5,        0.87890594, 0.51498869, 0.15084934,
                               0.02658733, 0.00301532, 0.00032411};
constexpr double kI1Large[] = {0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555,
                               0.02282967, -0.02895312, 0.01787654,  -0.00420059};
constexpr double kK0Small[] = {-0.57721566, 0.42278420, 0.23069756, 0.03488590,
                               0.00262698,  0.00010750, 0.0000074};
constexpr double kK0Large[] = {1.25331414, -0.07832358, 0.02189568, -0.01062446,
                               0.00587872, -0.00251540, 0.00053208};
constexpr double kK1Small[] = {1.0,         0.15443144,  -0.67278579, -0.18156897,
                               -0.01919402, -0.00110404, -0.00004686};
constexpr double kK1Large[] = {1.25331414,  0.23498619, -0.03655620, 0.01504268,
                               -0.00780353, 0.00325614, -0.00068245};

double besselI0Scaled(double y) {  // I₀(y) e^{−y}
  if (y < 3.75) return std::exp(-y) * polynomial(kI0Small, (y / 3.75) * (y / 3.75));
  return polynomial(kI0Large, 3.75 / y) / std::sqrt(y);
}

double besselI1Scaled(double y) {  // I₁(y) e^{−y}
  if (y < 3.75) return std::exp(-y) * y * polynomial(kI1Small, (y / 3.75) * (y / 3.75));
  return polynomial(kI1Large, 3.75 / y) / std::sqrt(y);
}

double besselK0Scaled(double y) {  // K₀(y) e^{y}
  if (y <= 2.0) {
    const double i0 = besselI0Scaled(y) * std::exp(y);
    return std::exp(y) * (-std::log(0.5 * y) * i0 + polynomial(kK0Small, 0.25 * y * y));
  }
  return polynomial(kK0Large, 2.0 / y) / std::sqrt(y);
}

double besselK1Scaled(double y) {  // K₁(y) e^{y}
  if (y <= 2.0) {
    const double i1 = besselI1Scaled(y) * std::exp(y);
    return std::exp(y) * (std::log(0.5 * y) * i1 + polynomial(kK1Small, 0.25 * y * y) / y);
  }
  return polynomial(kK1Large, 2.0 / y) / std::sqrt(y);
}

// ---- The mass model ----------------------------------------------------------------------

struct Spheroid {
  double mass = 0.0;    ///< mass carried by the particles [mass]
  double mInf = 0.0;    ///< untruncated Hernquist mass with the same inner profile [mass]
  double scale = 1.0;   ///< a [length]
  double cutoff = 1.0;  ///< no particles beyond [length]

  Spheroid(double m, double a, double rCut)
      : mass(m), mInf(m / detail::hernquistMassFraction(rCut, a)), scale(a), cutoff(rCut) {}
  double enclosed(double r) const {
    return r >= cutoff ? mass : mInf * detail::hernquistMassFraction(r, scale);
  }
  double density(double r) const {
    return r >= cutoff ? 0.0 : detail::hernquistDensity(r, mInf, scale);
  }
};

struct Disk {
  double mass = 0.0;    ///< mass carried by the particles [mass]
  double mInf = 0.0;    ///< untruncated exponential disk mass [mass]
  double scale = 1.0;   ///< R_d [length]
  double height = 0.1;  ///< z_0 [length]
  double cutoff = 1.0;  ///< [length]

  Disk(double m, double rd, double z0)
      : mass(m),
        mInf(m / cylindricalFraction(kDiskCutoff)),
        scale(rd),
        height(z0),
        cutoff(kDiskCutoff * rd) {}
  static double cylindricalFraction(double x) { return 1.0 - (1.0 + x) * std::exp(-x); }
  double enclosed(double r) const {
    return r >= cutoff ? mass : mInf * cylindricalFraction(r / scale);
  }
  /// Σ(R) [mass/length²]
  double surfaceDensity(double R) const {
    return mInf / (detail::kTwoPi * scale * scale) * std::exp(-R / scale);
  }
  /// Razor-thin midplane v_c² (Freeman 1970); ignores the truncation (8e-5 of the mass).
  double circularSpeed2(double R) const {
    const double y = 0.5 * R / scale;
    const double bessel =
        besselI0Scaled(y) * besselK0Scaled(y) - besselI1Scaled(y) * besselK1Scaled(y);
    return 4.0 * detail::kPi * surfaceDensity(0.0) * scale * y * y * bessel;
  }
};

struct GalaxyModel {
  Disk disk;
  Spheroid bulge;
  Spheroid halo;                            ///< the Hernquist halo (unused when nfwHalo is set)
  std::optional<detail::NfwTable> nfwHalo;  ///< the NFW halo

  explicit GalaxyModel(const GalaxyParams& g)
      : disk(g.diskMass, g.diskScaleLength, g.diskScaleHeight),
        bulge(g.bulgeMass, g.bulgeScale, g.haloCutoff),
        halo(g.haloMass, g.haloScale, g.haloCutoff) {
    if (g.haloProfile == HaloProfile::Nfw && g.haloMass > 0.0) {
      nfwHalo.emplace(detail::NfwShape{g.haloScale, g.haloCutoff, g.haloTaper}, g.haloMass,
                      innerRadius());
    }
  }
  double haloEnclosed(double r) const { return nfwHalo ? nfwHalo->enclosed(r) : halo.enclosed(r); }
  double enclosedMass(double r) const {
    return disk.enclosed(r) + bulge.enclosed(r) + haloEnclosed(r);
  }
  double totalMass() const { return disk.mass + bulge.mass + halo.mass; }
  double outerRadius() const {
    return std::fmax(disk.cutoff, nfwHalo ? nfwHalo->outerRadius() : halo.cutoff);
  }
  double innerRadius() const {
    const double inner = kTableInner * std::fmin(disk.scale, std::fmin(bulge.scale, halo.scale));
    return std::fmin(inner, 0.5 * std::fmin(disk.cutoff, halo.cutoff));
  }
  /// Midplane circular speed² [velocity²]: exact thin disk plus the spheroids.
  double circularSpeed2(double R) const {
    return disk.circularSpeed2(R) + (bulge.enclosed(R) + haloEnclosed(R)) / R;
  }
};

// ---- Tables ----------------------------------------------------------------------------

/// Spherical potential Φ(r) [energy/mass], integrated inwards from −M/r at the outer edge.
LogTable potentialTable(const GalaxyModel& model) {
  const double rOut = model.outerRadius();
  LogTable phi(model.innerRadius(), rOut, kTablePerDecade);
  const std::size_t last = phi.size() - 1;
  phi[last] = -model.totalMass() / rOut;
  auto force = [&](std::size_t k) {  // M/r² · dr/dln r
    return model.enclosedMass(phi.radius(k)) / phi.radius(k);
  };
  for (std::size_t k = last; k-- > 0;) {
    phi[k] = phi[k + 1] - 0.5 * phi.lnStep() * (force(k) + force(k + 1));
  }
  return phi;
}

/// ⟨u²⟩ of a 3D standard normal u restricted to |u| < x:
/// 3 − √(2/π) x³ e^{−x²/2} / P(x), with P(x) = erf(x/√2) − √(2/π) x e^{−x²/2}.
double truncatedSecondMoment(double x) {
  const double c = std::sqrt(2.0 / detail::kPi) * std::exp(-0.5 * x * x);
  const double inside = std::erf(x / std::sqrt(2.0)) - c * x;
  return 3.0 - c * x * x * x / inside;
}

/// Gaussian velocities redrawn above the escape speed lose their tail, and with it up to ~10%
/// of the kinetic energy where v_esc is only 2–3σ (the outer halo). So draw instead from a
/// wider Gaussian, σ_eff, whose part below v_esc has the Jeans ⟨v²⟩ = 3σ². Writes σ_eff² over
/// σ² at every node.
void correctForEscapeCap(LogTable& sigma2, const LogTable& potential) {
  // Below x = 0.5 the truncated Gaussian is nearly uniform in the ball (⟨v²⟩ → 3v_esc²/5);
  // a hotter Jeans σ cannot be matched, so x stops there.
  // Above x = 8 the lost tail (~1e-14 of the particles) is nothing: σ is left as it is.
  constexpr double kMinRatio = 0.5, kMaxRatio = 8.0;
  const double negligible = truncatedSecondMoment(kMaxRatio) / (kMaxRatio * kMaxRatio);
  for (std::size_t k = 0; k < sigma2.size(); ++k) {
    const double vEscape2 = -2.0 * potential(sigma2.radius(k));
    const double target = 3.0 * sigma2[k] / vEscape2;  // = m₂(x)/x², falling in x = v_esc/σ_eff
    if (!(target > negligible)) continue;
    double lo = kMinRatio, hi = kMaxRatio;
    if (truncatedSecondMoment(lo) / (lo * lo) <= target) {
      hi = lo;
    } else {
      for (int it = 0; it < 60; ++it) {
        const double mid = 0.5 * (lo + hi);
        (truncatedSecondMoment(mid) / (mid * mid) > target ? lo : hi) = mid;
      }
    }
    sigma2[k] = vEscape2 / (hi * hi);
  }
}

/// σ²(r) of an isotropic spheroid from the Jeans equation in the total potential,
/// ρσ²(r) = ∫_r^{cutoff} ρ G M_tot(<r')/r'² dr' (zero pressure at the truncation radius).
LogTable jeansDispersion2(const GalaxyModel& model, const Spheroid& s, const LogTable& potential) {
  LogTable sigma2(std::fmin(kTableInner * s.scale, 0.5 * s.cutoff), s.cutoff, kTablePerDecade);
  const std::size_t last = sigma2.size() - 1;
  auto integrand = [&](std::size_t k) {  // ρ M / r² · dr/dln r; the cutoff node is inside
    const double r = std::fmin(sigma2.radius(k), s.cutoff * (1.0 - 1e-12));
    return s.density(r) * model.enclosedMass(r) / r;
  };
  double pressure = 0.0, previous = integrand(last);
  sigma2[last] = 0.0;
  for (std::size_t k = last; k-- > 0;) {
    const double current = integrand(k);
    pressure += 0.5 * sigma2.lnStep() * (current + previous);
    previous = current;
    sigma2[k] = pressure / s.density(sigma2.radius(k));
  }
  correctForEscapeCap(sigma2, potential);
  return sigma2;
}

struct DiskKinematics {
  LogTable meanVphi;  ///< mean azimuthal speed [velocity]
  LogTable sigmaR;    ///< [velocity]
  LogTable sigmaPhi;  ///< [velocity]
};

/// κ² and Ω² of the midplane rotation curve at R [1/time²].
struct Epicycle {
  double omega2, kappa2;
};
Epicycle epicycle(const GalaxyModel& model, double R) {
  constexpr double kDelta = 0.01;  // ln R step of the centred derivative
  const double vc2 = model.circularSpeed2(R);
  const double dvc2 =
      (model.circularSpeed2(R * std::exp(kDelta)) - model.circularSpeed2(R * std::exp(-kDelta))) /
      (2.0 * kDelta);
  const double omega2 = vc2 / (R * R);
  return {omega2, std::fmax((dvc2 + 2.0 * vc2) / (R * R), 1e-12 * omega2)};
}

/// σ_R from Toomre Q, σ_φ from the epicyclic ratio κ²/(4Ω²), and the mean rotation from the
/// asymmetric-drift equation v̄_φ² = v_c² + σ_R²(1 − κ²/(4Ω²) + dln(Σσ_R²)/dln R).
///
/// Two radial profiles of σ_R:
/// - qRadius = 0: Q constant with radius, σ_R ∝ Σ/κ. The drift term is then taken as −2R/R_d,
///   which belongs to the other profile: near the centre the rotation comes out too slow and
///   σ_R too large for the epicyclic approximation, and the disk rearranges itself in its
///   first rotation (a ring-like over-density inside R_d, a deficit around 2 R_d). Kept as it
///   was for the original built-in scenarios (galaxy, merger), whose outputs are fixed.
/// - qRadius > 0: σ_R² ∝ Σ (Hernquist 1993), Q = toomreQ at R = qRadius, so σ_z/σ_R is
///   constant and Σσ_R² ∝ e^{−2R/R_d}: the drift term −2R/R_d is then exact.
DiskKinematics diskKinematics(const GalaxyModel& model, double toomreQ, double qRadius) {
  const Disk& d = model.disk;
  DiskKinematics t;
  t.meanVphi = LogTable(kTableInner * d.scale, d.cutoff, kTablePerDecade);
  t.sigmaR = t.meanVphi;
  t.sigmaPhi = t.meanVphi;
  double sigmaRef = 0.0;  // σ_R at qRadius [velocity]
  if (qRadius > 0.0) {
    sigmaRef = toomreQ * kToomreConstant * d.surfaceDensity(qRadius) /
               std::sqrt(epicycle(model, qRadius).kappa2);
  }
  for (std::size_t k = 0; k < t.meanVphi.size(); ++k) {
    const double R = t.meanVphi.radius(k);
    const double vc2 = model.circularSpeed2(R);
    const Epicycle e = epicycle(model, R);
    const double omega2 = e.omega2;
    const double kappa2 = e.kappa2;
    const double sigmaR = qRadius > 0.0
                              ? sigmaRef * std::exp(-0.5 * (R - qRadius) / d.scale)
                              : toomreQ * kToomreConstant * d.surfaceDensity(R) / std::sqrt(kappa2);
    const double ratio = kappa2 / (4.0 * omega2);
    const double drift = sigmaR * sigmaR * (1.0 - ratio - 2.0 * R / d.scale);
    t.meanVphi[k] = std::sqrt(std::fmax(vc2 + drift, 0.0));
    t.sigmaR[k] = sigmaR;
    t.sigmaPhi[k] = sigmaR * std::sqrt(ratio);
  }
  return t;
}

// ---- Sampling ----------------------------------------------------------------------------

struct SampleRange {
  std::size_t begin = 0, end = 0;
  std::uint64_t seed = 0;
  unsigned galaxy = 0;
};

void sampleDisk(Particles& p, const SampleRange& range, const Disk& d, const DiskKinematics& kin) {
  const std::size_t count = range.end - range.begin;
  const double m = d.mass / static_cast<double>(count);
  const std::uint8_t tag = makeTag(Component::Disk, range.galaxy);
#pragma omp parallel for schedule(static)
  for (std::size_t i = range.begin; i < range.end; ++i) {
    Rng rng(range.seed, detail::particleStream(range.galaxy, i));
    // R/R_d has density x e^{−x}: a Gamma(2) variate, the sum of two exponential ones.
    double x;
    do {
      x = -std::log(detail::openUniform(rng) * detail::openUniform(rng));
    } while (x >= kDiskCutoff);
    const double R = x * d.scale;
    const double phi = detail::kTwoPi * rng.uniform();
    const double z = d.height * std::atanh(2.0 * detail::openUniform(rng) - 1.0);  // sech²
    const double c = std::cos(phi), s = std::sin(phi);

    const Vec3d n = detail::gaussianVector(rng);
    const double vR = kin.sigmaR(R) * n.x;
    const double vPhi = kin.meanVphi(R) + kin.sigmaPhi(R) * n.y;  // > 0: counter-clockwise
    const double vZ = std::sqrt(detail::kPi * d.surfaceDensity(R) * d.height) * n.z;
    detail::setParticle(p, i, {R * c, R * s, z}, {vR * c - vPhi * s, vR * s + vPhi * c, vZ}, m,
                        tag);
  }
}

void sampleSpheroid(Particles& p, const SampleRange& range, const Spheroid& s, Component comp,
                    const LogTable& sigma2, const LogTable& potential) {
  const std::size_t count = range.end - range.begin;
  const double m = s.mass / static_cast<double>(count);
  const double massMax = detail::hernquistMassFraction(s.cutoff, s.scale);
  const std::uint8_t tag = makeTag(comp, range.galaxy);
#pragma omp parallel for schedule(static)
  for (std::size_t i = range.begin; i < range.end; ++i) {
    Rng rng(range.seed, detail::particleStream(range.galaxy, i));
    const double r = detail::hernquistRadius(massMax * detail::openUniform(rng), s.scale);
    const Vec3d x = r * detail::randomUnitVector(rng);
    const double sigma = std::sqrt(sigma2(r));
    const double vEscape2 = -2.0 * potential(r);
    Vec3d v;
    double v2 = 0.0;
    for (int attempt = 0; attempt < kMaxRedraws; ++attempt) {
      v = sigma * detail::gaussianVector(rng);
      v2 = v.x * v.x + v.y * v.y + v.z * v.z;
      if (v2 < vEscape2) break;
    }
    // Only reachable where σ_eff is comparable to v_esc; these models keep v_esc ≳ 3σ_eff,
    // where a draw is accepted 97% of the time.
    if (v2 >= vEscape2) v = (0.9 * std::sqrt(vEscape2 / v2)) * v;
    detail::setParticle(p, i, x, v, m, tag);
  }
}

/// The NFW halo: radii from its enclosed mass, speeds from its Eddington distribution function in
/// the total potential, directions isotropic.
void sampleNfwHalo(Particles& p, const SampleRange& range, const GalaxyModel& model) {
  const detail::NfwTable& halo = *model.nfwHalo;
  const detail::EddingtonDf df([&](double r) { return halo.densitySlope(r); },
                               [&](double r) { return model.enclosedMass(r); }, model.innerRadius(),
                               model.outerRadius());
  const double m = halo.mass() / static_cast<double>(range.end - range.begin);
  const std::uint8_t tag = makeTag(Component::Halo, range.galaxy);
#pragma omp parallel for schedule(static)
  for (std::size_t i = range.begin; i < range.end; ++i) {
    Rng rng(range.seed, detail::particleStream(range.galaxy, i));
    const double r = halo.radius(detail::openUniform(rng));
    const Vec3d x = r * detail::randomUnitVector(rng);
    const Vec3d direction = detail::randomUnitVector(rng);
    detail::setParticle(p, i, x, df.speed(rng, r) * direction, m, tag);
  }
}

// ---- Parameters ----------------------------------------------------------------------------

struct ComponentCounts {
  std::size_t disk = 0, bulge = 0, halo = 0;
};

void validateGalaxy(const GalaxyParams& g) {
  detail::requirePositive(g.diskMass, "galaxy diskMass");
  detail::requirePositive(g.diskScaleLength, "galaxy diskScaleLength");
  detail::requirePositive(g.diskScaleHeight, "galaxy diskScaleHeight");
  detail::requirePositive(g.toomreQ, "galaxy toomreQ");
  if (!(g.toomreRadius >= 0.0) || !std::isfinite(g.toomreRadius)) {
    throw InvalidParameter("galaxy toomreRadius must be finite and >= 0");
  }
  detail::requirePositive(g.bulgeScale, "galaxy bulgeScale");
  detail::requirePositive(g.haloScale, "galaxy haloScale");
  detail::requirePositive(g.haloCutoff, "galaxy haloCutoff");
  if (g.haloProfile == HaloProfile::Nfw) detail::requirePositive(g.haloTaper, "galaxy haloTaper");
  if (!(g.bulgeMass >= 0.0) || !(g.haloMass >= 0.0) || !std::isfinite(g.bulgeMass) ||
      !std::isfinite(g.haloMass)) {
    throw InvalidParameter("galaxy bulgeMass and haloMass must be finite and >= 0");
  }
  const double rest = 1.0 - g.diskFraction - g.bulgeFraction;
  if (!(g.diskFraction > 0.0) || !(g.bulgeFraction >= 0.0) || !(rest >= -1e-12)) {
    throw InvalidParameter(
        "galaxy diskFraction must be > 0, bulgeFraction >= 0, and their sum <= 1");
  }
  if (g.bulgeMass > 0.0 && !(g.bulgeFraction > 0.0)) {
    throw InvalidParameter("galaxy bulgeMass > 0 needs bulgeFraction > 0");
  }
  if (g.haloMass > 0.0 && !(rest > 0.0)) {
    throw InvalidParameter("galaxy haloMass > 0 needs diskFraction + bulgeFraction < 1");
  }
}

/// Counts that sum to n, at least one particle for every component with mass and none for a
/// massless one (the disk takes a massless halo's share).
ComponentCounts componentCounts(std::size_t n, const GalaxyParams& g) {
  if (n < 3) {
    throw InvalidParameter("a galaxy needs at least 3 particles (got " + std::to_string(n) + ")");
  }
  const double dn = static_cast<double>(n);
  const long long total = static_cast<long long>(n);
  const bool hasBulge = g.bulgeMass > 0.0, hasHalo = g.haloMass > 0.0;
  long long bulge = hasBulge ? std::max(1LL, std::llround(g.bulgeFraction * dn)) : 0;
  long long disk = std::max(1LL, std::llround(g.diskFraction * dn));
  if (!hasHalo) disk = total - bulge;
  long long halo = total - disk - bulge;
  // Rounding can leave a component with mass empty: take a particle from the largest one
  // (n ≥ 3 leaves one for each).
  auto largest = [&]() -> long long& {
    return disk >= bulge && disk >= halo ? disk : (bulge >= halo ? bulge : halo);
  };
  while (disk < 1 || (hasBulge && bulge < 1) || (hasHalo && halo < 1)) {
    long long& from = largest();
    long long& to = disk < 1 ? disk : (hasBulge && bulge < 1 ? bulge : halo);
    --from;
    ++to;
  }
  return {static_cast<std::size_t>(disk), static_cast<std::size_t>(bulge),
          static_cast<std::size_t>(halo)};
}

}  // namespace

Particles makeGalaxy(std::size_t n, std::uint64_t seed, const GalaxyParams& g, unsigned galaxy) {
  validateGalaxy(g);
  const ComponentCounts counts = componentCounts(n, g);
  if (galaxy > 63) throw InvalidParameter("galaxy index must be < 64 (6 bits of the tag)");

  const GalaxyModel model(g);
  const LogTable potential = potentialTable(model);
  const DiskKinematics kinematics =
      diskKinematics(model, g.toomreQ, g.toomreRadius * g.diskScaleLength);

  Particles p;
  p.resize(n);
  const std::size_t bulgeBegin = counts.disk, haloBegin = counts.disk + counts.bulge;
  sampleDisk(p, {0, bulgeBegin, seed, galaxy}, model.disk, kinematics);
  if (counts.bulge > 0) {
    sampleSpheroid(p, {bulgeBegin, haloBegin, seed, galaxy}, model.bulge, Component::Bulge,
                   jeansDispersion2(model, model.bulge, potential), potential);
  }
  if (counts.halo > 0 && model.nfwHalo) {
    sampleNfwHalo(p, {haloBegin, n, seed, galaxy}, model);
  } else if (counts.halo > 0) {
    sampleSpheroid(p, {haloBegin, n, seed, galaxy}, model.halo, Component::Halo,
                   jeansDispersion2(model, model.halo, potential), potential);
  }
  detail::recentre(p);
  detail::finalise(p);
  return p;
}

}  // namespace bhviz::sim
