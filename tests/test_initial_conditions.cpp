// The seeded initial conditions: reproducibility, bookkeeping, and the physical properties
// each model promises (profiles, dispersions, virial equilibrium, the merger's orbit).
// Potential energies and circular speeds come from exact direct summation (sim/direct_sum.h).

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "ic_test_support.h"
#include "sim/direct_sum.h"
#include "sim/ic/initial_conditions.h"
#include "sim/ic/scenario_file.h"
#include "sim/params.h"

namespace bhviz::sim {
namespace {

using namespace ictest;

constexpr double kPi = 3.14159265358979323846;

double kineticEnergy(const Particles& p) {
  double k = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Vec3d v = velocity(p, i);
    k += 0.5 * p.posMass[i].w * (v.x * v.x + v.y * v.y + v.z * v.z);
  }
  return k;
}

/// W = ½ Σ m φ, unsoftened.
double potentialEnergy(const Particles& p) {
  const std::vector<Accel4d> acc = directSumAll(p, 0.0);
  double w = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) w += 0.5 * p.posMass[i].w * acc[i][3];
  return w;
}

/// Radius enclosing half the mass, about the origin (equal masses assumed).
double halfMassRadius(const Particles& p) {
  std::vector<double> r(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) r[i] = norm(position(p, i));
  std::nth_element(r.begin(), r.begin() + r.size() / 2, r.end());
  return r[r.size() / 2];
}

/// The density centre by shrinking spheres (Power et al. 2003): the centre of mass of the
/// particles within r of the current centre, with r shrinking. In a cuspy model with a long
/// tail the centre of mass (where the generators put the origin) sits ~r_rms/√N from the cusp.
Vec3d densityCentre(const Particles& p, double r0, double rMin) {
  Vec3d c;
  for (double r = r0; r >= rMin; r *= 0.7) {
    const Moments m = moments(p, [&](std::size_t i) {
      const Vec3d x = position(p, i);
      return norm({x.x - c.x, x.y - c.y, x.z - c.z}) < r;
    });
    c = m.pos;
  }
  return c;
}

/// Mean ⟨v²⟩ over particles in the shell [r0, r1) about `centre`, against the mean of the
/// model's 3σ²(r) at the same particles: the ratio should be 1.
template <class Sigma2>
double dispersionRatio(const Particles& p, Vec3d centre, double r0, double r1, Sigma2 sigma2) {
  double measured = 0.0, expected = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Vec3d x = position(p, i);
    const double r = norm({x.x - centre.x, x.y - centre.y, x.z - centre.z});
    if (r < r0 || r >= r1) continue;
    const double v = norm(velocity(p, i));
    measured += v * v;
    expected += 3.0 * sigma2(r);
  }
  return measured / expected;
}

// ---- Every scenario -----------------------------------------------------------------------

TEST(InitialConditions, SameSeedIdenticalDifferentSeedDifferent) {
  for (const ScenarioInfo& s : scenarios()) {
    SCOPED_TRACE(s.name);
    const Particles a = makeScenario(s.name, 3000, 42);
    const Particles b = makeScenario(s.name, 3000, 42);
    const Particles c = makeScenario(s.name, 3000, 43);
    EXPECT_TRUE(identical(a, b));
    EXPECT_FALSE(identical(a, c));
    std::size_t same = 0;
    for (std::size_t i = 0; i < a.size(); ++i) same += a.posMass[i].x == c.posMass[i].x;
    EXPECT_LT(same, a.size() / 100) << "different seeds should give unrelated particles";
  }
}

