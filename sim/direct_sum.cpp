#include "sim/direct_sum.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "sim/rng.h"

namespace bhviz::sim {

std::vector<Accel4d> directSum(const Particles& p, const std::vector<std::uint32_t>& targets,
                               double softening) {
  const double eps2 = softening * softening;
  const std::size_t n = p.size();
  std::vector<Accel4d> out(targets.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (std::size_t t = 0; t < targets.size(); ++t) {
    const std::size_t i = targets[t];
    const double xi = p.posMass[i].x, yi = p.posMass[i].y, zi = p.posMass[i].z;
    double ax = 0.0, ay = 0.0, az = 0.0, pot = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      const double dx = double(p.posMass[j].x) - xi;
      const double dy = double(p.posMass[j].y) - yi;
      const double dz = double(p.posMass[j].z) - zi;
      const double r2 = dx * dx + dy * dy + dz * dz + eps2;
      const double rinv = 1.0 / std::sqrt(r2);
      const double mrinv = double(p.posMass[j].w) * rinv;
      const double mrinv3 = mrinv * rinv * rinv;
      ax += mrinv3 * dx;
      ay += mrinv3 * dy;
      az += mrinv3 * dz;
      pot -= mrinv;
    }
    out[t] = {ax, ay, az, pot};
  }
  return out;
}

std::vector<Accel4d> directSumAll(const Particles& p, double softening) {
  std::vector<std::uint32_t> all(p.size());
  std::iota(all.begin(), all.end(), 0u);
  return directSum(p, all, softening);
}

std::vector<double> relativeErrors(const Particles& p, const std::vector<std::uint32_t>& targets,
                                   const std::vector<Accel4d>& ref) {
  std::vector<double> rel(targets.size());
  for (std::size_t t = 0; t < targets.size(); ++t) {
    const Vec4& a = p.accPot[targets[t]];
    const double dx = a.x - ref[t][0], dy = a.y - ref[t][1], dz = a.z - ref[t][2];
    const double norm =
        std::sqrt(ref[t][0] * ref[t][0] + ref[t][1] * ref[t][1] + ref[t][2] * ref[t][2]);
    rel[t] = std::sqrt(dx * dx + dy * dy + dz * dz) / norm;
  }
  return rel;
}

ErrorSummary summarizeErrors(std::vector<double> errors) {
  ErrorSummary e;
  if (errors.empty()) return e;
  std::sort(errors.begin(), errors.end());
  auto quantile = [&](double q) {
    const std::size_t k =
        std::min(errors.size() - 1, static_cast<std::size_t>(q * double(errors.size() - 1) + 0.5));
    return errors[k];
  };
  e.median = quantile(0.5);
  e.p99 = quantile(0.99);
  e.max = errors.back();
  return e;
}

ForceError forceError(const Particles& p, const std::vector<std::uint32_t>& targets,
                      const std::vector<Accel4d>& ref) {
  return summarizeErrors(relativeErrors(p, targets, ref));
}

std::vector<double> positionErrors(const Particles& p, const Particles& ref, double scale) {
  if (p.size() != ref.size()) throw std::invalid_argument("positionError: sizes differ");
  std::vector<double> d(p.size());
  for (std::size_t i = 0; i < d.size(); ++i) {
    const Vec4 a = p.posMass[i], b = ref.posMass[i];
    d[i] = std::hypot(double(a.x) - b.x, double(a.y) - b.y, double(a.z) - b.z) / scale;
  }
  return d;
}

ErrorSummary positionError(const Particles& p, const Particles& ref, double scale) {
  return summarizeErrors(positionErrors(p, ref, scale));
}

std::vector<std::uint32_t> sampleIndices(std::size_t n, std::size_t count, std::uint64_t seed) {
  std::vector<std::uint32_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0u);
  if (count >= n) return idx;
  // Partial Fisher–Yates with our own generator, so the sample is the same everywhere.
  Rng rng(seed, 0x5a3b1e);
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t j = k + static_cast<std::size_t>(rng.below(n - k));
    std::swap(idx[k], idx[j]);
  }
  idx.resize(count);
  std::sort(idx.begin(), idx.end());
  return idx;
}

}  // namespace bhviz::sim
