#pragma once
// What the CUDA backend's end-to-end tests share (test_cuda_backend.cpp, test_cuda_tree_reuse.cpp):
// their Plummer sphere's parameters and the difference between two backends' forces.

#include <algorithm>
#include <cmath>
#include <vector>

#include "gpu_test_support.h"
#include "sim/params.h"
#include "sim/particles.h"

#define REQUIRE_GPU() \
  if (!bhviz::test::haveGpu()) GTEST_SKIP() << "no CUDA device"

namespace bhviz::test {

/// A Plummer sphere's forces under `mac` (θ where it reads one): ε 0.05, shared steps of 1/128.
inline sim::SimParams plummerParams(sim::MacKind mac = sim::MacKind::Bonsai, float theta = 0.5f) {
  sim::SimParams p;
  p.mac = mac;
  p.theta = theta;
  p.softening = 0.05f;
  p.dtMax = 1.0f / 128.0f;
  return p;
}

/// 99th percentiles over particles of |a − b| / |b| for the acceleration and the potential
/// (both states sorted by id).
struct P99 {
  double acc = 0.0, pot = 0.0;
  double accMax = 0.0, potMax = 0.0;  ///< the largest of each
};
inline P99 relativeDifferenceP99(const sim::Particles& a, const sim::Particles& b) {
  std::vector<double> acc(a.size()), pot(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const sim::Vec4 x = a.accPot[i], y = b.accPot[i];
    const double d = std::sqrt(double(x.x - y.x) * (x.x - y.x) + double(x.y - y.y) * (x.y - y.y) +
                               double(x.z - y.z) * (x.z - y.z));
    acc[i] = d / std::sqrt(double(y.x) * y.x + double(y.y) * y.y + double(y.z) * y.z);
    pot[i] = std::fabs(double(x.w) - y.w) / std::fabs(double(y.w));
  }
  std::sort(acc.begin(), acc.end());
  std::sort(pot.begin(), pot.end());
  return {acc[acc.size() * 99 / 100], pot[pot.size() * 99 / 100], acc.back(), pot.back()};
}

}  // namespace bhviz::test