TEST(InitialConditions, IdsBinsForcesAndTags) {
  for (const ScenarioInfo& s : scenarios()) {
    SCOPED_TRACE(s.name);
    const std::size_t n = 2001;
    const Particles p = makeScenario(s.name, n, 7);
    ASSERT_EQ(p.size(), n);
    EXPECT_NO_THROW(p.validate());
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(p.id[i], i);
      ASSERT_EQ(p.bin[i], 0);
      ASSERT_EQ(p.accPot[i].x, 0.0f);
      ASSERT_EQ(p.accPot[i].w, 0.0f);
      const ScenarioSpec& spec = builtinScenario(s.name);
      ASSERT_EQ(tagComponent(p.tag[i]) == Component::Sphere, spec.galaxies.empty());
      ASSERT_LE(tagGalaxy(p.tag[i]), spec.galaxies.size() > 1 ? 1u : 0u);
    }
  }
}

TEST(InitialConditions, IndependentOfThreadCount) {
  const int threads = omp_get_max_threads();
  for (const ScenarioInfo& s : scenarios()) {
    SCOPED_TRACE(s.name);
    omp_set_num_threads(1);
    const Particles serial = makeScenario(s.name, 5000, 11);
    omp_set_num_threads(std::max(2, threads) + 1);  // an odd count splits the loops unevenly
    const Particles parallel = makeScenario(s.name, 5000, 11);
    EXPECT_TRUE(identical(serial, parallel));
  }
  omp_set_num_threads(threads);
}

// ---- Plummer --------------------------------------------------------------------------------

constexpr double kPlummerA = 3.0 * kPi / 16.0;

TEST(Plummer, MassCentreAndHalfMassRadius) {
  const Particles p = makePlummer(20000, 1);
  const Moments m = moments(p);
  EXPECT_NEAR(m.mass, 1.0, 1e-5);
  EXPECT_LT(norm(m.pos), 1e-5);
  EXPECT_LT(norm(m.vel), 1e-6);
  // r_h = a / sqrt(2^{2/3} − 1) = 0.7686 in Hénon units.
  const double expected = kPlummerA / std::sqrt(std::pow(2.0, 2.0 / 3.0) - 1.0);
  const double rh = halfMassRadius(p);
  RecordProperty("half_mass_radius", std::to_string(rh));
  EXPECT_NEAR(rh / expected, 1.0, 0.03) << "r_h = " << rh << ", expected " << expected;
}

TEST(Plummer, IsotropicDispersionMatchesJeans) {
  const Particles p = makePlummer(40000, 2);
  // σ²(r) = GM / (6 sqrt(r² + a²)) for the isotropic Plummer model.
  auto sigma2 = [](double r) { return 1.0 / (6.0 * std::sqrt(r * r + kPlummerA * kPlummerA)); };
  for (auto [r0, r1] : {std::pair{0.0, 0.3}, {0.3, 0.8}, {0.8, 2.0}, {2.0, 5.0}}) {
    const double ratio = dispersionRatio(p, Vec3d{}, r0, r1, sigma2);
    EXPECT_NEAR(ratio, 1.0, 0.05) << "shell [" << r0 << ", " << r1 << ")";
  }
}

TEST(Plummer, EnergyAndVirialRatio) {
  const Particles p = makePlummer(10000, 3);
  const double k = kineticEnergy(p), w = potentialEnergy(p);
  RecordProperty("energy", std::to_string(k + w));
  RecordProperty("virial_ratio", std::to_string(2.0 * k / -w));
  EXPECT_NEAR(k + w, -0.25, 0.25 * 0.05);
  EXPECT_NEAR(2.0 * k / -w, 1.0, 0.05);
}

// ---- Hernquist ------------------------------------------------------------------------------

