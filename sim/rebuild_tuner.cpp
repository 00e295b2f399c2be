#include "sim/rebuild_tuner.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

namespace bhviz::sim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Least squares of at most two columns through the origin, on the normal equations with each
/// column scaled to unit size first (ages ~0.01 and targets ~10^6 side by side). `row(i, out)`
/// writes sample i's columns. No allocation: the tuner fits after every refit.
template <typename Row>
bool leastSquares(std::size_t n, int k, const Row& row, const std::vector<AgingSample>& samples,
                  double beta[2], double* sse) {
  double scale[2] = {0.0, 0.0}, x[2];
  for (std::size_t i = 0; i < n; ++i) {
    row(i, x);
    for (int j = 0; j < k; ++j) scale[j] = std::max(scale[j], std::fabs(x[j]));
  }
  for (int j = 0; j < k; ++j) {
    if (!(scale[j] > 0.0)) return false;
  }
  double m[2][3] = {};
  for (std::size_t i = 0; i < n; ++i) {
    row(i, x);
    for (int j = 0; j < k; ++j) {
      const double xj = x[j] / scale[j];
      for (int l = 0; l < k; ++l) m[j][l] += xj * x[l] / scale[l];
      m[j][k] += xj * samples[i].extraMs;
    }
  }
  if (k == 1) {
    if (!(m[0][0] > 0.0)) return false;
    beta[0] = m[0][1] / m[0][0] / scale[0];
  } else {
    const double det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    if (!(std::fabs(det) > 1e-12 * m[0][0] * m[1][1])) return false;  // dependent columns
    beta[0] = (m[0][2] * m[1][1] - m[0][1] * m[1][2]) / det / scale[0];
    beta[1] = (m[0][0] * m[1][2] - m[1][0] * m[0][2]) / det / scale[1];
  }
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    row(i, x);
    double f = 0.0;
    for (int j = 0; j < k; ++j) f += beta[j] * x[j];
    s += (samples[i].extraMs - f) * (samples[i].extraMs - f);
  }
  *sse = s;
  return true;
}

/// The model's terms: x (linear), x^c (power law), x and x² (parabolic).
int ageTerms(AgingModel model, double x, double exponent, double out[2]) {
  switch (model) {
    case AgingModel::Linear:
      out[0] = x;
      return 1;
    case AgingModel::PowerLaw:
      out[0] = std::pow(x, exponent);
      return 1;
    case AgingModel::Parabolic:
      out[0] = x;
      out[1] = x * x;
      return 2;
    case AgingModel::None:
      break;
  }
  return 0;
}

/// Degrees of freedom a curved model (power law, parabola) needs left before it is fitted: with
/// fewer, timing noise alone fits a steep curve (seen on a busy CPU: exponents of 5 from four
/// samples).
constexpr int kCurveDegreesOfFreedom = 3;

/// One model with a given power-law exponent: columns T·terms(x), through the origin (a fresh
/// tree has no extra time).
AgingFit fitWith(AgingModel model, double exponent, const std::vector<AgingSample>& samples) {
  double terms[2];
  const int k = ageTerms(model, 1.0, exponent, terms);
  const int fitted = k + (model == AgingModel::PowerLaw ? 1 : 0);
  const int needed = model == AgingModel::Linear ? 1 : fitted + kCurveDegreesOfFreedom;
  if (k == 0 || static_cast<int>(samples.size()) < needed) return {};
  const auto row = [&](std::size_t i, double x[2]) {
    ageTerms(model, samples[i].age, exponent, x);
    for (int t = 0; t < k; ++t) x[t] *= samples[i].targets;
  };
  double beta[2] = {0.0, 0.0}, sse = 0.0;
  if (!leastSquares(samples.size(), k, row, samples, beta, &sse)) return {};
  AgingFit f;
  f.model = model;
  f.b = beta[0];
  f.c = model == AgingModel::PowerLaw ? exponent : model == AgingModel::Parabolic ? beta[1] : 0.0;
  const int dof = static_cast<int>(samples.size()) - fitted;
  f.reducedChi2 = dof > 0 ? sse / dof : kInf;
  return f;
}

