#pragma once
// Exact O(N²) Plummer-softened gravity in double precision: the reference every tree force
// is measured against. G = 1.

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/particles.h"

namespace bhviz::sim {

/// Acceleration (x, y, z) and potential (w) on target i from every other particle.
using Accel4d = std::array<double, 4>;

/// For the listed targets (indices into p), against all particles; OpenMP over targets.
std::vector<Accel4d> directSum(const Particles& p, const std::vector<std::uint32_t>& targets,
                               double softening);

/// Every particle as a target.
std::vector<Accel4d> directSumAll(const Particles& p, double softening);

/// Exact accelerations of the listed targets, where a backend computes them
/// (Backend::referenceSum): directSum, or the CUDA backend's sum on its device.
using ReferenceSum = std::function<std::vector<Accel4d>(
    const Particles& p, const std::vector<std::uint32_t>& targets, double softening)>;

/// Median, 99th percentile and maximum of a set of errors.
struct ErrorSummary {
  double median = 0.0;
  double p99 = 0.0;
  double max = 0.0;
};
/// Of relative acceleration errors |a − a_ref| / |a_ref|.
using ForceError = ErrorSummary;

/// Relative acceleration error of p.accPot at `targets` against the reference `ref` (same order).
ForceError forceError(const Particles& p, const std::vector<std::uint32_t>& targets,
                      const std::vector<Accel4d>& ref);

/// |a − a_ref| / |a_ref| of each target, in the order of `targets` (what forceError summarises).
std::vector<double> relativeErrors(const Particles& p, const std::vector<std::uint32_t>& targets,
                                   const std::vector<Accel4d>& ref);
/// Median, 99th percentile and maximum of errors (any order; all zero when empty).
ErrorSummary summarizeErrors(std::vector<double> errors);

/// |x − x_ref| / scale of every particle of `p` against the same particle of `ref` (both in the
/// same order, e.g. sorted by id): a run's position error against a reference run at the same
/// time, particle by particle.
std::vector<double> positionErrors(const Particles& p, const Particles& ref, double scale = 1.0);
/// What positionErrors summarises.
ErrorSummary positionError(const Particles& p, const Particles& ref, double scale = 1.0);

/// `count` distinct random indices in [0, n) (all of them when count >= n), sorted.
std::vector<std::uint32_t> sampleIndices(std::size_t n, std::size_t count, std::uint64_t seed);

}  // namespace bhviz::sim