TEST(Hernquist, HalfMassRadiusAndScaling) {
  for (auto [mass, a] : {std::pair{1.0, 1.0}, {3.0, 2.0}}) {
    const double rmax = 100.0;
    const Particles p = makeHernquist(20000, 5, mass, a, rmax);
    const Moments m = moments(p);
    EXPECT_NEAR(m.mass, mass, 1e-5 * mass);
    EXPECT_LT(norm(m.pos), 1e-5 * a);
    // Truncated at rmax and renormalised: M(<r)/M = [r/(r + a)]² / [rmax/(rmax + 1)]², so
    // r_h = a s/(1 − s) with s = sqrt(½)·rmax/(rmax + 1); (1 + √2) a untruncated.
    const double s = std::sqrt(0.5) * rmax / (rmax + 1.0);
    const double expected = a * s / (1.0 - s);
    EXPECT_NEAR(halfMassRadius(p) / expected, 1.0, 0.03) << "mass " << mass << ", a " << a;
    double rMax = 0.0;
    for (std::size_t i = 0; i < p.size(); ++i) rMax = std::max(rMax, norm(position(p, i)));
    EXPECT_LT(rMax, rmax * a * 1.001);
  }
}

TEST(Hernquist, IsotropicDispersionMatchesJeans) {
  const double rmax = 100.0;
  const Particles p = makeHernquist(40000, 6, 1.0, 1.0, rmax);
  const double mInf = std::pow((rmax + 1.0) / rmax, 2.0);
  // Hernquist (1990) eq. 10, G = a = 1: the isotropic σ² of the untruncated model.
  auto sigma2 = [mInf](double r) {
    const double r1 = r + 1.0;
    return mInf / 12.0 *
           (12.0 * r * r1 * r1 * r1 * std::log(r1 / r) -
            r / r1 * (25.0 + 52.0 * r + 42.0 * r * r + 12.0 * r * r * r));
  };
  const Vec3d centre = densityCentre(p, 1.0, 0.1);
  for (auto [r0, r1] : {std::pair{0.05, 0.5}, {0.5, 1.5}, {1.5, 5.0}, {5.0, 20.0}}) {
    const double ratio = dispersionRatio(p, centre, r0, r1, sigma2);
    EXPECT_NEAR(ratio, 1.0, 0.05) << "shell [" << r0 << ", " << r1 << ")";
  }
}

TEST(Hernquist, VirialRatio) {
  const Particles p = makeHernquist(10000, 7);
  const double k = kineticEnergy(p), w = potentialEnergy(p);
  RecordProperty("virial_ratio", std::to_string(2.0 * k / -w));
  EXPECT_NEAR(2.0 * k / -w, 1.0, 0.05);
  // W = −∫ G M(r) dM / r inside rmax = 100 a, with M(r) = M_inf s², s = r/(r + a):
  // −2 G M_inf² (s³/3 − s⁴/4) at s = rmax/(rmax + a); −GM²/(6a) untruncated, 4% less.
  const double s = 100.0 / 101.0, mInf = 1.0 / (s * s);
  const double expected = -2.0 * mInf * mInf * (s * s * s / 3.0 - s * s * s * s / 4.0);
  EXPECT_NEAR(w / expected, 1.0, 0.05);
}

TEST(Hernquist, RejectsBadParameters) {
  EXPECT_THROW(makeHernquist(0, 1), InvalidParameter);
  EXPECT_THROW(makeHernquist(10, 1, -1.0), InvalidParameter);
  EXPECT_THROW(makeHernquist(10, 1, 1.0, 0.0), InvalidParameter);
  EXPECT_THROW(makeHernquist(10, 1, 1.0, 1.0, 0.0), InvalidParameter);
  EXPECT_THROW(makePlummer(0, 1), InvalidParameter);
}

// ---- Galaxy ---------------------------------------------------------------------------------

bool isDisk(const Particles& p, std::size_t i) { return tagComponent(p.tag[i]) == Component::Disk; }

const Particles& referenceGalaxy() {
  static const Particles p = makeGalaxy(40000, 2024);
  return p;
}