/// The power law: its exponent from a least-squares line through (log x, log(extra / T)) of the
/// samples whose extra time is positive (weighted by their targets), kept within [0.25, 4];
/// then b by least squares as the other models. Two passes: the tuner fits after every refit.
AgingFit fitPowerLaw(const std::vector<AgingSample>& samples) {
  double w = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0;
  for (const AgingSample& s : samples) {
    if (!(s.extraMs > 0.0 && s.age > 0.0 && s.targets > 0.0)) continue;
    const double x = std::log(s.age), y = std::log(s.extraMs / s.targets);
    w += s.targets;
    sx += s.targets * x;
    sy += s.targets * y;
    sxx += s.targets * x * x;
    sxy += s.targets * x * y;
  }
  const double var = w > 0.0 ? sxx / w - (sx / w) * (sx / w) : 0.0;
  if (!(var > 1e-12)) return {};  // one age: no exponent to tell
  const double slope = (sxy / w - (sx / w) * (sy / w)) / var;
  return fitWith(AgingModel::PowerLaw, std::clamp(slope, 0.25, 4.0), samples);
}

}  // namespace

std::string_view toString(AgingModel m) {
  switch (m) {
    case AgingModel::Linear:
      return "linear";
    case AgingModel::PowerLaw:
      return "power-law";
    case AgingModel::Parabolic:
      return "parabolic";
    case AgingModel::None:
      break;
  }
  return "none";
}

std::string_view toString(TreeChoice c) {
  switch (c) {
    case TreeChoice::Refit:
      return "refit";
    case TreeChoice::AroundTargets:
      return "around-targets";
    case TreeChoice::Rebuild:
      break;
  }
  return "rebuild";
}

double AgingFit::growth(double x) const {
  switch (model) {
    case AgingModel::Linear:
      return b * x;
    case AgingModel::PowerLaw:
      return b * std::pow(x, c);
    case AgingModel::Parabolic:
      return b * x + c * x * x;
    case AgingModel::None:
      break;
  }
  return 0.0;
}

double AgingFit::excess(double x) const {
  switch (model) {
    case AgingModel::Linear:
      return 0.5 * b * x * x;
    case AgingModel::PowerLaw:
      return b * std::pow(x, c + 1.0) * c / (c + 1.0);
    case AgingModel::Parabolic:
      return 0.5 * b * x * x + 2.0 / 3.0 * c * x * x * x;
    case AgingModel::None:
      break;
  }
  return 0.0;
}

AgingFit fitAging(AgingModel model, const std::vector<AgingSample>& samples) {
  if (model == AgingModel::PowerLaw) return fitPowerLaw(samples);
  if (model == AgingModel::None) return {};
  return fitWith(model, 0.0, samples);
}

AgingFit fitBestAging(const std::vector<AgingSample>& samples) {
  AgingFit best;
  for (AgingModel m : {AgingModel::Linear, AgingModel::PowerLaw, AgingModel::Parabolic}) {
    const AgingFit f = fitAging(m, samples);
    if (f.model != AgingModel::None && f.reducedChi2 < best.reducedChi2) best = f;
  }
  // Too few samples for any degree of freedom: the line through them, if there are any.
  if (best.model == AgingModel::None) best = fitAging(AgingModel::Linear, samples);
  return best;
}

