// The NFW profile's tables and Eddington's f(E), numerically (sim/ic/eddington.h).

#include "sim/ic/eddington.h"

#include <algorithm>
#include <cmath>

namespace bhviz::sim::detail {

namespace {

constexpr int kPerDecade = 128;
/// 3-point Gauss–Legendre on [−1, 1]: exact for quintics, so each interval's integral in ln r
/// is good to ~1e-12 at 128 nodes per decade.
constexpr double kGaussNode = 0.7745966692414834;
constexpr double kGaussWeights[3] = {5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0};
/// Speeds scanned per node for the rejection bound, and the bound's margin over the larger of
/// the two nodes around a radius (the density of speeds changes by ~2% between nodes).
constexpr int kSpeedScan = 512;
constexpr double kBoundMargin = 1.25;
constexpr int kMaxAttempts = 1 << 20;

/// ∫ g(r) dln r over [a, b] by 3-point Gauss–Legendre in ln r.
template <typename G>
double integrateLn(double a, double b, G&& g) {
  const double la = std::log(a), lb = std::log(b);
  const double mid = 0.5 * (la + lb), half = 0.5 * (lb - la);
  const double t[3] = {-kGaussNode, 0.0, kGaussNode};
  double sum = 0.0;
  for (int i = 0; i < 3; ++i) sum += kGaussWeights[i] * g(std::exp(mid + half * t[i]));
  return half * sum;
}

}  // namespace

// ---- NFW -------------------------------------------------------------------------------------

double NfwShape::density(double r) const {
  if (r >= outerRadius()) return 0.0;
  const double x = r / scale;
  return 0.5 * std::erfc((r - cutoff) / taper) / (x * (1.0 + x) * (1.0 + x));
}

double NfwShape::slope(double r) const {
  if (r >= outerRadius()) return 0.0;
  const double x = r / scale;
  const double nfw = 1.0 / (x * (1.0 + x) * (1.0 + x));
  const double nfwSlope = -nfw * (1.0 + 3.0 * x) / (x * (1.0 + x)) / scale;
  const double u = (r - cutoff) / taper;
  const double t = 0.5 * std::erfc(u);
  const double tSlope = -std::exp(-u * u) / (std::sqrt(kPi) * taper);
  return nfwSlope * t + nfw * tSlope;
}

NfwTable::NfwTable(const NfwShape& shape, double mass, double rMin)
    : m_shape(shape), m_mass(mass), m_enclosed(rMin, shape.outerRadius(), kPerDecade) {
  // In units of ρ_s: the untapered NFW mass inside the first node (the taper is 1 there), then
  // each interval's 4π ∫ ρ r³ dln r.
  const double x0 = rMin / shape.scale;
  const double s3 = shape.scale * shape.scale * shape.scale;
  m_enclosed[0] = 4.0 * kPi * s3 * (std::log1p(x0) - x0 / (1.0 + x0));
  for (std::size_t k = 1; k < m_enclosed.size(); ++k) {
    m_enclosed[k] = m_enclosed[k - 1] +
                    integrateLn(m_enclosed.radius(k - 1), m_enclosed.radius(k),
                                [&](double r) { return 4.0 * kPi * r * r * r * shape.density(r); });
  }
  m_rhoS = mass / m_enclosed[m_enclosed.size() - 1];
  // Stored as ln M: interpolated linearly in ln r, a power law between nodes (exact in the cusp).
  for (std::size_t k = 0; k < m_enclosed.size(); ++k) {
    m_enclosed[k] = std::log(m_rhoS * m_enclosed[k]);
  }
}

double NfwTable::density(double r) const { return m_rhoS * m_shape.density(r); }

double NfwTable::densitySlope(double r) const { return m_rhoS * m_shape.slope(r); }

double NfwTable::enclosed(double r) const {
  const double r0 = innerRadius();
  if (r <= r0) return std::exp(m_enclosed[0]) * (r / r0) * (r / r0);
  if (r >= outerRadius()) return m_mass;
  return std::exp(m_enclosed(r));
}

double NfwTable::radius(double u) const {
  const double lnTarget = std::log(u * m_mass);
  const double r0 = innerRadius();
  if (lnTarget <= m_enclosed[0]) return r0 * std::exp(0.5 * (lnTarget - m_enclosed[0]));
  std::size_t lo = 0, hi = m_enclosed.size() - 1;
  if (lnTarget >= m_enclosed[hi]) return m_enclosed.radius(hi);
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    (m_enclosed[mid] <= lnTarget ? lo : hi) = mid;
  }
  const double f = (lnTarget - m_enclosed[lo]) / (m_enclosed[hi] - m_enclosed[lo]);
  return m_enclosed.radius(lo) * std::exp(f * m_enclosed.lnStep());
}