/// The reference galaxy moved so that its disk's centre of mass is at rest at the origin. The
/// generator shifts all components together onto the total centre of mass, which the sampling
/// noise of the long-tailed halo puts ~0.1 R_d away from the disk's centre: enough to spoil
/// thin-disk statistics (z_0 = 0.1) taken about the origin.
const Particles& diskCentredGalaxy() {
  static const Particles p = [] {
    Particles q = referenceGalaxy();
    const Particles& g = q;
    const Moments disk = moments(g, [&](std::size_t i) { return isDisk(g, i); });
    for (std::size_t i = 0; i < q.size(); ++i) {
      q.posMass[i].x -= static_cast<float>(disk.pos.x);
      q.posMass[i].y -= static_cast<float>(disk.pos.y);
      q.posMass[i].z -= static_cast<float>(disk.pos.z);
      q.vel[i].x -= static_cast<float>(disk.vel.x);
      q.vel[i].y -= static_cast<float>(disk.vel.y);
      q.vel[i].z -= static_cast<float>(disk.vel.z);
    }
    return q;
  }();
  return p;
}

TEST(Galaxy, ComponentCountsMassesAndCentre) {
  const Particles& p = referenceGalaxy();
  const GalaxyParams g;
  std::size_t count[4] = {0, 0, 0, 0};
  double mass[4] = {0, 0, 0, 0};
  for (std::size_t i = 0; i < p.size(); ++i) {
    const auto c = static_cast<std::size_t>(tagComponent(p.tag[i]));
    ++count[c];
    mass[c] += p.posMass[i].w;
    ASSERT_EQ(tagGalaxy(p.tag[i]), 0u);
  }
  EXPECT_EQ(count[0], 0u);
  EXPECT_EQ(count[1], 20000u);
  EXPECT_EQ(count[2], 5000u);
  EXPECT_EQ(count[3], 15000u);
  EXPECT_NEAR(mass[1], g.diskMass, 1e-4);
  EXPECT_NEAR(mass[2], g.bulgeMass, 1e-5);
  EXPECT_NEAR(mass[3], g.haloMass, 1e-3);
  const Moments m = moments(p);
  EXPECT_LT(norm(m.pos), 1e-4);
  EXPECT_LT(norm(m.vel), 1e-5);
  double haloMax = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) haloMax = std::max(haloMax, norm(position(p, i)));
  EXPECT_LT(haloMax, g.haloCutoff * 1.01);
}

TEST(Galaxy, CountsSumToNAndRejectBadInput) {
  for (std::size_t n : {3u, 4u, 7u, 10u, 1001u}) {
    const Particles p = makeGalaxy(n, 1);
    ASSERT_EQ(p.size(), n);
    std::size_t count[4] = {0, 0, 0, 0};
    for (std::size_t i = 0; i < n; ++i) ++count[static_cast<std::size_t>(tagComponent(p.tag[i]))];
    EXPECT_GE(count[1], 1u);
    EXPECT_GE(count[2], 1u);
    EXPECT_GE(count[3], 1u);
  }
  GalaxyParams noHalo;
  noHalo.haloMass = 0.0;
  const Particles p = makeGalaxy(100, 1, noHalo);
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_NE(tagComponent(p.tag[i]), Component::Halo);

  EXPECT_THROW(makeGalaxy(2, 1), InvalidParameter);
  GalaxyParams bad;
  bad.toomreQ = 0.0;
  EXPECT_THROW(makeGalaxy(100, 1, bad), InvalidParameter);
  bad = {};
  bad.diskFraction = 0.9;
  bad.bulgeFraction = 0.2;
  EXPECT_THROW(makeGalaxy(100, 1, bad), InvalidParameter);
  bad = {};
  bad.diskScaleLength = -1.0;
  EXPECT_THROW(makeGalaxy(100, 1, bad), InvalidParameter);
}