namespace {

/// The cheapest plan of rebuilds over the evaluations ahead, `ages[k]` the age of the tree where
/// evaluation k walks it if nothing is rebuilt before: each one not rebuilt costs
/// targets[k]·g(its age), or
/// around[k] where that is less (a rebuild around its targets, the tree aging on), each rebuild
/// `rebuildMs`, and nothing past the horizon. A rebuild around evaluation j's targets may also be
/// taken as a reset for the evaluations after it with no more targets (a block step's deeper
/// substeps, whose targets lie in its cover), so long as the next one with more is itself a
/// reset (rebuilt, or rebuilt around its targets). cost[j]: the least cost of evaluations j…
/// given a reset at j; the next reset at m costs evaluations j+1…m−1, then cost[m]. Returns what
/// the plan does with the first evaluation.
TreeChoice cheapestPlan(const AgingFit& fit, double rebuildMs, const std::vector<double>& ages,
                        double spacing, const std::vector<double>& targets,
                        const std::vector<double>& around) {
  const std::size_t h = targets.size();
  std::vector<double> fresh(h), aged(h), cost(h + 1, 0.0);
  // A fit may dip below 0 in its noise: a refit never walks faster than a fresh tree.
  for (std::size_t d = 0; d < h; ++d) {
    fresh[d] = std::max(0.0, fit.growth(double(d) * spacing));  // d after a rebuild
    aged[d] = std::max(0.0, fit.growth(ages[d]));               // d after now, without one
  }
  // What evaluation k costs when it is not reset and its age's growth is g.
  const auto kept = [&](std::size_t k, double g) {
    const double refit = targets[k] * g;
    return k < around.size() ? std::min(refit, around[k]) : refit;
  };
  // The least cost of evaluations `from`… when evaluation k's growth is g[k − base] and the next
  // reset falls at `last` at the latest.
  const auto cheapest = [&](std::size_t from, const std::vector<double>& g, std::size_t base,
                            std::size_t last) {
    double best = kInf, aging = 0.0;
    for (std::size_t m = from; m <= last && aging < best; ++m) {  // cost[m] ≥ 0: aging bounds
      best = std::min(best, aging + cost[m]);
      if (m < h) aging += kept(m, g[m - base]);
    }
    return best;
  };
  // The first evaluation after j with more targets than j (h: none within the horizon).
  const auto nextLarger = [&](std::size_t j) {
    std::size_t m = j + 1;
    while (m < h && targets[m] <= targets[j]) ++m;
    return m;
  };
  // cost[m] ≥ 0, which the pruning in `cheapest` needs.
  rebuildMs = std::max(0.0, rebuildMs);
  const auto aroundReset = [&](std::size_t j) {
    return j < around.size() ? around[j] + cheapest(j + 1, fresh, j, nextLarger(j)) : kInf;
  };
  for (std::size_t j = h; j-- > 0;) {
    cost[j] = std::min(rebuildMs + cheapest(j + 1, fresh, j, h), aroundReset(j));
  }
  const double rebuild = rebuildMs + cheapest(1, fresh, 0, h);
  const double reset = aroundReset(0);
  const double notReset = kept(0, aged[0]) + cheapest(1, aged, 0, h);
  // A tie (to rounding) does not rebuild: where rebuilding now or at the next evaluation cost the
  // same, a tie going to the rebuild would be met again at the next one, and the plan never
  // followed. The same between a refit and a rebuild around the targets.
  const double tie = 1.0 - 1e-9;
  if (rebuild < std::min(reset, notReset) * tie) return TreeChoice::Rebuild;
  if (reset < notReset * tie) return TreeChoice::AroundTargets;
  const bool capped = !around.empty() && around[0] < targets[0] * aged[0] * tie;
  return capped ? TreeChoice::AroundTargets : TreeChoice::Refit;
}

}  // namespace

TreeChoice RebuildTuner::choose(double age, int kind, Outlook ahead) const {
  const RebuildTunerState& s = m_state;
  if (s.rebuilds == 0 || s.evaluations > kMaxRefits) return TreeChoice::Rebuild;
  // Nothing to hold a refit against: rebuild, which measures the kind's fresh walk.
  if (m_fresh[kindIndex(kind)].msPerTarget < 0.0) return TreeChoice::Rebuild;
  double fewest = kInf, mean = 0.0;
  for (const auto& e : m_recent) {
    fewest = std::min(fewest, e.second);
    mean += e.second / double(m_recent.size());
  }
  std::vector<double>& targets = ahead.targets;
  targets.resize(std::clamp<std::size_t>(targets.size(), 1, kHorizon));
  for (double& t : targets) t = t > 0.0 ? t : mean;
  // No fit, or an old one: refit once to measure the aging, where it costs least (among the
  // kinds of evaluation lately, one with the fewest targets).
  if (probing()) {
    return targets[0] > 1.5 * fewest ? TreeChoice::Rebuild : TreeChoice::Refit;
  }
  std::vector<double>& around = ahead.aroundMs;
  if (!around.empty()) around.resize(targets.size(), -1.0);
  for (double& a : around) a = a >= 0.0 ? a : kAroundGuess * m_rebuildMs;
  // Each evaluation's age without a rebuild: as told, else the first's plus the spacing.
  std::vector<double>& ages = ahead.ages;
  for (std::size_t k = ages.size(); k < targets.size(); ++k) {
    ages.push_back(k == 0 ? age : ages[k - 1] + ahead.spacing);
  }
  ages.resize(targets.size());
  ages[0] = age;
  return cheapestPlan(s.fit, m_rebuildMs, ages, ahead.spacing, targets, around);
}

void RebuildTuner::resetProbeWait() {
  m_probeAfter = kProbeAfter;
  m_state.probeAfter = m_probeAfter;
}

void RebuildTuner::rewind(double time) {
  while (!m_recent.empty() && m_recent.back().first > time) m_recent.pop_back();
}

void RebuildTuner::addSample(const AgingSample& sample) {
  m_samples.push_back(sample);
  if (m_samples.size() > kWindow) m_samples.pop_front();
  m_samplesAge = 0;
  m_state.fit = fitBestAging(std::vector<AgingSample>(m_samples.begin(), m_samples.end()));
  m_state.samples = static_cast<int>(m_samples.size());
}

