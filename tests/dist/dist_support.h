#pragma once
// What the tests of the distributed backend share (test_dist.cpp, test_dist_forces.cpp): the
// job's ranks, the backend under test (BHVIZ_TEST_DIST_BACKEND, _LETS, _NCCL) and small helpers.

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/backend.h"
#include "sim/direct_sum.h"
#include "sim/dist/dist.h"
#include "sim/params.h"
#include "sim/particles.h"
#if BHVIZ_HAVE_CUDA
#include "sim/cuda/cuda_backend.h"
#endif

namespace bhviz::test {

using namespace bhviz::sim;

inline int ranks() { return dist::currentJob()->size(); }

inline bool onCuda() {
  const char* b = std::getenv("BHVIZ_TEST_DIST_BACKEND");
  return b != nullptr && std::string(b) == "cuda";
}

/// One process's backend of the kind under test (each rank's share is one too).
inline std::unique_ptr<Backend> makeOne(std::size_t n) {
#if BHVIZ_HAVE_CUDA
  if (onCuda()) return cuda::makeCudaBackend(n);
#endif
  if (onCuda()) throw std::runtime_error("BHVIZ_TEST_DIST_BACKEND=cuda: built without CUDA");
  (void)n;
  return makeCpuBackend();
}

/// BHVIZ_TEST_DIST_LETS=host sends GPUs' LETs through the host even where NCCL could move
/// them; BHVIZ_TEST_DIST_NCCL=1 requires NCCL (each rank on a GPU of its own), so that a run
/// meant to test it cannot pass on the host path.
/// `settings`: the run's own (the environment may change how the LETs travel).
inline std::unique_ptr<Backend> distributed(std::size_t n, dist::DistSettings settings = {}) {
  const char* lets = std::getenv("BHVIZ_TEST_DIST_LETS");
  if (lets != nullptr && std::string(lets) == "host") settings.lets = dist::LetTransport::Host;
  auto b = dist::makeDistributedBackend(makeOne(n), n, settings);
  const char* nccl = std::getenv("BHVIZ_TEST_DIST_NCCL");
  if (nccl != nullptr && std::string(nccl) == "1" && ranks() > 1) {
    const std::vector<RankReport> reports = b->rankReports();
    for (const RankReport& r : reports) {
      if (!r.letsOverNccl) throw std::runtime_error("BHVIZ_TEST_DIST_NCCL=1: a rank without NCCL");
    }
  }
  return b;
}

inline void setExactAccelerations(Particles& p, float softening) {
  const std::vector<Accel4d> exact = directSumAll(p, softening);
  for (std::size_t i = 0; i < p.size(); ++i) {
    p.accPot[i] = {float(exact[i][0]), float(exact[i][1]), float(exact[i][2]), float(exact[i][3])};
  }
}

/// A run's parameters with the tree rebuilt at every evaluation (a tuned interval follows
/// measured times, which differ between runs) and softening `softening`.
inline SimParams rebuiltEachEvaluation(float softening) {
  SimParams p;
  p.rebuildInterval = 1;
  p.softening = softening;
  return p;
}

/// DistSettings with the decomposition's threshold `imbalance` (0: at every full step).
inline dist::DistSettings rebalancing(double imbalance) {
  dist::DistSettings s;
  s.imbalance = imbalance;
  return s;
}

/// `state` uploaded to `b` and every particle's force evaluated once: the particles as they come
/// back (in the backend's order; its profile holds the evaluation's counts).
inline Particles evaluatedForces(Backend& b, const Particles& state, const Clock& clock,
                                 const SimParams& p, bool oldAccValid = false) {
  b.upload(state);
  b.computeForces(clock, p, ForceTargets::All, oldAccValid);
  Particles out;
  b.download(out);
  return out;
}

inline bool sameIds(const Particles& p, std::size_t n) {
  std::vector<std::uint32_t> ids = p.id;
  std::sort(ids.begin(), ids.end());
  for (std::size_t i = 0; i < n; ++i) {
    if (ids.size() != n || ids[i] != i) return false;
  }
  return true;
}

}  // namespace bhviz::test