TEST(Galaxy, DiskIsExponentialAndSech2) {
  const Particles& p = diskCentredGalaxy();
  // Least-squares slope of ln Σ(R) over annuli 0.5 wide in [0.5, 5): −1/R_d.
  std::vector<double> xs, ys;
  std::vector<double> zs;
  for (double r0 = 0.5; r0 < 4.99; r0 += 0.5) {
    double mass = 0.0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (!isDisk(p, i)) continue;
      const double R = std::hypot(p.posMass[i].x, p.posMass[i].y);
      if (R >= r0 && R < r0 + 0.5) mass += p.posMass[i].w;
    }
    const double area = kPi * ((r0 + 0.5) * (r0 + 0.5) - r0 * r0);
    xs.push_back(r0 + 0.25);
    ys.push_back(std::log(mass / area));
  }
  const double n = static_cast<double>(xs.size());
  const double mx = std::accumulate(xs.begin(), xs.end(), 0.0) / n;
  const double my = std::accumulate(ys.begin(), ys.end(), 0.0) / n;
  double sxy = 0.0, sxx = 0.0;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    sxy += (xs[k] - mx) * (ys[k] - my);
    sxx += (xs[k] - mx) * (xs[k] - mx);
  }
  const double scaleLength = -sxx / sxy;
  RecordProperty("disk_scale_length", std::to_string(scaleLength));
  EXPECT_NEAR(scaleLength, 1.0, 0.05);

  // sech²(z/z_0): the median |z| is z_0 atanh(½) = 0.549 z_0.
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (isDisk(p, i)) zs.push_back(std::fabs(p.posMass[i].z));
  }
  std::nth_element(zs.begin(), zs.begin() + zs.size() / 2, zs.end());
  EXPECT_NEAR(zs[zs.size() / 2] / (0.1 * std::atanh(0.5)), 1.0, 0.05);
}

/// Midplane circular speed² from direct summation: massless probes on a ring of radius R,
/// v_c² = −R ⟨a · R̂⟩ averaged around it.
double measuredCircularSpeed2(const Particles& galaxy, double R) {
  Particles p = galaxy;
  constexpr std::size_t kProbes = 64;
  const std::size_t n = p.size();
  p.resize(n + kProbes);
  std::vector<std::uint32_t> targets;
  for (std::size_t k = 0; k < kProbes; ++k) {
    const double phi = 2.0 * kPi * (static_cast<double>(k) + 0.5) / kProbes;
    p.posMass[n + k] = {static_cast<float>(R * std::cos(phi)),
                        static_cast<float>(R * std::sin(phi)), 0.0f, 0.0f};
    targets.push_back(static_cast<std::uint32_t>(n + k));
  }
  const std::vector<Accel4d> acc = directSum(p, targets, 0.05);
  double sum = 0.0;
  for (std::size_t k = 0; k < kProbes; ++k) {
    const double phi = 2.0 * kPi * (static_cast<double>(k) + 0.5) / kProbes;
    sum += -R * (acc[k][0] * std::cos(phi) + acc[k][1] * std::sin(phi));
  }
  return sum / kProbes;
}

/// Disk particles with R in [r0, r1): mean v_φ, dispersion of v_R, and Σ [mass/length²].
struct AnnulusStats {
  double meanVphi = 0.0, sigmaR = 0.0, surfaceDensity = 0.0;
};
AnnulusStats annulus(const Particles& p, double r0, double r1) {
  double count = 0.0, mass = 0.0, vphi = 0.0, vr = 0.0, vr2 = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (!isDisk(p, i)) continue;
    const double x = p.posMass[i].x, y = p.posMass[i].y, R = std::hypot(x, y);
    if (R < r0 || R >= r1) continue;
    const double radial = (x * p.vel[i].x + y * p.vel[i].y) / R;
    count += 1.0;
    mass += p.posMass[i].w;
    vphi += (x * p.vel[i].y - y * p.vel[i].x) / R;
    vr += radial;
    vr2 += radial * radial;
  }
  AnnulusStats s;
  s.meanVphi = vphi / count;
  s.sigmaR = std::sqrt(vr2 / count - (vr / count) * (vr / count));
  s.surfaceDensity = mass / (kPi * (r1 * r1 - r0 * r0));
  return s;
}