void RebuildTuner::waitAfterProbe(double costMs) {
  // The next probe waits until the rebuilds since cost kProbeShare⁻¹ times this one.
  const double rebuilds = m_rebuildMs > 0.0 ? costMs / (kProbeShare * m_rebuildMs) : 0.0;
  m_probeAfter = static_cast<int>(
      std::clamp(std::ceil(rebuilds), double(kProbeAfter), double(kMaxProbeAfter)));
  m_state.probeAfter = m_probeAfter;
}

void RebuildTuner::recordProbe(double age, double targets, double extraMs, double costMs) {
  addSample({age, targets, extraMs});
  waitAfterProbe(costMs);
  ++m_state.sampledProbes;
}

void RebuildTuner::record(TreeChoice made, int kind, double time, double age, double targets,
                          double walkMs, double rebuildMs) {
  RebuildTunerState& s = m_state;
  Fresh& fresh = m_fresh[kindIndex(kind)];
  const bool rebuilt = made == TreeChoice::Rebuild;
  s.last = made;
  ++(rebuilt ? s.rebuilds : made == TreeChoice::AroundTargets ? s.aroundTargets : s.refits);
  s.evaluations = rebuilt ? 1 : s.evaluations + 1;
  if (walkMs < 0.0) return;  // not measured: counted only
  const bool known = fresh.msPerTarget >= 0.0 && targets > 0.0;
  if (rebuilt) age = 0.0;
  if (made == TreeChoice::Refit) {
    const bool probe = probing();
    s.predictedWalkMs =
        known ? targets * (fresh.msPerTarget +
                           (s.fit.model != AgingModel::None ? s.fit.growth(age) : 0.0))
              : walkMs;
    if (known) {
      const double extraMs = walkMs - targets * fresh.msPerTarget;
      addSample({age, targets, extraMs});
      if (probe) waitAfterProbe(extraMs);  // a refit probe costs its walk's growth
    }
  } else {
    // A rebuild around the targets walks as a rebuilt tree does where the cover holds what the
    // targets' walk opens (M31 at 2^23 on an H200: 1.13 ms around the centre's targets, 1.16
    // rebuilt): the kind's fresh walk too. A kind rebuilt around its targets every time would
    // otherwise keep the fresh walk of its first rebuild, often a cold one (1.85 ms there), and
    // take its aging for less than it is. A walk slower than that by more than noise is not a
    // fresh one (the tree outside the cover aged): its excess is the rebuild around the targets'
    // own cost.
    const double freshBefore = fresh.msPerTarget;
    s.predictedWalkMs = known ? targets * freshBefore : walkMs;
    const double now = targets > 0.0 ? walkMs / targets : -1.0;
    const bool likeFresh = !known || now <= kAroundLikeFresh * freshBefore;
    if (now >= 0.0 && (rebuilt || likeFresh)) {
      fresh.msPerTarget = freshBefore < 0.0 ? now : 0.5 * (freshBefore + now);
    }
    if (rebuilt) {
      // Smoothed: one measurement carries its noise.
      m_rebuildMs = m_rebuildMs <= 0.0 ? rebuildMs : 0.5 * (m_rebuildMs + rebuildMs);
      ++m_samplesAge;
    } else {
      s.aroundMs = rebuildMs + (likeFresh ? 0.0 : targets * (now - freshBefore));
    }
  }
  s.measuredWalkMs = walkMs;
  s.age = age;
  s.rebuildMs = m_rebuildMs;
  // W over the last evaluations.
  constexpr std::size_t kRecent = 64;
  m_recent.emplace_back(time, targets);
  if (m_recent.size() > kRecent) m_recent.pop_front();
  double later = 0.0;
  for (std::size_t i = 1; i < m_recent.size(); ++i) later += m_recent[i].second;
  const double span = m_recent.back().first - m_recent.front().first;
  s.targetsPerTime = span > 0.0 ? later / span : 0.0;
  // The best interval: where W·excess(A) reaches R (bisection; excess grows with A while the
  // fitted aging does).
  s.bestInterval = kInf;
  const auto reaches = [&](double x) { return s.targetsPerTime * s.fit.excess(x) >= m_rebuildMs; };
  if (s.fit.model != AgingModel::None && s.targetsPerTime > 0.0) {
    double hi = std::max(age, 1e-6);
    for (int k = 0; k < 80 && !reaches(hi); ++k) hi *= 2.0;
    if (reaches(hi)) {
      double lo = 0.0;
      for (int k = 0; k < 80; ++k) {
        const double mid = 0.5 * (lo + hi);
        (reaches(mid) ? hi : lo) = mid;
      }
      s.bestInterval = hi;
    }
  }
}

}  // namespace bhviz::sim