// ---- Eddington -------------------------------------------------------------------------------

EddingtonDf::EddingtonDf(const std::function<double(double)>& densitySlope,
                         const std::function<double(double)>& totalEnclosed, double rMin,
                         double rMax)
    : m_psi(rMin, rMax, kPerDecade) {
  const std::size_t n = m_psi.size();
  const std::size_t last = n - 1;
  // Ψ relative to the edge: ∫_r^rMax M(<r')/r'² dr'.
  m_psi[last] = 0.0;
  for (std::size_t k = last; k-- > 0;) {
    m_psi[k] = m_psi[k + 1] + integrateLn(m_psi.radius(k), m_psi.radius(k + 1),
                                          [&](double r) { return totalEnclosed(r) / r; });
  }
  // dρ/dΨ = (dρ/dr) / (dΨ/dr), dΨ/dr = −M(<r)/r².
  std::vector<double> g(n);
  for (std::size_t k = 0; k < n; ++k) {
    const double r = m_psi.radius(k);
    g[k] = -densitySlope(r) * r * r / totalEnclosed(r);
  }
  // With dρ/dΨ linear between nodes, interval k contributes
  // (g_k − g_{k+1})/(Ψ_k − Ψ_{k+1}) · 2(√(ε − Ψ_{k+1}) − √(ε − Ψ_k)), written without the
  // cancelling difference of square roots.
  const double norm = 1.0 / (std::sqrt(8.0) * kPi * kPi);
  m_eps.resize(n);
  m_f.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    const double eps = m_psi[j];
    double sum = eps > 0.0 ? g[last] / std::sqrt(eps) : 0.0;
    for (std::size_t k = j; k < last; ++k) {
      sum += 2.0 * (g[k] - g[k + 1]) / (std::sqrt(eps - m_psi[k + 1]) + std::sqrt(eps - m_psi[k]));
    }
    m_eps[last - j] = eps;
    m_f[last - j] = eps > 0.0 ? std::fmax(0.0, norm * sum) : 0.0;
  }
  m_peak.resize(n);
  for (std::size_t k = 0; k < n; ++k) m_peak[k] = peakSpeedDensity(m_psi[k]);
}

double EddingtonDf::distribution(double eps) const {
  if (!(eps > 0.0)) return 0.0;
  if (eps >= m_eps.back()) return m_f.back();
  const std::size_t i =
      static_cast<std::size_t>(std::upper_bound(m_eps.begin(), m_eps.end(), eps) - m_eps.begin()) -
      1;
  const double e0 = m_eps[i], e1 = m_eps[i + 1], f0 = m_f[i], f1 = m_f[i + 1];
  if (f0 > 0.0 && f1 > 0.0 && e0 > 0.0) {  // a power law between nodes: f is steep in the cusp
    const double t = std::log(eps / e0) / std::log(e1 / e0);
    return f0 * std::exp(t * std::log(f1 / f0));
  }
  return f0 + (f1 - f0) * (eps - e0) / (e1 - e0);
}

double EddingtonDf::peakSpeedDensity(double psi) const {
  if (!(psi > 0.0)) return 0.0;
  const double vMax = std::sqrt(2.0 * psi);
  double peak = 0.0;
  for (int i = 1; i <= kSpeedScan; ++i) {
    peak = std::fmax(peak, speedDensity(vMax * i / kSpeedScan, psi));
  }
  return peak;
}

double EddingtonDf::speed(Rng& rng, double r) const {
  const double psi = m_psi(r);
  if (!(psi > 0.0)) return 0.0;
  double bound;
  if (r < m_psi.radius(0)) {
    bound = kBoundMargin * peakSpeedDensity(psi);
  } else {
    const std::size_t k = m_psi.floorIndex(r);
    bound = kBoundMargin * std::fmax(m_peak[k], m_peak[std::min(k + 1, m_peak.size() - 1)]);
  }
  const double vMax = std::sqrt(2.0 * psi);
  if (!(bound > 0.0)) return 0.0;
  double v = 0.0;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    v = vMax * rng.uniform();
    if (bound * rng.uniform() < speedDensity(v, psi)) return v;
  }
  return v;  // unreachable for a bound above the density: ~2 draws per speed
}

}  // namespace bhviz::sim::detail