TEST(Galaxy, DiskRotatesNearCircularSpeedWithRequestedToomreQ) {
  const Particles& p = diskCentredGalaxy();
  const double vc2 = measuredCircularSpeed2(p, 2.0);
  const AnnulusStats s = annulus(p, 1.8, 2.2);
  RecordProperty("vphi_over_vc_at_2Rd", std::to_string(s.meanVphi / std::sqrt(vc2)));
  EXPECT_GT(s.meanVphi, 0.0) << "the disk must rotate counter-clockwise about +z";
  // Asymmetric drift makes the mean rotation a little slower than circular.
  EXPECT_NEAR(s.meanVphi / std::sqrt(vc2), 0.95, 0.15);

  // Q = σ_R κ / (3.36 G Σ) with κ² = dv_c²/dR / R + 2 v_c²/R², all measured.
  const double lo = measuredCircularSpeed2(p, 1.6), hi = measuredCircularSpeed2(p, 2.4);
  const double kappa = std::sqrt((hi - lo) / 0.8 / 2.0 + 2.0 * vc2 / 4.0);
  const AnnulusStats wide = annulus(p, 1.6, 2.4);
  const double q = wide.sigmaR * kappa / (3.36 * wide.surfaceDensity);
  RecordProperty("toomre_q_at_2Rd", std::to_string(q));
  EXPECT_NEAR(q / GalaxyParams{}.toomreQ, 1.0, 0.3) << "Q = " << q;
}

TEST(Galaxy, VirialRatio) {
  const Particles p = makeGalaxy(12000, 99);
  const double k = kineticEnergy(p), w = potentialEnergy(p);
  const double ratio = 2.0 * k / -w;
  RecordProperty("virial_ratio", std::to_string(ratio));
  // Tighter than the [0.8, 1.2] one might accept: sampling noise at this N is ~1.5%, and a
  // Gaussian cut at the escape speed without correction already costs ~4%.
  EXPECT_GT(ratio, 0.9);
  EXPECT_LT(ratio, 1.1);
}

// ---- Merger ---------------------------------------------------------------------------------

