// Per-stage device time of a tree build on a Plummer sphere (or a scenario): CUDA events around
// each stage, warm-up first, then the median (and min/max) of repeated builds. Before every build
// the unsorted particles are restored from a pristine device copy (untimed), so the sort and the
// gather see the same input each time. The sort is a build's (on the digits the last tree's depth
// and a margin read, its runs put in order after the tree), timed before and after the tree.
//
//   bench_cuda_stages [N ...]         default: 1000000 4000000
//   env BHVIZ_BENCH_REPS (default 25), BHVIZ_BENCH_LEAF (16), BHVIZ_BENCH_CURVE (hilbert|morton),
//       BHVIZ_BENCH_SCENARIO (a built-in scenario, seed 1, instead of the Plummer sphere)
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "sim/cuda/cuda_stages.h"
#include "sim/ic/initial_conditions.h"

using namespace bhviz::sim;

namespace {

constexpr int kStages = 5;
constexpr std::array<const char*, kStages> kNames = {"bbox", "keys", "sort", "tree", "moments"};

int envInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

struct Summary {
  double median = 0, min = 0, max = 0;
};

Summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

void benchOne(std::size_t n, int nLeaf, Curve curve, int reps, const char* scenario) {
  const Particles h = scenario != nullptr ? makeScenario(scenario, n, 1) : makePlummer(n, 12345);
  cuda::DeviceParticles pristine, d;
  cuda::BuildWorkspace ws;
  cuda::DeviceTree tree;
  cuda::uploadParticles(h, pristine);
  const MacSetup mac{MacCode::Bonsai, 0.5f, 0.0f};
  // The sort as a build makes it (launchSortAndTree): the keys on the tree's digits before the
  // tree, the runs' order and the gather after it; timed in two spans, reported as one stage.
  std::array<cuda::EventTimer, kStages + 1> timers;
  std::array<std::vector<double>, kStages> ms;
  std::vector<double> total;

  for (int rep = -3; rep < reps; ++rep) {  // three warm-up builds
    cuda::copyParticles(pristine, d, nullptr);
    timers[0].start(nullptr);
    cuda::launchBoundingBox(d, ws, nullptr);
    timers[0].stop(nullptr);
    timers[1].start(nullptr);
    cuda::launchKeys(d, curve, ws, nullptr);
    timers[1].stop(nullptr);
    int sortSpans = 0;
    cuda::launchSortAndTree(d, ws, nLeaf, tree, nullptr, [&](Stage stage, auto&& launch) {
      cuda::EventTimer& t = stage == Stage::Tree ? timers[3]
                            : sortSpans++ == 0   ? timers[2]
                                                 : timers[kStages];
      t.start(nullptr);
      launch();
      t.stop(nullptr);
    });
    timers[4].start(nullptr);
    cuda::launchMoments(tree, d, ws, mac, nullptr);
    timers[4].stop(nullptr);
    double sum = 0.0;
    for (int s = 0; s < kStages; ++s) {
      const double t = timers[s].elapsedMs() + (s == 2 ? timers[kStages].elapsedMs() : 0.0);
      sum += t;
      if (rep >= 0) ms[s].push_back(t);
    }
    if (rep >= 0) total.push_back(sum);
  }
  std::printf("N=%zu %s nLeaf=%d curve=%s cells=%zu depth=%d reps=%d\n", n,
              scenario != nullptr ? scenario : "plummer", nLeaf,
              curve == Curve::Hilbert ? "hilbert" : "morton", tree.cells, tree.depth(), reps);
  std::printf("  %-8s %10s %10s %10s\n", "stage", "median_ms", "min_ms", "max_ms");
  for (int s = 0; s < kStages; ++s) {
    const Summary r = summarize(ms[s]);
    std::printf("  %-8s %10.4f %10.4f %10.4f\n", kNames[s], r.median, r.min, r.max);
  }
  const Summary r = summarize(total);
  std::printf("  %-8s %10.4f %10.4f %10.4f\n", "total", r.median, r.min, r.max);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (cuda::deviceCount() == 0) {
      std::printf("bench_cuda_stages: no CUDA device, nothing to measure\n");
      return 0;
    }
    std::vector<std::size_t> sizes;
    for (int i = 1; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
    if (sizes.empty()) sizes = {1000000, 4000000};
    const int reps = std::max(1, envInt("BHVIZ_BENCH_REPS", 25));
    const int nLeaf = envInt("BHVIZ_BENCH_LEAF", 16);
    const char* curveName = std::getenv("BHVIZ_BENCH_CURVE");
    const Curve curve =
        curveName && std::strcmp(curveName, "morton") == 0 ? Curve::Morton : Curve::Hilbert;
    const char* scenario = std::getenv("BHVIZ_BENCH_SCENARIO");  // default: makePlummer's sphere
    for (std::size_t n : sizes) benchOne(n, nLeaf, curve, reps, scenario);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cuda_stages: %s\n", e.what());
    return 1;
  }
}