TEST(Merger, TwoGalaxiesOnAParabolicOrbit) {
  MergerParams mp;
  mp.massRatio = 0.5;
  const Particles p = makeMerger(20000, 3, mp);
  ASSERT_EQ(p.size(), 20000u);
  const Moments all = moments(p);
  EXPECT_LT(norm(all.pos), 1e-4);
  EXPECT_LT(norm(all.vel), 1e-5);

  const Moments g0 = moments(p, [&](std::size_t i) { return tagGalaxy(p.tag[i]) == 0; });
  const Moments g1 = moments(p, [&](std::size_t i) { return tagGalaxy(p.tag[i]) == 1; });
  const GalaxyParams& g = mp.galaxy;
  const double m1 = g.diskMass + g.bulgeMass + g.haloMass;
  EXPECT_NEAR(g0.mass, m1, 1e-3);
  EXPECT_NEAR(g1.mass / g0.mass, mp.massRatio, 1e-4);
  // Particle counts follow the mass share, so particle masses agree.
  const std::size_t n1 = static_cast<std::size_t>(
      std::count_if(p.tag.begin(), p.tag.end(), [](std::uint8_t t) { return tagGalaxy(t) == 1; }));
  EXPECT_NEAR(static_cast<double>(n1) / 20000.0, 1.0 / 3.0, 1e-3);

  const Vec3d r{g1.pos.x - g0.pos.x, g1.pos.y - g0.pos.y, g1.pos.z - g0.pos.z};
  const Vec3d v{g1.vel.x - g0.vel.x, g1.vel.y - g0.vel.y, g1.vel.z - g0.vel.z};
  const double d = norm(r), speed = norm(v), mass = g0.mass + g1.mass;
  RecordProperty("separation", std::to_string(d));
  RecordProperty("mass_ratio", std::to_string(g1.mass / g0.mass));
  EXPECT_NEAR(d, mp.separation, 1e-3 * mp.separation);
  // Parabolic: specific orbital energy ½v² − GM/d = 0; approaching: r · v < 0.
  const double energy = (0.5 * speed * speed - mass / d) / (mass / d);
  RecordProperty("relative_orbital_energy", std::to_string(energy));
  EXPECT_NEAR(energy, 0.0, 1e-3);
  EXPECT_LT(r.x * v.x + r.y * v.y + r.z * v.z, 0.0);
  // Pericentre from the angular momentum: h² = 2GM r_p for e = 1.
  const Vec3d h{r.y * v.z - r.z * v.y, r.z * v.x - r.x * v.z, r.x * v.y - r.y * v.x};
  RecordProperty("pericentre", std::to_string(norm(h) * norm(h) / (2.0 * mass)));
  EXPECT_NEAR(norm(h) * norm(h) / (2.0 * mass), mp.pericentre, 1e-2 * mp.pericentre);

  // Each disk's spin axis is tilted from the orbital axis (+z) by its inclination.
  for (unsigned gal : {0u, 1u}) {
    const Moments c = gal == 0 ? g0 : g1;
    Vec3d l;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (tagGalaxy(p.tag[i]) != gal || !isDisk(p, i)) continue;
      const Vec3d x{p.posMass[i].x - c.pos.x, p.posMass[i].y - c.pos.y, p.posMass[i].z - c.pos.z};
      const Vec3d u{p.vel[i].x - c.vel.x, p.vel[i].y - c.vel.y, p.vel[i].z - c.vel.z};
      l = {l.x + x.y * u.z - x.z * u.y, l.y + x.z * u.x - x.x * u.z, l.z + x.x * u.y - x.y * u.x};
    }
    const double inclination = gal == 0 ? mp.inclination1 : mp.inclination2;
    RecordProperty("spin_cos_inclination_" + std::to_string(gal), std::to_string(l.z / norm(l)));
    EXPECT_NEAR(l.z / norm(l), std::cos(inclination * kPi / 180.0), 0.02) << "galaxy " << gal;
  }
}

TEST(Merger, GalaxyPairOnABoundOrbitWithATiltNode) {
  GalaxyParams small;
  small.haloMass = 2.0;
  const PairMember a{4000, GalaxyParams{}, 0.0, 0.0};
  const PairMember b{2000, small, 50.0, 90.0};
  const OrbitParams orbit{3.0, 0.6, 8.0};  // apocentre 3 · 1.6 / 0.4 = 12
  const Particles p = makeGalaxyPair(a, b, orbit, 5);
  ASSERT_EQ(p.size(), 6000u);
  const Moments g0 = moments(p, [&](std::size_t i) { return tagGalaxy(p.tag[i]) == 0; });
  const Moments g1 = moments(p, [&](std::size_t i) { return tagGalaxy(p.tag[i]) == 1; });
  const Vec3d r{g1.pos.x - g0.pos.x, g1.pos.y - g0.pos.y, g1.pos.z - g0.pos.z};
  const Vec3d v{g1.vel.x - g0.vel.x, g1.vel.y - g0.vel.y, g1.vel.z - g0.vel.z};
  const double d = norm(r), mass = g0.mass + g1.mass;
  EXPECT_NEAR(d, orbit.separation, 1e-3 * orbit.separation);
  // Kepler: ½v² − GM/d = −GM(1 − e)/(2 r_p), h² = GM r_p (1 + e); approaching.
  const double energy = 0.5 * norm(v) * norm(v) - mass / d;
  EXPECT_NEAR(energy / (mass / d), -(1.0 - orbit.eccentricity) * d / (2.0 * orbit.pericentre),
              2e-3);
  const Vec3d h{r.y * v.z - r.z * v.y, r.z * v.x - r.x * v.z, r.x * v.y - r.y * v.x};
  EXPECT_NEAR(norm(h) * norm(h) / (mass * (1.0 + orbit.eccentricity)), orbit.pericentre,
              1e-2 * orbit.pericentre);
  EXPECT_LT(r.x * v.x + r.y * v.y + r.z * v.z, 0.0);
  // The secondary's spin axis: +z tilted by 50° about the axis at azimuth 90° (the y axis),
  // i.e. (sin 50°, 0, cos 50°).
  Vec3d l;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (tagGalaxy(p.tag[i]) != 1 || !isDisk(p, i)) continue;
    const Vec3d x{p.posMass[i].x - g1.pos.x, p.posMass[i].y - g1.pos.y, p.posMass[i].z - g1.pos.z};
    const Vec3d u{p.vel[i].x - g1.vel.x, p.vel[i].y - g1.vel.y, p.vel[i].z - g1.vel.z};
    l = {l.x + x.y * u.z - x.z * u.y, l.y + x.z * u.x - x.x * u.z, l.z + x.x * u.y - x.y * u.x};
  }
  const double incl = 50.0 * kPi / 180.0;
  EXPECT_NEAR(l.x / norm(l), std::sin(incl), 0.02);
  EXPECT_NEAR(l.y / norm(l), 0.0, 0.02);
  EXPECT_NEAR(l.z / norm(l), std::cos(incl), 0.02);

  EXPECT_THROW(makeGalaxyPair(a, b, {3.0, 0.6, 12.5}, 5), InvalidParameter);  // beyond apocentre
  EXPECT_THROW(makeGalaxyPair(a, {2, small, 0.0, 0.0}, orbit, 5), InvalidParameter);
}

TEST(Merger, RejectsBadParameters) {
  MergerParams m;
  EXPECT_THROW(makeMerger(5, 1, m), InvalidParameter);
  m.massRatio = 0.0;
  EXPECT_THROW(makeMerger(100, 1, m), InvalidParameter);
  m = {};
  m.separation = 1.0;  // inside the pericentre
  EXPECT_THROW(makeMerger(100, 1, m), InvalidParameter);
}

// ---- Scenarios ------------------------------------------------------------------------------

TEST(Scenarios, RegistryHasTheOriginalFourFirstThenTheFiles) {
  std::vector<std::string> names;
  for (const ScenarioInfo& s : scenarios()) {
    names.push_back(s.name);
    EXPECT_FALSE(s.description.empty());
    EXPECT_GT(s.softening, 0.0f);
    EXPECT_GT(s.dt, 0.0f);
    EXPECT_EQ(&scenarioInfo(s.name), &s);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"plummer", "hernquist", "galaxy", "merger", "cold-collapse",
                                      "milky-way", "major-merger", "minor-merger", "mw-andromeda",
                                      "teaching", "nfw", "m31", "uniform"}));
  EXPECT_FLOAT_EQ(scenarioInfo("plummer").softening, 0.05f);
  EXPECT_FLOAT_EQ(scenarioInfo("plummer").dt, 1.0f / 128.0f);
}

TEST(Scenarios, RejectsUnknownNamesAndZeroParticles) {
  try {
    makeScenario("x", 100, 1);
    FAIL() << "an unknown name must throw";
  } catch (const InvalidParameter& e) {
    EXPECT_STREQ(e.what(),
                 "unknown scenario 'x' (known: plummer, hernquist, galaxy, merger, cold-collapse, "
                 "milky-way, major-merger, minor-merger, mw-andromeda, teaching, nfw, m31, "
                 "uniform)");
  }
  EXPECT_THROW(scenarioInfo("Plummer"), InvalidParameter);
  EXPECT_THROW(makeScenario("plummer", 0, 1), InvalidParameter);
  EXPECT_THROW(makeScenario("merger", 0, 1), InvalidParameter);
}

}  // namespace
}  // namespace bhviz::sim
